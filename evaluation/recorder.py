"""Recording episodes (evaluation.recording's files), for every game the same way.

The policy plays the episode once while a probe notes, per decision, what a policy that exposes
it weighed: the project's PPO agents call `act_probe` (agent.ppo_base_agent) with the action
probabilities, the critic's value and the observation's feature planes. Then the episode is
replayed from its actions (the env repeats an episode for its usr_conf and seed) through the
episode runner with the game's training episodes (games.Game.shaped_reward: the project's reward
for the checkpoint's settings, else its defaults), which give each step's reward and terms, while
the game says what the world holds at each step (games.Game.recorded_state). A replay that ends
with another score than the play is an error: the recording would show another episode.

The reference policy's recording of the same episode goes beside the agent's, named in its header.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from pathlib import Path

from episodes.runner import EpisodeRunner
from evaluation.recording import PLANE_SCALE, encode_plane, file_name, write_recording


class PolicyProbe:
    """An act_probe that keeps each decision's probabilities, value and feature planes."""

    def __init__(self):
        self.decisions: list[dict] = []
        self.plane_shape: list[int] | None = None

    def __call__(self, list_obs_data, probabilities, values, actions) -> None:
        for obs, probs, value in zip(list_obs_data, probabilities, values):
            decision = {"probs": [round(float(p), 4) for p in probs], "value": round(float(value), 4)}
            planes = getattr(obs, "map", None)
            if planes is not None and getattr(planes, "ndim", 0) == 3:
                self.plane_shape = [int(n) for n in planes.shape]
                decision["planes"] = [encode_plane(plane) for plane in planes]
            self.decisions.append(decision)


@contextmanager
def probing(policy):
    """A PolicyProbe on the policy's agent while the block runs (None: the policy exposes nothing)."""
    agent = getattr(getattr(policy, "loaded", None), "agent", None)
    if agent is None or not hasattr(agent, "act_probe"):
        yield None
        return
    probe = PolicyProbe()
    agent.act_probe = probe
    try:
        yield probe
    finally:
        agent.act_probe = None


def _replay_actions(actions):
    remaining = iter(actions)
    return lambda list_obs: [int(next(remaining)) for _ in list_obs]


def replay_steps(game, env, usr_conf: dict, seed: int, actions: list[int], reward) -> tuple[dict, list[dict], dict]:
    """The episode replayed from `actions`: the world at its reset (games.Game.recorded_world), its
    states with, per step, the shaped reward and its terms of `reward` (a GameEpisodes; None: no
    reward) and the events; and the final score and counts."""
    runner = EpisodeRunner([env], _replay_actions(actions), lambda obs, info: obs, int,
                           getattr(reward, "kaiwu_version", None) or env.PROTOCOL, translate=reward is not None,
                           view=getattr(reward, "obs_view", None), usr_conf_of=getattr(reward, "env_usr_conf", None))
    obs = runner.reset(0, usr_conf, seed=seed)
    if obs is None:
        raise RuntimeError(f"the env's reset gave no observation for usr_conf {usr_conf}")
    world = game.recorded_world(env)
    view = reward.view(obs) if reward is not None else None
    steps = [{"t": 0, **game.recorded_state(env), "score": 0.0, "events": []}]
    counts = {"chests": 0, "buff_count": 0, "flash_count": 0}
    final = None
    for t in range(len(actions)):
        (transition,) = runner.step([0])
        if transition.error is not None:
            raise transition.error
        score = transition.score
        step = {"t": t + 1, **game.recorded_state(env), "score": round(float(score.total_score), 4)}
        events = []
        for event, key, value in (("chest", "chests", score.treasure_count), ("buff", "buff_count", score.buff_count),
                                  ("flash", "flash_count", score.talent_count)):
            if int(value) > counts[key]:
                events.append(event)
            counts[key] = int(value)
        if reward is not None:
            after = reward.view(transition.obs, transition)
            total, terms = reward.shape(view, after, transition.action)
            view = after
            step["reward"] = round(float(total), 5)
            step["terms"] = {name: round(float(value), 5) for name, value in terms.items()}
        step["events"] = events
        steps.append(step)
        if transition.ended:
            final = transition
            break
    if final is None or len(steps) != len(actions) + 1:
        raise RuntimeError(f"replaying {len(actions)} actions of seed {seed} ended after {len(steps) - 1} steps")
    return world, steps, {"total_score": float(final.score.total_score), "terminated": final.terminated, **counts}


def record_episode(game, env, policy, episode, source: dict) -> tuple[dict, list[dict]]:
    """(header, steps) of `episode` (games.base.Episode) played by `policy` on `env` (the game's
    evaluation env); `source` says where the policy came from (name, kind, checkpoint, package,
    config, mode, label) and goes into the header."""
    with probing(policy) as probe:
        record = policy.play(env, episode.usr_conf, episode.seed)
    decisions = probe.decisions if probe is not None else []
    agent = getattr(getattr(policy, "loaded", None), "agent", None)
    reward = game.shaped_reward(getattr(agent, "settings", None))
    world, steps, replayed = replay_steps(game, env, episode.usr_conf, episode.seed, record.actions, reward)
    if not math.isclose(replayed["total_score"], record.total_score, abs_tol=1e-6):
        raise RuntimeError(f"replaying seed {episode.seed} scored {replayed['total_score']}, the policy "
                           f"{record.total_score}: the env is not deterministic for this episode")
    exposes = []
    if len(decisions) == len(record.actions) and decisions:  # one act per step: each decision is its step's
        exposes = ["probs", "value"] + (["planes"] if probe.plane_shape else [])
        for step, decision in zip(steps, decisions):
            # over the game's actions: a model with more outputs (robot_vacuum's 8 moves) masks the rest
            step.update(decision, probs=decision["probs"][:len(game.action_names)])
    for step, action in zip(steps, record.actions):
        step["action"] = int(action)
    steps[-1]["events"].append(game.outcomes[0] if record.won else game.outcomes[1])
    planes = None
    if "planes" in exposes:
        names = game.plane_names()
        count = probe.plane_shape[0]
        planes = {"names": list(names) if len(names) == count else [f"plane {i}" for i in range(count)],
                  "shape": probe.plane_shape[1:], "scale": PLANE_SCALE}
    own_settings = isinstance(getattr(agent, "settings", None), game.reward_settings_classes())
    header = {
        "game": game.name,
        "policy": {**source, "exposes": exposes},
        "episode": {"label": source.get("label"), "usr_conf": episode.usr_conf, "seed": int(episode.seed),
                    "index": int(episode.index)},
        "world": world,
        "actions": list(game.action_names),
        "planes": planes,
        "terms": sorted(steps[1].get("terms", {})) if len(steps) > 1 else [],
        "reward": None if reward is None else ("the checkpoint's settings" if own_settings
                                               else "the project's default settings"),
        "result": {"total_score": float(record.total_score), "won": bool(record.won),
                   "outcome": game.outcomes[0] if record.won else game.outcomes[1], "chests": int(record.chests),
                   "chests_available": int(record.chests_available), "steps": int(record.steps),
                   "buff_count": int(record.buff_count), "flash_count": int(record.flash_count)},
        "reference": None,
    }
    return header, steps


def reference_source(label: str | None) -> dict:
    """The header's `policy` of the game's reference policy."""
    return {"name": "planner", "kind": "reference", "checkpoint": None, "package": None, "config": None,
            "mode": None, "label": label}


def record_episodes(folder: str | Path, game, env, players: list[tuple[object, dict]], episodes: list,
                    label: str | None, expected: dict | None = None) -> list[Path]:
    """Each episode played by the game's reference and by each player of `players`, (a callable
    giving the policy, loaded once; its source for the header), each agent's header naming the
    reference's file of its episode. `expected` ({source name: {episode index: score}}, an
    evaluation's scores) must be met, else RuntimeError. Returns the files, the reference's first."""
    folder = Path(folder)
    written, references = [], {}
    reference = game.reference_policy()
    for episode in episodes:
        header, steps = record_episode(game, env, reference, episode, reference_source(label))
        path = write_recording(folder / file_name("planner", episode.index, episode.seed), header, steps)
        references[episode.index] = path.name
        written.append(path)
    for make_policy, source in players:
        policy = make_policy()
        for episode in episodes:
            header, steps = record_episode(game, env, policy, episode, {**source, "label": label})
            wanted = (expected or {}).get(source["name"], {}).get(episode.index)
            if wanted is not None and not math.isclose(wanted, header["result"]["total_score"], abs_tol=1e-6):
                raise RuntimeError(f"{source['name']} scored {header['result']['total_score']} on episode "
                                   f"{episode.index} (seed {episode.seed}) when recorded, {wanted} when evaluated")
            header["reference"] = references[episode.index]
            written.append(write_recording(folder / file_name(source["name"], episode.index, episode.seed), header,
                                           steps))
    return written
