"""Examples of the build-time rules (`rules_build.py`): a config that breaks each, and the fix."""

from __future__ import annotations

from trainspec.spec.codes import GPU_MEMORY_EXCEEDED
from trainspec.spec.examples import Example, Run

from .examples import VLM, _pair

SMALL = "[model]\ndim = 256\nn_layers = 4\nn_heads = 4\nn_kv_heads = 4\n\n"
PIPELINE = SMALL + "[train]\ngrad_accum_steps = 4\n\n[distributed]\n"
PAIRED = VLM.replace("[data]", "[model]\nn_heads = 32\nn_kv_heads = 8\n\n[data]")

EXAMPLES: dict[str, Example] = {
    GPU_MEMORY_EXCEEDED.id: Example(
        "[train]\nbatch_size = 2\n",
        '[train]\nbatch_size = 2\nactivation_checkpointing = "full"\n',
        run=Run(world_sizes=(8,), gpu_memory="24GiB"),
    ),
    "cp-not-wired": _pair("[distributed]\ndp_shard = 4\ncp = 2\n", "[distributed]\ndp_shard = 8\ncp = 1\n", 8),
    "cp-becomes-data-parallel": _pair("[distributed]\ncp = 8\n", "[distributed]\ncp = 1\n"),
    # every config that breaks it also gets cp-becomes-data-parallel (what it does at world size = cp), at cp
    "cp-mesh-smaller-than-world": _pair(
        "[distributed]\ncp = 2  # trainspec: ignore[cp-becomes-data-parallel]\n", "[distributed]\ncp = 1\n", 16
    ),
    "pp-exceeds-layers": _pair(
        PIPELINE.replace("grad_accum_steps = 4", "grad_accum_steps = 8") + "pp = 8\n", PIPELINE + "pp = 4\n"
    ),
    "pp-schedule-interleaved": _pair(
        PIPELINE + 'pp = 2\npp_schedule = "interleaved_1f1b"\n', PIPELINE + 'pp = 2\npp_schedule = "1f1b"\n'
    ),
    "pp-1f1b-microbatches": _pair(
        SMALL + "[train]\ngrad_accum_steps = 2\n\n[distributed]\npp = 4\n",
        SMALL + "[train]\ngrad_accum_steps = 4\n\n[distributed]\npp = 4\n",
    ),
    "pp-stage-fsdp": _pair(PIPELINE + "pp = 2\ntp = 2\n", PIPELINE + "pp = 2\ndp_shard = 1\n"),
    "pp-stage-fsdp-auto-shard": _pair(PIPELINE + "pp = 2\n", PIPELINE + "pp = 4\n", 4),
    "vlm-tp-sequence-parallel": _pair(PAIRED + "[vlm]\n\n[distributed]\ntp = 2\n", PAIRED + "[vlm]\n"),
    "hf-encoder-needs-path": _pair(
        VLM.replace('"random"', '"siglip2"').replace("feature_dim = 64\nnum_tokens = 16\n", "") + "[vlm]\n",
        VLM.replace('"random"', '"siglip2"\npath = "google/siglip2-base-patch16-224"').replace(
            "feature_dim = 64\nnum_tokens = 16\n", ""
        )
        + "[vlm]\n",
    ),
    "vlm-random-encoder-budget": _pair(
        VLM.replace("num_tokens = 16", "num_tokens = 0")
        + "[vlm]\n\n[model]\nmax_seq_len = 512\n\n[train]\nseq_len = 512\n",
        VLM.replace("num_tokens = 16", "num_tokens = 0")
        + "[vlm]\n\n[model]\nmax_seq_len = 528\n\n[train]\nseq_len = 512\n",
    ),
    "vlm-freeze-module-alias": _pair(
        VLM + '[vlm]\nfreeze = [{module = "vision_encoder.*"}]\n',
        VLM + '[vlm]\nfreeze = [{module = "vision_encoder"}]\n',
    ),
    "fp8-dims-multiple-of-16": _pair(
        '[model]\nvocab_size = 50257\n\n[train]\nmixed_precision = "fp8"\n',
        '[model]\nvocab_size = 50304\n\n[train]\nmixed_precision = "fp8"\n',
    ),
    "mot-ac-no-effect": _pair(
        VLM.replace("[data]", '[train]\nactivation_checkpointing = "full"\n\n[data]') + '[vlm]\narch = "mot"\n',
        VLM + '[vlm]\narch = "mot"\n',
    ),
    "moe-shared-experts-one": _pair(
        "[model]\nnum_experts = 8\nmoe_shared_experts = 2\n\n[train]\ncompile_model = false\n",
        "[model]\nnum_experts = 8\nmoe_shared_experts = 1\n\n[train]\ncompile_model = false\n",
    ),
    "vlm-unfreeze-never-updated": _pair(
        VLM + '[vlm]\n\n[[vlm.freeze_schedule]]\nstart_step = 100\nspecs = [{module = "vision_encoder", '
        "frozen = false}]\n",
        VLM + '[vlm]\nfreeze = [{module = "vision_encoder", frozen = false}]\n\n[[vlm.freeze_schedule]]\n'
        'start_step = 0\nspecs = [{module = "vision_encoder"}]\n\n[[vlm.freeze_schedule]]\nstart_step = 100\n'
        'specs = [{module = "vision_encoder", frozen = false}]\n',
    ),
}

EXAMPLES_5666D0D: dict[str, Example] = {
    "adapter-pool-heads-divide-width": _pair(
        VLM.replace("num_tokens = 16", "num_tokens = 196")
        + '[adapter]\ntype = "attentional_pool"\npool_heads = 24\n\n[vlm]\n',
        VLM.replace("num_tokens = 16", "num_tokens = 196")
        + '[adapter]\ntype = "attentional_pool"\npool_heads = 16\n\n[vlm]\n',
    ),
}
