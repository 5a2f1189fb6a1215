"""The look-ahead in C (feature/gorge_chase/lookahead.c, built by feature.native): the same answers
as feature.gorge_chase.lookahead's Python for a small share of its time, so that training within
the guard keeps most of the env steps of training without it. `guard` is the whole of `guarded`
from its grids on; it answers None where the library is not at hand (an exported package, no C
compiler) or an input is beyond its limits, and the caller then runs the Python."""
from __future__ import annotations

import ctypes
import threading
import weakref
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from feature.bitgrid import BitGrid
from feature.native import load

SOURCE = Path(__file__).with_name("lookahead.c")
_int_p = ctypes.POINTER(ctypes.c_int)


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
    trigger: int
    race_trigger: int
    depth: int
    safe: int
    budget: int


class _CRules(ctypes.Structure):
    """lookahead.c's Rules, field by field."""
    _fields_ = [(name, ctypes.c_int) for name in ("stride", "width", "height", "far_limit", "capture", "spawn_delay",
                                                  "reach", "trigger", "race_trigger", "depth", "safe", "budget")]
    _fields_ += [("move", (ctypes.c_int * 3) * 8), ("back_step_penalty", ctypes.c_double),
                 ("same_axis_penalty", ctypes.c_double)]


@lru_cache(maxsize=None)
def _c_rules(rules: Rules) -> _CRules:
    grid = rules.grid
    moves = ((ctypes.c_int * 3) * 8)(*[(ctypes.c_int * 3)(*move) for move in rules.move_offsets])
    return _CRules(grid.stride, grid.width, grid.height, rules.far_limit, rules.capture_radius, rules.spawn_delay,
                   rules.reach, rules.trigger, rules.race_trigger, rules.depth, rules.safe, rules.budget, moves,
                   rules.back_step_penalty, rules.same_axis_penalty)


@lru_cache(maxsize=None)
def kernel() -> ctypes.CDLL | None:
    library = load(SOURCE)
    if library is None:
        return None
    rules = ctypes.POINTER(_CRules)
    library.lookahead_workspace_new.restype = ctypes.c_void_p
    library.lookahead_workspace_new.argtypes = []
    library.lookahead_workspace_free.restype = None
    library.lookahead_workspace_free.argtypes = [ctypes.c_void_p]
    library.lookahead_guard.restype = ctypes.c_int
    library.lookahead_guard.argtypes = ([ctypes.c_void_p, rules, ctypes.c_void_p] + [ctypes.c_int] * 6 +
                                        [_int_p, ctypes.c_int, _int_p] + [ctypes.c_int] * 8 +
                                        [_int_p, _int_p, ctypes.c_int, _int_p])
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


def _ints(values) -> ctypes.Array:
    values = list(values)
    return (ctypes.c_int * max(1, len(values)))(*values)


def guard(rules: Rules, planes: tuple[np.ndarray, int, int, int, int], centre: int, known: list[tuple[int, int]],
          threats: list[tuple[int, int, int]], step: int, interval: int, speedup: int, buff_left: int,
          spawn_cell: int, max_step: int, spawn_soon: bool, moves_open: list, flash_cells: list[int | None]
          ) -> list[float] | None | bool:
    """lookahead.guarded from its grids on (`planes`: GorgeMemory.search_planes, the window's road
    and ground read there by the C; the hero's cell `centre` added to both): the kept flags of the
    8 moves then the flashes; False where no monster is near enough (the mask stays as it is);
    None where the C cannot answer."""
    ready = _ready()
    if ready is None:
        return None
    library, workspace = ready
    maps, left, top, lo, hi = planes
    if maps.dtype != np.float32 or maps.ndim != 3 or maps.shape[0] < 2 or maps.shape[1] != maps.shape[2] \
            or not maps.flags.c_contiguous:
        return None
    keep = (ctypes.c_int * (8 + len(flash_cells)))()
    status = library.lookahead_guard(
        workspace, _c_rules(rules), maps.ctypes.data, maps.shape[1], left, top, lo, hi, centre,
        _ints(v for cell, speed in known for v in (cell, speed)), len(known),
        _ints(v for threat in threats for v in threat), len(threats), step, interval, speedup, buff_left, spawn_cell,
        max_step, int(spawn_soon), _ints(int(bool(v)) for v in moves_open),
        _ints(-1 if cell is None else cell for cell in flash_cells), len(flash_cells), keep)
    if status < 0:
        return None
    return [float(v) for v in keep] if status == 1 else False
