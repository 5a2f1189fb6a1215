"""The PPO package's training episode loop (`<algo>/train_workflow.py`): Kaiwu's
`workflow(envs, agents, logger, monitor)`, over every env it is given, in lockstep.

Per step (episodes.runner.EpisodeRunner): observation_process for every env, one batched
`agent.predict`, action_process, env.step; then reward_shaping and a Frame per env; segments go
to `agent.learn` (episodes.ppo_loop). Around the episodes (episodes.training with
episodes.back_to_the_realm.episodes, shared with the DQN package's loop): each finished episode reports its
shaped reward per term to `monitor.put_data`; episode settings come from the curriculum
([curriculum]); stages advance on this workflow's own episodes and on the run's learned frames,
which the agent's counters bring with every model it loads (so a resumed run keeps its stage).
"""
from __future__ import annotations

from agent.back_to_the_realm.ppo_config import load_settings
from episodes.ppo_loop import ppo_workflow
from episodes.back_to_the_realm.episodes import game_episodes
from feature.back_to_the_realm.ppo_definition import action_process, observation_process, sample_process


workflow = ppo_workflow(load_settings, game_episodes, observation_process, action_process, sample_process)
