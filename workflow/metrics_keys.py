"""Names of the keys in metrics.csv / TensorBoard, shared by the writers and the tools that read
them. A key's prefix is its group ("episode/...", "loss/...") so plots can group without a list.

Episode reports from the episode loop are written under `episode/` with their own names
(`episode/total_score`, `episode/reward/<term>` ...): the training system never lists them.
"""
from __future__ import annotations

EPISODE_PREFIX = "episode/"
EPISODE_SCORE_KEY = EPISODE_PREFIX + "total_score"
EPISODE_WIN_KEY = EPISODE_PREFIX + "win"

# Learner: PPO statistics returned by Agent.learn are written as "<group>/<name>".
LEARNER_GROUPS = {
    "policy_loss": "loss/policy",
    "value_loss": "loss/value",
    "entropy": "ppo/entropy",
    "approx_kl": "ppo/approx_kl",
    "clip_frac": "ppo/clip_frac",
    "explained_variance": "ppo/explained_variance",
    "grad_norm": "ppo/grad_norm",
    "lr": "ppo/lr",
    "ent_coef": "ppo/ent_coef",
}
LEARNER_OTHER_PREFIX = "ppo/"

# Throughput and health of the system.
ENV_SPS = "system/env_sps"  # env steps per second produced by all aisrv
CONSUMED_SPS = "system/consumed_sps"  # sample rows per second the learner trained on
TRAIN_STEPS_PER_S = "system/train_steps_per_s"
POLICY_LAG = "system/policy_lag"  # learner version minus the version that produced a chunk
POLICY_LAG_MAX = "system/policy_lag_max"
BUFFER_SIZE = "replay/size"
BUFFER_FILL = "replay/fill"
MODEL_PICKUP_LATENCY = "model/pickup_latency_s"  # publish -> first aisrv step with that model
MODEL_VERSION = "model/version"  # the learner's
AISRV_MODEL_VERSION = "model/aisrv_version"  # the version an aisrv adopted (with each pick-up)
ENV_ERRORS = "aisrv/env_errors"
AISRV_SEND_WAIT = "aisrv/send_wait_s"  # time aisrv waited on the replay's rate limiter
REFUSED_PREFIX = "refused/"  # replay items / telemetry records the learner dropped (run totals this session)
MEAN_SCORE_RECENT = "episode/mean_total_score_recent"  # over the last 100 episodes
WIN_RATE_RECENT = "episode/win_rate_recent"


PACKAGE_LEARN_PREFIX = "learner/"  # what a Kaiwu package's Agent.learn returns (a dict of numbers)


def learner_key(name: str) -> str:
    """A learner statistic's metric name; names that carry a group ("learner/loss") keep it."""
    if "/" in name:
        return name
    return LEARNER_GROUPS.get(name, LEARNER_OTHER_PREFIX + name)
