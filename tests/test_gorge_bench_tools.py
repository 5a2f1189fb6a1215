"""The speed tools around the gorge_chase agent: tools/gorge_chase/bench_features.py (the features'
cost per env step against the simulator's in the same run) and tools/bench_train.py's --package
comparison (the project's config against a Kaiwu code package, side by side)."""
from __future__ import annotations

import re
import sys

import pytest

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tools"))
sys.path.insert(0, str(REPO_ROOT / "tools" / "gorge_chase"))

import bench_features as bench_gorge_features  # noqa: E402
import bench_train  # noqa: E402


def test_the_feature_bench_prints_the_features_cost_in_env_steps_last(capsys):
    bench_gorge_features.main(["--steps", "40", "--maps", "2"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"map  2: env +[\d.]+ us/step, features +[\d.]+ us/step \([\d.]+ x\)", lines[0]), lines
    match = re.fullmatch(r"feature_cost_in_env_steps: ([\d.]+)", lines[-1])
    assert match and float(match.group(1)) > 0, lines


def test_the_feature_bench_measures_trainings_look_ahead_mask_when_asked(capsys):
    """--lookahead-guard: the features as `[features_gorge] lookahead_guard_training` trains them."""
    from realm import make_env

    features = bench_gorge_features.Features(lookahead_guard=True)
    features.reset(make_env(protocol="gorge", seed=2).reset({"env_conf": {"map": [2], **bench_gorge_features.EPISODE}}))
    assert features.view.memory.lookahead_guard and not bench_gorge_features.Features().options["lookahead_guard"]
    bench_gorge_features.main(["--steps", "40", "--maps", "2", "--lookahead-guard"])
    match = re.fullmatch(r"feature_cost_in_env_steps: ([\d.]+)", capsys.readouterr().out.strip().splitlines()[-1])
    assert match and float(match.group(1)) > 0


def test_the_feature_bench_compares_the_guard_in_c_with_the_python_on_the_same_steps(capsys, monkeypatch):
    """--guard-in-c-against-python: both passes guard the same steps with equal masks, the ratio
    last; and the guard's twins are back in place after it. A C twin that answered otherwise
    is named."""
    from feature.gorge_chase import layout, lookahead

    before = (layout.guarded, lookahead.guard)
    bench_gorge_features.main(["--steps", "60", "--maps", "2", "--guard-in-c-against-python"])
    lines = capsys.readouterr().out.strip().splitlines()
    calls = [re.fullmatch(r"guard in (C|Python) *: features +[\d.]+ us/step \((\d+) guard calls\)", line) for line in lines[:2]]
    assert all(calls) and calls[0].group(2) == calls[1].group(2) != "0", lines
    match = re.fullmatch(r"python_guard_over_c: ([\d.]+)", lines[-1])
    assert match and float(match.group(1)) > 0
    assert (layout.guarded, lookahead.guard) == before

    compiled_guard = lookahead.guard
    monkeypatch.setattr(lookahead, "guard", lambda *args: (lambda keep: [0.0] * len(keep) if keep else keep)(
        compiled_guard(*args)))  # a C twin that closes every action it narrows
    with pytest.raises(SystemExit, match="the C guard's masks differ from the Python's"):
        bench_gorge_features.main(["--steps", "60", "--maps", "2", "--guard-in-c-against-python"])


def test_the_feature_bench_names_a_bad_argument(capsys):
    with pytest.raises(SystemExit) as e:
        bench_gorge_features.main(["--maps", "one"])
    assert e.value.code == 2 and "--maps must be comma-separated map ids, got 'one'" in capsys.readouterr().err


def test_bench_train_compares_with_a_package_folder_and_names_what_it_cannot_use(tmp_path, capsys):
    config = str(REPO_ROOT / "conf" / "gorge_chase.toml")
    assert bench_train.main(["--config", config, "--package", str(tmp_path / "missing")]) == 2
    assert f"--package {tmp_path / 'missing'}: not a directory" in capsys.readouterr().err
    assert bench_train.main(["--config", config, "--package", str(tmp_path), "--rounds", "0"]) == 2
    assert "--rounds must be >= 1, got 0" in capsys.readouterr().err
