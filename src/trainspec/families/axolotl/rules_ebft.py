"""Axolotl rules for energy-based fine-tuning (`rl: ebft`): `EBFTValidationMixin`'s validators.

Axolotl 0.18.0 cannot load an EBFT run at all: `check_ebft_gradient_checkpointing_reentrant`, which runs
once the config is a model, reads the `ebft` section (by then a settings object) as a mapping and fails
with AttributeError (`ebft-unloadable`); Axolotl 0.19.0 reads it as an object. The checks that run
before it, on the config as written, still refuse or warn first, and their rules say so, so a user
moving to 0.19.0 has the rest of the list. `check_ebft_activation_offloading` runs after the failing
check and never decides anything in 0.18.0 (`unmirrored.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.spec.rules import ABSENT, Rule, rule
from trainspec.spec.wording import show

from .phrases import FIXED_IN, RELEASE

STRIDED_DEFAULTS = {"n_samples_per_prompt": 4, "generate_max_len": 8, "stride": 8, "context_length": 8}
"""The strided settings as the token estimate reads them when the section does not write them."""
TOKEN_SAMPLES = 20_000
"""The token-samples per step above which the loader warns about memory."""


def _mode(ebft: Any) -> Any:
    """The `ebft.mode` as written (None when the section or the key is missing)."""
    return ebft.get("mode") if isinstance(ebft, dict) else None


@rule("ebft-section-required", "error", "rl", "ebft", raw=True)
def ebft_section_required(rl: Any, ebft: Any) -> Iterator[str]:
    """`rl: ebft` trains with the settings of an `ebft` section, which must be there and not empty.

    Mirrors `EBFTValidationMixin.check_ebft_config_required`."""
    if rl == "ebft" and (ebft is ABSENT or ebft == {}):
        yield (
            'rl = "ebft" needs an ebft section with at least `mode: structured` or `mode: strided`; '
            f"Axolotl refuses the config without one (and {RELEASE} cannot load an EBFT run even with one, "
            "see ebft-unloadable)"
        )


@rule("ebft-null", "error", "rl", "ebft", raw=True)
def ebft_null(rl: Any, ebft: Any) -> Iterator[str]:
    """`ebft: null` written out with `rl: ebft` makes the loader fail instead of asking for the section.

    Axolotl 0.18.0's `check_ebft_strided_sequence_len` reads the section with a default that only
    applies to a missing key, so a null section raises AttributeError (the config cannot be loaded);
    0.19.0 reads null as an empty section and refuses it as missing.

    Mirrors `EBFTValidationMixin.check_ebft_strided_sequence_len`."""
    if rl == "ebft" and ebft is None:
        yield (
            f'ebft = null with rl = "ebft": Axolotl {RELEASE} cannot load the config '
            "(EBFTValidationMixin.check_ebft_strided_sequence_len fails with AttributeError on a null "
            f"section; {FIXED_IN} refuses it as a missing section); write the ebft section "
            "(`mode: structured` or `mode: strided`)"
        )


@rule("ebft-unloadable", "error", "rl", "ebft", raw=True)
def ebft_unloadable(rl: Any, ebft: Any) -> Iterator[str]:
    """Axolotl 0.18.0 cannot load any EBFT run that has its `ebft` section.

    Once the config is a model, `check_ebft_gradient_checkpointing_reentrant` reads the section (a
    settings object by then) with a mapping's `get`, which raises AttributeError for every `rl: ebft`
    config with a section; Axolotl 0.19.0 reads the object's field instead.

    Mirrors `EBFTValidationMixin.check_ebft_gradient_checkpointing_reentrant`."""
    if rl == "ebft" and isinstance(ebft, dict) and ebft:
        yield (
            f'rl = "ebft": Axolotl {RELEASE} cannot load an EBFT run '
            "(EBFTValidationMixin.check_ebft_gradient_checkpointing_reentrant reads the ebft section as a mapping "
            f"and fails with AttributeError); train it with Axolotl {FIXED_IN} or later, which fixes it"
        )


COMPILE_PATHS = ("rl", "ebft", "torch_compile", "gradient_checkpointing")


@rule("ebft-strided-compile-with-checkpointing", "error", *COMPILE_PATHS, raw=True)
def ebft_strided_compile_with_checkpointing(rl: Any, ebft: Any, compile_: Any, checkpointing: Any) -> Iterator[str]:
    """Strided EBFT under `torch.compile` with gradient checkpointing fails when it recomputes a block.

    The flex-attention kernel strided EBFT runs on compiles itself; compiling the whole model as well
    makes the recomputed block masks disagree (CheckpointError), so the loader refuses the pair.

    Mirrors `EBFTValidationMixin.check_ebft_torch_compile`."""
    if rl == "ebft" and _mode(ebft) == "strided" and compile_ is True and checkpointing:
        yield (
            f"torch_compile = true with gradient_checkpointing = {show(checkpointing)} in strided EBFT fails when a "
            "checkpointed block is recomputed; remove torch_compile (flex attention compiles itself)"
        )


@rule("ebft-strided-compile", "warning", *COMPILE_PATHS, raw=True)
def ebft_strided_compile(rl: Any, ebft: Any, compile_: Any, checkpointing: Any) -> Iterator[str]:
    """Compiling a strided EBFT model recompiles it as the sequence lengths change from step to step.

    Mirrors `EBFTValidationMixin.check_ebft_torch_compile`."""
    if rl == "ebft" and _mode(ebft) == "strided" and compile_ is True and not checkpointing:
        yield (
            "torch_compile = true in strided EBFT recompiles the model whenever the sequence length changes; "
            "remove it (flex attention compiles itself)"
        )


@rule("ebft-strided-tokens-per-step", "warning", "rl", "ebft", "sequence_len", raw=True)
def ebft_strided_tokens_per_step(rl: Any, ebft: Any, sequence_len: Any) -> Iterator[str]:
    """Strided EBFT generates a block per stride for every sample; past 20,000 token-samples a step
    may need more than 24 GB of GPU memory for a 1B model.

    The estimate is the loader's: blocks = (sequence_len − generate_max_len − context_length) // stride + 1,
    each adding generate_max_len tokens to the sequence, times n_samples_per_prompt.

    Mirrors `EBFTValidationMixin.check_ebft_strided_sequence_len`."""
    if rl != "ebft" or _mode(ebft) != "strided":
        return
    settings = {key: ebft.get(key, default) for key, default in STRIDED_DEFAULTS.items()}
    seq_len = 512 if sequence_len is ABSENT else sequence_len
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (seq_len, *settings.values())):
        return
    if settings["stride"] <= 0:
        return
    blocks = (seq_len - settings["generate_max_len"] - settings["context_length"]) // settings["stride"] + 1
    full = seq_len + blocks * settings["generate_max_len"]
    if full * settings["n_samples_per_prompt"] > TOKEN_SAMPLES:
        yield (
            f"strided EBFT at sequence_len = {seq_len} makes sequences of {full} tokens, times "
            f"ebft.n_samples_per_prompt = {settings['n_samples_per_prompt']}: "
            f"{full * settings['n_samples_per_prompt']} token-samples a step, which may need more than 24 GB of GPU "
            "memory for a 1B model; lower sequence_len or n_samples_per_prompt, or raise ebft.stride"
        )


RULES: list[Rule] = [
    ebft_section_required,
    ebft_null,
    ebft_unloadable,
    ebft_strided_compile_with_checkpointing,
    ebft_strided_compile,
    ebft_strided_tokens_per_step,
]
