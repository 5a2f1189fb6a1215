"""[env] gorge_extra_info: "withheld" hands a gorge_chase package env_obs whose extra_info holds
result_code and result_message only (no frame_state, no map_id), in training, in evaluation and in
render; the project's agent falls back to the view; tools/evaluate.py --extra-info full,withheld
scores a checkpoint both ways on the same episodes. The reference policy reads the env's true state
and plays alike either way."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from realm import make_env
from tests.conftest import REPO_ROOT
from workflow import platforms

GORGE_CONF = REPO_ROOT / "conf" / "gorge_chase.toml"
SHORT = {"env_conf": {"map": [3], "map_random": False, "max_step": 40}}
TINY_MODEL = "[model]\nchannels = [4]\nkernel_sizes = [3]\nstrides = [2]\nhidden_size = 16\n"
WITHHELD_KEYS = {"result_code", "result_message"}


def project_agent():
    """The project's gorge_chase agent (untrained, small), reading extra_info where it arrives."""
    from agent.model import ModelConfig
    from agent.gorge_chase.ppo_agent import Agent
    from agent.gorge_chase.ppo_config import Settings

    settings = Settings(model=ModelConfig(channels=[4], kernel_sizes=[3], strides=[2], hidden_size=16))
    assert settings.features_gorge.global_info
    return Agent(settings=settings, seed=0)


def evaluation_env(extra_info: str):
    """The env an evaluation of 15.0.1 packages builds from a run's [env] (the run's evaluator, the tools)."""
    from workflow.config import load_config

    cfg = load_config(GORGE_CONF, [f'env.gorge_extra_info="{extra_info}"'])
    return make_env(**cfg.eval.env_kwargs(cfg.env, platforms.get("15")))


def recording_policy(agent, handed: list):
    """The evaluation's policy of `agent` (evaluation.gorge_chase.AgentPolicy) with the 15.0.1
    platform's handoff to exploit, each extra_info it hands on noted in `handed`."""
    from evaluation.episodes import LoadedAgent
    from evaluation.gorge_chase import AgentPolicy

    platform = platforms.get("15")
    observation_process, action_process = platform.eval_protocol(agent, None)

    def handing(env_obs):
        handed.append(env_obs["extra_info"])
        return observation_process(env_obs)

    return AgentPolicy(LoadedAgent(agent, handing, action_process, platform))


@pytest.mark.parametrize("extra_info", ["full", "withheld"])
def test_what_an_evaluation_hands_the_package_follows_gorge_extra_info(extra_info):
    handed = []
    agent = project_agent()
    record = recording_policy(agent, handed).play(evaluation_env(extra_info), SHORT, seed=3)
    assert len(handed) == len(record.actions) == record.steps > 0  # every action chosen from what was handed
    if extra_info == "withheld":
        assert all(set(info) == WITHHELD_KEYS and info["result_code"] == 0 for info in handed)
    else:
        assert all("frame_state" in info and "map_id" in info for info in handed)


@pytest.mark.parametrize("protocol, key", [("gorge", "gorge_extra_info"), ("vacuum", "vacuum_extra_info")])
def test_mixed_hands_each_episode_one_of_the_two_drawn_by_seed(protocol, key):
    """`mixed` (a recipe that trains one agent for both ways): every step of an episode hands the
    same kind of extra_info, full or withheld, drawn per episode from the rule RNG: both come up,
    the same seed draws the same sequence, and the episode itself (spawns, map) is the one the
    fixed readings play from that seed."""
    def kinds(extra_info, seed=5, episodes=16):
        env = make_env(protocol=protocol, seed=seed, **{key: extra_info})
        drawn, first_obs = [], []
        for _ in range(episodes):
            env_obs = env.reset(usr_conf={"env_conf": {"max_step": 6}})
            first_obs.append(json.dumps(env_obs["observation"], sort_keys=True, default=str))
            seen = {"frame_state" in env_obs["extra_info"]}
            for _ in range(3):
                _, env_obs = env.step(0)[:2]
                seen.add("frame_state" in env_obs["extra_info"])
            assert len(seen) == 1, "one kind of extra_info for a whole episode"
            drawn.append("full" if seen.pop() else "withheld")
        return drawn, first_obs

    mixed, mixed_obs = kinds("mixed")
    assert set(mixed) == {"full", "withheld"} and kinds("mixed")[0] == mixed  # both, reproducibly
    assert kinds("mixed", seed=6)[0] != mixed
    full, full_obs = kinds("full")
    assert set(full) == {"full"} and full_obs == mixed_obs  # the episodes are the same ones


def test_an_error_answer_withholds_as_every_frame_does():
    from workflow.config import load_config

    cfg = load_config(GORGE_CONF, ['env.gorge_extra_info="withheld"', 'env.gorge_errors="env_obs"'])
    env = make_env(**cfg.env.make_kwargs(platforms.get("15")), seed=0)
    _, env_obs = env.step(0)  # before any reset: answered with the platform's error env_obs
    assert env_obs["observation"] is None and set(env_obs["extra_info"]) == WITHHELD_KEYS
    assert env_obs["extra_info"]["result_code"] != 0


def test_the_project_agent_plays_on_the_view_when_extra_info_is_withheld():
    """With frame_state every chest is known from the first step; withheld, only those the view showed."""
    known = {}
    for extra_info in ("full", "withheld"):
        agent = project_agent()
        env = evaluation_env(extra_info)
        env_obs = env.reset(SHORT, seed=3)
        agent.reset(env_obs)
        agent.exploit(env_obs)
        known[extra_info] = len(agent._view.memory.chests)
        in_view = len([o for o in env_obs["observation"]["frame_state"]["organs"] if o["sub_type"] == 1])
    assert known == {"full": 10, "withheld": in_view} and in_view < 10


def test_render_hands_the_package_no_frame_state_when_withheld():
    from games.base import RenderOptions
    from games.gorge_chase import GAME

    handed = []
    drawn = GAME.render(evaluation_env("withheld"), recording_policy(project_agent(), handed), SHORT, 3, "withheld",
                        RenderOptions(scale=1, view_scale=1, max_frames=5))
    assert drawn.png.size and drawn.frames and handed
    assert all(set(info) == WITHHELD_KEYS for info in handed)


def test_training_hands_the_package_no_frame_state_when_withheld(monkeypatch):
    """The local trainer (the project's package, its episode loop on the run's [env]) trains on
    env_obs without frame_state: the agent's memory is handed none and learns on."""
    import dataclasses

    from feature.gorge_chase.memory import GorgeMemory
    from workflow.host.local_trainer import train_local

    from tasks import gorge_chase as gorge_survival

    handed = []
    update = GorgeMemory.update

    def noting(memory, env_obs):
        handed.append(env_obs.get("extra_info"))
        return update(memory, env_obs)

    monkeypatch.setattr(GorgeMemory, "update", noting)
    cfg = gorge_survival.survival_config(seed=0)
    cfg.env = dataclasses.replace(cfg.env, rules=dataclasses.replace(cfg.env.rules, gorge_extra_info="withheld"))
    result = train_local(cfg, max_updates=1)
    assert len(result.updates) == 1 and all(np.isfinite(v) for v in result.updates[0].values())
    assert handed and all(set(info) == WITHHELD_KEYS for info in handed)


def test_the_reference_plays_the_same_either_way():
    from evaluation.gorge_chase import ReferencePolicy
    from realm.gorge_chase import reference

    full = ReferencePolicy().play(evaluation_env("full"), SHORT, 4)
    withheld = ReferencePolicy().play(evaluation_env("withheld"), SHORT, 4)
    assert full.actions == withheld.actions and full.total_score == withheld.total_score
    played = [reference.play(evaluation_env(extra_info), reference.ReferencePolicy(seed=4), SHORT, seed=4)
              for extra_info in ("full", "withheld")]
    assert played[0] == played[1] and played[1]["map_id"] == 3


# --- tools/evaluate.py --extra-info ---------------------------------------------------------------

@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A checkpoint of the small project agent and the config of its run (the game, the model)."""
    root = tmp_path_factory.mktemp("withheld")
    ckpt = project_agent().save_model(root / "ckpt" / "gorge_chase_ppo", 1)
    config = root / "small.toml"
    config.write_text(f'include = ["{GORGE_CONF}"]\n\n{TINY_MODEL}')
    return ckpt, config


def test_evaluate_scores_a_checkpoint_with_and_without_extra_info_on_the_same_episodes(checkpoint, tmp_path, capsys):
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate
    from evaluation.session import INFO_MARK

    ckpt, config = checkpoint
    out = tmp_path / "out"
    assert evaluate.main(["--ckpt", str(ckpt), "--config", str(config), "--usr-conf", json.dumps(SHORT), "--episodes",
                          "2", "--workers", "1", "--extra-info", "full,withheld", "--quiet", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    names = [line[:22].strip() for line in table.splitlines() if line.startswith(("ckpt 1", "planner"))]
    assert names == ["ckpt 1 full", "ckpt 1 withheld", "planner"]
    results = json.loads((out / "results.json").read_text())
    assert results["settings"]["extra_info"] == {"gorge_extra_info": ["full", "withheld"]}
    played = {}
    for episode in results["episodes"]:
        played.setdefault(episode["policy"].split(INFO_MARK)[-1], []).append((episode["seed"],
                                                                                       episode["usr_conf"]))
    assert set(played) == {"full", "withheld", "planner"}
    assert played["full"] == played["withheld"] == played["planner"]
    assert [row["ckpt_id"] for row in results["summary"]] == [1, 1, None]


@pytest.mark.parametrize("flags, named", [
    (["--extra-info", "full,secret"], "--extra-info: option gorge_extra_info = 'secret' is invalid: allowed 'full' | "
                                      "'withheld'"),
    (["--extra-info", "full,full"], "give distinct values"),
])
def test_evaluate_refuses_a_bad_extra_info_naming_it(checkpoint, flags, named, capsys):
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate

    ckpt, config = checkpoint
    assert evaluate.main(["--ckpt", str(ckpt), "--config", str(config), "--usr-conf", json.dumps(SHORT), "--episodes",
                          "1", "--quiet", *flags]) == 2
    assert named in capsys.readouterr().err


def test_evaluate_refuses_extra_info_for_a_game_without_it(capsys):
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate

    assert evaluate.main(["--agent", "planner", "--preset", "fixed-13", "--extra-info", "withheld", "--episodes", "1",
                          "--quiet"]) == 2
    assert "--extra-info: back_to_the_realm's env hands packages no global information to withhold" in \
        capsys.readouterr().err


def test_render_plays_a_checkpoint_with_extra_info_withheld(checkpoint, tmp_path):
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import render

    ckpt, config = checkpoint
    withheld = tmp_path / "withheld.toml"
    withheld.write_text(f'include = ["{config}"]\n\n[env]\ngorge_extra_info = "withheld"\n')
    assert render.main(["--ckpt", str(ckpt), "--config", str(withheld), "--usr-conf", json.dumps(SHORT), "--no-gif",
                        "--png", str(tmp_path / "episode.png")]) == 0
    assert (tmp_path / "episode.png").stat().st_size > 0
