"""`handle_disaster_recovery(env_obs, logger)`: what a workflow of the 2026 engine (15.0.1, 13.0.1;
`common_python.utils.workflow_disaster_recovery`) calls after every reset and step; True tells it to drop the episode (the platform's env answered with an error)."""
from __future__ import annotations


def handle_disaster_recovery(env_obs, logger) -> bool:
    """True, after logging why, when `env_obs` is not a usable frame: not a dict, a result_code
    other than 0 in its extra_info, or no observation."""
    if not isinstance(env_obs, dict):
        logger.error(f"env returned {type(env_obs).__name__} instead of an env_obs dict; dropping the episode")
        return True
    extra_info = env_obs.get("extra_info") or {}
    code = extra_info.get("result_code", 0) if isinstance(extra_info, dict) else 0
    if code != 0:
        logger.error(f"env result_code {code} ({extra_info.get('result_message', '')!r}); dropping the episode")
        return True
    if env_obs.get("observation") is None:
        logger.error("env_obs has no observation; dropping the episode")
        return True
    return False
