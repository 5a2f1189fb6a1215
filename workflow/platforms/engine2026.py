"""The 2026 season's engine, shared by its games' platform versions (gorge_chase 15.0.1,
workflow/platforms/v15.py; robot_vacuum 13.0.1, workflow/platforms/v13.py).

Package: `agent_<algo>/agent.py`, `agent_<algo>/conf/conf.py`, `agent_<algo>/feature/definition.py`,
`agent_<algo>/workflow/train_workflow.py`, `agent_<algo>/conf/train_env_conf.toml`, the algorithm
registered in `conf/algo_conf_<game>.toml` (keys `aisrv_agent`, `train_workflow`), the algorithm
to train in `conf/app_conf_<game>.toml`; kaiwu.json's `project_code` is the game. The platform's
root modules these import (`common_python.utils.*`, `tools.*`) come from the version's
`kaiwu_platform/v<N>/`; `kaiwudrl.interface.agent.BaseAgent` (no decorators: the class routes the
five methods) and the other `kaiwudrl` modules from the project's `kaiwu_platform/base/kaiwudrl/`.

Env: `env_obs = env.reset(usr_conf)`, `env_reward, env_obs = env.step(act)`, the end flags inside
env_obs; a bad usr_conf or a step after the end answered with the platform's error env_obs. The
workflow hands samples over with `agent.send_sample_data(list)`; the SampleData class declares its
fields' widths (`create_cls("SampleData", obs=40, ...)`) and the framework packs them: the rows are
the fields in declaration order, and the learner rebuilds each field as a float32 torch tensor on
its device (the official ppo stacks them with torch.stack). `predict` answers the list of ActData;
an evaluation hands `exploit` the raw env_obs and plays the int it returns.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from workflow.platforms.agent_folders import AgentFolderVersion
from workflow.platforms.base import ConfigError, read_env_conf_file

#: The algo_conf keys naming the agent class and the train workflow.
AGENT_KEY, WORKFLOW_KEY = "aisrv_agent", "train_workflow"


class SampleCodec:
    """SampleData <-> one float32 row, by the widths its create_cls declared (FIELD_DIMS): what
    the platform's framework does for a package of this engine, which defines no converters."""

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


class EngineVersion(AgentFolderVersion):
    """A version of the 2026 engine: a subclass sets its game (`game`, `algo_conf`, `app_conf`,
    `platform_root`, `majors`, `export`, `eval_preset`) and how its settings file is checked
    (`usr_conf_keys`, `validate_usr_conf`)."""

    runs_in_package_dir = True  # its workflow opens agent_<algo>/conf/train_env_conf.toml
    agent_key, workflow_key = AGENT_KEY, WORKFLOW_KEY
    flash_rule = "nearest"  # unused by these envs: the 2024 game's rule, asked of every version
    #: kaiwu.json majors of this game's packages
    majors: tuple[int, int] = (0, 0)
    #: the settings file's keys, for messages
    usr_conf_keys = ""

    def validate_usr_conf(self, usr_conf: dict) -> None:
        """Raise the game's usr_conf error (a ValueError naming the key) when `usr_conf` is bad."""
        raise NotImplementedError

    # --- recognising a package ------------------------------------------------------------------

    def claims_manifest(self, major: int, project_code: str) -> bool:
        low, high = self.majors
        return project_code == self.game and low <= major < high

    def check_env_conf_file(self, path: Path, env_config=None) -> None:
        """The file as the package's read_usr_conf hands it to env.reset passes the simulator's
        checks (the official keys, types and ranges; with the run's [env], its map ids). On the
        platform a bad value only shows as a failed task."""
        usr_conf = read_env_conf_file(path, f"({self.usr_conf_keys})")
        try:
            self.validate_usr_conf(usr_conf)
            if env_config is not None:
                from realm import make_env
                from realm.episode import checked_reset

                checked_reset(make_env(**env_config.make_kwargs(self), seed=0), usr_conf)
        except ValueError as e:
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
                             "(e.g. create_cls(\"SampleData\", obs=40, act=1, ...)): the framework packs it")
        codec = SampleCodec(sample_class)
        return {**protocols, "SampleData2NumpyData": codec.to_row, "NumpyData2SampleData": codec.from_row}, codec.width

    # --- what the env and the platform's servers speak -------------------------------------------

    def env_kwargs(self, env_config) -> dict:
        """The version's protocol (the maps and the game's rules are [env]'s: workflow.config.EnvConfig)."""
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
    """What an evaluation hands the package's exploit: the env_obs as the env returned it."""
    return env_obs

