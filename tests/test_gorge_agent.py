"""The project's gorge_chase package (app = "gorge_chase", algo = "ppo"): its numbers against the simulator's, the
15.0.1 protocol in the episode runner, the memory's moves and flashes against the env's rules,
the reward terms, the agent acting on the raw env_obs, one local training step; and the
commands: `./train.sh --config conf/gorge_chase.toml`, tools/evaluate.py on its checkpoint,
tools/export_kaiwu.py --kaiwu-version 15 --algo diy, the export's train test and its evaluation."""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys

import numpy as np
import pytest
import toml

from episodes.protocol import GORGE, env_protocol
from episodes.runner import EpisodeRunner
from feature.gorge_chase import constants as ours
from feature.gorge_chase.curriculum import CurriculumConfig
from feature.gorge_chase.layout import MAP_SHAPE, NUM_ACTIONS, STATE_DIM, legal_mask
from feature.gorge_chase.memory import UNREACHED, GorgeMemory, path_field
from feature.gorge_chase.observation import GorgeView, action_process, observation_process
from feature.gorge_chase.reward import TERMS, RewardConfig, reward_shaping, step_view
from realm import make_env
from realm.gorge_chase import constants as theirs
from realm.gorge_chase.env import flash_target, walk_path
from tests.conftest import REPO_ROOT, needs_gorge_maps
from tool_runs import run_tool
from workflow import platforms

CONF = REPO_ROOT / "conf" / "gorge_chase.toml"
ONE_MONSTER = CurriculumConfig(map=[1], monster_interval=-2, treasure_count=3, buff_count=1, max_step=60)


def test_the_features_numbers_are_the_simulators():
    for name in ("GRID_SIZE", "VIEW_RADIUS", "VIEW_SIZE", "NUM_ACTIONS", "NUM_MOVES", "DIRECTIONS", "FLASH_RANGE",
                 "FLASH_RANGE_DIAGONAL", "DISTANCE_BUCKETS", "SUB_TYPE_TREASURE", "SUB_TYPE_BUFF", "BUFF_DURATION"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.MAX_CHESTS == theirs.TREASURE_COUNT_RANGE[1] and ours.MAX_MONSTERS == theirs.MONSTER_COUNT


def test_the_15_protocol_is_named_by_its_version_and_its_env():
    env = make_env(protocol="gorge", seed=0)
    assert env_protocol(env, "15") is env_protocol(env, "gorge") is GORGE
    runner = EpisodeRunner([env], lambda obs: [type("A", (), {"action": 0})() for _ in obs], observation_process,
                           action_process, GORGE.name, translate=True, view=GorgeView)
    memory = runner.reset(0, ONE_MONSTER.usr_conf())
    assert isinstance(memory, GorgeMemory) and memory.step_no == 0
    obs_data = runner.obs_data(0)
    assert obs_data.map.shape == MAP_SHAPE and obs_data.state.shape == (STATE_DIM,)
    assert obs_data.legal.shape == (NUM_ACTIONS,)
    (t,) = runner.step()
    assert t.error is None and t.obs is memory and memory.step_no == 1
    assert t.score.total_score == 1.5 and t.ended == (t.terminated or t.truncated)


def test_moves_flashes_and_monster_distances_follow_the_envs_rules():
    env = make_env(protocol="gorge", seed=3)
    view = GorgeView()
    memory, _ = view.reset(env.reset(ONE_MONSTER.usr_conf(), seed=3))
    rng = np.random.default_rng(0)
    for _ in range(40):
        x, z = memory.hero
        w = env.map.walkable_flat
        for d in range(ours.NUM_MOVES):  # a move is open exactly when the env's walk enters a cell
            assert (memory.move_cell(d) is not None) == bool(walk_path(w, x, z, d, 1)), (x, z, d)
            fx, fz, k = flash_target(w, x, z, d)
            c, r, kk = memory.flash_cell(d)
            assert (kk, c - ours.VIEW_RADIUS + x, r - ours.VIEW_RADIUS + z) == (k, fx, fz), (x, z, d)
        mask = legal_mask(memory)
        action = int(rng.choice(np.flatnonzero(mask)))
        _, env_obs = env.step(action)
        if env_obs["terminated"] or env_obs["truncated"]:
            break
        memory, _ = view.step(env_obs)
    grid = np.ones((5, 5), dtype=bool)
    grid[1:4, 2] = False  # a wall: the way round is longer
    field = path_field(grid, [(0, 2)])
    assert field[2, 0] == 0 and field[2, 4] == 8 and field[2, 2] == UNREACHED


def test_the_memory_keeps_what_the_view_showed():
    env = make_env(protocol="gorge", seed=0)
    view = GorgeView()
    memory, _ = view.reset(env.reset(ONE_MONSTER.usr_conf(), seed=0))
    seen = memory.seen.sum()
    assert seen == ours.VIEW_SIZE ** 2 and memory.visits.max() == pytest.approx(0.2)
    for _ in range(8):
        d = next(d for d in range(ours.NUM_MOVES) if memory.move_cell(d) is not None)
        _, env_obs = env.step(d)
        if env_obs["terminated"]:
            break
        memory, _ = view.step(env_obs)
    assert memory.seen.sum() >= seen and memory.monsters[0].present


def test_the_reward_terms_sum_and_a_capture_costs_its_weight():
    weights = RewardConfig()
    env = make_env(protocol="gorge", seed=0)
    view = GorgeView()
    memory, _ = view.reset(env.reset(ONE_MONSTER.usr_conf(), seed=0))
    prev = step_view(memory)
    _, env_obs = env.step(0)
    cur = step_view(view.step(env_obs)[0], env_obs["terminated"], env_obs["truncated"])
    total, terms = reward_shaping(prev, cur, 0, weights)
    assert set(terms) == set(TERMS) and total == pytest.approx(sum(terms.values()))
    caught = dataclasses.replace(cur, terminated=True)
    _, terms = reward_shaping(prev, caught, 0, weights)
    assert terms["caught"] == weights.caught and terms["survive"] == 0.0


def test_the_agent_plays_the_raw_env_obs_as_the_platform_evaluates():
    from agent.model import ModelConfig
    from agent.gorge_chase.ppo_agent import Agent
    from agent.gorge_chase.ppo_config import Settings

    agent = Agent(settings=Settings(model=ModelConfig(channels=[4], kernel_sizes=[3], strides=[2], hidden_size=16)),
                  seed=0)
    env = make_env(protocol="gorge", seed=0)
    env_obs = env.reset(ONE_MONSTER.usr_conf(), seed=0)
    agent.reset(env_obs)
    for _ in range(5):
        act = agent.exploit(env_obs)
        assert isinstance(act, int) and 0 <= act < NUM_ACTIONS
        assert legal_mask(agent._view.memory)[act] == 1.0
        _, env_obs = env.step(act)
        if env_obs["terminated"]:
            break


def test_the_local_trainer_trains_the_gorge_package():
    from tasks import gorge_chase as gorge_survival
    from workflow.host.local_trainer import train_local

    result = train_local(gorge_survival.survival_config(seed=0), max_updates=2)
    assert len(result.updates) == 2 and result.stats.env_steps > 0
    assert all(np.isfinite(v) for update in result.updates for v in update.values())


def test_the_game_is_hosted_by_the_15_platform():
    from workflow.platforms.project import PROJECT_ALGORITHMS, hosting_version

    assert hosting_version("gorge_chase").name == "15"
    assert PROJECT_ALGORITHMS[("gorge_chase", "ppo")].layout.kaiwu_version == "15"
    assert set(PROJECT_ALGORITHMS[("gorge_chase", "ppo")].sections) == {"model", "ppo", "reward_gorge", "curriculum_gorge",
                                                                            "features_gorge"}
    from workflow.config import load_config

    cfg = load_config(CONF)
    assert (cfg.app.app, cfg.app.algo) == ("gorge_chase", "ppo")
    assert cfg.curriculum_gorge.map == [*range(1, 9), *range(21, 61)]  # 48 generated maps


def test_a_curriculum_draws_its_settings_per_episode_and_the_simulator_plays_each_draw():
    from episodes.gorge_chase.episodes import game_episodes
    from workflow.config import load_config

    cfg = load_config(CONF, ["curriculum_gorge.draw={monster_interval = [200, 300], talent_cooldown = [100, 200]}",
                             "curriculum_gorge.map=[1]", "curriculum_gorge.map_random=false"])
    np.random.seed(5)  # the host seeds it per aisrv; the episodes' RNG is drawn from it
    episodes = game_episodes(cfg.settings)
    env = make_env(protocol="gorge")
    seen = set()
    for _ in range(24):
        usr_conf = episodes.usr_conf(0, 0)
        conf = usr_conf["env_conf"]
        assert conf["monster_speedup"] == 500 and conf["max_step"] == 1000 and "draw" not in conf  # not drawn
        env_obs = env.reset(usr_conf)
        shown = env_obs["observation"]["env_info"]
        assert (shown["monster_interval"], shown["flash_cooldown_max"]) == (conf["monster_interval"], conf["talent_cooldown"])
        seen.add((conf["monster_interval"], conf["talent_cooldown"]))
    assert seen == {(200, 100), (200, 200), (300, 100), (300, 200)}  # each key on its own
    draws = []
    for _ in range(2):
        np.random.seed(5)
        again = game_episodes(cfg.settings)
        draws.append([again.usr_conf(0, 0) for _ in range(8)])
    assert draws[0] == draws[1]  # the seed fixes them
    # the host tries each drawn value before the run starts; the export keeps the values not drawn
    probes = cfg.settings.usr_confs_to_check(0)
    assert sorted(p[2]["env_conf"]["monster_interval"] for p in probes) == [200, 300, 300]  # base, 200, the cooldown's 200
    assert sorted(p[2]["env_conf"]["talent_cooldown"] for p in probes) == [100, 100, 200]
    from games.gorge_chase import GAME

    exported, _ = GAME.train_env_conf(cfg)
    assert exported["env_conf"]["monster_interval"] == 300 and "draw" not in exported["env_conf"]
    assert type(cfg.settings).from_dict(cfg.settings.to_dict()).curriculum_gorge.draw == {
        "monster_interval": [200, 300], "talent_cooldown": [100, 200]}  # settings.json carries it


@pytest.mark.parametrize("draw, named", [
    ("{monster_gap = [1]}", "draw.monster_gap: not a key drawn per episode; allowed: treasure_count"),
    ("{monster_interval = []}", "draw.monster_interval must be a non-empty list"),
    ("{monster_interval = [300, 5]}", "draw.monster_interval must be an int in 11..2000 or -1, -2, got 5"),
    ("{max_step = 300}", "curriculum_gorge.draw.max_step: expected a list of int, got 300"),
])
def test_a_bad_draw_is_refused_naming_its_key(draw, named):
    from workflow.config import load_config

    with pytest.raises(ValueError, match=re.escape(named)):  # workflow.schema.ConfigError is one
        load_config(CONF, [f"curriculum_gorge.draw={draw}"])


def test_an_export_keeps_the_map_ids_the_platform_has_and_falls_back_to_the_official_list():
    from games.gorge_chase import GAME
    from realm.gorge_chase.usr_conf import default_usr_conf
    from workflow.config import load_config

    for maps, kept in (([2, 21, 9], [2, 9]), ([21, 22], default_usr_conf()["env_conf"]["map"]), ([3], [3])):
        cfg = load_config(CONF, [f"curriculum_gorge.map={maps}"])
        usr_conf, comment = GAME.train_env_conf(cfg)
        assert usr_conf["env_conf"]["map"] == kept
        dropped = [m for m in maps if m > 10]
        assert (f"generated maps {dropped} exist only" in comment) == bool(dropped), comment


def test_the_reference_alone_plays_the_game_of_the_configs_agent():
    from evaluation.session import EvalRequest, open_session

    usr_conf = json.dumps(CurriculumConfig(map=[1, 2], map_random=False).usr_conf())
    assert open_session(EvalRequest(agent="planner", usr_conf=usr_conf, config=CONF)).platform.name == "15"
    assert open_session(EvalRequest(agent="planner", usr_conf=usr_conf)).platform.name != "15"


@needs_gorge_maps
def test_an_evaluation_on_the_official_maps_says_so(tmp_path, capsys):
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate

    grids = REPO_ROOT.parent / "shared" / "kaiwu_gorge" / "map" / "grids"
    config = tmp_path / "open_maps.toml"
    config.write_text(f'[app]\napp = "gorge_chase"\nalgo = "ppo"\n\n[env]\nmaps_dir = "{grids}"\n')
    usr_conf = json.dumps(CurriculumConfig(map=[9], map_random=False, max_step=20).usr_conf())
    assert evaluate.main(["--agent", "planner", "--usr-conf", usr_conf, "--config", str(config), "--episodes", "1",
                          "--quiet", "--out", str(tmp_path / "out")]) == 0
    assert f"on the maps in {grids}:" in capsys.readouterr().out


def _run(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A run of `./train.sh --config conf/gorge_chase.toml` (two small train steps, short episodes,
    monster 2's step drawn per episode) and its last checkpoint."""
    root = tmp_path_factory.mktemp("gorge_agent")
    result = _run("./train.sh", "--config", str(CONF), "--set", f'app.run_dir="{root}"', "--set", 'app.run_name="r"',
                  "--set", "app.max_train_steps=2", "--set", "app.replay_buffer_capacity=8", "--set",
                  "app.train_batch_size=4", "--set", "app.envs_per_aisrv=2", "--set", "curriculum_gorge.max_step=40",
                  "--set", "curriculum_gorge.draw={monster_interval = [300, 200]}", "--set", "model.hidden_size=32")
    assert result.returncode == 0, result.stdout + result.stderr
    ckpts = sorted((root / "r" / "ckpt").glob("*/model.ckpt-*.pkl"), key=lambda p: int(p.name.split("-")[1][:-4]))
    return root, ckpts[-1]


def test_an_evaluated_episode_scores_the_same_in_any_process_and_order(trained):
    """The agent's own draws (exploit's loop breaking, here every step) are seeded with the
    episode seed: an episode replays the same after other draws and in a fresh load."""
    from evaluation.episodes import load_agent
    from evaluation.gorge_chase import AgentPolicy

    _, ckpt = trained
    env = make_env(protocol="gorge", seed=0)
    conf = dataclasses.replace(ONE_MONSTER, max_step=40).usr_conf()

    def policy():
        loaded = load_agent(ckpt, None)
        loaded.agent.ppo_cfg = dataclasses.replace(loaded.agent.ppo_cfg, exploit_policy="sample")
        return AgentPolicy(loaded)

    first = policy()
    actions = first.play(env, conf, 3).actions
    first.loaded.agent.sample_generator.manual_seed(12345)  # what other episodes' draws leave behind
    assert first.play(env, conf, 3).actions == actions
    assert policy().play(env, conf, 3).actions == actions
    assert first.play(env, conf, 4).actions != actions


@pytest.mark.slow
def test_train_evaluate_export_train_test_and_score_the_export(trained):
    root, ckpt = trained
    out = root / "eval"
    result = run_tool("tools/evaluate.py", "--ckpt", str(ckpt), "--preset", "gorge-generated-heldout",
                      "--episodes", "1", "--no-planner", "--workers", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "results.json").read_text())
    package = root / "package"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(package),
                      "--kaiwu-version", "15", "--algo", "diy")
    assert result.returncode == 0, result.stderr
    # its features read extra_info.frame_state (global_info, the conf's default): the export says so
    said = "reads env_obs's extra_info.frame_state ([features_gorge] global_info = true"
    assert f"information: the agent {said}" in result.stdout
    assert f"# The agent {said}" in (package / "conf" / "configure_app.toml").read_text().splitlines()[1]
    assert json.loads((package / "kaiwu.json").read_text())["project_code"] == "gorge_chase"
    assert platforms.detect(package).name == "15"
    text = (package / "agent_diy" / "conf" / "train_env_conf.toml").read_text()
    conf = toml.loads(text)
    # the config trains on generated maps 1-8 and 21-60; the platform has maps 1-10: the package keeps 1-8
    assert conf["env_conf"]["max_step"] == 40 and conf["env_conf"]["map"] == list(range(1, 9))
    assert conf["env_conf"]["monster_interval"] == 300 and "draw" not in conf["env_conf"]  # the value not drawn
    assert json.loads((package / "agent_diy" / "conf" / "settings.json").read_text())["curriculum_gorge"]["draw"] == {
        "monster_interval": [300, 200]}  # the package's workflow draws it (its train test below)
    assert "generated maps [21, 22," in text and "exist only in this project's simulator" in text
    assert (package / "agent_diy" / "feature" / "gorge_chase" / "memory.py").is_file()
    assert (package / "agent_diy" / "feature" / "gorge_chase" / "paths.py").is_file()
    assert (package / "agent_diy" / "feature" / "gorge_chase" / "lookahead.py").is_file()  # exploit's search
    assert json.loads((package / "agent_diy" / "conf" / "settings.json").read_text())["features_gorge"] == {
        "global_info": True, "danger_guard": False, "lookahead_guard": True, "lookahead_guard_training": True,
        "lookahead_budget": 100}
    from export.code import foreign_imports

    for file in package.rglob("*.py"):  # only the platform's modules, numpy, torch and the package
        assert foreign_imports(file.read_text(), "agent_diy") == [], file
    result = _run("./train.sh", "--package", str(package), "--train-test", "--set", f'app.run_dir="{root}"', "--set",
                  'app.run_name="exported"', "--set", "app.max_train_steps=2", "--set", "app.replay_buffer_capacity=8",
                  "--set", "app.train_batch_size=4")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    result = run_tool("tools/evaluate.py", "--package", str(package), "--preset", "gorge-generated-heldout",
                      "--episodes", "1", "--no-planner", "--workers", "1", "--out", str(root / "eval_package"))
    assert result.returncode == 0, result.stderr


@needs_gorge_maps
def test_an_evaluation_config_is_read_as_train_sh_reads_it(trained, tmp_path, capsys):
    """A small evaluation TOML that includes conf/gorge_chase.toml and names the official maps, with
    --set over it: evaluate.py picks the included game and agent, the --set model, and the folder's maps
    (a checkpoint moved away from its run, so nothing else says which game or model it is)."""
    import shutil

    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate

    _, ckpt = trained
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(ckpt, alone / ckpt.name)
    grids = REPO_ROOT.parent / "shared" / "kaiwu_gorge" / "map" / "grids"
    config = tmp_path / "score_on_open_maps.toml"
    config.write_text(f'include = ["{CONF}"]\n\n[env]\nmaps_dir = "{grids}"\n')
    assert evaluate.main(["--ckpt", str(alone / ckpt.name), "--config", str(config), "--set", "model.hidden_size=32",
                          "--set", "curriculum_gorge.max_step=30", "--preset", "gorge-heldout", "--episodes", "1",
                          "--no-planner", "--workers", "1", "--quiet", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "gorge-heldout (gorge_chase" in out and f"on the maps in {grids}:" in out
    assert evaluate.main(["--ckpt", str(alone / ckpt.name), "--config", str(config), "--set", "model.hidden_size=64",
                          "--preset", "gorge-heldout", "--episodes", "1", "--no-planner", "--workers", "1",
                          "--quiet", "--out", str(tmp_path / "out64")]) == 2
    assert "does not fit" in capsys.readouterr().err
