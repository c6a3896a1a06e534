"""KempnerForge's `train.mixed_precision`: the dtype of the master weights, and what the device must do.

`master_dtype` is for trainers (it imports torch); `device_checks` is the
family's `Family.device_checks` hook, which `trainspec.distributed` runs on
the machine that runs the job, and `trainspec check --gpu` ahead of it. The ids it reports
are the family's notices (`NOTICES`), documented like its rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.errors import InvalidValue
from trainspec.spec.family import Notice

if TYPE_CHECKING:
    import torch

MASTER_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "bfloat16"}
"""train.mixed_precision -> master-weight dtype (FP8 is a compute mode; its master weights are bf16)."""

BF16_UNSUPPORTED = "device-bf16-unsupported"
FP8_UNSUPPORTED = "device-fp8-unsupported"

NOTICES = {
    BF16_UNSUPPORTED: Notice(
        Severity.ERROR,
        ("train.mixed_precision",),
        """The config trains in bf16 (or fp8, whose master weights are bf16) on an
NVIDIA GPU without native bfloat16 (compute capability below 8.0).

Reported by `trainspec.distributed.device_diagnostics` on the machine that
runs the job; torch would only emulate bfloat16 there, slowly. Use fp16/fp32
or a newer GPU.""",
    ),
    FP8_UNSUPPORTED: Notice(
        Severity.ERROR,
        ("train.mixed_precision",),
        """The config asks for fp8 on a device without FP8 matrix multiplies
(NVIDIA compute capability 8.9 or newer has them).

Reported by `trainspec.distributed.device_diagnostics` on the machine that
runs the job.""",
    ),
}
"""What `device_checks` reports: ids of this family, not of the engine (no other family checks the device)."""


def master_dtype(mixed_precision: str) -> torch.dtype:
    """The dtype master weights are kept in for a `train.mixed_precision` value."""
    if mixed_precision not in MASTER_DTYPES:
        raise InvalidValue(f"unknown mixed precision {mixed_precision!r}; known: {', '.join(MASTER_DTYPES)}")
    try:
        import torch
    except ModuleNotFoundError as exc:  # say which extra brings it, not a bare "No module named 'torch'"
        if exc.name != "torch":
            raise
        message = "master_dtype returns a torch dtype; torch is not installed here: pip install 'trainspec[torch]'"
        raise ModuleNotFoundError(message, name="torch") from None

    dtype: torch.dtype = getattr(torch, MASTER_DTYPES[mixed_precision])
    return dtype


def device_checks(config: Mapping[str, Any], device: Device) -> list[Diagnostic]:
    """bf16 (or fp8, whose master weights are bf16) on an NVIDIA GPU without native bfloat16 (compute
    capability below 8.0, where torch only emulates it, slowly); fp8 on a device without FP8 matmuls
    (NVIDIA compute capability 8.9+). CPU supports bfloat16."""
    train = config.get("train")
    precision = train.get("mixed_precision") if isinstance(train, Mapping) else None
    capability = device.capability
    out = []

    def error(rule: str, message: str) -> None:
        out.append(Diagnostic("", None, None, ("train", "mixed_precision"), rule, Severity.ERROR, message))

    bf16_weights = MASTER_DTYPES.get(precision) == "bfloat16" if isinstance(precision, str) else False
    if capability is not None and not device.rocm and bf16_weights and capability < (8, 0):
        error(
            BF16_UNSUPPORTED,
            f'train.mixed_precision = "{precision}" keeps bfloat16 weights, but {device.name} '
            f"(compute capability {capability[0]}.{capability[1]}) has no native bfloat16 (8.0 or newer has); "
            'use "fp16" or "fp32" on this GPU',
        )
    if precision == "fp8" and not device.rocm and (capability is None or capability < (8, 9)):
        have = (
            f"{device.name} (compute capability {capability[0]}.{capability[1]})"
            if capability
            else f"a {device.type} device"
        )
        error(
            FP8_UNSUPPORTED,
            f'train.mixed_precision = "fp8" needs FP8 matmuls (a CUDA GPU of compute capability 8.9 or newer), '
            f'but the job runs on {have}; use "bf16"',
        )
    return out
