"""Generated maps: valid for every seed, identical for the same seed (SPEC §9)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import realm
from realm.back_to_the_realm.generator import CENTRE_TOLERANCE, MAX_PASSABLE, MIN_PASSABLE, MIN_POSITION_SPACING, generate_map, validate_map
from realm.back_to_the_realm.maps import Map, cell_center

# sha256 of passable bytes + positions bytes, as produced by generate_map(0).
SEED_0_SHA256 = "abf00938745faff3f63e1ca311fae93628213ead9bc9dac82d16232df1142ca1"


def fingerprint(m: Map) -> str:
    return hashlib.sha256(m.passable.tobytes() + m.positions.tobytes()).hexdigest()


def min_corridor_cover(passable: np.ndarray, side: int) -> np.ndarray:
    """True where a cell lies inside some fully passable side×side square."""
    ints = np.pad(passable.astype(np.int32), ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    full = (ints[side:, side:] - ints[:-side, side:] - ints[side:, :-side] + ints[:-side, :-side]) == side * side
    covered = np.zeros_like(passable)
    for dz in range(side):
        for dx in range(side):
            covered[dz : dz + full.shape[0], dx : dx + full.shape[1]] |= full
    return covered


def test_fifty_seeds_give_valid_maps():
    for seed in range(50):
        m = generate_map(seed)
        assert validate_map(m) == [], seed
        assert MIN_PASSABLE <= m.num_passable <= MAX_PASSABLE
        # corridors at least 6 cells wide: every passable cell sits in a passable 6×6 square
        assert (min_corridor_cover(m.passable, 6) == m.passable).all(), seed
        # special positions are cell centres
        assert all(cell_center(xc, zc) == tuple(p) for (xc, zc), p in zip(m.position_cells.tolist(), m.positions.tolist()))


def test_same_seed_same_bytes_and_pinned_fingerprint():
    a, b = generate_map(0), generate_map(0)
    assert a is not b
    assert a.passable.tobytes() == b.passable.tobytes() and a.positions.tobytes() == b.positions.tobytes()
    assert fingerprint(a) == SEED_0_SHA256


def test_different_seeds_differ():
    assert len({fingerprint(generate_map(s)) for s in range(5)}) == 5


def test_start_and_end_are_far_apart_and_buff_central():
    m = generate_map(3)
    assert m.distance_between(2, 1) >= 100
    xc, zc = m.position_cells[0]
    assert max(abs(xc - 64), abs(zc - 64)) <= CENTRE_TOLERANCE


def test_make_env_caches_generated_maps_per_seed():
    assert realm.make_env(map_seed=4).map is realm.make_env(map_seed=4).map
    assert realm.make_env(map_seed=4).map is not realm.make_env(map_seed=5).map


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="non-negative int"):
        generate_map(seed)


def _with(m: Map, passable=None, positions=None) -> Map:
    return Map(m.passable if passable is None else passable, m.positions if positions is None else positions, name="edited")


def test_validate_map_reports_each_problem():
    m = generate_map(1)
    assert validate_map(m) == []

    split = m.passable.copy()
    x0 = m.position_cells[0][0]
    split[:, x0 + 3] = False  # a wall through the whole map next to the buff
    problems = " ".join(validate_map(_with(m, passable=split)))
    assert "not connected" in problems

    close = m.positions.copy()
    xc, zc = m.position_cells[5]
    neighbours = [(xc + dx, zc + dz) for dx in range(-4, 5) for dz in range(-4, 5) if (dx or dz) and m.is_passable_cell(xc + dx, zc + dz)]
    close[6] = cell_center(*neighbours[0])
    assert any(f">= {MIN_POSITION_SPACING}" in p for p in validate_map(_with(m, positions=close)))

    far = max(range(1, 16), key=lambda i: max(abs(c - 64) for c in m.position_cells[i].tolist()))
    off_centre = m.positions.copy()
    off_centre[[0, far]] = m.positions[[far, 0]]
    assert any("from the centre" in p for p in validate_map(_with(m, positions=off_centre)))

    crowded = m.passable.copy()
    crowded[8:120, 8:120] = True
    assert any("passable cells" in p for p in validate_map(_with(m, passable=crowded)))
