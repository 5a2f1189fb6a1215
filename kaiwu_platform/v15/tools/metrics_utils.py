"""`get_training_metrics()`: the platform's summary of a training run ({"basic", "algorithm",
"env", "diy"}), which gorge_chase workflows log every minute, with the game's "env" names
(total_score, step_score, treasure_score, total_map, map_random, max_step, finished_steps,
flash_count, flash_cooldown, total_buff, collected_buff, buff_refresh_time, total_treasure,
treasures_collected, monster_speed, monster_interval): kaiwudrl.common.utils.engine_metrics.
"""
from __future__ import annotations

from kaiwudrl.common.utils.engine_metrics import EPISODE_PREFIX, EPISODE_SCORE_KEY, training_metrics

ENV_NAMES = ("total_score", "step_score", "treasure_score", "total_map", "map_random", "max_step", "finished_steps",
             "flash_count", "flash_cooldown", "total_buff", "collected_buff", "buff_refresh_time", "total_treasure",
             "treasures_collected", "monster_speed", "monster_interval")
#: The game's names -> the run's metric keys (the episode reports of the aisrv).
FROM_EPISODES = {"total_score": EPISODE_SCORE_KEY, "finished_steps": EPISODE_PREFIX + "steps",
                 "treasures_collected": EPISODE_PREFIX + "chests", "collected_buff": EPISODE_PREFIX + "buff_count",
                 "flash_count": EPISODE_PREFIX + "flash_count"}
get_training_metrics = training_metrics(ENV_NAMES, FROM_EPISODES)
