"""For each KempnerForge rule and schema id: a config that breaks it, and the fix.

`trainspec explain` and docs/reference/kempnerforge.md show these; a test runs
each one and checks that the bad config triggers its rule and the fix is clean.
"""

from __future__ import annotations

from ...examples import Example, Run

VLM = """[vision_encoder]
type = "random"
feature_dim = 64
num_tokens = 16

[data]
hf_dataset_name = "coco"
tokenizer_path = "gpt2"

"""
VLM256 = VLM.replace("num_tokens = 16", "num_tokens = 256")
MOE = "[model]\nnum_experts = 8\nmoe_top_k = 2\n\n[train]\ncompile_model = false\n"


def _pair(bad: str, good: str, world_size: int | None = None) -> Example:
    return Example(bad, good, run=Run(world_sizes=(world_size,) if world_size else ()))


EXAMPLES: dict[str, Example] = {
    # rules
    "model-heads-divide-dim": _pair(
        "[model]\ndim = 4100\nn_heads = 32\nn_kv_heads = 8\n", "[model]\ndim = 4096\nn_heads = 32\nn_kv_heads = 8\n"
    ),
    "model-kv-heads-divide-heads": _pair(
        "[model]\nn_heads = 32\nn_kv_heads = 6\n", "[model]\nn_heads = 32\nn_kv_heads = 8\n"
    ),
    "model-moe-top-k-le-experts": _pair(MOE.replace("moe_top_k = 2", "moe_top_k = 12"), MOE),
    "data-phases-increasing": _pair(
        "[[data.phases]]\nstart_step = 1000\n\n[[data.phases]]\nstart_step = 1000\n",
        "[[data.phases]]\nstart_step = 1000\n\n[[data.phases]]\nstart_step = 5000\n",
    ),
    "profiling-window": _pair(
        "[profiling]\nstart_step = 10\nend_step = 10\n", "[profiling]\nstart_step = 10\nend_step = 15\n"
    ),
    "vlm-freeze-schedule-increasing": _pair(
        VLM + '[vlm]\n\n[[vlm.freeze_schedule]]\nstart_step = 500\nspecs = [{module = "vision_encoder", '
        'frozen = false}]\n\n[[vlm.freeze_schedule]]\nstart_step = 100\nspecs = [{module = "adapter"}]\n',
        VLM + '[vlm]\n\n[[vlm.freeze_schedule]]\nstart_step = 100\nspecs = [{module = "adapter"}]\n\n'
        '[[vlm.freeze_schedule]]\nstart_step = 500\nspecs = [{module = "vision_encoder", frozen = false}]\n',
    ),
    "vlm-hf-encoder-override": _pair(
        VLM.replace('"random"', '"siglip2"\npath = "google/siglip2-base-patch16-224"') + "[vlm]\n",
        VLM.replace('"random"', '"siglip2"\npath = "google/siglip2-base-patch16-224"').replace(
            "feature_dim = 64\nnum_tokens = 16\n", ""
        )
        + "[vlm]\n",
    ),
    "vlm-max-seq-len-budget": _pair(
        VLM256 + "[vlm]\nmax_text_len = 512\n\n[model]\nmax_seq_len = 700\n\n[train]\nseq_len = 700\n",
        VLM256 + "[vlm]\nmax_text_len = 512\n\n[model]\nmax_seq_len = 768\n\n[train]\nseq_len = 768\n",
    ),
    "world-size-auto-shard-divisible": _pair(
        "[distributed]\ndp_shard = -1\ntp = 4\n", "[distributed]\ndp_shard = -1\ntp = 2\n", 6
    ),
    "world-size-product": _pair("[distributed]\ndp_shard = 2\ntp = 2\n", "[distributed]\ndp_shard = -1\ntp = 2\n", 8),
    "seq-len-within-max": _pair(
        "[model]\nmax_seq_len = 2048\n\n[train]\nseq_len = 4096\n",
        "[model]\nmax_seq_len = 4096\n\n[train]\nseq_len = 4096\n",
    ),
    "tied-embeddings-no-pp": _pair(
        "[model]\ntie_embeddings = true\n\n[distributed]\npp = 2\n",
        "[model]\ntie_embeddings = false\n\n[distributed]\npp = 2\n",
    ),
    "eval-needs-source": _pair(
        "[eval]\nenabled = true\n",
        '[eval]\nenabled = true\nhf_dataset_name = "wikitext"\n\n[data]\ntokenizer_path = "gpt2"\n',
    ),
    "moe-compile": _pair(
        "[model]\nnum_experts = 8\n\n[train]\ncompile_model = true\n",
        "[model]\nnum_experts = 8\n\n[train]\ncompile_model = false\n",
    ),
    "tp-divides-heads": _pair(
        "[model]\nn_heads = 32\nn_kv_heads = 8\n\n[distributed]\ntp = 3\n",
        "[model]\nn_heads = 32\nn_kv_heads = 8\n\n[distributed]\ntp = 4\n",
    ),
    "tp-divides-kv-heads": _pair(
        "[model]\nn_heads = 32\nn_kv_heads = 4\n\n[distributed]\ntp = 8\n",
        "[model]\nn_heads = 32\nn_kv_heads = 8\n\n[distributed]\ntp = 8\n",
    ),
    "fp8-no-tp": _pair(
        '[train]\nmixed_precision = "fp8"\n\n[distributed]\ntp = 2\n',
        '[train]\nmixed_precision = "fp8"\n\n[distributed]\ntp = 1\n',
    ),
    "moe-no-pp": _pair(MOE + "\n[distributed]\npp = 2\n", MOE + "\n[distributed]\nep = 2\n"),
    "ep-needs-moe": _pair("[distributed]\nep = 2\n", MOE + "\n[distributed]\nep = 2\n"),
    "ep-divides-experts": _pair(MOE + "\n[distributed]\nep = 3\n", MOE + "\n[distributed]\nep = 4\n"),
    "vlm-train-seq-len-budget": _pair(
        VLM256 + "[vlm]\nmax_text_len = 512\n\n[train]\nseq_len = 700\n",
        VLM256 + "[vlm]\nmax_text_len = 512\n\n[train]\nseq_len = 768\n",
    ),
    "vlm-no-pp": _pair(VLM + "[vlm]\n\n[distributed]\npp = 2\n", VLM + "[vlm]\n\n[distributed]\ntp = 2\n"),
    "vlm-needs-hf-data": _pair(VLM.replace('hf_dataset_name = "coco"\n', "") + "[vlm]\n", VLM + "[vlm]\n"),
    "hf-data-needs-tokenizer": _pair(
        '[data]\nhf_dataset_name = "wikitext"\n', '[data]\nhf_dataset_name = "wikitext"\ntokenizer_path = "gpt2"\n'
    ),
    "packing-needs-tokenizer": _pair(
        '[data]\ndataset_path = "/data/tokens"\npack_sequences = true\n',
        '[data]\ndataset_path = "/data/tokens"\npack_sequences = true\ntokenizer_path = "gpt2"\n',
    ),
    "mot-image-heads-match": _pair(
        VLM + '[vlm]\narch = "mot"\nmot_image_n_heads = 16\n', VLM + '[vlm]\narch = "mot"\nmot_image_n_heads = 0\n'
    ),
    "registry-name-known": _pair('[optimizer]\nname = "sgd"\n', '[optimizer]\nname = "adamw"\n'),
    "model-n-kv-heads-implicit": _pair(
        "[model]\ndim = 8192\nn_heads = 64\n", "[model]\ndim = 8192\nn_heads = 64\nn_kv_heads = 64\n"
    ),
    "vlm-section-without-vlm": _pair(
        '[vision_encoder]\ntype = "random"\n\n[model]\ndim = 4096\n', "[model]\ndim = 4096\n"
    ),
    "value-domain": _pair("[model]\nnorm_eps = 0.0\n", "[model]\nnorm_eps = 1e-5\n"),
    # schema ids
    "adapter-type-registered": _pair(
        VLM + '[adapter]\ntype = "mlp_3layer"\n\n[vlm]\n', VLM + '[adapter]\ntype = "mlp_2layer"\n\n[vlm]\n'
    ),
    "betas-range": _pair("[optimizer]\nbetas = [0.9, 1.0]\n", "[optimizer]\nbetas = [0.9, 0.95]\n"),
    "dataset-source-location": _pair(
        "[[data.datasets]]\nweight = 0.5\n", '[[data.datasets]]\npath = "/data/web"\nweight = 0.5\n'
    ),
    "dp-shard-domain": _pair("[distributed]\ndp_shard = 0\n", "[distributed]\ndp_shard = -1\n"),
    "moe-field-bounds": _pair(MOE.replace("moe_top_k = 2", "moe_top_k = 0"), MOE),
    "mot-warm-start-path": _pair(
        VLM + '[vlm]\narch = "mot"\nmot_warm_start_from_text = true\n',
        VLM + '[vlm]\narch = "mot"\nmot_warm_start_from_text = true\nmot_warm_start_path = "/ckpt/text_only.pt"\n',
    ),
    "phases-exclude-anneal": _pair(
        "[data]\nanneal_start_step = 9000\n\n[[data.phases]]\nstart_step = 5000\n",
        "[data]\nanneal_start_step = 0\n\n[[data.phases]]\nstart_step = 5000\n",
    ),
    "vision-encoder-type-registered": _pair(VLM.replace('"random"', '"dinov2"') + "[vlm]\n", VLM + "[vlm]\n"),
    "vlm-arch-fields": _pair(
        VLM + '[vlm]\narch = "joint_decoder"\ncross_attention_every_n_layers = 4\n',
        VLM + '[vlm]\narch = "cross_attention"\ncross_attention_every_n_layers = 4\n',
    ),
    "vlm-arch-registered": _pair(VLM + '[vlm]\narch = "perceiver"\n', VLM + '[vlm]\narch = "cross_attention"\n'),
    "vlm-needs-vision-encoder": _pair(
        '[data]\nhf_dataset_name = "coco"\ntokenizer_path = "gpt2"\n\n[vlm]\n', VLM + "[vlm]\n"
    ),
}

KF_YAML = Run(family="kempnerforge")
DIM = "[model]\ndim = 4096\n"

# the engine's own ids, shown on KempnerForge configs
EXAMPLES.update(
    {
        "override-repairs-file": Example(
            "[model]\ndim = 4100\n", "[model]\ndim = 4096\n", run=Run(overrides=("model.dim=4096",))
        ),
        "world-size-checked": Example(
            "[distributed]\ndp_shard = 2\n",
            "[distributed]\ndp_shard = 4\n",
            run=Run(world_sizes=(2, 4)),
            fixed_run=Run(world_sizes=(4,)),
        ),
        "syntax-error": Example("[model\ndim = 4096\n", "[model]\ndim = 4096\n"),
        "duplicate-key": Example("model:\n  dim: 4096\n  dim: 2048\n", "model:\n  dim: 4096\n", "yaml", KF_YAML),
        "unsupported-yaml": Example("model:\n  dim: !!python/int 4096\n", "model:\n  dim: 4096\n", "yaml", KF_YAML),
        "not-a-mapping": Example("- model\n- train\n", "model:\n  dim: 4096\n", "yaml", KF_YAML),
        "file-not-found": Example(None, "[model]\ndim = 4096\n"),
        "file-not-readable": Example(None, "[model]\ndim = 4096\n", filename="x" * 300 + ".toml"),
        "unknown-family": Example("[trainer]\nsteps = 10\n", "[train]\nmax_steps = 10\n"),
        "unknown-key": Example("[model]\nn_head = 32\n", "[model]\nn_heads = 32\n"),
        "missing-key": Example(
            VLM + "[vlm]\n\n[[vlm.freeze]]\nfrozen = true\n",
            VLM + '[vlm]\n\n[[vlm.freeze]]\nmodule = "vision_encoder"\nfrozen = true\n',
        ),
        "wrong-type": Example('[model]\ndim = "4096"\n', "[model]\ndim = 4096\n"),
        "not-allowed-value": Example('[model]\nnorm_type = "batchnorm"\n', '[model]\nnorm_type = "rmsnorm"\n'),
        "out-of-range": Example("[train]\nbatch_size = 0\n", "[train]\nbatch_size = 8\n"),
        "invalid-value": Example(
            VLM + '[vlm]\narch = "mot"\nmot_modalities = ["image", "image"]\n',
            VLM + '[vlm]\narch = "mot"\nmot_modalities = ["image", "text"]\n',
        ),
        "non-finite-number": Example("[optimizer]\nlr = nan\n", "[optimizer]\nlr = 3e-4\n"),
        "override-syntax": Example(
            "[model]\ndim = 4096\n",
            "[model]\ndim = 4096\n",
            run=Run(overrides=("model.n_heads",)),
            fixed_run=Run(overrides=("model.n_heads=32",)),
        ),
        "override-unknown-path": Example(
            "[model]\ndim = 4096\n",
            "[model]\ndim = 4096\n",
            run=Run(overrides=("model.n_haeds=32",)),
            fixed_run=Run(overrides=("model.n_heads=32",)),
        ),
        "override-invalid-value": Example(
            "[model]\ndim = 4096\n",
            "[model]\ndim = 4096\n",
            run=Run(overrides=("model.n_heads=",)),
            fixed_run=Run(overrides=("model.n_heads=32",)),
        ),
        "world-size-unknown": Example(
            "[distributed]\ndp_shard = -1\n", "[distributed]\ndp_shard = -1\n", fixed_run=Run(world_sizes=(8,))
        ),
        "unused-suppression": Example(
            "[model]\ndim = 4096  # trainspec: ignore[tp-divides-heads]\n", "[model]\ndim = 4096\n"
        ),
    }
)
