"""The 2026 game `gorge_chase` (峡谷追猎), code package 15.0.1.

Package: `agent_<algo>/agent.py`, `agent_<algo>/conf/conf.py`, `agent_<algo>/feature/definition.py`,
`agent_<algo>/workflow/train_workflow.py`, `agent_<algo>/conf/train_env_conf.toml`, the algorithm
registered in `conf/algo_conf_gorge_chase.toml` (keys `aisrv_agent`, `train_workflow`), the
algorithm to train in `conf/app_conf_gorge_chase.toml`; kaiwu.json's `project_code` is
"gorge_chase". The platform's root modules these import (`common_python.utils.*`, `tools.*`)
come from `kaiwu_platform/v15/`; `kaiwudrl.interface.agent.BaseAgent` (no decorators: the class routes
the five methods) and the other `kaiwudrl` modules from the project's `kaiwu_platform/base/kaiwudrl/`.

Env (realm/gorge_chase): `env_obs = env.reset(usr_conf)`, `env_reward, env_obs = env.step(act)`,
the end flags inside env_obs; a bad usr_conf or a step after the end answered with the platform's
error env_obs (`[env] gorge_errors`, realm/gorge_chase/errors.py). The workflow hands samples over with `agent.send_sample_data(list)`;
the SampleData class declares its fields' widths (`create_cls("SampleData", obs=40, ...)`) and the
framework packs them: the rows are the fields in declaration order, and the learner rebuilds each
field as a float32 torch tensor on its device (the official ppo stacks them with torch.stack).
`predict` answers the list of ActData; an evaluation hands `exploit` the raw env_obs and plays
the int it returns.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from workflow.platforms.base import REPO_ROOT, ConfigError, read_env_conf_file
from workflow.platforms.agent_folders import AGENT_FOLDER_EXPORT, AgentFolderVersion

PROJECT_CODE = "gorge_chase"
ALGO_CONF = Path("conf") / "algo_conf_gorge_chase.toml"
APP_CONF = Path("conf") / "app_conf_gorge_chase.toml"
#: The platform's root-level modules a 15.0.1 package imports.
PLATFORM_ROOT = REPO_ROOT / "kaiwu_platform" / "v15"
#: The algo_conf keys naming the agent class and the train workflow.
AGENT_KEY, WORKFLOW_KEY = "aisrv_agent", "train_workflow"


class SampleCodec:
    """SampleData <-> one float32 row, by the widths its create_cls declared (FIELD_DIMS): what
    the platform's framework does for a 15.0.1 package, which defines no converters."""

    def __init__(self, sample_class: type):
        self.sample_class = sample_class
        self.dims = dict(sample_class.FIELD_DIMS)
        self.width = sum(self.dims.values())

    def to_row(self, sample) -> np.ndarray:
        parts = []
        for name, dim in self.dims.items():
            value = np.asarray(_numpy(getattr(sample, name, None)), dtype=np.float32).reshape(-1)
            if value.size != dim:
                raise ValueError(f"SampleData.{name} holds {value.size} value(s); its create_cls declares {dim}")
            parts.append(value)
        return np.concatenate(parts)

    def from_row(self, row):
        fields, at = {}, 0
        for name, dim in self.dims.items():
            fields[name] = row[at:at + dim]
            at += dim
        return self.sample_class(**fields)


def _own_row_width(dims: dict | None, config_class):
    """The width of the rows a package's own SampleData2NumpyData makes: Config.SAMPLE_DIM, else
    the sum of SampleData's declared widths; ValueError naming both when they disagree."""
    stated = getattr(config_class, "SAMPLE_DIM", None)
    if not dims:
        if stated is None:
            raise ValueError("the width of SampleData2NumpyData's rows is stated nowhere: declare SampleData with an "
                             "int width per field (create_cls(\"SampleData\", npdata=N)), or set Config.SAMPLE_DIM")
        return stated  # no declared widths: Config.SAMPLE_DIM alone (checked by the host)
    declared = sum(dims.values())
    if stated is None:
        return declared
    if stated != declared:
        widths = ", ".join(f"{name}={dim}" for name, dim in dims.items())
        where = getattr(config_class, "__module__", "conf.conf").replace(".", "/") + ".py"
        raise ValueError(f"SampleData declares rows of {declared} values ({widths}), but {where} sets "
                         f"Config.SAMPLE_DIM = {stated!r}: the two must agree (or leave SAMPLE_DIM out: "
                         "the width is then SampleData's)")
    return stated


def _numpy(value):
    """A field's value as numpy can read it (a torch tensor is moved to the CPU first)."""
    if value is None:
        return np.array([], dtype=np.float32)
    detach = getattr(value, "detach", None)
    return detach().cpu().numpy() if callable(detach) else value


class Platform15(AgentFolderVersion):
    """gorge_chase, a 15.0.1 package."""

    name = "15"
    title = "15.0.1 (gorge_chase, 2026)"
    env_protocol = "gorge"
    hosts_project_agents = True  # games.gorge_chase's project_agents
    flash_rule = "nearest"  # unused by the gorge env: its flash lands on the farthest free cell of its range
    platform_root = PLATFORM_ROOT
    runs_in_package_dir = True  # its workflow opens agent_<algo>/conf/train_env_conf.toml
    game = PROJECT_CODE
    algo_conf, app_conf = ALGO_CONF, APP_CONF
    agent_key, workflow_key = AGENT_KEY, WORKFLOW_KEY
    eval_preset = "gorge-open"  # the official open maps 1-10: needs [env] maps_dir (their files)
    export = dataclasses.replace(AGENT_FOLDER_EXPORT, kaiwu_json_version="15.0.1-comp-normal-lite.26comp",
                                 app_keys={"app": PROJECT_CODE})
    #: kaiwu.json majors of this game's packages
    majors = (15, 10**6)

    # --- recognising a package ------------------------------------------------------------------

    def claims_manifest(self, major: int, project_code: str) -> bool:
        low, high = self.majors
        return project_code == PROJECT_CODE and low <= major < high

    def check_env_conf_file(self, path: Path, env_config=None) -> None:
        """The file as the package's read_usr_conf hands it to env.reset passes the simulator's
        checks (the official keys, types and ranges; with the run's [env], its map ids). On the
        platform a bad value only shows as a failed task."""
        from realm.gorge_chase.usr_conf import GorgeUsrConfError, validate_usr_conf

        usr_conf = read_env_conf_file(path, "(map, map_random, treasure_count, buff_count, buff_cooldown, "
                                            "talent_cooldown, monster_interval, monster_speedup, max_step)")
        try:
            validate_usr_conf(usr_conf)
            if env_config is not None:
                from realm import make_env
                from realm.episode import checked_reset

                checked_reset(make_env(**env_config.make_kwargs(self), seed=0), usr_conf)
        except GorgeUsrConfError as e:
            raise ConfigError(f"{path}: {e}") from None

    def sample_rows(self, protocols: dict, config_class) -> tuple[dict, int]:
        """SampleData2NumpyData / NumpyData2SampleData made from SampleData's declared widths,
        and their sum as the row width. A package that registers its own converters keeps them;
        its rows are as wide as Config.SAMPLE_DIM says, else as SampleData's declared widths sum
        to (what the platform's framework reads); both given, they must agree."""
        sample_class = protocols.get("SampleData")
        dims = getattr(sample_class, "FIELD_DIMS", None)
        if protocols.get("SampleData2NumpyData") and protocols.get("NumpyData2SampleData"):
            return protocols, _own_row_width(dims, config_class)
        if not dims:
            raise ValueError("SampleData must be declared with create_cls and an int width per field "
                             "(e.g. create_cls(\"SampleData\", obs=40, act=1, ...)): the 15.0.1 framework packs it")
        codec = SampleCodec(sample_class)
        return {**protocols, "SampleData2NumpyData": codec.to_row, "NumpyData2SampleData": codec.from_row}, codec.width

    # --- what the env and the platform's servers speak -------------------------------------------

    def env_kwargs(self, env_config) -> dict:
        """The gorge protocol (the maps and the game's rules are [env]'s: workflow.config.EnvConfig)."""
        return {"protocol": self.env_protocol}

    def predict_answer(self, result, model_version: int):
        return result  # act_data = agent.predict(...)[0]

    def learn_rows(self, rows, device):
        import torch

        return torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32)).to(device)

    # --- evaluation -------------------------------------------------------------------------------

    def eval_protocol(self, agent, package):
        """(what exploit is handed, what its answer plays): the raw env_obs and the int."""
        return raw_env_obs, int


def raw_env_obs(env_obs):
    """What an evaluation hands a 15.0.1 package's exploit: the env_obs as the env returned it."""
    return env_obs


PLATFORM = Platform15()
