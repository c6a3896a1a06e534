"""The device a rank computes on, as plain data: what a family's `device_checks` hook reads.

`trainspec.distributed` fills it in from torch on the machine that runs the
job, so a family can say what its configs need of the hardware without
importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    """`type`: torch's device type ("cuda", "cpu", ...); `name`: the GPU's name (the type elsewhere);
    `capability`: the CUDA compute capability (None off CUDA); `rocm`: an AMD GPU under ROCm, whose
    capabilities are numbered differently (every one has bfloat16)."""

    type: str
    name: str
    capability: tuple[int, int] | None = None
    rocm: bool = False
