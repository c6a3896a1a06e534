"""The checks of Axolotl's input class (`AxolotlInputConfig`, `utils/schemas/config.py`).

Those of the class with capabilities are in `rules_config_capabilities`, those of the
sections the class is mixed from in `rules_config_sections`; `RULES` holds all three.

The attention backend has three spellings (see `attention`): checks of the backend
read them all, as the loader settles the backend before those checks run. Not
mirrored: `check_sdpa_varlen`'s probe for torch's varlen attention (every torch
Axolotl 0.18.0 supports has it), and the conversions of `datasets` that only fill.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from trainspec.spec.rules import Rule, Violation, rule
from trainspec.spec.wording import show

from .attention import ATTENTION_PATHS, LEGACY_ATTENTION_FLAGS, attention
from .rules_config_capabilities import RULES as CAPABILITY_RULES
from .rules_config_sections import RULES as SECTION_RULES

CANONICAL_ATTENTION = (
    "eager",
    "sdpa",
    "flash_attention_2",
    "flash_attention_3",
    "flex_attention",
    "xformers",
    "sage",
    "fp8",
)
SHORT_ATTENTION = {"flash": "flash_attention_2", "flex": "flex_attention", "sdp": "sdpa"}
LARGE_HEAD_POLICIES = ("auto", "sdpa", "triton_flash")
INDUCTOR_OPTIONS = (
    "assume_aligned_inputs",
    "comprehensive_padding",
    "coordinate_descent_check_all_directions",
    "coordinate_descent_tuning",
    "decompose_mem_bound_mm",
    "epilogue_fusion",
    "fx_graph_cache",
    "max_autotune_gemm",
    "shape_padding",
    "triton.cudagraphs",
)


def fsdp_version(version: Any, fsdp_config: Any) -> str:
    """The FSDP version after the loader's defaults, as text: `fsdp_config.version` (or
    `fsdp_config.fsdp_version`) when the top level has none, 1 for a non-empty `fsdp_config`
    without any."""
    if not version and isinstance(fsdp_config, dict) and fsdp_config:
        version = fsdp_config.get("version") or fsdp_config.get("fsdp_version") or 1
    return str(version)


# -- AxolotlInputConfig ----------------------------------------------------------------


@rule("fix-untrained-token-not-trainable", "warning", "fix_untrained_tokens", "peft_trainable_token_indices")
def fix_untrained_token_not_trainable(fixed: Any, trainable: Any) -> Iterator[str]:
    """A token whose embedding is fixed is only trained when LoRA trains its index.

    Mirrors `AxolotlInputConfig.warn_peft_trainable_token_to_fix_untrained`."""
    if not fixed or not trainable:
        return
    wanted = [fixed] if isinstance(fixed, int) else fixed
    listed = [trainable] if isinstance(trainable, int) else trainable
    for token in wanted:
        if token not in listed:
            yield (
                f"fix_untrained_tokens includes {show(token)}, but peft_trainable_token_indices = {show(trainable)} "
                f"does not, so that token is not trained; add {show(token)} to peft_trainable_token_indices"
            )


@rule("attention-flag-with-attn-implementation", "error", "attn_implementation", *LEGACY_ATTENTION_FLAGS)
def attention_flag_with_attn_implementation(impl: Any, *flags: Any) -> Iterator[Violation]:
    """A legacy attention flag cannot be combined with `attn_implementation`, which replaces it.

    Mirrors `AxolotlInputConfig.normalize_attn_implementation`."""
    written = [flag for flag, value in zip(LEGACY_ATTENTION_FLAGS, flags, strict=True) if value]
    if impl and written:
        yield Violation(
            f"attn_implementation = {show(impl)} cannot be combined with the legacy attention flag "
            f"{' and '.join(f'{flag} = true' for flag in written)}; remove {' and '.join(written)} "
            "(attn_implementation alone chooses the backend)",
            at=(written[0],),
            related=(("attn_implementation",), *((flag,) for flag in written[1:])),
        )


@rule("legacy-attention-flag", "warning", "attn_implementation", *LEGACY_ATTENTION_FLAGS)
def legacy_attention_flag(impl: Any, *flags: Any) -> Iterator[Violation]:
    """The boolean attention flags are deprecated; `attn_implementation` names the backend.

    Mirrors `AxolotlInputConfig.normalize_attn_implementation`."""
    written = [
        (flag, backend) for (flag, backend), value in zip(LEGACY_ATTENTION_FLAGS.items(), flags, strict=True) if value
    ]
    if written and not impl:
        flag, backend = written[0]
        yield Violation(
            f"{flag}: true is deprecated and will be removed; write attn_implementation: {backend} instead",
            at=(flag,),
            related=(),
        )


@rule("gemma4-hybrid-attention-needs-flash-attention-2", "error", "gemma4_hybrid_attn_impl", "attn_implementation")
def gemma4_hybrid_needs_flash_attention_2(hybrid: Any, impl: Any) -> Iterator[str]:
    """Gemma 4's hybrid attention runs its sliding-window layers under flash_attention_2.

    Mirrors `AxolotlInputConfig.normalize_attn_implementation`."""
    if hybrid and impl and impl != "flash_attention_2":
        yield (
            f'gemma4_hybrid_attn_impl = true needs attn_implementation = "flash_attention_2" (its sliding-window '
            f"layers run under it), not {show(impl)}; set flash_attention_2 or remove attn_implementation"
        )


@rule("attn-implementation-name", "error", "attn_implementation")
def attn_implementation_name(impl: Any) -> Iterator[str]:
    """`attn_implementation` takes a canonical backend name or a hub kernel path (`org/name`).

    Mirrors `AxolotlInputConfig.validate_attn_implementation`."""
    yield from attention_name_problems(impl, CANONICAL_ATTENTION)


@rule("large-head-attention-policy", "error", "large_head_attention")
def large_head_attention_policy(policy: Any) -> Iterator[str]:
    """`large_head_attention` is one of three policies (any letter case); a typo must not pick one.

    Mirrors `AxolotlInputConfig.validate_large_head_attention`."""
    if policy is not None and str(policy).lower() not in LARGE_HEAD_POLICIES:
        yield f"large_head_attention = {show(policy)} is not a policy; use one of {', '.join(LARGE_HEAD_POLICIES)}"


@rule("torch-compile-option-allowed", "error", "torch_compile_options")
def torch_compile_option_allowed(options: Any) -> Iterator[str]:
    """Only some inductor flags may be set through `torch_compile_options`.

    Mirrors `AxolotlInputConfig.validate_torch_compile_options`."""
    if not isinstance(options, dict):
        return
    refused = sorted(set(options) - set(INDUCTOR_OPTIONS))
    if refused:
        yield (
            f"torch_compile_options sets {', '.join(refused)}, which the loader does not allow; "
            f"the allowed flags are {', '.join(INDUCTOR_OPTIONS)}"
        )


@rule("torch-compile-options-need-torch-compile", "error", "torch_compile_options", "torch_compile")
def torch_compile_options_need_torch_compile(options: Any, compile_: Any) -> Iterator[str]:
    """Inductor flags only apply to a compiled model (`auto` compiles on every torch Axolotl supports).

    Mirrors `AxolotlInputConfig.check_torch_compile_options_requires_compile`."""
    if options is not None and not compile_:
        yield (
            f"torch_compile_options is set but torch_compile = {show(compile_)}; "
            "set torch_compile: true (or auto), or remove torch_compile_options"
        )


@rule("cudagraphs-with-sample-packing", "warning", "torch_compile_options", "sample_packing")
def cudagraphs_with_sample_packing(options: Any, packing: Any) -> Iterator[str]:
    """CUDA graphs need static shapes, and packed sequences change shape every step.

    Mirrors `AxolotlInputConfig.check_cudagraphs_wo_static_shapes`."""
    if isinstance(options, dict) and options.get("triton.cudagraphs") and packing:
        yield (
            "torch_compile_options has triton.cudagraphs: true with sample_packing: true; packed sequences "
            "vary in shape, so the graphs are recaptured or skipped; disable one of the two"
        )


@rule("fp32-norms-need-fsdp2", "error", "fp32_norms", "fsdp_config", "fsdp_version")
def fp32_norms_need_fsdp2(fp32_norms: Any, fsdp_config: Any, version: Any) -> Iterator[str]:
    """Keeping norms in fp32 while the layers run in bf16 needs FSDP2 (FSDP1 wants one dtype per group).

    Mirrors `AxolotlInputConfig.check_fp32_norms`."""
    if not fp32_norms:
        return
    if fsdp_config is None:
        yield "fp32_norms = true needs FSDP: add an fsdp_config section with fsdp_version: 2"
    elif (resolved := fsdp_version(version, fsdp_config)) != "2":
        yield f"fp32_norms = true needs fsdp_version: 2, but the FSDP version is {resolved}"


@rule("fp32-norm-classes-without-fp32-norms", "warning", "fp32_norm_classes", "fp32_norms")
def fp32_norm_classes_without_fp32_norms(classes: Any, fp32_norms: Any) -> Iterator[str]:
    """`fp32_norm_classes` only matters with `fp32_norms` on.

    Mirrors `AxolotlInputConfig.check_fp32_norms`."""
    if classes and not fp32_norms:
        yield "fp32_norm_classes is set but fp32_norms is not true, so it is ignored; set fp32_norms: true or remove it"


@rule("sdpa-varlen-without-sample-packing", "warning", "sdpa_varlen", "sample_packing")
def sdpa_varlen_without_sample_packing(varlen: Any, packing: Any) -> Iterator[str]:
    """Variable-length SDPA only changes packed rows.

    Mirrors `AxolotlInputConfig.check_sdpa_varlen`."""
    if varlen and not packing:
        yield "sdpa_varlen = true does nothing without sample_packing: true; enable packing or remove sdpa_varlen"


@rule("sage-attention-without-padding", "warning", *ATTENTION_PATHS, "sample_packing", "pad_to_sequence_len")
def sage_attention_without_padding(*values: Any) -> Iterator[Violation]:
    """Without packing, SageAttention has been seen to blow the loss up unless sequences are padded.

    Mirrors `AxolotlInputConfig.check_sageattn_wo_sample_packing`."""
    *backend, packing, padded = values
    if attention(*backend) == "sage" and not packing and not padded:
        yield Violation(
            "SageAttention without sample_packing: set pad_to_sequence_len: true "
            "(the loss has been seen to explode otherwise)",
            related=(),
        )


@rule("sage-attention-full-finetune", "warning", *ATTENTION_PATHS, "adapter")
def sage_attention_full_finetune(*values: Any) -> Iterator[Violation]:
    """Full fine-tuning under SageAttention has been seen to drop the loss to 0.

    Mirrors `AxolotlInputConfig.check_sageattn_fft`."""
    *backend, adapter = values
    if attention(*backend) == "sage" and not adapter:
        yield Violation(
            "SageAttention with full fine-tuning (no adapter) has been seen to drop the loss to 0; "
            "watch the loss, or train a LoRA/QLoRA adapter, or use another attn_implementation",
            related=(),
        )


@rule("save-strategy-best-needs-metric", "error", "save_strategy", "metric_for_best_model")
def save_strategy_best_needs_metric(strategy: Any, metric: Any) -> Iterator[str]:
    """Keeping the best checkpoint needs a metric to rank checkpoints by.

    Mirrors `AxolotlInputConfig.check_save_strategy_best_requires_metric`."""
    if strategy == "best" and not metric:
        yield 'save_strategy = "best" needs metric_for_best_model (for example eval_loss)'


@rule("lora-target-modules-regex", "error", "lora_target_modules")
def lora_target_modules_regex(modules: Any) -> Iterator[str]:
    """Each entry of a `lora_target_modules` list is matched as a Python regular expression.

    Mirrors `AxolotlInputConfig.check_lora_target_modules_regex`."""
    if not isinstance(modules, list):
        return
    for pattern in modules:
        if isinstance(pattern, str):
            try:
                re.compile(pattern)
            except re.error as exc:
                yield f"lora_target_modules entry {show(pattern)} is not a valid regular expression ({exc})"


RULES: list[Rule] = [
    fix_untrained_token_not_trainable,
    attention_flag_with_attn_implementation,
    legacy_attention_flag,
    gemma4_hybrid_needs_flash_attention_2,
    attn_implementation_name,
    large_head_attention_policy,
    torch_compile_option_allowed,
    torch_compile_options_need_torch_compile,
    cudagraphs_with_sample_packing,
    fp32_norms_need_fsdp2,
    fp32_norm_classes_without_fp32_norms,
    sdpa_varlen_without_sample_packing,
    sage_attention_without_padding,
    sage_attention_full_finetune,
    save_strategy_best_needs_metric,
    lora_target_modules_regex,
    *CAPABILITY_RULES,
    *SECTION_RULES,
]


def attention_name_problems(impl: Any, canonical: Sequence[str]) -> Iterator[str]:
    """What the loader says of an `attn_implementation` that is neither in `canonical` (the release's
    backend names) nor a hub kernel path."""
    if not isinstance(impl, str) or impl in canonical or "/" in impl:
        return
    if impl in SHORT_ATTENTION:
        written = show(SHORT_ATTENTION[impl])
        yield f"attn_implementation = {show(impl)} is a short form the loader refuses; write {written}"
    else:
        yield (
            f"attn_implementation = {show(impl)} is not a known backend; use one of "
            f'{", ".join(canonical)}, or a hub kernel path such as "kernels-community/flash-attn3"'
        )
