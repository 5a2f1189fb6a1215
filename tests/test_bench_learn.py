"""tools/bench_learn.py end to end: a short real training run on the smoke config, its
checkpoints scored along the run against the planner, the curve written, the ratio printed last."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT


@pytest.mark.slow
def test_trains_scores_the_curve_and_prints_the_final_ratio_last(tmp_path):
    cmd = [sys.executable, "tools/bench_learn.py", "--config", "conf/smoke.toml", "--minutes", "0.4", "--out", str(tmp_path),
           "--preset", "random-8", "--episodes", "2", "--points", "2", "--workers", "2"]
    result = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("final ratio (exploit): ")
    out = tmp_path / "bench_learn" / "bench_learn"
    curve = json.loads((out / "curve.json").read_text())
    minutes = [row["minute"] for row in curve["rows"]]
    assert 1 <= len(minutes) <= 3 and minutes == sorted(minutes) and curve["planner"] > 0
    assert float(last.split(": ")[1]) == pytest.approx(curve["rows"][-1]["ratio_exploit"], abs=5e-4)
    assert (out / "curve.png").stat().st_size > 1000

    again = subprocess.run([sys.executable, "tools/bench_learn.py", "--run", str(tmp_path / "bench_learn"), "--preset", "nope"],
                           cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "nope" in again.stderr
