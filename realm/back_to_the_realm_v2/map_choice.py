"""Which map an episode plays: the one its usr_conf's `map_name` names.

A folder of official map files (`maps_dir`, the run's `[env] maps_dir`) holds `<map_name>.json`
(`{"Flags": [...]}`) and, beside it, `<map_name>_obstacles.json`. A name without a file there
plays the stand-in: the run's `map_file` when given, else the generated map of `map_seed` through
that map's official points; `map_for` says so in a note, which the env puts on stderr once per
process (`warn_stand_in`).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from realm.back_to_the_realm_v2.generator import generated_v2_map
from realm.back_to_the_realm_v2.maps import V2Map, load_v2_map_cached

DEFAULT_MAP_NAME = "map_cherry"
OBSTACLES_SUFFIX = "_obstacles.json"

_WARNED: set[str] = set()  # the stand-in notes this process has put on stderr


def warn_stand_in(note: str) -> None:
    """`note` (map_for's: which map a map_name plays instead of its own) on stderr, the first time
    in this process: every env of a process plays the same map names."""
    if note not in _WARNED:
        _WARNED.add(note)
        print(f"warning: {note}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class V2MapChoice:
    """Where an env finds the map of each map_name (all paths as given; maps are cached per process)."""

    maps_dir: str | None = None
    map_file: str | None = None
    obstacles_file: str | None = None
    map_seed: int = 0
    flags_order: str = "zx"
    map_name: str | None = None  # the map_name map_file stands for (default: its stem's)

    def files_of(self, map_name: str) -> tuple[Path, Path | None] | None:
        """(`<maps_dir>/<map_name>.json`, its obstacles json or None), None when there is no such map file."""
        if self.maps_dir is None:
            return None
        map_file = Path(self.maps_dir) / f"{map_name}.json"
        if not map_file.is_file():
            return None
        obstacles = map_file.with_name(map_name + OBSTACLES_SUFFIX)
        return map_file, obstacles if obstacles.is_file() else None

    def first_map(self) -> V2Map:
        """The map an env starts on: `map_file`'s, else that of `map_name` (map_cherry when none)."""
        if self.map_file is not None:
            return self._stand_in(None)
        return self.map_for(self.map_name or DEFAULT_MAP_NAME)[0]

    def map_for(self, map_name: str) -> tuple[V2Map, str | None]:
        """(the map an episode of `map_name` plays, a note when it is a stand-in the run did not ask for)."""
        files = self.files_of(map_name)
        if files is not None:
            map_file, obstacles = files
            return load_v2_map_cached(str(map_file.resolve()), None if obstacles is None else str(obstacles.resolve()),
                                      map_name, self.flags_order), None
        game_map = self._stand_in(map_name)
        if self.maps_dir is not None:
            return game_map, (f"[env] maps_dir {self.maps_dir} has no {map_name}.json: episodes of map_name {map_name!r} "
                              f"play {self._stand_in_name(map_name)} instead")
        if self.map_file is not None and game_map.map_name != map_name:
            return game_map, (f"episodes of map_name {map_name!r} play {self._stand_in_name(map_name)}, a "
                              f"{game_map.map_name} file ([env] maps_dir names a folder of <map_name>.json)")
        return game_map, None

    def _stand_in(self, map_name: str | None) -> V2Map:
        if self.map_file is not None:
            return load_v2_map_cached(str(Path(self.map_file).resolve()),
                                      None if self.obstacles_file is None else str(Path(self.obstacles_file).resolve()),
                                      self.map_name, self.flags_order)
        return generated_v2_map(self.map_seed, map_name or DEFAULT_MAP_NAME)

    def _stand_in_name(self, map_name: str) -> str:
        if self.map_file is not None:
            return f"the run's [env] map_file {self.map_file}"
        return f"the generated map of map_seed {self.map_seed} through {map_name}'s official points"
