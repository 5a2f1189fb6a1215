"""back_to_the_realm_v2's package code (24.x, 28.x): its numbers, the episode's memory of the map,
the model's input tables, observation_process, the reward terms, the curriculum (train_env_conf's
keys) and the PPO package's data classes."""
