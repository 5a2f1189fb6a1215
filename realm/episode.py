"""What a simulator says of its running episode, in one place: the actions played, whether it has
ended, and the latest info a reset or step returned. The 2024 and v2 envs take EpisodeProgress;
gorge_chase counts its steps as the platform's `step_no` and takes only EpisodeOverError."""
from __future__ import annotations


class EpisodeOverError(RuntimeError):
    """`step` was called before `reset` or after the episode ended."""


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
