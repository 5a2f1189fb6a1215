"""tools/export_kaiwu.py --kaiwu-version v2-28 | v2-24: the project's v2 agent (app = "back_to_the_realm_v2", algo = "ppo") as a
back_to_the_realm_v2 code package in the algorithm slot the platform scores (diy), recognised as
its version, with a valid train_env_conf.toml, and played by evaluation through its own exploit."""
from __future__ import annotations

import json
import subprocess

import pytest
import toml

from agent.back_to_the_realm_v2.ppo_agent import Agent
from agent.back_to_the_realm_v2.ppo_config import Settings
from feature.back_to_the_realm_v2.layout import STATE_SLICES
from tests.conftest import REPO_ROOT
from tool_runs import run_tool
from workflow import platforms

TINY = {"model": {"channels": [4], "kernel_sizes": [3], "strides": [2], "hidden_size": 16},
        "curriculum_v2": {"end_random": False, "end": [84, 95], "start": [111, 83], "treasure_pos": [],
                          "treasure_count": 0, "obstacle_random": False, "max_step": 30}}


def export(tmp_path, kaiwu_version: str, config_text: str, algo: str = "diy") -> subprocess.CompletedProcess:
    config = tmp_path / "run.toml"
    config.write_text(config_text)
    settings = Settings.from_dict({k: v for k, v in toml.loads(config_text).items() if k in Settings.sections()})
    ckpt = Agent(agent_type="learner", settings=settings, seed=0).save_model(tmp_path / "ckpt", 5)
    return run_tool("tools/export_kaiwu.py", "--ckpt", str(ckpt), "--out",
                    str(tmp_path / "package"), "--config", str(config), "--kaiwu-version", kaiwu_version,
                    "--algo", algo)


def v2_config() -> str:
    return f'include = ["{REPO_ROOT}/conf/back_to_the_realm_v2.toml"]\n' + toml.dumps({"app": {"app": "back_to_the_realm_v2", "algo": "ppo"}, **TINY})


@pytest.mark.parametrize("name, version", [("v2-28", "28.1.1"), ("v2-24", "24.0.1")])
def test_the_v2_package_is_recognised_registers_diy_and_plays_its_exploit(tmp_path, name, version):
    result = export(tmp_path, name, v2_config())
    assert result.returncode == 0, result.stderr
    package = tmp_path / "package"
    assert json.loads((package / "kaiwu.json").read_text()) == {"version": version,
                                                                "project_code": "back_to_the_realm_v2"}
    assert platforms.detect(package).name == name
    registered = toml.loads((package / "conf" / "algo_conf_back_to_the_realm_v2.toml").read_text())
    assert registered["diy"]["aisrv_model"] == "agent_diy.agent.Agent"
    assert registered["diy"]["train_workflow"] == "agent_diy.workflow.train_workflow.workflow"
    app = toml.loads((package / "conf" / "configure_app.toml").read_text())["app"]
    assert app["app"] == "back_to_the_realm_v2" and app["algo"] == "diy"
    platform = platforms.get(name)
    layout = platform.package_layout(package, "diy")
    platform.check_env_conf_file(platform.env_conf_file(package, layout))  # the simulator accepts it
    conf = toml.loads((package / "agent_diy" / "conf" / "train_env_conf.toml").read_text())
    assert conf["env_conf"]["map_cherry"]["end"] == [84, 95]
    from export.code import foreign_imports

    for file in package.rglob("*.py"):  # only the platform's modules, numpy, torch and the package
        assert foreign_imports(file.read_text(), "agent_diy") == [], file

    import realm
    from evaluation.episodes import load_agent
    from evaluation.back_to_the_realm_v2 import play_exploit

    loaded = load_agent(next((package / "ckpt").glob("model.ckpt-5.pkl")), None, package)
    env = realm.make_env(protocol="v2", seed=0)
    record = play_exploit(env, loaded, conf, seed=3)
    assert record.steps == 30 or record.won  # the whole episode was played by the package's exploit


@pytest.mark.slow
def test_the_v2_export_trains_through_train_sh_and_is_scored_by_evaluate(tmp_path):
    """The exported 28.x package is an ordinary Kaiwu package: `./train.sh --package` passes the
    platform's train test with it, and `tools/evaluate.py --package` scores what it trained."""
    from tests.official_packages import train

    assert export(tmp_path, "v2-28", v2_config()).returncode == 0
    package = tmp_path / "package"
    result = train(package, tmp_path / "runs", "--train-test")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    trained = sorted((tmp_path / "runs" / "r" / "ckpt").glob("*/model.ckpt-*.pkl"))
    assert trained, "the train test wrote no checkpoint"
    from tests.test_kaiwu_v2_package import short_episode

    scored = run_tool("tools/evaluate.py", "--package", str(package), "--ckpt", str(trained[-1]),
                      "--usr-conf", short_episode(), "--episodes", "2", "--workers", "1", "--quiet", "--out",
                      str(tmp_path / "eval"))
    assert scored.returncode == 0, scored.stderr
    assert "back_to_the_realm_v2" in scored.stdout
    rows = csv_rows(tmp_path / "eval" / "episodes.csv")
    assert sorted(row["policy"] for row in rows) == sorted([str(trained[-1])] * 2 + ["planner"] * 2)


def test_a_2024_agent_is_not_exported_as_a_v2_package_nor_the_v2_agent_as_a_2024_one(tmp_path):
    result = export(tmp_path, "2024", v2_config(), algo="ppo")
    assert result.returncode == 2 and "back_to_the_realm_v2" in result.stderr
    assert not (tmp_path / "package").exists()


@pytest.mark.slow
def test_evaluate_and_render_play_a_run_checkpoint_of_the_v2_agent_on_v2_episodes(tmp_path):
    """tools/evaluate.py and tools/render.py --ckpt of a v2 run play the v2 game (its own exploit and the v2
    planner on the same episodes), as the run's app.algo says; not the 2024 game."""
    config = tmp_path / "run.toml"
    config.write_text(v2_config())
    settings = Settings.from_dict({k: v for k, v in toml.loads(config.read_text()).items() if k in Settings.sections()})
    ckpt = Agent(agent_type="learner", settings=settings, seed=0).save_model(tmp_path / "ckpt", 5)
    episode = {"env_conf": {"map_name": "map_cherry", "map_cherry": {
        "start": [111, 83], "end": [84, 95], "buff": [57, 68], "start_random": False, "end_random": False,
        "buff_random": False, "treasure_random": False, "treasure_count": 0, "treasure_pos": [],
        "obstacle_random": False, "obstacle_id": [], "max_step": 30, "buff_cooldown": 100, "talent_cooldown": 100}}}
    result = run_tool("tools/evaluate.py", "--ckpt", str(ckpt), "--config", str(config),
                      "--usr-conf", json.dumps(episode), "--episodes", "2", "--workers", "1", "--quiet", "--out",
                      str(tmp_path / "eval"))
    assert result.returncode == 0, result.stderr
    assert "back_to_the_realm_v2" in result.stdout
    rows = {row["policy"]: row for row in csv_rows(tmp_path / "eval" / "summary.csv")}
    assert set(rows) == {str(ckpt), "planner"}
    assert float(rows["planner"]["win_rate"]) == 1.0  # the end is 30 moves away: the planner reaches it
    assert float(rows[str(ckpt)]["steps_mean"]) <= 30
    picture, animation = tmp_path / "episode.png", tmp_path / "map.gif"
    drawn = run_tool("tools/render.py", "--ckpt", str(ckpt), "--config", str(config),
                     "--usr-conf", json.dumps(episode), "--png", str(picture), "--no-gif", "--map-gif",
                     str(animation), "--frame-stride", "10", "--scale", "2")
    assert drawn.returncode == 0, drawn.stderr
    assert picture.stat().st_size > 0 and "chests 0/0" in drawn.stdout
    from PIL import Image

    steps = int(drawn.stdout.split("steps ")[1].split(",")[0])
    with Image.open(animation) as gif:  # every 10th step and the last frame
        assert gif.size == (256, 256) and gif.n_frames == len(range(0, steps, 10)) + 1

    planner = run_tool("tools/evaluate.py", "--agent", "planner", "--preset", "v2-24-random",
                       "--episodes", "1", "--quiet", "--out", str(tmp_path / "planner"))
    assert planner.returncode == 0, planner.stderr
    header = next(line for line in planner.stdout.splitlines() if line.startswith("policy"))
    assert "v2-24-random" in planner.stdout and "chests" not in header  # the table leaves out a column of nothing
    summary = {row["policy"]: row for row in csv_rows(tmp_path / "planner" / "summary.csv")}
    assert float(summary["planner"]["chests_available"]) == 0.0  # 24.0.1's setting has no chests


def csv_rows(path):
    import csv

    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_evaluating_a_v2_run_directory_scores_each_checkpoint_and_clean_ckpt_keeps_the_best(tmp_path):
    """One evaluation path for every game: a v2 run's checkpoint directory gets the score-vs-step
    plot and ckpt_scores.json beside its checkpoints, which clean_ckpt.py --keep-best reads."""
    config = tmp_path / "run.toml"
    config.write_text(v2_config())
    settings = Settings.from_dict({k: v for k, v in toml.loads(config.read_text()).items() if k in Settings.sections()})
    ckpt_dir = tmp_path / "ckpt"
    for step, seed in ((2, 0), (4, 1), (6, 2)):  # three different networks
        Agent(agent_type="learner", settings=settings, seed=seed).save_model(ckpt_dir, step)
    episode = {"env_conf": {"map_name": "map_cherry", "map_cherry": {
        "start": [111, 83], "end": [84, 95], "buff": [57, 68], "start_random": False, "end_random": False,
        "buff_random": False, "treasure_random": True, "treasure_count": 2, "treasure_pos": [],
        "obstacle_random": False, "obstacle_id": [], "max_step": 40, "buff_cooldown": 100, "talent_cooldown": 100}}}
    result = run_tool("tools/evaluate.py", "--ckpt", str(ckpt_dir), "--config", str(config),
                      "--usr-conf", json.dumps(episode), "--episodes", "2", "--workers", "1", "--quiet",
                      "--no-planner", "--out", str(tmp_path / "eval"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "eval" / "score_vs_step.png").stat().st_size > 0
    scores = json.loads((ckpt_dir / "ckpt_scores.json").read_text())["scores"]
    assert sorted(int(k) for k in scores) == [2, 4, 6]
    best = max(scores, key=lambda k: (scores[k], int(k)))
    kept = run_tool("tools/clean_ckpt.py", str(ckpt_dir), "--keep", "0", "--keep-best")
    assert kept.returncode == 0, kept.stderr
    assert f"keeping [{int(best)}] (best {int(best)}:" in kept.stdout and "ckpt_scores.json" in kept.stdout


# --- the exported package bets on no reading the sources leave open -------------------------------------

E, TALENT_NE = 0, 9
CLOSE_EPISODE = {"start": [20, 20], "end": [44, 44], "buff": [25, 20], "start_random": False, "end_random": False,
                 "buff_random": False, "treasure_random": False, "treasure_count": 4,
                 "treasure_pos": [[21, 20], [20, 22], [30, 20], [23, 30]], "obstacle_random": False,
                 "obstacle_id": [], "max_step": 40, "buff_cooldown": 100, "talent_cooldown": 100}
#: the first moves, whatever the policy: onto a chest (so a taken chest is served), then the talent
#: (so it cools for the rest of the episode)
SCRIPT = (E, TALENT_NE)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A freshly initialised v2 ppo checkpoint exported as a 28.x package, loaded as the platform loads it."""
    from evaluation.episodes import load_agent

    folder = tmp_path_factory.mktemp("export")
    result = export(folder, "v2-28", v2_config())
    assert result.returncode == 0, result.stderr
    package = folder / "package"
    return load_agent(next((package / "ckpt").glob("model.ckpt-5.pkl")), None, package)


def close_episode() -> dict:
    return {"env_conf": {"map_name": "map_cherry", "map_cherry": dict(CLOSE_EPISODE)}}


def talent_status(obs) -> int:
    return obs["frame_state"]["heroes"][0]["talent"]["status"]


def play_platform_way(loaded, env, seed: int) -> list[tuple[int, int]]:
    """One episode through the package's exploit as the platform's eval workflow calls it (the
    first moves scripted: SCRIPT); (talent status, the package's action) per frame."""
    agent = loaded.agent
    agent.reset()
    obs, extra_info = env.reset(usr_conf=close_episode(), seed=seed)
    played, done = [], False
    while not done:
        act = loaded.action_process(agent.exploit(loaded.observation_process(obs, extra_info)))
        assert 0 <= act < 16
        played.append((talent_status(obs), act))
        if len(played) <= len(SCRIPT):
            act = SCRIPT[len(played) - 1]
        _, obs, terminated, truncated, extra_info = env.step(act)
        done = terminated or truncated
    assert len(played) == CLOSE_EPISODE["max_step"] or terminated
    return played


READINGS = [pytest.param(view, chest, count, id=f"view{view}-{chest}-{count}")
            for view in (11, 51) for chest in ("stays_0", "taken_frame") for count in ("chests", "chests_plus_2")]


@pytest.mark.parametrize("view, chest, count", READINGS)
def test_the_exported_v2_package_plays_under_each_reading_of_the_view_and_the_chest_fields(tmp_path, exported, view,
                                                                                        chest, count):
    """A view of 11 or 51 (the 28.1.1 preprocessor's default size), a taken chest's status kept or
    shown on its frame only, game_info.treasure_count with or without the start and the end: the
    package plays every frame, its features sized the same."""
    from tests.test_env_v2_config import env_from_config

    env = env_from_config(tmp_path, f"env.view_size={view}", f'env.taken_chest_status="{chest}"',
                          f'env.treasure_count_reads="{count}"')
    played = play_platform_way(exported, env, seed=0)
    assert env.chests_taken[0] and env.training_metrics()["talent_cnt"] >= 1  # the readings were served
    memory = exported.agent._view.memory
    assert memory.seen.sum() > 0 and memory.chest_count >= 1
    assert all(act < 8 for status, act in played if status == 0)  # no talent while it cools


@pytest.mark.parametrize("view", [11, 51])
def test_the_exported_v2_package_plays_episodes_of_randomized_unknown_rules(tmp_path, exported, view):
    from tests.test_env_v2_config import env_from_config

    env = env_from_config(tmp_path, "env.randomize_unknown_rules=true", f"env.view_size={view}")
    for seed in range(2):
        play_platform_way(exported, env, seed)
        assert len(env.extra_info["game_info"]["map_info"]) == view


def served_legal_act(reading: str, obs: dict) -> dict:
    """obs with legal_act as the server might fill it (its content there is unknown)."""
    shown = dict(obs)
    ready = talent_status(obs)
    if reading == "absent":
        del shown["legal_act"]
    elif reading == "action_mask":  # one entry per action
        shown["legal_act"] = [1] * 16
    elif reading == "inverted":
        shown["legal_act"] = [1, 1 - ready]
    elif reading == "empty":
        shown["legal_act"] = []
    return shown


@pytest.mark.parametrize("reading", ["served", "absent", "action_mask", "inverted", "empty"])
def test_the_exported_v2_package_reads_the_talent_from_its_status_whatever_legal_act_holds(tmp_path, exported,
                                                                                          reading):
    """Every official and competitor package reads hero.talent.status; the package masks the
    talent and sets its talent feature by it, and plays whatever legal_act holds."""
    from tests.test_env_v2_config import env_from_config

    env = env_from_config(tmp_path)
    agent = exported.agent
    agent.reset()
    obs, extra_info = env.reset(usr_conf=close_episode(), seed=0)
    statuses, done, step = [], False, 0
    while not done:
        obs_data, _ = agent.observation_process(served_legal_act(reading, obs), extra_info)
        ready = talent_status(obs) == 1
        statuses.append(ready)
        assert bool(obs_data.legal[8:].any()) == ready, step
        assert obs_data.state[STATE_SLICES["talent"]][0] == float(ready), step
        act = agent.action_process(agent.exploit([obs_data])[0])
        assert ready or act < 8, step
        act = SCRIPT[step] if step < len(SCRIPT) else act
        _, obs, terminated, truncated, extra_info = env.step(act)
        done, step = terminated or truncated, step + 1
    assert statuses[:2] == [True, True] and not any(statuses[2:])  # cooling from the cast on


def test_a_run_of_the_earlier_algorithm_name_is_still_evaluated_and_its_config_says_what_to_change(tmp_path):
    """An earlier release named the v2 agent algo "ppo_v2" (with the default app): its run's
    checkpoints are still loaded and scored as back_to_the_realm_v2's ppo; a config that still says
    so is refused naming the two keys to set; a resume with the new names names the old folder."""
    from evaluation.episodes import load_agent, project_algo
    from workflow.checkpoints.runs import RunError, resolve_run
    from workflow.config import ConfigError, load_config

    old = toml.loads(v2_config().split("\n", 1)[1])
    old["app"] = {"app": "back_to_the_realm", "algo": "ppo_v2"}
    old_config = tmp_path / "log" / "effective_config.toml"
    old_config.parent.mkdir()
    old_config.write_text(toml.dumps(old))
    settings = Settings.from_dict({k: v for k, v in old.items() if k in Settings.sections()})
    ckpt = Agent(agent_type="learner", settings=settings, seed=0).save_model(
        tmp_path / "ckpt" / "back_to_the_realm_ppo_v2", 5)
    assert project_algo(ckpt, None) == ("back_to_the_realm_v2", "ppo")  # read from the run's own config
    assert load_agent(ckpt).platform.game == "back_to_the_realm_v2"

    with pytest.raises(ConfigError, match='algo "ppo_v2" is now the algorithm "ppo" of game "back_to_the_realm_v2": '
                                          'set app = "back_to_the_realm_v2" and algo = "ppo"'):
        load_config(old_config)
    cfg = load_config(REPO_ROOT / "conf" / "back_to_the_realm_v2.toml", [f'app.run_dir="{tmp_path.parent}"',
                                                            f'app.run_name="{tmp_path.name}"'])
    with pytest.raises(RunError, match=r"no checkpoint in .*back_to_the_realm_v2_ppo; it has checkpoints in "
                                       r"ckpt/back_to_the_realm_ppo_v2 .*rename the folder"):
        resolve_run(cfg.app, resume=True)


def test_an_app_that_names_no_game_was_the_2024_games_and_a_config_is_told_so(tmp_path):
    """An earlier release took app.app as a label only: such a run's agent is the 2024 game's, and
    a config that still uses app so is refused naming what app is now."""
    from evaluation.episodes import project_algo
    from workflow.config import ConfigError, load_config

    config = tmp_path / "run.toml"
    config.write_text('[app]\napp = "exp1"\nalgo = "ppo"\n')
    assert project_algo(tmp_path / "model.ckpt-1.pkl", config) == ("back_to_the_realm", "ppo")
    with pytest.raises(ConfigError, match='app "exp1" names no game: app names the game .*set app = '
                                          '"back_to_the_realm" and algo = "ppo"'):
        load_config(overrides=['app.app="exp1"'])
