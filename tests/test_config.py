"""The validated config: unknown keys, wrong types, --set, includes, the effective config file."""
from __future__ import annotations

import pytest

from workflow.config import DEFAULT_CONFIG, REPO_ROOT, AppConfig, ConfigError, load_config, save_effective_config

SMOKE = REPO_ROOT / "conf" / "smoke.toml"


def write(path, text):
    path.write_text(text)
    return path


def test_shipped_configs_load():
    cfg = load_config()
    assert cfg.app.app == "back_to_the_realm" and cfg.app.algo == "ppo"
    assert cfg.env.map_file is None  # the embedded generated map out of the box
    smoke = load_config(SMOKE)
    assert smoke.app.envs_per_aisrv == 2 and smoke.ppo.num_steps == 32
    assert smoke.ppo.gamma == cfg.ppo.gamma  # from the included main file


def test_unknown_key_in_file_names_it_and_suggests(tmp_path):
    path = write(tmp_path / "c.toml", '[app]\ntrain_bach_size = 8\n')
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert "app.train_bach_size" in str(e.value) and "did you mean 'train_batch_size'" in str(e.value)


def test_unknown_section_suggests(tmp_path):
    path = write(tmp_path / "c.toml", '[rewards]\nwin = 1.0\n')
    with pytest.raises(ConfigError, match="did you mean 'reward'"):
        load_config(path)


def test_wrong_type_names_key(tmp_path):
    path = write(tmp_path / "c.toml", '[ppo]\nnum_steps = "many"\n')
    with pytest.raises(ConfigError, match=r"ppo\.num_steps: expected an integer, got 'many'"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"app\.algorithm_on_policy_or_off_policy: got 'online'"):
        load_config(overrides=['app.algorithm_on_policy_or_off_policy="online"'])


def test_range_errors_name_section():
    with pytest.raises(ConfigError, match=r"app: .*train_batch_size \(64\) must be <= replay_buffer_capacity"):
        load_config(overrides=["app.train_batch_size=64", "app.replay_buffer_capacity=8"])


def test_set_overrides_values_of_every_kind():
    cfg = load_config(overrides=["ppo.learning_rate=1e-4", "app.aisrv_num=3", 'app.run_name="exp1"',
                                 "model.channels=[8, 8]", "model.kernel_sizes=[3, 3]", "model.strides=[2, 2]",
                                 "app.learner_train_by_while_true=false"])
    assert cfg.ppo.learning_rate == 1e-4 and cfg.app.aisrv_num == 3 and cfg.app.run_name == "exp1"
    assert cfg.model.channels == [8, 8] and cfg.app.learner_train_by_while_true is False


def test_set_errors():
    with pytest.raises(ConfigError, match="expected section.key=value"):
        load_config(overrides=["ppo.learning_rate"])
    with pytest.raises(ConfigError, match="did you mean 'app'"):
        load_config(overrides=["ap.seed=1"])
    with pytest.raises(ConfigError, match="did you mean 'max_minutes'"):
        load_config(overrides=["app.max_minute=1"])


def test_includes_merge_and_the_including_file_wins(tmp_path):
    write(tmp_path / "base.toml", '[app]\nseed = 1\naisrv_num = 3\n[ppo]\nnum_steps = 64\n')
    path = write(tmp_path / "top.toml", 'include = ["base.toml"]\n[app]\nseed = 7\n')
    cfg = load_config(path)
    assert (cfg.app.seed, cfg.app.aisrv_num, cfg.ppo.num_steps) == (7, 3, 64)
    assert load_config(path, ["app.seed=9"]).app.seed == 9  # --set wins over files


def test_include_errors_name_the_file(tmp_path):
    path = write(tmp_path / "a.toml", 'include = ["missing.toml"]\n')
    with pytest.raises(ConfigError, match="missing.toml"):
        load_config(path)
    write(tmp_path / "x.toml", 'include = ["y.toml"]\n')
    write(tmp_path / "y.toml", 'include = ["x.toml"]\n')
    with pytest.raises(ConfigError, match="include cycle"):
        load_config(tmp_path / "x.toml")
    bad = write(tmp_path / "bad.toml", '[app\nseed = 1\n')
    with pytest.raises(ConfigError, match="bad.toml: not valid TOML"):
        load_config(bad)


def test_effective_config_round_trips(tmp_path):
    cfg = load_config(SMOKE, ["app.seed=5", "ppo.learning_rate=3e-4"])
    path = save_effective_config(cfg, tmp_path / "log" / "effective_config.toml")
    assert path.read_text().startswith("# Effective configuration")
    assert load_config(path) == cfg


def test_kaiwu_minutes_key_wins_over_seconds():
    assert load_config(overrides=["app.model_file_sync_per_minutes=1.5"]).app.model_sync_seconds == 90.0
    assert load_config(overrides=["app.model_file_sync_per_seconds=3"]).app.model_sync_seconds == 3.0


def test_default_config_file_matches_the_dataclass_defaults_for_app():
    """conf/configure_app.toml documents every [app] key with its default value."""
    import toml

    written = toml.loads(DEFAULT_CONFIG.read_text())["app"]
    defaults = AppConfig().app
    assert set(written) == set(vars(defaults)), set(written) ^ set(vars(defaults))
    for key, value in written.items():
        assert getattr(defaults, key) == value, key
