"""Protocol objects -> plain, JSON-ready dicts, for logging and debugging."""
from __future__ import annotations

import dataclasses

from realm.protocol import EnvInfo, Observation, RelativePosition, ScoreInfo, as_grid


def _rel(rel: RelativePosition) -> dict | None:
    return None if rel.is_null else dataclasses.asdict(rel)


def unpack_obs(obs: Observation, with_maps: bool = False) -> dict:
    """Observation -> dict. Null objects become None; the 51×51 maps only when asked for."""
    f = obs.feature
    out = {
        "legal_act": list(obs.legal_act),
        "norm_pos": (f.norm_pos.x, f.norm_pos.z),
        "grid_pos": (f.grid_pos.x, f.grid_pos.z),  # axis-swapped as in the protocol: (zc, xc)
        "start": _rel(f.start_pos),
        "end": _rel(f.end_pos),
        "buff": _rel(f.buff_pos),
        "treasures": {i + 1: _rel(r) for i, r in enumerate(f.treasure_pos) if not r.is_null},
    }
    if with_maps:
        for name in ("obstacle_map", "memory_map", "treasure_map", "end_map"):
            out[name] = as_grid(getattr(f, name)).tolist()
    return out


def unpack_score(score: ScoreInfo) -> dict:
    return dataclasses.asdict(score)


def unpack_env_info(env_info: EnvInfo) -> dict:
    """EnvInfo -> {"hero": {...}, "organs": [...], "game": {...}} with positions as (x, z)."""
    hero = env_info.frame_state.heroes[0]
    game = dataclasses.asdict(env_info.game_info)
    game["pos"] = (env_info.game_info.pos.x, env_info.game_info.pos.z)
    return {
        "hero": {
            "hero_id": hero.hero_id,
            "pos": (hero.pos.x, hero.pos.z),
            "speed_up": hero.speed_up,
            "talent": dataclasses.asdict(hero.talent),
        },
        "organs": [
            {"sub_type": o.sub_type, "config_id": o.config_id, "status": o.status,
             "pos": (o.pos.x, o.pos.z), "cooldown": o.cooldown}
            for o in env_info.frame_state.organs
        ],
        "game": game,
    }
