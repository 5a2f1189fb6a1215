"""The protocol registry: `create_cls` and `@attached` put a package's data classes and
protocol functions here under their own names, and the framework looks them up here when it
calls them (at call time, so the order of imports does not matter).

A standard name that nothing registered yet raises ImportError saying where to register it.
"""
from __future__ import annotations

#: The names the platform's framework looks up in this module.
STANDARD_NAMES = (
    "Agent", "ObsData", "ActData", "SampleData",
    "observation_process", "action_process", "sample_process", "workflow",
    "SampleData2NumpyData", "NumpyData2SampleData",
)


def __getattr__(name: str):
    if name in STANDARD_NAMES:
        raise ImportError(
            f"kaiwu_agent.agent.protocol.protocol.{name} is not registered: define it in the package's "
            f"<algo>/feature/definition.py (create_cls for data classes, @attached for functions) and import "
            f"that module before using it")
    raise AttributeError(f"module 'kaiwu_agent.agent.protocol.protocol' has no attribute {name!r}")
