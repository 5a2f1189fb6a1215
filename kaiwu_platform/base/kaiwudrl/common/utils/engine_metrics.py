"""`get_training_metrics()` of the 2026 engine's platforms (15.0.1, 13.0.1; their
`tools.metrics_utils`): the platform's summary of a training run ({"basic", "algorithm", "env",
"diy"}) with the game's own "env" names, read from this run's metrics.csv (`CONFIG.metrics_file`)
by the 2025 (18.0.2) platform's reader, kaiwu_platform/v18/tools/metrics_utils.py, loaded from its
file under a name of its own (every version's `tools` package has the same name)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

_READER_FILE = Path(__file__).resolve().parents[4] / "v18" / "tools" / "metrics_utils.py"
_spec = importlib.util.spec_from_file_location("kaiwu_engine_metrics_reader", _READER_FILE)
_reader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reader)
EPISODE_PREFIX, EPISODE_SCORE_KEY = _reader.EPISODE_PREFIX, _reader.EPISODE_SCORE_KEY


def training_metrics(env_names: tuple[str, ...], from_episodes: dict[str, str]):
    """The game's get_training_metrics: its "env" names, each read from the run's metric key
    `from_episodes` gives it (a name the run's metrics do not carry reads 0, as an absent metric
    does on the platform)."""
    return _reader.metrics_reader({**_reader.AVERAGES, "env": {name: from_episodes.get(name) for name in env_names}})
