"""The 2025 wire (code package 18.0.2), field by field, against the platform's own encoder.

Episodes on the official map 1 (the route planner's actions: chests, the buff, a flash, a won
and a truncated end, plus a hero placed half a unit short of a cell edge) are played by
`RealmEnv18(map_window="platform")`. At every step, the reset included, the game's full state
(`env.env_info`: every organ, game_info; the episode's start / end ids and chest count) is
written out as the engine-side frame that the platform's `Parse_StepFrameReq.encode` reads and
sent through the platform's own files in a subprocess: `encode` -> `StepFrameReq` ->
`SkylarenaDataHandler.StepFrameReq2AISvrReq` -> `Parse_AIServerRequest.decode`, each message
read back with `MessageToDict(preserving_proto_field_name=True)`. What the simulator served
must equal what came back: frame_no, frame_state (the hero, the organs in view with every
field, in order), game_info (all 13 fields), legal_act, map_info (51 x 51), score_info,
terminated / truncated. A "hero" window env plays the same actions alongside: everything but
map_info is the same, and its window is the adapter's with the centre transposed.

The subprocess imports the platform's files from ../shared/kaiwu18/platform; the modules they
import that are not there get stand-ins: `kaiwu_env.conf` (the position table from
../shared/realm/crab.yaml, the platform's game.yaml, the map json, `yaml_arena`),
`kaiwu_env.env.protocol.BaseSkylarenaDataHandler` and `arena_proto.arena2plat_pb2` (unused on
this path).

What the public sources leave unclear, and what the simulator chose (each asserted below):
- game_info.treasure_count. The observation's game_info is the StepFrameReq's, which `encode`
  fills with treasure_collected_count = the engine's collected count and treasure_count = the
  engine's `total_treasure_count`. The adapter's `get_game_info` (the replay frames it saves)
  fills treasure_count with the collected count instead (its FIXME). The simulator serves the
  observation's meaning: treasure_count = the episode's chest count (`len(treasure_id)`, the
  platform monitor's `len(organs) - 1`), treasure_collected_count = the chests taken.
- hero_id. The adapter's `AISvrRsp2StepFrameRsp` commands hero_id 1112; the frame carries the
  game's own hero_id, passed through unchanged. The simulator's game reports 1 (HERO_ID) and
  serves it; the Command's 1112 never reaches an observation.
- game_info.score / total_score are proto `float` (32 bits): the decoded message holds the
  float32 of the game's score (999.4 arrives as 999.4000244140625). The simulator serves the
  game's Python float; it is the value MessageToDict prints, and float32(served) is the wire's.
- game_info.treasure_score is int32 and `encode` refuses a float (TypeError), so the engine
  reports an int; the simulator serves int(treasure_score) (the 2024 EnvInfo holds 100.0 per
  chest). ScoreInfo's score / total_score are the adapter's int(...) truncations.
- terminated / truncated travel as int32 0 / 1; the simulator's step returns Python bools
  (equal to 0 / 1).
- Organ and start / end positions. The adapter replaces each organ's pos by its config_id's
  entry of the crab position table (`get_nature_pos`), and start_pos / end_pos are that
  table's entries of start_id / end_id; the simulator serves the rounded positions of
  position_pool.json, which is the same table on map 1.
- Organ order: the adapter keeps the engine's order; the real engine's order is not in the
  sources. The simulator's game lists the chests in ascending id order, then the buff.
- The hero's cell. The adapter computes it from the frame's int32 hero position
  (`convert_pos_to_grid_pos`), for the organs in view and the window. The simulator used the
  game's exact cell, which within half a world unit of a cell edge is the neighbour of the
  served position's cell: a window one cell off and organs 25 / 26 cells away missing or extra.
  Fixed in realm/back_to_the_realm/env18.py: the cell of the served position, for both windows and the organs.
- map_info. The adapter's window is centred on the transposed cell (map_window="platform",
  realm/back_to_the_realm/env18.py); the default "hero" window is centred on the hero's cell. The adapter slices
  the map json's raw Flags; the simulator serves passable as 1, anything else as 0 (map 1 holds
  only 0 and 1).
- The reset observation: the handler's reset builds no observation, so whether the platform's
  reset goes through StepFrameReq2AISvrReq is not in the sources. The simulator's reset
  observation (frame_no 1, step_no 0) is what that function makes of the reset frame.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import realm
from realm.back_to_the_realm.constants import CELL_WIDTH, HERO_ID, ORIGIN_X, ORIGIN_Z, VIEW_RADIUS
from realm.back_to_the_realm.maps import cell_center, cell_of
from realm.back_to_the_realm.reference import run_planner

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
PLATFORM = SHARED / "kaiwu18" / "platform"
ADAPTER = PLATFORM / "kaiwu_env" / "back_to_the_realm"
OFFICIAL = SHARED / "realm"
MAP_FILE, POSITIONS_FILE, CRAB_FILE = OFFICIAL / "map_1.json", OFFICIAL / "position_pool.json", OFFICIAL / "crab.yaml"
GAME_YAML = PLATFORM / "kaiwu_env" / "conf" / "back_to_the_realm" / "game.yaml"
GAME_ID = "wire18"

# Runs in `python -I -B`: argv = platform dir, crab.yaml, game.yaml, map json; stdin = the
# engine frames as JSON; stdout = what the platform's adapter made of each, as JSON.
PLATFORM_WIRE = r"""
import json, re, sys, types
platform, crab_file, game_yaml, map_file = sys.argv[1:5]
sys.path[:0] = [platform]


def stand_in(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def scalar(text):
    text = text.strip().strip('"')
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_game_yaml(path):
    # the flat `key: value` lines and one level of nesting: all that game.yaml holds
    top, parent = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].rstrip()
        if not line.strip() or line.strip() == "---":
            continue
        key, _, value = line.strip().partition(":")
        if not line.startswith(" "):
            if value.strip():
                top[key], parent = scalar(value), None
            else:
                parent = top[key] = {}
        elif parent is not None:
            parent[key] = scalar(value)
    return types.SimpleNamespace(**{k: types.SimpleNamespace(**v) if isinstance(v, dict) else v for k, v in top.items()})


crab = {int(i): [int(x), int(z)] for i, x, z in
        re.findall(r"^(\d+):\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]", open(crab_file, encoding="utf-8").read(), re.M)}
stand_in("kaiwu_env.conf",
         yaml_back_to_the_realm_treasure_path_crab=crab,
         yaml_back_to_the_realm_game=read_game_yaml(game_yaml),
         json_back_to_the_realm_map_data_map_1=json.load(open(map_file, encoding="utf-8")),
         yaml_arena=types.SimpleNamespace(train_or_eval="train"))
stand_in("kaiwu_env.env")
stand_in("kaiwu_env.env.protocol", BaseSkylarenaDataHandler=type("BaseSkylarenaDataHandler", (), {}))
stand_in("arena_proto.arena2plat_pb2", **{name: type(name, (), {}) for name in ("CampInfo", "GameData", "GameStatus")})

from google.protobuf.json_format import MessageToDict
from arena_proto.back_to_the_realm.game2arena_pb2 import StepFrameRsp
from kaiwu_env.back_to_the_realm.data_handler import SkylarenaDataHandler
from kaiwu_env.back_to_the_realm.protocol import Parse_AIServerRequest, Parse_AIServerResponse, Parse_StepFrameReq


def as_dict(message):
    try:
        return MessageToDict(message, preserving_proto_field_name=True, including_default_value_fields=True)
    except TypeError:  # protobuf >= 5 renamed the option
        return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


def engine_object(value):
    if isinstance(value, dict):
        return types.SimpleNamespace(**{k: engine_object(v) for k, v in value.items()})
    if isinstance(value, list):
        return [engine_object(v) for v in value]
    return value


handler = SkylarenaDataHandler(logger=None, monitor=None)
out = {"frames": []}
for frame in json.load(sys.stdin):
    e = engine_object(frame)
    step_frame_req = Parse_StepFrameReq.decode(
        Parse_StepFrameReq.encode(e.game_id, e.frame_no, e.frame_state, e.terminated, e.truncated, e.game_info))
    game_id, frame_no, obs, score_info, terminated, truncated, state = Parse_AIServerRequest.decode(
        handler.StepFrameReq2AISvrReq(step_frame_req))
    out["frames"].append({
        "game_id": game_id, "frame_no": frame_no, "obs": as_dict(obs), "score_info": as_dict(score_info),
        "terminated": terminated, "truncated": truncated, "state": as_dict(state),
        "float_fields": [obs.game_info.score, obs.game_info.total_score],
    })

# the Command the adapter sends the game for an action of the last frame
hero = step_frame_req.frame_state.heroes[0]
handler.hero_pos, handler.speed_up, handler.telent_status = hero.pos, hero.speed_up, hero.talent.status
response = Parse_AIServerResponse.decode(Parse_AIServerResponse.encode("cmd", 1, 2, False))
rsp = StepFrameRsp()
rsp.ParseFromString(handler.AISvrRsp2StepFrameRsp(response))
out["command_hero_id"] = rsp.command.hero_id

# an engine reporting treasure_score as a float
e.game_info.treasure_score = float(e.game_info.treasure_score)
try:
    Parse_StepFrameReq.encode(e.game_id, e.frame_no, e.frame_state, e.terminated, e.truncated, e.game_info)
    out["float_treasure_score"] = "accepted"
except TypeError as error:
    out["float_treasure_score"] = "TypeError: " + str(error)
print(json.dumps(out))
"""


def has_protobuf() -> bool:
    try:
        return importlib.util.find_spec("google.protobuf") is not None
    except ModuleNotFoundError:
        return False


def env_conf(start, end, chests, max_step=2000, count=None) -> dict:
    """An 18.0.2 env_conf: fixed chests when `chests` is a list, else `count` random ones."""
    fixed = chests is not None
    return {"env_conf": {"start": start, "end": end, "treasure_random": not fixed,
                         "treasure_count": len(chests) if fixed else count, "treasure_id": list(chests or []),
                         "talent_type": 1, "max_step": max_step}}


def float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def engine_frame(env, terminated: bool, truncated: bool) -> dict:
    """The game's full state as the engine hands it to `Parse_StepFrameReq.encode`."""
    info = env.env_info
    frame, g, episode = info.frame_state, info.game_info, env.episode
    hero = frame.heroes[0]
    return {
        "game_id": GAME_ID, "frame_no": frame.frame_no, "terminated": terminated, "truncated": truncated,
        "frame_state": {
            "heroes": [{"hero_id": hero.hero_id, "pos": {"x": hero.pos.x, "z": hero.pos.z}, "speed_up": hero.speed_up,
                        "talent": {"talent_type": hero.talent.talent_type, "status": hero.talent.status,
                                   "cooldown": hero.talent.cooldown}}],
            "organs": [{"sub_type": o.sub_type, "config_id": o.config_id, "status": o.status,
                        "pos": {"x": o.pos.x, "z": o.pos.z}, "cooldown": o.cooldown} for o in frame.organs],
        },
        "game_info": {
            "score": g.score, "total_score": g.total_score, "step_no": g.step_no,
            "hero_pos_x": g.pos.x, "hero_pos_z": g.pos.z, "start_id": episode.start, "end_id": episode.end,
            "treasure_count": g.treasure_count, "total_treasure_count": len(episode.treasure_id),
            "treasure_score": int(g.treasure_score),  # int32 on the wire: encode refuses a float
            "buff_count": g.buff_count, "talent_count": g.talent_count,
            "buff_remain_time": g.buff_remain_time, "buff_duration": g.buff_duration,
        },
    }


@dataclasses.dataclass
class Served:
    """One observation the simulator served, with what the game knew at that moment."""

    episode: str
    step: int
    frame_no: int
    obs: object
    hero_obs: object  # the "hero" window env's observation of the same step
    score_info: object  # None after reset
    terminated: bool
    truncated: bool
    exact_cell: tuple[int, int]
    events: set


def edge_placement(m, pid: int):
    """(world x, z) from which a step east ends 0.3 short of a cell edge, with position `pid` 26
    cells east of the exact cell and 25 of the served one's; None when the map has no such row."""
    oxc, ozc = (int(v) for v in m.position_cells[pid])
    xc = oxc - VIEW_RADIUS
    for zc in range(max(0, ozc - VIEW_RADIUS), min(128, ozc + VIEW_RADIUS + 1)):
        if xc >= 2 and m.passable[zc, xc - 2 : xc + 1].all():
            edge = ORIGIN_X + xc * CELL_WIDTH
            return edge - 0.3 - 700, cell_center(xc, zc)[1]
    return None


def play(name, conf, actions, seed, rules, served, frames, *, place=None):
    platform = realm.make_env(str(MAP_FILE), str(POSITIONS_FILE), protocol="18", map_window="platform", seed=seed, **rules)
    hero = realm.make_env(str(MAP_FILE), str(POSITIONS_FILE), protocol="18", map_window="hero", seed=seed, **rules)
    obs, _ = platform.reset(conf, seed=seed)
    hero_obs, _ = hero.reset(conf, seed=seed)
    served.append(Served(name, 0, platform.frame_no, obs, hero_obs, None, False, False,
                         cell_of(*platform.hero_position), {"reset"}))
    frames.append(engine_frame(platform, False, False))
    for n, act in enumerate(actions, start=1):
        if place is not None and n == 1:
            platform._place_hero(*place)
            hero._place_hero(*place)
        before = platform.env_info.game_info
        frame_no, obs, score, terminated, truncated, _ = platform.step(act)
        hero_obs = hero.step(act)[1]
        after = platform.env_info.game_info
        events = {"step 1"} if n == 1 else set()
        if after.treasure_count > before.treasure_count:
            events.add("chest taken")
        if platform.env_info.frame_state.heroes[0].speed_up:
            events.add("buff active")
        if after.talent_count > before.talent_count:
            events.add("flash")
        if terminated:
            events.add("won")
        if truncated:
            events.add("truncated")
        hx, hz = platform.env_info.frame_state.heroes[0].pos.x, platform.env_info.frame_state.heroes[0].pos.z
        if cell_of(hx, hz) != cell_of(*platform.hero_position):
            events.add("served cell is not the exact cell")
        served.append(Served(name, n, frame_no, obs, hero_obs, score, terminated, truncated,
                             cell_of(*platform.hero_position), events))
        frames.append(engine_frame(platform, terminated, truncated))
        if terminated or truncated:
            break


@pytest.fixture(scope="module")
def wire():
    if not (ADAPTER / "protocol.py").is_file() or not (ADAPTER / "data_handler.py").is_file():
        pytest.skip(f"the platform's 18.0.2 adapter is not at {ADAPTER}")
    if not all(p.is_file() for p in (MAP_FILE, POSITIONS_FILE, CRAB_FILE, GAME_YAML)):
        pytest.skip(f"the official map files are not under {OFFICIAL}")
    if not has_protobuf():
        pytest.skip("protobuf is not installed (the platform's compiled protos need it)")
    served, frames = [], []
    planned = [  # name, start, end, chests (None: `count` random), count, seed, rules
        ("five chests", 2, 1, [3, 4, 6, 7, 10], None, 1, {}),
        ("thirteen random chests, jitter", 5, 13, None, 13, 3, {"step_jitter": True, "flash_blocked": "nearest"}),
    ]
    actions = {}
    for name, start, end, chests, count, seed, rules in planned:
        conf = env_conf(start, end, chests, count=count)
        game = realm.make_env(str(MAP_FILE), str(POSITIONS_FILE), seed=seed, **rules)
        diy = {"start": start, "end": end, "max_step": 2000, **(
            {"treasure_random": 0, "treasure_id": chests} if chests else {"treasure_random": 1, "treasure_num": count})}
        result = run_planner(game, {"diy": diy}, seed=seed)
        assert result.won and result.buff_count and result.flash_count, (name, result)
        actions[name] = result.actions
        play(name, conf, result.actions, seed, rules, served, frames)
        assert served[-1].terminated
    # the first episode's actions again with max_step 120: a truncated end (total_score 0)
    play("truncated", env_conf(2, 1, [3, 4, 6, 7, 10], max_step=120), actions["five chests"], 1, {}, served, frames)
    # a hero placed so that a step east ends 0.3 short of a cell edge, the buff 26 cells east
    m = realm.make_env(str(MAP_FILE), str(POSITIONS_FILE)).map
    place = edge_placement(m, 0)
    assert place is not None
    play("cell edge", env_conf(2, 1, [3]), [0, 0], 0, {}, served, frames, place=place)

    run = subprocess.run(
        [sys.executable, "-I", "-B", "-c", PLATFORM_WIRE, str(PLATFORM), str(CRAB_FILE), str(GAME_YAML), str(MAP_FILE)],
        input=json.dumps(frames), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(run.stdout)
    assert len(out["frames"]) == len(served)
    return served, out


def differences(expected, got, path="") -> list[str]:
    """Every path where `got` differs from `expected` (types included: int is not float)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        if set(expected) != set(got):
            return [f"{path}: fields {sorted(expected)} != {sorted(got)}"]
        return [d for key in expected for d in differences(expected[key], got[key], f"{path}.{key}")]
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return [f"{path}: {len(expected)} entries != {len(got)}"]
        return [d for i, (a, b) in enumerate(zip(expected, got)) for d in differences(a, b, f"{path}[{i}]")]
    if type(expected) is not type(got) or expected != got:
        return [f"{path}: served {expected!r} != platform {got!r}"]
    return []


def where(record: Served) -> str:
    return f"{record.episode}, step {record.step}"


# ---- field by field ---------------------------------------------------------------------------


def test_every_served_field_is_what_the_platforms_adapter_makes_of_the_game_frame(wire):
    served, out = wire
    for record, platform in zip(served, out["frames"]):
        obs = dataclasses.asdict(record.obs)
        assert differences(obs, platform["obs"]) == [], where(record)  # frame_state, game_info, map_info, legal_act
        assert platform["frame_no"] == record.frame_no == record.obs.frame_state.frame_no, where(record)
        assert platform["game_id"] == GAME_ID and platform["state"] == {}
        if record.score_info is not None:
            assert differences(dataclasses.asdict(record.score_info), platform["score_info"]) == [], where(record)
        assert type(record.terminated) is bool and type(record.truncated) is bool
        assert (platform["terminated"], platform["truncated"]) == (int(record.terminated), int(record.truncated)), where(record)
        # proto float: the wire holds float32 of the game's score
        info = record.obs.game_info
        assert platform["float_fields"] == [float32(info.score), float32(info.total_score)], where(record)


def test_the_compared_steps_cover_pickups_the_buff_a_flash_and_both_ends(wire):
    served, _ = wire
    events = {}
    for record in served:
        for event in record.events:
            events.setdefault(event, []).append(where(record))
    for needed in ("reset", "step 1", "chest taken", "buff active", "flash", "won", "truncated",
                   "served cell is not the exact cell"):
        assert events.get(needed), f"no compared step with {needed!r}"
    steps = {(r.episode, r.step) for r in served}
    after_chest = [(r.episode, r.step + 1) for r in served if "chest taken" in r.events]
    after_flash = [(r.episode, r.step + 1) for r in served if "flash" in r.events]
    assert set(after_chest) & steps and set(after_flash) & steps  # and the steps right after them
    assert len(served) > 500


def test_organs_in_view_are_a_filtered_copy_of_the_games_organs(wire):
    served, out = wire
    seen_hidden = [0, 0]
    for record, platform in zip(served, out["frames"]):
        organs = platform["obs"]["frame_state"]["organs"]
        hero = record.obs.frame_state.heroes[0]
        xc, zc = cell_of(hero.pos.x, hero.pos.z)
        for organ in organs:
            oxc, ozc = cell_of(organ["pos"]["x"], organ["pos"]["z"])
            assert max(abs(oxc - xc), abs(ozc - zc)) <= VIEW_RADIUS
        seen_hidden[0] += len(organs)
        seen_hidden[1] += record.obs.game_info.treasure_count + 1 - len(organs)
    assert all(seen_hidden)  # some in view, some not


# ---- the windows ------------------------------------------------------------------------------


def flags_window(flags: np.ndarray, row: int, col: int) -> np.ndarray:
    """flags[row - 25 + r, col - 25 + c], 0 outside the map: the raw map json, no simulator code."""
    padded = np.pad(flags, VIEW_RADIUS + 1)
    r0, c0 = row + 1, col + 1
    return padded[r0 : r0 + 2 * VIEW_RADIUS + 1, c0 : c0 + 2 * VIEW_RADIUS + 1]


def test_the_hero_window_is_the_platform_window_with_the_centre_transposed(wire):
    served, out = wire
    raw = json.loads(MAP_FILE.read_text())
    flags = np.array(raw["Flags"]).reshape(raw["Height"], raw["Width"])  # [zc, xc]
    assert set(np.unique(flags)) <= {0, 1}  # map 1's Flags: passable 1, blocked 0, nothing else
    transposed_differs = 0
    for record, platform in zip(served, out["frames"]):
        hero = record.obs.frame_state.heroes[0]
        xc, zc = cell_of(hero.pos.x, hero.pos.z)
        adapter = np.array([row["values"] for row in platform["obs"]["map_info"]])
        hero_window = np.array([row.values for row in record.hero_obs.map_info])
        assert np.array_equal(adapter, flags_window(flags, xc, zc)), where(record)  # rows = xc offset
        assert np.array_equal(hero_window, flags_window(flags, zc, xc)), where(record)  # rows = zc offset
        if xc != zc and not np.array_equal(adapter, hero_window):
            transposed_differs += 1
        assert dataclasses.replace(record.hero_obs, map_info=[]) == dataclasses.replace(record.obs, map_info=[])
    assert transposed_differs > 0.9 * len(served)


def test_the_heros_cell_is_the_cell_of_the_served_position(wire):
    served, out = wire
    edge = [(r, p) for r, p in zip(served, out["frames"]) if "served cell is not the exact cell" in r.events]
    record, platform = next((r, p) for r, p in edge if r.episode == "cell edge")
    hero = record.obs.frame_state.heroes[0]
    (xc, zc), (exact_xc, exact_zc) = cell_of(hero.pos.x, hero.pos.z), record.exact_cell
    assert (xc, zc) == (exact_xc + 1, exact_zc)  # 0.3 short of the edge: rounded onto it
    raw = json.loads(MAP_FILE.read_text())
    flags = np.array(raw["Flags"]).reshape(128, 128)
    adapter = np.array([row["values"] for row in platform["obs"]["map_info"]])
    assert not np.array_equal(adapter, flags_window(flags, exact_xc, exact_zc))  # the exact cell's is another
    buff = [o for o in platform["obs"]["frame_state"]["organs"] if o["config_id"] == 0]
    assert buff and any(o.config_id == 0 for o in record.obs.frame_state.organs)  # 25 cells from the served cell
    bxc = cell_of(buff[0]["pos"]["x"], buff[0]["pos"]["z"])[0]
    assert bxc - xc == VIEW_RADIUS and bxc - exact_xc == VIEW_RADIUS + 1


# ---- where the sources leave a choice -----------------------------------------------------------


def test_what_the_sources_leave_unclear_is_served_as_documented(wire):
    served, out = wire
    # hero_id: the game's own, passed through; the Command the adapter sends names 1112
    assert {r.obs.frame_state.heroes[0].hero_id for r in served} == {HERO_ID}
    assert out["command_hero_id"] == 1112 != HERO_ID
    # treasure_count: the episode's chest count; treasure_collected_count: the chests taken
    for record, platform in zip(served, out["frames"]):
        info = platform["obs"]["game_info"]
        if record.episode == "five chests":
            assert info["treasure_count"] == 5
        assert info["treasure_collected_count"] == record.obs.game_info.treasure_collected_count
        if record.score_info is not None:
            assert platform["score_info"]["treasure_count"] == info["treasure_collected_count"]
    assert max(p["obs"]["game_info"]["treasure_collected_count"] for p in out["frames"]) == 13
    # scores: the wire's float32 is not the served float where the score has a fraction
    won = [(r, p) for r, p in zip(served, out["frames"]) if r.terminated]
    fractions = [(r.obs.game_info.total_score, p["float_fields"][1]) for r, p in won
                 if r.obs.game_info.total_score != int(r.obs.game_info.total_score)]
    assert fractions and all(wire32 != exact and wire32 == float32(exact) for exact, wire32 in fractions)
    assert all(p["score_info"]["total_score"] == int(r.obs.game_info.total_score) for r, p in won)
    truncated = [(r, p) for r, p in zip(served, out["frames"]) if r.truncated]
    assert [p["obs"]["game_info"]["total_score"] for _, p in truncated] == [0.0]
    assert truncated[0][1]["obs"]["game_info"]["score"] > 0  # the chest score stays, the total is lost
    # treasure_score: int32, an engine's float is refused
    assert out["float_treasure_score"].startswith("TypeError")
    assert all(type(r.obs.game_info.treasure_score) is int for r in served)
    # positions: the crab table the adapter reads is position_pool.json's map 1
    pool = json.loads(POSITIONS_FILE.read_text())["map_1"]
    crab = {}
    for line in CRAB_FILE.read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip().isdigit():
            crab[int(key)] = json.loads(value)
    assert crab == {int(k): v for k, v in pool.items()}
    # organ order: chests in ascending id order, then the buff (the engine's order is not public)
    for record in served:
        ids = [o.config_id for o in record.obs.frame_state.organs]
        chests = [i for i in ids if i != 0]
        assert chests == sorted(chests) and (0 not in ids or ids[-1] == 0)


def test_a_position_rounded_past_the_last_cell_gets_the_adapters_window():
    """On a map whose last column is passable, 0.3 short of the map's east edge is served as the
    edge itself: cell 128, one past the map, as the adapter computes it (its window clips there)."""
    base = realm.make_env().map
    passable = np.ones((128, 128), dtype=bool)
    game_map = realm.Map(passable, base.positions, name="open")
    flags = passable.astype(int)
    zc = 60
    for window, centre in (("hero", (zc, 128)), ("platform", (128, zc))):
        env = realm.RealmEnv18(realm.RealmEnv(game_map), map_window=window)
        env.reset(env_conf(2, 1, [3]))
        east_edge = ORIGIN_X + 128 * CELL_WIDTH
        env._place_hero(east_edge - 0.3 - 700, ORIGIN_Z + zc * CELL_WIDTH + 250)
        obs = env.step(0)[1]
        assert obs.frame_state.heroes[0].pos.x == east_edge and cell_of(*env.hero_position)[0] == 127
        assert np.array_equal(np.array([row.values for row in obs.map_info]), flags_window(flags, *centre))
