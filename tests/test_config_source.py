"""One reader of config files: ./train.sh's (includes merged, --set applied) is what the evaluation,
export and bench tools read too (workflow.config.config_tree, ConfigSource)."""
from __future__ import annotations

import pickle
import sys

import pytest

from tests.conftest import REPO_ROOT
from workflow.config import ConfigSource, config_tree, load_config
from workflow.schema import ConfigError

sys.path.insert(0, str(REPO_ROOT / "tools"))


def _including(tmp_path, body: str = "") -> ConfigSource:
    file = tmp_path / "small.toml"
    file.write_text(f'include = ["{REPO_ROOT / "conf" / "gorge_chase.toml"}"]\n{body}')
    return ConfigSource.of(file, ["ppo.learning_rate=1e-4"])


def test_a_config_source_reads_includes_and_overrides_as_load_config_does(tmp_path):
    source = _including(tmp_path, "[env]\nmap_seed = 7\n")
    tree = source.tree()
    assert tree["app"]["app"] == "gorge_chase" and tree["env"]["map_seed"] == 7
    assert tree["ppo"]["learning_rate"] == 1e-4
    cfg = source.load()
    assert cfg.to_dict()["ppo"]["learning_rate"] == 1e-4
    assert cfg.to_dict() == load_config(source.path, list(source.overrides)).to_dict()
    assert pickle.loads(pickle.dumps(source)) == source  # it crosses to the evaluation's worker processes


def test_a_config_source_names_a_bad_override_or_file(tmp_path):
    with pytest.raises(ConfigError, match="unknown section 'ppp'"):
        config_tree(_including(tmp_path).path, ["ppp.learning_rate=1"])
    with pytest.raises(ConfigError, match="config file not found"):
        ConfigSource.of(tmp_path / "missing.toml").tree()


def test_the_tools_read_the_included_game(tmp_path):
    """An evaluation's game choice and every tool's [env] come from the merged tree (before: the raw
    file, whose include was ignored, so the default game's presets were offered)."""
    from evaluation.inputs import config_source, env_from_config, evaluated_platform

    source = _including(tmp_path, "[env]\nmap_seed = 3\n")
    assert evaluated_platform("planner", None, None, None, config_source(source.path)).name == "15"
    assert config_source(source.path, ["env.map_seed=5"]).tree()["env"]["map_seed"] == 5
    small = tmp_path / "seed.toml"
    small.write_text(f'include = ["{REPO_ROOT / "conf" / "configure_app.toml"}"]\n[env]\nmap_seed = 11\n')
    assert env_from_config(small)["map_seed"] == 11


def test_a_tool_names_a_bad_set(tmp_path):
    import evaluate

    assert evaluate.main(["--agent", "planner", "--config", str(_including(tmp_path).path), "--set", "env.no_such_key=1",
                          "--episodes", "1", "--quiet"]) == 2
