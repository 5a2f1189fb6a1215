"""Where an env's maps come from, as `realm.make_env` takes it for every game: a `MapSource`.

Each env class of `realm.ENVS` names the fields it reads (`MAP_SOURCE`) and builds itself from a
source with one classmethod of one signature, `from_source(source, *, seed=None, **rules)`;
make_env refuses a field the game has no use for, naming what it reads. The 2024 game's map
(an official map file with its position_pool.json, else the generated map of map_seed) is
`realm_map`.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

from realm.back_to_the_realm.generator import generate_map
from realm.back_to_the_realm.maps import Map, load_official_map_cached


@dataclass(frozen=True)
class MapSource:
    """An env's maps: an official map file with its companion file, a folder of official map files
    an episode's usr_conf picks from, else the generated maps of `map_seed`."""

    map_file: str | None = None  # an official map file (2024: the map's json; v2: map_data/<map_name>.json)
    positions_file: str | None = None  # 2024: the map's position_pool.json (the 16 special positions)
    obstacles_file: str | None = None  # v2: the obstacles json beside map_file
    maps_folder: str | None = None  # official maps by map_name (v2) or map id (gorge_chase, robot_vacuum), picked at each reset
    map_seed: int = 0  # the generated map(s) played where no file is given

    def given(self) -> tuple[str, ...]:
        """The file and folder fields that are set."""
        return tuple(f.name for f in fields(self) if f.name != "map_seed" and getattr(self, f.name) is not None)

    def check_for(self, env_class) -> None:
        """ValueError naming each given field `env_class` (an env of realm.ENVS) does not read."""
        unread = [name for name in self.given() if name not in env_class.MAP_SOURCE]
        if unread:
            reads = ", ".join((*env_class.MAP_SOURCE, "map_seed"))
            hint = f"; {env_class.MAP_HINT}" if getattr(env_class, "MAP_HINT", "") else ""
            raise ValueError(f"{', '.join(unread)}: not a map source of protocol {env_class.PROTOCOL!r} "
                             f"({env_class.GAME}), which reads {reads}{hint}")


@lru_cache(maxsize=16)
def _generated_map(seed: int) -> Map:
    """Generated maps are immutable: envs in one process share one instance per seed."""
    return generate_map(seed)


def realm_map(source: MapSource) -> Map:
    """The 2024 game's map of `source`: map_file with positions_file (both, or neither), else the
    generated map of map_seed. Official maps are cached per process by their resolved paths."""
    if source.map_file is not None:
        if source.positions_file is None:
            raise ValueError("map_file needs positions_file (the position_pool.json with the 16 special positions)")
        return load_official_map_cached(str(Path(source.map_file).resolve()),
                                        str(Path(source.positions_file).resolve()))
    if source.positions_file is not None:
        raise ValueError("positions_file is only used with map_file; pass both, or neither for a generated map")
    return _generated_map(source.map_seed)
