"""Upper bounds of the integer sizes in the package sections ([model] [ppo] [dqn]): beyond them
a value is a typo that would exhaust memory or overflow torch long after the run started, so the
sections' validate() refuses it up front, naming the key and what is allowed."""
from __future__ import annotations

MAX_COUNT = 10**12  # samples or train steps a schedule runs over: beyond any run, exact as a float
MAX_CHUNK_FRAMES = 8192  # frames one env holds (a full sample row each) before they become samples
MAX_PASSES = 1000  # epochs over a batch, minibatches per epoch
MAX_VISITS = 2000  # the game's longest episode: no cell is visited more often
MAX_CORE_SIZE = 4096  # units of a recurrent core (the PPO package also bounds its state by a sample row's room)
MAX_BACKBONE_PARAMS = 50_000_000  # one backbone (the learner keeps optimizer moments beside it, every aisrv a copy)


def check_at_most(section, limits: dict[str, int]) -> None:
    """ValueError naming the first of `limits`' keys whose value in `section` is above its bound."""
    for key, most in limits.items():
        value = getattr(section, key)
        if value is not None and value > most:
            raise ValueError(f"{key} = {value} is too large: at most {most}")
