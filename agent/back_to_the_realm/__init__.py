"""Back to the Realm's agents: the PPO and DQN packages' Agent and config modules, and the
sections both read (realm_settings.py)."""
