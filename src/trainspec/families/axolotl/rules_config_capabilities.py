"""The checks of Axolotl's config class with capabilities (`AxolotlConfigWCapabilities`).

The loader builds this class only with what it probed of the machine: the GPU
(`capabilities`) and the torch version (`env_capabilities`). Rules that read the GPU
take the target device (`--gpu h100`) and read it through `capabilities`; the GPU count
is the world size. The checks of this class that read no GPU are here too.

Not mirrored, as they read the job's environment: the torch version checks (ADOPT
below 2.5.1, flex attention below 2.6, QAT below 2.6, FSDP2 below 2.7, fp8 attention
below 2.11, the warning below 2.6; Axolotl 0.18.0 requires torch 2.11 or later) and
the packages fp8 needs (torchao...). Fills that change no verdict are not mirrored
either: `tf32: auto`, `torch_compile: auto` (it compiles on every supported torch),
the dataloader defaults and the LoRA kernels it turns on where they are safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.spec.device import Device
from trainspec.spec.rules import Rule, Violation, rule
from trainspec.spec.wording import show

from .attention import ATTENTION_PATHS, attention
from .capabilities import capabilities, sm_number
from .phrases import FIXED_IN, RELEASE

SAGE_CAPABILITIES = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_120")
LORA_KERNELS = ("lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel", "lora_embedding_kernel")


@rule("bf16-unsupported-gpu", "error", "bf16", "bfloat16", "merge_lora", "is_preprocess")
def bf16_unsupported_gpu(bf16: Any, bfloat16: Any, merge: Any, preprocess: Any, *, device: Device) -> Iterator[str]:
    """bf16 training needs an Ampere (8.0) or newer NVIDIA GPU, or an AMD one.

    Merging and preprocessing run without it. Stricter than the loader on pre-Ampere NVIDIA GPUs:
    there torch reports bf16 as available when it can emulate it, and the loader then says nothing.

    Mirrors `AxolotlConfigWCapabilities.check_bf16`."""
    if capabilities(device).bf16 or merge or preprocess:
        return
    if bf16 is True or bfloat16 is True:
        yield (
            f"bf16 is requested, but {device.name} has no bf16 support (Ampere or newer is needed); "
            "training will fail there: set bf16: false (fp16: true), or target a newer GPU "
            "(the loader may not warn: torch reports bf16 as emulated on such GPUs)"
        )


@rule("fp8-needs-fp8-gpu", "error", "fp8")
def fp8_needs_fp8_gpu(fp8: Any, *, device: Device) -> Iterator[str]:
    """FP8 training needs a GPU the loader takes as FP8-capable: compute capability 9.0 (Hopper) or newer.

    Mirrors `AxolotlConfigWCapabilities.check_fp8`."""
    if fp8 and not capabilities(device).fp8:
        yield (
            f"fp8 = true, but the loader does not take {device.name} as fp8-capable "
            "(it needs compute capability 9.0 or newer); remove fp8 or target a Hopper or newer GPU"
        )


@rule("sdpa-packing-bf16", "warning", *ATTENTION_PATHS, "sample_packing", "bf16", "bfloat16")
def sdpa_packing_bf16(*values: Any, device: Device) -> Iterator[Violation]:
    """Sample packing under torch SDPA in bf16 has been seen to give a loss of 0 off the H100 (sm_90).

    Mirrors `AxolotlConfigWCapabilities.check_sample_packing_w_sdpa_bf16`."""
    *backend, packing, bf16, bfloat16 = values
    if not packing or attention(*backend) != "sdpa" or not (bf16 or bfloat16):
        return
    if capabilities(device).compute_capability != "sm_90":
        yield Violation(
            f"sample_packing with attn_implementation sdpa in bf16 (bf16 = {show(bf16)}) may train to a loss of 0 "
            f"on {device.name}; it is known to work on sm_90 GPUs only; use flash_attention_2 or turn packing off",
            at=("sample_packing",),
            related=(),
        )


@rule("sage-attention-compute-capability", "error", *ATTENTION_PATHS)
def sage_attention_compute_capability(*backend: Any, device: Device) -> Iterator[Violation]:
    """SageAttention runs on compute capability sm_80, sm_86, sm_89, sm_90 and sm_120 only.

    Mirrors `AxolotlConfigWCapabilities.check_compute_capability_w_sageattn`."""
    cc = capabilities(device).compute_capability
    if attention(*backend) == "sage" and cc not in SAGE_CAPABILITIES:
        on = f"{device.name} ({cc})" if cc else f"{device.name} (no CUDA compute capability)"
        yield Violation(
            f"SageAttention does not run on {on}; it supports {', '.join(SAGE_CAPABILITIES)}: "
            "choose another attn_implementation",
            related=(),
        )


@rule("fp8-attention-needs-hopper", "error", *ATTENTION_PATHS)
def fp8_attention_needs_hopper(*backend: Any, device: Device) -> Iterator[Violation]:
    """The fp8 attention backend needs compute capability sm_90 (Hopper) or newer.

    Mirrors `AxolotlConfigWCapabilities.check_fp8_attention_preflight`."""
    cc = capabilities(device).compute_capability
    if attention(*backend) != "fp8" or not cc:
        return
    number = sm_number(cc)
    if number is None or number < 90:
        yield Violation(
            f'attn_implementation = "fp8" needs compute capability sm_90 or newer, but {device.name} is {cc}; '
            "choose another attn_implementation or target a Hopper or newer GPU",
            related=(),
        )


@rule("lora-kernels-with-fsdp1", "error", *LORA_KERNELS, "fsdp_config", "fsdp_version")
def lora_kernels_with_fsdp1(*values: Any, world_size: int) -> Iterator[Violation]:
    """The fused LoRA kernels do not work under FSDP1 on several GPUs.

    The loader checks the top-level `fsdp_version` before it reads `fsdp_config.version`,
    so only `fsdp_version: 2` at the top level passes.

    Mirrors `AxolotlConfigWCapabilities.check_multigpu_lora_kernels`."""
    *kernels, fsdp_config, version = values
    enabled = [name for name, on in zip(LORA_KERNELS, kernels, strict=True) if on]
    if enabled and world_size > 1 and fsdp_config is not None and str(version) != "2":
        yield Violation(
            f"{', '.join(f'{name} = true' for name in enabled)} {'does' if len(enabled) == 1 else 'do'} not work "
            f"with FSDP1 on {world_size} GPUs "
            f"(fsdp_version = {show(version)}); set fsdp_version: 2 at the top level, or turn the kernels off",
            at=(enabled[0],),
            related=(("fsdp_version",), ("fsdp_config",)),
        )


@rule(
    "quantize-moe-experts-setup",
    "error",
    "quantize_moe_experts",
    "lora_target_linear",
    "adapter",
    "load_in_4bit",
    "load_in_8bit",
)
def quantize_moe_experts_setup(
    quantize: Any, target_linear: Any, adapter: Any, in_4bit: Any, in_8bit: Any
) -> Iterator[Violation]:
    """Quantized MoE experts are trained through a LoRA or QLoRA adapter on a 4- or 8-bit base.

    Mirrors `AxolotlConfigWCapabilities.check_quantize_moe_experts`."""
    if not quantize:
        return
    if target_linear:
        yield Violation(
            "lora_target_linear = true does not work with quantize_moe_experts = true; "
            "target the expert weights with lora_target_parameters instead",
            at=("lora_target_linear",),
            related=(("quantize_moe_experts",),),
        )
    if adapter not in ("lora", "qlora"):
        yield Violation(
            f"quantize_moe_experts = true needs adapter: lora or qlora (adapter = {show(adapter)})",
            related=(("adapter",),),
        )
    if not (in_4bit or in_8bit):
        yield Violation(
            "quantize_moe_experts = true needs load_in_4bit: true or load_in_8bit: true",
            related=(("load_in_4bit",), ("load_in_8bit",)),
        )


@rule("beta-matches-trl-beta", "error", "beta", "trl", raw=True)
def beta_matches_trl_beta(beta: Any, trl: Any) -> Iterator[str]:
    """`beta` and `trl.beta` are one setting: when both are given they must agree.

    Mirrors `AxolotlConfigWCapabilities.check_beta_and_trl_beta_match`."""
    if not beta:
        return
    if trl is None:
        yield (
            f"beta = {show(beta)} is set and trl is null: Axolotl {RELEASE} (and {FIXED_IN}) fails on it with "
            "AttributeError (AxolotlConfigWCapabilities.check_beta_and_trl_beta_match reads trl.beta); remove trl: "
            "or give it a mapping"
        )
    elif isinstance(trl, dict) and trl.get("beta") and trl["beta"] != beta:
        yield f"beta = {show(beta)} and trl.beta = {show(trl['beta'])} differ; remove one, or make them equal"


@rule("qat-exclusive", "error", "qat", "peft", "load_in_8bit", "load_in_4bit", raw=True)
def qat_exclusive(qat: Any, peft: Any, in_8bit: Any, in_4bit: Any) -> Iterator[Violation]:
    """Quantization-aware training trains the full-precision weights: no PEFT, no 8- or 4-bit loading.

    Mirrors `AxolotlConfigWCapabilities.check_qat_config`."""
    if not qat:
        return
    for path, value in (("peft", peft), ("load_in_8bit", in_8bit), ("load_in_4bit", in_4bit)):
        if value:
            yield Violation(f"qat cannot be combined with {path} = {show(value)}; remove one of them", at=(path,))


@rule("dedup-with-streaming", "error", "dataset_exact_deduplication", "streaming", "pretraining_dataset")
def dedup_with_streaming(dedup: Any, streaming: Any, pretraining: Any) -> Iterator[str]:
    """Exact deduplication needs the whole dataset, which a stream never has.

    Mirrors `AxolotlConfigWCapabilities.check_deduplication_with_streaming`."""
    if dedup and (streaming or pretraining):
        source = "streaming = true" if streaming else "pretraining_dataset (streamed)"
        yield f"dataset_exact_deduplication = true is not available with {source}; remove one of them"


@rule("dedup-with-skip-prepare", "error", "dataset_exact_deduplication", "skip_prepare_dataset")
def dedup_with_skip_prepare(dedup: Any, skip: Any) -> Iterator[str]:
    """Deduplication runs while the dataset is prepared, so skipping preparation skips it.

    Mirrors `AxolotlConfigWCapabilities.check_deduplication_with_skip_prepare`."""
    if dedup and skip:
        yield (
            "dataset_exact_deduplication = true has no effect with skip_prepare_dataset = true; "
            "set skip_prepare_dataset: false or remove dataset_exact_deduplication"
        )


@rule("gc-steps-deprecated", "warning", "gc_steps", "torch_empty_cache_steps", "gc_collect_steps")
def gc_steps_deprecated(gc_steps: Any, empty_cache: Any, collect: Any) -> Iterator[str]:
    """`gc_steps` is deprecated for `torch_empty_cache_steps` and `gc_collect_steps`, which win when set.

    Mirrors `AxolotlConfigWCapabilities.migrate_gc_steps`."""
    if gc_steps is None:
        return
    if empty_cache is None and collect is None:
        yield (
            f"gc_steps is deprecated; write gc_collect_steps: {show(gc_steps)}"
            + (f" and torch_empty_cache_steps: {show(gc_steps)}" if gc_steps > 0 else "")
            + " instead"
        )
    else:
        yield "gc_steps is ignored: torch_empty_cache_steps or gc_collect_steps is set; remove gc_steps"


RULES: list[Rule] = [
    lora_kernels_with_fsdp1,
    quantize_moe_experts_setup,
    beta_matches_trl_beta,
    qat_exclusive,
    dedup_with_streaming,
    dedup_with_skip_prepare,
    gc_steps_deprecated,
    bf16_unsupported_gpu,
    fp8_needs_fp8_gpu,
    sdpa_packing_bf16,
    sage_attention_compute_capability,
    fp8_attention_needs_hopper,
]
