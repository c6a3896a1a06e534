"""Axolotl rules for the settings of its plugins (Liger, Cut Cross Entropy, expert parallelism, Spectrum,
NeMo Gym, SwanLab, diffusion); the MoE kernels' are in `rules_plugins_kernels`.

A plugin's settings model joins the config model only when `plugins:` lists the plugin
(`plugins.listed`), so every rule here first asks that, and says nothing otherwise, as the loader
does. Most upstream checks are `mode="before"` validators that read the config as written, with
`dict.get`: those rules are `raw`, and an absent key reads as the validator reads it (None, or the
default its `get` names), not as the schema's default.

Not mirrored: `MoraConfig.normalize_mora_type` (it reads 1 and 6 as `sharing` and `rope`, which
the schema allows), and the models without validators (Grokfast, knowledge distillation,
lm-eval, DenseMixer, Hatchery, LLM Compressor), whose settings the schema types.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.spec.rules import ABSENT, Rule, Violation, rule
from trainspec.spec.wording import show

from .plugins import listed

SWANLAB_MODES = ("cloud", "local", "offline", "disabled")


def _get(value: Any, default: Any = None) -> Any:
    """A raw value as `dict.get(key, default)` reads it."""
    return default if value is ABSENT else value


# -- Liger ------------------------------------------------------------------------------------------------


@rule("liger-swiglu-with-glu-activation", "error", "plugins", "liger_swiglu", "liger_glu_activation", raw=True)
def liger_swiglu_with_glu_activation(plugins: Any, swiglu: Any, glu: Any) -> Iterator[str]:
    """`liger_swiglu` is the old name of `liger_glu_activation`: the two cannot both be set.

    Mirrors `LigerArgs.check_deprecated_swiglu`."""
    if listed(plugins, "liger") and _get(swiglu) is not None and _get(glu) is not None:
        yield (
            f"liger_swiglu = {show(swiglu)} and liger_glu_activation = {show(glu)} are both set; liger_swiglu is "
            "the old name of liger_glu_activation: keep only liger_glu_activation"
        )


@rule("liger-swiglu-deprecated", "warning", "plugins", "liger_swiglu", "liger_glu_activation", raw=True)
def liger_swiglu_deprecated(plugins: Any, swiglu: Any, glu: Any) -> Iterator[str]:
    """`liger_swiglu` is deprecated: the loader moves its value to `liger_glu_activation`, with a warning.

    Mirrors `LigerArgs.check_deprecated_swiglu`."""
    if listed(plugins, "liger") and _get(swiglu) is not None and _get(glu) is None:
        yield f"liger_swiglu is deprecated; the loader reads it as liger_glu_activation = {show(swiglu)}: rename it"


@rule(
    "liger-glu-with-tiled-mlp",
    "error",
    "plugins",
    "liger_glu_activation",
    "tiled_mlp",
    "tiled_mlp_use_original_mlp",
    raw=True,
)
def liger_glu_with_tiled_mlp(plugins: Any, glu: Any, tiled: Any, original: Any) -> Iterator[str]:
    """Liger's GLU kernel replaces the MLP that `tiled_mlp` tiles, unless the tiling keeps the original MLP.

    The loader reads `tiled_mlp_use_original_mlp` as written here: left out, it does not count as true.

    Mirrors `LigerArgs.check_tiled_mlp_conflict`."""
    if listed(plugins, "liger") and _get(glu) is True and _get(tiled) is True and not _get(original):
        yield (
            "liger_glu_activation = true and tiled_mlp = true need tiled_mlp_use_original_mlp: true written in the "
            "file (the loader does not take its default here); or turn one of them off"
        )


@rule("liger-rms-norm-tensor-parallel", "error", "plugins", "liger_rms_norm", "tensor_parallel_size", raw=True)
def liger_rms_norm_tensor_parallel(plugins: Any, rms_norm: Any, tp: Any) -> Iterator[str]:
    """Liger's RMSNorm kernel does not work with tensor parallelism.

    Mirrors `LigerArgs.check_liger_rms_norm_tensor_parallel`."""
    if not listed(plugins, "liger") or not _get(rms_norm):
        return
    size = _get(tp, 1)
    if size is None:
        yield (
            "tensor_parallel_size = null with liger_rms_norm = true: the loader fails comparing it with 1; "
            "leave tensor_parallel_size out or set it to 1"
        )
    elif isinstance(size, int | float) and size > 1:
        yield (
            f"liger_rms_norm = true does not work with tensor_parallel_size = {size}; "
            "turn liger_rms_norm off or set tensor_parallel_size: 1"
        )


@rule(
    "liger-token-scaling-needs-flce",
    "error",
    "plugins",
    "liger_use_token_scaling",
    "liger_fused_linear_cross_entropy",
    raw=True,
)
def liger_token_scaling_needs_flce(plugins: Any, scaling: Any, flce: Any) -> Iterator[str]:
    """Token scaling is an option of Liger's fused linear cross-entropy, which must be on.

    Mirrors `LigerArgs.check_liger_use_token_scaling_flce`."""
    if listed(plugins, "liger") and _get(scaling) and not _get(flce):
        yield "liger_use_token_scaling = true needs liger_fused_linear_cross_entropy: true"


@rule("liger-losses-tensor-parallel", "error", "plugins", "liger_fused_linear_cross_entropy", "tensor_parallel_size")
def liger_losses_tensor_parallel(plugins: Any, flce: Any, tp: Any) -> Iterator[str]:
    """Liger's fused linear cross-entropy does not work with tensor parallelism.

    Mirrors `LigerArgs.check_tensor_parallel_size_liger_fused_linear_cross_entropy`."""
    if listed(plugins, "liger") and flce and isinstance(tp, int) and tp > 1:
        yield (
            f"liger_fused_linear_cross_entropy = true does not work with tensor_parallel_size = {tp}; "
            "turn it off or set tensor_parallel_size: 1"
        )


# -- Cut Cross Entropy ------------------------------------------------------------------------------------


@rule("cut-cross-entropy-needs-half", "error", "plugins", "cut_cross_entropy", "bf16", "fp16", raw=True)
def cut_cross_entropy_needs_half(plugins: Any, cce: Any, bf16: Any, fp16: Any) -> Iterator[str]:
    """Cut Cross Entropy's backward pass needs bf16 or fp16 training.

    The loader reads `bf16` as written here: its default, "auto", does not count.

    Mirrors `CutCrossEntropyArgs.check_dtype_is_half`."""
    if listed(plugins, "cut_cross_entropy") and _get(cce) and not (_get(bf16) or _get(fp16)):
        yield "cut_cross_entropy = true needs bf16: true or fp16: true written in the file"


@rule("cut-cross-entropy-chunked", "error", "plugins", "chunked_cross_entropy", raw=True)
def cut_cross_entropy_chunked(plugins: Any, chunked: Any) -> Iterator[str]:
    """With the Cut Cross Entropy plugin listed, `chunked_cross_entropy` must stay off (even with
    `cut_cross_entropy: false`).

    Mirrors `CutCrossEntropyArgs.check_chunked_cross_entropy_not_set`."""
    if listed(plugins, "cut_cross_entropy") and _get(chunked):
        yield (
            "chunked_cross_entropy = true cannot be used with the Cut Cross Entropy plugin listed in plugins; "
            "turn chunked_cross_entropy off or remove the plugin"
        )


# -- expert parallelism -------------------------------------------------------------------------------------


@rule(
    "expert-parallel-sizes-positive",
    "error",
    "plugins",
    "expert_parallel_size",
    "expert_parallel_token_capacity",
)
def expert_parallel_sizes_positive(plugins: Any, size: Any, capacity: Any) -> Iterator[Violation]:
    """The expert-parallel degree is at least 1 (1 turns it off), and a token capacity, when set, too.

    Mirrors `ExpertParallelArgs._validate`."""
    if not listed(plugins, "expert_parallel"):
        return
    if isinstance(size, int) and size < 1:
        yield Violation(
            f"expert_parallel_size = {size} must be at least 1 (1 turns expert parallelism off)",
            at=("expert_parallel_size",),
        )
    elif isinstance(capacity, int) and capacity < 1:
        yield Violation(
            f"expert_parallel_token_capacity = {capacity} must be at least 1; null means no cap",
            at=("expert_parallel_token_capacity",),
        )


@rule(
    "expert-parallel-rdma-needs-infiniband",
    "warning",
    "plugins",
    "expert_parallel_size",
    "expert_parallel_num_rdma_bytes",
)
def expert_parallel_rdma_needs_infiniband(plugins: Any, size: Any, rdma: Any) -> Iterator[str]:
    """An RDMA buffer makes DeepEP communicate across nodes, which needs Hopper GPUs and InfiniBand with IBGDA.

    Mirrors `ExpertParallelArgs._validate`."""
    if listed(plugins, "expert_parallel") and isinstance(size, int) and size > 1 and rdma not in (None, 0):
        yield (
            f"expert_parallel_num_rdma_bytes = {show(rdma)} with expert_parallel_size = {size}: the RDMA path "
            "needs Hopper GPUs and InfiniBand with IBGDA, and fails on Ampere or inside one node"
        )


# -- Spectrum ---------------------------------------------------------------------------------------------


@rule("spectrum-fsdp-orig-params", "error", "plugins", "fsdp", "fsdp_config", raw=True)
def spectrum_fsdp_orig_params(plugins: Any, fsdp: Any, config: Any) -> Iterator[str]:
    """Spectrum freezes some of a layer's parameters, which FSDP can shard only with `use_orig_params`.

    The loader asks this of any plugin named with "SpectrumPlugin" once the Spectrum plugin is listed.

    Mirrors `SpectrumArgs.check_fsdp_use_orig_params`."""
    if not listed(plugins, "spectrum") or not _get(fsdp) or not isinstance(config, dict) or not config:
        return
    if not config.get("use_orig_params"):
        yield (
            "the Spectrum plugin with fsdp needs fsdp_config.use_orig_params: true "
            "(FSDP cannot flatten a layer whose parameters are only partly trained)"
        )


# -- NeMo Gym ---------------------------------------------------------------------------------------------


@rule(
    "nemo-gym-needs-configs-and-datasets",
    "error",
    "plugins",
    "nemo_gym_enabled",
    "nemo_gym_config_paths",
    "nemo_gym_auto_start",
    "nemo_gym_datasets",
    raw=True,
)
def nemo_gym_needs_configs_and_datasets(
    plugins: Any, enabled: Any, configs: Any, auto_start: Any, datasets: Any
) -> Iterator[Violation]:
    """With NeMo Gym on, it needs its datasets, and the servers' config files unless the servers run already.

    Mirrors `NemoGymArgs.check_nemo_gym_config`."""
    if not listed(plugins, "nemo_gym") or not _get(enabled):
        return
    if not _get(configs) and _get(auto_start, True):
        yield Violation(
            "nemo_gym_enabled = true needs nemo_gym_config_paths (the resource servers' configs), "
            "or nemo_gym_auto_start: false when the servers already run",
            at=("nemo_gym_enabled",),
        )
    elif not _get(datasets):
        yield Violation(
            "nemo_gym_enabled = true needs nemo_gym_datasets: at least one dataset with its path and server_name",
            at=("nemo_gym_enabled",),
        )


# -- SwanLab ----------------------------------------------------------------------------------------------


@rule("swanlab-mode-known", "error", "plugins", "swanlab_mode")
def swanlab_mode_known(plugins: Any, mode: Any) -> Iterator[str]:
    """`swanlab_mode` is one of cloud, local, offline and disabled.

    Mirrors `SwanLabConfig.validate_swanlab_mode`."""
    if listed(plugins, "swanlab") and isinstance(mode, str) and mode not in SWANLAB_MODES:
        yield f"swanlab_mode = {show(mode)} is not one of {', '.join(SWANLAB_MODES)}"


@rule("swanlab-project-not-blank", "error", "plugins", "swanlab_project")
def swanlab_project_not_blank(plugins: Any, project: Any) -> Iterator[str]:
    """A SwanLab project name, when given, is not blank.

    Mirrors `SwanLabConfig.validate_swanlab_project`."""
    if listed(plugins, "swanlab") and isinstance(project, str) and not project.strip():
        yield f"swanlab_project = {show(project)} is blank: name the project, or leave the key out"


@rule("swanlab-needs-project", "error", "plugins", "use_swanlab", "swanlab_project", raw=True)
def swanlab_needs_project(plugins: Any, use: Any, project: Any) -> Iterator[str]:
    """SwanLab is on by default once its plugin is listed, and then needs a project.

    Mirrors `SwanLabConfig.validate_swanlab_enabled_requires_project`."""
    if listed(plugins, "swanlab") and _get(use, True) is True and not _get(project):
        written = "use_swanlab = true" if use is True else "the SwanLab plugin is listed (use_swanlab defaults to true)"
        yield f"{written}, but swanlab_project is not set; set swanlab_project, or use_swanlab: false"


# -- diffusion --------------------------------------------------------------------------------------------


@rule("diffusion-mask-ratios-ordered", "error", "plugins", "diffusion.min_mask_ratio", "diffusion.max_mask_ratio")
def diffusion_mask_ratios_ordered(plugins: Any, low: Any, high: Any) -> Iterator[str]:
    """The diffusion noise schedule's lowest masking ratio is at most its highest.

    Mirrors `DiffusionConfig._validate_mask_ratios`."""
    if not listed(plugins, "diffusion"):
        return
    low = 0.1 if low is None else low  # the section's defaults, which the loader fills
    high = 0.9 if high is None else high
    if isinstance(low, int | float) and isinstance(high, int | float) and low > high:
        yield f"diffusion.min_mask_ratio = {show(low)} is above diffusion.max_mask_ratio = {show(high)}"


RULES: list[Rule] = [
    liger_swiglu_with_glu_activation,
    liger_swiglu_deprecated,
    liger_glu_with_tiled_mlp,
    liger_rms_norm_tensor_parallel,
    liger_token_scaling_needs_flce,
    liger_losses_tensor_parallel,
    cut_cross_entropy_needs_half,
    cut_cross_entropy_chunked,
    expert_parallel_sizes_positive,
    expert_parallel_rdma_needs_infiniband,
    spectrum_fsdp_orig_params,
    nemo_gym_needs_configs_and_datasets,
    swanlab_mode_known,
    swanlab_project_not_blank,
    swanlab_needs_project,
    diffusion_mask_ratios_ordered,
]
