"""The device a rank computes on, as plain data: what a family's `device_checks` hook and a rule's
`device` parameter read.

`trainspec.distributed` fills it in from torch on the machine that runs the
job; ahead of the job, `target` reads the GPU a user names (`--gpu h100`, the
project's `gpu`, a `# trainspec: gpu=h100` directive) from the catalogue
below, so a family can say what its configs need of the hardware without
importing torch or running on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainspec.spec.errors import InvalidValue

GiB = 2**30


@dataclass(frozen=True)
class Device:
    """`type`: torch's device type ("cuda", "cpu", ...; AMD GPUs are "cuda" under ROCm too); `name`: the
    GPU's name (the type elsewhere); `capability`: the CUDA compute capability (None off CUDA); `rocm`: an
    AMD GPU under ROCm, whose capabilities are numbered differently (every one has bfloat16); `memory`:
    bytes of one GPU, when known (the data sheet's capacity, read as GiB)."""

    type: str
    name: str
    capability: tuple[int, int] | None = None
    rocm: bool = False
    memory: int | None = None


def _nvidia(name: str, capability: tuple[int, int], gib: int) -> Device:
    return Device("cuda", f"NVIDIA {name}", capability, memory=gib * GiB)


def _amd(name: str, gib: int) -> Device:
    return Device("cuda", f"AMD {name}", None, rocm=True, memory=gib * GiB)


GPUS: dict[str, Device] = {
    # NVIDIA data-center GPUs (compute capability from NVIDIA's CUDA GPU list, memory from the data sheets;
    # a name without a size is the larger model)
    "gb200": _nvidia("GB200", (10, 0), 186),
    "b200": _nvidia("B200", (10, 0), 180),
    "b300": _nvidia("B300", (10, 3), 288),
    "gh200": _nvidia("GH200", (9, 0), 96),
    "h200": _nvidia("H200", (9, 0), 141),
    "h100": _nvidia("H100 80GB", (9, 0), 80),
    "h100-nvl": _nvidia("H100 NVL", (9, 0), 94),
    "h20": _nvidia("H20", (9, 0), 96),
    "l40s": _nvidia("L40S", (8, 9), 48),
    "l40": _nvidia("L40", (8, 9), 48),
    "l4": _nvidia("L4", (8, 9), 24),
    "a100": _nvidia("A100 80GB", (8, 0), 80),
    "a100-80gb": _nvidia("A100 80GB", (8, 0), 80),
    "a100-40gb": _nvidia("A100 40GB", (8, 0), 40),
    "a40": _nvidia("A40", (8, 6), 48),
    "a10": _nvidia("A10", (8, 6), 24),
    "a10g": _nvidia("A10G", (8, 6), 24),
    "a6000": _nvidia("RTX A6000", (8, 6), 48),
    "v100": _nvidia("V100 32GB", (7, 0), 32),
    "v100-32gb": _nvidia("V100 32GB", (7, 0), 32),
    "v100-16gb": _nvidia("V100 16GB", (7, 0), 16),
    "t4": _nvidia("T4", (7, 5), 16),
    # NVIDIA workstation and consumer GPUs
    "rtx6000-ada": _nvidia("RTX 6000 Ada", (8, 9), 48),
    "rtx5090": _nvidia("GeForce RTX 5090", (12, 0), 32),
    "rtx4090": _nvidia("GeForce RTX 4090", (8, 9), 24),
    "rtx3090": _nvidia("GeForce RTX 3090", (8, 6), 24),
    # AMD Instinct GPUs (ROCm; memory from AMD's data sheets)
    "mi355x": _amd("Instinct MI355X", 288),
    "mi325x": _amd("Instinct MI325X", 256),
    "mi300x": _amd("Instinct MI300X", 192),
    "mi250x": _amd("Instinct MI250X", 128),
    "mi250": _amd("Instinct MI250", 128),
    "mi210": _amd("Instinct MI210", 64),
}
"""The GPUs a target may name, by the names people type (`--gpu h100`); spelling is forgiving (`H100`,
`a100_40gb`, `RTX 4090`, `nvidia-h100` all read)."""

_SM = re.compile(r"sm_?(\d+)(\d)")
_DOTTED = re.compile(r"(\d+)\.(\d)")
_GFX = re.compile(r"gfx[0-9a-f]{3,4}")
_SPELLING = re.compile(r"[\s_-]+")


def _key(text: str) -> str:
    """A name as looked up: lower case, without separators or a vendor prefix."""
    key = _SPELLING.sub("", text.strip().lower())
    return key.removeprefix("nvidia").removeprefix("amd")


_BY_KEY = {_key(name): device for name, device in GPUS.items()}


def target(text: str) -> Device:
    """The GPU `text` names: a name of `GPUS`, a CUDA compute capability (`sm_90`, `9.0`) or an AMD
    architecture (`gfx942`). ValueError, listing the names and suggesting the closest, otherwise."""
    key = _key(text)
    if key in _BY_KEY:
        return _BY_KEY[key]
    found = _SM.fullmatch(key) or _DOTTED.fullmatch(key)
    if found and len(found.group(1)) <= 2:  # no GPU has a major version past two digits (sm_100 is 10.0)
        capability = (int(found.group(1)), int(found.group(2)))
        return Device("cuda", f"sm_{capability[0]}{capability[1]}", capability)
    if _GFX.fullmatch(key):
        return Device("cuda", f"an AMD GPU ({key})", None, rocm=True)
    from difflib import get_close_matches

    close = get_close_matches(key, list(_BY_KEY), 1, 0.6)
    names = {_key(n): n for n in GPUS}
    hint = f" (did you mean {names[close[0]]}?)" if close else ""
    shown = repr(text) if len(text) <= 40 else f"{text[:40]!r}… ({len(text):,} characters)"
    raise InvalidValue(
        f"unknown GPU {shown}{hint}; known: {', '.join(sorted(GPUS))}; or give a CUDA compute capability "
        "(sm_90 or 9.0) or an AMD architecture (gfx942)"
    )
