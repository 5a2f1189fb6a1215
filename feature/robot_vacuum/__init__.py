"""robot_vacuum's package code (the 2026 game, code package 13.0.1): its numbers, the episode's
memory of the map (cleaned, dirt, never seen, robots and chargers), the path searches, the
model's input tables, observation_process / action_process, the reward terms, the curriculum
(train_env_conf's keys) and the PPO package's data classes."""
