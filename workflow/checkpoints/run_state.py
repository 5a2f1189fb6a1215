"""The run's counters beside its checkpoints: `run_state.json` in the checkpoint directory maps
each checkpoint id to the training system's state then (`{"counters": {...}}`, workflow.learner).

The package's checkpoint files cannot give them back (they hold the agent's own counters, not the
run's env steps and episodes), so the table is written twice, each file atomically: run_state.json,
then its copy run_state.copy.json. One file damaged or removed (by hand, a disk error) then never
resets a resumed run's counters: the reader takes the copy and says so.

A checkpoint's entry is written twice: flagged `incomplete` before the package writes its files,
and whole once they are written. An entry still flagged means the write was cut off (a kill, a
power loss) and the files may be partial or a mix of two saves, so --resume passes it over.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agent.checkpoint_io import save_json, sync_directory

RUN_STATE_FILE = "run_state.json"
COPY_FILE = "run_state.copy.json"
INCOMPLETE = "incomplete"  # an entry's flag while its checkpoint's files are being written


class RunStateError(RuntimeError):
    """Neither run_state.json nor its copy can be read (the message names both and why)."""


@dataclass(frozen=True)
class RunState:
    entries: dict  # checkpoint id (str) -> {"counters": {...}}
    recovered: str | None = None  # why run_state.json was not used and the copy was; None when it was


def read_run_state(ckpt_dir: str | Path) -> RunState | None:
    """The table, from run_state.json or else its copy; None when neither file exists (a run
    without checkpoints yet); RunStateError when neither holds a table."""
    ckpt_dir = Path(ckpt_dir)
    problems, missing = [], 0
    for path in (ckpt_dir / RUN_STATE_FILE, ckpt_dir / COPY_FILE):
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            problems.append(f"{path} is missing")
            missing += 1
            continue
        except (OSError, ValueError) as e:
            problems.append(f"{path} is unreadable ({type(e).__name__}: {e})")
            continue
        if not isinstance(data, dict):
            problems.append(f"{path} holds a JSON {type(data).__name__}, not a table")
            continue
        return RunState(data, "; ".join(problems) or None)
    if missing == 2:
        return None
    raise RunStateError("; ".join(problems))


def write_run_state(ckpt_dir: str | Path, entries: dict) -> None:
    """Both files, one after the other, each atomically; the renames made durable."""
    ckpt_dir = Path(ckpt_dir)
    for name in (RUN_STATE_FILE, COPY_FILE):
        save_json(entries, ckpt_dir / name)
    sync_directory(ckpt_dir)


def incomplete_ids(ckpt_dir: str | Path) -> set[int]:
    """Ids of the checkpoints whose write was cut off (their entries still flagged); none when
    the table cannot be read (nothing is known about them then)."""
    try:
        found = read_run_state(ckpt_dir)
    except RunStateError:
        return set()
    if found is None:
        return set()
    return {int(key) for key, entry in found.entries.items()
            if isinstance(entry, dict) and entry.get(INCOMPLETE) and key.isdigit()}


def resume_problem(entries: dict, ckpt_id: int, whole: list[int]) -> str | None:
    """Why the table says whole checkpoint `ckpt_id` must not be resumed from (`whole`: the ids of
    every whole checkpoint), or None. Without an entry its counters are unknown: it is passed over
    when it is newer than every checkpoint the table knows (a copy from elsewhere) or when an older
    whole checkpoint has an entry (the table is stale: that one's counters go on). Otherwise (the
    table emptied by hand, `{}`, then written on) it loads with the counters at 0, which the caller
    says. Cut-off ones never get here (workflow.checkpoints.ckpt_files lists whole checkpoints only)."""
    if str(ckpt_id) in entries:
        return None
    known = [int(key) for key in entries if key.isdigit()]
    if known and ckpt_id > max(known):
        return (f"{RUN_STATE_FILE} has no entry for checkpoint {ckpt_id}: it is newer than every checkpoint "
                f"the table records (newest {max(known)}), so its counters are unknown")
    older = [other for other in whole if other < ckpt_id and str(other) in entries]
    if older:
        return (f"{RUN_STATE_FILE} has no entry for checkpoint {ckpt_id}, so its counters are unknown; "
                f"checkpoint {max(older)} has one")
    return None
