"""Back to the Realm's package code (2024 and 18.0.2): its numbers, the model's input tables,
observation_process for both protocols, the reward terms, the curriculum, and the data classes of
its two algorithms (ppo_definition.py, dqn_plus_definition.py)."""
