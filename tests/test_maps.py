"""Map loading, coordinates and BFS distances, pinned on the official map 1 (SPEC §1–§2)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from realm.back_to_the_realm.constants import GRID_SIZE, VIEW_RADIUS
from realm.back_to_the_realm.generator import validate_map
from realm.back_to_the_realm.maps import UNREACHABLE, MapError, bfs_distances, cell_center, cell_of, load_official_map

# SPEC §2: id -> (xc, zc)
SPEC_CELLS = {
    0: (59, 53), 1: (109, 105), 2: (15, 13), 3: (77, 11), 4: (103, 55), 5: (35, 113), 6: (73, 45), 7: (41, 19),
    8: (59, 117), 9: (59, 81), 10: (33, 53), 11: (101, 31), 12: (15, 97), 13: (107, 83), 14: (21, 73), 15: (13, 41),
}


def test_official_map_shape_and_positions(official_map):
    assert official_map.passable.shape == (GRID_SIZE, GRID_SIZE)
    assert official_map.num_passable == 4196
    for pid, cell in SPEC_CELLS.items():
        assert tuple(official_map.position_cells[pid]) == cell
        assert official_map.is_passable_cell(*cell)


@pytest.mark.parametrize("a, b, cells", [(2, 1, 186), (0, 1, 102), (2, 0, 84), (4, 5, 226)])
def test_spec_bfs_distances(official_map, a, b, cells):
    assert official_map.distance_between(a, b) == cells
    assert official_map.distance_between(b, a) == cells


def test_largest_distance_between_special_positions_is_4_to_5(official_map):
    pairs = {(a, b): official_map.distance_between(a, b) for a in range(16) for b in range(a + 1, 16)}
    assert max(pairs, key=pairs.get) == (4, 5)


def test_distance_fields_cover_the_one_component(official_map):
    xc, zc = official_map.position_cells[7]
    assert np.array_equal(bfs_distances(official_map.passable, int(xc), int(zc)), official_map.distance_fields[7])
    assert (official_map.distance_fields[:, ~official_map.passable] == UNREACHABLE).all()
    assert (official_map.distance_fields[:, official_map.passable] >= 0).all()  # one component


def test_bfs_on_small_grid_marks_unreachable_cells():
    grid = np.zeros((6, 6), dtype=bool)
    grid[1, 1:4] = True  # a row of 3 cells
    grid[4, 4] = True  # an island
    dist = bfs_distances(grid, 1, 1)
    assert dist[1, 1:4].tolist() == [0, 1, 2]
    assert dist[4, 4] == UNREACHABLE and dist[0, 0] == UNREACHABLE
    assert (bfs_distances(grid, 0, 0) == UNREACHABLE).all()  # blocked start


def test_cell_of_and_cell_center():
    assert cell_of(27500, 21500) == (59, 53)
    assert cell_of(-2250, -5250) == (0, 0)
    assert cell_of(-2250.001, 0) == (-1, 10)
    assert cell_center(59, 53) == (27500.0, 21500.0)
    for xc, zc in [(0, 0), (127, 5), (64, 100)]:
        assert cell_of(*cell_center(xc, zc)) == (xc, zc)


def test_padded_obstacle_holds_the_grid(official_map):
    padded = official_map.padded_obstacle
    assert padded.shape == (GRID_SIZE + 2 * VIEW_RADIUS,) * 2
    assert np.array_equal(padded[VIEW_RADIUS:-VIEW_RADIUS, VIEW_RADIUS:-VIEW_RADIUS], official_map.passable)
    assert padded[:VIEW_RADIUS].sum() == 0 and not padded.flags.writeable


def test_official_map_belongs_to_the_generated_family(official_map):
    assert validate_map(official_map) == []


def _write(path, data):
    path.write_text(json.dumps(data))
    return path


def test_loader_errors_name_the_problem(tmp_path, official_map_paths):
    map_file, positions_file = official_map_paths
    with pytest.raises(MapError, match="not found"):
        load_official_map(tmp_path / "nope.json", positions_file)
    bad_json = tmp_path / "map_1.json"
    bad_json.write_text("{")
    with pytest.raises(MapError, match="not valid JSON"):
        load_official_map(bad_json, positions_file)
    with pytest.raises(MapError, match="missing key 'Flags'"):
        load_official_map(_write(tmp_path / "map_1.json", {"CellWidth": 500, "Width": 128, "Height": 128}), positions_file)
    with pytest.raises(MapError, match="16384"):
        load_official_map(
            _write(tmp_path / "map_1.json", {"CellWidth": 500, "Width": 128, "Height": 128, "Flags": [1] * 10}), positions_file
        )
    with pytest.raises(MapError, match="no entry 'map_9'"):
        load_official_map(map_file, positions_file, map_key="map_9")
