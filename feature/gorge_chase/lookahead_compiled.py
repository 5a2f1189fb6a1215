"""The look-ahead's play-outs and race in C (feature/gorge_chase/lookahead.c, built by
feature.native): the same answers as Search.survives and safe_sets + margin, for about a
hundredth of the time, so that training within the guard keeps the env steps of training without
it. `play_outs` and `margins` answer None where the library is not at hand (an exported package,
no C compiler) or an input is beyond its limits; the caller then runs the Python."""
from __future__ import annotations

import ctypes
import threading
import weakref
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from feature.bitgrid import BitGrid
from feature.native import load

SOURCE = Path(__file__).with_name("lookahead.c")
_int_p = ctypes.POINTER(ctypes.c_int)


@lru_cache(maxsize=None)
def kernel() -> ctypes.CDLL | None:
    library = load(SOURCE)
    if library is None:
        return None
    library.lookahead_workspace_new.restype = ctypes.c_void_p
    library.lookahead_workspace_new.argtypes = []
    library.lookahead_workspace_free.restype = None
    library.lookahead_workspace_free.argtypes = [ctypes.c_void_p]
    library.lookahead_survives.restype = ctypes.c_int
    library.lookahead_survives.argtypes = (
        [ctypes.c_void_p] + [ctypes.c_int] * 5 + [ctypes.c_double] * 2 + [_int_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                                         _int_p] + [ctypes.c_int] * 7 + [_int_p, ctypes.c_int, _int_p])
    library.lookahead_margins.restype = ctypes.c_int
    library.lookahead_margins.argtypes = ([ctypes.c_void_p] + [ctypes.c_int] * 5 + [ctypes.c_char_p, ctypes.c_int, _int_p, ctypes.c_int,
                                                                _int_p, ctypes.c_int, _int_p])
    return library


class _Workspace:
    """The C side's buffers for one thread's calls (the library runs without the GIL)."""

    def __init__(self, library: ctypes.CDLL):
        self.pointer = library.lookahead_workspace_new()
        if self.pointer:
            weakref.finalize(self, library.lookahead_workspace_free, self.pointer)


_threads = threading.local()


def _ready() -> tuple[ctypes.CDLL, int] | None:
    """The library and this thread's workspace, or None."""
    library = kernel()
    if library is None:
        return None
    space = getattr(_threads, "workspace", None)
    if space is None:
        space = _threads.workspace = _Workspace(library)
    return (library, space.pointer) if space.pointer else None


@lru_cache(maxsize=None)
def _move_offsets(move_offsets: tuple) -> ctypes.Array:
    return _ints(v for move in move_offsets for v in move)


def _ints(values) -> ctypes.Array:
    values = list(values)
    return (ctypes.c_int * max(1, len(values)))(*values)


class Rules(NamedTuple):
    """The look-ahead's numbers, from feature.gorge_chase.lookahead (the C file holds none)."""
    grid: BitGrid
    far_limit: int
    capture_radius: int
    spawn_delay: int
    back_step_penalty: float
    same_axis_penalty: float
    move_offsets: tuple  # per direction (one move, its two straight sides) as bit offsets
    reach: int


def play_outs(search, cells: list[int], depth: int, rules: Rules) -> dict[int, int] | None:
    """{cell: search.survives(cell, depth)} for each of `cells` (`search`: a lookahead.Search), or None."""
    ready = _ready()
    if ready is None:
        return None
    library, workspace = ready
    grid = rules.grid
    lived = (ctypes.c_int * max(1, len(cells)))()
    status = library.lookahead_survives(
        workspace, grid.stride, grid.height * grid.stride, rules.far_limit, rules.capture_radius, rules.spawn_delay,
        rules.back_step_penalty, rules.same_axis_penalty, _move_offsets(rules.move_offsets),
        search.road.to_bytes(grid.nbytes, "little"), search.ground.to_bytes(grid.nbytes, "little"), grid.nbytes,
        _ints(v for m in search.monsters for v in (m[0], m[1])), len(search.monsters), search.step, search.interval,
        search.speedup, search.buff_left, search.history.get(search.interval - rules.spawn_delay, -1), depth,
        _ints(cells), len(cells), lived)
    if status != 0:
        return None
    return dict(zip(cells, lived))


def margins(ground: int, threats: list[tuple[int, int, int]], cells: list[int], horizon: int,
            rules: Rules) -> dict[int, int] | None:
    """{cell: margin(ground, cell, safe_sets(ground, threats, horizon))} for each of `cells`, or None."""
    ready = _ready()
    if ready is None:
        return None
    library, workspace = ready
    grid = rules.grid
    out = (ctypes.c_int * max(1, len(cells)))()
    status = library.lookahead_margins(
        workspace, grid.stride, grid.width, grid.height, rules.reach, horizon, ground.to_bytes(grid.nbytes, "little"),
        grid.nbytes, _ints(v for threat in threats for v in threat), len(threats), _ints(cells), len(cells), out)
    if status != 0:
        return None
    return dict(zip(cells, out))
