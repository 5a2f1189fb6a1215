"""The 2025 competition's game, `back_to_the_realm_v2` (code packages 24.x and 28.x).

Package: `agent_<algo>/agent.py`, `agent_<algo>/conf/conf.py`, `agent_<algo>/feature/definition.py`,
`agent_<algo>/workflow/train_workflow.py`, `agent_<algo>/conf/train_env_conf.toml`, the algorithm
registered in `conf/algo_conf_back_to_the_realm_v2.toml`; kaiwu.json's `project_code` is
"back_to_the_realm_v2". The platform's root modules these import (`arena_proto.back_to_the_realm_v2`,
`tools.train_env_conf_validate`, `tools.metrics_utils`) come from `kaiwu_platform/v2/`.
Env: the v2 simulator (realm/back_to_the_realm_v2, docs/games/back_to_the_realm_v2.md): `obs, extra_info = env.reset(usr_conf=...)`
with the train_env_conf.toml tree as parsed, `step_no, obs, terminated, truncated, extra_info =
env.step(act)`. The learner hands NumpyData2SampleData float32 torch tensors on its device (the
official dqn's learn stacks `frame._obs_legal` with torch.stack). An evaluation hands `exploit`
`{"obs": obs, "extra_info": extra_info}` and plays the int it returns.

The two families differ in one answer: on a 24.x aisrv `predict` returns
`(list of ActData, model_version)` (`act_data, model_version = agent.predict(...)`), on a 28.x
aisrv the list alone (`act_data = agent.predict(...)`; `act_data[0]`). So each family is a
version of its own: "v2-24" and "v2-28". Without kaiwu.json the layout tells v2 from the
others (`conf/algo_conf_back_to_the_realm_v2.toml`), and the algorithms it registers tell the
family: 24.x registers ppo and target_dqn beside dqn and diy, 28.1.1 only dqn and diy; a package
that registers neither is taken as the newest (28), and `app.kaiwu_version` overrides.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from workflow.platforms.base import REPO_ROOT, ConfigError, ExportLayout, read_env_conf_file
from workflow.platforms.agent_folders import AGENT_FOLDER_EXPORT, AgentFolderVersion

PROJECT_CODE = "back_to_the_realm_v2"
ALGO_CONF = Path("conf") / "algo_conf_back_to_the_realm_v2.toml"
APP_CONF = Path("conf") / "app_conf_back_to_the_realm_v2.toml"
#: The platform's root-level modules a v2 package imports.
PLATFORM_ROOT = REPO_ROOT / "kaiwu_platform" / "v2"
#: Algorithms only a 24.x package registers (28.1.1 ships dqn and diy).
ONLY_24 = ("ppo", "target_dqn")
#: [app] keys an export adds to configure_app.toml (the official packages', platform bookkeeping
#: that the host accepts and ignores)
APP_KEYS = {
    "app": PROJECT_CODE,
    "algo_conf": "conf/algo_conf_back_to_the_realm_v2.toml",
    "selfplay_app_conf": "conf/app_conf_back_to_the_realm_v2.toml",
    "noselfplay_app_conf": "conf/app_conf_back_to_the_realm_v2.toml",
    "self_play": False,
    "set_name": "back_to_the_realm_v2_set1000",
    "self_play_set_name": "back_to_the_realm_v2_set1000",
    "rainbow_env_name": "back_to_the_realm_v2_dev",
    "framework_integration_patterns": "standard",
    "aisrv_framework": "kaiwu_env",
}


def exploit_observation(obs, extra_info=None) -> dict:
    """What an evaluation hands a v2 package's `exploit`: the official agents read
    `observation["obs"]` and `observation["extra_info"]`."""
    return {"obs": obs, "extra_info": extra_info}


def exploit_action(act) -> int:
    """The action a v2 package's `exploit` answered (an int 0..15, act = move_dir + 8 * use_talent)."""
    return int(act)


def registered_algorithms(root: Path) -> list[str]:
    """The algorithm tables of the package's conf/algo_conf_back_to_the_realm_v2.toml ([] when unreadable)."""
    import toml

    try:
        table = toml.loads((Path(root) / ALGO_CONF).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, toml.TomlDecodeError):
        return []
    return sorted(name for name, value in table.items() if isinstance(value, dict))


class PlatformV2(AgentFolderVersion):
    """back_to_the_realm_v2, a 24.x package (predict answers `(actions, model_version)`)."""

    name = "v2-24"
    title = "24.x (back_to_the_realm_v2, 2025 competition)"
    env_protocol = "v2"
    hosts_project_agents = False
    flash_rule = "nearest"  # a talent onto a blocked cell lands on the nearest free cell back along its ray
    platform_root = PLATFORM_ROOT
    runs_in_package_dir = True  # its workflow opens agent_<algo>/conf/train_env_conf.toml
    game = PROJECT_CODE
    algo_conf = ALGO_CONF
    app_conf = APP_CONF
    #: kaiwu.json majors of this family: [low, high)
    majors = (24, 28)
    kaiwu_json_version = "24.0.1"
    #: the evaluation preset of the family's official train_env_conf.toml (realm/back_to_the_realm_v2/presets.py)
    eval_preset = "v2-24-random"

    @property
    def export(self) -> ExportLayout:
        return dataclasses.replace(AGENT_FOLDER_EXPORT, kaiwu_json_version=self.kaiwu_json_version, app_keys=APP_KEYS)

    # --- recognising a package ------------------------------------------------------------------

    def claims_manifest(self, major: int, project_code: str) -> bool:
        low, high = self.majors
        return project_code == PROJECT_CODE and low <= major < high

    def claims_layout(self, root: Path) -> bool:
        return super().claims_layout(root) and self._family_of_layout(root)

    def _family_of_layout(self, root: Path) -> bool:
        return any(algo in ONLY_24 for algo in registered_algorithms(root))

    def check_env_conf_file(self, path: Path, env_config=None) -> None:
        """The file as the package's workflow hands it to env.reset passes the simulator's checks:
        the official keys and ranges, no repeats, no unknown key; with the run's [env], also on
        its map (a fixed point on a wall or cut off, an obstacle the map lacks). On the platform a
        bad one only shows as a failed reset."""
        from realm.back_to_the_realm_v2.usr_conf import UsrConfV2Error, validate_usr_conf

        usr_conf = read_env_conf_file(path, "with map_name and [env_conf.<map_name>]")
        try:
            validate_usr_conf(usr_conf)
        except UsrConfV2Error as e:
            raise ConfigError(f"{path}: {e}") from None
        if env_config is None:
            return
        from realm import make_env

        try:  # the run's [env] first: a bad map file is its fault, not the package's
            env = make_env(**env_config.make_kwargs(self), seed=0)
        except (ValueError, OSError, TypeError) as e:
            raise ConfigError(f"[env]: the simulator rejects it: {e}") from None
        try:  # a map_name with no map of its own here: the env says which map it plays (on stderr)
            env.reset(usr_conf=usr_conf)
        except UsrConfV2Error as e:
            raise ConfigError(f"{path}: {e}") from None

    # --- what the env and the platform's servers speak -------------------------------------------

    def env_kwargs(self, env_config) -> dict:
        """The v2 protocol (the maps and the game's rules are [env]'s: workflow.config.EnvConfig)."""
        return {"protocol": self.env_protocol}

    def predict_answer(self, result, model_version: int):
        return result, model_version  # 24.x: act_data, model_version = agent.predict(...)

    def learn_rows(self, rows, device):
        import torch

        return torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32)).to(device)

    # --- evaluation -------------------------------------------------------------------------------

    def eval_protocol(self, agent, package):
        """(what exploit is handed, what its answer plays): `{"obs", "extra_info"}` and the int."""
        return exploit_observation, exploit_action


class PlatformV2_28(PlatformV2):
    """back_to_the_realm_v2, a 28.x package (predict answers the list of ActData alone)."""

    name = "v2-28"
    title = "28.x (back_to_the_realm_v2, 2025 competition)"
    #: the project's v2 agents (games.back_to_the_realm_v2's project_agents) train in this version's protocol
    hosts_project_agents = True
    majors = (28, 10**6)
    kaiwu_json_version = "28.1.1"
    eval_preset = "v2-28-fixed"

    def _family_of_layout(self, root: Path) -> bool:
        return not super()._family_of_layout(root)

    def predict_answer(self, result, model_version: int):
        return result  # 28.x: act_data = agent.predict(...)


PLATFORM = PlatformV2()
PLATFORM_28 = PlatformV2_28()
