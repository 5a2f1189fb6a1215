"""`BaseAgent` of the 15.0.1 platform (gorge_chase): an Agent written without the `*_wrapper`
decorators, which hands its samples over with `send_sample_data(list)`.

On the platform the framework intercepts the five methods by itself. Here the class does what
the decorators of kaiwu_agent.agent.base_agent do for older packages: `predict`, `exploit`,
`learn`, `save_model` and `load_model` of every subclass go through the agent's
`framework_handler` when the host has set one (an aisrv, the learner, local mode), and run as
written otherwise (a tool, a test). A call the package makes from inside one of them (its
`exploit` calling its own `predict`) runs as written: the framework sees one call.
`send_sample_data(list)` is the aisrv's way to the replay: the handler's `learn`.
"""
from __future__ import annotations

import functools

from kaiwu_agent.agent.base_agent import BaseAgent as _Base

ROUTED = ("predict", "exploit", "learn", "save_model", "load_model")


def _route(kind: str, method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        handler = getattr(self, "framework_handler", None)
        if handler is None or getattr(self, "_kaiwu_in_handler", False):
            return method(self, *args, **kwargs)
        self._kaiwu_in_handler = True
        try:
            return getattr(handler, kind)(self, method, *args, **kwargs)
        finally:
            self._kaiwu_in_handler = False

    wrapper.kaiwu_wrapper = kind
    return wrapper


class BaseAgent(_Base):
    """The platform's agent base class; subclasses' five methods are routed (module docstring)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for kind in ROUTED:
            method = cls.__dict__.get(kind)
            if callable(method) and not hasattr(method, "kaiwu_wrapper"):
                setattr(cls, kind, _route(kind, method))

    def __init__(self, agent_type="player", device=None, logger=None, monitor=None):
        handler = getattr(self, "framework_handler", None)  # a subclass may call this last
        super().__init__(agent_type, device, logger, monitor)
        self.framework_handler = handler

    def send_sample_data(self, list_sample_data):
        """Hand a list of SampleData to the training side: in an aisrv, packed into rows for
        the replay; in local mode, into the local learner's batch; with no framework, the
        agent's own learn."""
        return self.learn(list_sample_data)
