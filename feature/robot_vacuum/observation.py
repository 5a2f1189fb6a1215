"""robot_vacuum's observation as the network sees it: `observation_process(memory)` fills ObsData
(feature.segments' class: map, state, legal, core_state) from the episode's VacuumMemory
following feature.robot_vacuum.layout's tables. The episode loops keep one memory per env and
episode (`VacuumView`, the view episodes.robot_vacuum.episodes hands the runner); an Agent
acting on the raw env_obs keeps its own (agent.robot_vacuum.ppo_agent).
"""
from __future__ import annotations

from dataclasses import dataclass

from feature.robot_vacuum.constants import NUM_MOVES
from feature.robot_vacuum.layout import MAP_LAYOUT, MAP_SHAPE, STATE_DIM, STATE_LAYOUT, STATE_SLICES, legal_mask
from feature.robot_vacuum.memory import CHARGER_READINGS, VacuumMemory
from feature.segments import ObsData
from feature.tables import fill_tables
from kaiwu_agent.utils.common_func import attached


def observation_process(memory: VacuumMemory, extra_info=None) -> ObsData:
    """The episode's memory after a step (or the reset) -> ObsData."""
    map_tensor, state = fill_tables(memory, MAP_LAYOUT, MAP_SHAPE, STATE_LAYOUT, STATE_SLICES, STATE_DIM)
    return ObsData(map=map_tensor, state=state, legal=legal_mask(memory))


@attached
def action_process(act_data) -> int:
    """ActData -> the int action env.step takes: a move 0..7. The legal mask never allows the
    model's actions 8..15; one reaching here is an error, not a move."""
    action = int(act_data.action)
    if not 0 <= action < NUM_MOVES:
        raise ValueError(f"action {action}: robot_vacuum's actions are the moves 0..{NUM_MOVES - 1} "
                         "(the legal mask forbids 8..15)")
    return action


@dataclass
class FeatureConfig:
    """[features_vacuum]: what the features read of env_obs."""

    global_info: bool = True  # also extra_info.frame_state: every official robot's true cell
    # a charger's pos read as: "either" (only the 2x2 cells the top-left and the centre readings
    # share: a path there always ends on the charger) | "top_left" | "centre" (that reading's 3x3)
    charger_pos: str = "either"
    # the legal mask keeps the way home: while the battery would not last the episode, only moves
    # after which the battery still reaches the nearest charger (over road seen, around the robots
    # while it can, else over cells never seen with unseen_slack; those that bring it nearest when
    # none does: layout.guarded_moves); the platform runs a package's own features, so this is
    # legal there
    battery_guard: bool = True
    # while no route over road seen reaches a charger, the battery guard keeps this many times the
    # path over cells never seen to spare (walls not yet seen lengthen it): 20 holds the hero to
    # that path's way until a route is seen, as a full battery can afford; 3 lets it roam longer
    unseen_slack: float = 20.0
    # the legal mask keeps out of contact: only the moves whose cell no official robot known this
    # step can reach with its next move (any of 8 directions; then any of 4; then the farthest)
    robot_guard: bool = True

    def validate(self) -> None:
        for key in ("global_info", "battery_guard", "robot_guard"):
            if not isinstance(getattr(self, key), bool):
                raise ValueError(f"[features_vacuum] {key} must be true or false, got {getattr(self, key)!r}")
        if isinstance(self.unseen_slack, bool) or not isinstance(self.unseen_slack, (int, float)) \
                or not 0 <= self.unseen_slack <= 1000:
            raise ValueError(f"[features_vacuum] unseen_slack must be a number from 0 to 1000, got {self.unseen_slack!r}")
        if self.charger_pos not in CHARGER_READINGS:
            raise ValueError(f"[features_vacuum] charger_pos must be one of {' | '.join(CHARGER_READINGS)}, got "
                             f"{self.charger_pos!r}")

    def view_options(self) -> dict:
        """VacuumView's keyword arguments."""
        return {"global_info": self.global_info, "charger_pos": self.charger_pos, "battery_guard": self.battery_guard,
                "robot_guard": self.robot_guard, "unseen_slack": float(self.unseen_slack)}


class VacuumView:
    """An episode's memory as the episode loop hands observations on: `reset(env_obs)` and
    `step(env_obs)` return (memory, None); the memory keeps the last env_obs as `.env_obs`.
    `options`: VacuumMemory's keywords (FeatureConfig.view_options)."""

    def __init__(self, **options):
        self.options = options
        self.memory = VacuumMemory(**self.options)

    def reset(self, env_obs, extra_info=None):
        self.memory = VacuumMemory(**self.options).update(env_obs)
        self.memory.env_obs = env_obs
        return self.memory, None

    def step(self, env_obs, extra_info=None):
        self.memory.update(env_obs)
        self.memory.env_obs = env_obs
        return self.memory, None
