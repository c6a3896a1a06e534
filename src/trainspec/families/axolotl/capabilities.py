"""What Axolotl's loader reads of the GPU (its `capabilities`), from the target `Device`.

Axolotl probes the GPU before it validates a config (`cli.config.gpu_capabilities`)
and hands the result to its GPU-dependent validators. trainspec has no GPU to
probe: the rules that need one take the target device (`--gpu h100`) and read it
through this mapping, so each reads the same facts the loader would on that GPU.

The loader's own readings, which this follows where they differ from the data sheet:
- fp8 is a capability of 9.0 or above (`compute_supports_fp8`), so Ada GPUs (8.9)
  count as without fp8 even though their tensor cores have it;
- tf32 comes from transformers, which reports none under ROCm;
- bf16 comes from torch, which reports it on every ROCm GPU;
- the compute capability is written `sm_<major><minor>` ("sm_90", "sm_100"). Under
  ROCm torch reports the GPU's architecture number instead, which the catalogue does
  not give: it stays unknown (None), and fp8 is taken as present, as torch's number
  for every Instinct GPU (9.0 and above) makes the loader take it.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainspec.spec.device import Device

AMPERE = (8, 0)
HOPPER = (9, 0)


@dataclass(frozen=True)
class Capabilities:
    """The loader's `GPUCapabilities` for one GPU (the GPU count is the world size, apart)."""

    bf16: bool
    tf32: bool
    fp8: bool
    compute_capability: str | None


def capabilities(device: Device) -> Capabilities:
    """What the loader would probe on `device`."""
    if device.rocm:
        return Capabilities(bf16=True, tf32=False, fp8=True, compute_capability=None)
    cc = device.capability
    if cc is None:
        return Capabilities(bf16=False, tf32=False, fp8=False, compute_capability=None)
    return Capabilities(bf16=cc >= AMPERE, tf32=cc >= AMPERE, fp8=cc >= HOPPER, compute_capability=f"sm_{cc[0]}{cc[1]}")


def sm_number(compute_capability: str) -> int | None:
    """The number of an `sm_XY` capability (90 for "sm_90"), None for another spelling."""
    prefix, _, digits = compute_capability.partition("_")
    return int(digits) if prefix == "sm" and digits.isdigit() else None
