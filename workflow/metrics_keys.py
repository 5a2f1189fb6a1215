"""Names of the keys in metrics.csv / TensorBoard, shared by the writers and the tools that read
them. A key's prefix is its group ("episode/...", "loss/...") so plots can group without a list.

The game's episode reports are written under `episode/`; what a package's workflow reports with
`monitor.put_data` under `monitor/` (`monitor/reward/<term>` ...) and what its `Agent.learn`
returns under its own names: the training system never lists them.
"""
from __future__ import annotations

EPISODE_PREFIX = "episode/"
#: The episode record's score and win (episodes.runner.EpisodeStats.report: what the host sends
#: for every finished episode, whatever the package): the recent mean score and win rate.
EPISODE_SCORE = "total_score"
EPISODE_WIN = "win"
EPISODE_SCORE_KEY = EPISODE_PREFIX + EPISODE_SCORE
EPISODE_WIN_KEY = EPISODE_PREFIX + EPISODE_WIN

# Throughput and health of the system.
ENV_SPS = "system/env_sps"  # env steps per second produced by all aisrv
CONSUMED_SPS = "system/consumed_sps"  # sample rows per second the learner trained on
TRAIN_STEPS_PER_S = "system/train_steps_per_s"
POLICY_LAG = "system/policy_lag"  # learner version minus the version that produced a chunk
POLICY_LAG_MAX = "system/policy_lag_max"
BUFFER_SIZE = "replay/size"
BUFFER_FILL = "replay/fill"
PRIORITY_BETA = "replay/priority_beta"  # prioritized replay's importance-sampling exponent now
PRIORITY_MEAN = "replay/priority_mean"  # mean priority written back per train step
MODEL_PICKUP_LATENCY = "model/pickup_latency_s"  # publish -> first aisrv step with that model
MODEL_VERSION = "model/version"  # the learner's
AISRV_MODEL_VERSION = "model/aisrv_version"  # the version an aisrv adopted (with each pick-up)
ENV_ERRORS = "aisrv/env_errors"
AISRV_SEND_WAIT = "aisrv/send_wait_s"  # time aisrv waited on the replay's rate limiter
REFUSED_PREFIX = "refused/"  # replay items / telemetry records the learner dropped (run totals this session)
NONFINITE_TRAIN_STEPS = "system/nonfinite_train_steps"  # train steps whose learn left NaN/inf (this session)
NONFINITE_CHECKPOINTS = "system/nonfinite_checkpoints"  # checkpoints not written: weights not finite (this session)
MEAN_SCORE_RECENT = "episode/mean_total_score_recent"  # over the last 100 episodes
WIN_RATE_RECENT = "episode/win_rate_recent"


PACKAGE_LEARN_PREFIX = "learner/"  # what a package's Agent.learn returns, when its names carry no group


def learner_key(name: str) -> str:
    """A statistic Agent.learn returned, as a metric name: names with a group ("loss/policy") keep
    it, bare ones ("loss") go under "learner/"."""
    return name if "/" in name else PACKAGE_LEARN_PREFIX + name
