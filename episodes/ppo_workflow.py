"""The PPO package's training episode loop (`<algo>/train_workflow.py`): Kaiwu's
`workflow(envs, agents, logger, monitor)`, over every env it is given, in lockstep.

Per step (episodes.runner.EpisodeRunner): observation_process for every env, one batched
`agent.predict`, action_process, env.step; then reward_shaping and a Frame per env; segments go
to `agent.learn` (episodes.ppo_loop). Around the episodes (episodes.training with
episodes.realm_training, shared with the DQN package's loop): each finished episode reports its
shaped reward per term to `monitor.put_data`; episode settings come from the curriculum
([curriculum]); stages advance on this workflow's own episodes and on the run's learned frames,
which the agent's counters bring with every model it loads (so a resumed run keeps its stage).
"""
from __future__ import annotations

from agent.ppo_config import load_settings
from episodes.ppo_loop import ppo_workflow
from episodes.realm_training import RealmEpisodes
from feature.definition import action_process, observation_process, sample_process


workflow = ppo_workflow(load_settings, RealmEpisodes, observation_process, action_process, sample_process)
