"""A failed checkpoint write as the log and the terminal say it: the error, and the disk's room."""
from __future__ import annotations

import shutil
from pathlib import Path

from agent.checkpoint_io import WriteFailed


def write_error(e: OSError) -> str:
    """A failed write as the log says it (WriteFailed already names its file and the error)."""
    return str(e) if isinstance(e, WriteFailed) else f"{type(e).__name__}: {e}"


def disk_space(directory: Path) -> str:
    """'the disk of DIR has 1.2 GiB free of 50 GiB' (measured at DIR or the nearest parent that exists)."""
    where = Path(directory)
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        usage = shutil.disk_usage(where)
    except OSError as e:
        return f"the disk of {directory}: free space unknown ({type(e).__name__}: {e})"
    return f"the disk of {directory} has {_bytes(usage.free)} free of {_bytes(usage.total)}"


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
