"""A game's rule options: every rule the public sources leave UNKNOWN, as a named constructor
keyword of its env with the spec's best guess as default, the readings an env with
`randomize_rules` draws per episode, the check of a value and the markdown table its rules page
prints. One mechanism for every game whose options are a table of (default, allowed, why)
(realm.gorge_chase.options, realm.robot_vacuum.options).
"""
from __future__ import annotations

from numbers import Integral

#: A reading some options allow beside their fixed ones (what extra_info hands a package): each
#: episode plays one of the option's other readings, drawn from the env's rule RNG, so one agent
#: trains for all of them.
MIXED = "mixed"


class RuleOptions:
    """`options`: name -> (default, allowed values, why); `candidates`: name -> the readings drawn
    per episode with randomize_rules (a subset of the allowed values)."""

    def __init__(self, options: dict, candidates: dict):
        for name, readings in candidates.items():
            allowed = options[name][1]
            if any(r not in allowed for r in readings):
                raise ValueError(f"option {name}: drawn readings {readings!r} are not all allowed")
        self.options = options
        self.candidates = candidates

    def check(self, name: str, value):
        """The value if allowed, else ValueError naming the option and what it allows."""
        default, allowed, why = self.options[name]
        if isinstance(default, str):
            ok = isinstance(value, str) and value in allowed
        else:
            ok = isinstance(value, Integral) and not isinstance(value, bool) and value in allowed
        if not ok:
            shown = (f"an int in {shown_values(allowed, '')}" if isinstance(allowed, range)
                     else shown_values(allowed, " | "))
            raise ValueError(f"option {name} = {value!r} is invalid: allowed {shown} ({why})")
        return value if isinstance(default, str) else int(value)

    def episode_value(self, name: str, value, rng):
        """`value`, or for MIXED one of the option's other readings drawn from `rng` for an episode."""
        if value != MIXED:
            return value
        return rng.choice([reading for reading in self.options[name][1] if reading != MIXED])

    def defaults(self) -> dict:
        return {name: spec[0] for name, spec in self.options.items()}

    def table(self) -> str:
        """The options as a markdown table (name, default, allowed, drawn per episode, why)."""
        lines = ["| option | default | allowed | drawn per episode | why |", "| --- | --- | --- | --- | --- |"]
        for name, (default, allowed, why) in self.options.items():
            drawn = ", ".join(map(repr, self.candidates[name])) if name in self.candidates else "no"
            lines.append(f"| `{name}` | `{default!r}` | {shown_values(allowed, ', ')} | {drawn} | {why} |")
        return "\n".join(lines)


def shown_values(allowed, sep: str) -> str:
    """An int range as "0..2", the readings of a str option joined by `sep`."""
    if isinstance(allowed, range):
        return f"{allowed.start}..{allowed.stop - 1}"
    return sep.join(repr(v) for v in allowed)
