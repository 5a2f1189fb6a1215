"""The look-ahead's C twin (feature/gorge_chase/lookahead.c through lookahead_compiled): on the
real simulator's episodes, the guard's mask from C equals the Python definition's on every step,
and so does every play-out and every race of its two searches alone (Search.survives, safe_sets +
margin), on the official defaults, under monster 2's spawn and the speed-up inside the play-outs,
and with a buff running; and a package without the C file, or without a compiler, runs the Python."""
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
SETTINGS = [  # (env_conf, seed): a quick monster 2 and speed-up, then the defaults' timings
    ({"map": [11], "map_random": False, "treasure_count": 4, "buff_count": 2, "buff_cooldown": 60,
      "talent_cooldown": 50, "monster_interval": 30, "monster_speedup": 60, "max_step": 260}, 3),
    ({"map": [13], "map_random": False, "treasure_count": 8, "buff_count": 1, "buff_cooldown": 200,
      "talent_cooldown": 100, "monster_interval": 300, "monster_speedup": 500, "max_step": 1000}, 4),
]


def _compared(monkeypatch, conf: dict, seed: int, steps: int) -> dict[str, int]:
    """A random player within the guard's mask for `steps` steps; each compiled answer checked
    against the Python's. Returns how many of each were compared."""
    compiled_play_outs, compiled_margins = lookahead.play_outs, lookahead.margins
    counts = {"play_outs": 0, "races": 0, "spawns": 0, "speedups": 0, "buffs": 0}

    def checked_play_outs(search, cells, depth, rules):
        answer = compiled_play_outs(search, cells, depth, rules)
        assert answer is not None, "the C twin refused an input"
        alone = lookahead.Search(search.road, search.ground, search.monsters, search.step, search.interval,
                                 search.speedup, search.buff_left, search.history)
        assert answer == {cell: alone.survives(cell, depth) for cell in cells}, (search.step, cells)
        counts["play_outs"] += len(cells)
        counts["spawns"] += search.step < search.interval <= search.step + depth
        counts["speedups"] += search.step < search.speedup <= search.step + depth
        counts["buffs"] += search.buff_left > 0
        if search.buff_left == 0 and counts["play_outs"] % 5 == 0:  # the same state with a buff running (2-cell moves)
            boosted = lookahead.Search(search.road, search.ground, search.monsters, search.step, search.interval,
                                       search.speedup, 7, search.history)
            assert (compiled_play_outs(boosted, cells, depth, rules)
                    == {cell: boosted.survives(cell, depth) for cell in cells}), (search.step, cells, "buff")
            counts["buffs"] += 1
        return answer

    def checked_margins(ground, threats, cells, horizon, rules):
        answer = compiled_margins(ground, threats, cells, horizon, rules)
        assert answer is not None, "the C twin refused an input"
        safe = lookahead.safe_sets(ground, threats, horizon)
        assert answer == {cell: lookahead.margin(ground, cell, safe) for cell in cells}, (threats, cells)
        counts["races"] += len(cells)
        return answer

    monkeypatch.setattr(lookahead, "guard", lambda *args: None)  # the two searches alone, as where guard cannot answer
    monkeypatch.setattr(lookahead, "play_outs", checked_play_outs)
    monkeypatch.setattr(lookahead, "margins", checked_margins)
    env = make_env(protocol="gorge", seed=seed)
    env_obs = env.reset({"env_conf": conf})
    view = GorgeView(global_info=True, lookahead_guard=True)
    memory, _ = view.reset(env_obs)
    rnd = np.random.default_rng(seed)
    for _ in range(steps):
        mask = legal_mask(memory)
        _, env_obs = env.step(int(rnd.choice(np.flatnonzero(mask[:2 * NUM_MOVES]))))
        if env_obs["terminated"] or env_obs["truncated"]:
            env_obs = env.reset({"env_conf": conf})
            memory, _ = view.reset(env_obs)
        else:
            memory, _ = view.step(env_obs)
    return counts


def test_the_library_builds_here():
    assert lookahead_compiled.kernel() is not None, "no C compiler here: the suite's machines have gcc"


@pytest.mark.parametrize("conf,seed", SETTINGS)
def test_every_compiled_answer_equals_the_pythons(monkeypatch, conf, seed):
    counts = _compared(monkeypatch, conf, seed, steps=400)
    assert counts["play_outs"] > 50 and counts["races"] > 50, counts
    if conf["monster_interval"] < 100:
        assert counts["spawns"] > 0 and counts["speedups"] > 0 and counts["buffs"] > 0, counts


@pytest.mark.parametrize("conf,seed", SETTINGS)
def test_the_guards_masks_are_alike_with_and_without_the_library(conf, seed):
    """Every step of a random player within the mask: the compiled guard's moves and flashes equal
    the Python's; every fourth step again with a buff running (its 2-cell moves)."""
    env = make_env(protocol="gorge", seed=seed)
    env_obs = env.reset({"env_conf": conf})
    view = GorgeView(global_info=True)
    memory, _ = view.reset(env_obs)
    rnd, narrowed, compared = np.random.default_rng(seed), 0, 0
    for step in range(400):
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
    assert narrowed > 20, (narrowed, compared)


def test_the_guard_runs_its_c_twin(monkeypatch):
    """With the library at hand, guarded's searches are the C's: the Python's play-outs never run,
    and the C's answers narrow the mask."""
    conf, seed = SETTINGS[0]
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
    search = lookahead.Search(0, 0, [[0, 1, -1, -1]] * 5, 0, 0, 0, 0, {})  # more monsters than the C holds
    assert lookahead_compiled.play_outs(search, [1], 5, lookahead.RULES) is None


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
