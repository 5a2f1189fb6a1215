"""gorge_chase's PPO package: its Agent and its config module."""
