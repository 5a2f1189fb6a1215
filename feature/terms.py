"""The one mechanism behind every game's reward shaping: a game's reward module declares its
terms once, as a table of `Term`s (name, default weight, what it measures, how), and its
`Shaping` gives the [reward] section's dataclass and the weighted sum, so adding a term is one
table entry (and, to tune it, its weight in the TOML). Each term is reported on its own."""
from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class Term:
    name: str
    weight: float  # the default weight (the config's field of the same name)
    doc: str
    value: Callable[[Any], float]  # unweighted, of the game's step change


def reward_config(table: Sequence[Term], extra: Sequence[tuple[str, type, Any]], validate: Callable,
                  doc: str, module: str) -> type:
    """The section's dataclass: one float field per term (its default weight), `scale` (multiplies
    every term) and the game's `extra` (name, type, default) fields; `validate(cfg)` checks them."""
    fields = [(t.name, float, field(default=t.weight)) for t in table] + [("scale", float, field(default=1.0))]
    fields += [(name, kind, field(default=default)) for name, kind, default in extra]

    def check(cfg) -> None:
        if cfg.scale <= 0:
            raise ValueError(f"scale must be > 0, got {cfg.scale}")
        validate(cfg)

    config = make_dataclass("RewardConfig", fields, namespace={"validate": check, "__doc__": doc})
    config.__module__ = module
    return config


def weighted_terms(table: Sequence[Term], change, cfg) -> tuple[float, dict[str, float]]:
    """(total, terms) of one step: each term's value × its weight × cfg.scale."""
    terms = {t.name: float(getattr(cfg, t.name) * t.value(change) * cfg.scale) for t in table}
    return sum(terms.values()), terms


class Shaping:
    """A game's reward: its term table, the step change its terms read (`change(prev, cur, action,
    cfg)` of two consecutive step views), and the config section built from the table.
    `shaping(prev, cur, action, cfg)` -> (total, terms), `sum(terms.values()) == total`."""

    def __init__(self, table: Sequence[Term], change: Callable, doc: str, module: str,
                 extra: Sequence[tuple[str, type, Any]] = (), validate: Callable = lambda cfg: None):
        self.table = tuple(table)
        self.terms: tuple[str, ...] = tuple(t.name for t in self.table)
        self.change = change
        self.config = reward_config(self.table, extra, validate, doc, module)

    def __call__(self, prev, cur, action: int, cfg) -> tuple[float, dict[str, float]]:
        """Shaped reward of the step from `prev` to `cur` taken with `action` -> (total, terms)."""
        return weighted_terms(self.table, self.change(prev, cur, action, cfg), cfg)
