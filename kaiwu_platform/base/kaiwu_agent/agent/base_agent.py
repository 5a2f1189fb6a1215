"""`BaseAgent` and the five decorators a package's Agent keeps on its methods.

On the platform the decorators route each call by the process it runs in. Here the training
system does the same through the agent's `framework_handler` (the attribute name the platform
uses; the host sets it after building the agent):

- no handler (a tool, a test, a single process): every call runs the package's own method;
- in an aisrv: `learn` packs each SampleData with the registered `SampleData2NumpyData` and
  sends the rows to the replay server; `predict` / `exploit` run the package's method on this
  process's agent, which follows the model pool; `save_model` asks the learner to save;
  `load_model(id="latest")` loads the model pool's newest model;
- in the learner: `learn` runs the package's method on SampleData rebuilt with
  `NumpyData2SampleData`; `save_model` without a path writes to the run's user directory.

A handler is any object with the methods `predict`, `exploit`, `learn`, `save_model` and
`load_model`, each called as `handler.<name>(agent, method, *args, **kwargs)` where `method`
is the package's undecorated function.
"""
from __future__ import annotations

import functools


class BaseAgent:
    """The platform's agent base class; packages usually do not call its __init__."""

    def __init__(self, agent_type="player", device="cpu", logger=None, monitor=None):
        self.agent_type = agent_type
        self.device = device
        self.logger = logger
        self.monitor = monitor
        self.file_queue = []
        self.framework_handler = None


def _routed(kind: str):
    def decorator(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            handler = getattr(self, "framework_handler", None)
            if handler is None:
                return method(self, *args, **kwargs)
            return getattr(handler, kind)(self, method, *args, **kwargs)

        wrapper.kaiwu_wrapper = kind
        return wrapper

    decorator.__name__ = f"{kind}_wrapper"
    decorator.__doc__ = f"Route `{kind}` through the framework (see the module docstring)."
    return decorator


predict_wrapper = _routed("predict")
exploit_wrapper = _routed("exploit")
learn_wrapper = _routed("learn")
save_model_wrapper = _routed("save_model")
load_model_wrapper = _routed("load_model")


def reset_wrapper(method):
    """`reset`: the agent's own per-episode state, on the process that plays the episode (no
    routing; the platform's 28.x packages import it)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return method(self, *args, **kwargs)

    wrapper.kaiwu_wrapper = "reset"
    return wrapper
