"""Package code, the algorithms: the registry of the project's packages (algorithms.py), the networks, the PPO and DQN updates, Kaiwu's Agent per algorithm and the checkpoint files."""
