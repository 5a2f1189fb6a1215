"""Build typed dataclasses from plain dicts (parsed TOML), with errors that name the key.

Every config section is a plain `@dataclass` whose annotations are the schema: the loader
needs no second description of the keys. Supported annotations: bool, int, float, str,
Literal[...], list[T], tuple[T, ...], dict[str, T], nested dataclasses, and `T | None`.
A dataclass may define `validate(self)` raising ValueError for ranges; its message is
prefixed with the section's dotted path.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from typing import Any, Literal, get_args, get_origin, get_type_hints


class ConfigError(ValueError):
    """A config value or key that the schema does not allow."""


def closest_key(key: str, allowed: list[str]) -> str:
    match = difflib.get_close_matches(key, allowed, n=1, cutoff=0.5)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in get_args(tp))
    if origin in (list, tuple, dict):
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in get_args(tp) if a is not Ellipsis)}]"
    if tp is type(None):
        return "none"
    if dataclasses.is_dataclass(tp):
        return "table"
    return getattr(tp, "__name__", str(tp))


def coerce(value: Any, tp: Any, path: str) -> Any:
    """Check `value` against annotation `tp`; return it converted (ints to floats, lists to tuples)."""
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        if isinstance(value, str) and value.lower() == "none" and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return coerce(value, option, path)
            except ConfigError as e:
                errors.append(e)
        raise ConfigError(f"{path}: expected {_type_name(tp)}, got {value!r}")
    if origin is Literal:
        allowed = get_args(tp)
        if value in allowed and type(value) in {type(a) for a in allowed}:
            return value
        raise ConfigError(f"{path}: got {value!r}, allowed: {', '.join(repr(a) for a in allowed)}")
    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: expected a table, got {value!r}")
        return build(tp, value, path)
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list of {_type_name(get_args(tp)[0])}, got {value!r}")
        item_tp = get_args(tp)[0] if get_args(tp) else Any
        items = [coerce(v, item_tp, f"{path}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: expected a table, got {value!r}")
        val_tp = get_args(tp)[1] if get_args(tp) else Any
        return {str(k): coerce(v, val_tp, f"{path}.{k}") for k, v in value.items()}
    if tp is Any:
        return value
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{path}: expected true or false, got {value!r}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(f"{path}: expected an integer, got {value!r}")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ConfigError(f"{path}: expected a finite number, got {value!r}")
            return float(value)
        raise ConfigError(f"{path}: expected a number, got {value!r}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{path}: expected a string, got {value!r}")
    raise ConfigError(f"{path}: unsupported annotation {tp!r}")


def build(cls: type, data: dict, path: str = "") -> Any:
    """Instantiate dataclass `cls` from `data`, rejecting unknown keys and wrong types."""
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    kwargs = {}
    for key, value in data.items():
        dotted = f"{path}.{key}" if path else key
        if key not in fields:
            raise ConfigError(f"unknown key {dotted!r}{closest_key(key, list(fields))}; allowed in "
                              f"[{path or 'top level'}]: {', '.join(sorted(fields))}")
        kwargs[key] = coerce(value, hints[key], dotted)
    try:
        obj = cls(**kwargs)
    except TypeError as e:
        raise ConfigError(f"[{path or 'top level'}]: {e}") from e
    validate = getattr(obj, "validate", None)
    if callable(validate):
        try:
            validate()
        except ConfigError:
            raise
        except ValueError as e:
            raise ConfigError(f"{path + ': ' if path else ''}{e}") from e
    return obj


def to_dict(obj: Any) -> Any:
    """Dataclass tree -> TOML-ready dict (None values are dropped: TOML has no null)."""
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            value = to_dict(getattr(obj, f.name))
            if value is not None:
                out[f.name] = value
        return out
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items() if v is not None}
    return obj
