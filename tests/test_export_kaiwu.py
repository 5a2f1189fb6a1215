"""tools/export_kaiwu.py: the project's agent and a checkpoint as a platform code package that
needs nothing of the toolkit, trains through `./train.sh --package` and is scored by
tools/evaluate.py; its checkpoint is a state dict the platform's way of loading reads."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import toml
import torch

from feature.back_to_the_realm.layout import INPUT_SHAPE
from agent.back_to_the_realm.ppo_agent import Agent
from agent.algorithms import PACKAGE_FOLDERS
from agent.back_to_the_realm.ppo_config import Settings
from agent.model import ActorCritic, ModelConfig
from tests.conftest import REPO_ROOT
from tool_runs import run_tool

TINY_CONFIG = """
include = ["{repo}/conf/configure_app.toml"]
[app]
train_batch_size = 4
replay_buffer_capacity = 8
dump_model_freq = 3
[model]
channels = [4]
kernel_sizes = [5]
strides = [4]
hidden_size = 16
[reward]
win = 12.5
[curriculum]
chest_num = 1
max_step = 60
"""

#: Imports the exported package with the toolkit's own top-level names blocked and the repository
#: off sys.path: only the package, the platform's modules (kaiwu_agent, kaiwudrl), numpy and torch.
IMPORT_CHECK = r"""
import importlib.abc, json, sys
package, platform_dir, repo, algo = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
BLOCKED = set(json.loads(sys.argv[5]))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"the exported package imported {name}")
        return None
def toolkit(path):  # the repository's own files, not its virtual environment's packages
    return path.startswith(repo) and not path.startswith(repo + "/.venv")
sys.meta_path.insert(0, Block())
sys.path = [package, platform_dir] + [p for p in sys.path if p and not toolkit(p)]
import torch
from importlib import import_module
from kaiwudrl.common.config.config_control import CONFIG
CONFIG.load({"app": "back_to_the_realm", "algo": algo})
config = import_module(algo + ".config")
definition = import_module(algo + ".feature.definition")
agent = import_module(algo + ".algorithm.agent").Agent(agent_type="learner", device=torch.device("cpu"))
agent.load_model(path=package + "/ckpt", id="latest")
import_module(algo + ".train_workflow")
inside = [m.__file__ for m in list(sys.modules.values())
          if getattr(m, "__file__", None) and toolkit(m.__file__)
          and not m.__file__.startswith(repo + "/kaiwu_platform")]
print(json.dumps({"sample_dim": config.Config.SAMPLE_DIM, "win": agent.settings.reward.win,
                  "hidden": agent.settings.model.hidden_size, "toolkit_modules": inside}))
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, Path]:
    """A checkpoint of a small agent, saved where a run keeps it, and its exported package."""
    root = tmp_path_factory.mktemp("export")
    config = root / "tiny.toml"
    config.write_text(TINY_CONFIG.format(repo=REPO_ROOT))
    settings = Settings.from_dict({k: v for k, v in toml.loads(config.read_text()).items()
                                   if k in ("model", "ppo", "reward", "curriculum")})
    agent = Agent(agent_type="learner", settings=settings, seed=0)
    ckpt = agent.save_model(root / "ckpt", 7)
    out = root / "package"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(out), "--config", str(config))
    assert result.returncode == 0, result.stderr
    return ckpt, out


def test_the_package_has_the_platforms_layout_and_the_runs_settings(exported):
    ckpt, out = exported
    for name in ("conf/configure_app.toml", "kaiwu.json", "ppo/config.py", "ppo/feature/definition.py",
                 "ppo/algorithm/agent.py", "ppo/model/model.py", "ppo/train_workflow.py", "ppo/settings.json",
                 "ckpt/model.ckpt-7.pkl", "ckpt/model.ckpt-7.train.pt"):
        assert (out / name).is_file(), name
    app = toml.loads((out / "conf" / "configure_app.toml").read_text())["app"]
    assert app["algo"] == "ppo" and app["eval_model_id"] == 7 and app["train_batch_size"] == 4
    assert json.loads((out / "kaiwu.json").read_text())["project_code"] == "back_to_the_realm"
    settings = json.loads((out / "ppo" / "settings.json").read_text())
    assert settings["reward"]["win"] == 12.5 and settings["model"]["hidden_size"] == 16
    model = ActorCritic(ModelConfig(channels=[4], kernel_sizes=[5], strides=[4], hidden_size=16), INPUT_SHAPE)
    model.load_state_dict(torch.load(out / "ckpt" / "model.ckpt-7.pkl"))  # the platform's way of loading


def import_alone(out: Path, algo: str, tmp_path: Path) -> dict:
    """IMPORT_CHECK's report on the package at `out`."""
    platform = tmp_path / "platform"  # the platform's modules alone, as the platform would provide them
    platform.mkdir()
    for name in ("kaiwu_agent", "kaiwudrl"):
        (platform / name).symlink_to(REPO_ROOT / "kaiwu_platform" / "base" / name)
    blocked = json.dumps(list(PACKAGE_FOLDERS) + ["realm", "workflow", "tools"])
    result = run_tool("-c", IMPORT_CHECK, str(out), str(platform), str(REPO_ROOT), algo, blocked)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_package_imports_nothing_of_the_toolkit(exported, tmp_path):
    _, out = exported
    report = import_alone(out, "ppo", tmp_path)
    assert report["toolkit_modules"] == []
    assert report["win"] == 12.5 and report["hidden"] == 16  # its settings.json, not the defaults


@pytest.mark.slow
def test_the_package_trains_through_train_sh_and_is_scored_by_evaluate(exported, tmp_path):
    _, out = exported
    result = subprocess.run(["./train.sh", "--package", str(out), "--set", f'app.run_dir="{tmp_path / "runs"}"',
                             "--set", 'app.run_name="r"', "--train-test"], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    trained = tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_ppo"
    assert (trained / "model.ckpt-1.pkl").is_file() and (trained / "model.ckpt-1.train.pt").is_file()

    scored = run_tool("tools/evaluate.py", "--package", str(out), "--episodes", "2", "--workers", "1", "--quiet",
                      "--usr-conf", '{"diy": {"treasure_num": 2, "max_step": 40}}', "--out", str(tmp_path / "eval"))
    assert scored.returncode == 0, scored.stderr
    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert any("model.ckpt-7.pkl" in json.dumps(entry) for entry in results.values()) or "model.ckpt-7" in scored.stdout
    trained_scored = run_tool("tools/evaluate.py", "--package", str(out), "--ckpt", str(trained / "model.ckpt-1.pkl"),
                              "--episodes", "1", "--workers", "1", "--quiet", "--no-planner",
                              "--usr-conf", '{"diy": {"treasure_num": 1, "max_step": 30}}',
                              "--out", str(tmp_path / "eval2"))
    assert trained_scored.returncode == 0, trained_scored.stderr


@pytest.mark.parametrize("case, message", [
    ("not-a-checkpoint", "not a checkpoint file"),
    ("out-not-empty", "exists and is not empty"),
    ("bad-algo", "--algo"),
])
def test_bad_input_exits_2_naming_it_and_writes_nothing(exported, tmp_path, case, message):
    ckpt, _ = exported
    out = tmp_path / "out"
    args = ["--ckpt", str(ckpt), "--out", str(out), "--config", str(ckpt.parent.parent / "tiny.toml")]
    if case == "not-a-checkpoint":
        args[1] = str(tmp_path / "model.ckpt-3.txt")
    elif case == "out-not-empty":
        out.mkdir()
        (out / "keep.txt").write_text("mine")
    else:
        args += ["--algo", "My-Algo"]
    result = run_tool("tools/export_kaiwu.py", *args)
    assert result.returncode == 2 and message in result.stderr
    if case == "out-not-empty":
        assert [p.name for p in out.iterdir()] == ["keep.txt"]
    else:
        assert not out.exists()


@pytest.mark.slow
def test_the_dqn_package_exports_too_and_passes_the_platforms_train_test(tmp_path):
    """A dqn_plus checkpoint (the run's app.algo says so) becomes a dqn_plus/ package with its
    own definition.py, importable alone, trained by ./train.sh --package --train-test."""
    from agent.back_to_the_realm.dqn_plus_agent import Agent as DQNAgent
    from agent.back_to_the_realm.dqn_plus_config import Settings as DQNSettings

    config = tmp_path / "tiny_dqn.toml"
    config.write_text(TINY_CONFIG.format(repo=REPO_ROOT).replace("[app]", '[app]\nalgo = "dqn_plus"\n'
                                                                  'algorithm_on_policy_or_off_policy = "off-policy"\n'
                                                                  'reverb_sampler = "reverb.selectors.Prioritized"')
                      + "[dqn]\nn_step = 2\n")
    data = toml.loads(config.read_text())
    agent = DQNAgent(agent_type="learner", settings=DQNSettings.from_dict(
        {k: v for k, v in data.items() if k in ("model", "dqn", "reward", "curriculum")}), seed=0)
    ckpt = agent.save_model(tmp_path / "ckpt", 4)
    out = tmp_path / "package"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(out), "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "dqn_plus" / "settings.json").read_text())["dqn"]["n_step"] == 2
    assert "def sample_process(list_game_data, n_step" in (out / "dqn_plus" / "feature" / "definition.py").read_text().replace(
        "list_game_data: Sequence[Frame], n_step: int", "list_game_data, n_step")
    report = import_alone(out, "dqn_plus", tmp_path)
    assert report["toolkit_modules"] == [] and report["hidden"] == 16 and report["win"] == 12.5
    app = toml.loads((out / "conf" / "configure_app.toml").read_text())["app"]
    assert app["algo"] == "dqn_plus" and app["reverb_sampler"] == "reverb.selectors.Prioritized"
    trained = subprocess.run(["./train.sh", "--package", str(out), "--set", f'app.run_dir="{tmp_path / "runs"}"',
                              "--set", 'app.run_name="r"', "--train-test"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=300)
    assert trained.returncode == 0, trained.stdout[-2000:] + trained.stderr[-3000:]
    assert (tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_dqn_plus" / "model.ckpt-1.pkl").is_file()


# --- the 18.0.2 (2025) layout ---------------------------------------------------------------------

#: The 18 export alone: the package, kaiwu18/ (the 2025 platform's root modules) and the platform's
#: kaiwu_agent / kaiwudrl, nothing else of the repository. It imports every part, answers a 2025
#: observation built from the platform's protobuf messages the way the platform's eval workflow
#: asks; then, with the simulator let in, its own train workflow plays 2025 episodes.
IMPORT_CHECK_18 = r"""
import importlib.abc, json, sys
package, kaiwu18, platform_dir, repo, algo = sys.argv[1:6]
BLOCKED = set(json.loads(sys.argv[6]))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"the exported package imported {name}")
        return None
def toolkit(path):
    return path.startswith(repo) and not path.startswith(repo + "/.venv")
sys.meta_path.insert(0, Block())
sys.path = [package, kaiwu18, platform_dir] + [p for p in sys.path if p and not toolkit(p)]
import numpy as np, torch
from importlib import import_module
from kaiwudrl.common.config.config_control import CONFIG
CONFIG.load({"app": "back_to_the_realm", "algo": algo})
folder = "agent_" + algo
conf = import_module(folder + ".conf.conf")
definition = import_module(folder + ".feature.definition")
agent = import_module(folder + ".agent").Agent(agent_type="learner", device=torch.device("cpu"))
agent.load_model(path=package + "/ckpt", id="latest")
workflow = import_module(folder + ".workflow.train_workflow").workflow
protocol = import_module(folder + ".workflow.protocol")
Preprocessor = import_module(folder + ".feature.preprocessor").Preprocessor

from arena_proto.back_to_the_realm import custom_pb2 as pb
obs = pb.Observation(legal_act=[1, 1])
hero = obs.frame_state.heroes.add(hero_id=1, speed_up=0)
hero.pos.x, hero.pos.z = 5500, 1500
obs.game_info.pos.x, obs.game_info.pos.z = 5500, 1500
obs.game_info.start_pos.x, obs.game_info.start_pos.z = 5500, 1500
obs.game_info.end_pos.x, obs.game_info.end_pos.z = 8500, 1500
chest = obs.frame_state.organs.add(sub_type=1, config_id=7, status=1)
chest.pos.x, chest.pos.z = 5500, 4500
for _ in range(51):
    obs.map_info.add(values=[1] * 51)
obs_data, remain_info = agent.observation_process(obs, Preprocessor(), pb.State())
act_data = agent.exploit(list_obs_data=[obs_data])
action = agent.action_process(act_data[0])
feature = remain_info[0].feature
inside = [m.__file__ for m in list(sys.modules.values())
          if getattr(m, "__file__", None) and toolkit(m.__file__)
          and not m.__file__.startswith(repo + "/kaiwu_platform")]

BLOCKED.discard("realm")  # the simulator plays the env the platform would
sys.path.insert(3, repo)
import realm
assert realm.__file__.startswith(repo), realm.__file__
class Stop(BaseException):
    pass
class Episodes:
    def __init__(self, env):
        self.env, self.resets, self.steps = env, 0, 0
    def reset(self, usr_conf=None):
        self.resets += 1
        if self.resets > 2:
            raise Stop()
        self.usr_conf = usr_conf
        return self.env.reset(usr_conf=usr_conf)
    def step(self, act):
        self.steps += 1
        return self.env.step(act)
rows, learn = [], agent.learn
agent.learn = lambda samples: (rows.extend(definition.SampleData2NumpyData(s).shape[0] for s in samples), learn(samples))[1]
env = Episodes(realm.make_env(map_seed=0, seed=1, protocol="18"))
try:
    workflow([env], [agent], None, None)
except Stop:
    pass
print(json.dumps({"sample_dim": conf.Config.SAMPLE_DIM, "kaiwu_version": protocol.KAIWU_VERSION,
                  "action": action, "chest_cells": feature.treasure_pos[6].grid_distance * 256,
                  "end_direction": feature.end_pos.direction, "toolkit_modules": inside,
                  "steps": env.steps, "usr_conf": env.usr_conf, "rows": rows, "win": agent.settings.reward.win}))
"""


@pytest.fixture(scope="module")
def exported18(exported, tmp_path_factory) -> Path:
    """The same checkpoint exported for the 18.0.2 platform."""
    ckpt, _ = exported
    out = tmp_path_factory.mktemp("export18") / "package"
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(out), "--config",
                      str(ckpt.parent.parent / "tiny.toml"), "--kaiwu-version", "18")
    assert result.returncode == 0, result.stderr
    return out


def test_the_18_package_has_the_2025_layout(exported18):
    out = exported18
    for name in ("__init__.py", "agent.py", "algorithm/__init__.py", "algorithm/ppo.py", "conf/__init__.py",
                 "conf/conf.py", "conf/settings.json", "conf/train_env_conf.toml", "feature/__init__.py",
                 "feature/definition.py", "feature/preprocessor.py", "feature/back_to_the_realm/observation18.py", "model/__init__.py",
                 "model/model.py", "workflow/__init__.py", "workflow/train_workflow.py", "workflow/runner.py"):
        assert (out / "agent_ppo" / name).is_file(), name
    for name in ("conf/__init__.py", "conf/configure_app.toml", "conf/algo_conf_back_to_the_realm.toml",
                 "conf/app_conf_back_to_the_realm.toml", "kaiwu.json", "ckpt/model.ckpt-7.pkl"):
        assert (out / name).is_file(), name
    assert not (out / "ppo").exists()
    assert json.loads((out / "kaiwu.json").read_text()) == {"version": "18.0.2", "project_code": "back_to_the_realm"}
    registered = toml.loads((out / "conf" / "algo_conf_back_to_the_realm.toml").read_text())["ppo"]
    assert registered["aisrv_model"] == registered["learner_model"] == "agent_ppo.agent.Agent"
    assert registered["train_workflow"] == "agent_ppo.workflow.train_workflow.workflow"
    app = toml.loads((out / "conf" / "configure_app.toml").read_text())["app"]
    assert app["algo"] == "ppo" and app["copy_dir"] == "conf,agent_ppo" and app["train_batch_size"] == 4
    assert app["algo_conf"] == "conf/algo_conf_back_to_the_realm.toml"
    settings = json.loads((out / "agent_ppo" / "conf" / "settings.json").read_text())
    assert settings["reward"]["win"] == 12.5


def test_the_18_packages_train_env_conf_is_valid_for_the_simulator_and_the_platforms_check(exported18):
    import importlib.util
    import logging

    from realm.back_to_the_realm.usr_conf import ENV_CONF_REQUIRED, validate_env_conf

    file = exported18 / "agent_ppo" / "conf" / "train_env_conf.toml"
    env_conf = toml.loads(file.read_text())["env_conf"]
    assert set(env_conf) == set(ENV_CONF_REQUIRED) and type(env_conf["treasure_random"]) is bool
    assert env_conf["max_step"] == 60 and env_conf["treasure_count"] == 1  # the run's [curriculum]
    validate_env_conf({"env_conf": env_conf})
    spec = importlib.util.spec_from_file_location("train_env_conf_validate",
                                                  REPO_ROOT / "kaiwu_platform" / "v18" / "tools" / "train_env_conf_validate.py")
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    logger = logging.getLogger("test")
    usr_conf = checker.read_usr_conf(str(file), logger)
    assert usr_conf is not None and checker.check_usr_conf(usr_conf, logger)


def test_the_18_package_imports_only_the_platform_and_plays_the_2025_protocol(exported18, tmp_path):
    platform = tmp_path / "platform"
    platform.mkdir()
    for name in ("kaiwu_agent", "kaiwudrl"):
        (platform / name).symlink_to(REPO_ROOT / "kaiwu_platform" / "base" / name)
    blocked = json.dumps(list(PACKAGE_FOLDERS) + ["realm", "workflow"])
    result = run_tool("-c", IMPORT_CHECK_18, str(exported18), str(REPO_ROOT / "kaiwu_platform" / "v18"), str(platform),
                      str(REPO_ROOT), "ppo", blocked)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["toolkit_modules"] == [] and report["win"] == 12.5
    assert report["kaiwu_version"] == "18" and 0 <= report["action"] < 16
    assert report["chest_cells"] == 6 and report["end_direction"] == 1  # from the protobuf observation
    from feature.back_to_the_realm.ppo_definition import SAMPLE_DIM

    assert report["sample_dim"] == SAMPLE_DIM and report["rows"] and set(report["rows"]) == {SAMPLE_DIM}
    assert report["steps"] == 2 * 60  # two whole episodes of the settings' max_step (no end within reach)
    assert set(report["usr_conf"]) == {"env_conf"}  # the 2025 shape, from the curriculum


def test_an_unknown_kaiwu_version_is_refused(exported, tmp_path):
    ckpt, _ = exported
    result = run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out", str(tmp_path / "o"), "--kaiwu-version", "19")
    assert result.returncode == 2 and "--kaiwu-version" in result.stderr


@pytest.mark.slow
def test_the_18_package_trains_through_train_sh_and_is_scored_by_evaluate(exported18, tmp_path):
    result = subprocess.run(["./train.sh", "--package", str(exported18), "--set", f'app.run_dir="{tmp_path / "runs"}"',
                             "--set", 'app.run_name="r"', "--train-test"], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert (tmp_path / "runs" / "r" / "ckpt" / "back_to_the_realm_ppo" / "model.ckpt-1.pkl").is_file()
    scored = run_tool("tools/evaluate.py", "--package", str(exported18), "--episodes", "1", "--workers", "1", "--quiet",
                      "--no-planner", "--usr-conf", '{"diy": {"treasure_num": 2, "max_step": 40}}',
                      "--out", str(tmp_path / "eval"))
    assert scored.returncode == 0, scored.stderr
    assert (tmp_path / "eval" / "results.json").is_file()


def test_each_export_carries_only_its_own_definition(monkeypatch):
    """The DQN package must not carry the PPO definition: importing it would register PPO's
    sample_process and row converters (wider rows) in the platform's protocol registry."""
    from export.code import file_map
    from workflow.platforms.project import PROJECT_ALGORITHMS

    dqn = file_map(PROJECT_ALGORITHMS[("back_to_the_realm", "dqn_plus")])
    ppo = file_map(PROJECT_ALGORITHMS[("back_to_the_realm", "ppo")])
    assert "feature/back_to_the_realm/dqn_plus_definition.py" in dqn and "feature/back_to_the_realm/ppo_definition.py" not in dqn
    assert "agent/dqn_options.py" in dqn and "agent/ppo_options.py" not in dqn
    assert "feature/back_to_the_realm/ppo_definition.py" in ppo and "agent/ppo_options.py" in ppo


def test_an_export_carries_only_its_own_games_code(monkeypatch):
    """A package is one game's: the 2024 agents carry nothing of back_to_the_realm_v2 or
    gorge_chase, and those two nothing of each other or of the 2024 game; the mechanisms
    (segments, rows, tables, terms), the episode loop and the PPO agent are every game's (the
    terms both realm games score, feature.back_to_the_realm.realm_terms, are the v2 package's too)."""
    from export.code import file_map
    from workflow.platforms.project import PROJECT_ALGORITHMS

    def carried(game: str, algo: str) -> set[str]:
        return set(file_map(PROJECT_ALGORITHMS[(game, algo)]))

    v2_files = {f for f in carried("back_to_the_realm_v2", "ppo") if "_v2" in f}
    gorge_files = {f for f in carried("gorge_chase", "ppo") if "gorge" in f}
    assert v2_files and gorge_files
    for algo in ("ppo", "dqn_plus"):
        assert not carried("back_to_the_realm", algo) & (v2_files | gorge_files), algo
    assert not carried("back_to_the_realm_v2", "ppo") & gorge_files
    assert not carried("gorge_chase", "ppo") & v2_files
    realm_own = {"feature/back_to_the_realm/ppo_definition.py", "feature/back_to_the_realm/layout.py", "feature/back_to_the_realm/observation.py", "feature/back_to_the_realm/reward.py",
                 "feature/back_to_the_realm/unpack.py", "feature/back_to_the_realm/observation18.py", "feature/back_to_the_realm/curriculum.py", "feature/back_to_the_realm/constants.py",
                 "feature/back_to_the_realm/explored_map.py", "agent/back_to_the_realm/ppo_agent.py", "agent/back_to_the_realm/ppo_config.py", "agent/back_to_the_realm/realm_settings.py",
                 "episodes/back_to_the_realm/episodes.py"}
    assert realm_own <= carried("back_to_the_realm", "ppo")
    for game in ("back_to_the_realm_v2", "gorge_chase"):
        assert not carried(game, "ppo") & realm_own, game
