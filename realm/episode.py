"""What a simulator says of its running episode, in one place: the actions played, whether it has
ended, and the latest info a reset or step returned. The 2024 and v2 envs take EpisodeProgress;
gorge_chase counts its steps as the platform's `step_no` and takes only EpisodeOverError. Every
env checks an action with `checked_action`; a check before a run resets with `checked_reset`."""
from __future__ import annotations

from numbers import Integral

import numpy as np


class EpisodeOverError(RuntimeError):
    """`step` was called before `reset` or after the episode ended."""


def checked_reset(env, *args, **kwargs):
    """`env.reset(...)`, raising the error the env answered it with instead (an env that answers
    errors as the platform does keeps it in `answered_error`): a check before a run must fail on a
    usr_conf the run's envs would refuse, whichever way they say so."""
    result = env.reset(*args, **kwargs)
    error = getattr(env, "answered_error", None)
    if error is not None:
        raise error
    return result


class EpisodeProgress:
    """Mixin of an env that keeps `_steps` and `_done` and calls `_latest` for the info of its
    last reset or step."""

    _steps: int = 0
    _done: bool = False

    @property
    def steps(self) -> int:
        """Actions played in this episode."""
        return self._steps

    @property
    def done(self) -> bool:
        return self._done

    @staticmethod
    def _latest(info):
        """The latest reset's or step's info; EpisodeOverError before the first reset."""
        if info is None:
            raise EpisodeOverError("no episode yet: call reset() first")
        return info


def latest_info(attribute: str, doc: str) -> property:
    """An env's public view of the info its last reset or step kept in `attribute` (through
    EpisodeProgress._latest: EpisodeOverError before the first reset)."""
    return property(lambda env: env._latest(getattr(env, attribute)), doc=doc)


def checked_action(act, num_actions: int, allowed: str) -> int:
    """`act` as an int in [0, num_actions): a plain int, a numpy integer or a 0-d integer array;
    ValueError saying what is `allowed` for anything else (a bool too)."""
    if type(act) is not int:
        if isinstance(act, np.ndarray) and act.shape == () and np.issubdtype(act.dtype, np.integer):
            act = int(act)
        elif isinstance(act, Integral) and not isinstance(act, bool):
            act = int(act)
        else:
            raise ValueError(f"action {act!r} ({type(act).__name__}) is invalid: allowed {allowed}")
    if not 0 <= act < num_actions:
        raise ValueError(f"action {act!r} is invalid: allowed {allowed}")
    return act
