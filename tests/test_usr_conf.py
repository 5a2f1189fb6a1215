"""usr_conf validation and chest resolution (SPEC §3)."""
from __future__ import annotations

import numpy as np
import pytest

from realm.back_to_the_realm.usr_conf import UsrConfError, parse_usr_conf


def rng(seed=0):
    return np.random.default_rng(seed)


def test_defaults():
    for conf in (None, {}, {"diy": {}}, {"diy": None}):
        episode = parse_usr_conf(conf, rng())
        assert (episode.start, episode.end, episode.treasure_random, episode.max_step, episode.talent_type) == (2, 1, 1, 2000, 1)
        assert episode.treasure_num == len(episode.treasure_id) == 8


def test_random_chests_are_distinct_and_avoid_start_and_end():
    for seed in range(30):
        episode = parse_usr_conf({"diy": {"start": 5, "end": 9, "treasure_num": 13}}, rng(seed))
        assert episode.treasure_id == sorted(set(range(1, 16)) - {5, 9})
        small = parse_usr_conf({"diy": {"start": 5, "end": 9, "treasure_num": 4}}, rng(seed))
        assert len(set(small.treasure_id)) == 4 and not {5, 9} & set(small.treasure_id)
        assert all(1 <= i <= 15 for i in small.treasure_id)


def test_random_draw_follows_the_generator():
    draw = lambda seed: parse_usr_conf({"diy": {"treasure_num": 5}}, rng(seed)).treasure_id  # noqa: E731
    assert draw(3) == draw(3)
    assert len({tuple(draw(s)) for s in range(20)}) > 1


def test_fixed_chests():
    episode = parse_usr_conf({"diy": {"treasure_random": 0, "treasure_id": [15, 3, 4], "max_step": 1000}}, rng())
    assert episode.treasure_id == [3, 4, 15] and episode.treasure_num == 3 and episode.max_step == 1000
    assert parse_usr_conf({"diy": {"treasure_random": 0}}, rng()).treasure_id == []
    assert parse_usr_conf({"diy": {"treasure_random": 0, "treasure_id": []}}, rng()).treasure_id == []
    assert parse_usr_conf({"diy": {"treasure_random": 1, "treasure_num": 0}}, rng()).treasure_id == []


def test_numpy_ints_are_accepted():
    episode = parse_usr_conf({"diy": {"start": np.int64(3), "end": np.int32(4), "treasure_random": 0, "treasure_id": [np.int64(5)]}}, rng())
    assert (episode.start, episode.end, episode.treasure_id) == (3, 4, [5])
    assert type(episode.start) is int and type(episode.treasure_id[0]) is int


@pytest.mark.parametrize(
    "diy, key, allowed",
    [
        ({"start": 0}, "start", "1..15"),
        ({"start": 16}, "start", "1..15"),
        ({"start": "2"}, "start", "1..15"),
        ({"start": 2.0}, "start", "1..15"),
        ({"start": True}, "start", "1..15"),
        ({"end": 2}, "end", "different from start"),
        ({"end": -1}, "end", "1..15"),
        ({"treasure_random": 2}, "treasure_random", "0 or 1"),
        ({"treasure_num": 14}, "treasure_num", "0..13"),
        ({"treasure_num": -1}, "treasure_num", "0..13"),
        ({"treasure_random": 0, "treasure_id": [3, 3]}, "treasure_id", "unique"),
        ({"treasure_random": 0, "treasure_id": [0]}, "treasure_id", "1..15"),
        ({"treasure_random": 0, "treasure_id": [16]}, "treasure_id", "1..15"),
        ({"treasure_random": 0, "treasure_id": [2]}, "treasure_id", "without the start and end"),
        ({"treasure_random": 0, "treasure_id": [1]}, "treasure_id", "without the start and end"),
        ({"treasure_random": 0, "treasure_id": 3}, "treasure_id", "list"),
        ({"treasure_random": 0, "treasure_id": ["3"]}, "treasure_id", "1..15"),
        ({"max_step": 0}, "max_step", "1..2000"),
        ({"max_step": 10.5}, "max_step", "1..2000"),
        ({"max_step": 10**12}, "max_step", "1..2000"),
        ({"treasure_random": 0, "treasure_id": [4, 9], "treasure_num": 5}, "treasure_num", "2 chest(s) of treasure_id"),
        ({"treasure_random": 1, "treasure_id": [4, 9]}, "treasure_id", "with treasure_random = 1"),
        ({"talent_type": 2}, "talent_type", "1"),
    ],
)
def test_invalid_values_name_key_and_allowed_values(diy, key, allowed):
    with pytest.raises(UsrConfError) as err:
        parse_usr_conf({"diy": diy}, rng())
    assert f"[{key!r}]" in str(err.value)
    assert allowed in str(err.value)
    assert isinstance(err.value, ValueError)


def test_unknown_keys_suggest_the_closest():
    with pytest.raises(UsrConfError, match="'strat'.*did you mean 'start'"):
        parse_usr_conf({"diy": {"strat": 3}}, rng())
    with pytest.raises(UsrConfError, match="'treasure_ids'.*did you mean 'treasure_id'"):
        parse_usr_conf({"diy": {"treasure_ids": [3]}}, rng())
    with pytest.raises(UsrConfError, match="'dyi'.*did you mean 'diy'"):
        parse_usr_conf({"dyi": {}}, rng())
    with pytest.raises(UsrConfError, match="allowed keys"):
        parse_usr_conf({"diy": {"zzz": 1}}, rng())


def test_wrong_container_types():
    with pytest.raises(UsrConfError, match="usr_conf must be a dict"):
        parse_usr_conf([("diy", {})], rng())
    with pytest.raises(UsrConfError, match=r"usr_conf\['diy'\] must be a dict"):
        parse_usr_conf({"diy": [1, 2]}, rng())
