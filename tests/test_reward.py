"""Each reward term on hand-built transitions."""
import dataclasses

import numpy as np
import pytest

from fake_obs import make_env_info, make_obs, make_score
from feature.back_to_the_realm.reward import TERMS, RewardConfig, reward_shaping
from feature.back_to_the_realm.unpack import StepView, step_view
from realm.back_to_the_realm.maps import cell_center

CFG = RewardConfig()
HERO = cell_center(50, 50)  # world (23000, 20000): the window's centre [25][25] is cell (50, 50)
EAST, NORTH, FLASH_EAST = 0, 2, 8


def open_window() -> np.ndarray:
    return np.ones((51, 51), dtype=np.float32)


def view(pos=HERO, end=100.0, chests=None, **kw) -> StepView:
    kw.setdefault("obstacle", open_window())
    return StepView(pos=pos, end_dist=end, chest_dists=dict(chests or {}), **kw)


def shaped(prev, cur, action, cfg=CFG):
    total, terms = reward_shaping(prev, cur, action, cfg)
    assert set(terms) == set(TERMS)
    assert total == pytest.approx(sum(terms.values()))
    return total, terms


def nonzero(terms):
    return {k: v for k, v in terms.items() if v != 0.0}


def test_free_step_toward_the_end():
    prev = view(end=100.0)
    cur = view(pos=(HERO[0] + 700, HERO[1]), end=98.6)
    _, terms = shaped(prev, cur, EAST)
    assert nonzero(terms) == pytest.approx({"end_progress": CFG.end_progress * 1.4, "step": CFG.step})


def test_walking_into_a_wall():
    wall = open_window()
    wall[25, 26] = 0  # the cell east of the hero
    prev = view(obstacle=wall)
    cur = view(obstacle=wall, memory=0.2)  # did not move; its cell was visited once already
    _, terms = shaped(prev, cur, EAST)
    assert nonzero(terms) == pytest.approx({"wall_bump": CFG.wall_bump, "revisit": CFG.revisit * 0.2,
                                           "step": CFG.step})
    # the same non-move northward (open) is no wall bump: the obstacle map must confirm it
    assert shaped(prev, cur, NORTH)[1]["wall_bump"] == 0.0


def test_short_move_with_buff_counts_against_the_buff_length():
    wall = open_window()
    wall[25, 27] = 0  # two cells east: reached only by the longer buffed step
    prev = view(obstacle=wall, speed_up=True)
    assert shaped(prev, view(pos=(HERO[0] + 700, HERO[1])), EAST)[1]["wall_bump"] == 0.0  # 0.7 of 1000
    assert shaped(prev, view(pos=(HERO[0] + 300, HERO[1])), EAST)[1]["wall_bump"] == CFG.wall_bump


def test_flash_into_a_wall():
    wall = open_window()
    wall[25, 25 + 16] = 0  # 8000 units east = 16 cells
    prev = view(obstacle=wall, flash_ready=True)
    cur = view(obstacle=wall, flash_ready=False, flash_count=1)
    _, terms = shaped(prev, cur, FLASH_EAST)
    assert terms["flash_wall"] == CFG.flash_wall and terms["wall_bump"] == 0.0
    assert terms["flash_progress"] == 0.0
    # during cooldown a flash action is a plain move: no flash penalty
    cooling = dataclasses.replace(prev, flash_ready=False)
    assert shaped(cooling, cur, FLASH_EAST)[1]["flash_wall"] == 0.0


def test_flash_progress_is_its_own_term():
    prev = view(end=100.0, chests={4: 50.0}, flash_ready=True)
    cur = view(pos=(HERO[0] + 8000, HERO[1]), end=70.0, chests={4: 40.0}, flash_ready=False, flash_count=1)
    _, terms = shaped(prev, cur, FLASH_EAST)
    assert terms["flash_progress"] == pytest.approx(CFG.flash_progress * (30.0 + 10.0))
    assert terms["end_progress"] == 0.0 and terms["chest_progress"] == 0.0 and terms["flash_wall"] == 0.0


def test_chest_pickup_and_no_penalty_for_the_next_target():
    prev = view(chests={5: 1.0, 7: 30.0}, chest_count=0)
    cur = view(pos=(HERO[0], HERO[1] + 700), chests={7: 31.0}, chest_count=1, end=100.0)
    _, terms = shaped(prev, cur, NORTH)
    assert terms["chest_pickup"] == CFG.chest_pickup
    assert terms["chest_progress"] == pytest.approx(CFG.chest_progress * 1.0)  # the last cell to chest 5


def test_progress_toward_the_nearest_chest():
    prev = view(chests={5: 10.0, 7: 30.0})
    cur = view(pos=(HERO[0], HERO[1] + 700), chests={5: 8.0, 7: 32.0})
    assert shaped(prev, cur, NORTH)[1]["chest_progress"] == pytest.approx(CFG.chest_progress * 2.0)


def test_buff_pickup():
    _, terms = shaped(view(buff_count=0), view(pos=(HERO[0] + 700, HERO[1]), buff_count=1), EAST)
    assert terms["buff_pickup"] == CFG.buff_pickup


def test_reaching_the_end():
    prev = view(end=1.0, chests={7: 20.0})
    cur = view(pos=(HERO[0] + 100, HERO[1]), end=None, chests={7: 21.0}, terminated=True)  # stopped early
    _, terms = shaped(prev, cur, EAST, dataclasses.replace(CFG, timeout=-2.0))
    assert terms["win"] == CFG.win and terms["timeout"] == 0.0
    assert terms["end_progress"] == pytest.approx(CFG.end_progress * 1.0)  # end reached: 0 cells left
    assert terms["chests_left"] == CFG.chests_left * 1
    assert terms["wall_bump"] == 0.0  # a short last step is the end, not a wall


def test_timeout():
    prev = view(chests={3: 5.0, 7: 20.0})
    cur = view(pos=(HERO[0] + 700, HERO[1]), chests={3: 5.0, 7: 20.0}, truncated=True)
    _, terms = shaped(prev, cur, EAST, dataclasses.replace(CFG, timeout=-2.0))
    assert terms["timeout"] == -2.0 and terms["win"] == 0.0
    assert terms["chests_left"] == CFG.chests_left * 2


def test_scale_multiplies_every_term():
    prev, cur = view(end=100.0), view(pos=(HERO[0] + 700, HERO[1]), end=98.0, memory=0.4, truncated=True)
    base_total, base = shaped(prev, cur, EAST)
    total, scaled = shaped(prev, cur, EAST, dataclasses.replace(CFG, scale=0.5))
    assert total == pytest.approx(0.5 * base_total)
    assert scaled == pytest.approx({k: 0.5 * v for k, v in base.items()})


def test_step_view_glue_detects_a_wall_from_observations():
    wall = open_window()
    wall[25, 26] = 0
    prev = step_view(make_obs(pos=HERO, obstacle=wall), make_score(), make_env_info(pos=HERO))
    cur = step_view(make_obs(pos=HERO, obstacle=wall), make_score(), make_env_info(pos=HERO))
    assert shaped(prev, cur, EAST)[1]["wall_bump"] == CFG.wall_bump


def test_reward_config_validation():
    with pytest.raises(ValueError, match="blocked_ratio"):
        RewardConfig(blocked_ratio=0.0).validate()


def test_every_term_is_declared_once_and_reward_toml_lists_its_default_weight():
    """A term is one TERM_TABLE entry: RewardConfig and the reported terms follow from it."""
    import dataclasses
    from pathlib import Path

    import toml

    from feature.back_to_the_realm.reward import TERM_TABLE

    assert [f.name for f in dataclasses.fields(RewardConfig)] == [*TERMS, "scale", "blocked_ratio"]
    assert {f.name: f.default for f in dataclasses.fields(RewardConfig)} == {
        **{t.name: t.weight for t in TERM_TABLE}, "scale": 1.0, "blocked_ratio": 0.5}
    written = toml.load(Path(__file__).resolve().parents[1] / "conf" / "back_to_the_realm.toml")["reward"]
    assert written == {f.name: f.default for f in dataclasses.fields(RewardConfig)}
