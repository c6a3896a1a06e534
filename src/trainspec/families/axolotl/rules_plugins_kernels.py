"""Axolotl rules for the settings of its MoE kernels plugin (`KernelsArgs`: ScatterMoE, SonicMoE, the
DeepSeek-V4 and NVFP4 paths).

Every upstream check is a `mode="before"` validator reading the config as written, so these rules
are `raw`. `expert_backend` is the name-based switch: upstream turns it into `use_scattermoe` or
`use_sonicmoe` before the checks that read those flags (`_backends` does the same here). Text
settings are compared in any case, as upstream lower-cases them.

Not mirrored, as they set values without judging: `check_experts_implementation` leaving
`experts_implementation` unset picks it from the flags, and `disable_mlp_kernel` turns `mlp_kernel`
off under the MoE kernels (its warning for a translated `lora_mlp_kernel` is mirrored).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.spec.rules import ABSENT, Rule, Violation, rule
from trainspec.spec.wording import show

from .plugins import listed

EXPERT_BACKENDS = ("builtin", "eager", "scattermoe", "sonicmoe")
NONEXPERT_QUANTIZATION = ("bf16", "fp8", "fp8_blockwise", "nf4", "none", "nvfp4")
GROUPED_BACKENDS = ("auto", "cutlass", "deepgemm", "marlin")
DSV4_FP8_MODES = ("float8tensor", "bf16")
EXPERTS_IMPLEMENTATIONS = (
    *("eager", "batched_mm", "grouped_mm", "scattermoe", "sonicmoe"),
    *("deep_ep", "deep_ep_grouped_mm", "deep_ep_scattermoe", "deep_ep_sonicmoe"),
)
LORA_KERNELS = ("lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel")


def _get(value: Any) -> Any:
    return None if value is ABSENT else value


def _lower(value: Any) -> str | None:
    """A text setting as upstream compares it (`str(value).lower()`); None when not written."""
    value = _get(value)
    return None if value is None else str(value).lower()


def _backends(backend: Any, scatter: Any, sonic: Any) -> tuple[Any, Any]:
    """`use_scattermoe` and `use_sonicmoe` after `expert_backend` set the one it names."""
    chosen = _lower(backend)
    scatter, sonic = _get(scatter), _get(sonic)
    return (True if chosen == "scattermoe" else scatter), (True if chosen == "sonicmoe" else sonic)


BACKEND_PATHS = ("expert_backend", "use_scattermoe", "use_sonicmoe")
TRANSLATION_PATHS = ("plugins", *BACKEND_PATHS, "use_dsv4_kernels")
"""What decides whether the kernels plugin turns `lora_mlp_kernel` off (`mlp_kernel_turned_off`)."""


def mlp_kernel_turned_off(plugins: Any, backend: Any, scatter: Any, sonic: Any, dsv4: Any) -> bool:
    """Whether the kernels plugin turns a `lora_mlp_kernel: true` off before any other check reads it: under
    the MoE kernels (ScatterMoE or SonicMoE) with DeepSeek-V4's (`use_dsv4_kernels: true`), its intent moves
    to `dsv4_shared_mlp_lora_kernel`. The plugin's validators run before the config's own, so the LoRA-kernel
    checks (8-bit LoRA, remote code, merge-aware NVFP4) see it false.

    Mirrors the part of `KernelsArgs.disable_mlp_kernel` that other checks read."""
    if not listed(plugins, "kernels") or _lower(backend) not in (None, *EXPERT_BACKENDS):
        return False
    on_scatter, on_sonic = _backends(backend, scatter, sonic)
    return (on_scatter is True or on_sonic is True) and _get(dsv4) is True


@rule("expert-backend-known", "error", "plugins", *BACKEND_PATHS, raw=True)
def expert_backend_known(plugins: Any, backend: Any, scatter: Any, sonic: Any) -> Iterator[Violation]:
    """`expert_backend` names one of scattermoe, sonicmoe, eager and builtin, and agrees with a legacy flag set
    to true.

    Mirrors `KernelsArgs.normalize_expert_backend`."""
    chosen = _lower(backend)
    if not listed(plugins, "kernels") or chosen is None:
        return
    if chosen not in EXPERT_BACKENDS:
        yield Violation(
            f"expert_backend = {show(backend)} is not one of {', '.join(EXPERT_BACKENDS)}", at=("expert_backend",)
        )
        return
    for flag, value, name in (("use_scattermoe", scatter, "scattermoe"), ("use_sonicmoe", sonic, "sonicmoe")):
        if _get(value) is True and chosen != name:
            yield Violation(
                f"expert_backend = {show(backend)} conflicts with {flag} = true; set only one of them",
                at=("expert_backend",),
                related=((flag,),),
            )


@rule("scattermoe-with-sonicmoe", "error", "plugins", *BACKEND_PATHS, raw=True)
def scattermoe_with_sonicmoe(plugins: Any, backend: Any, scatter: Any, sonic: Any) -> Iterator[str]:
    """ScatterMoE and SonicMoE are two kernels for the same experts: only one can be on.

    Mirrors `KernelsArgs.check_mutually_exclusive`."""
    if _lower(backend) not in (None, *EXPERT_BACKENDS):
        return  # `expert-backend-known` says it
    on_scatter, on_sonic = _backends(backend, scatter, sonic)
    if listed(plugins, "kernels") and on_scatter and on_sonic:
        yield "use_scattermoe and use_sonicmoe are both on; keep only one"


@rule(
    "nvfp4-merge-aware-setup",
    "error",
    "plugins",
    "nvfp4_merge_aware",
    "nvfp4_merge_aware_start_step",
    *BACKEND_PATHS,
    "adapter",
    "use_dsv4_kernels",
    *LORA_KERNELS,
    raw=True,
)
def nvfp4_merge_aware_setup(
    plugins: Any,
    merge_aware: Any,
    start: Any,
    backend: Any,
    scatter: Any,
    sonic: Any,
    adapter: Any,
    dsv4: Any,
    *kernels: Any,
) -> Iterator[Violation]:
    """Merge-aware NVFP4 LoRA needs SonicMoE experts, a LoRA adapter and no fused LoRA kernel; its start is an
    optimizer step (at least 0) or a fraction strictly between 0 and 1, and needs it on. A `lora_mlp_kernel`
    the plugin turns off under DeepSeek-V4's kernels is not one (`mlp_kernel_turned_off`).

    Mirrors `KernelsArgs.check_nvfp4_merge_aware`."""
    if not listed(plugins, "kernels") or _lower(backend) not in (None, *EXPERT_BACKENDS):
        return
    if mlp_kernel_turned_off(plugins, backend, scatter, sonic, dsv4):
        kernels = (False, *kernels[1:])
    start = _get(start)
    if not _get(merge_aware):
        if start is not None:
            yield Violation(
                f"nvfp4_merge_aware_start_step = {show(start)} needs nvfp4_merge_aware: true",
                at=("nvfp4_merge_aware_start_step",),
            )
        return
    _, on_sonic = _backends(backend, scatter, sonic)
    at = ("nvfp4_merge_aware",)
    fused = [name for name, value in zip(LORA_KERNELS, kernels, strict=True) if _get(value) is True]
    if not on_sonic:
        yield Violation("nvfp4_merge_aware = true needs the SonicMoE experts (expert_backend: sonicmoe)", at=at)
    elif _get(adapter) != "lora":
        yield Violation(f"nvfp4_merge_aware = true needs adapter: lora, not {show(_get(adapter))}", at=at)
    elif fused:
        yield Violation(
            f"nvfp4_merge_aware = true does not work with {', '.join(f'{k} = true' for k in fused)}: the fused "
            "LoRA kernels bypass the layers it quantizes; remove them",
            at=at,
        )
    elif start is not None and (
        isinstance(start, bool)
        or (isinstance(start, float) and not 0 < start < 1)
        or (isinstance(start, int) and start < 0)
    ):
        yield Violation(
            f"nvfp4_merge_aware_start_step = {show(start)} must be an optimizer step (an integer, at least 0) "
            "or a fraction strictly between 0 and 1",
            at=("nvfp4_merge_aware_start_step",),
        )


@rule("dsv4-fp4-grouped-mode-nvfp4", "error", "plugins", "dsv4_fp4_grouped_mode", raw=True)
def dsv4_fp4_grouped_mode_nvfp4(plugins: Any, mode: Any) -> Iterator[str]:
    """The grouped FP4 experts path trains only in `nvfp4` mode (`fp8` is not implemented).

    Mirrors `KernelsArgs.check_dsv4_fp4_grouped_mode`."""
    said = _lower(mode)
    if listed(plugins, "kernels") and said is not None and said != "nvfp4":
        why = " is not implemented for training" if said == "fp8" else ""
        yield f"dsv4_fp4_grouped_mode = {show(mode)}{why}; only nvfp4 is supported (or leave it out)"


@rule("dsv4-fp8-nonexpert-mode-known", "error", "plugins", "dsv4_fp8_nonexpert_mode", raw=True)
def dsv4_fp8_nonexpert_mode_known(plugins: Any, mode: Any) -> Iterator[str]:
    """DeepSeek-V4's FP8 non-expert weights are kept as `float8tensor` or `bf16`.

    Mirrors `KernelsArgs.check_dsv4_fp8_nonexpert_mode`."""
    said = _lower(mode)
    if listed(plugins, "kernels") and said is not None and said not in DSV4_FP8_MODES:
        yield f"dsv4_fp8_nonexpert_mode = {show(mode)} is not float8tensor or bf16"


@rule("moe-dequant-chunk-size-positive", "error", "plugins", "moe_dequant_chunk_size", raw=True)
def moe_dequant_chunk_size_positive(plugins: Any, chunk: Any) -> Iterator[str]:
    """The number of experts dequantized per chunk is a positive integer.

    Mirrors `KernelsArgs.check_moe_dequant_chunk_size`."""
    chunk = _get(chunk)
    if listed(plugins, "kernels") and isinstance(chunk, int) and not isinstance(chunk, bool) and chunk <= 0:
        yield f"moe_dequant_chunk_size = {chunk} must be a positive integer (or null for the default)"


@rule("moe-grouped-backend-known", "error", "plugins", "moe_grouped_backend", raw=True)
def moe_grouped_backend_known(plugins: Any, backend: Any) -> Iterator[str]:
    """The grouped NVFP4 experts' GEMM is auto, marlin, cutlass or deepgemm (`dequant` has no training path).

    Mirrors `KernelsArgs.check_moe_grouped_backend`."""
    said = _lower(backend)
    if listed(plugins, "kernels") and said is not None and said not in GROUPED_BACKENDS:
        why = " has no training path" if said == "dequant" else f" is not one of {', '.join(GROUPED_BACKENDS)}"
        yield f"moe_grouped_backend = {show(backend)}{why}; use auto (the default) or leave it out"


@rule("moe-grouped-backend-no-effect", "warning", "plugins", "moe_grouped_backend", "dsv4_fp4_grouped_mode", raw=True)
def moe_grouped_backend_no_effect(plugins: Any, backend: Any, mode: Any) -> Iterator[str]:
    """`moe_grouped_backend` only matters on the grouped NVFP4 experts path (`dsv4_fp4_grouped_mode`).

    Mirrors `KernelsArgs.check_moe_grouped_backend`."""
    said = _lower(backend)
    if listed(plugins, "kernels") and said in GROUPED_BACKENDS and not _get(mode):
        yield f"moe_grouped_backend = {show(backend)} has no effect without dsv4_fp4_grouped_mode: nvfp4"


@rule("nonexpert-quantization-known", "error", "plugins", "nonexpert_quantization", raw=True)
def nonexpert_quantization_known(plugins: Any, value: Any) -> Iterator[str]:
    """The quantization of the non-expert layers is one the adapters know.

    Mirrors `KernelsArgs.check_nonexpert_quantization`."""
    said = _lower(value)
    if listed(plugins, "kernels") and said is not None and said not in NONEXPERT_QUANTIZATION:
        yield f"nonexpert_quantization = {show(value)} is not one of {', '.join(NONEXPERT_QUANTIZATION)}"


@rule("gemma4-nonexpert-deprecated", "warning", "plugins", "gemma4_fp8_nonexpert", "gemma4_nf4_nonexpert", raw=True)
def gemma4_nonexpert_deprecated(plugins: Any, fp8: Any, nf4: Any) -> Iterator[str]:
    """The Gemma-4 flags are deprecated in favour of `nonexpert_quantization`.

    Mirrors `KernelsArgs.check_nonexpert_quantization`."""
    if listed(plugins, "kernels") and (_get(fp8) or _get(nf4)):
        key, value = ("gemma4_fp8_nonexpert", "fp8_blockwise") if _get(fp8) else ("gemma4_nf4_nonexpert", "nf4")
        yield f"{key} is deprecated; write nonexpert_quantization: {value}"


@rule("kernels-plugin-sets-use-kernels", "warning", "plugins", "use_kernels", raw=True)
def kernels_plugin_sets_use_kernels(plugins: Any, use_kernels: Any) -> Iterator[str]:
    """The kernels plugin needs `use_kernels: true`; without it the loader turns it on, with a warning.

    Mirrors `KernelsArgs.check_use_kernels`."""
    if listed(plugins, "kernels") and _get(use_kernels) is not True:
        yield f"use_kernels = {show(_get(use_kernels))}: the kernels plugin turns it on; write use_kernels: true"


ATTENTION_LORA = ("use_dsv4_kernels", "lora_target_modules", "lora_target_linear", "lora_exclude_modules")


@rule("dsv4-kernels-attention-lora", "error", "plugins", *ATTENTION_LORA, raw=True)
def dsv4_kernels_attention_lora(plugins: Any, dsv4: Any, modules: Any, linear: Any, exclude: Any) -> Iterator[str]:
    """With DeepSeek-V4's fused kernels, LoRA stays on the experts: attention-level LoRA needs its indexer
    projections excluded.

    Mirrors `KernelsArgs.check_dsv4_attention_lora_unsupported`."""
    if listed(plugins, "kernels") and _get(dsv4) and (_get(modules) or _get(linear)) and not _get(exclude):
        yield (
            "use_dsv4_kernels = true does not support LoRA on attention (lora_target_modules, or lora_target_linear: "
            "true); target the experts with lora_target_parameters, or exclude the indexer projections with "
            "lora_exclude_modules"
        )


@rule("dsv4-kernels-attention-lora-excluded", "warning", "plugins", *ATTENTION_LORA, raw=True)
def dsv4_kernels_attention_lora_excluded(
    plugins: Any, dsv4: Any, modules: Any, linear: Any, exclude: Any
) -> Iterator[str]:
    """Attention-level LoRA with DeepSeek-V4's fused kernels and `lora_exclude_modules`: the loader trusts the
    exclusion to cover the indexer projections, and warns.

    Mirrors `KernelsArgs.check_dsv4_attention_lora_unsupported`."""
    if listed(plugins, "kernels") and _get(dsv4) and (_get(modules) or _get(linear)) and _get(exclude):
        yield (
            "LoRA on attention with use_dsv4_kernels = true: make sure lora_exclude_modules excludes the indexer "
            "scorer projections (the fused indexer has no gradient)"
        )


@rule(
    "experts-implementation-reset",
    "warning",
    "plugins",
    "experts_implementation",
    *BACKEND_PATHS,
    raw=True,
)
def experts_implementation_reset(plugins: Any, impl: Any, backend: Any, scatter: Any, sonic: Any) -> Iterator[str]:
    """An `experts_implementation` the kernel flags do not back, or one not known, is replaced by eager.

    Mirrors `KernelsArgs.check_experts_implementation`."""
    impl = _get(impl)
    if not listed(plugins, "kernels") or impl is None or _lower(backend) not in (None, *EXPERT_BACKENDS):
        return
    on_scatter, on_sonic = _backends(backend, scatter, sonic)
    if impl == "scattermoe" and not on_scatter:
        why = "needs use_scattermoe: true"
    elif impl == "sonicmoe" and not on_sonic:
        why = "needs use_sonicmoe: true"
    elif impl not in EXPERTS_IMPLEMENTATIONS:
        why = f"is not one of {', '.join(EXPERTS_IMPLEMENTATIONS)}"
    else:
        return
    yield f"experts_implementation = {show(impl)} {why}; the loader uses eager instead"


@rule(
    "dsv4-lora-mlp-kernel-translated",
    "warning",
    "plugins",
    "lora_mlp_kernel",
    "use_dsv4_kernels",
    "dsv4_shared_mlp_lora_kernel",
    *BACKEND_PATHS,
    raw=True,
)
def dsv4_lora_mlp_kernel_translated(
    plugins: Any, mlp: Any, dsv4: Any, shared: Any, backend: Any, scatter: Any, sonic: Any
) -> Iterator[str]:
    """Under MoE kernels with DeepSeek-V4's, `lora_mlp_kernel` is turned off and its intent moved to
    `dsv4_shared_mlp_lora_kernel`.

    Mirrors `KernelsArgs.disable_mlp_kernel`."""
    if not listed(plugins, "kernels") or _lower(backend) not in (None, *EXPERT_BACKENDS):
        return
    on_scatter, on_sonic = _backends(backend, scatter, sonic)
    moe = on_scatter is True or on_sonic is True
    if moe and _get(mlp) is True and _get(dsv4) is True and _get(shared) is None:
        yield (
            "lora_mlp_kernel = true with use_dsv4_kernels: the loader turns it off and sets "
            "dsv4_shared_mlp_lora_kernel: true instead; write that"
        )


RULES: list[Rule] = [
    expert_backend_known,
    scattermoe_with_sonicmoe,
    nvfp4_merge_aware_setup,
    dsv4_fp4_grouped_mode_nvfp4,
    dsv4_fp8_nonexpert_mode_known,
    moe_dequant_chunk_size_positive,
    moe_grouped_backend_known,
    moe_grouped_backend_no_effect,
    nonexpert_quantization_known,
    gemma4_nonexpert_deprecated,
    kernels_plugin_sets_use_kernels,
    dsv4_kernels_attention_lora,
    dsv4_kernels_attention_lora_excluded,
    experts_implementation_reset,
    dsv4_lora_mlp_kernel_translated,
]
