"""`State`: the platform's base class for a package's state spec (conf/<app>_state.py)."""
from __future__ import annotations


class State:
    def get_state(self):
        raise NotImplementedError(f"{type(self).__name__}.get_state")

    @staticmethod
    def state_space():
        raise NotImplementedError("State.state_space")
