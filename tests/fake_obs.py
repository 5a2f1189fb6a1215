"""Hand-built protocol objects for feature and reward tests (no simulator needed)."""
from __future__ import annotations

import numpy as np

from realm.back_to_the_realm.constants import GRID_DISTANCE_SCALE, NUM_TREASURE_SLOTS, VIEW_SIZE, WORLD_SIZE
from realm.back_to_the_realm.protocol import (NULL_RELATIVE_POSITION, EnvInfo, FrameState, GameInfo, HeroState, Observation, Position,
                            RealmFeature, RelativePosition, RepeatedScalar, ScoreInfo, Talent)


def rel(cells: float | None) -> RelativePosition:
    """An object `cells` BFS cells away (None: null)."""
    if cells is None:
        return NULL_RELATIVE_POSITION
    return RelativePosition(direction=1, l2_distance=3, path_distance=3, grid_distance=cells / GRID_DISTANCE_SCALE)


def make_obs(pos=(10000.0, 20000.0), end_cells: float | None = 100.0, chest_cells: dict[int, float] | None = None,
             buff_cells: float | None = None, flash_ready: bool = True, obstacle: np.ndarray | None = None,
             memory: np.ndarray | None = None, treasure: np.ndarray | None = None, end_map: np.ndarray | None = None
             ) -> Observation:
    chest_cells = chest_cells or {}
    treasures = [rel(chest_cells.get(i + 1)) for i in range(NUM_TREASURE_SLOTS)]
    blank = np.zeros((VIEW_SIZE, VIEW_SIZE), dtype=np.float32)
    feature = RealmFeature(
        norm_pos=Position(pos[0] / WORLD_SIZE, pos[1] / WORLD_SIZE),
        grid_pos=Position(0, 0),
        start_pos=rel(50.0),
        end_pos=rel(end_cells),
        buff_pos=rel(buff_cells),
        treasure_pos=treasures,
        obstacle_map=RepeatedScalar(np.ones((VIEW_SIZE, VIEW_SIZE), dtype=np.int32) if obstacle is None else obstacle),
        memory_map=RepeatedScalar(blank.copy() if memory is None else memory),
        treasure_map=RepeatedScalar(blank.copy() if treasure is None else treasure),
        end_map=RepeatedScalar(blank.copy() if end_map is None else end_map),
    )
    return Observation(legal_act=[1, 1 if flash_ready else 0], feature=feature)


def make_score(chests: int = 0, buff: int = 0, flashes: int = 0, total: float | None = None) -> ScoreInfo:
    score = 100.0 * chests
    return ScoreInfo(score=score, total_score=score if total is None else total, treasure_count=chests,
                     buff_count=buff, talent_count=flashes)


def make_env_info(pos=(10000.0, 20000.0), speed_up: bool = False, step_no: int = 0) -> EnvInfo:
    hero = HeroState(hero_id=1, pos=Position(*pos), speed_up=int(speed_up), talent=Talent(1, 1, 0))
    game = GameInfo(score=0.0, total_score=0.0, step_no=step_no, pos=Position(*pos), treasure_count=0,
                    treasure_score=0.0, buff_count=0, talent_count=0, buff_remain_time=0, buff_duration=10000)
    return EnvInfo(frame_state=FrameState(frame_no=3 * step_no + 1, heroes=[hero], organs=[]), game_info=game)


def rows_from(agent, n=16, seed=0, segment=8):
    """Replay rows as an aisrv makes them: the agent plays n frames of one episode, cut into
    segments of `segment` frames (sample_process), SampleData2NumpyData."""
    import numpy as np

    from feature.back_to_the_realm.ppo_definition import Frame, ObsData, SampleData2NumpyData, sample_process
    from feature.back_to_the_realm.layout import MAP_SHAPE, STATE_DIM, legal_mask

    rng = np.random.default_rng(seed)
    obs = [ObsData(map=rng.random(MAP_SHAPE, dtype=np.float32), state=rng.random(STATE_DIM, dtype=np.float32),
                   legal=legal_mask([1, 1])) for _ in range(n + 1)]
    frames = [Frame(obs=o, act=a, reward=float(r), terminated=False)
              for o, a, r in zip(obs, agent.predict(obs[:n]), rng.normal(size=n))]
    return np.stack([SampleData2NumpyData(s) for start in range(0, n, segment)
                     for s in sample_process(frames[start:start + segment], obs[min(start + segment, n)])])
