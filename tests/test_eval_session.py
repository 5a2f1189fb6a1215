"""evaluation.session: what tools/evaluate.py, render.py, viewer.py and bench_learn.py play, resolved
from plain arguments by the library (the platform version and game of a checkpoint's run, the
episodes, the checkpoints with the newest loaded, the env), then drawn and played on the real
simulator; every refusal an evaluation.inputs.InputError naming the flag."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from evaluation.inputs import InputError
from evaluation.session import EvalRequest, open_session
from tests.conftest import REPO_ROOT

GORGE_CONF = REPO_ROOT / "conf" / "gorge_chase.toml"
SHORT = {"env_conf": {"map": [3], "map_random": False, "max_step": 30}}
TINY_MODEL = "[model]\nchannels = [4]\nkernel_sizes = [3]\nstrides = [2]\nhidden_size = 16\n"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(run directory, its checkpoint, its config) of a small untrained gorge_chase agent."""
    from agent.model import ModelConfig
    from agent.gorge_chase.ppo_agent import Agent
    from agent.gorge_chase.ppo_config import Settings

    root = tmp_path_factory.mktemp("run")
    settings = Settings(model=ModelConfig(channels=[4], kernel_sizes=[3], strides=[2], hidden_size=16))
    ckpt = Agent(settings=settings, seed=0).save_model(root / "ckpt" / "gorge_chase_ppo", 1)
    config = root / "small.toml"
    config.write_text(f'include = ["{GORGE_CONF}"]\n\n{TINY_MODEL}')
    return root, ckpt, config


def test_a_session_resolves_a_runs_game_episodes_and_env_then_plays_them(run):
    root, ckpt, config = run
    said = []
    session = open_session(EvalRequest(ckpt=root, config=config, usr_conf=SHORT), report=said.append)
    assert (session.platform.name, session.game.name, session.label) == ("15", "gorge_chase", "custom")
    assert session.ckpts == [ckpt] and session.loaded is not None and session.env_kwargs["protocol"] == "gorge"
    assert said == ["episodes: --usr-conf"]  # what a person is told; the library prints nothing
    env, episodes = session.episodes(2, 5)
    assert [episode.seed for episode in episodes] == [5, 6] and env.GAME == "gorge_chase"
    results = session.play(episodes, workers=1)
    assert session.keys() == [str(ckpt), "planner"] == list(results)
    assert all(sorted(records) == [0, 1] for records in results.values())
    assert session.policy().play(env, episodes[0].usr_conf, 5).total_score == results[str(ckpt)][0].total_score
    with pytest.raises(InputError, match="--episodes must be >= 1, got 0"):
        session.episodes(0, 5)


@pytest.mark.parametrize("fields, message", [
    ({"agent": "robot"}, "--agent 'robot': allowed ckpt | planner"),
    ({"every": 0}, "--every must be >= 1, got 0"),
    ({"usr_conf": "package"}, "--usr-conf package plays a --package's own train_env_conf.toml: give --package"),
    ({"ckpt": Path("/nonexistent/model.ckpt-3.pkl")}, "--ckpt: no such file or directory: /nonexistent/model.ckpt-3"),
    ({"agent": "planner", "preset": "no-such-preset"}, "--preset: "),
    ({"agent": "planner", "policy": "best"}, "--policy best: "),
    ({}, "--ckpt is required (or --package, or --agent planner)"),
    ({"agent": "planner", "usr_conf": '{"env_conf": {"map": [61]}}'}, "--config or --preset picks the game"),
])
def test_a_sessions_refusals_name_the_flag(fields, message):
    with pytest.raises(InputError, match=re.escape(message)):
        session = open_session(EvalRequest(**fields))
        session.episodes(1, 0)  # the usr_conf is the simulator's to refuse, when the episodes are drawn
