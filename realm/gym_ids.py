"""Every game's gymnasium id, registered here once by a string entry point (nothing is imported
until gymnasium.make asks); gymnasium is optional for the simulators themselves. A game's id is
keyed by its env's GAME (realm.ENVS), so that tests/test_gym_env.py finds one for every game."""
from __future__ import annotations

BACK_TO_THE_REALM_ID = "realm/BackToTheRealm-v0"
BACK_TO_THE_REALM_V2_ID = "realm/BackToTheRealmV2-v0"
GORGE_CHASE_ID = "realm/GorgeChase-v0"
ROBOT_VACUUM_ID = "realm/RobotVacuum-v0"

#: game (an env's GAME) -> (gymnasium id, entry point)
GYM_ENVS = {
    "back_to_the_realm": (BACK_TO_THE_REALM_ID, "realm.back_to_the_realm.gym_env:RealmGymEnv"),
    "back_to_the_realm_v2": (BACK_TO_THE_REALM_V2_ID, "realm.back_to_the_realm_v2.gym_env:RealmV2GymEnv"),
    "gorge_chase": (GORGE_CHASE_ID, "realm.gorge_chase.gym_env:GorgeChaseGymEnv"),
    "robot_vacuum": (ROBOT_VACUUM_ID, "realm.robot_vacuum.gym_env:RobotVacuumGymEnv"),
}


def register_gym_env(env_id: str, entry_point: str) -> None:
    """Register `env_id` unless gymnasium has it already (a second registration is a no-op)."""
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:
        return
    if env_id not in registry:
        register(id=env_id, entry_point=entry_point)


def register_gym_envs() -> None:
    """Register every game's id."""
    for env_id, entry_point in GYM_ENVS.values():
        register_gym_env(env_id, entry_point)
