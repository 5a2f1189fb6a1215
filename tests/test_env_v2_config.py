"""The run's [env] for back_to_the_realm_v2: its map files and the rule options docs/V2_RULES.md
names, set through the config (conf/configure_app.toml, `--set env.<key>=...`) and checked
through the real launcher and the real simulator."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT


def launch(run_dir: Path, *sets: str, config: str = "conf/ppo_v2.toml", timeout_s: float = 120,
           extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """./train.sh with `--set` for each of `sets` (one run of one train step)."""
    cmd = ["./train.sh", "--config", config, "--set", f'app.run_dir="{run_dir}"', "--set", 'app.run_name="r"',
           "--set", "app.max_train_steps=1", *extra]
    for line in sets:
        cmd += ["--set", line]
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout_s)


def open_map(flags_value=1) -> list:
    """An all-passable 128×128 map's Flags (walls on the border)."""
    flags = [flags_value] * (128 * 128)
    for i in range(128):
        for j in (0, 127):
            flags[j * 128 + i] = flags[i * 128 + j] = 0
    return flags


def write_map(tmp_path: Path, flags, name: str = "map_cherry.json") -> tuple[Path, Path]:
    map_file, obstacles = tmp_path / name, tmp_path / "obstacles.json"
    map_file.write_text(json.dumps({"Flags": flags}), encoding="utf-8")
    obstacles.write_text(json.dumps({"1": [[30, 10], [31, 10]]}), encoding="utf-8")
    return map_file, obstacles


# --- map files ---------------------------------------------------------------------------------

def not_utf8(tmp_path: Path) -> tuple[Path, Path]:
    map_file, obstacles = write_map(tmp_path, open_map())
    map_file.write_bytes(b"\xff\xfe" + map_file.read_bytes())
    return map_file, obstacles


def flags_of_sevens_and_strings(tmp_path: Path) -> tuple[Path, Path]:
    flags = open_map()
    flags[10 * 128 + 30] = 7  # under obstacle 1
    flags[10 * 128 + 31] = 7
    flags[200] = "1"
    return write_map(tmp_path, flags)


@pytest.mark.parametrize("make, named", [
    (not_utf8, "is not UTF-8 text (byte 0xff at offset 0)"),
    (flags_of_sevens_and_strings, "Flags must hold 0 (blocked) or 1 (passable) only; found '1' (1 cell, first "
                                  "Flags[200]), 7 (2 cells, first Flags[1310])"),
], ids=["not-utf8", "flags-not-0-or-1"])
def test_a_bad_v2_map_file_stops_the_launcher_naming_the_file_and_what_is_wrong(tmp_path, make, named):
    map_file, obstacles = make(tmp_path)
    result = launch(tmp_path / "runs", f'env.map_file="{map_file}"', f'env.obstacles_file="{obstacles}"')
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"map file {map_file}" in result.stderr and named in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "runs").exists()


def test_a_bad_v2_map_file_stops_a_package_run_the_same_way(tmp_path):
    """A package's train_env_conf.toml is checked on the run's map: the map's fault is [env]'s."""
    from tests.test_kaiwu_package import train
    from tests.test_kaiwu_v2_package import copy_package

    package = copy_package(tmp_path, "28.1.1")
    map_file, obstacles = flags_of_sevens_and_strings(tmp_path)
    result = train(package, tmp_path / "runs", "--set", f'env.map_file="{map_file}"',
                   "--set", f'env.obstacles_file="{obstacles}"', timeout_s=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"[env]: the simulator rejects it: map file {map_file}: Flags must hold 0" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "runs").exists()
