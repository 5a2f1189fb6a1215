"""back_to_the_realm_v2's training episodes (episodes.py) and its PPO train workflow."""
