"""A game's scorecard over seeds: each run's newest checkpoint on every preset of the game's
targets (games.base.ScoreRow), each way of its information switch, beside the reference on the
same episodes; per row the ratio of each run, their median and worst against the target, the
rate of episodes lived to max_step against the reference's, and the train / held-out gap
(games.base.ScoreGap).

Why: a target read as "the median of 3 fresh seeds" is a table of many evaluations. This plays
each once (a policy's scores are kept under <out>/cache, keyed by its checkpoint file, the env
and the episodes, so a fourth seed plays only its own; not by the code: after a change to the
simulator or the agent's code, play again with --no-cache) and prints the table, the same for
every game that sets targets.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import games
from evaluation import inputs
from evaluation.episodes import run_config_file
from evaluation.inputs import InputError
from evaluation.session import EvalRequest, open_session
from evaluation.worker import PLANNER
from games.base import ScoreGap, ScoreRow
from workflow.checkpoints import ckpt_files

REFERENCE = "reference"


@dataclass(frozen=True)
class Scores:
    """One policy's episodes of one preset, in episode order."""

    scores: tuple[float, ...]
    survived: tuple[bool, ...]

    @classmethod
    def of_records(cls, records: dict) -> "Scores":
        ordered = [records[i] for i in sorted(records)]
        return cls(tuple(float(r.total_score) for r in ordered), tuple(bool(r.won) for r in ordered))

    def first(self, count: int) -> "Scores":
        return Scores(self.scores[:count], self.survived[:count])

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores)

    @property
    def survival(self) -> float:
        return sum(self.survived) / len(self.survived)


@dataclass(frozen=True)
class Line:
    """One target's figures: a value per run, the median and the worst, and whether it is met."""

    label: str  # "gorge-generated-heldout (60)"
    value: str  # the information switch's value ("full"), "" for a game without one
    aim: str  # "≥ 0.95", "> 0.00 (the reference's)", "≤ 10 %"
    values: tuple[float, ...]
    median: float
    worst: float
    met: bool


@dataclass
class Card:
    """The scorecard's lines in three parts, and the runs they are over."""

    runs: list[str]
    ratios: list[Line]
    survival: list[Line]
    gaps: list[Line]

    def counts(self) -> tuple[int, int]:
        lines = self.ratios + self.survival + self.gaps
        return sum(line.met for line in lines), len(lines)


class Scorer:
    """Plays the runs and the reference on a game's presets, once each (the cache), and keeps
    every preset's Scores: {"reference" or (run label, info value): Scores}."""

    def __init__(self, runs: list[Path], *, config: Path | None = None, maps_dir: Path | None = None, seed: int = 0,
                 workers: int | None = 1, cache: Path | None = None, replay: bool = False,
                 report: Callable[[str], None] = print):
        if not runs:
            raise InputError("--runs: give at least one run directory or checkpoint file")
        self.runs, self.config, self.maps_dir, self.seed = [Path(r) for r in runs], config, maps_dir, seed
        for run in self.runs:
            if not run.exists():
                raise InputError(f"--runs: no such run directory or checkpoint file: {run}")
        self.workers, self.cache, self.replay, self.report = workers, cache, replay, report
        self.played: dict[str, dict] = {}

    def scores(self, preset: str, count: int, values: tuple[str, ...]) -> dict:
        """The reference's and every run's Scores on the preset's first `count` episodes, each value of
        the information switch ("" for none), played once for the largest count asked."""
        have = self.played.get(preset)
        if have is None or len(have[REFERENCE].scores) < count or any((run, v) not in have for run in self.labels()
                                                                       for v in values):
            have = self.played[preset] = self._play(preset, count, values)
        return {key: scores.first(count) for key, scores in have.items()}

    def labels(self) -> list[str]:
        return [run_label(run) for run in self.runs]

    def _play(self, preset: str, count: int, values: tuple[str, ...]) -> dict:
        overrides = self._overrides(preset)
        reference = open_session(EvalRequest(agent="planner", config=self.config or self._run_config(), preset=preset,
                                             overrides=overrides))
        _, episodes = reference.episodes(count, self.seed)
        drawn = [[episode.seed, episode.usr_conf] for episode in episodes]
        env = {k: v for k, v in reference.env_kwargs.items() if k != reference.game.info_rule}
        out = {REFERENCE: self._cached({"policy": PLANNER, "episodes": drawn, "env": env},
                                       lambda: reference.play(episodes, reference=True, workers=self.workers)[PLANNER])}
        extra_info = ",".join(values) if values != ("",) else None
        for run, label in zip(self.runs, self.labels()):
            session = open_session(EvalRequest(ckpt=run, newest=True, config=self.config, preset=preset,
                                               overrides=overrides, extra_info=extra_info))
            mine = {k: v for k, v in session.env_kwargs.items() if k != session.game.info_rule}
            if mine != env:
                raise InputError(f"--runs {run}: its [env] {differences(mine, env)} differs from the reference's "
                                 f"episodes (the first run's); score the runs on one env: give --config")
            ckpt = session.ckpt
            for value, variant in zip(values, session.variants):
                one = dataclasses.replace(session, variants=[variant])
                key = {"policy": str(ckpt.resolve()), "size": ckpt.stat().st_size, "mtime_ns": ckpt.stat().st_mtime_ns,
                       "episodes": drawn, "env": variant[1]}
                out[(label, value)] = self._cached(
                    key, lambda: one.play(episodes, reference=False, workers=self.workers)[str(ckpt) + variant[0]])
            self.report(f"{preset}: {label} played ({ckpt.name})")
        return out

    def _overrides(self, preset: str) -> tuple[str, ...]:
        """--maps-dir as [env] maps_dir for the presets that play the official map files."""
        return (f"env.maps_dir={json.dumps(str(self.maps_dir))}",) if self.needs_maps(preset) else ()

    def needs_maps(self, preset: str) -> bool:
        game = self.game
        try:
            game.check_preset_env(preset, {"maps_folder": None})
        except ValueError:
            return True
        return False

    def check(self, presets: list[str]) -> None:
        """Refuse, before anything is played, what would stop the scorecard half-way."""
        game = self.game
        for preset in presets:
            if preset not in game.presets():
                raise InputError(f"{game.name}'s scorecard names preset {preset!r}, which the game lacks")
            if self.needs_maps(preset) and self.maps_dir is None:
                raise InputError(f"preset {preset} plays {game.name}'s official map files: give --maps-dir "
                                 f"(the folder of {game.maps_dir_holds})")
        if self.maps_dir is not None and not Path(self.maps_dir).is_dir():
            raise InputError(f"--maps-dir: not a folder: {self.maps_dir}")

    @functools.cached_property
    def game(self):
        """The game of the first run's checkpoint."""
        platform = inputs.evaluated_platform("ckpt", self.runs[0], None, None, inputs.config_source(self.config))
        return games.of_platform(platform)

    def _run_config(self) -> Path | None:
        """The first run's effective config: the reference's env when --config is not given."""
        return run_config_file(inputs.find_checkpoints(self.runs[0])[-1])

    def _cached(self, key: dict, play: Callable[[], dict]) -> Scores:
        path = None
        if self.cache is not None:
            digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:24]
            path = self.cache / f"{digest}.json"
            if path.is_file() and not self.replay:
                kept = json.loads(path.read_text())
                return Scores(tuple(kept["scores"]), tuple(kept["survived"]))
        scores = Scores.of_records(play())
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"key": key, "scores": scores.scores, "survived": scores.survived},
                                       default=str))
        return scores


def score_card(scorer: Scorer, rows: tuple[ScoreRow, ...], gap: ScoreGap | None) -> Card:
    """Every row's ratio and survival lines over the runs, and the gap's lines."""
    if not rows:
        raise InputError("the game sets no targets: its scorecard is empty (games.base.Game.scorecard)")
    scorer.check([row.preset for row in rows] + ([gap.train, gap.heldout] if gap else []))
    labels = scorer.labels()
    ratios, survival, gaps = [], [], []
    for row in rows:
        values = tuple(value for value, _ in row.targets)
        played = scorer.scores(row.preset, row.episodes, values)
        reference = played[REFERENCE]
        for value, target in row.targets:
            name = f"{row.preset} ({row.episodes})"
            runs = tuple(played[(label, value)].mean / reference.mean for label in labels)
            ratios.append(line(name, value, f"≥ {target:.2f}", runs, lambda median: median >= target, worst=min))
            lived = tuple(played[(label, value)].survival for label in labels)
            survival.append(line(name, value, f"> {reference.survival:.2f} (the reference's)", lived,
                                 lambda median: median > reference.survival, worst=min))
    if gap is not None:
        values = tuple(dict.fromkeys(value for row in rows for value, _ in row.targets))
        train = scorer.scores(gap.train, gap.episodes, values)
        heldout = scorer.scores(gap.heldout, gap.episodes, values)
        for value in values:
            runs = tuple(1 - (heldout[(label, value)].mean / heldout[REFERENCE].mean)
                         / (train[(label, value)].mean / train[REFERENCE].mean) for label in labels)
            name = f"{gap.train} against {gap.heldout} ({gap.episodes})"
            gaps.append(line(name, value, f"≤ {gap.most:.0%}", runs, lambda median: median <= gap.most, worst=max))
    return Card(labels, ratios, survival, gaps)


def line(label: str, value: str, aim: str, values: tuple[float, ...], meets: Callable[[float], bool], worst) -> Line:
    median = statistics.median(values)
    return Line(label, value, aim, values, median, worst(values), bool(meets(median)))


def run_label(run: Path) -> str:
    """A run's column name: its run directory's name, else the checkpoint file's."""
    run = Path(run)
    if run.is_file():
        found = ckpt_files.run_dir_of(run.parent)
        return found.name if found is not None else run.name
    return run.name


def differences(mine: dict, theirs: dict) -> str:
    keys = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    return ", ".join(f"{k}={mine.get(k)!r} (the reference's {theirs.get(k)!r})" for k in keys)


def markdown(card: Card) -> str:
    """The card as three markdown tables and its count."""
    head = " | ".join(card.runs)
    out = []
    for title, lines, as_percent in (("ratio to the reference", card.ratios, False),
                                     ("lived to max_step (share of episodes)", card.survival, False),
                                     ("train / held-out gap", card.gaps, True)):
        if not lines:
            continue
        switch = any(item.value for item in lines)  # a column for the information switch's value
        out += [f"| {title} | " + ("information | " if switch else "") + f"target | {head} | median | worst | met |",
                "| --- | " + ("--- | " if switch else "") + "--- | " + " | ".join("---" for _ in card.runs) +
                " | --- | --- | --- |"]
        for item in lines:
            shown = [number(v, as_percent) for v in item.values]
            out.append(f"| {item.label} | " + (f"{item.value} | " if switch else "") + f"{item.aim} | " +
                       " | ".join(shown) +
                       f" | **{number(item.median, as_percent)}** | {number(item.worst, as_percent)} | "
                       f"{'yes' if item.met else 'no'} |")
        out.append("")
    met, total = card.counts()
    out.append(f"scorecard: {met} of {total} targets met on the median of {len(card.runs)} run(s) "
               f"(ratios {sum(x.met for x in card.ratios)} of {len(card.ratios)}, survival "
               f"{sum(x.met for x in card.survival)} of {len(card.survival)}, gap {sum(x.met for x in card.gaps)} "
               f"of {len(card.gaps)})")
    return "\n".join(out)


def number(value: float, as_percent: bool) -> str:
    return f"{value:+.1%}" if as_percent else f"{value:.3f}"


def as_json(card: Card) -> dict:
    return {"runs": card.runs, "met": card.counts()[0], "targets": card.counts()[1],
            **{part: [dataclasses.asdict(x) for x in getattr(card, part)] for part in ("ratios", "survival", "gaps")}}


def write_card(card: Card, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "scorecard.md", out / "scorecard.json"]
    paths[0].write_text(markdown(card) + "\n")
    paths[1].write_text(json.dumps(as_json(card), indent=1) + "\n")
    return paths

