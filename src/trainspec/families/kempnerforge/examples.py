"""For each KempnerForge rule and schema id: a config that breaks it, and the fix.

`trainspec explain` and docs/reference/kempnerforge.md show these; a test runs
each one and checks that the bad config triggers its rule and the fix is clean.
"""

from __future__ import annotations

from trainspec.spec.codes import (
    FILE_NOT_FOUND,
    FILE_NOT_READABLE,
    INVALID_DIRECTIVE,
    INVALID_VALUE,
    MISSING_KEY,
    NON_FINITE_NUMBER,
    NOT_ALLOWED_VALUE,
    OUT_OF_RANGE,
    OVERRIDE_INVALID_VALUE,
    OVERRIDE_REPAIRS_FILE,
    OVERRIDE_SYNTAX,
    OVERRIDE_UNKNOWN_PATH,
    SYNTAX_ERROR,
    UNKNOWN_FAMILY,
    UNKNOWN_KEY,
    UNUSED_SUPPRESSION,
    WORLD_SIZE_CHECKED,
    WORLD_SIZE_UNKNOWN,
    WRONG_FORMAT,
    WRONG_TYPE,
)
from trainspec.spec.examples import Example, Run

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
        VLM + '[vlm]\n\n[[vlm.freeze_schedule]]\nstart_step = 500\nspecs = [{module = "adapter", '
        'frozen = false}]\n\n[[vlm.freeze_schedule]]\nstart_step = 100\nspecs = [{module = "adapter"}]\n',
        VLM + '[vlm]\n\n[[vlm.freeze_schedule]]\nstart_step = 100\nspecs = [{module = "adapter"}]\n\n'
        '[[vlm.freeze_schedule]]\nstart_step = 500\nspecs = [{module = "adapter", frozen = false}]\n',
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
        "[model]\ntie_embeddings = true\n\n[train]\ngrad_accum_steps = 2\n\n[distributed]\npp = 2\n",
        "[model]\ntie_embeddings = false\n\n[train]\ngrad_accum_steps = 2\n\n[distributed]\npp = 2\n",
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
    "moe-no-pp": _pair(
        MOE.replace("compile_model = false\n", "compile_model = false\ngrad_accum_steps = 2\n")
        + "\n[distributed]\npp = 2\n",
        MOE + "\n[distributed]\nep = 2\n",
    ),
    "ep-needs-moe": _pair("[distributed]\nep = 2\n", MOE + "\n[distributed]\nep = 2\n"),
    "ep-divides-experts": _pair(MOE + "\n[distributed]\nep = 3\n", MOE + "\n[distributed]\nep = 4\n"),
    "vlm-train-seq-len-budget": _pair(
        VLM256 + "[vlm]\nmax_text_len = 512\n\n[train]\nseq_len = 700\n",
        VLM256 + "[vlm]\nmax_text_len = 512\n\n[train]\nseq_len = 768\n",
    ),
    "vlm-no-pp": _pair(
        VLM + "[train]\ngrad_accum_steps = 2\n\n[vlm]\n\n[distributed]\npp = 2\n",
        VLM + "[train]\ngrad_accum_steps = 2\n\n[vlm]\n\n[distributed]\npp = 1\n",
    ),
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

AS_KEMPNERFORGE = Run(family="kempnerforge")
DIM = "[model]\ndim = 4096\n"

# the engine's own ids, shown on KempnerForge configs
EXAMPLES.update(
    {
        OVERRIDE_REPAIRS_FILE.id: Example(
            "[model]\ndim = 4100\n", "[model]\ndim = 4096\n", run=Run(overrides=("model.dim=4096",))
        ),
        WORLD_SIZE_CHECKED.id: Example(
            "[distributed]\ndp_shard = -1\n",
            "[distributed]\ndp_shard = -1\n",
            run=Run(world_sizes=(2, 4)),
            fixed_run=Run(world_sizes=(4,)),
        ),
        SYNTAX_ERROR.id: Example("[model\ndim = 4096\n", "[model]\ndim = 4096\n"),
        WRONG_FORMAT.id: Example(
            '{"model": {"dim": 4096}}\n', "[model]\ndim = 4096\n", run=AS_KEMPNERFORGE, filename="example.json"
        ),
        INVALID_DIRECTIVE.id: Example(
            "# trainspec: world-size=eight\n[model]\ndim = 4096\n", "# trainspec: world-size=8\n[model]\ndim = 4096\n"
        ),
        FILE_NOT_FOUND.id: Example(None, "[model]\ndim = 4096\n"),
        FILE_NOT_READABLE.id: Example(None, "[model]\ndim = 4096\n", filename="x" * 300 + ".toml"),
        UNKNOWN_FAMILY.id: Example(
            "[trainer]\nmax_epochs = 3\n\n[callbacks]\nearly_stopping = true\n", "[train]\nmax_steps = 10\n"
        ),
        UNKNOWN_KEY.id: Example("[model]\nn_head = 32\n", "[model]\nn_heads = 32\n"),
        MISSING_KEY.id: Example(
            VLM + "[vlm]\n\n[[vlm.freeze]]\nfrozen = true\n",
            VLM + '[vlm]\n\n[[vlm.freeze]]\nmodule = "vision_encoder"\nfrozen = true\n',
        ),
        WRONG_TYPE.id: Example('[model]\ndim = "4096"\n', "[model]\ndim = 4096\n"),
        NOT_ALLOWED_VALUE.id: Example('[model]\nnorm_type = "batchnorm"\n', '[model]\nnorm_type = "rmsnorm"\n'),
        OUT_OF_RANGE.id: Example("[train]\nbatch_size = 0\n", "[train]\nbatch_size = 8\n"),
        INVALID_VALUE.id: Example(
            VLM + '[vlm]\narch = "mot"\nmot_modalities = ["image", "image"]\n',
            VLM + '[vlm]\narch = "mot"\nmot_modalities = ["image", "text"]\n',
        ),
        NON_FINITE_NUMBER.id: Example("[optimizer]\nlr = nan\n", "[optimizer]\nlr = 3e-4\n"),
        OVERRIDE_SYNTAX.id: Example(
            "[model]\ndim = 4096\n",
            "[model]\ndim = 4096\n",
            run=Run(overrides=("model.n_heads",)),
            fixed_run=Run(overrides=("model.n_heads=32",)),
        ),
        OVERRIDE_UNKNOWN_PATH.id: Example(
            "[model]\ndim = 4096\n",
            "[model]\ndim = 4096\n",
            run=Run(overrides=("model.n_haeds=32",)),
            fixed_run=Run(overrides=("model.n_heads=32",)),
        ),
        OVERRIDE_INVALID_VALUE.id: Example(
            "[model]\ndim = 4096\n",
            "[model]\ndim = 4096\n",
            run=Run(overrides=("model.n_heads=",)),
            fixed_run=Run(overrides=("model.n_heads=32",)),
        ),
        WORLD_SIZE_UNKNOWN.id: Example(
            "[distributed]\ndp_shard = -1\n", "[distributed]\ndp_shard = -1\n", fixed_run=Run(world_sizes=(8,))
        ),
        UNUSED_SUPPRESSION.id: Example(
            "[model]\ndim = 4096  # trainspec: ignore[tp-divides-heads]\n", "[model]\ndim = 4096\n"
        ),
    }
)

# -- kempnerforge@5666d0d: the examples of its new and changed ids (its version module folds them in) -

MOMA = VLM + '[train]\ncompile_model = false\n\n[vlm]\narch = "moma"\n'
VIDEO = VLM + "[vlm]\nmax_text_len = 64\n\n[video]\n"
VLM196 = VLM.replace("num_tokens = 16", "num_tokens = 196")
POOLED_VIDEO = (
    VLM196 + '[adapter]\ntype = "avgpool"\npool_window = 2\n\n[vlm]\nmax_text_len = 64\n\n[video]\nmax_frames = 8\n'
)
"""196 tokens pooled to 49 per frame, 8 frames: 392 visual tokens + 64 text = 456 (reference §7)."""
WINDOW = "[checkpoint]\ninterval = 1000\n\n[checkpoint.dyn_ckpt_window]\n"

EXAMPLES_5666D0D: dict[str, Example] = {
    # rules
    "checkpoint-dyn-window-range": _pair(WINDOW + "start = 100\nstop = 50\n", WINDOW + "start = 100\nstop = 612\n"),
    "vlm-moma-experts-missing-modality": _pair(
        MOMA + "\n[vlm.moma_experts_per_modality]\nimage = 2\n",
        MOMA + "\n[vlm.moma_experts_per_modality]\nimage = 2\ntext = 4\n",
    ),
    "vlm-moma-experts-unknown-modality": _pair(
        MOMA + "\n[vlm.moma_experts_per_modality]\nimage = 4\ntext = 4\naudio = 2\n",
        MOMA + 'moma_modalities = ["image", "text", "audio"]\n\n'
        "[vlm.moma_experts_per_modality]\nimage = 4\ntext = 4\naudio = 2\n",
    ),
    "video-frames-order": _pair(VIDEO + "max_frames = 2\n", VIDEO + "max_frames = 2\nmin_frames = 2\n"),
    "adapter-pool-square-grid": _pair(
        VLM.replace("num_tokens = 16", "num_tokens = 197") + '[adapter]\ntype = "avgpool"\n\n[vlm]\n',
        VLM196 + '[adapter]\ntype = "avgpool"\n\n[vlm]\n',
    ),
    "adapter-pool-divisible-grid": _pair(
        VLM196 + '[adapter]\ntype = "attentional_pool"\npool_window = 3\n\n[vlm]\n',
        VLM196 + '[adapter]\ntype = "attentional_pool"\npool_window = 2\n\n[vlm]\n',
    ),
    "moma-no-moe": _pair(MOMA + "\n[model]\nnum_experts = 8\n", MOMA + "\n[model]\nnum_experts = 0\n"),
    # ep > 1 also needs an MoE model (ep-needs-moe, at ep), which MoMa cannot have (moma-no-moe)
    "moma-no-ep": _pair(
        MOMA + "\n[distributed]\nep = 2  # trainspec: ignore[ep-needs-moe]\n", MOMA + "\n[distributed]\nep = 1\n"
    ),
    "moma-compile": _pair(
        VLM + '[vlm]\narch = "moma"\n\n[train]\ncompile_model = true\n',
        VLM + '[vlm]\narch = "moma"\n\n[train]\ncompile_model = false\n',
    ),
    "moma-ac-full": _pair(
        MOMA.replace("compile_model = false\n", 'compile_model = false\nactivation_checkpointing = "full"\n'),
        MOMA.replace("compile_model = false\n", 'compile_model = false\nactivation_checkpointing = "selective"\n'),
    ),
    "moma-expert-ffn-multiplier": _pair(
        MOMA + "\n[model]\nmoe_expert_ffn_multiplier = 0.0\n", MOMA + "\n[model]\nmoe_expert_ffn_multiplier = 0.5\n"
    ),
    # schema ids
    "checkpoint-dyn-window-strategy-registered": _pair(
        WINDOW + 'strategy = "linear"\n', WINDOW + 'strategy = "power2"\n'
    ),
    "moma-modalities-shape": _pair(
        MOMA + 'moma_modalities = ["image", "video"]\n', MOMA + 'moma_modalities = ["image", "text"]\n'
    ),
    "video-needs-vlm": _pair("[video]\nmax_frames = 8\n", VIDEO + "max_frames = 8\n"),
    "video-dataset-type-registered": _pair(VIDEO + 'dataset_type = "kinetics"\n', VIDEO + 'dataset_type = "webvid"\n'),
    "video-sampling-policy-registered": _pair(
        VIDEO + 'sampling_policy = "random"\n', VIDEO + 'sampling_policy = "uniform"\n'
    ),
}
"""The ids kempnerforge@5666d0d adds."""

CHANGED_5666D0D: dict[str, Example] = {
    "vlm-max-seq-len-budget": _pair(
        POOLED_VIDEO + "\n[model]\nmax_seq_len = 400\n\n[train]\nseq_len = 400\n",
        POOLED_VIDEO + "\n[model]\nmax_seq_len = 456\n\n[train]\nseq_len = 456\n",
    ),
    "vlm-train-seq-len-budget": _pair(
        POOLED_VIDEO + "\n[model]\nmax_seq_len = 576\n\n[train]\nseq_len = 400\n",
        POOLED_VIDEO + "\n[model]\nmax_seq_len = 576\n\n[train]\nseq_len = 576\n",
    ),
}
"""The examples kempnerforge@5666d0d replaces: its budgets count frames and pooling."""
