"""Axolotl rules for adapters (LoRA/QLoRA), RL trainers, optimizers and FSDP.

They mirror `LoRAValidationMixin`, `RLValidationMixin`, `GRPOVllmValidationMixin` and
`OptimizationValidationMixin` of `axolotl/utils/schemas/validation.py`. Most upstream checks are
`mode="before"` validators: they read the config as written, where an absent key, `null` and a
schema default differ (`bf16` is "auto" by default, but absent to them). Those rules are `raw` and
read the values as written (ABSENT when not written), testing them the way upstream does
(truthiness, `is False`, `== 2`). The `mode="after"` checks read the config with its defaults
filled, as the model has them.

Upstream rewrites `fsdp_config` before its FSDP checks run: keys written with the deprecated
`fsdp_` prefix lose it (the family's migration in `fsdp_prefix` does that to the file,
with its warning), and `fsdp_version` is taken from `fsdp_config.version` or
`fsdp_config.fsdp_version`, or pinned to 1 when an `fsdp_config` is given without one.
`_fsdp` applies both rewrites to the values the rules read (a prefixed key can still come from an
override, which the loader strips too), so every FSDP rule judges the config the loader ends with.

Not mirrored: `check_lora_kernels_dora` (it checks nothing), the DeepSpeed JSON rewrites of
`check_tensor_parallel_size_update_ds_json` and `check_deepcompile` (they read and write the
DeepSpeed file on the launching machine; that they fail on an inline DeepSpeed config is
`rules_loader_failures`), and the defaults upstream fills without judging
(`optim_target_modules` for Q-GaLore, `batch_flattening: auto`); `unmirrored.py` has the list.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from math import lcm
from typing import Any

from trainspec.spec.rules import ABSENT, Rule, Violation, rule
from trainspec.spec.wording import show

from .attention import ATTENTION_PATHS, VARLEN, attention
from .fsdp_prefix import is_prefixed, plain_key
from .phrases import FIXED_IN, RELEASE
from .rules_plugins_kernels import TRANSLATION_PATHS, mlp_kernel_turned_off

LORA_ADAPTERS = ("lora", "qlora")
LORA_KERNELS = ("lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel")
PREFERENCE_RL = ("dpo", "kto", "orpo", "ipo")
BNB_8BIT_OPTIMIZERS = ("adamw_8bit", "adamw_bnb_8bit")
CROSS_ENTROPY_PATCHES = (
    "cut_cross_entropy",
    "chunked_cross_entropy",
    "liger_cross_entropy",
    "liger_fused_linear_cross_entropy",
)


def _given(value: Any, default: Any = None) -> Any:
    """A raw value as `dict.get(key, default)` reads it."""
    return default if value is ABSENT else value


def _fsdp(version: Any, config: Any) -> tuple[Any, dict[str, Any] | None]:
    """`fsdp_version` and `fsdp_config` after upstream's two rewrites (prefix and version).

    The prefix rewrite (`check_fsdp_config_kwargs_prefix`) strips every `fsdp_` from a key that
    starts with it, except `fsdp_version`; a later key wins over an earlier one. The version
    rewrite (`check_fsdp_version_in_fsdp_config`) takes a missing or falsy `fsdp_version` from
    `fsdp_config.version`, else `fsdp_config.fsdp_version`, else 1 when `fsdp_config` is not empty.
    """
    version = _given(version)
    if not isinstance(config, Mapping):
        return version, None
    plain = {(plain_key(k) if is_prefixed(k) else k): v for k, v in config.items()}
    if plain and not version:
        version = plain.get("version") or plain.get("fsdp_version") or 1
        plain["fsdp_version"] = version
    return version, plain


def _uses_fsdp(fsdp: Any, config: Any) -> bool:
    """Upstream's test for an FSDP run: `fsdp` or `fsdp_config` written and not empty."""
    return bool(fsdp) or bool(_given(config))


def _fsdp2(version: Any, config: Any) -> bool:
    """Whether the FSDP version the loader resolves is 2 (it compares the text: 2 and "2" both are)."""
    return str(_fsdp(version, config)[0]) == "2"


def _them(names: list[str]) -> str:
    """The pronoun a message uses for `names`: one key or several."""
    return "it" if len(names) == 1 else "them"


def _kernels(*flags: Any) -> list[str]:
    """The LoRA kernels (of `LORA_KERNELS`, in order) that `flags` turn on."""
    return [name for name, on in zip(LORA_KERNELS, flags, strict=True) if on]


# --- LoRAValidationMixin ---------------------------------------------------------------------------


@rule("lr-groups-with-loraplus", "error", "lr_groups", "loraplus_lr_ratio", raw=True)
def lr_groups_with_loraplus(groups: Any, ratio: Any) -> Iterator[str]:
    """Per-module learning-rate groups and LoRA+ both set the optimizer's parameter groups.

    Mirrors `LoRAValidationMixin.check_lr_groups`.
    """
    if groups and ratio:
        yield (
            f"lr_groups and loraplus_lr_ratio = {show(ratio)} cannot be used together: "
            "remove loraplus_lr_ratio or lr_groups"
        )


@rule(
    "unfrozen-parameters-with-peft-layers",
    "error",
    "unfrozen_parameters",
    "peft_layers_to_transform",
    "adapter",
    raw=True,
)
def unfrozen_parameters_with_peft_layers(unfrozen: Any, layers: Any, adapter: Any) -> Iterator[str]:
    """With an adapter, `unfrozen_parameters` and `peft_layers_to_transform` both choose what trains.

    Mirrors `LoRAValidationMixin.check_frozen`.
    """
    if adapter and layers and unfrozen:
        yield (
            f"unfrozen_parameters cannot be used with peft_layers_to_transform = {show(layers)} "
            f"and adapter = {show(adapter)} (the loader refuses it: the result is unpredictable); "
            "remove unfrozen_parameters or peft_layers_to_transform"
        )


@rule("peft-layers-pattern-without-layers", "error", "peft_layers_pattern", "peft_layers_to_transform", raw=True)
def peft_layers_pattern_without_layers(pattern: Any, layers: Any) -> Iterator[str]:
    """`peft_layers_pattern` names where the layers of `peft_layers_to_transform` are; alone it means nothing.

    Mirrors `LoRAValidationMixin.check_peft_layers_pattern`.
    """
    if pattern and not layers:
        yield (
            f"peft_layers_pattern = {show(pattern)} needs peft_layers_to_transform (the layer indices "
            "to adapt); set it, or remove peft_layers_pattern"
        )


@rule("fused-mlp-with-lora", "error", "flash_attn_fuse_mlp", "adapter")
def fused_mlp_with_lora(fuse: bool | None, adapter: str | None) -> Iterator[str]:
    """Fused MLP modules replace the linear layers LoRA adapts.

    Mirrors `LoRAValidationMixin.check_fused_lora`.
    """
    if adapter in LORA_ADAPTERS and fuse:
        yield f"flash_attn_fuse_mlp = true is not supported with adapter = {show(adapter)}; remove flash_attn_fuse_mlp"


@rule("onebitllms-with-lora", "error", "use_onebitllms", "adapter")
def onebitllms_with_lora(onebit: bool | None, adapter: str | None) -> Iterator[str]:
    """OneBitLLMs training cannot use a LoRA or QLoRA adapter.

    Mirrors `LoRAValidationMixin.check_onebitllms_lora`.
    """
    if onebit and adapter in LORA_ADAPTERS:
        yield f"use_onebitllms = true is not supported with adapter = {show(adapter)}; remove one of them"


@rule(
    "qlora-zero3-non-reentrant",
    "warning",
    "gradient_checkpointing_kwargs.use_reentrant",
    "adapter",
    "deepspeed",
    raw=True,
)
def qlora_zero3_non_reentrant(reentrant: Any, adapter: Any, deepspeed: Any) -> Iterator[str]:
    """QLoRA under DeepSpeed ZeRO-3 with non-reentrant checkpointing may fail when activations are recomputed.

    Mirrors `LoRAValidationMixin.warn_qlora_zero3_w_use_reentrant`.
    """
    deepspeed = _given(deepspeed, "")
    if adapter == "qlora" and reentrant is False and deepspeed is not None and "zero3" in deepspeed:
        yield (
            f'adapter = "qlora" with deepspeed = {show(deepspeed)} (ZeRO-3) and '
            "gradient_checkpointing_kwargs.use_reentrant = false may fail with a CheckpointError about "
            "recomputed values; if it does, try use_reentrant: true"
        )


@rule("lora-kernels-with-8bit-lora", "error", *LORA_KERNELS, "adapter", "load_in_8bit", *TRANSLATION_PATHS, raw=True)
def lora_kernels_with_8bit_lora(
    mlp: Any, qkv: Any, o: Any, adapter: Any, in_8bit: Any, *translation: Any
) -> Iterator[str]:
    """The LoRA kernels do not support a base model loaded in 8 bits. A `lora_mlp_kernel: true` the kernels
    plugin turns off first (under the MoE kernels with DeepSeek-V4's) does not count.

    Mirrors `LoRAValidationMixin.check_lora_kernels_8bit`.
    """
    kernels = _kernels(False if mlp_kernel_turned_off(*translation) else mlp, qkv, o)
    if kernels and adapter == "lora" and in_8bit:
        yield (
            f'{" and ".join(kernels)} cannot be used with adapter = "lora" and load_in_8bit = true; '
            f"set {_them(kernels)} to false, or load the model in 4 bits with adapter: qlora"
        )


@rule("lora-kernels-with-remote-code", "error", *LORA_KERNELS, "trust_remote_code", *TRANSLATION_PATHS, raw=True)
def lora_kernels_with_remote_code(mlp: Any, qkv: Any, o: Any, remote: Any, *translation: Any) -> Iterator[str]:
    """The LoRA kernels patch known model classes; a model's own remote code is not one of them. A
    `lora_mlp_kernel: true` the kernels plugin turns off first (under the MoE kernels with DeepSeek-V4's) does
    not count.

    Mirrors `LoRAValidationMixin.check_lora_kernels_trust_remote_code`.
    """
    kernels = _kernels(False if mlp_kernel_turned_off(*translation) else mlp, qkv, o)
    if kernels and remote:
        yield (
            f"{' and '.join(kernels)} cannot be used with trust_remote_code = true; "
            f"set {_them(kernels)} to false or disable trust_remote_code"
        )


# --- RLValidationMixin -----------------------------------------------------------------------------


@rule("sample-packing-with-rl", "error", "sample_packing", "rl", raw=True)
def sample_packing_with_rl(packing: Any, rl: Any) -> Iterator[str]:
    """RL trainers (DPO, KTO, GRPO, ...) build their own batches; they cannot pack samples.

    Mirrors `RLValidationMixin.check_sample_packing_w_rl`.
    """
    if packing and rl:
        yield f"sample_packing = true does not work with rl = {show(rl)}; set sample_packing: false"


@rule("kto-sample-packing", "error", "rl", "sample_packing", "eval_sample_packing", raw=True)
def kto_sample_packing(rl: Any, packing: Any, eval_packing: Any) -> Iterator[Violation]:
    """KTO cannot pack samples, neither for training nor for evaluation.

    Mirrors `RLValidationMixin.check_kto_config`.
    """
    if rl == "kto" and (packing or eval_packing):
        key = "sample_packing" if packing else "eval_sample_packing"
        yield Violation(f'{key} = true is not supported with rl = "kto"; set {key}: false', at=(key,))


@rule("kto-remove-unused-columns", "error", "rl", "remove_unused_columns", "skip_prepare_dataset", raw=True)
def kto_remove_unused_columns(rl: Any, remove: Any, skip_prepare: Any) -> Iterator[str]:
    """KTO needs its dataset's extra columns: `remove_unused_columns` must be false.

    Upstream sets it to false itself when `skip_prepare_dataset` is true and it is not written.

    Mirrors `RLValidationMixin.check_kto_config`.
    """
    remove = _given(remove)
    if remove is None and skip_prepare:
        remove = False
    if rl == "kto" and remove is not False:
        got = "not set" if remove is None else f"= {show(remove)}"
        yield f'rl = "kto" needs remove_unused_columns: false (it is {got})'


@rule(
    "grpo-liger-context-parallel",
    "error",
    "rl",
    "trl.use_liger_loss",
    "context_parallel_size",
    raw=True,
)
def grpo_liger_context_parallel(rl: Any, liger: Any, cp: Any) -> Iterator[str]:
    """GRPO's Liger loss does not support context (sequence) parallelism.

    Mirrors `RLValidationMixin.check_grpo_liger_sequence_parallel`.
    """
    if rl != "grpo" or not liger:
        return
    cp = _given(cp, 1)
    if cp is None:
        yield (
            'context_parallel_size = null with rl = "grpo" and trl.use_liger_loss = true: '
            f"Axolotl {RELEASE} (and {FIXED_IN}) fails comparing it to 1 with TypeError "
            "(RLValidationMixin.check_grpo_liger_sequence_parallel); remove it or write a number"
        )
    elif cp > 1:
        yield (
            f'rl = "grpo" with trl.use_liger_loss = true does not support context_parallel_size = {cp}; '
            "set context_parallel_size: 1 or trl.use_liger_loss: false"
        )


@rule(
    "rl-qlora-reentrant-distributed",
    "error",
    "gradient_checkpointing_kwargs.use_reentrant",
    "rl",
    "gradient_checkpointing",
    "load_in_4bit",
    "adapter",
    raw=True,
)
def rl_qlora_reentrant_distributed(
    reentrant: Any, rl: Any, checkpointing: Any, in_4bit: Any, adapter: Any, *, world_size: int
) -> Iterator[str]:
    """Distributed RL with QLoRA breaks with reentrant gradient checkpointing (a TRL limitation).

    Mirrors `RLValidationMixin.check_rl_config_gradient_checkpointing`.
    """
    if rl and checkpointing and reentrant and in_4bit and adapter == "qlora" and world_size > 1:
        yield (
            f"gradient_checkpointing_kwargs.use_reentrant = true is not supported for RL (rl = {show(rl)}) "
            f'with adapter = "qlora" on {world_size} GPUs; set use_reentrant: false'
        )


@rule("gdpo-aggregation", "error", "rl", "trl", "trl.multi_objective_aggregation", raw=True)
def gdpo_aggregation(rl: Any, trl: Any, aggregation: Any) -> Iterator[str]:
    """`multi_objective_aggregation: sum_then_normalize` is GRPO's aggregation, not GDPO's.

    Mirrors `RLValidationMixin.check_gdpo`.
    """
    if rl != "gdpo":
        return
    if trl is None:
        yield (
            f'trl = null with rl = "gdpo": Axolotl {RELEASE} (and {FIXED_IN}) fails reading trl with AttributeError '
            "(RLValidationMixin.check_gdpo); remove trl: null"
        )
    elif aggregation == "sum_then_normalize":
        yield (
            'trl.multi_objective_aggregation = "sum_then_normalize" is GRPO\'s, but rl = "gdpo"; '
            "use rl: grpo, or another aggregation for GDPO"
        )


@rule("ipo-deprecated", "warning", "rl", raw=True)
def ipo_deprecated(rl: Any) -> Iterator[str]:
    """`rl: ipo` is to be removed; DPO with the IPO loss replaces it.

    Mirrors `RLValidationMixin.check_dpo`.
    """
    if rl == "ipo":
        yield 'rl = "ipo" will soon be deprecated; use rl: dpo with dpo_loss_type: [ipo]'


@rule("dpo-loss-weights", "error", "rl", "dpo_loss_type", "dpo_loss_weights", raw=True)
def dpo_loss_weights(rl: Any, types: Any, weights: Any) -> Iterator[str]:
    """DPO's loss list and weights go together, one weight per loss, and only with `rl: dpo`.

    Mirrors `RLValidationMixin.check_dpo`.
    """
    types, weights = _given(types), _given(weights)
    if rl == "dpo":
        if weights is not None and types is None:
            yield f"dpo_loss_weights = {show(weights)} needs dpo_loss_type (the losses they weigh); set it"
        elif types is not None and weights is not None and len(types) != len(weights):
            yield (
                f"dpo_loss_weights = {show(weights)} must give one weight per loss of dpo_loss_type = "
                f"{show(types)}; make them the same length"
            )
    elif types is not None or weights is not None:
        keys = " and ".join(k for k, v in (("dpo_loss_type", types), ("dpo_loss_weights", weights)) if v is not None)
        yield f"{keys} are for rl: dpo only, but rl = {show(_given(rl))}; remove them or use rl: dpo"


def _generation_batch(trl: Any, mbs: Any, gas: Any) -> tuple[int, str]:
    """GRPO's generation batch size per step and where it comes from, as upstream computes them."""
    explicit = trl.get("generation_batch_size") if isinstance(trl, Mapping) else None
    if explicit is not None:
        return int(explicit), f"trl.generation_batch_size = {explicit}"
    mb, ga = _given(mbs) or 1, _given(gas) or 1
    return int(mb) * int(ga), f"micro_batch_size × gradient_accumulation_steps = {mb} × {ga}"


_GRPO_PATHS = ("rl", "trl.num_generations", "trl", "micro_batch_size", "gradient_accumulation_steps")


@rule("grpo-num-generations", "error", "rl", "trl.num_generations", raw=True)
def grpo_num_generations(rl: Any, generations: Any) -> Iterator[str]:
    """GRPO's advantage compares the completions of one prompt: it needs at least two.

    Mirrors `RLValidationMixin.check_grpo_batch_size_divisibility`.
    """
    if rl == "grpo" and _given(generations) is not None and generations < 2:
        yield (
            f"trl.num_generations = {generations}: GRPO needs at least 2 completions per prompt "
            "(with one, every advantage is zero and the policy never updates); set it to 2 or more"
        )


@rule("grpo-generation-batch-size", "error", *_GRPO_PATHS, raw=True)
def grpo_generation_batch_size(rl: Any, generations: Any, trl: Any, mbs: Any, gas: Any) -> Iterator[str]:
    """Every prompt of a GRPO generation batch is repeated `num_generations` times, so it must divide it.

    Without `trl.generation_batch_size`, the batch is micro_batch_size × gradient_accumulation_steps.

    Mirrors `RLValidationMixin.check_grpo_batch_size_divisibility`.
    """
    if rl != "grpo" or _given(generations) is None or generations < 2:
        return
    batch, source = _generation_batch(trl, mbs, gas)
    if batch % generations:
        hint = "make it a multiple of trl.num_generations"
        if not (isinstance(trl, Mapping) and trl.get("generation_batch_size") is not None):
            mb = int(_given(mbs) or 1)
            hint = f"for example gradient_accumulation_steps: {lcm(generations, mb) // mb}"
        yield (
            f"GRPO's generation batch {batch} ({source}) is not divisible by trl.num_generations = "
            f"{generations}; {hint}"
        )


@rule("grpo-generation-batch-per-rank", "error", *_GRPO_PATHS, raw=True)
def grpo_generation_batch_per_rank(
    rl: Any, generations: Any, trl: Any, mbs: Any, gas: Any, *, world_size: int
) -> Iterator[str]:
    """Each rank generates at least one whole group: the generation batch must reach num_generations × GPUs.

    Mirrors `RLValidationMixin.check_grpo_batch_size_divisibility`.
    """
    if rl != "grpo" or _given(generations) is None or generations < 2 or world_size <= 1:
        return
    batch, source = _generation_batch(trl, mbs, gas)
    if batch < generations * world_size:
        yield (
            f"GRPO on {world_size} GPUs needs a generation batch of at least trl.num_generations × GPUs = "
            f"{generations * world_size}, got {batch} ({source}); raise gradient_accumulation_steps "
            "or micro_batch_size"
        )


# --- OptimizationValidationMixin -------------------------------------------------------------------


@rule("adamw-params-without-adamw", "warning", "adam_beta1", "adam_beta2", "adam_epsilon", "optimizer")
def adamw_params_without_adamw(beta1: Any, beta2: Any, epsilon: Any, optimizer: Any) -> Iterator[str]:
    """AdamW's hyperparameters do nothing for an optimizer that is not AdamW.

    Mirrors `OptimizationValidationMixin.check_adamw_optimizer_params`.
    """
    given = [k for k, v in (("adam_beta1", beta1), ("adam_beta2", beta2), ("adam_epsilon", epsilon)) if v]
    if given and (not optimizer or "adamw" not in str(optimizer).lower()):
        yield (
            f"{' and '.join(given)} set, but optimizer = {show(optimizer)} is not an AdamW optimizer, "
            f"which ignores {_them(given)}; remove {_them(given)} or choose an adamw optimizer"
        )


def _ddp_or_fsdp2(name: str, deepspeed: Any, fsdp: Any, version: Any, config: Any) -> Iterator[Violation]:
    """An optimizer that runs under DDP or FSDP2 only: neither DeepSpeed nor FSDP1."""
    if deepspeed:
        yield Violation(f"optimizer = {show(name)} is incompatible with DeepSpeed; remove deepspeed", at=("deepspeed",))
    elif _uses_fsdp(fsdp, config) and not _fsdp2(version, config):
        resolved, _ = _fsdp(version, config)
        yield Violation(
            f"optimizer = {show(name)} works only with FSDP2, but fsdp_version = {show(resolved or 1)}; "
            "set fsdp_version: 2",
            at=("fsdp_version",),
        )


_DIST = ("deepspeed", "fsdp", "fsdp_version", "fsdp_config")


@rule("muon-needs-ddp-or-fsdp2", "error", "optimizer", *_DIST, raw=True)
def muon_needs_ddp_or_fsdp2(
    optimizer: Any, deepspeed: Any, fsdp: Any, version: Any, config: Any
) -> Iterator[Violation]:
    """The Muon optimizer runs under DDP or FSDP2, not DeepSpeed or FSDP1.

    Mirrors `OptimizationValidationMixin.check_muon_deepspeed_fsdp`.
    """
    if optimizer == "muon":
        yield from _ddp_or_fsdp2(optimizer, deepspeed, fsdp, version, config)


@rule("flash-optimizer-needs-ddp-or-fsdp2", "error", "optimizer", *_DIST, raw=True)
def flash_optimizer_needs_ddp_or_fsdp2(
    optimizer: Any, deepspeed: Any, fsdp: Any, version: Any, config: Any
) -> Iterator[Violation]:
    """The flash optimizers (`flash_*`) run under DDP or FSDP2, not DeepSpeed or FSDP1.

    Mirrors `OptimizationValidationMixin.check_flashoptim_deepspeed_fsdp`.
    """
    if str(_given(optimizer) or "").startswith("flash_"):
        yield from _ddp_or_fsdp2(optimizer, deepspeed, fsdp, version, config)


@rule("q-galore-setup", "error", "optimizer", "adapter", *_DIST, raw=True)
def q_galore_setup(
    optimizer: Any, adapter: Any, deepspeed: Any, fsdp: Any, version: Any, config: Any
) -> Iterator[Violation]:
    """Q-GaLore projects full-precision weights: no adapter, no DeepSpeed, FSDP2 with `use_orig_params`.

    Mirrors `OptimizationValidationMixin.check_qgalore`.
    """
    if optimizer != "q_galore_adamw8bit":
        return
    name = '"q_galore_adamw8bit"'
    if adapter:
        yield Violation(
            f"optimizer = {name} trains full-precision weights and cannot be used with adapter = {show(adapter)}; "
            "remove adapter or choose another optimizer",
            at=("adapter",),
        )
    if deepspeed:
        yield Violation(
            f"optimizer = {name} is not supported with DeepSpeed; remove deepspeed (use DDP, or FSDP2 with "
            "fsdp_config.use_orig_params: true)",
            at=("deepspeed",),
        )
    elif _uses_fsdp(fsdp, config):
        if not _fsdp2(version, config):
            resolved, _ = _fsdp(version, config)
            yield Violation(
                f"optimizer = {name} needs FSDP2, but fsdp_version = {show(resolved or 1)}; set fsdp_version: 2",
                at=("fsdp_version",),
            )
        elif (_fsdp(version, config)[1] or {}).get("use_orig_params") is not True:
            yield Violation(
                f"optimizer = {name} with FSDP needs fsdp_config.use_orig_params: true (its per-parameter "
                "projection state must survive sharding)",
                at=("fsdp_config",),
            )


@rule("q-galore-without-mixed-precision", "warning", "optimizer", "bf16", "bfloat16", "fp16", raw=True)
def q_galore_without_mixed_precision(optimizer: Any, bf16: Any, bfloat16: Any, fp16: Any) -> Iterator[str]:
    """Q-GaLore saves memory with mixed precision; in fp32 most of the saving is lost.

    Upstream reads the keys as written: `bf16` left to its default "auto" counts as not set.

    Mirrors `OptimizationValidationMixin.check_qgalore`.
    """
    if optimizer == "q_galore_adamw8bit" and not (bf16 or bfloat16 or fp16):
        yield (
            'optimizer = "q_galore_adamw8bit" without bf16 or fp16 runs in fp32 and loses most of its '
            "memory saving; set bf16: true"
        )


@rule("batch-flattening-setup", "error", "batch_flattening", "sample_packing", *ATTENTION_PATHS)
def batch_flattening_setup(flattening: Any, packing: Any, *choice: Any) -> Iterator[Violation]:
    """`batch_flattening: true` needs a varlen attention backend and no sample packing ("auto" decides itself).

    Mirrors `OptimizationValidationMixin.check_batch_flattening_fa`.
    """
    backend = attention(*choice)
    yield from flattening_problems(flattening, backend, backend in VARLEN, packing)


@rule("batch-flattening-no-effect", "warning", "batch_flattening", "micro_batch_size", "trl.use_liger_loss")
def batch_flattening_no_effect(flattening: Any, mbs: Any, liger: Any) -> Iterator[str]:
    """Batch flattening joins the samples of a micro batch: one sample, or Liger's fused loss, leaves little to do.

    Mirrors `OptimizationValidationMixin.check_batch_flattening_fa`.
    """
    if not flattening:
        return
    if mbs == 1 and flattening != "auto":
        yield "batch_flattening = true has no effect with micro_batch_size = 1"
    if liger:
        yield (
            "batch_flattening with trl.use_liger_loss = true flattens only the scoring pass; the training "
            "forward pass uses Liger's fused loss kernel instead"
        )


@rule("cross-entropy-patches-conflict", "error", *CROSS_ENTROPY_PATCHES, raw=True)
def cross_entropy_patches_conflict(*patches: Any) -> Iterator[str]:
    """Each cross-entropy patch replaces the same loss; only one can be enabled.

    Mirrors `OptimizationValidationMixin.check_cross_entropy_conflicts`.
    """
    enabled = [name for name, on in zip(CROSS_ENTROPY_PATCHES, patches, strict=True) if on]
    if len(enabled) > 1:
        yield f"only one cross-entropy patch can be enabled, but {' and '.join(enabled)} are; keep one"


@rule("fsdp1-deprecated", "warning", "fsdp_config", "fsdp_version", raw=True)
def fsdp1_deprecated(config: Any, version: Any) -> Iterator[str]:
    """FSDP1 is deprecated in Axolotl and transformers; FSDP2 replaces it.

    An `fsdp_config` without a version runs FSDP1.

    Mirrors `OptimizationValidationMixin.check_fsdp_version`.
    """
    resolved, plain = _fsdp(version, config)
    if plain and str(resolved) != "2":
        yield (
            f"fsdp_version = {show(resolved)} is FSDP1, which is deprecated and will be removed; "
            "migrate to fsdp_version: 2 (https://docs.axolotl.ai/docs/multi-gpu.html#sec-fsdp)"
        )


@rule("fsdp-pin-memory", "error", "fsdp_config", "fsdp_version", raw=True)
def fsdp_pin_memory(config: Any, version: Any) -> Iterator[Violation]:
    """Unpinned CPU offload (`cpu_offload_pin_memory: false`) is FSDP2's, and only with `offload_params`.

    Mirrors `OptimizationValidationMixin.check_fsdp2_cpu_offload_pin_memory`.
    """
    resolved, plain = _fsdp(version, config)
    if not plain or plain.get("cpu_offload_pin_memory") is not False:
        return
    if str(resolved) != "2":
        yield Violation(
            f"fsdp_config.cpu_offload_pin_memory = false needs FSDP2, but fsdp_version = {show(resolved)}; "
            "set fsdp_version: 2"
        )
    elif not plain.get("offload_params"):
        yield Violation("fsdp_config.cpu_offload_pin_memory = false needs fsdp_config.offload_params: true")


@rule(
    "fsdp2-quantized-preference-rl",
    "error",
    "fsdp_version",
    "fsdp_config",
    "rl",
    "load_in_8bit",
    "load_in_4bit",
    raw=True,
)
def fsdp2_quantized_preference_rl(version: Any, config: Any, rl: Any, in_8bit: Any, in_4bit: Any) -> Iterator[str]:
    """FSDP2 cannot shard a quantized base model for DPO, KTO, ORPO or IPO.

    Upstream compares `fsdp_version` with the number 2: a quoted "2" does not count.

    Mirrors `OptimizationValidationMixin.check_fsdp2_base_model_quant_rl`.
    """
    resolved, _ = _fsdp(version, config)
    if resolved == 2 and rl in PREFERENCE_RL and (in_8bit or in_4bit):
        bits = "load_in_8bit" if in_8bit else "load_in_4bit"
        yield (
            f"fsdp_version = 2 does not support {bits} = true with rl = {show(rl)}; use DeepSpeed or fsdp_version: 1"
        )


@rule("fsdp1-offload-with-8bit-optimizer", "error", "optimizer", "fsdp_config", "fsdp_version", raw=True)
def fsdp1_offload_with_8bit_optimizer(optimizer: Any, config: Any, version: Any) -> Iterator[str]:
    """FSDP1's parameter offload does not work with 8-bit optimizers.

    Mirrors `OptimizationValidationMixin.check_fsdp_offload_w_8bit_optimizer`.
    """
    resolved, plain = _fsdp(version, config)
    if plain is None or not optimizer or "8bit" not in str(optimizer):
        return
    if plain.get("offload_params") and str(resolved) != "2":
        yield (
            f"fsdp_config.offload_params = true with fsdp_version = {show(resolved)} (FSDP1) does not work "
            f"with optimizer = {show(optimizer)}; use fsdp_version: 2 or an optimizer that is not 8-bit"
        )


@rule("fsdp2-with-bnb-8bit-optimizer", "error", "optimizer", "fsdp_config", "fsdp_version", raw=True)
def fsdp2_with_bnb_8bit_optimizer(optimizer: Any, config: Any, version: Any) -> Iterator[str]:
    """bitsandbytes' 8-bit AdamW fails in CUDA under FSDP2; torch's 8-bit AdamW works.

    Mirrors `OptimizationValidationMixin.check_fsdp2_w_8bit_optimizer`.
    """
    resolved, plain = _fsdp(version, config)
    if plain is not None and optimizer in BNB_8BIT_OPTIMIZERS and str(resolved) == "2":
        yield f"optimizer = {show(optimizer)} does not work with fsdp_version = 2; use optimizer: adamw_torch_8bit"


@rule("deepcompile-needs-deepspeed", "error", "deepcompile", "deepspeed", raw=True)
def deepcompile_needs_deepspeed(deepcompile: Any, deepspeed: Any) -> Iterator[str]:
    """DeepCompile is a DeepSpeed feature.

    Mirrors `OptimizationValidationMixin.check_deepcompile`.
    """
    if deepcompile and not deepspeed:
        yield "deepcompile = true needs deepspeed (a DeepSpeed config); set deepspeed or remove deepcompile"


@rule("vllm-mode-unset", "warning", "trl")
def vllm_mode_unset(trl: Any) -> Iterator[Violation]:
    """Generating with vLLM runs it either as a separate server or colocated with training; unset, the
    loader picks the server, which must then be started beside the job.

    Mirrors `GRPOVllmValidationMixin.check_vllm_mode_set`."""
    if isinstance(trl, Mapping) and trl.get("use_vllm") and not trl.get("vllm_mode"):
        yield Violation(
            'trl.use_vllm = true without trl.vllm_mode: Axolotl uses "server", which expects a vLLM server '
            'started beside the job; set trl.vllm_mode to "server" or "colocate"',
            at=("trl", "use_vllm"),
            related=(),
        )


RULES: list[Rule] = [
    vllm_mode_unset,
    lr_groups_with_loraplus,
    unfrozen_parameters_with_peft_layers,
    peft_layers_pattern_without_layers,
    fused_mlp_with_lora,
    onebitllms_with_lora,
    qlora_zero3_non_reentrant,
    lora_kernels_with_8bit_lora,
    lora_kernels_with_remote_code,
    sample_packing_with_rl,
    kto_sample_packing,
    kto_remove_unused_columns,
    grpo_liger_context_parallel,
    rl_qlora_reentrant_distributed,
    gdpo_aggregation,
    ipo_deprecated,
    dpo_loss_weights,
    grpo_num_generations,
    grpo_generation_batch_size,
    grpo_generation_batch_per_rank,
    adamw_params_without_adamw,
    muon_needs_ddp_or_fsdp2,
    flash_optimizer_needs_ddp_or_fsdp2,
    q_galore_setup,
    q_galore_without_mixed_precision,
    batch_flattening_setup,
    batch_flattening_no_effect,
    cross_entropy_patches_conflict,
    fsdp1_deprecated,
    fsdp_pin_memory,
    fsdp2_quantized_preference_rl,
    fsdp1_offload_with_8bit_optimizer,
    fsdp2_with_bnb_8bit_optimizer,
    deepcompile_needs_deepspeed,
]


def flattening_problems(flattening: Any, backend: Any, varlen: bool, packing: Any) -> Iterator[Violation]:
    """What the loader refuses of `batch_flattening: true`: a backend that does not take packed batches
    (`varlen` says whether the release's backend takes them), or sample packing beside it."""
    if not flattening or flattening == "auto":
        return
    if not varlen:
        yield Violation(
            f"batch_flattening = true needs an attention backend that takes packed batches, but "
            f"attn_implementation = {show(backend)}; use attn_implementation: flash_attention_2 "
            "(or batch_flattening: auto)",
            at=("batch_flattening",),
        )
    if packing:
        yield Violation(
            "batch_flattening = true cannot be used with sample_packing = true; remove one of them",
            at=("batch_flattening",),
        )
