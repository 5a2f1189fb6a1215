"""robot_vacuum's training episodes (episodes.py) and its PPO train workflow."""
