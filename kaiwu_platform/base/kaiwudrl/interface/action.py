"""`Action` and `ActionSpec`: the platform's base classes for a package's action spec."""
from __future__ import annotations


class ActionSpec:
    def __init__(self, array_spec, pdclass=None):
        self._array_spec = array_spec
        self._pdclass = pdclass

    @property
    def shape(self):
        return self._array_spec.shape

    @property
    def dtype(self):
        return self._array_spec.dtype

    @property
    def pdclass(self):
        return self._pdclass


class Action:
    def get_action(self):
        raise NotImplementedError(f"{type(self).__name__}.get_action")

    @staticmethod
    def action_space():
        raise NotImplementedError("Action.action_space")
