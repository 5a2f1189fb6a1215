"""tools/bench_learn.py end to end: two seeds' short real training runs on the smoke config, their
checkpoints scored along each run against the planner, the seeds compared point by point, the
curves written, the worst seed's final ratio printed last."""
from __future__ import annotations

import json

import pytest

from tool_runs import run_tool


@pytest.mark.slow
def test_trains_seeds_scores_the_curves_and_prints_the_worst_final_ratio_last(tmp_path):
    short = json.dumps({"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 4, "max_step": 300,
                                "talent_type": 1}})  # an agent trained for seconds rarely finishes: cap the episodes
    result = run_tool("tools/bench_learn.py", "--config", "conf/smoke.toml", "--minutes", "0.1", "--seeds", "2",
                      "--first-seed", "3", "--out", str(tmp_path), "--usr-conf", short, "--episodes", "2", "--points",
                      "2", "--workers", "1")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("worst seed's final ratio (exploit, 2 runs): ")
    finals, seeds = [], []
    for seed in (3, 4):  # --first-seed: seeds a sweep never trained
        run = tmp_path / f"bench_learn-seed{seed}"
        assert 'seed = %d' % seed in (run / "log" / "effective_config.toml").read_text()
        curve = json.loads((run / "bench_learn" / "curve.json").read_text())
        rows = curve["rows"]
        assert 1 <= len(rows) <= 3 and curve["planner"] > 0
        assert curve["preset"] == "custom"  # scored on the --usr-conf episodes
        for key in ("minute", "train_step", "env_steps"):
            assert [r[key] for r in rows] == sorted(r[key] for r in rows)
        assert rows[-1]["env_steps"] > 0 and rows[-1]["train_step"] > 0
        finals.append(rows[-1]["ratio_exploit"])
        seeds.append(curve)
    assert float(last.split(": ")[1]) == pytest.approx(min(finals), abs=5e-4)
    both = tmp_path / "bench_learn-seeds"
    assert json.loads((both / "curves.json").read_text()) == seeds
    assert (both / "curves.png").stat().st_size > 1000
    assert "median" in result.stdout and "0.97:" in result.stdout

    again = run_tool("tools/bench_learn.py", "--run", str(tmp_path / "bench_learn-seed3"), "--preset", "nope")
    assert again.returncode == 2 and "nope" in again.stderr


@pytest.mark.parametrize("episodes, message", [
    (["--preset", "nope"], "unknown preset 'nope'; available: leaderboard-2024"),
    (["--usr-conf", '{"diy": {"max_stepz": 300}}'], "max_stepz"),
])
def test_bad_episodes_stop_before_any_training(tmp_path, episodes, message):
    result = run_tool("tools/bench_learn.py", "--config", "conf/smoke.toml", "--minutes", "5", "--out", str(tmp_path),
                      *episodes)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []  # no run was started
