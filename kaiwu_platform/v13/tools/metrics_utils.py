"""`get_training_metrics()`: the platform's summary of a training run ({"basic", "algorithm",
"env", "diy"}), which robot_vacuum workflows log every minute, with the game's "env" names (its
env_info's: total_score, clean_score, total_dirt, battery_max, remaining_charge, charge_count,
total_charger, npc_count, total_map, map_random, max_step, finished_steps):
kaiwudrl.common.utils.engine_metrics.
"""
from __future__ import annotations

from kaiwudrl.common.utils.engine_metrics import EPISODE_PREFIX, EPISODE_SCORE_KEY, training_metrics

ENV_NAMES = ("total_score", "clean_score", "total_dirt", "battery_max", "remaining_charge", "charge_count",
             "total_charger", "npc_count", "total_map", "map_random", "max_step", "finished_steps")
#: The game's names -> the run's metric keys (the episode reports of the aisrv).
FROM_EPISODES = {"total_score": EPISODE_SCORE_KEY, "clean_score": EPISODE_SCORE_KEY,
                 "finished_steps": EPISODE_PREFIX + "steps"}
get_training_metrics = training_metrics(ENV_NAMES, FROM_EPISODES)
