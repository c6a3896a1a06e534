"""The attention backend as Axolotl's loader settles it, for the rules that read it.

`attn_implementation` names the backend; the deprecated boolean flags
(`flash_attention: true`...) pick one when it is not written, and
`gemma4_hybrid_attn_impl` picks flash_attention_2 when neither is
(`AxolotlInputConfig.normalize_attn_implementation`, which runs before every check
that reads the backend).
"""

from __future__ import annotations

from typing import Any

LEGACY_ATTENTION_FLAGS = {
    "xformers_attention": "xformers",
    "sage_attention": "sage",
    "flex_attention": "flex_attention",
    "flash_attention": "flash_attention_2",
    "sdp_attention": "sdpa",
    "eager_attention": "eager",
}
"""The deprecated boolean flags and the backend each selects, the first set winning."""

ATTENTION_PATHS = ("attn_implementation", "gemma4_hybrid_attn_impl", *LEGACY_ATTENTION_FLAGS)
"""The keys that together choose the backend, in the order `attention` takes their values."""


def attention(implementation: Any, gemma4_hybrid: Any, *flags: Any) -> Any:
    """The backend the run trains with: `attn_implementation`, else the first legacy flag set, else
    flash_attention_2 when `gemma4_hybrid_attn_impl` asks for it; None when nothing chooses one."""
    if implementation:
        return implementation
    chosen = [impl for impl, flag in zip(LEGACY_ATTENTION_FLAGS.values(), flags, strict=True) if flag]
    if chosen:
        return chosen[0]
    return "flash_attention_2" if gemma4_hybrid else implementation
