"""Where the two Kaiwu protocols differ for an episode loop, kept in one place.

2024 (code packages 8.x-10.x): `env.reset(usr_conf={"diy": ...})` returns the observation;
`env.step` returns `(frame_no, obs, score, terminated, truncated, env_info)`; `predict` and
`exploit` return the package's list of ActData.
2025 (18.0.2): `env.reset(usr_conf={"env_conf": ...})` returns `(obs, state)`; `env.step`
returns `(frame_no, obs, score, terminated, truncated, state)` with a slimmer obs; on the
platform's aisrv `predict` and `exploit` return `(list of ActData, model_version)`.
The loops keep the 2024 shapes inside (the curriculum's usr_conf, the features, the reward):
episodes.runner hands a 2025 env its usr_conf as env_conf (feature.curriculum.env_conf) and
reads its observations through feature.observation18.Realm18View.

Which protocol an env speaks must be known before its first reset, since the usr_conf's shape
depends on it and the platform answers a wrong one with nothing: an env may say so
(`env.kaiwu_version`), else the package's `KAIWU_VERSION` decides, which
tools/export_kaiwu.py sets to "18" in a package exported for the 18.0.2 platform.
"""
from __future__ import annotations

KAIWU_VERSIONS = ("2024", "18")

#: The protocol of the envs this package is given, unless an env says otherwise.
KAIWU_VERSION = "2024"


def env_kaiwu_version(env, kaiwu_version: str | None = None) -> str:
    """The protocol `env` speaks: `kaiwu_version` if given, else the env's own
    `kaiwu_version` attribute, else the package's KAIWU_VERSION."""
    version = kaiwu_version or getattr(env, "kaiwu_version", None) or KAIWU_VERSION
    if version not in KAIWU_VERSIONS:
        raise ValueError(f"kaiwu_version {version!r}: allowed {' | '.join(KAIWU_VERSIONS)}")
    return version


def act_list(result) -> list:
    """predict / exploit's answer as the list of ActData: the 2025 aisrv's
    `(list, model_version)` unpacked, the package's own list as it is."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], (list, tuple)):
        return list(result[0])
    return result
