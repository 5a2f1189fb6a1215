"""gorge_chase's training episodes (episodes.py) and its PPO train workflow."""
