"""The KempnerForge rules that commit 5666d0d adds or changes (`version_5666d0d` folds them into 089fbbd's).

Unchanged rules stay in `rules` (same functions, same ids). Changed here: the two
VLM token budgets (frames of a `[video]` section and pooling adapters multiply and shrink the
visual tokens) and `vlm-needs-hf-data` (video runs read clips from `video.data_root`, not a
Hugging Face dataset). New: the dynamic checkpoint window, MoMa's expert map and launch rules,
the `[video]` frame order and the pooling-grid rules. Registry names (`adapter.type`, `vlm.arch`,
`video.dataset_type`, `video.sampling_policy`, `checkpoint.dyn_ckpt_window.strategy`) are enums
of the 5666d0d schema, with the reference's ids as `x-trainspec-rule`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from trainspec.spec.paths import Path
from trainspec.spec.rules import Violation, rule
from trainspec.spec.wording import show

from .rules import residual_image_tokens

POOLING_ADAPTERS = ("avgpool", "attentional_pool")
"""Adapter types that pool the encoder's square patch grid (a fixed list, not a registry)."""
DIVISIBLE_GRID_ADAPTERS = ("attentional_pool",)
"""Pooling adapters whose window must divide the grid side (avgpool pools a ragged last row and column)."""


def square_side(num_tokens: int) -> int | None:
    """The side g of a square patch grid of num_tokens patches, or None when num_tokens is not a square."""
    side = math.isqrt(num_tokens)
    return side if side * side == num_tokens else None


def tokens_per_frame(adapter_type: str | None, pool_window: int | None, num_tokens: int) -> int | None:
    """Visual tokens one image (or video frame) leaves after the adapter; None when the grid cannot be pooled.

    Non-pooling adapters (and num_tokens <= 0, which defers to build time) keep num_tokens; the
    pooling adapters turn a g×g grid into ⌈g / pool_window⌉² tokens (reference §7: 196 tokens with
    window 2 -> 49, 729 with window 3 -> 81, 100 with window 3 -> 16 for avgpool).
    """
    if num_tokens <= 0 or adapter_type not in POOLING_ADAPTERS:
        return num_tokens
    window = pool_window or 2
    side = square_side(num_tokens)
    if side is None or (adapter_type in DIVISIBLE_GRID_ADAPTERS and side % window):
        return None
    return ((side + window - 1) // window) ** 2


def _visual_tokens(
    arch: str, num_tokens: int, adapter_type: str | None, pool_window: int | None, max_frames: int | None
) -> tuple[int, str, tuple[Path, ...]] | None:
    """(R, how R was counted, the paths that says) for the sequence budget; None when the pooling-grid rules
    fail."""
    per_frame = tokens_per_frame(adapter_type, pool_window, num_tokens)
    if per_frame is None:
        return None
    frames = max_frames if max_frames is not None else 1
    r = residual_image_tokens(arch, frames * per_frame)
    parts, named = [], []
    if max_frames is not None:
        parts.append(f"video.max_frames = {frames} frames × {per_frame} tokens per frame")
    if adapter_type in POOLING_ADAPTERS:
        parts.append(
            f'adapter.type = "{adapter_type}" pools vision_encoder.num_tokens = {num_tokens} '
            f"with adapter.pool_window = {pool_window or 2} to {per_frame} per frame"
        )
        named += [("vision_encoder", "num_tokens"), ("adapter", "type"), ("adapter", "pool_window")]
    if max_frames is not None:
        named.append(("video", "max_frames"))
    how = f" ({'; '.join(parts)})" if parts else ""
    return r, f"{show(r)} visual tokens in the residual stream{how}", tuple(named)


def _needs_budget(arch: str | None, num_tokens: int | None, max_text_len: int | None) -> bool:
    return arch is not None and bool(num_tokens) and max_text_len is not None


_BUDGET_PATHS = ("vision_encoder.num_tokens", "adapter.type", "adapter.pool_window", "video.max_frames")


# -- §4.2: inside one section ---------------------------------------------------------


@rule("checkpoint-dyn-window-range", "error", "checkpoint.dyn_ckpt_window.start", "checkpoint.dyn_ckpt_window.stop")
def dyn_window_range(start: int | None, stop: int | None) -> Iterator[Violation]:
    """The dynamic checkpoint window runs from start to stop inclusive, so stop cannot be below start."""
    if start is not None and stop is not None and stop < start:
        yield Violation(
            f"checkpoint.dyn_ckpt_window.stop = {show(stop)} is below checkpoint.dyn_ckpt_window.start = "
            f"{show(start)}; the window needs stop >= start",
            at=("checkpoint", "dyn_ckpt_window", "stop"),
        )


_MOMA_EXPERTS = (("vlm", "moma_experts_per_modality"), ("vlm", "moma_modalities"))
"""What the expert-count findings name (not `vlm.arch`, which only says they apply)."""


@rule("vlm-moma-experts-missing-modality", "error", "vlm.moma_experts_per_modality", "vlm.moma_modalities", "vlm.arch")
def moma_experts_missing_modality(experts: Any, modalities: Any, arch: str | None) -> Iterator[Violation]:
    """MoMa builds a group of experts for every modality, so each needs its count.

    A table written for `vlm.moma_experts_per_modality` replaces the whole default map
    `{image = 4, text = 4}`: writing only `image = 2` leaves `text` without experts.
    """
    if arch != "moma" or not isinstance(experts, dict) or not isinstance(modalities, list):
        return
    missing = sorted({m for m in modalities if isinstance(m, str) and m not in experts})
    if missing:
        yield Violation(
            f"vlm.moma_experts_per_modality = {show(experts)} has no expert count for "
            f"{', '.join(show(m) for m in missing)}; every modality of vlm.moma_modalities = {show(modalities)} "
            "needs one (a written table replaces the whole default map {image = 4, text = 4})",
            related=_MOMA_EXPERTS,
        )


@rule("vlm-moma-experts-unknown-modality", "error", "vlm.moma_experts_per_modality", "vlm.moma_modalities", "vlm.arch")
def moma_experts_unknown_modality(experts: Any, modalities: Any, arch: str | None) -> Iterator[Violation]:
    """Expert counts are only for the modalities listed in vlm.moma_modalities."""
    if arch != "moma" or not isinstance(experts, dict) or not isinstance(modalities, list):
        return
    extra = sorted(k for k in experts if k not in modalities)
    if extra:
        allowed = ", ".join(show(m) for m in sorted(m for m in modalities if isinstance(m, str)))
        yield Violation(
            f"vlm.moma_experts_per_modality names {', '.join(show(k) for k in extra)}, which "
            f"vlm.moma_modalities does not list (allowed: {allowed}); remove it or add it to vlm.moma_modalities",
            related=_MOMA_EXPERTS,
        )


@rule("video-frames-order", "error", "video.min_frames", "video.max_frames")
def video_frames_order(min_frames: int | None, max_frames: int | None) -> Iterator[str]:
    """Short clips are padded up to video.min_frames, which therefore cannot exceed video.max_frames.

    With the default `min_frames = 4`, a `max_frames` below 4 needs `min_frames` lowered too.
    """
    if min_frames is not None and max_frames is not None and min_frames > max_frames:
        yield (
            f"video.min_frames = {show(min_frames)} exceeds video.max_frames = {show(max_frames)}; "
            f"lower video.min_frames to {show(max_frames)} or less (its default is 4)"
        )


# -- §4.3: cross-section, when the config is built ---------------------------------------------


@rule("adapter-pool-square-grid", "error", "vision_encoder.num_tokens", "adapter.type", "vlm")
def pool_square_grid(num_tokens: int | None, adapter_type: str | None, vlm: Any) -> Iterator[Violation]:
    """Pooling adapters pool a square grid of patches, so the encoder's token count must be a perfect square.

    Applies to every VLM arch (also cross_attention); `num_tokens = 0` defers the check to build time.
    """
    if vlm is None or not num_tokens or num_tokens < 0 or adapter_type not in POOLING_ADAPTERS:
        return
    if square_side(num_tokens) is None:
        below = math.isqrt(num_tokens)
        yield Violation(
            f'adapter.type = "{adapter_type}" pools a square patch grid, but vision_encoder.num_tokens = '
            f"{show(num_tokens)} is not a perfect square (nearest: {below * below} = {below}×{below}, "
            f"{(below + 1) ** 2} = {below + 1}×{below + 1}); use an encoder that drops any class token, "
            "or a non-pooling adapter",
            related=(("vision_encoder", "num_tokens"), ("adapter", "type")),
        )


@rule("adapter-pool-divisible-grid", "error", "vision_encoder.num_tokens", "adapter.type", "adapter.pool_window", "vlm")
def pool_divisible_grid(
    num_tokens: int | None, adapter_type: str | None, pool_window: int | None, vlm: Any
) -> Iterator[Violation]:
    """attentional_pool needs adapter.pool_window to divide the side of the patch grid (no ragged windows)."""
    if vlm is None or not num_tokens or num_tokens < 0 or adapter_type not in DIVISIBLE_GRID_ADAPTERS:
        return
    side, window = square_side(num_tokens), pool_window or 2
    if side is not None and side % window:
        divisors = [w for w in range(2, side + 1) if side % w == 0][:4]
        hint = f" (for example {', '.join(map(str, divisors))})" if divisors else ""
        yield Violation(
            f"adapter.pool_window = {window} does not divide the {side}×{side} patch grid of "
            f"vision_encoder.num_tokens = {show(num_tokens)}, which attentional_pool needs; "
            f'use adapter.type = "avgpool" (it pools ragged grids) or a window that divides {side}{hint}',
            related=(("vision_encoder", "num_tokens"), ("adapter", "type"), ("adapter", "pool_window")),
        )


@rule(
    "vlm-max-seq-len-budget",
    "error",
    "model.max_seq_len",
    *_BUDGET_PATHS,
    "vlm.max_text_len",
    "vlm.arch",
)
def max_seq_len_budget(
    max_seq_len: int,
    num_tokens: int | None,
    adapter_type: str | None,
    pool_window: int | None,
    max_frames: int | None,
    max_text_len: int | None,
    arch: str | None,
) -> Iterator[Violation]:
    """The model's positions must hold the visual tokens in the residual stream plus the text.

    Visual tokens: `video.max_frames` frames (1 without `[video]`) times the tokens per frame the
    adapter leaves (pooling adapters reduce the patch grid); none for `cross_attention`.
    """
    if arch is None or not _needs_budget(arch, num_tokens, max_text_len):
        return
    assert num_tokens is not None and max_text_len is not None
    counted = _visual_tokens(arch, num_tokens, adapter_type, pool_window, max_frames)
    if counted is None:
        return  # reported by the pooling-grid rules
    r, how, named = counted
    need = r + max_text_len
    if max_seq_len < need:
        yield Violation(
            f"model.max_seq_len = {max_seq_len} is too small for this VLM: {how} "
            f'(vlm.arch = "{arch}") + vlm.max_text_len = {max_text_len} = {show(need)}',
            related=(("model", "max_seq_len"), *named, ("vlm", "max_text_len"), ("vlm", "arch")),
        )


# -- §4.4: launch-time rules ------------------------------------------------------------------


@rule(
    "vlm-train-seq-len-budget",
    "error",
    "train.seq_len",
    *_BUDGET_PATHS,
    "vlm.max_text_len",
    "vlm.arch",
    at_launch=True,
)
def train_seq_len_budget(
    seq_len: int,
    num_tokens: int | None,
    adapter_type: str | None,
    pool_window: int | None,
    max_frames: int | None,
    max_text_len: int | None,
    arch: str | None,
) -> Iterator[Violation]:
    """Training sequences must hold the visual tokens in the residual stream plus the text.

    Visual tokens are counted as for `vlm-max-seq-len-budget` (frames × tokens per frame).
    """
    if arch is None or not _needs_budget(arch, num_tokens, max_text_len):
        return
    assert num_tokens is not None and max_text_len is not None
    counted = _visual_tokens(arch, num_tokens, adapter_type, pool_window, max_frames)
    if counted is None:
        return
    r, how, named = counted
    need = r + max_text_len
    if seq_len < need:
        yield Violation(
            f'train.seq_len = {seq_len} is too small for this VLM: {how} (vlm.arch = "{arch}") + '
            f"vlm.max_text_len = {max_text_len} = {show(need)}",
            related=(("train", "seq_len"), *named, ("vlm", "max_text_len"), ("vlm", "arch")),
        )


@rule("moma-no-moe", "error", "vlm.arch", "model.num_experts", at_launch=True)
def moma_no_moe(arch: str | None, num_experts: int) -> Iterator[Violation]:
    """MoMa's experts come from vlm.moma_experts_per_modality, so the text backbone must be dense."""
    if arch == "moma" and num_experts > 0:
        yield Violation(
            f'model.num_experts = {num_experts} with vlm.arch = "moma": MoMa takes its expert counts from '
            "vlm.moma_experts_per_modality, so model.num_experts must be 0",
            at=("model", "num_experts"),
        )


@rule("moma-no-ep", "error", "vlm.arch", "distributed.ep", at_launch=True)
def moma_no_ep(arch: str | None, ep: int) -> Iterator[Violation]:
    """MoMa does not support expert parallelism."""
    if arch == "moma" and ep > 1:
        yield Violation(
            f'distributed.ep = {ep} with vlm.arch = "moma": MoMa does not support expert parallelism; '
            "set distributed.ep = 1",
            at=("distributed", "ep"),
        )


@rule("moma-compile", "warning", "vlm.arch", "train.compile_model", at_launch=True)
def moma_compile(arch: str | None, compile_model: bool) -> Iterator[Violation]:
    """torch.compile is not validated for MoMa's modality dispatch (data-dependent shapes)."""
    if arch == "moma" and compile_model:
        yield Violation(
            'train.compile_model = true with vlm.arch = "moma": compilation is not validated for MoMa\'s '
            "modality-aware dispatch; set train.compile_model = false",
            at=("train", "compile_model"),
        )


@rule("moma-ac-full", "warning", "vlm.arch", "train.activation_checkpointing", at_launch=True)
def moma_ac_full(arch: str | None, checkpointing: str) -> Iterator[Violation]:
    """Full activation checkpointing currently has no effect on MoMa blocks."""
    if arch == "moma" and checkpointing == "full":
        yield Violation(
            'train.activation_checkpointing = "full" with vlm.arch = "moma" currently has no effect (MoMa '
            'blocks are not checkpointed), so memory is not saved; use "selective", or fewer experts per '
            "modality in vlm.moma_experts_per_modality",
            at=("train", "activation_checkpointing"),
        )


# -- checks KempnerForge makes only after launch (§8) -------------------------------------------


@rule("vlm-needs-hf-data", "error", "data.hf_dataset_name", "data.tokenizer_path", "vlm", "video", at_launch=True)
def vlm_needs_hf_data(hf_name: str | None, tokenizer: str, vlm: Any, video: Any) -> Iterator[Violation]:
    """Image VLM data comes only from Hugging Face datasets; every VLM run needs data.tokenizer_path.

    A video run (`[video]`) reads its clips from `video.data_root`, so it needs only the tokenizer.
    """
    if vlm is None:
        return
    if not hf_name and video is None:
        yield Violation(
            "an image VLM run reads image-text pairs from a Hugging Face dataset, but data.hf_dataset_name is not "
            "set (a video run reads [video] clips instead)",
            at=("data", "hf_dataset_name"),
            related=(),
        )
    if not tokenizer:
        kind = "a video VLM run" if video is not None else "a VLM run"
        named = (("video",),) if video is not None else ()
        yield Violation(f"{kind} needs data.tokenizer_path (it is empty)", at=("data", "tokenizer_path"), related=named)


# -- warnings trainspec adds where KempnerForge would surprise (§9) ------------------------------


@rule("moma-expert-ffn-multiplier", "warning", "model.moe_expert_ffn_multiplier", "vlm.arch")
def moma_expert_ffn_multiplier(multiplier: float, arch: str | None) -> Iterator[str]:
    """MoMa sizes its experts with model.moe_expert_ffn_multiplier, which KempnerForge checks only for MoE models.

    With arch `moma` (whose backbone must be dense) a multiplier of 0 or less loads and silently
    gives experts of the floor width, 16.
    """
    if arch == "moma" and isinstance(multiplier, (int, float)) and multiplier <= 0:
        yield (
            f'model.moe_expert_ffn_multiplier = {show(multiplier)} with vlm.arch = "moma": MoMa sizes its experts '
            "with it, and a value of 0 or less silently gives experts 16 wide; use a positive multiplier (1.0 = "
            "the dense FFN width)"
        )
