"""tools/scorecard.py and evaluation/scorecard.py: runs scored against a game's targets on the
real simulator, with real checkpoints and the reference on the same episodes; each figure is what
an evaluation of that run gives, the median and the worst are over the runs, a policy's scores
are played once (the cache), and what would stop it half-way is refused before anything plays."""
from __future__ import annotations

import statistics
from pathlib import Path

import pytest

import evaluation.session
from evaluation.inputs import InputError
from evaluation.scorecard import REFERENCE, Scorer, markdown, score_card
from evaluation.session import EvalRequest, open_session
from games.base import ScoreGap, ScoreRow
from realm.gorge_chase.presets import PRESETS
from tests.conftest import GORGE_MAPS, REPO_ROOT, needs_gorge_maps
from tests.tool_runs import run_tool

GORGE_CONF = REPO_ROOT / "conf" / "gorge_chase.toml"
TINY_MODEL = "[model]\nchannels = [4]\nkernel_sizes = [3]\nstrides = [2]\nhidden_size = 16\nconv_layout = \"plain\"\n"
SHORT = {"env_conf": {"map": [3, 4], "map_random": False, "max_step": 30}}
SHORT_TRAIN = {"env_conf": {"map": [21, 22], "map_random": False, "max_step": 30}}
ROWS = (ScoreRow("test-short", 3, (("full", 0.5), ("withheld", 0.4))),)
GAP = ScoreGap("test-short-train", "test-short", 2, 0.10)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[list[Path], Path]:
    """Two small untrained gorge_chase agents of different seeds, each in its run directory, and their config."""
    from agent.gorge_chase.ppo_agent import Agent
    from agent.gorge_chase.ppo_config import Settings
    from agent.model import ModelConfig

    root = tmp_path_factory.mktemp("runs")
    config = root / "small.toml"
    config.write_text(f'include = ["{GORGE_CONF}"]\n\n{TINY_MODEL}')
    model = ModelConfig(channels=[4], kernel_sizes=[3], strides=[2], hidden_size=16, conv_layout="plain")
    dirs = []
    for seed in (0, 1):
        run = root / f"seed-{seed}"
        Agent(settings=Settings(model=model), seed=seed).save_model(run / "ckpt" / "gorge_chase_ppo", 1)
        dirs.append(run)
    return dirs, config


@pytest.fixture
def short_presets(monkeypatch):
    monkeypatch.setitem(PRESETS, "test-short", SHORT)
    monkeypatch.setitem(PRESETS, "test-short-train", SHORT_TRAIN)


def test_each_figure_is_the_runs_evaluation_and_the_median_and_worst_are_over_runs(runs, short_presets, tmp_path):
    dirs, config = runs
    scorer = Scorer(dirs, config=config, workers=1, cache=tmp_path / "cache", report=lambda line: None)
    card = score_card(scorer, ROWS, GAP)
    assert card.runs == ["seed-0", "seed-1"]
    # the second run's withheld ratio, as tools/evaluate.py would play it
    session = open_session(EvalRequest(ckpt=dirs[1], config=config, preset="test-short", extra_info="withheld"))
    _, episodes = session.episodes(3, 0)
    played = session.play(episodes, reference=True, workers=1)
    agent = [r.total_score for _, r in sorted(played[session.keys()[0]].items())]
    planner = [r.total_score for _, r in sorted(played["planner"].items())]
    withheld = card.ratios[1]
    assert (withheld.label, withheld.value, withheld.aim) == ("test-short (3)", "withheld", "≥ 0.40")
    assert withheld.values[1] == pytest.approx(sum(agent) / sum(planner))
    for item in card.ratios + card.survival:
        assert item.median == pytest.approx(statistics.median(item.values)) and item.worst == min(item.values)
    assert [item.met for item in card.ratios] == [card.ratios[0].median >= 0.5, withheld.median >= 0.4]
    # the gap: 1 - held-out ratio / training maps' ratio, the held-out episodes the row's first two
    short, train = scorer.scores("test-short", 2, ("full",)), scorer.scores("test-short-train", 2, ("full",))
    gap = 1 - (short[("seed-0", "full")].mean / short[REFERENCE].mean) / (
        train[("seed-0", "full")].mean / train[REFERENCE].mean)
    assert card.gaps[0].values[0] == pytest.approx(gap) and card.gaps[0].worst == max(card.gaps[0].values)
    table = markdown(card).splitlines()
    assert table[-1].startswith(f"scorecard: {card.counts()[0]} of 6 targets met")
    assert {len(row.split(" | ")) for row in table[:-1] if row} == {8}  # every row as many cells as its header


def test_a_policy_scored_once_is_read_from_the_cache(runs, short_presets, tmp_path, monkeypatch):
    dirs, config = runs
    first = score_card(Scorer(dirs[:1], config=config, workers=1, cache=tmp_path, report=lambda line: None), ROWS, None)

    def refuse(*args, **kwargs):
        raise AssertionError("played again")

    monkeypatch.setattr(evaluation.session, "play_all", refuse)
    again = score_card(Scorer(dirs[:1], config=config, workers=1, cache=tmp_path, report=lambda line: None), ROWS, None)
    assert again == first
    with pytest.raises(AssertionError, match="played again"):
        score_card(Scorer(dirs[:1], config=config, workers=1, cache=tmp_path, replay=True), ROWS, None)


def test_the_tool_scores_the_games_own_targets_and_prints_the_count_last(runs, short_presets, tmp_path, monkeypatch):
    from games.gorge_chase import GorgeChase

    dirs, config = runs
    monkeypatch.setattr(GorgeChase, "scorecard", ROWS)
    monkeypatch.setattr(GorgeChase, "scorecard_gap", None)
    done = run_tool("tools/scorecard.py", "--runs", *map(str, dirs), "--config", str(config), "--workers", "1",
                    "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip().splitlines()
    assert printed[-1].startswith("scorecard: ") and "of 4 targets met on the median of 2 run(s)" in printed[-1]
    assert (tmp_path / "scorecard.md").read_text().strip().splitlines()[-1] == printed[-1]


def test_what_would_stop_it_half_way_is_refused_first(runs, tmp_path):
    dirs, config = runs
    with pytest.raises(InputError, match="preset gorge-heldout plays gorge_chase's official map files: give --maps-dir"):
        score_card(Scorer(dirs, config=config, cache=tmp_path), (ScoreRow("gorge-heldout", 2, (("full", 0.9),)),), None)
    with pytest.raises(InputError, match="--maps-dir: not a folder"):
        score_card(Scorer(dirs, config=config, maps_dir=tmp_path / "none", cache=tmp_path),
                   (ScoreRow("gorge-heldout", 2, (("full", 0.9),)),), None)
    with pytest.raises(InputError, match="the game sets no targets"):
        score_card(Scorer(dirs, config=config, cache=tmp_path), (), None)
    done = run_tool("tools/scorecard.py", "--runs", str(tmp_path / "no-run"))
    assert done.returncode == 2 and "--runs: no such run directory or checkpoint file" in done.stderr


@needs_gorge_maps
def test_gorge_chase_targets_name_its_presets_and_the_open_maps_need_the_folder(runs, tmp_path):
    from games.gorge_chase import GAME

    dirs, config = runs
    scorer = Scorer(dirs, config=config, maps_dir=GORGE_MAPS, cache=tmp_path)
    presets = [row.preset for row in GAME.scorecard] + [GAME.scorecard_gap.train, GAME.scorecard_gap.heldout]
    scorer.check(presets)
    assert [p for p in presets if scorer.needs_maps(p)] == ["gorge-heldout", "gorge-heldout-harder"]
    assert all(dict(row.targets) == {"full": 0.95, "withheld": 0.85} for row in GAME.scorecard)
