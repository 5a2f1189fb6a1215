"""The offline tools: evaluate, render, plot, clean_ckpt (and the checkpoint-file rule they share).

Episodes are short (a small max_step) so the whole file runs in well under two minutes on two
shared cores; one evaluation goes through spawned worker processes, the rest run in-process.
"""
from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tools"))

import clean_ckpt  # noqa: E402
import evaluate  # noqa: E402
import plot  # noqa: E402
import render  # noqa: E402

from workflow.checkpoints import ckpt_files  # noqa: E402

APP_DIR = "back_to_the_realm_ppo"
# Two chests and 400 steps: the planner finishes well inside the limit, an untrained agent times out fast.
SHORT_CONF = json.dumps({"diy": {"start": 2, "end": 1, "treasure_random": 1, "treasure_num": 2, "max_step": 400}})


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A run directory with three checkpoints of one untrained agent (ids 0, 10, 20)."""
    from agent.back_to_the_realm.ppo_agent import Agent

    run = tmp_path_factory.mktemp("run")
    agent = Agent(seed=0)
    for step in (0, 10, 20):
        agent.save_model(run / "ckpt" / APP_DIR, step)
    return run


@pytest.fixture(scope="module")
def map_args(official_map_paths) -> list[str]:
    map_file, positions_file = official_map_paths
    return ["--map-file", str(map_file), "--positions-file", str(positions_file)]


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


# --- evaluate ---------------------------------------------------------------------------------

def test_evaluate_checkpoint_against_planner_on_identical_episodes(run_dir, map_args, tmp_path, capsys):
    ckpt = run_dir / "ckpt" / APP_DIR / "model.ckpt-20.pkl"
    out = tmp_path / "eval"
    rc = evaluate.main(["--ckpt", str(ckpt), "--usr-conf", SHORT_CONF, "--episodes", "3", "--workers", "2",
                        "--seed", "7", "--out", str(out), "--quiet", *map_args])
    assert rc == 0
    table = capsys.readouterr().out
    lines = table.splitlines()
    assert any(line.startswith("ckpt 20") for line in lines) and any(line.startswith("planner") for line in lines)

    episodes = read_csv(out / "episodes.csv")
    agent_rows = {int(r["episode"]): r for r in episodes if r["policy"] != "planner"}
    planner_rows = {int(r["episode"]): r for r in episodes if r["policy"] == "planner"}
    assert sorted(agent_rows) == sorted(planner_rows) == [0, 1, 2]
    for i in range(3):
        a, p = agent_rows[i], planner_rows[i]
        assert a["seed"] == p["seed"] == str(7 + i)
        conf_a, conf_p = json.loads(a["usr_conf"]), json.loads(p["usr_conf"])
        assert conf_a == conf_p
        assert conf_a["diy"]["treasure_random"] == 0 and len(conf_a["diy"]["treasure_id"]) == 2  # chests resolved
    assert len({tuple(json.loads(r["usr_conf"])["diy"]["treasure_id"]) for r in agent_rows.values()}) >= 2

    summary = {r["policy"]: r for r in read_csv(out / "summary.csv")}
    planner_mean = np.mean([float(r["total_score"]) for r in planner_rows.values()])
    agent = summary[str(ckpt)]
    assert int(agent["episodes"]) == 3
    assert float(agent["planner_score_mean"]) == pytest.approx(planner_mean)
    assert float(agent["ratio"]) == pytest.approx(float(agent["score_mean"]) / planner_mean)
    assert float(summary["planner"]["win_rate"]) == 1.0  # the planner reaches the end in 400 steps
    results = json.loads((out / "results.json").read_text())
    assert len(results["episodes"]) == 6 and results["settings"]["episodes"] == 3


def test_evaluate_directory_every_kth_plots_and_records_scores(run_dir, map_args, tmp_path):
    out = tmp_path / "eval"
    rc = evaluate.main(["--ckpt", str(run_dir), "--every", "2", "--usr-conf", SHORT_CONF, "--episodes", "1",
                        "--workers", "1", "--no-planner", "--out", str(out), "--quiet", *map_args])
    assert rc == 0
    summary = read_csv(out / "summary.csv")
    assert sorted(int(r["ckpt_id"]) for r in summary) == [0, 20]  # every 2nd, counted from the newest
    assert (out / "score_vs_step.png").stat().st_size > 0
    assert set(ckpt_files.read_scores_sidecar(run_dir / "ckpt" / APP_DIR)) == {0, 20}


def test_evaluate_sampling_policy_replays_each_episode(run_dir, map_args, tmp_path):
    ckpt = run_dir / "ckpt" / APP_DIR / "model.ckpt-20.pkl"
    runs = []
    for k in range(2):
        out = tmp_path / f"eval{k}"
        rc = evaluate.main(["--ckpt", str(ckpt), "--usr-conf", SHORT_CONF, "--episodes", "2", "--workers", "1",
                            "--policy", "sample", "--no-planner", "--out", str(out), "--quiet", *map_args])
        assert rc == 0
        results = json.loads((out / "results.json").read_text())
        assert results["settings"]["policy"] == "sample"
        runs.append([(r["total_score"], r["steps"], r["chests"]) for r in results["episodes"]])
    assert runs[0] == runs[1]  # sampling is seeded by the episode seed


def test_agent_policy_modes(run_dir, official_map_paths):
    import realm
    from evaluation.back_to_the_realm import AgentPolicy
    from evaluation.episodes import load_agent

    env = realm.make_env(map_file=official_map_paths[0], positions_file=official_map_paths[1])
    conf = json.loads(SHORT_CONF)
    ckpt = run_dir / "ckpt" / APP_DIR / "model.ckpt-20.pkl"
    sample = AgentPolicy(load_agent(ckpt, None), mode="sample")
    greedy = AgentPolicy(load_agent(ckpt, None), mode="greedy")
    first, again, other = (sample.play(env, conf, seed).actions for seed in (3, 3, 4))
    assert first == again and first != other
    greedy_actions = greedy.play(env, conf, 3).actions
    assert greedy.play(env, conf, 3).actions == greedy_actions  # exploit's loop-breaking draws are seeded too
    assert greedy_actions != first
    with pytest.raises(ValueError, match="greedy, sample"):
        AgentPolicy(sample.loaded, mode="best")


def test_evaluate_planner_alone(map_args, tmp_path):
    out = tmp_path / "eval"
    rc = evaluate.main(["--agent", "planner", "--usr-conf", SHORT_CONF, "--episodes", "2", "--workers", "1",
                        "--out", str(out), "--quiet", *map_args])
    assert rc == 0
    rows = read_csv(out / "episodes.csv")
    assert [r["policy"] for r in rows] == ["planner", "planner"]
    assert all(float(r["total_score"]) > 0 for r in rows)


@pytest.mark.parametrize("args, message", [
    (["--ckpt", "/nonexistent/model.ckpt-5.pkl"], "/nonexistent/model.ckpt-5.pkl"),
    (["--agent", "planner", "--preset", "no-such-preset"], "no-such-preset"),
    (["--agent", "planner", "--usr-conf", "{not json"], "not valid JSON"),
    (["--agent", "planner", "--usr-conf", '{"diy": {"treasure_num": 20}}'], "treasure_num"),
    (["--agent", "planner", "--usr-conf", '{"env_conf": {"map": [61]}}'], "--config or --preset picks the game"),
    (["--agent", "planner", "--map-file", "/nonexistent/map.json", "--positions-file", "/nonexistent/p.json"],
     "/nonexistent/map.json"),
])
def test_evaluate_bad_input_exits_2_naming_it(args, message, capsys):
    assert evaluate.main([*args, "--quiet"]) == 2
    assert message in capsys.readouterr().err


# --- render -----------------------------------------------------------------------------------

def test_render_writes_png_and_gif_of_expected_size_and_frames(run_dir, map_args, tmp_path):
    import imageio.v3 as iio
    from PIL import Image

    from evaluation.back_to_the_realm import HEADER_HEIGHT, gif_frame_size

    png, gif = tmp_path / "ep.png", tmp_path / "ep.gif"
    conf = json.dumps({"diy": {"treasure_num": 3, "max_step": 60}})
    rc = render.main(["--ckpt", str(run_dir / "ckpt" / APP_DIR / "model.ckpt-0.pkl"), "--usr-conf", conf,
                      "--png", str(png), "--gif", str(gif), "--scale", "3", "--view-scale", "4",
                      "--frame-stride", "4", "--max-frames", "10", *map_args])
    assert rc == 0
    with Image.open(png) as picture:
        assert picture.size == (128 * 3, 128 * 3 + HEADER_HEIGHT)
    frames = iio.imread(gif, index=None)
    assert frames.shape[0] == 10  # 60 steps / stride 4 = 15, capped at 10
    assert frames.shape[1:3] == gif_frame_size(4)

    few = tmp_path / "few.gif"
    assert render.main(["--agent", "planner", "--usr-conf", conf, "--png", str(tmp_path / "p.png"), "--gif", str(few),
                        "--frame-stride", "25", *map_args]) == 0
    assert iio.imread(few, index=None).shape[0] == math.ceil(60 / 25)  # the planner times out at 60 steps too


def test_frame_indices_stride_and_cap():
    from games.base import frame_indices

    assert frame_indices(10, 3, 100) == [0, 3, 6, 9]
    assert frame_indices(10, 1, 4) == [0, 1, 2, 3]


# --- plot ----------------------------------------------------------------------------------------

def test_plot_draws_curves_from_the_metrics_writer(tmp_path):
    from workflow import metrics_keys as keys
    from workflow.metrics import MetricsWriter

    writer = MetricsWriter(tmp_path / "metrics.csv", tmp_path / "tb")
    rng = np.random.default_rng(0)
    for step in range(1, 41):
        writer.write("learner", step, step * 512, {
            keys.EPISODE_SCORE_KEY: 100.0 + 5 * step + rng.normal(0, 20),
            keys.EPISODE_WIN_KEY: float(rng.random() < step / 40),
            "episode/reward/chest": rng.random(),
            keys.learner_key("loss/policy"): rng.normal(),  # the names the project's Agent.learn returns
            keys.learner_key("loss/value"): 1.0 / step,
            keys.ENV_SPS: 900 + rng.normal(0, 10),
            keys.POLICY_LAG: float(rng.integers(0, 3)),
        })
    writer.close()
    paths = plot.plot_run(tmp_path)
    names = {p.name for p in paths}
    assert {"overview.png", "episode.png", "loss.png", "system.png"} <= names
    assert all(p.parent == tmp_path / "plots" and p.stat().st_size > 0 for p in paths)
    assert set(t for t, _ in plot.panel_keys(sorted(plot.load_metrics(tmp_path / "metrics.csv")))) >= {
        "score", "win rate", "reward terms", "losses", "throughput", "policy lag"}


def test_plot_missing_metrics_exits_2(tmp_path):
    assert plot.main([str(tmp_path)]) == 2


# --- clean_ckpt and the shared rule ----------------------------------------------------------------

def make_ckpts(directory: Path, ids) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for i in ids:
        (directory / ckpt_files.ckpt_name(i)).write_bytes(b"x")
    (directory / "notes.txt").write_text("not a checkpoint")
    return directory


def test_clean_ckpt_dry_run_deletes_nothing(tmp_path, capsys):
    d = make_ckpts(tmp_path / "ckpt" / APP_DIR, [5, 50, 100, 150, 200])
    assert clean_ckpt.main([str(tmp_path), "--keep", "2"]) == 0
    assert [c.id for c in ckpt_files.list_checkpoints(d)] == [5, 50, 100, 150, 200]
    assert "would delete" in capsys.readouterr().out


def test_clean_ckpt_keeps_exactly_the_newest_k(tmp_path):
    d = make_ckpts(tmp_path / "c", [5, 50, 100, 150, 200])
    assert clean_ckpt.main([str(d), "--keep", "2", "--apply"]) == 0
    assert [c.id for c in ckpt_files.list_checkpoints(d)] == [150, 200]
    assert (d / "notes.txt").exists()


def test_clean_ckpt_never_counts_nor_deletes_a_checkpoint_whose_write_was_cut_off(tmp_path, capsys):
    """200 is flagged incomplete in the run state (cut off, or a live learner still writing it):
    keeping one keeps 150, the newest whole one, and leaves 200 alone."""
    from workflow.checkpoints.run_state import write_run_state

    d = make_ckpts(tmp_path / "c", [100, 150, 200])
    write_run_state(d, {"100": {"counters": {}}, "150": {"counters": {}}, "200": {"counters": {}, "incomplete": True}})
    assert clean_ckpt.main([str(d), "--keep", "1", "--apply"]) == 0
    assert [c.id for c in ckpt_files.list_checkpoints(d)] == [150]
    assert [c.id for c in ckpt_files.cut_off_checkpoints(d)] == [200]
    assert f"leaving {d / 'model.ckpt-200.pkl'}: its write was cut off" in capsys.readouterr().out


def test_clean_ckpt_keep_best_from_sidecar_and_metrics(tmp_path):
    d = make_ckpts(tmp_path / "a", [10, 20, 30, 40])
    ckpt_files.write_scores_sidecar(d, {10: 300.0, 20: 900.0, 30: 100.0, 40: 200.0}, {"preset": "x"})
    assert clean_ckpt.main([str(d), "--keep", "1", "--keep-best", "--apply"]) == 0
    assert [c.id for c in ckpt_files.list_checkpoints(d)] == [20, 40]

    run = tmp_path / "run"
    d = make_ckpts(run / "ckpt" / APP_DIR, [10, 20, 30])
    with (run / "metrics.csv").open("w") as f:
        f.write("wall_time,role,train_step,env_steps,key,value\n")
        for step, score in [(12, 900.0), (15, 700.0), (22, 100.0), (35, 50.0), (36, 60.0)]:
            f.write(f"0,learner,{step},0,episode/total_score,{score}\n")
    assert clean_ckpt.main([str(run), "--keep", "1", "--keep-best", "--apply"]) == 0
    assert [c.id for c in ckpt_files.list_checkpoints(d)] == [10, 30]


def test_ckpt_rule_and_ids():
    assert ckpt_files.parse_ckpt_id("x/model.ckpt-42.pkl") == 42
    assert ckpt_files.parse_ckpt_id("model.ckpt-42.pkl.tmp") is None
    assert ckpt_files.parse_ckpt_id("model.ckpt-42.pkl.tmp-99") is None
    assert ckpt_files.parse_ckpt_id("model.ckpt-42.optim.pth") == 42  # a package's second file of checkpoint 42
    assert ckpt_files.parse_ckpt_id("model.ckpt-421") == 421
    assert ckpt_files.choose_kept([1, 2, 3, 4], 2) == {3, 4}
    assert ckpt_files.choose_kept([1, 2, 3, 4], 0) == set()
    assert ckpt_files.choose_kept([1, 2], 3) == {1, 2}  # fewer than K: nothing goes
    assert ckpt_files.choose_kept([1, 2, 3, 4], 2, {1: 5.0, 2: 5.0, 4: 1.0}, keep_best=True) == {2, 3, 4}
    ckpts = [ckpt_files.Checkpoint(i, Path(f"{i}")) for i in range(7)]
    assert [c.id for c in ckpt_files.every_kth(ckpts, 3)] == [0, 3, 6]


def test_scores_sidecar_merges_only_same_episodes(tmp_path):
    ckpt_files.write_scores_sidecar(tmp_path, {1: 10.0}, {"preset": "a"})
    ckpt_files.write_scores_sidecar(tmp_path, {2: 20.0}, {"preset": "a"})
    assert ckpt_files.read_scores_sidecar(tmp_path) == {1: 10.0, 2: 20.0}
    ckpt_files.write_scores_sidecar(tmp_path, {3: 30.0}, {"preset": "b"})
    assert ckpt_files.read_scores_sidecar(tmp_path) == {3: 30.0}


def test_map_comes_from_the_run_config_unless_given(run_dir):
    import games
    from evaluation.episodes import run_config_file
    from evaluation.inputs import InputError, env_kwargs
    from workflow import platforms
    from workflow.config import AppConfig, EnvConfig, save_effective_config

    env = EnvConfig.for_game(games.BACK_TO_THE_REALM, {"map_seed": 3, "flash_blocked": "nearest"})
    save_effective_config(AppConfig(env=env),
                          run_dir / "log" / "effective_config.toml")
    ckpt = run_dir / "ckpt" / APP_DIR / "model.ckpt-0.pkl"
    game, platform = games.BACK_TO_THE_REALM, platforms.PROJECT
    env = env_kwargs(game, platform, run_config=run_config_file(ckpt))
    assert env["map_seed"] == 3 and env["flash_blocked"] == "nearest"
    given = env_kwargs(game, platform, map_seed=5, run_config=run_config_file(ckpt))
    assert given["map_seed"] == 5 and given["flash_blocked"] == "fail"  # the 2024 rule: no --package of the 2025 platform
    with pytest.raises(InputError, match="--obstacles-file is not a back_to_the_realm map's file"):
        env_kwargs(game, platform, obstacles_file="o.json")


@pytest.mark.parametrize("tool", ["bench_model.py", "back_to_the_realm/bench_env.py", "bench_train.py", "evaluate.py",
                                  "render.py", "plot.py", "clean_ckpt.py", "viewer.py", "export_kaiwu.py", "bench_learn.py",
                                  "bench_algos.py", "back_to_the_realm/bench_near_end.py", "gorge_chase/survival.py",
                                  "back_to_the_realm_v2/near_end.py", "sweep.py", "gorge_chase/random_policy.py",
                                  "gorge_chase/bench_env.py", "gorge_chase/bench_features.py", "gorge_chase/bench_reference.py",
                                  "robot_vacuum/bench_env.py", "robot_vacuum/learn.py", "bench_ray_cluster.py",
                                  "scorecard.py"])
def test_every_tool_runs_with_the_venvs_python_from_any_directory(tool, tmp_path):
    """The project is installed editable in .venv: no PYTHONPATH, no path tricks; a tool imports the
    library's packages (the evaluation, the export, the tasks, the command line's flags) as any
    program does."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / tool), "--help"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage" in result.stdout.lower()


def test_bench_model_counts_the_update_flops_of_the_network():
    """The update's FLOPs per frame follow the network: per epoch between 2x (no input
    gradient) and 3x (forward + backward) the forward pass counted by hand, and linear in epochs.
    The advantage pass before it is measured too."""
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import bench_model
    from agent.back_to_the_realm.ppo_agent import Agent
    from feature.back_to_the_realm.layout import MAP_CHANNELS, MAP_SIZE, NUM_ACTIONS, STATE_DIM
    from workflow.config import load_config

    def forward_flops(cfg) -> float:
        flops, ch, size = 0, MAP_CHANNELS, MAP_SIZE
        for out_ch, k, s in zip(cfg.model.channels, cfg.model.kernel_sizes, cfg.model.strides):
            size = (size - k) // s + 1
            flops += 2 * size * size * out_ch * ch * k * k
            ch = out_ch
        flops += 2 * (ch * size * size + STATE_DIM) * cfg.model.hidden_size
        backbones = 1 if cfg.model.share_backbone else 2
        return backbones * flops + 2 * cfg.model.hidden_size * (NUM_ACTIONS + 1)  # and two heads

    counted = {}
    for epochs in (1, 2):
        cfg = load_config(None, [f"ppo.update_epochs={epochs}", "ppo.num_minibatches=2", "app.train_batch_size=16"])
        cfg.ppo.num_steps = 4
        agent = Agent(settings=cfg, seed=0)
        per_frame, rates = bench_model.bench_update(agent, cfg.app.train_batch_size, 0.05,
                                                    (bench_model.FP32, bench_model.BF16))
        counted[epochs] = per_frame
        assert rates["fp32"] > 0 and rates["bf16"] > 0
        assert bench_model.bench_advantages(agent, 2, 0.05)["fp32"] > 0
    fwd = forward_flops(cfg)
    assert 2.0 * fwd <= counted[1] <= 3.05 * fwd, (counted[1], fwd)
    assert abs(counted[2] - 2 * counted[1]) < 1e-6 * counted[1]


def test_bench_model_measures_a_recurrent_policy_through_the_learners_batch():
    """With a recurrent core the update runs on sequences, as Agent.learn builds them: every
    synthetic segment's frames are trained on (no burn-in), FLOPs are per trained frame (the conv
    towers dominate, so a small core's are about the feedforward update's), and the advantage
    pass unrolls the critic too."""
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import bench_model
    from agent.back_to_the_realm.ppo_agent import Agent
    from workflow.config import load_config

    per_frame = {}
    for core in ("none", "lstm"):
        cfg = load_config(None, ["ppo.update_epochs=1", "ppo.num_minibatches=2", "app.train_batch_size=4",
                                 f"model.core='{core}'", "model.core_size=32"])
        cfg.ppo.num_steps = 8
        agent = Agent(settings=cfg, seed=0)
        batch, frames = agent.update_batch(bench_model.segment_batch(cfg.app.train_batch_size, cfg.ppo.num_steps))
        assert frames == 4 * 8
        assert ("train" in batch) == (core == "lstm")
        per_frame[core], rates = bench_model.bench_update(agent, cfg.app.train_batch_size, 0.05)
        assert rates["fp32"] > 0
        assert bench_model.bench_advantages(agent, 2, 0.05)["fp32"] > 0
    assert 0.9 < per_frame["lstm"] / per_frame["none"] < 1.1, per_frame


def test_bench_train_bounds_by_cpu_seconds_and_by_the_learners_wall_time():
    """The cores' bound counts training as the CPU time of the learner's threads (two threads
    busy for 1 ms cost 2 ms of the machine), while the learner alone is bounded by its wall time;
    the smallest bound names its limiter."""
    import bench_train
    from workflow.config import load_config

    cfg = load_config(None, ["app.aisrv_num=2", "app.algorithm_on_policy_or_off_policy='on-policy'"])
    t = {"env": 0.001, "inference": 0.001, "train": 0.001, "train_cpu": 0.002, "rows_per_step": 1.0}
    bound, limiter = bench_train.compute_bound(cfg, t, n_cores=2)
    assert bound == pytest.approx(2 / 0.004) and limiter.startswith("2 cores")
    bound, limiter = bench_train.compute_bound(cfg, t, n_cores=16)
    assert bound == pytest.approx(1 / 0.001) and ("aisrv" in limiter or "learner" in limiter)
    t["inference"] = 0.0001
    bound, limiter = bench_train.compute_bound(cfg, t, n_cores=16)
    assert bound == pytest.approx(1000) and limiter.startswith("learner")


def test_bench_train_reads_what_the_cores_went_to_from_a_runs_process_stats(tmp_path):
    """--package's split of a run's cores: the learner's cores busy, the aisrv's (all of them)
    and the aisrv's CPU per env step, from the log/process_stats.json the supervisor writes."""
    import json

    import bench_train

    (tmp_path / "log").mkdir()
    stats = {"wall_seconds": 100.0, "cpu_seconds": {"launcher": 1.0, "learner": 40.0, "aisrv-0": 75.0, "aisrv-1": 85.0},
             "learner": {"env_steps": 128000}}
    (tmp_path / "log" / "process_stats.json").write_text(json.dumps(stats))
    shares = bench_train.cpu_shares(tmp_path)
    assert shares["learner_cores"] == pytest.approx(0.4) and shares["aisrv_cores"] == pytest.approx(1.6)
    assert shares["aisrv_ms_per_step"] == pytest.approx(160.0 / 128000 * 1e3)
    stats["learner"] = {}
    (tmp_path / "log" / "process_stats.json").write_text(json.dumps(stats))
    assert math.isnan(bench_train.cpu_shares(tmp_path)["aisrv_ms_per_step"])
