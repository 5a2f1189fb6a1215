"""The curriculum: the episode settings (usr_conf) drawn for each stage of a run."""
import numpy as np
import pytest

from feature.back_to_the_realm.curriculum import CurriculumConfig, CurriculumSampler, CurriculumStage


# --- curriculum -----------------------------------------------------------------------------------

def _counts(cfg, n=400, episode=0, env_step=0, seed=0):
    sampler = CurriculumSampler(cfg, seed=seed)
    return [len(sampler.sample(episode, env_step)["diy"]["treasure_id"]) for _ in range(n)]


def test_curriculum_fixed_gives_valid_usr_conf():
    sampler = CurriculumSampler(CurriculumConfig(chest_num=5, max_step=700), seed=3)
    for _ in range(50):
        diy = sampler.sample()["diy"]
        assert (diy["start"], diy["end"], diy["max_step"], diy["treasure_random"]) == (2, 1, 700, 0)
        assert len(diy["treasure_id"]) == 5 == diy["treasure_num"] and len(set(diy["treasure_id"])) == 5
        assert not {1, 2} & set(diy["treasure_id"])


def test_curriculum_uniform_and_normal_stay_in_range():
    uniform = _counts(CurriculumConfig(chest_mode="uniform", chest_low=2, chest_high=4))
    assert set(uniform) == {2, 3, 4}
    normal = _counts(CurriculumConfig(chest_mode="normal", chest_mean=12.0, chest_std=4.0))
    assert min(normal) >= 0 and max(normal) == 13  # clipped at the top
    assert 9 < np.mean(normal) < 12


def test_curriculum_staged_switches_by_episode_and_env_step():
    cfg = CurriculumConfig(chest_mode="staged", stages=[
        CurriculumStage(until_episode=10, chest_num=0),
        CurriculumStage(until_env_step=5000, chest_num=3),
        CurriculumStage(chest_mode="uniform", chest_low=6, chest_high=7),
    ])
    assert set(_counts(cfg, 20, episode=9, env_step=99999)) == {0}
    assert set(_counts(cfg, 20, episode=10, env_step=4999)) == {3}
    assert set(_counts(cfg, 50, episode=10, env_step=5000)) == {6, 7}


def test_curriculum_random_positions_are_distinct_and_seeded():
    cfg = CurriculumConfig(start_mode="random", end_mode="random", start_ids=[3, 4], end_ids=[4, 5], chest_num=13)
    s1, s2 = CurriculumSampler(cfg, seed=7), CurriculumSampler(cfg, seed=7)
    draws = [s1.sample()["diy"] for _ in range(100)]
    assert draws == [s2.sample()["diy"] for _ in range(100)]
    for d in draws:
        assert d["start"] in (3, 4) and d["end"] in (4, 5) and d["start"] != d["end"]
        assert d["start"] not in d["treasure_id"] and d["end"] not in d["treasure_id"]
        assert len(d["treasure_id"]) == 13
    assert len({(d["start"], d["end"]) for d in draws}) == 3


@pytest.mark.parametrize("kwargs, message", [
    (dict(chest_num=14), "chest_num"),
    (dict(start=1, end=1), "start != end"),
    (dict(chest_mode="staged"), "stages"),
    (dict(chest_mode="staged", stages=[CurriculumStage(), CurriculumStage()]), "stages\\[0\\]"),
    (dict(chest_ids=[0, 3]), "chest_ids"),
])
def test_curriculum_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CurriculumConfig(**kwargs).validate()
