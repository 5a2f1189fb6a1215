"""Keep the learner's freed tensor memory in the process instead of handing it back to the OS.

A PPO update allocates the same large tensors minibatch after minibatch (a conv layer's
activations and their gradients: 512 frames x 16 x 24 x 24 floats is 19 MB). glibc's malloc
serves a block over its mmap threshold (128 KB, raised only as far as blocks are freed) with a
fresh mmap and unmaps it on free, and trims the heap's free top above 128 KB: either way the next
minibatch's tensor is new memory, and the kernel zero-fills every 4 KB page on first touch. On a
2-core AMD EPYC that page faulting cost a quarter of the fp32 update (ReLU's forward and backward
over those 19 MB ran 7x slower in fp32 than in bf16, twice the bytes). `keep_freed_memory` puts
blocks up to glibc's largest threshold (32 MB) on the heap and never trims it, so after the first
update the same pages are reused. The cost: the process keeps its peak heap (the learner's
working set is its peak anyway).
"""
from __future__ import annotations

import ctypes
import ctypes.util

# mallopt parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc's largest on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)
TRIM_THRESHOLD = 2**31 - 1  # an int: mallopt takes one; 2 GB of free heap top before a trim
TOP_PAD = 64 * 1024 * 1024  # grow the heap in large steps: fewer brk calls


def keep_freed_memory() -> str:
    """Tune glibc's malloc for a process that reallocates the same large tensors (the learner,
    the benchmarks that time its update); process-wide, so for processes of their own. -> what
    was done, for the log; a C library without mallopt (musl, macOS) is left as it is and said so."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return "malloc: left as it is (this C library has no mallopt)"
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settings = {"mmap_threshold": (M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX),
                "trim_threshold": (M_TRIM_THRESHOLD, TRIM_THRESHOLD), "top_pad": (M_TOP_PAD, TOP_PAD)}
    failed = [name for name, (param, value) in settings.items() if mallopt(param, value) != 1]
    if failed:
        return f"malloc: mallopt refused {', '.join(failed)}"
    return (f"malloc: blocks up to {MMAP_THRESHOLD_MAX >> 20} MB from the heap, freed memory kept "
            f"(no page faults on reused tensors)")
