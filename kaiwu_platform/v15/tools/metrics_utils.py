"""`get_training_metrics()`: the platform's summary of a training run ({"basic", "algorithm",
"env", "diy"}), which gorge_chase workflows log every minute, with the game's "env" names
(total_score, step_score, treasure_score, total_map, map_random, max_step, finished_steps,
flash_count, flash_cooldown, total_buff, collected_buff, buff_refresh_time, total_treasure,
treasures_collected, monster_speed, monster_interval; a name the run's metrics do not carry
reads 0, as an absent metric does on the platform).

Read from this run's metrics.csv (`CONFIG.metrics_file`) by the 2025 (18.0.2) platform's
reader, kaiwu_platform/v18/tools/metrics_utils.py, loaded from its file under a name of its own.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

_READER_FILE = Path(__file__).resolve().parents[2] / "v18" / "tools" / "metrics_utils.py"
_spec = importlib.util.spec_from_file_location("kaiwu_gorge_metrics_reader", _READER_FILE)
_reader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reader)
EPISODE_PREFIX, EPISODE_SCORE_KEY = _reader.EPISODE_PREFIX, _reader.EPISODE_SCORE_KEY

ENV_NAMES = ("total_score", "step_score", "treasure_score", "total_map", "map_random", "max_step", "finished_steps",
             "flash_count", "flash_cooldown", "total_buff", "collected_buff", "buff_refresh_time", "total_treasure",
             "treasures_collected", "monster_speed", "monster_interval")
#: The game's names -> the run's metric keys (the episode reports of the aisrv).
FROM_EPISODES = {"total_score": EPISODE_SCORE_KEY, "finished_steps": EPISODE_PREFIX + "steps",
                 "treasures_collected": EPISODE_PREFIX + "chests", "collected_buff": EPISODE_PREFIX + "buff_count",
                 "flash_count": EPISODE_PREFIX + "flash_count"}
get_training_metrics = _reader.metrics_reader({**_reader.AVERAGES,
                                               "env": {name: FROM_EPISODES.get(name) for name in ENV_NAMES}})
