"""gorge_chase 15.0.1 packages that the platform hosts and that differ from the official template
as a competitor's do, hosted here too: copies of ../shared/kaiwu_gorge's package whose agent_ppo
packs each sample into one declared field with its own converters (no Config.SAMPLE_DIM), keeps
a key of its own in conf/configure_app.toml, and preloads a checkpoint it ships. One trained run
is shared by the module."""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import torch

from tests.official_packages import KAIWU_GORGE, copy_official, fingerprint, set_conf_line, tool, train
from workflow import platforms
from workflow.config import PACKAGE_DEFAULTS, ConfigError, load_config, package_own_keys
from workflow.host.kaiwu_package import preload_dir
from workflow.platforms.v15 import PLATFORM_ROOT

#: a handful of small train steps (as tests/test_gorge_package.py trains the official ppo)
SMALL = ("--set", "app.max_train_steps=3", "--set", "app.replay_buffer_capacity=16", "--set", "app.train_batch_size=4")
#: a short evaluation episode on map 1
SHORT = '{"env_conf": {"map": [1], "max_step": 60}}'
#: the package's own [app] key, which its agent reads from CONFIG
OWN_KEY, OWN_VALUE = "preload_model_path", "agent_ppo/ckpt/pretrained.pkl"

# agent_ppo/conf/conf.py: the packed row's width, which the official fields add up to
PACKED_WIDTH = """    VALUE_NUM = 1

    # One packed row per sample: obs, legal_action, prob and seven scalars
    PACKED_SEQUENCE_DIM = DIM_OF_OBSERVATION + 2 * ACTION_NUM + 7
"""

# agent_ppo/feature/definition.py: the frame keeps the official fields; SampleData is one packed field
PACKED_SAMPLES = '''

# SampleData crosses to the learner as one packed row, with the package's own converters
SampleData = create_cls("SampleData", npdata=Config.PACKED_SEQUENCE_DIM)


def sample_process(list_frame_data):
    frames = _official_sample_process(list_frame_data)
    return [SampleData(npdata=np.concatenate([np.asarray(getattr(frame, name), dtype=np.float32).reshape(-1)
                                              for name in FrameData.FIELD_DIMS])) for frame in frames]


@attached
def SampleData2NumpyData(g_data):
    return np.asarray(g_data.npdata, dtype=np.float32)


@attached
def NumpyData2SampleData(s_data):
    fields, at = {}, 0
    for name, dim in FrameData.FIELD_DIMS.items():
        fields[name] = s_data[at:at + dim]
        at += dim
    return FrameData(**fields)
'''

# agent_ppo/agent.py: the agent reads the package's own key from the platform's CONFIG
READS_OWN_KEY = """        self.logger = logger
        from kaiwudrl.common.config.config_control import CONFIG

        if logger is not None:
            logger.info(f"own key preload_model_path = {CONFIG.preload_model_path!r}")
"""


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def packed_package(dest: Path, own_key: bool = True) -> Path:
    """The official package with agent_ppo's samples packed into SampleData(npdata=...) by its own
    converters; with `own_key`, `preload_model_path` in its configure_app.toml, read by its agent."""
    package = copy_official(KAIWU_GORGE, dest, "agent_ppo")
    code = package / "agent_ppo"
    replace_once(code / "conf" / "conf.py", "    VALUE_NUM = 1\n", PACKED_WIDTH)
    definition = code / "feature" / "definition.py"
    replace_once(definition, 'SampleData = create_cls(\n    "SampleData",', 'FrameData = create_cls(\n    "FrameData",')
    replace_once(definition, "def sample_process(", "def _official_sample_process(")
    definition.write_text(definition.read_text(encoding="utf-8") + PACKED_SAMPLES, encoding="utf-8")
    workflow = code / "workflow" / "train_workflow.py"
    replace_once(workflow, "import SampleData, sample_process", "import FrameData, sample_process")
    replace_once(workflow, "frame = SampleData(", "frame = FrameData(")
    if own_key:
        replace_once(code / "agent.py", "        self.logger = logger\n", READS_OWN_KEY)
        set_conf_line(package / "conf" / "configure_app.toml", OWN_KEY, f'"{OWN_VALUE}"')
    return package


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(package, runs dir, fingerprint before, the train test's result): the packed package after
    `--train-test` with three small train steps."""
    root = tmp_path_factory.mktemp("packed")
    package = packed_package(root / "package")
    before = fingerprint(package)
    return package, root / "runs", before, train(package, root / "runs", "--train-test", *SMALL)


def ckpt_dir(runs: Path) -> Path:
    return runs / "r" / "ckpt" / "gorge_chase_ppo"


def ckpt_ids(runs: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1].split(".")[0]) for p in ckpt_dir(runs).glob("model.ckpt-*.pkl"))


@pytest.mark.slow
def test_a_package_with_its_own_converters_and_its_own_key_trains_and_checkpoints(trained):
    """Before: exit 2, 'Config.SAMPLE_DIM must be a positive int ... got None' (and 'unknown key
    app.preload_model_path'). Now the row width is SampleData's declared one, the key is named once
    and reaches the package's CONFIG in the learner and the aisrv."""
    package, runs, before, result = trained
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train test passed" in result.stderr
    ids = ckpt_ids(runs)
    assert ids[0] == 0 and ids[-1] >= 1
    notices = [line for line in result.stderr.splitlines() if "keys the platform does not read" in line]
    assert len(notices) == 1 and OWN_KEY in notices[0]
    assert str((package / "conf" / "configure_app.toml").resolve()) in notices[0]
    read = f"own key preload_model_path = {OWN_VALUE!r}"
    assert read in (runs / "r" / "log" / "learner.log").read_text()
    assert any(read in log.read_text() for log in (runs / "r" / "log").glob("aisrv*.log"))
    assert fingerprint(package) == before


@pytest.mark.slow
def test_its_checkpoint_is_evaluated_with_its_own_exploit(trained, tmp_path):
    package, runs, before, result = trained
    assert result.returncode == 0, result.stderr
    out = tool("tools/evaluate.py", "--package", str(package), "--ckpt", str(ckpt_dir(runs) / "model.ckpt-1.pkl"),
               "--episodes", "1", "--usr-conf", SHORT, "--no-planner", "--quiet", "--out", str(tmp_path / "eval"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert len((tmp_path / "eval" / "episodes.csv").read_text().splitlines()) == 2 and "ckpt 1" in out.stdout
    assert fingerprint(package) == before


def state(path: Path) -> dict:
    return torch.load(path, map_location="cpu")


@pytest.mark.slow
def test_a_package_preloading_its_own_checkpoint_continues_from_it(trained, tmp_path):
    """configure_app.toml's preload_model_dir = "{agent_name}/ckpt" is the package's agent_ppo/ckpt
    (before: 'no checkpoint (model.ckpt-N.pkl) in {agent_name}/ckpt', read from the project root)."""
    package, runs, _, result = trained
    assert result.returncode == 0, result.stderr
    newest = ckpt_ids(runs)[-1]
    preloading = tmp_path / "package"
    shutil.copytree(package, preloading)
    (preloading / "agent_ppo" / "ckpt").mkdir()
    shipped = preloading / "agent_ppo" / "ckpt" / f"model.ckpt-{newest}.pkl"
    shutil.copy(ckpt_dir(runs) / f"model.ckpt-{newest}.pkl", shipped)
    conf = preloading / "conf" / "configure_app.toml"
    set_conf_line(conf, "preload_model", "true")
    set_conf_line(conf, "preload_model_dir", '"{agent_name}/ckpt"')
    set_conf_line(conf, "preload_model_id", str(newest))
    more = train(preloading, tmp_path / "runs", "--train-test", *SMALL)
    assert more.returncode == 0, more.stdout + more.stderr
    learner_log = (tmp_path / "runs" / "r" / "log" / "learner.log").read_text()
    assert f"preloaded model.ckpt-{newest}.pkl from {preloading.resolve() / 'agent_ppo' / 'ckpt'}" in learner_log
    first = state(ckpt_dir(tmp_path / "runs") / "model.ckpt-0.pkl")  # written before training: the preloaded weights
    preloaded, fresh = state(shipped), state(ckpt_dir(runs) / "model.ckpt-0.pkl")
    assert all(torch.equal(first[name], preloaded[name]) for name in preloaded)
    assert not all(torch.equal(fresh[name], preloaded[name]) for name in preloaded)  # not the untrained start


def test_sample_dim_that_disagrees_with_the_declared_widths_stops_the_run_naming_both(tmp_path):
    """Before: the package's Config.SAMPLE_DIM was taken as it is (rows of 64 against 63 declared)."""
    package = packed_package(tmp_path / "package", own_key=False)
    replace_once(package / "agent_ppo" / "conf" / "conf.py", "    VALUE_NUM = 1\n", "    VALUE_NUM = 1\n    SAMPLE_DIM = 64\n")
    result = train(package, tmp_path / "runs", "--train-test", timeout_s=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert ("agent_ppo/feature/definition.py: SampleData declares rows of 63 values (npdata=63), but "
            "agent_ppo/conf/conf.py sets Config.SAMPLE_DIM = 64") in result.stderr
    assert not (tmp_path / "runs").exists()


def test_the_row_width_of_own_converters_is_config_sample_dim_else_the_declared_widths():
    import sys

    sys.path.insert(0, str(PLATFORM_ROOT))
    try:
        from common_python.utils.common_func import create_cls
    finally:
        sys.path.remove(str(PLATFORM_ROOT))
    Packed = create_cls("HostingTestSample", npdata=5)
    own = {"SampleData": Packed, "SampleData2NumpyData": lambda s: s.npdata, "NumpyData2SampleData": Packed}
    version = platforms.get("15")

    class Stated:
        SAMPLE_DIM = 5

    assert version.sample_rows(own, object)[1] == 5  # no SAMPLE_DIM: the declared widths
    assert version.sample_rows(own, Stated)[1] == 5
    Stated.SAMPLE_DIM = 6
    with pytest.raises(ValueError, match=r"declares rows of 5 values \(npdata=5\), but .* Config.SAMPLE_DIM = 6"):
        version.sample_rows(own, Stated)
    loose = {**own, "SampleData": create_cls("HostingTestLoose", npdata=None)}
    assert version.sample_rows(loose, Stated)[1] == 6  # no declared widths: SAMPLE_DIM alone
    with pytest.raises(ValueError, match="stated nowhere"):
        version.sample_rows(loose, object)


def test_preload_model_dir_is_read_inside_a_hosted_package(tmp_path):
    package = copy_official(KAIWU_GORGE, tmp_path / "package", "agent_ppo")
    layout = platforms.get("15").package_layout(package, "ppo")
    hosted = load_config(package / "conf" / "configure_app.toml", [f'app.package="{package}"'], base=PACKAGE_DEFAULTS).app
    assert preload_dir(hosted, package, layout) == package / "agent_ppo" / "ckpt"  # the template's {agent_name}/ckpt
    elsewhere = dataclasses.replace(hosted, preload_model_dir=str(tmp_path / "elsewhere"))
    assert preload_dir(elsewhere, package, layout) == tmp_path / "elsewhere"
    project = load_config(None, ['app.preload_model_dir="runs/old/ckpt"']).app
    assert preload_dir(project, package, layout) == Path("runs/old/ckpt")  # the project's keeps its meaning


def test_a_packages_own_keys_are_kept_for_its_config_and_other_configs_stay_strict(tmp_path):
    package = copy_official(KAIWU_GORGE, tmp_path / "package", "agent_ppo")
    conf = package / "conf" / "configure_app.toml"
    set_conf_line(conf, OWN_KEY, f'"{OWN_VALUE}"')
    assert package_own_keys(conf) == [OWN_KEY]
    cfg = load_config(conf, [f'app.package="{package}"'], base=PACKAGE_DEFAULTS, own_keys=package_own_keys(conf))
    assert cfg.package_keys == {OWN_KEY: OWN_VALUE} and cfg.to_dict()["app"][OWN_KEY] == OWN_VALUE
    with pytest.raises(ConfigError, match=r"unknown key 'app.preload_model_path' \(did you mean 'preload_model'\?\)"):
        load_config(conf, [f'app.package="{package}"'], base=PACKAGE_DEFAULTS)  # not the package's own file
    own = tmp_path / "mine.toml"
    own.write_text(f'[app]\n{OWN_KEY} = "{OWN_VALUE}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown key 'app.preload_model_path' \(did you mean 'preload_model'\?\)"):
        load_config(own)


def test_an_evaluation_hands_the_package_its_own_config(tmp_path):
    """In tools/evaluate.py the package's CONFIG holds its own configure_app.toml's [app] (its own
    keys too) and the game it plays, as in training (before: only app = "back_to_the_realm" and algo)."""
    from evaluation.episodes import package_eval_config

    package = packed_package(tmp_path / "pkg")
    values = package_eval_config(package, "ppo", platforms.detect(package))
    assert values["app"] == "gorge_chase" and values["algo"] == "ppo" and values["svr_name"] == "eval"
    assert values[OWN_KEY] == OWN_VALUE
