"""`create_cls`, `attached` and `Frame` as the 2026 engine's packages import them
(`common_python.utils.common_func` of 15.0.1 and 13.0.1: kaiwu_platform/v15/, kaiwu_platform/v13/).

The difference from the older platforms' helpers (kaiwu_agent.utils.common_func): a SampleData
is declared with int dimensions, `create_cls("SampleData", obs=40, act=1, ...)`, and the
framework packs and unpacks it itself, so a package defines no SampleData2NumpyData. Such a
class keeps the dimensions in `FIELD_DIMS` (field -> width, in declaration order) and its
attributes default to None, as the platform's do.
"""
from __future__ import annotations

from numbers import Integral

from kaiwu_agent.utils.common_func import Frame, attached
from kaiwu_agent.utils.common_func import create_cls as _create_cls

__all__ = ["Frame", "attached", "create_cls"]


def _is_dim(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def create_cls(cls_name: str, **attrs):
    """A data class named `cls_name` with the attributes `attrs`; when every value is a
    positive int, they are the fields' widths (FIELD_DIMS) and the attributes start as None."""
    if attrs and all(_is_dim(value) for value in attrs.values()):
        bad = [name for name, value in attrs.items() if value < 1]
        if bad:
            raise ValueError(f"create_cls({cls_name!r}): the width of {', '.join(bad)} must be >= 1")
        cls = _create_cls(cls_name, **{name: None for name in attrs})
        cls.FIELD_DIMS = {name: int(value) for name, value in attrs.items()}
        return cls
    return _create_cls(cls_name, **attrs)
