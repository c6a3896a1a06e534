"""The rules Axolotl 0.19.0 adds or changes, each mirroring a validator of that release.

docs/releases/axolotl@0.19.0.md lists the validators that are new, changed or removed since 0.18.0
(drafted by tools/draft_version.py); `version_0_19_0.py` says which base rule each one replaces,
which it removes and where the new ones go. 0.19.0 fixes the crash of 0.18.0's EBFT checks (`ebft-unloadable`,
which it removes), so the strided-mode checks behind them are reached and mirrored here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.spec.device import Device
from trainspec.spec.rules import ABSENT, Rule, Violation, rule
from trainspec.spec.wording import show

from .attention import ATTENTION_PATHS, LEGACY_ATTENTION_FLAGS, VARLEN, attention
from .capabilities import capabilities, sm_number
from .phrases import named
from .plugins import listed
from .rules_config import CANONICAL_ATTENTION, attention_name_problems, fsdp_version
from .rules_data_training import before_rule
from .rules_peft_rl_optim import flattening_problems
from .rules_system_model import CP_PATHS, context_parallel

CANONICAL_ATTENTION_019 = (
    *CANONICAL_ATTENTION[:4],
    "flash_attention_4",
    "flash_attention_torch",
    *CANONICAL_ATTENTION[4:],
)
"""0.19.0's canonical backends: 0.18.0's and flash_attention_4 and flash_attention_torch."""
FP8_RECIPE_DEFAULT = "tensorwise"
TRANSFORMERS = "5.16.1"
"""The transformers release axolotl 0.19.0 pins."""


VARLEN_019 = VARLEN | {"flash_attention_4", "flash_attention_torch"}
"""0.19.0's backends that take packed batches (`ATTN_IMPLS_SUPPORTING_PACKING`), read by their base name."""


def attn_impl_base(impl: Any) -> Any:
    """A backend without its `@revision` or `:kernel_name` suffix, as 0.19.0's `attn_impl_base` reads it."""
    return impl.split(":", 1)[0].split("@", 1)[0].strip() if isinstance(impl, str) else impl


# -- changed ------------------------------------------------------------------------------------------------


@before_rule("batch-size-two-of-three", "error", "micro_batch_size", "gradient_accumulation_steps", "batch_size")
def batch_size_needs_a_factor(
    micro_batch_size: Any, gradient_accumulation_steps: Any, batch_size: Any
) -> Iterator[str]:
    """`batch_size` alone gives the loader nothing to divide it by: with it, micro_batch_size or
    gradient_accumulation_steps must be written too (a 0 counts as unset). Since 0.19.0 a config
    without any of the three loads (the trainer's defaults apply).

    Mirrors `TrainingValidationMixin.check_batch_size_fields`."""
    if batch_size and not (micro_batch_size or gradient_accumulation_steps):
        yield (
            f"batch_size = {show(batch_size)} needs micro_batch_size or gradient_accumulation_steps beside it "
            f"({named('micro_batch_size', micro_batch_size)}, "
            f"{named('gradient_accumulation_steps', gradient_accumulation_steps)}); set micro_batch_size"
        )


@rule("attn-implementation-name", "error", "attn_implementation")
def attn_implementation_name(impl: Any) -> Iterator[str]:
    """`attn_implementation` takes a canonical backend name or a hub kernel path (`org/name`);
    0.19.0 adds flash_attention_4 and flash_attention_torch to the names.

    Mirrors `AxolotlInputConfig.validate_attn_implementation`."""
    yield from attention_name_problems(impl, CANONICAL_ATTENTION_019)


@rule(
    "context-parallel-needs-flash-attention",
    "error",
    *CP_PATHS,
    "attn_implementation",
    "gemma4_hybrid_attn_impl",
    *LEGACY_ATTENTION_FLAGS,
)
def context_parallel_needs_flash_attention_2(
    size: Any, use_dsa: Any, plugins: Any, implementation: Any, gemma4: Any, *legacy: Any
) -> Iterator[str]:
    """Context parallelism runs ring attention, which 0.19.0 supports on the flash attention 2 backend
    only (0.18.0 took flash_attention_3 too).

    Mirrors `ComplexValidationMixin.check_context_parallel_size`."""
    if not context_parallel(size, use_dsa, plugins):
        return
    resolved = attention(implementation, gemma4, *legacy)
    if attn_impl_base(resolved) != "flash_attention_2":
        yield (
            f"context_parallel_size = {size} needs attn_implementation: flash_attention_2 (ring attention runs on "
            f"it only), but {named('attn_implementation', resolved)}; set attn_implementation: flash_attention_2"
        )


@rule("sdpa-packing-bf16", "warning", "attn_implementation", "gemma4_hybrid_attn_impl", *LEGACY_ATTENTION_FLAGS,
      "sample_packing", "bf16", "bfloat16")  # fmt: skip
def sdpa_packing_bf16(*values: Any, device: Device) -> Iterator[Violation]:
    """Sample packing under torch SDPA in bf16 has been seen to give a loss of 0 before Hopper; 0.19.0
    warns below sm_90 only (0.18.0 warned on every GPU but sm_90).

    Mirrors `AxolotlConfigWCapabilities.check_sample_packing_w_sdpa_bf16`."""
    *backend, packing, bf16, bfloat16 = values
    if not packing or attention(*backend) != "sdpa" or not (bf16 or bfloat16):
        return
    cc = capabilities(device).compute_capability
    number = sm_number(cc) if cc else None
    if number is None or number < 90:
        yield Violation(
            f"sample_packing with attn_implementation sdpa in bf16 (bf16 = {show(bf16)}) may train to a loss of 0 "
            f"on {device.name} (older than sm_90); use flash_attention_2 or turn packing off",
            at=("sample_packing",),
            related=(),
        )


@rule("batch-flattening-setup", "error", "batch_flattening", "sample_packing", *ATTENTION_PATHS)
def batch_flattening_setup(flattening: Any, packing: Any, *choice: Any) -> Iterator[Violation]:
    """`batch_flattening: true` needs a varlen attention backend and no sample packing ("auto" decides
    itself); 0.19.0 adds flash_attention_4 and flash_attention_torch to those backends and reads a hub
    kernel without its `@revision` or `:kernel` suffix.

    Mirrors `OptimizationValidationMixin.check_batch_flattening_fa`."""
    backend = attention(*choice)
    yield from flattening_problems(flattening, backend, attn_impl_base(backend) in VARLEN_019, packing)


@rule("sample-packing-attention-not-isolating", "warning", "sample_packing", *ATTENTION_PATHS)
def packing_attention(sample_packing: Any, *choice: Any) -> Iterator[str]:
    """Packed samples share a row; only some attention backends keep them from attending to each
    other (0.19.0: flash_attention_2/3/4, flash_attention_torch, flex_attention, xformers, sage, sdpa, eager).

    Mirrors `AttentionValidationMixin.check_sample_packing_without_attention`."""
    backend = attention(*choice)
    if sample_packing and attn_impl_base(backend) not in VARLEN_019 | {"sdpa", "eager"}:
        chosen = f"attn_implementation = {show(backend)}" if backend else "no attention backend is set"
        yield (
            f"sample_packing = {show(sample_packing)} but {chosen}, which lets packed samples attend to each "
            "other; set attn_implementation to flash_attention_2, flex_attention, sdpa or eager"
        )


# -- new --------------------------------------------------------------------------------------------------


def _recipe(fp8_config: Any) -> Any:
    return fp8_config.get("recipe", FP8_RECIPE_DEFAULT) if isinstance(fp8_config, dict) else FP8_RECIPE_DEFAULT


@before_rule("fp8-config-needs-fp8", "error", "fp8_config", "fp8")
def fp8_config_needs_fp8(fp8_config: Any, fp8: Any) -> Iterator[str]:
    """`fp8_config` tunes fp8 training, which `fp8: true` turns on.

    Mirrors `TrainingValidationMixin.check_fp8_config`."""
    if fp8_config is not None and not fp8:
        yield f"fp8_config is set but {named('fp8', fp8)}; set fp8: true or remove fp8_config"


@before_rule("fp8-all-gather-tensorwise-only", "error", "fp8_enable_fsdp_float8_all_gather", "fp8_config")
def fp8_all_gather_tensorwise(all_gather: Any, fp8_config: Any) -> Iterator[str]:
    """FP8 all-gather of FSDP shards works with tensorwise scaling only.

    Mirrors `TrainingValidationMixin.check_fp8_config`."""
    recipe = _recipe(fp8_config)
    if all_gather and recipe != FP8_RECIPE_DEFAULT:
        yield (
            f'fp8_enable_fsdp_float8_all_gather = {show(all_gather)} supports fp8_config.recipe = "tensorwise" '
            f"only, not {show(recipe)}; turn the all-gather off or use the tensorwise recipe"
        )


@before_rule("ple-cpu-offload-setup", "error", "ple_cpu_offload", "fsdp_config", "fsdp", "deepspeed", "adapter",
             "load_in_4bit", "load_in_8bit")  # fmt: skip
def ple_cpu_offload_setup(
    offload: Any, fsdp_config: Any, fsdp: Any, deepspeed: Any, adapter: Any, in_4bit: Any, in_8bit: Any
) -> Iterator[str]:
    """`ple_cpu_offload` keeps a table in host RAM: FSDP and DeepSpeed place parameters themselves, and
    accelerate leaves the placement alone only for a bitsandbytes model (qlora in 4 bits, lora in 8).

    Mirrors `AxolotlInputConfig.check_ple_cpu_offload`."""
    if not offload:
        return
    if fsdp_config is not None or fsdp is not None:
        yield "ple_cpu_offload = true cannot be used with FSDP (fsdp_config or fsdp is set); remove one of them"
    elif deepspeed:
        yield f"ple_cpu_offload = true cannot be used with DeepSpeed (deepspeed = {show(deepspeed)}); remove one"
    elif not ((adapter == "qlora" and in_4bit) or (adapter == "lora" and in_8bit)):
        yield (
            f"ple_cpu_offload = true needs adapter: qlora with load_in_4bit: true or adapter: lora with "
            f"load_in_8bit: true ({named('adapter', adapter)})"
        )


@rule("ple-cpu-offload-multi-gpu", "warning", "ple_cpu_offload")
def ple_cpu_offload_multi_gpu(offload: Any, world_size: int) -> Iterator[str]:
    """`ple_cpu_offload` is validated upstream on one GPU; under DDP each rank holds its own copy in host RAM.

    Mirrors `AxolotlConfigWCapabilities.check_ple_cpu_offload_multi_gpu`."""
    if offload and world_size > 1:
        yield f"ple_cpu_offload = true on {world_size} GPUs keeps one copy of the table in host RAM per rank"


POLORA_UNTRAINED = ("lora_modules_to_save", "unfrozen_parameters", "peft_use_dora", "peft_trainable_token_indices",
                    "lisa_step_interval", "reward_model", "process_reward_model")  # fmt: skip
POLORA_LRS = ("loraplus_lr_ratio", "lr_groups", "embedding_lr", "embedding_lr_scale")


@before_rule("polora-setup", "error", "optimizer", "adapter", "deepspeed", "tensor_parallel_size", "fsdp",
             "fsdp_config", "fsdp_version", *POLORA_UNTRAINED, *POLORA_LRS, "relora_steps")  # fmt: skip
def polora_setup(optimizer: Any, adapter: Any, deepspeed: Any, tp: Any, fsdp: Any, fsdp_config: Any,
                 version: Any, *rest: Any) -> Iterator[str]:  # fmt: skip
    """The polora optimizer updates whole LoRA factors: it needs a LoRA adapter, no DeepSpeed or tensor
    parallelism, FSDP2 if any FSDP, and nothing it would leave untrained or whose learning rate it ignores.

    Mirrors `OptimizationValidationMixin.check_polora`."""
    if optimizer != "polora":
        return
    untrained = [k for k, v in zip(POLORA_UNTRAINED, rest, strict=False) if v]
    lrs = [k for k, v in zip(POLORA_LRS, rest[len(POLORA_UNTRAINED) :], strict=False) if v]
    relora = rest[-1]
    if adapter not in ("lora", "qlora"):
        yield f'optimizer = "polora" trains LoRA factors only: set adapter: lora or qlora ({named("adapter", adapter)})'
    elif deepspeed or (tp or 1) > 1:
        yield 'optimizer = "polora" cannot be used with DeepSpeed or tensor parallelism; use DDP or FSDP2'
    elif (fsdp or fsdp_config) and str(version if version is not None else _nested_version(fsdp_config)) != "2":
        yield 'optimizer = "polora" with FSDP needs fsdp_version: 2'
    elif untrained:
        yield f'optimizer = "polora" has no fallback optimizer: {", ".join(untrained)} would never train; remove them'
    elif lrs:
        yield f'optimizer = "polora" sets its own step size: {", ".join(lrs)} would be ignored; remove them'
    elif relora:
        yield f'optimizer = "polora" keeps no Optimizer.state for relora to reset ({named("relora_steps", relora)})'


def _nested_version(fsdp_config: Any) -> Any:
    return fsdp_config.get("fsdp_version", 1) if isinstance(fsdp_config, dict) else 1


@before_rule("polora-weight-decay", "warning", "optimizer", "weight_decay")
def polora_weight_decay(optimizer: Any, weight_decay: Any) -> Iterator[str]:
    """polora has no weight decay term.

    Mirrors `OptimizationValidationMixin.check_polora`."""
    if optimizer == "polora" and weight_decay:
        yield f'optimizer = "polora" ignores weight_decay = {show(weight_decay)}'


@rule("dpo-liger-kernel-ipo", "error", "dpo_use_liger_kernel", "rl", "dpo_loss_type")
def dpo_liger_kernel_ipo(liger: Any, rl: Any, loss_types: Any) -> Iterator[str]:
    """liger's fused DPO loss cannot length-normalise IPO's squared margin; it reads the first loss type only.

    Mirrors `RLValidationMixin.check_dpo_use_liger_kernel`."""
    if liger and (rl == "ipo" or (loss_types and loss_types[0] == "ipo")):
        said = named("rl", rl) if rl == "ipo" else f"dpo_loss_type = {show(loss_types)}"
        yield f"dpo_use_liger_kernel = true does not support the ipo loss ({said}); turn it off or use another loss"


@rule("dpo-liger-kernel-first-loss-only", "warning", "dpo_use_liger_kernel", "dpo_loss_type")
def dpo_liger_kernel_first_loss(liger: Any, loss_types: Any) -> Iterator[str]:
    """On liger's DPO path only the first entry of `dpo_loss_type` is used.

    Mirrors `RLValidationMixin.check_dpo_use_liger_kernel`."""
    if liger and loss_types and len(loss_types) > 1:
        yield f"dpo_use_liger_kernel = true uses only {show(loss_types[0])} of dpo_loss_type = {show(loss_types)}"


@rule("fsdp2-cpu-ram-efficient-loading-4bit", "error", "fsdp_config", "fsdp_version", "load_in_4bit")
def fsdp2_cpu_ram_efficient_loading_4bit(fsdp_config: Any, version: Any, in_4bit: Any) -> Iterator[Violation]:
    """bitsandbytes quantises on rank 0 only, so FSDP2's rank-0 loading scatters mismatched shapes.

    Mirrors `OptimizationValidationMixin.check_fsdp2_cpu_ram_efficient_loading_w_4bit`."""
    if (
        isinstance(fsdp_config, dict)
        and fsdp_config
        and fsdp_version(version, fsdp_config) == "2"
        and fsdp_config.get("cpu_ram_efficient_loading")
        and in_4bit
    ):
        yield Violation(
            "fsdp_config.cpu_ram_efficient_loading = true cannot be used with load_in_4bit = true under FSDP2 "
            "(the state-dict scatter deadlocks); set it to false",
            at=("fsdp_config", "cpu_ram_efficient_loading"),
        )


@rule("qat-ternary-activation-int8", "error", "qat", raw=True)
def qat_ternary_activation(qat: Any) -> Iterator[Violation]:
    """Ternary QAT quantises activations to int8 only.

    Mirrors `AxolotlConfigWCapabilities.check_qat_config`."""
    if (
        isinstance(qat, dict)
        and qat.get("weight_dtype") == "ternary"
        and qat.get("activation_dtype") not in (None, "int8")
    ):
        yield Violation(
            f'qat.weight_dtype = "ternary" supports qat.activation_dtype = "int8" only, not '
            f"{show(qat.get('activation_dtype'))}",
            at=("qat", "activation_dtype"),
        )


@rule("flash-attention-torch-unregistered", "error", "attn_implementation")
def flash_attention_torch_unregistered(impl: Any) -> Iterator[str]:
    """`flash_attention_torch` needs a transformers release that registers torch's varlen backend;
    the transformers axolotl 0.19.0 pins does not, so the loader refuses it.

    Mirrors `AxolotlInputConfig.check_flash_attention_torch_preflight`."""
    if impl == "flash_attention_torch":
        yield (
            f'attn_implementation = "flash_attention_torch" needs a transformers that registers it; the '
            f"transformers {TRANSFORMERS} that axolotl 0.19.0 pins does not; use flash_attention_2 or sdpa"
        )


@before_rule("ebft-strided-compile-checkpointing", "error", "rl", "torch_compile", "ebft", "gradient_checkpointing")
def ebft_strided_compile_checkpointing(rl: Any, compile_: Any, ebft: Any, checkpointing: Any) -> Iterator[str]:
    """EBFT's strided mode under torch_compile and gradient checkpointing fails on recomputation
    (BlockMask metadata mismatch); flex_attention compiles itself.

    Mirrors `EBFTValidationMixin.check_ebft_torch_compile`."""
    strided = isinstance(ebft, dict) and ebft.get("mode") == "strided"
    if rl == "ebft" and compile_ is True and strided and checkpointing:
        yield (
            f'ebft.mode = "strided" with torch_compile = true and {named("gradient_checkpointing", checkpointing)} '
            "fails at recomputation; remove torch_compile (flex_attention compiles itself)"
        )


@rule("ebft-strided-activation-offloading-flex", "error", "rl", "ebft", "activation_offloading", *ATTENTION_PATHS)
def ebft_strided_offloading_flex(rl: Any, ebft: Any, offloading: Any, *backend: Any) -> Iterator[str]:
    """Activation offloading wraps the model as FSDP does, which breaks flex_attention's reentrant
    checkpointing in EBFT's strided mode.

    Mirrors `EBFTValidationMixin.check_ebft_activation_offloading`."""
    strided = isinstance(ebft, dict) and ebft.get("mode") == "strided"
    if rl == "ebft" and strided and offloading is True and attention(*backend) == "flex_attention":
        yield (
            'ebft.mode = "strided" cannot use activation_offloading = true with attn_implementation = '
            '"flex_attention"; remove activation_offloading'
        )


@rule("kernels-plugin-sets-use-kernels", "warning", "plugins", "use_kernels", raw=True)
def kernels_plugin_sets_use_kernels(plugins: Any, use_kernels: Any) -> Iterator[str]:
    """The kernels plugin needs `use_kernels`; left unset, the loader turns it on, with a warning. 0.19.0 keeps
    an explicit `use_kernels: false` (0.18.0 turned any value but true on).

    Mirrors `KernelsArgs.check_use_kernels`."""
    if listed(plugins, "kernels") and use_kernels in (ABSENT, None):
        yield "use_kernels is not set: the kernels plugin turns it on; write use_kernels: true"


REPLACED: tuple[Rule, ...] = (
    kernels_plugin_sets_use_kernels,
    batch_size_needs_a_factor,
    attn_implementation_name,
    context_parallel_needs_flash_attention_2,
    sdpa_packing_bf16,
    batch_flattening_setup,
    packing_attention,
)
ADDED: tuple[Rule, ...] = (
    fp8_config_needs_fp8,
    fp8_all_gather_tensorwise,
    ple_cpu_offload_setup,
    ple_cpu_offload_multi_gpu,
    polora_setup,
    polora_weight_decay,
    dpo_liger_kernel_ipo,
    dpo_liger_kernel_first_loss,
    fsdp2_cpu_ram_efficient_loading_4bit,
    qat_ternary_activation,
    flash_attention_torch_unregistered,
    ebft_strided_compile_checkpointing,
    ebft_strided_offloading_flex,
)
REMOVED = ("nemotron-h-checkpointing-needs-packing", "ebft-unloadable", "ebft-strided-compile-with-checkpointing")
