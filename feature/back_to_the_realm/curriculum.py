"""Episode settings for training: one `usr_conf` per reset, drawn by a seeded sampler.

Chest count, by `chest_mode`:
  fixed    always `chest_num`
  uniform  an integer in [chest_low, chest_high]
  normal   round(N(chest_mean, chest_std)) clipped to [chest_low, chest_high]
  staged   `stages` in order: each applies until the caller's count of finished episodes reaches
           its `until_episode` (or env steps its `until_env_step`); the last stage applies from then on.
Chest positions are drawn here (not by the env) from `chest_ids` minus start and end, so the
sampler's seed alone fixes every episode's layout. Start and end are fixed ids or drawn from
`start_ids` / `end_ids` (never equal).

TOML example of a staged curriculum:
    [curriculum]
    chest_mode = "staged"
    [[curriculum.stages]]
    until_episode = 2000
    chest_mode = "fixed"
    chest_num = 0
    [[curriculum.stages]]
    chest_mode = "uniform"
    chest_high = 13
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from feature.back_to_the_realm.constants import DEFAULT_MAX_STEP, NUM_POSITIONS, TALENT_TYPE_SUPER_FLASH

SLOT_IDS = list(range(1, NUM_POSITIONS))  # ids that may be start, end or chest (0 is the buff)
MAX_CHESTS = NUM_POSITIONS - 3  # 15 slots minus start and end


def _check_chest_setting(mode: str, num: int, low: int, high: int, std: float) -> None:
    if mode == "fixed" and not 0 <= num <= MAX_CHESTS:
        raise ValueError(f"chest_num must be in 0..{MAX_CHESTS}, got {num}")
    if not 0 <= low <= high <= MAX_CHESTS:
        raise ValueError(f"chest_low/chest_high must satisfy 0 <= low <= high <= {MAX_CHESTS}, got {low}, {high}")
    if mode == "normal" and std < 0:
        raise ValueError(f"chest_std must be >= 0, got {std}")


@dataclass
class CurriculumStage:
    """One stage of a staged curriculum: a chest-count setting and when it stops applying."""

    until_episode: int | None = None
    until_env_step: int | None = None
    chest_mode: Literal["fixed", "uniform", "normal"] = "fixed"
    chest_num: int = 0
    chest_low: int = 0
    chest_high: int = MAX_CHESTS
    chest_mean: float = 6.5
    chest_std: float = 3.0

    def validate(self):
        if self.until_episode is not None and self.until_env_step is not None:
            raise ValueError("a stage ends by until_episode or until_env_step, not both")
        _check_chest_setting(self.chest_mode, self.chest_num, self.chest_low, self.chest_high, self.chest_std)


@dataclass
class CurriculumConfig:
    chest_mode: Literal["fixed", "uniform", "normal", "staged"] = "fixed"
    chest_num: int = 8
    chest_low: int = 0
    chest_high: int = MAX_CHESTS
    chest_mean: float = 6.5
    chest_std: float = 3.0
    stages: list[CurriculumStage] = field(default_factory=list)
    chest_ids: list[int] = field(default_factory=lambda: list(SLOT_IDS))  # where chests may be placed
    start_mode: Literal["fixed", "random"] = "fixed"
    start: int = 2
    start_ids: list[int] = field(default_factory=lambda: list(SLOT_IDS))
    end_mode: Literal["fixed", "random"] = "fixed"
    end: int = 1
    end_ids: list[int] = field(default_factory=lambda: list(SLOT_IDS))
    max_step: int = DEFAULT_MAX_STEP

    @classmethod
    def from_dict(cls, values: dict) -> "CurriculumConfig":
        """The section from plain values (its stages as dicts, as TOML and settings.json hold them)."""
        values = dict(values)
        if "stages" in values:
            values["stages"] = [CurriculumStage(**stage) for stage in values["stages"]]
        return cls(**values)

    def start_end_pairs(self) -> tuple[list[int], list[int], list[int]]:
        """(starts that have an end != start, candidate starts, candidate ends)."""
        starts = [self.start] if self.start_mode == "fixed" else list(self.start_ids)
        ends = [self.end] if self.end_mode == "fixed" else list(self.end_ids)
        return [s for s in starts if any(e != s for e in ends)], starts, ends

    def validate(self):
        if self.chest_mode == "staged":
            if not self.stages:
                raise ValueError("chest_mode 'staged' needs at least one entry in stages")
            for i, stage in enumerate(self.stages):
                try:
                    stage.validate()
                except ValueError as e:
                    raise ValueError(f"stages[{i}]: {e}") from e
                if i < len(self.stages) - 1 and stage.until_episode is None and stage.until_env_step is None:
                    raise ValueError(f"stages[{i}] needs until_episode or until_env_step (only the last may have none)")
        else:
            _check_chest_setting(self.chest_mode, self.chest_num, self.chest_low, self.chest_high, self.chest_std)
        for key in ("chest_ids", "start_ids", "end_ids"):
            ids = getattr(self, key)
            if any(i not in SLOT_IDS for i in ids) or len(set(ids)) != len(ids):
                raise ValueError(f"{key} must be distinct ids in 1..{NUM_POSITIONS - 1}, got {ids}")
        for key in ("start", "end"):
            if getattr(self, key) not in SLOT_IDS:
                raise ValueError(f"{key} must be in 1..{NUM_POSITIONS - 1}, got {getattr(self, key)}")
        valid_starts, starts, ends = self.start_end_pairs()
        if not valid_starts:
            raise ValueError(f"no start/end pair with start != end: starts {starts}, ends {ends}")
        if self.max_step < 1:
            raise ValueError(f"max_step must be >= 1, got {self.max_step}")


class CurriculumSampler:
    """Draws each episode's `usr_conf` from a CurriculumConfig with its own numpy Generator."""

    def __init__(self, cfg: CurriculumConfig, seed: int | None = 0):
        cfg.validate()
        self.cfg = cfg
        self.rng = np.random.default_rng(seed)

    def stage(self, episode: int, env_step: int) -> CurriculumStage | CurriculumConfig:
        """The setting that applies now: a stage when staged, else the config itself."""
        if self.cfg.chest_mode != "staged":
            return self.cfg
        for stage in self.cfg.stages:
            if stage.until_episode is not None and episode < stage.until_episode:
                return stage
            if stage.until_env_step is not None and env_step < stage.until_env_step:
                return stage
            if stage.until_episode is None and stage.until_env_step is None:
                return stage
        return self.cfg.stages[-1]

    def _chest_count(self, s: CurriculumStage | CurriculumConfig) -> int:
        if s.chest_mode == "fixed":
            return s.chest_num
        if s.chest_mode == "uniform":
            return int(self.rng.integers(s.chest_low, s.chest_high + 1))
        return int(np.clip(round(self.rng.normal(s.chest_mean, s.chest_std)), s.chest_low, s.chest_high))

    def _start_end(self) -> tuple[int, int]:
        starts, _, ends = self.cfg.start_end_pairs()
        start = int(self.rng.choice(starts))
        end = int(self.rng.choice([e for e in ends if e != start]))
        return start, end

    def sample(self, episode: int = 0, env_step: int = 0) -> dict:
        """usr_conf for the next episode; `episode` / `env_step`: episodes finished and env steps so far."""
        start, end = self._start_end()
        pool = [i for i in self.cfg.chest_ids if i not in (start, end)]
        count = min(self._chest_count(self.stage(episode, env_step)), len(pool))
        chests = sorted(int(i) for i in self.rng.choice(pool, size=count, replace=False)) if count else []
        return {"diy": {
            "start": start,
            "end": end,
            "treasure_random": 0,
            "treasure_num": len(chests),
            "treasure_id": chests,
            "max_step": self.cfg.max_step,
            "talent_type": TALENT_TYPE_SUPER_FLASH,
        }}


def probe_usr_confs(cfg: CurriculumConfig, seed: int, draws_per_stage: int = 4) -> list[tuple[str, str, dict]]:
    """(section, when, usr_conf) drawn at progress points that select every stage: what a host resets
    its simulator with before a run starts, so a curriculum the simulator rejects fails there."""
    points, episode, env_step = [(0, 0)], 0, 0
    for stage in cfg.stages:
        episode = max(episode, stage.until_episode or 0)
        env_step = max(env_step, stage.until_env_step or 0)
        points.append((episode, env_step))
    sampler = CurriculumSampler(cfg, seed=seed)
    return [("[curriculum]", f"episode {episode}, env step {env_step}", sampler.sample(episode, env_step))
            for episode, env_step in points for _ in range(draws_per_stage)]



#: The 2025 protocol's (18.0.2) env_conf keys, all required by its server and its check_usr_conf.
ENV_CONF_KEYS = ("start", "end", "treasure_random", "treasure_count", "treasure_id", "talent_type", "max_step")


def env_conf(usr_conf: dict | None) -> dict | None:
    """A 2024 usr_conf (`{"diy": {...}}`, keys left out take the game's defaults) as the 2025
    protocol's `{"env_conf": {...}}` of the same episode: every key present, treasure_random a
    bool, treasure_count the chest count either way (the platform checks it is 0..13 even for
    fixed chests). A usr_conf already in the 2025 shape, or None (the env's defaults), passes."""
    if usr_conf is None or "env_conf" in usr_conf:
        return usr_conf
    diy = dict(usr_conf.get("diy") or {})
    unknown = set(diy) - {"start", "end", "treasure_random", "treasure_num", "treasure_id", "max_step", "talent_type"}
    if unknown or set(usr_conf) - {"diy"}:
        raise ValueError(f"usr_conf {usr_conf!r}: unknown keys {sorted(unknown | (set(usr_conf) - {'diy'}))}")
    random = bool(diy.get("treasure_random", 1))
    ids = [int(i) for i in diy.get("treasure_id") or []]
    max_step = int(diy.get("max_step", DEFAULT_MAX_STEP))
    if not 1 <= max_step <= DEFAULT_MAX_STEP:
        raise ValueError(f"usr_conf max_step = {max_step}: the 2025 platform allows 1..{DEFAULT_MAX_STEP}")
    return {"env_conf": {
        "start": int(diy.get("start", 2)),
        "end": int(diy.get("end", 1)),
        "treasure_random": random,
        "treasure_count": int(diy.get("treasure_num", 8)) if random else len(ids),
        "treasure_id": [] if random else ids,
        "talent_type": int(diy.get("talent_type", TALENT_TYPE_SUPER_FLASH)),
        "max_step": max_step,
    }}
