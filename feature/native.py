"""A feature's C twin, compiled on first use and loaded with ctypes: where a search in Python is the
cost of an env step (gorge_chase's look-ahead), the same search in C next to its module does it
for a fraction (docs/BENCHMARKS.md 29). The Python version stays the definition and the fallback: `load` answers None
where the source is not beside the module (an exported package carries only Python), no C
compiler is found, or the build fails, and the caller runs its Python.

The library is built once per source text into a cache folder (`$XDG_CACHE_HOME` or ~/.cache,
`kaiwu-farm/native/`), named by the source's hash, written under a temporary name and renamed,
so processes that start together build it at most once each and never read half a file."""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

COMPILE_FLAGS = ("-O2", "-shared", "-fPIC", "-std=c99")
COMPILE_SECONDS = 120


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kaiwu-farm" / "native"


def compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@lru_cache(maxsize=None)
def load(source: Path) -> ctypes.CDLL | None:
    """The library built from the C file `source`, or None (and a line on stderr saying why, once
    per source, unless the source is simply absent)."""
    if not source.is_file():
        return None
    text = source.read_bytes()
    digest = hashlib.sha256(text + " ".join(COMPILE_FLAGS).encode()).hexdigest()[:16]
    library = cache_dir() / f"{source.stem}-{digest}.so"
    if not library.is_file():
        cc = compiler()
        if cc is None:
            print(f"{source}: no C compiler (cc, gcc, clang or $CC) found; its Python twin runs instead",
                  file=sys.stderr)
            return None
        try:
            library.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=library.parent) as scratch:
                built = Path(scratch) / library.name
                done = subprocess.run([cc, *COMPILE_FLAGS, "-o", str(built), str(source)], capture_output=True,
                                      text=True, timeout=COMPILE_SECONDS)
                if done.returncode != 0:
                    print(f"{source}: the C build failed ({cc}); its Python twin runs instead:\n{done.stderr}",
                          file=sys.stderr)
                    return None
                os.replace(built, library)
        except (OSError, subprocess.SubprocessError) as e:
            print(f"{source}: could not build it into {library.parent} ({e}); its Python twin runs instead",
                  file=sys.stderr)
            return None
    try:
        return ctypes.CDLL(str(library))
    except OSError as e:
        print(f"{library}: could not load it ({e}); the Python twin of {source.name} runs instead", file=sys.stderr)
        return None
