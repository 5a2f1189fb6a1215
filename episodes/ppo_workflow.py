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
from episodes.ppo_loop import train_segments
from episodes.realm_training import RealmEpisodes
from episodes.training import TrainingEpisodes
from feature.definition import action_process, observation_process, sample_process
from kaiwu_agent.utils.common_func import attached


@attached
def workflow(envs, agents, logger=None, monitor=None):
    settings = load_settings()
    episodes = TrainingEpisodes(envs, agents[0], RealmEpisodes(settings), observation_process, action_process,
                                logger, monitor)
    train_segments(episodes, agents[0], settings.ppo.num_steps, settings.model.burn_in, sample_process)
