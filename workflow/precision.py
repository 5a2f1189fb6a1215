"""The learner's arithmetic: `[app] precision = "auto" | "fp32" | "bf16"`, and whether this
process can compute on `[app] device` at all (`check_device`).

bf16 runs the package's `learn` under `torch.autocast`: matrix products and convolutions in
bfloat16 (AMX or AVX-512-BF16 units on a CPU, tensor cores on a GPU), everything else as the
package wrote it. Master weights, optimizer state, value normalisation and checkpoints stay
fp32 (autocast never changes a parameter), and the project's networks hand back fp32 outputs,
so losses, log-probabilities and ratios are computed in fp32.

"auto" picks bf16 where the hardware has bf16 matrix units and the package's Agent says its
network is ready for it (a class attribute `bf16_ready = True`: the project's networks keep the
layers that need fp32 in fp32, agent.model), and fp32 elsewhere: emulated bf16 (AVX2-only CPUs,
or oneDNN capped below AVX-512-BF16 by ONEDNN_MAX_CPU_ISA) is slower than fp32, and a network
written for fp32 may learn worse in bf16 (inputs such as positions lose their small differences).
"bf16" forces it for any package.

On a GPU, "fp32" is torch's default arithmetic there: convolutions in TF32 on tensor cores
(torch.backends.cudnn.allow_tf32), matrix products in full fp32 (torch.backends.cuda.matmul.allow_tf32).
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

import torch

PRECISIONS = ("auto", "fp32", "bf16")

# oneDNN's ISA caps (ONEDNN_MAX_CPU_ISA) under which its bf16 kernels still run natively.
_ONEDNN_BF16_ISAS = {"AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX", "AVX512_CORE_AMX_FP16",
                     "AVX10_1_512", "AVX10_1_512_AMX", "AVX10_1_512_AMX_FP16", "AVX10_2_512",
                     "AVX10_2_512_AMX_2", "DEFAULT", "ALL"}


@dataclass(frozen=True)
class Precision:
    """What the learner computes in, and why (for the run's log)."""

    dtype: torch.dtype
    reason: str

    @property
    def name(self) -> str:
        return "bf16" if self.dtype == torch.bfloat16 else "fp32"

    def __str__(self) -> str:
        return f"{self.name} ({self.reason})"


def cpu_bf16_units() -> list[str]:
    """The CPU's bf16 matrix units by their /proc/cpuinfo flags (empty where there are none or
    the file is not there)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
            break
    return [flag for flag in ("amx_bf16", "avx512_bf16") if flag in flags]


def package_bf16_ready(agent_class) -> bool:
    """Whether a package's Agent class declares its network bf16-ready (`bf16_ready = True`)."""
    return getattr(agent_class, "bf16_ready", False) is True


def resolve_precision(setting: str, device: str, bf16_ready: bool = True) -> Precision:
    """`[app] precision` on `device` ("cpu", "cuda", "cuda:N") for a package whose network is
    (`bf16_ready`) or is not ready for bf16 -> the dtype the learner uses."""
    if setting not in PRECISIONS:
        raise ValueError(f"precision: got {setting!r}, allowed: {', '.join(map(repr, PRECISIONS))}")
    if setting == "fp32":
        return Precision(torch.float32, "set")
    if setting == "bf16":
        return Precision(torch.bfloat16, "set")
    if not bf16_ready:
        return Precision(torch.float32, "auto: the package's Agent does not declare bf16_ready = True")
    if device.startswith("cuda"):
        if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
            return Precision(torch.bfloat16, "auto: the GPU has bf16")
        return Precision(torch.float32, "auto: no bf16 on this GPU")
    units = cpu_bf16_units()
    if not units:
        return Precision(torch.float32, "auto: this CPU has no bf16 matrix units")
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "").strip().upper()
    if cap and cap not in _ONEDNN_BF16_ISAS:
        return Precision(torch.float32, f"auto: ONEDNN_MAX_CPU_ISA={cap} leaves oneDNN without bf16 kernels")
    return Precision(torch.bfloat16, f"auto: this CPU has {', '.join(units)}")


def check_device(device: str) -> None:
    """ValueError naming `app.device` when this process's torch cannot use `device`: a CPU-only
    build of torch, a machine without a GPU, or `cuda:N` past its GPUs. The learner (and local
    mode) ask before building the agent, on the machine it runs on (a Ray node's, not the launcher's)."""
    if not device.startswith("cuda"):
        return
    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:  # ROCm's GPUs are "cuda" too
        raise ValueError(f"app.device = {device!r}: this torch ({torch.__version__}) is built without CUDA; "
                         f"allowed here: 'cpu' (a GPU needs a CUDA or ROCm build of torch)")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        raise ValueError(f"app.device = {device!r}: torch sees no GPU on this machine; allowed here: 'cpu'")
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    if index >= count:
        raise ValueError(f"app.device = {device!r}: this machine has {count} GPU(s); allowed: 'cpu', 'cuda', "
                         f"'cuda:0' to 'cuda:{count - 1}'")


def autocast(precision: Precision, device: str):
    """The context the learner's update runs in: bf16 autocast, or nothing for fp32."""
    if precision.dtype != torch.bfloat16:
        return contextlib.nullcontext()
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)
