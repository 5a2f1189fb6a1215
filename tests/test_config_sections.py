"""A run's config holds its own game's sections: the classes written out, [env] split by game,
another game's section or rule refused naming the game, one [env] maps_dir for every game's map
folder, and a run's effective config of an earlier release (every game's sections, the old map
folder keys) still read by the tools."""
from __future__ import annotations

import inspect
import json
import sys

import pytest
import toml

from tests.conftest import REPO_ROOT, needs_gorge_maps
from workflow.config import RECORD_HEADER, ConfigError, load_config, save_effective_config

GORGE_CONF = REPO_ROOT / "conf" / "gorge_chase.toml"
V2_CONF = REPO_ROOT / "conf" / "back_to_the_realm_v2.toml"
GRIDS = REPO_ROOT.parent / "shared" / "kaiwu_gorge" / "map" / "grids"


def including(tmp_path, config, body: str):
    file = tmp_path / "run.toml"
    file.write_text(f'include = ["{config}"]\n{body}')
    return file


def test_the_config_and_the_agents_settings_are_classes_written_out():
    """No section class is built at import time: a reader finds `class AppConfig` and each
    agent's `class Settings` where they are used."""
    import agent.ppo_game_settings
    import agent.gorge_chase.ppo_config
    import agent.back_to_the_realm_v2.ppo_config
    import workflow.config

    for module in (workflow.config, agent.ppo_game_settings, agent.gorge_chase.ppo_config, agent.back_to_the_realm_v2.ppo_config):
        assert "make_dataclass" not in inspect.getsource(module), module.__name__
    assert "\nclass AppConfig:" in inspect.getsource(workflow.config)
    for module in (agent.gorge_chase.ppo_config, agent.back_to_the_realm_v2.ppo_config):
        assert "\nclass Settings(" in inspect.getsource(module), module.__name__


def test_a_gorge_runs_effective_config_holds_its_games_sections_and_rules_only(tmp_path):
    cfg = load_config(GORGE_CONF)
    written = toml.loads(save_effective_config(cfg, tmp_path / "log" / "effective_config.toml").read_text())
    assert list(written) == list(cfg.to_dict()) == ["app", "env", "eval", "model", "ppo", "reward_gorge",
                                                    "curriculum_gorge", "features_gorge"]
    assert {"monster_distance", "gorge_errors", "randomize_unknown_rules"} <= set(written["env"])
    assert not {"step_length", "reveal_end_pos", "flash_blocked", "map_window", "gorge_maps"} & set(written["env"])
    assert load_config(tmp_path / "log" / "effective_config.toml") == cfg
    v2 = load_config(V2_CONF).to_dict()
    assert "reward_v2" in v2 and not {"reward_gorge", "reward", "curriculum", "dqn"} & set(v2)
    assert "step_length" in v2["env"] and "monster_distance" not in v2["env"]


@pytest.mark.parametrize("config, body, message", [
    (GORGE_CONF, "[reward_v2]\nwin = 1.0\n", "[reward_v2] is back_to_the_realm_v2's; this run plays gorge_chase"),
    (GORGE_CONF, "[curriculum]\nchest_num = 2\n", "[curriculum] is back_to_the_realm's; this run plays gorge_chase"),
    (V2_CONF, "[features_gorge]\nglobal_info = false\n", "[features_gorge] is gorge_chase's; this run plays "
                                                          "back_to_the_realm_v2"),
    (GORGE_CONF, "[features_gorge]\nlookahead_guard = false\n", "[features_gorge] lookahead_guard = false with "
                                                                 "lookahead_guard_training = true"),
    (GORGE_CONF, "[env]\nstep_length = 2\n", "[env] step_length is back_to_the_realm_v2's rule; this run plays gorge_chase"),
    (V2_CONF, "[env]\ncapture_radius = 2\n", "[env] capture_radius is gorge_chase's rule; this run plays "
                                             "back_to_the_realm_v2"),
    (GORGE_CONF, "[env]\nflash_blocked = \"fail\"\n", "[env] flash_blocked is back_to_the_realm's rule"),
    (REPO_ROOT / "conf" / "dqn_plus.toml", "[ppo]\nnum_steps = 64\n",
     "[ppo] is back_to_the_realm's ppo's; this run trains its dqn_plus"),
])
def test_a_section_or_rule_of_another_game_is_refused_naming_whose_it_is(tmp_path, config, body, message):
    with pytest.raises(ConfigError) as refused:
        load_config(including(tmp_path, config, body))
    assert message in str(refused.value)


@needs_gorge_maps
def test_the_old_map_folder_keys_are_refused_naming_maps_dir(tmp_path):
    for config, old in ((GORGE_CONF, "gorge_maps"), (V2_CONF, "v2_maps")):
        with pytest.raises(ConfigError, match=rf"\[env\] {old} is now \[env\] maps_dir"):
            load_config(including(tmp_path, config, f'[env]\n{old} = "{GRIDS}"\n'))
        with pytest.raises(ConfigError, match=rf"\[env\] {old} is now \[env\] maps_dir"):
            load_config(config, [f'env.{old}="{GRIDS}"'])
    with pytest.raises(ConfigError, match="maps_dir: back_to_the_realm has no folder of maps"):
        load_config(None, [f'env.maps_dir="{GRIDS}"'])


@needs_gorge_maps
def test_maps_dir_is_the_one_map_folder_key_and_make_envs_one_keyword(tmp_path):
    from realm import make_env
    from workflow.platforms.project import run_platform

    from evaluation.inputs import map_label

    folder = tmp_path / "map_data"
    folder.mkdir()
    for config, maps in ((GORGE_CONF, GRIDS), (V2_CONF, folder)):
        cfg = load_config(config, [f'env.maps_dir="{maps}"'])
        kwargs = cfg.env.make_kwargs(run_platform(cfg.app))
        assert kwargs["maps_folder"] == str(maps) and map_label(kwargs) == f"the maps in {maps}"
        make_env(**kwargs, seed=0)
    with pytest.raises(ConfigError, match=r"maps_dir: not a folder: .*none \(gorge_chase: a folder of official map"):
        load_config(GORGE_CONF, [f'env.maps_dir="{tmp_path / "none"}"'])


def old_effective_config() -> dict:
    """What an earlier release wrote for a gorge_chase run: every game's sections, every game's
    [env] keys, the maps folder under gorge_maps (and v2's under v2_maps)."""
    tree = load_config(GORGE_CONF).to_dict()
    for other in (REPO_ROOT / "conf" / "configure_app.toml", REPO_ROOT / "conf" / "dqn_plus.toml", V2_CONF):
        for name, section in load_config(other).to_dict().items():
            if name == "env":
                tree["env"].update({key: value for key, value in section.items() if key not in tree["env"]})
            tree.setdefault(name, section)
    tree["env"].update(gorge_maps=str(GRIDS), v2_maps=str(REPO_ROOT))
    return tree


@pytest.fixture(scope="module")
def gorge_run(tmp_path_factory):
    """A gorge_chase run directory with one checkpoint of an untrained agent of gorge_chase.toml."""
    from agent.gorge_chase.ppo_agent import Agent

    run = tmp_path_factory.mktemp("run")
    Agent(settings=load_config(GORGE_CONF).settings, seed=0).save_model(run / "ckpt" / "gorge_chase_ppo", 0)
    return run, run / "ckpt" / "gorge_chase_ppo" / "model.ckpt-0.pkl"


@pytest.mark.parametrize("release", ["earlier", "this"])
@needs_gorge_maps
def test_a_runs_effective_config_of_either_release_still_evaluates_and_exports(gorge_run, tmp_path, capsys, release):
    """The run's record is read, not refused: an earlier release's other games' sections and keys
    are left out, its gorge_maps is the maps folder the evaluation plays."""
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate
    import export_kaiwu

    run, ckpt = gorge_run
    record = run / "log" / "effective_config.toml"
    record.parent.mkdir(exist_ok=True)
    if release == "earlier":
        record.write_text(f"{RECORD_HEADER} (includes and --set overrides applied).\n" + toml.dumps(old_effective_config()))
    else:
        save_effective_config(load_config(GORGE_CONF, [f'env.maps_dir="{GRIDS}"']), record)
    assert list(load_config(record).to_dict()) == list(load_config(GORGE_CONF).to_dict())
    usr_conf = json.dumps({"env_conf": {"map": [9], "map_random": False, "max_step": 20}})
    assert evaluate.main(["--ckpt", str(ckpt), "--usr-conf", usr_conf, "--episodes", "1", "--no-planner",
                          "--workers", "1", "--quiet", "--out", str(tmp_path / "eval")]) == 0
    assert f"on the maps in {GRIDS}:" in capsys.readouterr().out
    out = tmp_path / "package"
    assert export_kaiwu.main(["--ckpt", str(ckpt), "--out", str(out), "--kaiwu-version", "15"]) == 0
    settings = json.loads(next(out.rglob("settings.json")).read_text())
    assert set(settings) == {"model", "ppo", "reward_gorge", "curriculum_gorge", "features_gorge"}
