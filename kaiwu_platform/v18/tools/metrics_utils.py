"""`get_training_metrics()`: the platform's summary of a training run ({"basic", "algorithm",
"env", "diy"} under the platform's names), which a 2025 workflow logs once per episode.

The platform reads it from its metrics gateway; here it comes from this run's metrics.csv (the
path the host puts in `CONFIG.metrics_file`). The file only grows while the run trains, so each
call reads just the bytes appended since the previous call (a process's first call counts the
episodes over the whole file without parsing it, and parses only its last MiB).
"""
from __future__ import annotations

import csv
import os
from collections import defaultdict, deque

from kaiwudrl.common.config.config_control import CONFIG

#: The names the host writes an episode's report under in metrics.csv (workflow.metrics_keys;
#: tests/test_kaiwu18_platform.py holds them equal): the platform's modules import nothing of the
#: training system.
EPISODE_PREFIX = "episode/"
EPISODE_SCORE_KEY = EPISODE_PREFIX + "total_score"

RECENT = 100  # an "avg" metric is the mean of a key's last RECENT values (the learner's recent-episode window)
PARSE_BYTES = 1 << 20  # at most this much of what a call reads is parsed (the newest rows)
CHUNK_BYTES = 1 << 20
EPISODE_ROW = f",{EPISODE_SCORE_KEY},".encode()  # one such row per finished episode
TRAIN_STEP = "train_step"  # the learner's train step at each row (a CSV column, not a key)
EPISODES = "episodes"  # counted rows, not a key

# The platform's names -> the project's (None: no source here, reported as 0 like an absent metric).
SUMS = {"train_global_step": TRAIN_STEP, "sample_production_and_consumption_ratio": None,
        "episode_cnt": EPISODES, "sample_receive_cnt": None, "predict_succ_cnt": None, "load_model_succ_cnt": None}
AVERAGES = {
    "algorithm": {name: f"monitor/{name}" for name in ("reward", "q_value", "value_loss")},
    "env": {"total_score": EPISODE_SCORE_KEY, "treasure_score": None, "max_steps": None,
            "finished_steps": EPISODE_PREFIX + "steps", "treasure_random": None, "total_treasures": None,
            "collected_treasures": EPISODE_PREFIX + "chests", "skill_cnt": EPISODE_PREFIX + "flash_count",
            "buff_cnt": EPISODE_PREFIX + "buff_count"},
    "diy": {f"diy_{i}": f"monitor/diy_{i}" for i in range(1, 6)},
}


class MetricsTail:
    """What one process has read of one metrics.csv: where it stopped, the episode count, the
    latest train step and the recent values of the keys the summary averages."""

    def __init__(self, path: str, averages: dict | None = None):
        self.path = path
        self.averages = averages or AVERAGES  # category -> the platform's name -> the run's key
        self.averaged_keys = {key for names in self.averages.values() for key in names.values() if key}
        self.file_id = None  # (device, inode) of the file read so far
        self.offset = 0  # bytes read, always at a line's end
        self.rows = 0
        self.episodes = 0
        self.train_step = 0
        self.recent = defaultdict(lambda: deque(maxlen=RECENT))

    def update(self) -> None:
        stat = os.stat(self.path)
        if (stat.st_dev, stat.st_ino) != self.file_id or stat.st_size < self.offset:  # a new file
            self.__init__(self.path, self.averages)
            self.file_id = (stat.st_dev, stat.st_ino)
        newest, cut = b"", False
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            carry = b""
            while chunk := f.read(CHUNK_BYTES):
                data = carry + chunk
                end = data.rfind(b"\n") + 1  # a row still being written waits for the next call
                lines, carry = data[:end], data[end:]
                self.offset += len(lines)
                self.episodes += lines.count(EPISODE_ROW)
                newest += lines
                if len(newest) > PARSE_BYTES:
                    newest, cut = newest[-PARSE_BYTES:], True
        if cut:
            newest = newest[newest.find(b"\n") + 1:]  # drop the partial first row
        self._parse(newest.decode("utf-8", errors="replace").splitlines())

    def _parse(self, lines: list[str]) -> None:
        for row in csv.reader(lines):
            if len(row) != 6 or row[0] == "wall_time":
                continue
            _, _, train_step, _, key, value = row
            try:
                self.train_step = int(train_step)
                if key in self.averaged_keys:
                    self.recent[key].append(float(value))
            except ValueError:
                continue
            self.rows += 1

    def summary(self) -> dict:
        sums = {TRAIN_STEP: self.train_step, EPISODES: self.episodes}
        result = {"basic": {name: sums.get(key, 0) for name, key in SUMS.items()}}
        for category, names in self.averages.items():
            result[category] = {name: self._mean(key) for name, key in names.items()}
        return result

    def _mean(self, key) -> float:
        values = self.recent.get(key)
        return round(sum(values) / len(values), 2) if values else 0


def metrics_reader(averages: dict):
    """A `get_training_metrics()` over `averages` (a game's "env" names replace the 2025 game's):
    the run's metrics in the platform's shape, or False while there are none (no
    CONFIG.metrics_file, no file yet, no row yet)."""
    tail: list[MetricsTail] = []

    def get_training_metrics():
        path = CONFIG.metrics_file
        if not path or not os.path.isfile(path):
            return False
        if not tail or tail[0].path != path:
            tail[:] = [MetricsTail(path, averages)]
        try:
            tail[0].update()
        except OSError:
            return False
        return tail[0].summary() if tail[0].rows else False

    get_training_metrics.tail = tail  # what it has read: [MetricsTail], once it has read a file
    return get_training_metrics


get_training_metrics = metrics_reader(AVERAGES)
