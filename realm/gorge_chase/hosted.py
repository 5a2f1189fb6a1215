"""gorge_chase's env as realm.make_env builds it (protocol "gorge"): the simulator's
GorgeChaseEnv (realm/gorge_chase/env.py) with the attributes make_env and the game registry
read, on the maps [env] names (a folder of official maps, else the generated maps of map_seed)."""
from __future__ import annotations

from realm.gorge_chase.env import GorgeChaseEnv
from realm.gorge_chase.options import OPTIONS


class HostedGorgeChaseEnv(GorgeChaseEnv):
    PROTOCOL = "gorge"
    GAME = "gorge_chase"
    #: make_env keywords beside flash_blocked, step_jitter and seed
    PROTOCOL_RULES = ("maps_folder", "map_id", *OPTIONS)

    @classmethod
    def on_files(cls, map_file=None, positions_file=None, map_seed: int = 0, *, maps_folder=None,
                 flash_blocked: str = "nearest", step_jitter: bool = False, seed=None, **rules):
        """The env on `maps_folder` (official map files by id) or the generated maps of `map_seed`.
        The 2024 game's map_file / positions_file and step_jitter are refused, naming what to set;
        flash_blocked is the other games' rule (a gorge flash lands on its farthest free cell)."""
        from realm.gorge_chase.generator import GeneratedMaps
        from realm.gorge_chase.maps import MapFolder

        if map_file is not None or positions_file is not None:
            raise ValueError("map_file / positions_file are Back to the Realm maps; gorge_chase's official maps are a "
                             "folder: set [env] gorge_maps (gorge_chase_map_<id>.json files), or map_seed")
        if step_jitter:
            raise ValueError("step_jitter is a Back to the Realm rule; gorge_chase has none")
        maps = MapFolder(maps_folder) if maps_folder is not None else GeneratedMaps(map_seed)
        return cls(maps, seed=seed, **rules)
