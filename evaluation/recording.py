"""A recorded episode: one JSON-lines file per (policy, episode) that the viewer (tools/viewer.py)
shows and a notebook reads with plain `json` (or `read_recording` here).

Line 1, the header (`"kind": "header"`): the format, the game, who played (`policy`: its name,
kind "agent" or "reference", checkpoint, package, config, mode; `exposes`: what the policy let
the recorder see), the episode (preset or usr_conf label, the usr_conf it played, its seed and
index), the env's settings, the world (`rows`: the map as strings, row z, "#" blocked, "."
free, "x" an active obstacle; `z_up`: whether North is +z, so row 127 is drawn on top;
`view_radius`; the cells of `start`, `end`, `chests`, `buffs`), the action names, the feature
planes' names and shape, the reward terms' names, the result, and `reference`: the file of the
reference policy's recording of the same episode in the same folder (null on the reference's own).

Then one line per state t = 0 .. steps (`"kind": "step"`): the state after t actions (`hero`,
`monsters` cells, `chests` and `buffs` live flags in the header's order, `score`, and what a game
adds such as `end_found`); the decision taken from it, absent on the last line (`action`; where
the policy exposes them `probs` over the actions, `value` and `planes`, each plane run-length
encoded, see `encode_plane`); and what the action into it did: `reward` and `terms` (the
project's shaped reward, absent on t = 0) and `events` ("chest", "buff", "flash", and on the last
line the outcome, e.g. "won", "caught"; empty on t = 0).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import numpy as np

FORMAT = "kaiwu-episode/1"
PLANE_SCALE = 100  # a plane's values are stored as round(value * PLANE_SCALE)
SUFFIX = ".jsonl"


class RecordingError(ValueError):
    """A file that is not a recorded episode; the message names it and what is wrong."""


def grid_rows(free: np.ndarray, obstacles: Iterable[tuple[int, int]] = ()) -> list[str]:
    """A [z, x] passable mask as strings, row z first: "." free, "#" blocked, "x" the (x, z) cells
    of `obstacles` (an episode's active obstacles)."""
    rows = [list(row) for row in np.where(np.asarray(free, dtype=bool), ".", "#")]
    for x, z in obstacles:
        rows[z][x] = "x"
    return ["".join(row) for row in rows]


def encode_plane(plane: np.ndarray) -> list[int]:
    """A 2-d feature plane (rows z, as the features index it) run-length encoded over its
    row-major values scaled to ints: [value, count, value, count, ...]."""
    flat = np.rint(np.asarray(plane, dtype=np.float64).reshape(-1) * PLANE_SCALE).astype(np.int64)
    if flat.size == 0:
        return []
    starts = np.flatnonzero(np.concatenate(([True], flat[1:] != flat[:-1])))
    counts = np.diff(np.append(starts, flat.size))
    return np.column_stack((flat[starts], counts)).reshape(-1).tolist()


def decode_plane(runs: list[int], shape: Iterable[int]) -> np.ndarray:
    """`encode_plane`'s list back to a float array of `shape` (to 1 / PLANE_SCALE)."""
    pairs = np.asarray(runs, dtype=np.int64).reshape(-1, 2)
    return (np.repeat(pairs[:, 0], pairs[:, 1]) / PLANE_SCALE).reshape(tuple(shape))


def file_name(policy: str, index: int, seed: int) -> str:
    """`<policy>-ep<index>-seed<seed>.jsonl`, the policy's name made safe for a file name."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(str(policy)).name.removesuffix(".pkl"))
    return f"{safe}-ep{index}-seed{seed}{SUFFIX}"


def write_recording(path: str | Path, header: dict, steps: list[dict]) -> Path:
    """The header line, then one line per step."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"kind": "header", "format": FORMAT, **header}, separators=(",", ":")) + "\n")
        for step in steps:
            f.write(json.dumps({"kind": "step", **step}, separators=(",", ":")) + "\n")
    return path


def _parse_header(path: Path, line: str) -> dict:
    try:
        header = json.loads(line)
    except json.JSONDecodeError as e:
        raise RecordingError(f"{path}: the first line is not JSON ({e})") from None
    if not isinstance(header, dict) or header.get("kind") != "header" or header.get("format") != FORMAT:
        raise RecordingError(f"{path}: not a recorded episode (its first line is no {FORMAT} header)")
    return header


def read_header(path: str | Path) -> dict:
    """The header line of a recording (RecordingError when `path` is none)."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as f:
            return _parse_header(path, f.readline())
    except (OSError, UnicodeDecodeError) as e:
        raise RecordingError(f"{path}: cannot read it ({e})") from None


def read_recording(path: str | Path) -> tuple[dict, list[dict]]:
    """(header, steps) of a recording (RecordingError naming the file and line when it is not one)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RecordingError(f"{path}: cannot read it ({e})") from None
    if not lines:
        raise RecordingError(f"{path}: empty file, not a recorded episode")
    header = _parse_header(path, lines[0])
    steps = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            steps.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise RecordingError(f"{path}: line {number} is not JSON ({e})") from None
    return header, steps


def recordings_in(folder: str | Path) -> list[Path]:
    """The recordings of a folder (an evaluation's --record DIR), by name."""
    return sorted(Path(folder).glob(f"*{SUFFIX}"))


def episode_table(folder: str | Path) -> list[dict]:
    """One row per recording of a folder (an evaluation's --record DIR), best score first: its file,
    policy, episode, seed, result and, beside the reference's recording of the same episode, the
    reference's score and the ratio. Files that are no recording are left out."""
    headers = {}
    for path in recordings_in(folder):
        try:
            headers[path.name] = read_header(path)
        except RecordingError:
            continue
    rows = []
    for name, header in headers.items():
        result, episode, policy = header.get("result") or {}, header.get("episode") or {}, header.get("policy") or {}
        reference = headers.get(header.get("reference") or "")
        reference_score = (reference.get("result") or {}).get("total_score") if reference else None
        score = result.get("total_score")
        rows.append({"file": name, "policy": policy.get("name"), "kind": policy.get("kind"),
                     "game": header.get("game"), "label": episode.get("label"), "episode": episode.get("index"),
                     "seed": episode.get("seed"), "score": score, "outcome": result.get("outcome"),
                     "chests": result.get("chests"), "chests_available": result.get("chests_available"),
                     "steps": result.get("steps"), "reference": header.get("reference"),
                     "reference_score": reference_score,
                     "ratio": score / reference_score if reference_score and score is not None else None})
    return sorted(rows, key=lambda row: (-(row["score"] or 0.0), row["file"]))
