"""Back to the Realm (`back_to_the_realm`, the 2024 game; the 2025 course build 18.0.2 plays it too):
maps, the env in both protocols (env.py, env18.py), the route planner as reference, presets,
pictures and the gymnasium env (`realm/BackToTheRealm-v0`). Rules: ../shared/realm/SPEC.md and
docs/games/back_to_the_realm.md; built by `realm.make_env`."""
