"""Shared fixtures. The official map data lives outside the repository, at ../shared/realm/."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

# One intra-op thread per test process, and in the processes it starts that do not set their own
# (a run's learner and aisrv take theirs from the config): the workers share two cores, and
# OpenMP threads spinning for a core another process holds cost more than they compute.
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
OFFICIAL_DIR = REPO_ROOT.parent / "shared" / "realm"
GORGE_MAPS = REPO_ROOT.parent / "shared" / "kaiwu_gorge" / "map" / "grids"
#: A test that reads gorge_chase's official open maps skips, saying where it looked, without them.
needs_gorge_maps = pytest.mark.skipif(not GORGE_MAPS.is_dir(), reason=f"the official gorge_chase maps are not at {GORGE_MAPS}")


@pytest.fixture(scope="session", autouse=True)
def warm_fork_server(tmp_path_factory):
    """One fork server per test process for the runs its tests launch (workflow/supervision/
    warm_fork_server.py): each launcher forks its learner and aisrv from it instead of starting a
    server that imports torch and reverb again (about 3 CPU-seconds a run). A launcher whose
    environment or session differs starts its own, as without it. REALM_TEST_FORK_SERVER=0 turns
    it off."""
    from workflow.supervision import warm_fork_server as warm
    from workflow.supervision.processes import start_warm_fork_server

    if os.environ.get("REALM_TEST_FORK_SERVER", "1") == "0":
        yield None
        return
    before = os.environ.get(warm.ENV_VAR)
    with start_warm_fork_server(tmp_path_factory.mktemp("fork_server")) as server:
        os.environ[warm.ENV_VAR] = str(server.path)
        try:
            yield server
        finally:
            if before is None:
                os.environ.pop(warm.ENV_VAR, None)
            else:
                os.environ[warm.ENV_VAR] = before


@pytest.fixture(scope="session")
def official_map_paths() -> tuple[Path, Path]:
    """(map_file, positions_file) of the official map 1; skips the test when they are absent."""
    map_file, positions_file = OFFICIAL_DIR / "map_1.json", OFFICIAL_DIR / "position_pool.json"
    if not (map_file.is_file() and positions_file.is_file()):
        pytest.skip(f"official map files not found under {OFFICIAL_DIR}")
    return map_file, positions_file


@pytest.fixture(scope="session")
def official_map(official_map_paths):
    """The official map 1, loaded once per test session (Map is immutable)."""
    from realm.back_to_the_realm.maps import load_official_map_cached

    map_file, positions_file = official_map_paths
    return load_official_map_cached(str(map_file), str(positions_file))


def pytest_collection_modifyitems(items):
    """Modules with more `slow` tests run first (stable otherwise): ./tests/run.sh hands whole
    modules to its workers in this order, so the long end-to-end modules start early instead of
    leaving one worker busy alone at the end."""
    slow: dict[str, int] = {}
    for item in items:
        slow[item.module.__name__] = slow.get(item.module.__name__, 0) + bool(item.get_closest_marker("slow"))
    first_seen = {name: i for i, name in enumerate(dict.fromkeys(item.module.__name__ for item in items))}
    items.sort(key=lambda item: (-slow[item.module.__name__], first_seen[item.module.__name__]))


def pytest_configure(config):
    import torch

    torch.set_num_threads(1)
