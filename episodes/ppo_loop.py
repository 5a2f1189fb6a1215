"""The PPO package's episode loop, for any game's episodes (episodes.training.TrainingEpisodes):
an env's frames become one sample, a trajectory segment with the observation after its last frame
(the definition's sample_process), when they reach `ppo.num_steps` or the episode ends
(terminated, or truncated by the step limit), and go to `agent.learn([segment])`: on the platform
and in this toolkit's training system that sends it to the replay buffer. Nothing here values a
state: the learner computes values and advantages with its current critic (Agent.learn), so the
loop asks the agent for nothing but actions.

A recurrent policy ([model] core) gets its state back with each observation (episodes.runner)
and every segment stores the state it starts from (sample_process). With `[model] burn_in` a
segment cut mid-episode leaves its last burn_in frames to start the next one, marked as
warm-up: the learner unrolls them from the stored state but trains only on the frames after.
The loop runs until the framework stops it.
"""
from __future__ import annotations

from episodes.training import TrainingEpisodes
from kaiwu_agent.utils.common_func import Frame, attached


def ppo_workflow(load_settings, game_episodes, observation_process, action_process, sample_process):
    """Kaiwu's `workflow(envs, agents, logger, monitor)` of a PPO package (registered with the
    platform): its settings, its game's episodes (settings -> the TrainingEpisodes hooks) and its
    features around train_segments."""
    def workflow(envs, agents, logger=None, monitor=None, *args, **kwargs):
        settings = load_settings()
        episodes = TrainingEpisodes(envs, agents[0], game_episodes(settings), observation_process, action_process,
                                    logger, monitor)
        train_segments(episodes, agents[0], settings.ppo.num_steps, settings.model.burn_in, sample_process)
    return attached(workflow)


def train_segments(episodes, agent, num_steps: int, burn_in: int, sample_process) -> None:
    """Step `episodes` forever, sending each env's segments to `agent.learn`."""
    frames: list[list] = [[] for _ in episodes.episodes]
    warm_up = [0 for _ in episodes.episodes]  # leading frames of each env's segment repeated from its previous one
    while True:
        for t in episodes.step():
            if t.error is not None:
                frames[t.index], warm_up[t.index] = [], 0
                episodes.failed(t)
                continue
            reward = episodes.reward(t)
            frames[t.index].append(Frame(obs=t.before, act=t.act, reward=reward, terminated=t.terminated))
            if t.ended or len(frames[t.index]) >= num_steps:
                agent.learn(sample_process(frames[t.index], t.obs_data, warm_up[t.index]))
                warm_up[t.index] = 0 if t.ended else burn_in
                frames[t.index] = frames[t.index][len(frames[t.index]) - warm_up[t.index]:] if warm_up[t.index] else []
            if t.ended:
                episodes.ended(t.index)
