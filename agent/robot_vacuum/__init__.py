"""robot_vacuum's PPO package: its Agent and its config module."""
