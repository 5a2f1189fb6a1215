"""back_to_the_realm_v2's PPO package: its Agent and its config module."""
