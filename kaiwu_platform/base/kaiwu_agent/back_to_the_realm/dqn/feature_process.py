"""The platform's feature helpers as the dqn package imports them."""
from kaiwu_agent.back_to_the_realm.feature_process import bump, one_hot_encoding, read_relative_position

__all__ = ["bump", "one_hot_encoding", "read_relative_position"]
