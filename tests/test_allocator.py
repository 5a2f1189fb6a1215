"""workflow.allocator against glibc itself, in fresh processes: a block the size of a conv layer's
minibatch activations (19 MB) comes from the heap and its memory stays there once freed, where by
default glibc maps it anew and unmaps it on free, and trims a freed heap top, so each minibatch
faults its pages in again (`tools/bench_model.py` measures the update with the setting)."""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

HEAP = """
import ctypes, ctypes.util, json, sys
from workflow.allocator import keep_freed_memory
said = keep_freed_memory() if sys.argv[1] == "keep" else ""
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Info
size = 512 * 16 * 24 * 24 * 4
mapped_before = libc.mallinfo2().hblks
blocks = [libc.malloc(size) for _ in range(4)]
mapped = libc.mallinfo2().hblks - mapped_before  # of the four, those served by an mmap of their own
for block in blocks:
    libc.free(block)
print(json.dumps({"mapped": mapped, "free_kept": libc.mallinfo2().fordblks, "said": said}))
"""
BLOCK = 512 * 16 * 24 * 24 * 4


def heap_after_four_blocks(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", HEAP, mode], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return json.loads(out.splitlines()[-1])


def has_mallinfo2() -> bool:
    try:
        ctypes.CDLL(ctypes.util.find_library("c")).mallinfo2
        return True
    except (OSError, AttributeError):
        return False


@pytest.mark.skipif(not has_mallinfo2(), reason="glibc >= 2.33 (mallinfo2)")
def test_activation_sized_blocks_come_from_the_heap_and_stay_there_once_freed():
    default, kept = heap_after_four_blocks("default"), heap_after_four_blocks("keep")
    assert default["mapped"] == 4 and default["free_kept"] < BLOCK  # mapped apart, given back on free
    assert kept["said"].startswith("malloc: blocks up to 32 MB from the heap"), kept["said"]
    assert kept["mapped"] == 0 and kept["free_kept"] >= 4 * BLOCK  # the next minibatch's tensors reuse them
