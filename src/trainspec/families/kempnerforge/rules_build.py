"""KempnerForge rules for what fails only when the job builds its mesh, model and pipeline, after the
config loaded (kempnerforge-build reference §7), and warnings for what silently does nothing there.

Both versions (089fbbd, 5666d0d) build the same mesh, pipeline and tensor-parallel plan (the reference's
§9 keeps every §3–§7 rule at 089fbbd but those naming MoMa, pooling or video; the pipeline stage's FSDP
failure, row 21, names none), so `RULES` applies to both; `pool_heads_divide_width` checks an adapter only
5666d0d has (its version module adds it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any

from trainspec.spec.paths import Path, format_path
from trainspec.spec.rules import Violation, rule
from trainspec.spec.wording import show

from .layout import ffn_hidden
from .rules import HF_ENCODERS, RANDOM_ENCODER_TOKENS, RANDOM_ENCODER_WIDTH
from .rules_5666d0d import tokens_per_frame

# -- mesh and pipeline ----------------------------------------------------------------------------


_OTHER_DEGREES = (
    "distributed.dp_replicate",
    "distributed.dp_shard",
    "distributed.tp",
    "distributed.pp",
    "distributed.ep",
)


@rule("cp-not-wired", "error", "distributed.cp", *_OTHER_DEGREES, at_launch=True)
def cp_not_wired(cp: int, dp_replicate: int, dp_shard: int, tp: int, pp: int, ep: int) -> Iterator[Violation]:
    """KempnerForge declares context parallelism but does not wire it: the mesh has no cp dimension.

    With any other degree above 1, the device mesh covers only world size / cp ranks and the rest fall
    outside it when the job builds its mesh (reference §3.2). With cp alone, see `cp-becomes-data-parallel`.
    """
    others = {"dp_replicate": dp_replicate, "dp_shard": dp_shard, "tp": tp, "pp": pp, "ep": ep}
    beside = [f"{name} = {value}" for name, value in others.items() if value > 1]
    if cp > 1 and beside:
        yield Violation(
            f"distributed.cp = {cp} with {', '.join(beside)}: KempnerForge does not wire context parallelism (its "
            f"device mesh has no cp dimension), so the mesh covers only 1/{cp} of the ranks and the job fails when "
            "it builds the mesh; set distributed.cp = 1",
            at=("distributed", "cp"),
            related=tuple(("distributed", name) for name, value in others.items() if value > 1),
        )


@rule("cp-becomes-data-parallel", "warning", "distributed.cp", *_OTHER_DEGREES, at_launch=True)
def cp_becomes_data_parallel(
    cp: int, dp_replicate: int, dp_shard: int, tp: int, pp: int, ep: int
) -> Iterator[Violation]:
    """With context parallelism as the only degree, KempnerForge runs plain FSDP data parallelism, or fails.

    No cp dimension survives in the mesh: at world size = cp the flat fallback shards over every rank
    (sequences are not split, each rank reads its own batch); at a larger world size `dp_shard = -1`
    resolves above 1 and the mesh covers only part of the ranks, as `cp-not-wired` says (reference §3.2).
    """
    if cp > 1 and dp_shard in (-1, 1) and max(dp_replicate, tp, pp, ep) == 1:
        larger = " (at a larger world size the mesh fails: `cp-mesh-smaller-than-world`)" if dp_shard == -1 else ""
        yield Violation(
            f"distributed.cp = {cp} is not wired in KempnerForge: at world size {cp} it runs as plain data "
            f"parallelism, sequences not split{larger}; set distributed.cp = 1",
            related=(("distributed", "dp_shard"),) if larger else (),
        )


@rule("cp-mesh-smaller-than-world", "error", "distributed.cp", *_OTHER_DEGREES)
def cp_mesh_smaller_than_world(
    cp: int, dp_replicate: int, dp_shard: int, tp: int, pp: int, ep: int, *, world_size: int
) -> Iterator[Violation]:
    """With context parallelism as the only degree and `dp_shard = -1`, a world size above cp fails when
    the job builds its mesh.

    `dp_shard = -1` resolves to world size / cp, which passes the loader's product check; but the mesh has
    no cp dimension, so it covers only world size / cp ranks and the others fall outside it (reference
    §3.2, §7 row 2). At world size = cp the job runs as plain data parallelism (`cp-becomes-data-parallel`).
    """
    if cp > 1 and dp_shard == -1 and max(dp_replicate, tp, pp, ep) == 1 and world_size > cp:
        yield Violation(
            f"distributed.cp = {cp} at world size {world_size}: distributed.dp_shard = -1 resolves to "
            f"{world_size // cp}, but KempnerForge does not wire context parallelism (its device mesh has no cp "
            f"dimension), so the mesh covers only {world_size // cp} of the {world_size} ranks and the job fails "
            "when it builds the mesh; set distributed.cp = 1",
            at=("distributed", "cp"),
            related=(("distributed", "dp_shard"),),
        )


@rule("pp-exceeds-layers", "error", "distributed.pp", "model.n_layers", at_launch=True)
def pp_exceeds_layers(pp: int, n_layers: int) -> Iterator[Violation]:
    """Each pipeline stage needs at least one layer: KempnerForge's layer split raises when pp > n_layers."""
    if pp > n_layers:
        yield Violation(
            f"distributed.pp = {pp} exceeds model.n_layers = {n_layers}: every pipeline stage needs a layer "
            f"(KempnerForge raises when it splits the model); use distributed.pp <= {n_layers}",
            at=("distributed", "pp"),
        )


@rule("pp-schedule-interleaved", "error", "distributed.pp_schedule", "distributed.pp", at_launch=True)
def pp_schedule_interleaved(schedule: str, pp: int) -> Iterator[str]:
    """The interleaved 1F1B schedule needs several stages per rank; KempnerForge builds one, so it always fails."""
    if pp > 1 and schedule == "interleaved_1f1b":
        yield (
            f'distributed.pp_schedule = "interleaved_1f1b" with distributed.pp = {pp}: KempnerForge gives the '
            'schedule one stage per rank, and it raises; use "1f1b" or "gpipe"'
        )


@rule(
    "pp-1f1b-microbatches",
    "error",
    "train.grad_accum_steps",
    "distributed.pp",
    "distributed.pp_schedule",
    at_launch=True,
)
def pp_1f1b_microbatches(accum: int, pp: int, schedule: str) -> Iterator[Violation]:
    """The 1F1B schedule needs at least as many micro-batches as stages; they are train.grad_accum_steps."""
    if pp > 1 and schedule == "1f1b" and accum < pp:
        yield Violation(
            f"train.grad_accum_steps = {accum} gives {accum} micro-batch(es) for distributed.pp = {pp} stages: "
            f'the 1F1B schedule needs at least {pp}; raise train.grad_accum_steps or use "gpipe"',
            related=(("train", "grad_accum_steps"), ("distributed", "pp")),
        )


_STAGE_FSDP = (
    "KempnerForge's FSDP wrapping of a pipeline stage (apply_fsdp2 → _fsdp_wrap_transformer_blocks) reads "
    "cross_attention_layers, which its PipelineStageModule lacks, so the job fails with an AttributeError when "
    "it builds the pipeline"
)


def _data_parallel_beside(dp_replicate: int, dp_shard: int, tp: int, ep: int) -> dict[str, int]:
    """The degrees that give the mesh a data-parallel dimension (tp or ep adds a size-1 dp_shard, §3.1)."""
    named = {"dp_shard": dp_shard, "dp_replicate": dp_replicate, "tp": tp, "ep": ep}
    return {name: value for name, value in named.items() if value > 1}


@rule(
    "pp-stage-fsdp",
    "error",
    "distributed.pp",
    "distributed.dp_replicate",
    "distributed.dp_shard",
    "distributed.tp",
    "distributed.ep",
    at_launch=True,
)
def pp_stage_fsdp(pp: int, dp_replicate: int, dp_shard: int, tp: int, ep: int) -> Iterator[Violation]:
    """A pipeline stage cannot be FSDP-wrapped: pipeline parallelism builds only as the whole mesh.

    Any data-parallel dimension in the mesh (dp_shard or dp_replicate above 1, or tp or ep, which add a
    size-1 dp_shard dimension) makes the trainer FSDP-wrap the stage, and that fails on an attribute the
    stage module lacks (reference kempnerforge-build §7 row 21); a mesh of pipeline stages alone builds.
    """
    beside = _data_parallel_beside(dp_replicate, dp_shard, tp, ep)
    if pp > 1 and beside:
        yield Violation(
            f"distributed.pp = {pp} with {', '.join(f'distributed.{n} = {v}' for n, v in beside.items())}: "
            f"{_STAGE_FSDP}; pipeline parallelism builds only alone (every other degree 1, the world size = "
            "distributed.pp)",
            at=("distributed", "pp"),
            related=tuple(("distributed", name) for name in beside),
        )


@rule("pp-stage-fsdp-auto-shard", "error", "distributed.pp", *_OTHER_DEGREES[:3], "distributed.cp", "distributed.ep")
def pp_stage_fsdp_auto_shard(
    pp: int, dp_replicate: int, dp_shard: int, tp: int, cp: int, ep: int, *, world_size: int
) -> Iterator[Violation]:
    """With `dp_shard = -1`, pipeline parallelism fails at a world size that leaves dp_shard above 1.

    The resolved dp_shard gives the mesh a data-parallel dimension, and FSDP wrapping of the pipeline stage
    fails as `pp-stage-fsdp` says (reference kempnerforge-build §3.1, §7 row 21).
    """
    rest = dp_replicate * tp * pp * cp * ep
    if pp <= 1 or dp_shard != -1 or cp > 1 or world_size % rest or world_size // rest <= 1:
        return
    if _data_parallel_beside(dp_replicate, 1, tp, ep):
        return  # pp-stage-fsdp says it already
    yield Violation(
        f"distributed.pp = {pp} at world size {world_size}: distributed.dp_shard = -1 resolves to "
        f"{world_size // rest}, and {_STAGE_FSDP}; set distributed.dp_shard = 1 and run at world size "
        f"{rest}, or use distributed.pp = 1",
        at=("distributed", "pp"),
        related=(("distributed", "dp_shard"),),
    )


# -- model build ---------------------------------------------------------------------------------


@rule(
    "vlm-tp-sequence-parallel",
    "error",
    "distributed.tp",
    "vlm.arch",
    "model.tie_embeddings",
    "model.num_experts",
    at_launch=True,
)
def vlm_tp_sequence_parallel(tp: int, arch: str | None, tied: bool, num_experts: int) -> Iterator[Violation]:
    """A VLM under tensor parallelism with sequence parallelism fails: MoT when the model is built, the other
    arches at the first step.

    Sequence parallelism is on whenever the embeddings are untied and the model is not MoE (reference §3.5);
    the image prefix or the cross-attention inputs then mix plain tensors with sequence-sharded ones.
    """
    if arch is not None and tp > 1 and not tied and num_experts <= 0:
        when = "when the model is built" if arch == "mot" else "at the first step"
        yield Violation(
            f'distributed.tp = {tp} with vlm.arch = "{arch}": tensor parallelism runs with sequence parallelism '
            f"here (untied embeddings, no MoE), which KempnerForge's VLM path does not support; it fails {when}. "
            "Use distributed.tp = 1 (FSDP only)",
            at=("distributed", "tp"),
        )


@rule("hf-encoder-needs-path", "error", "vision_encoder.type", "vision_encoder.path", "vlm", at_launch=True)
def hf_encoder_needs_path(kind: str | None, path: str, vlm: Any) -> Iterator[Violation]:
    """SigLIP2 and CLIP encoders load a Hugging Face model from vision_encoder.path when the model is built."""
    if vlm is not None and kind in HF_ENCODERS and not path:
        yield Violation(
            f'vision_encoder.type = "{kind}" loads a Hugging Face model, but vision_encoder.path is empty; '
            'set it (for example "google/siglip2-base-patch16-224")',
            at=("vision_encoder", "path"),
            related=(("vision_encoder", "type"),),
        )


@rule(
    "vlm-random-encoder-budget",
    "error",
    "model.max_seq_len",
    "vision_encoder.type",
    "vision_encoder.num_tokens",
    "adapter.type",
    "adapter.pool_window",
    "video.max_frames",
    "vlm.max_text_len",
    "vlm.arch",
    at_launch=True,
)
def random_encoder_budget(
    max_seq_len: int,
    encoder: str | None,
    num_tokens: int | None,
    adapter_type: str | None,
    window: int | None,
    frames: int | None,
    max_text_len: int | None,
    arch: str | None,
) -> Iterator[Violation]:
    """With `vision_encoder.num_tokens = 0` the random encoder gives 16 tokens, and the model must hold them.

    The config-time budget rules skip a token count of 0 (the encoder decides it); KempnerForge checks the
    model's positions again when it builds the VLM (reference §7), and the random encoder's count is known.
    """
    if arch in (None, "cross_attention") or encoder != "random" or num_tokens != 0 or max_text_len is None:
        return
    per_frame = tokens_per_frame(adapter_type, window, RANDOM_ENCODER_TOKENS)
    if per_frame is None:
        return  # a pool window that does not divide the 4×4 grid: the adapter fails first
    visual = (frames or 1) * per_frame
    if max_seq_len < visual + max_text_len:
        yield Violation(
            f"model.max_seq_len = {max_seq_len} is too small for this VLM: the random encoder gives "
            f"{RANDOM_ENCODER_TOKENS} tokens (vision_encoder.num_tokens = 0), {visual} visual tokens in the residual "
            f"stream + vlm.max_text_len = {max_text_len} = {visual + max_text_len}; KempnerForge raises when it "
            "builds the model",
            related=(("model", "max_seq_len"), ("vision_encoder", "num_tokens"), ("vlm", "max_text_len")),
        )


@rule("vlm-freeze-module-alias", "error", "vlm.freeze", "vlm.freeze_schedule", "vlm.module_patterns", at_launch=True)
def freeze_module_alias(freeze: Any, schedule: Any, patterns: Any) -> Iterator[Violation]:
    """Freeze specs must name a module alias of vlm.module_patterns.

    A raw pattern works when the model is built, but every VLM step checks the specs against the aliases
    for its checkpoint metadata, and raises after the first step (reference §7).
    """
    aliases = set(patterns) if isinstance(patterns, Mapping) else set()
    for where, spec in _specs(freeze, schedule):
        module = spec.get("module")
        if isinstance(module, str) and module not in aliases:
            at = (*where, "module")
            yield Violation(
                f'{format_path(at)} = "{module}" is not a module alias ({", ".join(sorted(aliases))}): KempnerForge '
                "freezes by it when it builds the model, then raises after the first step; add it to "
                "vlm.module_patterns or use an alias",
                at=at,
                related=(where[:2], ("vlm", "module_patterns")),
            )


def _specs(freeze: Any, schedule: Any) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each freeze spec with where it is written."""
    for i, spec in enumerate(freeze or []):
        if isinstance(spec, dict):
            yield ("vlm", "freeze", i), spec
    for i, stage in enumerate(schedule or []):
        for j, spec in enumerate(stage.get("specs") or [] if isinstance(stage, dict) else []):
            if isinstance(spec, dict):
                yield ("vlm", "freeze_schedule", i, "specs", j), spec


@rule(
    "fp8-dims-multiple-of-16",
    "warning",
    "train.mixed_precision",
    "model.dim",
    "model.vocab_size",
    "model.ffn_hidden_dim",
    "model.ffn_dim_multiplier",
    at_launch=True,
)
def fp8_dims(precision: str, dim: int, vocab: int, ffn: int | None, multiplier: float) -> Iterator[Violation]:
    """FP8 matmuls need every dimension divisible by 16; KempnerForge converts the output head and every
    other Linear without checking.

    A width that is not (a vocabulary of 50257, for example) is expected to fail at the first FP8 matmul
    (reference §3.9; not verified on a GPU).
    """
    if precision != "fp8":
        return
    widths = {"model.dim": dim, "model.vocab_size": vocab}
    with suppress(OverflowError, ValueError):  # a multiplier past a float's range: reported elsewhere
        widths["the FFN width"] = ffn_hidden({"dim": dim, "ffn_hidden_dim": ffn, "ffn_dim_multiplier": multiplier})
    odd = [f"{name} = {show(n)}" for name, n in widths.items() if n % 16]
    if odd:
        named = [("model", key) for key, n in (("dim", dim), ("vocab_size", vocab)) if n % 16]
        yield Violation(
            f'train.mixed_precision = "fp8" converts Linears whose dimensions must be divisible by 16, but '
            f"{', '.join(odd)} is not; expect the first FP8 matmul to fail (pad it to a multiple of 16)",
            related=(("train", "mixed_precision"), *named),
        )


# -- what silently does nothing ------------------------------------------------------------------


@rule("mot-ac-no-effect", "warning", "train.activation_checkpointing", "vlm.arch", at_launch=True)
def mot_ac_no_effect(mode: str, arch: str | None) -> Iterator[Violation]:
    """Activation checkpointing does nothing for MoT: KempnerForge wraps TransformerBlocks and Attention
    modules, and MoT blocks are neither."""
    if arch == "mot" and mode != "none":
        yield Violation(
            f'train.activation_checkpointing = "{mode}" with vlm.arch = "mot" has no effect (MoT blocks are not '
            'checkpointed), so no memory is saved; set it to "none", or plan memory without it',
            at=("train", "activation_checkpointing"),
        )


@rule("moe-shared-experts-one", "warning", "model.moe_shared_experts", "model.num_experts", at_launch=True)
def shared_experts_one(shared: int, num_experts: int) -> Iterator[Violation]:
    """KempnerForge builds one shared expert whenever model.moe_shared_experts > 0, whatever the count."""
    if num_experts > 0 and shared > 1:
        yield Violation(
            f"model.moe_shared_experts = {shared} builds one shared expert, not {shared} (KempnerForge builds a "
            "single one for any count above 0); set it to 1",
            related=(),
        )


@rule("vlm-unfreeze-never-updated", "warning", "vlm.freeze_schedule", "vlm.freeze", "vlm", at_launch=True)
def unfreeze_never_updated(schedule: Any, freeze: Any, vlm: Any) -> Iterator[Violation]:
    """A module frozen when the model is built never gets optimizer state, so unfreezing it later does not train it.

    The optimizer is built once, from the parameters trainable at build; a freeze stage that unfreezes a
    module frozen by vlm.freeze gives it gradients (memory) but no update.
    """
    if vlm is None:
        return
    frozen_at_build: dict[str, bool] = {}
    for _, spec in _specs(freeze, None):
        if isinstance(spec.get("module"), str):
            frozen_at_build[spec["module"]] = bool(spec.get("frozen", True))
    for where, spec in _specs(None, schedule):
        module = spec.get("module")
        if spec.get("frozen", True) is False and isinstance(module, str) and frozen_at_build.get(module):
            yield Violation(
                f'{format_path(where)} unfreezes "{module}", which vlm.freeze freezes when the model is built: the '
                "optimizer holds no state for it, so it gets gradients but is never updated; leave it unfrozen in "
                "vlm.freeze and freeze it in an earlier stage instead",
                at=(*where, "frozen"),
            )


RULES = (
    cp_not_wired,
    cp_becomes_data_parallel,
    cp_mesh_smaller_than_world,
    pp_exceeds_layers,
    pp_schedule_interleaved,
    pp_1f1b_microbatches,
    pp_stage_fsdp,
    pp_stage_fsdp_auto_shard,
    vlm_tp_sequence_parallel,
    hf_encoder_needs_path,
    random_encoder_budget,
    freeze_module_alias,
    fp8_dims,
    mot_ac_no_effect,
    shared_experts_one,
    unfreeze_never_updated,
)


@rule(
    "adapter-pool-heads-divide-width",
    "error",
    "adapter.pool_heads",
    "adapter.type",
    "vision_encoder.feature_dim",
    "vision_encoder.type",
    "vlm",
    at_launch=True,
)
def pool_heads_divide_width(heads: int, kind: str, feature_dim: int, encoder: str, vlm: Any) -> Iterator[Violation]:
    """attentional_pool splits the encoder's width into adapter.pool_heads heads, so they must divide it."""
    width = feature_dim or (RANDOM_ENCODER_WIDTH if encoder == "random" else 0)
    if vlm is not None and kind == "attentional_pool" and width > 0 and heads > 0 and width % heads:
        yield Violation(
            f"adapter.pool_heads = {heads} does not divide the encoder width {width} (vision_encoder.feature_dim"
            f"{'' if feature_dim else ' = 0: the random encoder reports 768'}); attentional_pool raises when "
            "the model is built",
            at=("adapter", "pool_heads"),
            related=(("vision_encoder", "feature_dim"),),
        )
