"""kaiwu18/: the root-level platform modules 2025 (18.0.2) packages import. The messages are
checked against the platform's compiled ones and the official package's Preprocessor in
subprocesses (each its own descriptor pool and sys.path); the tools modules are loaded from
their files, so this process's `tools` stays the project's scripts folder."""
from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import toml

import realm.back_to_the_realm.usr_conf
from kaiwudrl.common.config.config_control import CONFIG
from tests.conftest import REPO_ROOT
from workflow.metrics import MetricsWriter

KAIWU18 = REPO_ROOT / "kaiwu_platform" / "v18"
SHARED18 = REPO_ROOT.parent / "shared" / "kaiwu18"
PACKAGE18 = SHARED18 / "package"
PLATFORM18 = SHARED18 / "platform"
PROTO_MODULES = ["custom_pb2", "arena2aisvr_pb2", "game2arena_pb2"]

needs_shared = pytest.mark.skipif(not SHARED18.is_dir(), reason=f"{SHARED18} not found")
needs_validator = pytest.mark.skipif(not hasattr(realm.back_to_the_realm.usr_conf, "validate_env_conf"),
                                     reason="realm.back_to_the_realm.usr_conf.validate_env_conf not in this branch yet")


def run_python(code: str, *args: str) -> str:
    """`code` in a fresh isolated interpreter (-I: no PYTHONPATH, no cwd on sys.path)."""
    done = subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def load(relative: str):
    """A kaiwu18 module from its file under a name of its own (not `tools.*`)."""
    path = KAIWU18 / relative
    spec = importlib.util.spec_from_file_location("kaiwu18_" + path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conf_validate = load("tools/train_env_conf_validate.py")
metrics_utils = load("tools/metrics_utils.py")


class RecordingLogger:
    def __init__(self):
        self.errors = []

    def error(self, message, *args, **kwargs):
        self.errors.append(str(message))

    exception = error

    def info(self, *args, **kwargs):
        pass


# --- the messages ---------------------------------------------------------------------------------

DUMP_DESCRIPTORS = """
import importlib, json, sys
from google.protobuf import descriptor_pb2
sys.path.insert(0, sys.argv[1])
out = {}
for name in sys.argv[2:]:
    fd = importlib.import_module("arena_proto.back_to_the_realm." + name).DESCRIPTOR
    proto = descriptor_pb2.FileDescriptorProto()
    fd.CopyToProto(proto)
    proto.ClearField("options")  # the platform's go_package
    def kind(f):
        return (f.message_type or f.enum_type).full_name if (f.message_type or f.enum_type) else ""
    out[name] = {
        "file": fd.name, "package": fd.package, "deps": [d.name for d in fd.dependencies],
        "messages": {m.full_name: [[f.name, f.number, f.type, f.label, kind(f)] for f in m.fields]
                     for m in fd.message_types_by_name.values()},
        "enums": {e.full_name: [[v.name, v.number] for v in e.values] for e in fd.enum_types_by_name.values()},
        "file_proto": proto.SerializeToString().hex(),
    }
print(json.dumps(out))
"""


def dump_descriptors(root: Path) -> dict:
    return json.loads(run_python(DUMP_DESCRIPTORS, str(root), *PROTO_MODULES))


@needs_shared
def test_messages_match_the_platforms_compiled_ones():
    ours, theirs = dump_descriptors(KAIWU18), dump_descriptors(PLATFORM18)
    for name in PROTO_MODULES:
        assert ours[name]["file"] == theirs[name]["file"] and ours[name]["deps"] == theirs[name]["deps"]
        assert ours[name]["package"] == theirs[name]["package"] == "arena.back_to_the_realm"
        assert ours[name]["messages"] == theirs[name]["messages"], name
        assert ours[name]["enums"] == theirs[name]["enums"], name
        # The whole file descriptor (message and field order included) is the platform's.
        assert ours[name]["file_proto"] == theirs[name]["file_proto"], name
    custom = ours["custom_pb2"]
    assert len(custom["messages"]) == 20 and set(custom["enums"]) == {
        "arena.back_to_the_realm.RelativeDirection", "arena.back_to_the_realm.RelativeDistance"}
    assert {"arena.back_to_the_realm." + name for name in ("FloatPosition", "Position", "RealmFeature",
                                                           "RelativePosition")} <= set(custom["messages"])


PREPROCESS = """
import json, math, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from arena_proto.back_to_the_realm import custom_pb2 as pb
from arena_proto.back_to_the_realm.arena2aisvr_pb2 import AIServerRequest
from agent_dqn.feature.preprocessor import Preprocessor, norm, polar_norm, get_null_relative_pos

obs = pb.Observation()
hero = obs.frame_state.heroes.add(hero_id=1)
hero.pos.x, hero.pos.z = 10000, 20000          # grid (50, 24)
obs.game_info.start_pos.x, obs.game_info.start_pos.z = 10000, 20000
obs.game_info.end_pos.x, obs.game_info.end_pos.z = 12000, 21000   # grid (52, 28)
chest = obs.frame_state.organs.add(sub_type=1, config_id=3, status=1)
chest.pos.x, chest.pos.z = 9000, 19500         # grid (49, 22)
for _ in range(51):
    obs.map_info.add(values=[1] * 51)
out = Preprocessor().process(obs)
feature = pb.RealmFeature(norm_pos=out[0], grid_pos=out[1], start_pos=out[2], end_pos=out[3], buff_pos=out[4],
                          treasure_pos=out[5], obstacle_map=out[6], memory_map=out[7], treasure_map=out[8],
                          end_map=out[9])
again = pb.RealmFeature.FromString(feature.SerializeToString())
request = AIServerRequest(game_id="g", frame_no=1, obs=obs)
print(json.dumps({
    "module": pb.__file__,
    "types": [type(x).__name__ for x in out[:5]],
    "norm_pos": [again.norm_pos.x, again.norm_pos.z],
    "polar": [polar_norm(hero.pos).x],
    "grid_pos": [again.grid_pos.x, again.grid_pos.z],
    "end": [again.end_pos.direction, again.end_pos.l2_distance, again.end_pos.grid_distance],
    "chest": [again.treasure_pos[2].direction, again.treasure_pos[2].grid_distance],
    "null": [get_null_relative_pos().direction, get_null_relative_pos().path_distance, pb.RelativeDistance.VeryLarge],
    "maps": [len(again.obstacle_map), sum(again.end_map), sum(again.treasure_map)],
    "request_heroes": len(AIServerRequest.FromString(request.SerializeToString()).obs.frame_state.heroes),
}))
"""


@needs_shared
def test_the_official_preprocessor_builds_its_features_with_these_messages():
    got = json.loads(run_python(PREPROCESS, str(KAIWU18), str(PACKAGE18)))
    assert Path(got["module"]).resolve().is_relative_to(KAIWU18)
    assert got["types"] == ["FloatPosition", "Position", "RelativePosition", "RelativePosition", "RelativePosition"]
    assert got["norm_pos"] == [10000 / 64000, 20000 / 64000] and got["grid_pos"] == [50, 24]
    assert got["polar"][0] == pytest.approx(math.hypot(10000, 20000) / (64000 * math.sqrt(2)), rel=1e-6)
    direction, l2, grid = got["end"]
    assert direction == 2 and l2 == pytest.approx(math.sqrt(2 ** 2 + 4 ** 2), rel=1e-6) and grid == 4  # NorthEast
    assert got["chest"] == [6, 2]  # SouthWest of the hero, two cells
    assert got["null"] == [0, 5, 5]
    assert got["maps"] == [51 * 51, 1, 1] and got["request_heroes"] == 1


# --- train_env_conf_validate ------------------------------------------------------------------------

OFFICIAL_CONF = PACKAGE18 / "agent_dqn" / "conf" / "train_env_conf.toml"


@needs_shared
def test_read_usr_conf_reads_the_official_file_and_adds_view_size():
    logger = RecordingLogger()
    usr_conf = conf_validate.read_usr_conf(str(OFFICIAL_CONF), logger)
    assert usr_conf == {"env_conf": {**toml.load(OFFICIAL_CONF)["env_conf"], "view_size": 25}}
    assert usr_conf["env_conf"] == {"start": 2, "end": 1, "treasure_random": True, "treasure_count": 8,
                                    "treasure_id": [], "talent_type": 1, "max_step": 2000, "view_size": 25}
    assert logger.errors == []


GOOD = "[env_conf]\nstart = 2\nend = 1\ntreasure_random = false\ntreasure_count = 8\ntreasure_id = [3, 4]\n" \
       "talent_type = 1\nmax_step = 2000\n"


@pytest.mark.parametrize("text, named", [
    ("[env_conf]\nstart = = 2\n", "could not be read as TOML"),
    (GOOD.replace("treasure_random = false", "treasure_random = 1"), "env_conf.treasure_random"),
    (GOOD.replace("start = 2", "start = true"), "env_conf.start"),
    (GOOD.replace("max_step = 2000", "max_step = 2000.0"), "env_conf.max_step"),
    (GOOD.replace("[3, 4]", "[3.0, 4.0]"), "env_conf.treasure_id"),
    (GOOD.replace("[3, 4]", "3"), "env_conf.treasure_id"),
    (GOOD.replace("[env_conf]", "[env]"), "[env_conf]"),
])
def test_read_usr_conf_returns_none_and_names_what_is_wrong(tmp_path, text, named):
    path = tmp_path / "train_env_conf.toml"
    path.write_text(text)
    logger = RecordingLogger()
    assert conf_validate.read_usr_conf(str(path), logger) is None
    assert len(logger.errors) == 1 and named in logger.errors[0] and str(path) in logger.errors[0]


def test_read_usr_conf_of_a_missing_file(tmp_path):
    logger = RecordingLogger()
    missing = tmp_path / "nope.toml"
    assert conf_validate.read_usr_conf(str(missing), logger) is None
    assert str(missing) in logger.errors[0]
    assert conf_validate.read_usr_conf("", logger) is None and len(logger.errors) == 2


def test_read_usr_conf_leaves_unknown_keys_to_check_usr_conf(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(GOOD + "treasure_num = 3\n")
    usr_conf = conf_validate.read_usr_conf(str(path), RecordingLogger())
    assert usr_conf["env_conf"]["treasure_num"] == 3 and usr_conf["env_conf"]["view_size"] == 25


def test_check_usr_conf_refuses_nothing_at_all():
    logger = RecordingLogger()
    assert conf_validate.check_usr_conf(None, logger) is False and "usr_conf is None" in logger.errors[0]


def good_conf(**changes) -> dict:
    env_conf = {"start": 2, "end": 1, "treasure_random": False, "treasure_count": 8, "treasure_id": [3, 4],
                "talent_type": 1, "max_step": 2000, "view_size": 25}
    return {"env_conf": {**env_conf, **changes}}


@needs_validator
@needs_shared
def test_check_usr_conf_accepts_the_official_conf():
    logger = RecordingLogger()
    assert conf_validate.check_usr_conf(conf_validate.read_usr_conf(str(OFFICIAL_CONF), logger), logger) is True
    assert conf_validate.check_usr_conf(good_conf(), logger) is True and logger.errors == []


@needs_validator
@pytest.mark.parametrize("changes, key", [
    ({"start": 0}, "start"),
    ({"end": 16}, "end"),
    ({"end": 2}, "end"),  # equals start
    ({"treasure_random": 1}, "treasure_random"),
    ({"treasure_count": 14}, "treasure_count"),
    ({"treasure_id": [3, 3]}, "treasure_id"),
    ({"treasure_id": [2, 5]}, "treasure_id"),  # holds the start id
    ({"treasure_id": [16]}, "treasure_id"),
    ({"talent_type": 2}, "talent_type"),
    ({"max_step": 2001}, "max_step"),
    ({"max_step": 0}, "max_step"),
])
def test_check_usr_conf_logs_the_key_of_a_bad_conf(changes, key):
    logger = RecordingLogger()
    assert conf_validate.check_usr_conf(good_conf(**changes), logger) is False
    assert len(logger.errors) == 1 and key in logger.errors[0]


@needs_validator
def test_check_usr_conf_wants_exactly_an_env_conf():
    logger = RecordingLogger()
    assert conf_validate.check_usr_conf({"diy": good_conf()["env_conf"]}, logger) is False
    assert conf_validate.check_usr_conf({"env_conf": {k: v for k, v in good_conf()["env_conf"].items()
                                                      if k != "max_step"}}, logger) is False
    assert "max_step" in logger.errors[-1]


# --- metrics_utils ----------------------------------------------------------------------------------

@pytest.fixture
def metrics_file(tmp_path, monkeypatch):
    """CONFIG.metrics_file pointing at a fresh run's metrics.csv (not yet written)."""
    saved = CONFIG.to_dict()
    monkeypatch.setattr(metrics_utils, "get_training_metrics", metrics_utils.metrics_reader(metrics_utils.AVERAGES))
    path = tmp_path / "run" / "metrics.csv"
    CONFIG.metrics_file = str(path)
    yield path
    CONFIG.load(saved)


def episode(score, steps, chests, flashes=1, buffs=0, win=1.0):
    return {"total_score": score, "chests": chests, "steps": steps, "win": win, "buff_count": buffs,
            "flash_count": flashes}


def write_episodes(writer, train_step, env_steps, episodes):
    for report in episodes:
        writer.write("aisrv", train_step, env_steps, {f"episode/{k}": v for k, v in report.items()})


def test_get_training_metrics_is_false_without_a_file(metrics_file):
    assert metrics_utils.get_training_metrics() is False
    CONFIG.load({})
    assert CONFIG.metrics_file == "" and metrics_utils.get_training_metrics() is False


def test_get_training_metrics_from_the_runs_metrics_csv(metrics_file, tmp_path):
    writer = MetricsWriter(metrics_file, tmp_path / "tb")
    writer.flush()
    assert metrics_utils.get_training_metrics() is False  # a header, no rows yet
    writer.write("learner", 10, 500, {"model/version": 10, "loss/value": 0.5})
    write_episodes(writer, 10, 600, [episode(300, 400, 2), episode(150, 2000, 0, flashes=3, win=0.0)])
    writer.write("aisrv", 12, 700, {"monitor/diy_2": 1.5, "monitor/diy_3": -2.0})
    writer.write("learner", 12, 700, {"monitor/value_loss": 0.25, "monitor/q_value": 3.0, "monitor/reward": 0.1})
    writer.flush()

    metrics = metrics_utils.get_training_metrics()
    assert metrics == {
        "basic": {"train_global_step": 12, "sample_production_and_consumption_ratio": 0, "episode_cnt": 2,
                  "sample_receive_cnt": 0, "predict_succ_cnt": 0, "load_model_succ_cnt": 0},
        "algorithm": {"reward": 0.1, "q_value": 3.0, "value_loss": 0.25},
        "env": {"total_score": 225.0, "treasure_score": 0, "max_steps": 0, "finished_steps": 1200.0,
                "treasure_random": 0, "total_treasures": 0, "collected_treasures": 1.0, "skill_cnt": 2.0,
                "buff_cnt": 0.0},
        "diy": {"diy_1": 0, "diy_2": 1.5, "diy_3": -2.0, "diy_4": 0, "diy_5": 0},
    }

    # The next call reads what was appended: one more episode, a newer train step.
    write_episodes(writer, 20, 900, [episode(225, 600, 1)])
    writer.write("learner", 21, 900, {"monitor/value_loss": 0.75})
    writer.flush()
    metrics = metrics_utils.get_training_metrics()
    assert metrics["basic"]["train_global_step"] == 21 and metrics["basic"]["episode_cnt"] == 3
    assert metrics["env"]["total_score"] == 225.0 and metrics["env"]["finished_steps"] == 1000.0
    assert metrics["algorithm"]["value_loss"] == 0.5
    writer.close()

    # A row still being written counts once it is whole.
    with metrics_file.open("a") as f:
        f.write("1.000,aisrv,22,950,episode/total_score,")
    assert metrics_utils.get_training_metrics()["basic"]["episode_cnt"] == 3
    with metrics_file.open("a") as f:
        f.write("129.0\n")
    metrics = metrics_utils.get_training_metrics()
    assert metrics["basic"]["episode_cnt"] == 4 and metrics["basic"]["train_global_step"] == 22
    assert metrics["env"]["total_score"] == 201.0


def test_get_training_metrics_counts_every_episode_but_parses_only_the_newest_rows(metrics_file, tmp_path,
                                                                                   monkeypatch):
    monkeypatch.setattr(metrics_utils, "CHUNK_BYTES", 100)  # rows straddle the chunks
    monkeypatch.setattr(metrics_utils, "PARSE_BYTES", 1000)  # about three episodes' rows
    writer = MetricsWriter(metrics_file, tmp_path / "tb")
    write_episodes(writer, 1, 10, [episode(0, 2000, 0)] * 40)
    write_episodes(writer, 2, 20, [episode(100, 50, 1)] * 10)
    writer.close()
    metrics = metrics_utils.get_training_metrics()
    assert metrics["basic"]["episode_cnt"] == 50 and metrics["basic"]["train_global_step"] == 2
    assert metrics["env"]["total_score"] == 100.0 and metrics["env"]["finished_steps"] == 50.0
    assert len(metrics_utils.get_training_metrics.tail[0].recent["episode/total_score"]) < 10


def test_a_new_file_under_the_same_name_starts_over(metrics_file, tmp_path):
    writer = MetricsWriter(metrics_file, tmp_path / "tb")
    write_episodes(writer, 5, 10, [episode(100, 50, 1)] * 3)
    writer.close()
    assert metrics_utils.get_training_metrics()["basic"]["episode_cnt"] == 3
    metrics_file.unlink()
    writer = MetricsWriter(metrics_file, tmp_path / "tb2")
    write_episodes(writer, 1, 10, [episode(7, 50, 1)])
    writer.close()
    metrics = metrics_utils.get_training_metrics()
    assert metrics["basic"]["episode_cnt"] == 1 and metrics["env"]["total_score"] == 7.0


# --- the folder -------------------------------------------------------------------------------------

def test_no_module_here_shares_a_name_with_the_projects_own_tools():
    ours = {p.name for p in (KAIWU18 / "tools").glob("*.py")} - {"__init__.py"}
    assert ours == {"train_env_conf_validate.py", "metrics_utils.py"}
    assert not ours & {p.name for p in (REPO_ROOT / "tools").glob("*.py")}
    assert not (REPO_ROOT / "tools" / "__init__.py").exists()  # the project's tools/ is scripts, not a package
    for top in KAIWU18.iterdir():  # nothing else here shadows a root-level name of the project
        if top.is_dir() and (top / "__init__.py").exists() and top.name != "tools":
            assert not (REPO_ROOT / top.name).exists(), top.name


HOST_IMPORTS = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import tools.metrics_utils, tools.train_env_conf_validate
from arena_proto.back_to_the_realm.custom_pb2 import RelativeDirection
print(json.dumps([tools.metrics_utils.__file__, tools.train_env_conf_validate.__file__]))
"""


@pytest.mark.parametrize("first", ["repo", "kaiwu18"])
def test_a_package_imports_the_platform_tools_wherever_the_host_puts_the_folder(first):
    roots = [str(REPO_ROOT), str(KAIWU18)] if first == "repo" else [str(KAIWU18), str(REPO_ROOT)]
    files = json.loads(run_python(HOST_IMPORTS, *roots))
    assert all(Path(f).resolve().is_relative_to(KAIWU18) for f in files)


def test_the_metrics_reader_reads_the_names_the_host_writes():
    from workflow import metrics_keys

    assert (metrics_utils.EPISODE_PREFIX, metrics_utils.EPISODE_SCORE_KEY) == (metrics_keys.EPISODE_PREFIX,
                                                                              metrics_keys.EPISODE_SCORE_KEY)
