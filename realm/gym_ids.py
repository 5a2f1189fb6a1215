"""Registering a game's gymnasium id, once, by a string entry point (nothing is imported until
gymnasium.make asks); gymnasium is optional for the simulators themselves."""
from __future__ import annotations


def register_gym_env(env_id: str, entry_point: str) -> None:
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:
        return
    if env_id not in registry:
        register(id=env_id, entry_point=entry_point)
