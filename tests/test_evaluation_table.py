"""The evaluation's terminal table (evaluation.summary.format_table) shows the columns a game has
something to say in: robot_vacuum's rows have no chests, buffs or flashes, gorge_chase's have."""
from __future__ import annotations

from evaluation.summary import Summary, format_table

PLANNER_ROW = Summary("planner", None, 10, 810.1, 10.0, 1.0, 0.0, 0.0, 1000, 0.0, 0.0)


def _header(table: str) -> list[str]:
    return table.splitlines()[0].split()


def test_columns_with_nothing_in_any_row_are_left_out():
    vacuum = Summary("/runs/x/model.ckpt-195.pkl", 195, 10, 716.1, 190.0, 0.9, 0.0, 0.0, 920, 0.0, 0.0, 810.1, 0.884)
    table = format_table([PLANNER_ROW, vacuum])
    assert _header(table) == ["policy", "eps", "score", "mean", "±", "std", "win", "steps", "planner", "ratio"]
    assert table.splitlines()[3].split() == ["ckpt", "195", "10", "716.1", "±", "190.0", "90%", "920", "810.1", "0.884"]


def test_a_game_with_chests_buffs_and_flashes_keeps_every_column_in_its_place():
    gorge = Summary("/runs/x/model.ckpt-535.pkl", 535, 20, 1394.9, 476.5, 0.5, 7.6, 10, 423, 0.8, 3.3, 1778.5, 0.784)
    table = format_table([PLANNER_ROW, gorge])
    assert _header(table) == ["policy", "eps", "score", "mean", "±", "std", "win", "chests", "steps", "buff", "flash",
                              "planner", "ratio"]
    assert table.splitlines()[3].split() == ["ckpt", "535", "20", "1394.9", "±", "476.5", "50%", "7.6/10", "423",
                                             "0.80", "3.30", "1778.5", "0.784"]
    rows = table.splitlines()
    assert len({len(rows[0]), len(rows[2]), len(rows[3])}) == 1  # aligned
