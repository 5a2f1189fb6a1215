"""`create_cls`, `attached` and `Frame`: the platform's helpers for a package's data classes and
protocol functions (`<algo>/feature/definition.py`)."""
from __future__ import annotations

from kaiwu_agent.agent.protocol import protocol as _protocol


def _init(self, **kwargs):
    for key, value in kwargs.items():
        if not hasattr(self, key):  # a name the class does not declare (the platform checks dir(self))
            raise AttributeError(f"{type(self).__name__} object has no attribute '{key}'")
        setattr(self, key, value)


@classmethod
def _set_cls_attr(cls, **kwargs):
    for key, value in kwargs.items():
        setattr(cls, key, value)


def create_cls(cls_name: str, **attrs):
    """A class named `cls_name` whose attributes are `attrs` (their values are the defaults,
    shared as class attributes). Instances take keyword arguments only and reject names the
    class does not declare; the instance `__dict__` holds just the keywords passed. The class
    is registered in the protocol module under its name, as `attached` does."""
    namespace = dict(attrs)
    namespace["__init__"] = _init
    namespace["set_cls_attr"] = _set_cls_attr
    cls = type(cls_name, (object,), namespace)
    setattr(_protocol, cls_name, cls)
    return cls


def attached(obj):
    """Register a protocol function or class in `kaiwu_agent.agent.protocol.protocol` under its
    own name; returns it unchanged."""
    setattr(_protocol, obj.__name__, obj)
    return obj


class Frame:
    """An attribute bag for one collected transition: `Frame(**kw).__dict__ == kw`."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self) -> str:
        return f"Frame({', '.join(sorted(self.__dict__))})"
