"""RealmEnv18: the game of `RealmEnv` (SPEC §3–§7) served in the 2025 Kaiwu protocol (code package 18.0.2).

One wrapped RealmEnv holds the game state and plays the rules; this module only translates, as
the platform's adapter (`kaiwu_env/back_to_the_realm`, `StepFrameReq2AISvrReq`) does with the
game's frame, so the two protocols can never disagree on the game:
- usr_conf `{"env_conf": {...}}` is validated (`realm.back_to_the_realm.usr_conf.validate_env_conf`) and played as
  the 2024 `{"diy": {...}}` of the same episode (`env_conf_to_diy`);
- `frame_state.organs` holds the chests (sub_type 1) and the buff (sub_type 2) within the view:
  Chebyshev distance ≤ 25 cells from the hero's cell (`get_organ_info(..., is_local_view=True)`);
- `game_info.treasure_count` is the episode's chest count, `treasure_collected_count` the
  chests taken; `start_pos` / `end_pos` are world positions;
- `ScoreInfo.score` / `total_score` are int32, truncated as the adapter's `int(...)`;
  `game_info.total_score` keeps the float (SPEC §6);
- `map_info` is 51 rows of 51 ints, obstacles only: 1 passable, 0 blocked or outside the map.

The window (`map_window`), with (xc, zc) the hero's cell and `passable[zc, xc]` the map (SPEC §1):
- "hero" (default): `map_info[r].values[c] == passable[zc - 25 + r, xc - 25 + c]`, the window
  centred on the hero's cell, rows = zc offset, columns = xc offset: SPEC §7's obstacle_map.
  The default because the official guide (exp2.md "视野域": a 51×51 square centred on the hero)
  and SPEC §7 define the view around the hero's cell, and the official package's Preprocessor
  places chests, the end and its memory map in this same frame (row = zc offset).
- "platform": `map_info[r].values[c] == passable[xc - 25 + r, zc - 25 + c]`, what the course copy
  of the platform's adapter serves: `convert_pos_to_grid_pos` returns the axis-swapped
  (zc, xc), `get_local_grid_info` unpacks it as (x, z) = (zc, xc) and slices
  `grid[z-25 : z+26, x-25 : x+26]` of `Flags.reshape(128, 128)`, which is indexed [zc, xc];
  so the window is centred on the transposed cell. For a competitor who wants to train on
  exactly what that adapter serves.
`env_conf["view_size"]` changes neither: the adapter's window radius is its game.yaml's
`view: 25`, not the usr_conf. The hero's cell (xc, zc), for both windows and for the organs in
view, is the cell of the served position `frame_state.heroes[0].pos` (int32 world units, the
game's exact position rounded): the adapter computes it from that position
(`convert_pos_to_grid_pos`), and so does the official package's Preprocessor. Within half a
world unit of a cell edge it is the neighbour of the game's exact cell (the 2024 `grid_pos`),
so there the "hero" window is not the 2024 `obstacle_map`.
"""
from __future__ import annotations

import numpy as np

from realm.back_to_the_realm.constants import GRID_SIZE, VIEW_RADIUS, VIEW_SIZE
from realm.back_to_the_realm.env import RealmEnv
from realm.back_to_the_realm.maps import cell_of
from realm.back_to_the_realm.protocol18 import (
    FrameState,
    GameInfo,
    MapInfo,
    Observation,
    Position,
    RealmHero,
    RealmOrgan,
    ScoreInfo,
    State,
    Talent,
)
from realm.back_to_the_realm.usr_conf import DEFAULT_ENV_CONF, env_conf_to_diy

MAP_WINDOWS = ("hero", "platform")


class RealmEnv18:
    """A RealmEnv behind the 2025 protocol: `reset(usr_conf, seed) -> (Observation, State)`,
    `step(act) -> (frame_no, Observation, ScoreInfo, terminated, truncated, State)`.
    `game` is the wrapped RealmEnv; the properties below are its own."""

    __slots__ = ("game", "map_window", "_cells", "_start_pos", "_end_pos")
    #: the Kaiwu protocol it speaks (realm.make_env's `protocol`), and the rules only it takes
    PROTOCOL = "18"
    PROTOCOL_RULES = ("map_window",)
    GAME = "back_to_the_realm"  # the game it plays (kaiwu.json's project_code): the 2024 one
    MAP_SOURCE = RealmEnv.MAP_SOURCE  # the 2024 game's maps

    @classmethod
    def from_source(cls, source, *, seed: int | None = None, map_window: str = MAP_WINDOWS[0],
                    **rules) -> "RealmEnv18":
        """realm.make_env's constructor: a RealmEnv of `source`, seed and the game's rules, served
        through `map_window`."""
        return cls(RealmEnv.from_source(source, seed=seed, **rules), map_window=map_window)

    def __init__(self, game: RealmEnv, *, map_window: str = "hero"):
        if map_window not in MAP_WINDOWS:
            raise ValueError(f"map_window = {map_window!r} is invalid: allowed {' | '.join(MAP_WINDOWS)}")
        self.game = game
        self.map_window = map_window
        self._cells = [(int(xc), int(zc)) for xc, zc in game.map.position_cells]
        self._start_pos = self._end_pos = None

    def reset(self, usr_conf: dict | None = None, seed: int | None = None) -> tuple[Observation, State]:
        """Start an episode; no usr_conf plays the official package's train_env_conf.toml."""
        if usr_conf is None:
            usr_conf = {"env_conf": dict(DEFAULT_ENV_CONF)}
        obs = self.game.reset(env_conf_to_diy(usr_conf), seed)
        positions = self.game.map.positions
        episode = self.game.episode
        self._start_pos = tuple(round(v) for v in positions[episode.start])
        self._end_pos = tuple(round(v) for v in positions[episode.end])
        return self._observation(obs, self.game.env_info), State()

    def step(self, act):
        frame_no, obs, score, terminated, truncated, env_info = self.game.step(act)
        score_info = ScoreInfo(int(score.score), int(score.total_score), score.treasure_count, score.buff_count, score.talent_count)
        return frame_no, self._observation(obs, env_info), score_info, terminated, truncated, State()

    def _observation(self, obs, env_info) -> Observation:
        frame = env_info.frame_state
        hero = frame.heroes[0]
        xc, zc = cell_of(hero.pos.x, hero.pos.z)  # of the served (rounded) position, as the adapter
        padded = self.game.map.padded_obstacle  # passable, padded by 25 blocked cells
        pad = 0
        if not (0 <= xc < GRID_SIZE and 0 <= zc < GRID_SIZE):  # rounded past the map's last cell
            padded, pad = np.pad(padded, 1), 1
        if self.map_window == "hero":
            window = padded[zc + pad : zc + pad + VIEW_SIZE, xc + pad : xc + pad + VIEW_SIZE]
        else:
            window = padded[xc + pad : xc + pad + VIEW_SIZE, zc + pad : zc + pad + VIEW_SIZE]
        map_info = [MapInfo(row) for row in window.tolist()]

        talent = hero.talent
        heroes = [RealmHero(hero.hero_id, Position(hero.pos.x, hero.pos.z), hero.speed_up,
                            Talent(talent.talent_type, talent.status, talent.cooldown))]
        organs = []
        for organ in frame.organs:
            oxc, ozc = self._cells[organ.config_id]
            if abs(oxc - xc) <= VIEW_RADIUS and abs(ozc - zc) <= VIEW_RADIUS:
                organs.append(RealmOrgan(organ.sub_type, organ.config_id, organ.status,
                                         Position(organ.pos.x, organ.pos.z), organ.cooldown))

        info = env_info.game_info
        game_info = GameInfo(
            info.score,
            info.total_score,
            info.step_no,
            Position(info.pos.x, info.pos.z),
            Position(*self._start_pos),
            Position(*self._end_pos),
            info.treasure_count,
            int(info.treasure_score),
            len(self.game.episode.treasure_id),
            info.buff_count,
            info.talent_count,
            info.buff_remain_time,
            info.buff_duration,
        )
        return Observation(FrameState(frame.frame_no, heroes, organs), game_info, map_info, list(obs.legal_act))

    # ---- the wrapped RealmEnv's own ---------------------------------------------------------

    @property
    def map(self):
        return self.game.map

    @property
    def episode(self):
        return self.game.episode

    @property
    def env_info(self):
        """The 2024 EnvInfo of the latest reset or step (the full, unfiltered frame)."""
        return self.game.env_info

    @property
    def hero_position(self) -> tuple[float, float]:
        return self.game.hero_position

    @property
    def frame_no(self) -> int:
        return self.game.frame_no

    @property
    def steps(self) -> int:
        return self.game.steps

    @property
    def done(self) -> bool:
        return self.game.done

    @property
    def flash_blocked(self) -> str:
        return self.game.flash_blocked

    @property
    def step_jitter(self) -> bool:
        return self.game.step_jitter

    def _place_hero(self, x: float, z: float) -> None:
        """Test hook of RealmEnv: the next step starts from world (x, z)."""
        self.game._place_hero(x, z)
