"""`get_training_metrics()`: the platform's summary of a training run ({"basic", "algorithm",
"env", "diy"}), which back_to_the_realm_v2 workflows log every 50 episodes, with the v2 game's
"env" names (total_score, treasure_score, max_steps, finished_steps, treasure_random,
total_treasures, collected_treasures, buff_cnt, buff_cooldown, talent_cooldown, talent_cnt,
buff_random, obstacle_count, obstacle_random; a name the run's metrics do not carry reads 0, as
an absent metric does on the platform).

It is read from this run's metrics.csv (`CONFIG.metrics_file`) by the same reader as the 2025
(18.0.2) platform's module, kaiwu_platform/v18/tools/metrics_utils.py, loaded from its file under a name of
its own with the v2 names.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

_READER_FILE = Path(__file__).resolve().parents[2] / "v18" / "tools" / "metrics_utils.py"
_spec = importlib.util.spec_from_file_location("kaiwu_v2_metrics_reader", _READER_FILE)
_reader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reader)
EPISODE_PREFIX, EPISODE_SCORE_KEY = _reader.EPISODE_PREFIX, _reader.EPISODE_SCORE_KEY

ENV_NAMES = ("total_score", "treasure_score", "max_steps", "finished_steps", "treasure_random", "total_treasures",
             "collected_treasures", "buff_cnt", "buff_cooldown", "talent_cooldown", "talent_cnt", "buff_random",
             "obstacle_count", "obstacle_random")
#: The v2 names -> the run's metric keys (the episode reports of the aisrv).
FROM_EPISODES = {"total_score": EPISODE_SCORE_KEY, "finished_steps": EPISODE_PREFIX + "steps",
                 "collected_treasures": EPISODE_PREFIX + "chests", "buff_cnt": EPISODE_PREFIX + "buff_count",
                 "talent_cnt": EPISODE_PREFIX + "flash_count"}
get_training_metrics = _reader.metrics_reader({**_reader.AVERAGES,
                                               "env": {name: FROM_EPISODES.get(name) for name in ENV_NAMES}})
