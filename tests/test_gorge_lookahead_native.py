"""The look-ahead's C twin (feature/gorge_chase/lookahead.c through lookahead_compiled): on the
real simulator's episodes, the guard's mask from C equals the Python definition's on every step,
on the official defaults, under monster 2's spawn and the speed-up inside the play-outs, and with a
buff running; and a package without the C file, or without a compiler, runs the Python."""
from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from feature import native
from feature.gorge_chase import lookahead, lookahead_compiled
from feature.gorge_chase.constants import NUM_MOVES
from feature.gorge_chase.layout import legal_mask
from feature.gorge_chase.observation import GorgeView
from realm import make_env

REPO = Path(__file__).resolve().parents[1]
SETTINGS = [  # (env_conf, seed, steps): a quick monster 2 and speed-up, then the defaults' timings
    ({"map": [11], "map_random": False, "treasure_count": 4, "buff_count": 2, "buff_cooldown": 60,
      "talent_cooldown": 50, "monster_interval": 30, "monster_speedup": 60, "max_step": 260}, 3, 260),
    ({"map": [13], "map_random": False, "treasure_count": 8, "buff_count": 1, "buff_cooldown": 200,
      "talent_cooldown": 100, "monster_interval": 300, "monster_speedup": 500, "max_step": 1000}, 4, 400),
]


def test_the_library_builds_here():
    assert lookahead_compiled.kernel() is not None, "no C compiler here: the suite's machines have gcc"


@pytest.mark.parametrize("conf,seed,steps", SETTINGS)
def test_the_guards_masks_are_alike_with_and_without_the_library(conf, seed, steps, monkeypatch):
    """Every step of a random player within the mask (one quick episode's length, or 400 steps):
    the compiled guard's moves and flashes equal the Python's; every fourth step again with a buff
    running (its 2-cell moves). The Python's
    play-outs are counted: where monster 2's spawn and the speed-up fall inside them, and with a
    buff running, the C answered alike. The quick timings' episodes search with a budget of 30
    states (more searches stop at it; the Python's search is the slow side), the defaults' with
    the config's."""
    played = []
    survives = lookahead.Search.survives

    def counted(search, first, depth):
        played.append((search.step < search.interval <= search.step + depth,
                       search.step < search.speedup <= search.step + depth, search.buff_left > 0))
        return survives(search, first, depth)

    monkeypatch.setattr(lookahead.Search, "survives", counted)
    env = make_env(protocol="gorge", seed=seed)
    env_obs = env.reset({"env_conf": conf})
    view = GorgeView(global_info=True, lookahead_budget=30 if conf["monster_interval"] < 100 else None)
    memory, _ = view.reset(env_obs)
    rnd, narrowed, compared = np.random.default_rng(seed), 0, 0
    for step in range(steps):
        mask = legal_mask(memory)
        moves, flashes = [float(v) for v in mask[:NUM_MOVES]], [float(v) for v in mask[NUM_MOVES:2 * NUM_MOVES]]
        fast = lookahead.guarded(memory, moves, flashes)
        assert fast == lookahead.guarded(memory, moves, flashes, compiled=False), memory.step_no
        if step % 4 == 0 and memory.buff_remaining == 0:
            memory.buff_remaining = 7
            assert (lookahead.guarded(memory, moves, flashes)
                    == lookahead.guarded(memory, moves, flashes, compiled=False)), (memory.step_no, "buff")
            memory.buff_remaining = 0
        compared += 1
        narrowed += sum(fast[0] + fast[1]) < sum(moves + flashes)
        keep = np.array(fast[0] + fast[1])
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(keep))))
        if env_obs["terminated"] or env_obs["truncated"]:
            env_obs = env.reset({"env_conf": conf})
            memory, _ = view.reset(env_obs)
        else:
            memory, _ = view.step(env_obs)
    assert narrowed > 20 and len(played) > 200, (narrowed, compared, len(played))
    assert any(kind[2] for kind in played), "no play-out with a buff running"
    if conf["monster_interval"] < 100:
        assert any(kind[0] for kind in played) and any(kind[1] for kind in played), "no spawn or speed-up inside"


def test_the_guard_runs_its_c_twin(monkeypatch):
    """With the library at hand, guarded's searches are the C's: the Python's play-outs never run,
    and the C's answers narrow the mask."""
    conf, seed, _ = SETTINGS[0]
    compiled_guard, answers = lookahead.guard, []

    def counted(*args):
        answers.append(compiled_guard(*args))
        return answers[-1]

    monkeypatch.setattr(lookahead, "guard", counted)
    monkeypatch.setattr(lookahead.Search, "survives", lambda *args: pytest.fail("the Python play-out ran"))
    monkeypatch.setattr(lookahead, "safe_sets", lambda *args: pytest.fail("the Python race ran"))
    env = make_env(protocol="gorge", seed=seed)
    env_obs = env.reset({"env_conf": conf})
    view = GorgeView(global_info=True, lookahead_guard=True)
    memory, _ = view.reset(env_obs)
    rnd = np.random.default_rng(seed)
    for _ in range(100):
        mask = legal_mask(memory)
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(mask[:2 * NUM_MOVES]))))
        if env_obs["terminated"] or env_obs["truncated"]:
            break
        memory, _ = view.step(env_obs)
    kept = [a for a in answers if isinstance(a, list)]
    assert kept and all(a is not None for a in answers) and any(sum(a) < 16 for a in kept)


def test_inputs_beyond_the_c_limits_fall_back_to_python():
    """More monsters than the C holds, a window outside the maps, or a search budget past the
    states its table keeps: it declines, and guarded would run the Python."""
    from feature.gorge_chase.memory import GorgeMemory

    centre = lookahead.bit_of(lookahead.WINDOW_RADIUS, lookahead.WINDOW_RADIUS)
    memory = GorgeMemory()
    memory.hero = (64, 64)
    planes = memory.search_planes(lookahead.WINDOW_RADIUS)
    rest = (10, 300, 500, 0, -1, 1000, False, [1.0] * NUM_MOVES, [None] * NUM_MOVES)
    assert lookahead_compiled.guard(lookahead.RULES, planes, centre, [(centre + 2, 1)] * 5, [], *rest) is None
    assert lookahead_compiled.guard(lookahead.RULES, planes, centre, [(centre + 2, 1)], [(centre + 2, 1, 0)],
                                    *rest) is not None
    maps, left, top, lo, hi = planes
    beyond = (maps, left, maps.shape[1] - lookahead.WINDOW + 1, lo, hi)  # the window's last row past the maps
    assert lookahead_compiled.guard(lookahead.RULES, beyond, centre, [(centre + 2, 1)], [(centre + 2, 1, 0)],
                                    *rest) is None
    assert lookahead_compiled.guard(lookahead.RULES, (maps.astype(np.float64), left, top, lo, hi), centre,
                                    [(centre + 2, 1)], [(centre + 2, 1, 0)], *rest) is None
    for budget, answered in ((2000, True), (2001, False), (-1, False)):
        rules = lookahead.RULES._replace(budget=budget)
        out = lookahead_compiled.guard(rules, planes, centre, [(centre + 2, 1)], [(centre + 2, 1, 0)], *rest)
        assert (out is not None) is answered, budget


def test_without_the_source_or_a_compiler_the_python_runs(tmp_path, monkeypatch):
    assert native.load(tmp_path / "absent.c") is None  # an exported package carries no C file
    source = tmp_path / "twin.c"
    source.write_text("int twice(int x) { return 2 * x; }\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(native, "compiler", lambda: None)
    assert native.load.__wrapped__(source) is None
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    library = native.load.__wrapped__(source)
    assert library is not None and library.twice(ctypes.c_int(21)) == 42
    assert [p.name for p in (tmp_path / "cache" / "kaiwu-farm" / "native").iterdir()] == [library._name.split("/")[-1]]
    broken = tmp_path / "broken.c"
    broken.write_text("int broken( {\n")
    assert native.load.__wrapped__(broken) is None


def test_processes_that_start_together_load_one_build(tmp_path):
    """Four processes load a fresh source at once: each gets a working library, one file is left."""
    source = tmp_path / "twin.c"
    source.write_text("int thrice(int x) { return 3 * x; }\n")
    script = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from pathlib import Path; from feature import native; "
              f"lib = native.load(Path({str(source)!r})); print(lib.thrice(14))")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    assert [p.communicate(timeout=120)[0].strip() for p in procs] == ["42"] * 4
    assert len(list((tmp_path / "cache" / "kaiwu-farm" / "native").glob("*.so"))) == 1
