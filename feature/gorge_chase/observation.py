"""gorge_chase's observation as the network sees it: `observation_process(memory)` fills ObsData
(feature.segments' class: map, state, legal, core_state) from the episode's GorgeMemory
following feature.gorge_chase.layout's tables. The episode loops keep one memory per env and
episode (`GorgeView`, episodes.protocol's gorge view); an Agent acting on the raw env_obs keeps
its own (agent.gorge_chase.ppo_agent).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from feature.gorge_chase.lookahead import BUDGET, MAX_BUDGET, guarded
from feature.gorge_chase.constants import NUM_MOVES
from feature.gorge_chase.layout import MAP_LAYOUT, MAP_SHAPE, STATE_DIM, STATE_LAYOUT, STATE_SLICES, legal_mask
from feature.gorge_chase.memory import GorgeMemory
from feature.segments import ObsData, action_process  # noqa: F401 (the protocol's names)
from feature.tables import fill_tables


def observation_process(memory: GorgeMemory, extra_info=None) -> ObsData:
    """The episode's memory after a step (or the reset) -> ObsData."""
    map_tensor, state = fill_tables(memory, MAP_LAYOUT, MAP_SHAPE, STATE_LAYOUT, STATE_SLICES, STATE_DIM)
    return ObsData(map=map_tensor, state=state, legal=legal_mask(memory))


@dataclass
class FeatureConfig:
    """[features_gorge]: what the features read of env_obs."""

    global_info: bool = True  # also extra_info.frame_state: every chest and buff, the monsters' true cells
    # the legal mask keeps the moves whose cell no monster in view reaches this step (its path
    # cells to it more than its speed + 1) while one such move exists; flashes stay as they are
    danger_guard: bool = False
    # exploit (not training) keeps to the moves and flashes that a look-ahead over the explored map,
    # against the monsters' chase rule, finds best while a known monster is near
    # (feature.gorge_chase.lookahead): a search in the act, which the platform runs as the package's code
    lookahead_guard: bool = True
    # the look-ahead also narrows training's mask (what the policy samples within and the samples
    # hold), so the policy learns in the episodes the guard lets it live, past the deaths it vetoes
    lookahead_guard_training: bool = False
    # the states each candidate's search in the look-ahead expands at most: its strength against its
    # cost (an exported package runs the search in Python: docs/games/gorge_chase.md); 0 = one
    # fleeing line per candidate
    lookahead_budget: int = BUDGET

    def validate(self) -> None:
        for key in ("global_info", "danger_guard", "lookahead_guard", "lookahead_guard_training"):
            if not isinstance(getattr(self, key), bool):
                raise ValueError(f"[features_gorge] {key} must be true or false, got {getattr(self, key)!r}")
        budget = self.lookahead_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or not 0 <= budget <= MAX_BUDGET:
            raise ValueError(f"[features_gorge] lookahead_budget must be an integer 0..{MAX_BUDGET} (states a "
                             f"candidate's search expands; 0 = one fleeing line), got {budget!r}")
        if self.lookahead_guard_training and not self.lookahead_guard:
            raise ValueError("[features_gorge] lookahead_guard = false with lookahead_guard_training = true: exploit "
                             "acts within the features' mask, which is then the look-ahead's; set both false to play "
                             "without the look-ahead")

    def view_options(self) -> dict:
        """GorgeView's keyword arguments."""
        return {"global_info": self.global_info, "danger_guard": self.danger_guard,
                "lookahead_guard": self.lookahead_guard_training, "lookahead_budget": self.lookahead_budget}


class GorgeView:
    """An episode's memory as the episode loop hands observations on: `reset(env_obs)` and
    `step(env_obs)` return (memory, None); the memory keeps the last env_obs as `.env_obs`.
    `global_info`: GorgeMemory's (FeatureConfig's)."""

    def __init__(self, global_info: bool = False, danger_guard: bool = False, lookahead_guard: bool = False,
                 lookahead_budget: int | None = None):
        self.options = {"global_info": global_info, "danger_guard": danger_guard, "lookahead_guard": lookahead_guard,
                        "lookahead_budget": lookahead_budget}
        self.memory = GorgeMemory(**self.options)

    def reset(self, env_obs, extra_info=None):
        self.memory = GorgeMemory(**self.options).update(env_obs)
        self.memory.env_obs = env_obs
        return self.memory, None

    def step(self, env_obs, extra_info=None):
        self.memory.update(env_obs)
        self.memory.env_obs = env_obs
        return self.memory, None


def exploit_legal(memory: GorgeMemory, legal: np.ndarray, settings) -> np.ndarray:
    """exploit's legal mask: with `[features_gorge] lookahead_guard`, the open moves and flashes
    narrowed to those the look-ahead finds best (feature.gorge_chase.lookahead); `legal` as it is
    otherwise. Training's samples keep the mask the features made (the look-ahead's already where
    `lookahead_guard_training` is on: then `legal` is returned as it is)."""
    if not settings.features_gorge.lookahead_guard or memory.lookahead_guard:
        return legal
    moves, flashes = guarded(memory, [float(v) for v in legal[:NUM_MOVES]],
                             [float(v) for v in legal[NUM_MOVES:2 * NUM_MOVES]])
    narrowed = legal.copy()
    narrowed[:2 * NUM_MOVES] = moves + flashes
    return narrowed

