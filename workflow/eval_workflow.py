"""Evaluation, Kaiwu's shape: greedy actions (`exploit`), one episode per usr_conf, a record each.

A policy is anything with `play(env, usr_conf, seed) -> EpisodeRecord`: `AgentPolicy` steps a
trained Agent through the protocol, `PlannerPolicy` asks the route planner. Both meet the same
episodes because `resolve_episodes` fixes every random chest draw up front: an episode is a
usr_conf with explicit `treasure_id` plus the reset seed, so agent and planner scores compare
like for like.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import toml
import torch

from agent.agent import Agent, CheckpointError
from agent.model import ModelConfig
from agent.ppo import PPOConfig
from feature.definition import action_process, observation_process
from realm.planner import run_planner
from realm.protocol import EpisodeConfig
from workflow.ckpt_files import parse_ckpt_id, run_dir_of
from workflow.schema import build


@dataclass(frozen=True)
class Episode:
    """One evaluation episode: a usr_conf whose chests are already drawn, and its reset seed."""

    index: int
    seed: int
    usr_conf: dict


@dataclass
class EpisodeRecord:
    total_score: float  # final score (0 when the step limit ran out)
    won: bool  # reached the end within max_step
    chests: int
    steps: int
    buff_count: int
    flash_count: int
    usr_conf: dict  # resolved: explicit treasure_id, treasure_random 0
    seed: int
    actions: list[int] = field(default_factory=list, repr=False)  # to replay the episode

    def to_row(self) -> dict:
        """Flat values for CSV/JSON (usr_conf as JSON text, actions left out)."""
        row = dataclasses.asdict(self)
        row.pop("actions")
        row["usr_conf"] = json.dumps(self.usr_conf, sort_keys=True)
        return row


def resolved_usr_conf(episode: EpisodeConfig) -> dict:
    """An EpisodeConfig as the usr_conf that replays it exactly (chests listed, none random)."""
    return {"diy": {
        "start": episode.start,
        "end": episode.end,
        "treasure_random": 0,
        "treasure_id": list(episode.treasure_id),
        "max_step": episode.max_step,
        "talent_type": episode.talent_type,
    }}


def resolve_episodes(env, usr_conf: dict | None, count: int, base_seed: int = 0) -> list[Episode]:
    """`count` episodes of `usr_conf` with seeds base_seed, base_seed+1, ...; random chests are
    drawn here, exactly as `env.reset` would draw them with that seed. Raises UsrConfError."""
    episodes = []
    for i in range(count):
        seed = base_seed + i
        env.reset(usr_conf=usr_conf, seed=seed)
        episodes.append(Episode(i, seed, resolved_usr_conf(env.episode)))
    return episodes


def record_from(env, score, terminated: bool, usr_conf: dict, seed: int, actions: list[int]) -> EpisodeRecord:
    return EpisodeRecord(
        total_score=float(score.total_score),
        won=bool(terminated),
        chests=int(score.treasure_count),
        steps=int(env.steps),
        buff_count=int(score.buff_count),
        flash_count=int(score.talent_count),
        usr_conf=usr_conf,
        seed=int(seed),
        actions=actions,
    )


POLICY_MODES = ("greedy", "sample")


class AgentPolicy:
    """A trained Agent acting through the protocol functions.

    "greedy" is Kaiwu's evaluation (`exploit`, the most probable action). "sample" draws from
    the policy as in training: a PPO policy that still spreads probability over moves can
    loop forever when forced to its argmax, so both are worth measuring. Sampling is seeded by
    the episode seed, so an episode replays identically.
    """

    def __init__(self, agent: Agent, name: str = "agent", mode: str = "greedy"):
        if mode not in POLICY_MODES:
            raise ValueError(f"policy mode {mode!r} is invalid: allowed {', '.join(POLICY_MODES)}")
        self.agent = agent
        self.name = name
        self.mode = mode

    def act(self, obs, env_info) -> int:
        obs_data = [observation_process(obs, env_info)]
        act_data = self.agent.predict(obs_data) if self.mode == "sample" else self.agent.exploit(obs_data)
        return action_process(act_data[0])

    def play(self, env, usr_conf: dict, seed: int) -> EpisodeRecord:
        if self.mode == "sample":
            self.agent.sample_generator.manual_seed(int(seed))
        obs = env.reset(usr_conf=usr_conf, seed=seed)
        env_info = env.env_info
        actions: list[int] = []
        while True:
            action = self.act(obs, env_info)
            actions.append(action)
            _, obs, score, terminated, truncated, env_info = env.step(action)
            if terminated or truncated:
                return record_from(env, score, terminated, usr_conf, seed, actions)


class PlannerPolicy:
    """The route planner with full map knowledge: the project's upper reference."""

    name = "planner"

    def play(self, env, usr_conf: dict, seed: int) -> EpisodeRecord:
        result = run_planner(env, usr_conf, seed=seed)
        return EpisodeRecord(
            total_score=float(result.total_score),
            won=bool(result.won),
            chests=int(result.chests),
            steps=int(result.steps),
            buff_count=int(result.buff_count),
            flash_count=int(result.flash_count),
            usr_conf=usr_conf,
            seed=int(seed),
            actions=[int(a) for a in result.actions],
        )


def workflow(envs, agents, logger=None, monitor=None, usr_confs: list[dict] | None = None,
             base_seed: int = 0) -> list[EpisodeRecord]:
    """Kaiwu's eval entry point: `agents[0]` plays one greedy episode per usr_conf on `envs[0]`.

    `monitor.put(record)` receives every finished episode. Random chests are drawn once per
    usr_conf with seed base_seed + i, so a rerun plays the same episodes.
    """
    env, policy = envs[0], AgentPolicy(agents[0])
    records = []
    for i, usr_conf in enumerate(usr_confs or [None]):
        episode = resolve_episodes(env, usr_conf, 1, base_seed + i)[0]
        record = policy.play(env, episode.usr_conf, episode.seed)
        records.append(record)
        if logger is not None:
            logger.info(f"eval episode {i}: score {record.total_score:.1f}, won {record.won}, "
                        f"chests {record.chests}, steps {record.steps}")
        if monitor is not None:
            monitor.put(record)
    return records


# --- checkpoints -> policies ---------------------------------------------------------------------

def _config_section(config_file: Path, section: str) -> dict | None:
    try:
        data = toml.loads(config_file.read_text())
    except (OSError, toml.TomlDecodeError) as e:
        raise CheckpointError(f"cannot read config {config_file}: {e}") from e
    return data.get(section)


RUN_CONFIG_NAMES = ("log/effective_config.toml", "config.toml")  # where a run keeps the config it used


def run_config_file(ckpt_file: str | Path) -> Path | None:
    """The effective config of the run a checkpoint belongs to, if it is there."""
    run_dir = run_dir_of(Path(ckpt_file).parent)
    for name in RUN_CONFIG_NAMES if run_dir is not None else ():
        if (run_dir / name).is_file():
            return run_dir / name
    return None


def load_agent(ckpt_file: str | Path, config_file: str | Path | None = None) -> Agent:
    """An Agent rebuilt from a checkpoint file: the network from the model config the file
    carries (else [model] of `config_file` or of the run's effective config), the value scale from
    whether it was trained with value normalisation. Raises CheckpointError."""
    ckpt_file = Path(ckpt_file)
    ckpt_id = parse_ckpt_id(ckpt_file)
    if ckpt_id is None or not ckpt_file.is_file():
        raise CheckpointError(f"not a checkpoint file (model.ckpt-N.pkl): {ckpt_file}")
    try:
        payload = torch.load(ckpt_file, map_location="cpu", weights_only=True)
    except Exception as e:
        raise CheckpointError(f"cannot read checkpoint {ckpt_file}: {type(e).__name__}: {e}") from e
    if not isinstance(payload, dict):
        raise CheckpointError(f"{ckpt_file} is not an agent checkpoint")
    model_dict = payload.get("model_config")
    if model_dict is None:
        source = Path(config_file) if config_file else run_config_file(ckpt_file)
        if source is None:
            raise CheckpointError(f"{ckpt_file} carries no model config and its run's effective config was not "
                                  "found; pass the run's config with --config")
        model_dict = _config_section(source, "model") or {}
    model_cfg = build(ModelConfig, dict(model_dict), "model")
    ppo_cfg = PPOConfig(value_norm=payload.get("value_norm") is not None)
    agent = Agent(model_cfg, ppo_cfg)
    agent.load_model(ckpt_file.parent, ckpt_id)
    return agent
