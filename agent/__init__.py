"""The actor-critic model, the PPO update and Kaiwu's Agent (predict/exploit/learn/save/load)."""
