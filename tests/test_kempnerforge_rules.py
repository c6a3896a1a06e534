"""Every KempnerForge rule, broken on its own: id, severity and line."""

from __future__ import annotations

import pytest

import trainspec
from trainspec.api import check_config
from trainspec.families.kempnerforge.precision import device_checks
from trainspec.spec.device import Device

VLM = """
[vision_encoder]
type = "random"
feature_dim = 64
num_tokens = 16
[data]
hf_dataset_name = "coco"
tokenizer_path = "gpt2"
"""

ACCUM = "[train]\ngrad_accum_steps = 2\n"
"""Two micro-batches: enough for two pipeline stages under 1F1B (`pp-1f1b-microbatches`)."""

# (rule id, severity, config text, world size, line of the diagnostic, other rules that must fire with it)
CASES = [
    ("model-heads-divide-dim", "error", "[model]\ndim = 4100\n", None, 2, ()),
    ("model-kv-heads-divide-heads", "error", "[model]\nn_heads = 32\nn_kv_heads = 6\n", None, 3, ()),
    (
        "model-moe-top-k-le-experts",
        "error",
        "[model]\nnum_experts = 2\nmoe_top_k = 4\n[train]\ncompile_model = false\n",
        None,
        3,
        (),
    ),
    (
        "data-phases-increasing",
        "error",
        "[[data.phases]]\nstart_step = 10\n[[data.phases]]\nstart_step = 10\n",
        None,
        4,
        (),
    ),
    ("profiling-window", "error", "[profiling]\nstart_step = 8\nend_step = 8\n", None, 3, ()),
    (
        "vlm-freeze-schedule-increasing",
        "error",
        VLM
        + """[vlm]
[[vlm.freeze_schedule]]
start_step = 10
specs = [{module = "adapter", frozen = false}]
[[vlm.freeze_schedule]]
start_step = 3
specs = [{module = "adapter"}]
""",
        None,
        13,
        (),
    ),
    (
        "vlm-hf-encoder-override",
        "warning",
        VLM.replace('"random"', '"siglip2"\npath = "google/siglip2-base-patch16-224"') + "[vlm]\n",
        None,
        2,
        (),
    ),
    (
        "vlm-max-seq-len-budget",
        "error",
        VLM.replace("16", "256") + "[vlm]\n[model]\nmax_seq_len = 700\n[train]\nseq_len = 700\n",
        None,
        10,
        ("vlm-train-seq-len-budget",),
    ),
    ("world-size-auto-shard-divisible", "error", "[distributed]\ndp_shard = -1\ntp = 2\n", 3, 2, ()),
    ("world-size-product", "error", "[distributed]\ndp_shard = 2\ntp = 2\n", 8, 2, ()),
    ("seq-len-within-max", "error", "[train]\nseq_len = 4096\n", None, 2, ()),
    ("tied-embeddings-no-pp", "error", "[model]\ntie_embeddings = true\n[distributed]\npp = 2\n" + ACCUM, None, 2, ()),
    ("eval-needs-source", "error", "[eval]\nenabled = true\n", None, 2, ()),
    ("moe-compile", "warning", "[model]\nnum_experts = 4\n", None, 2, ()),
    (
        "tp-divides-heads",
        "error",
        "[model]\nn_heads = 32\nn_kv_heads = 32\n[distributed]\ntp = 3\n",
        None,
        5,
        (),
    ),
    (
        "tp-divides-kv-heads",
        "error",
        "[model]\ndim = 3072\nn_heads = 48\nn_kv_heads = 8\n[distributed]\ntp = 3\n",
        None,
        6,
        (),
    ),
    ("fp8-no-tp", "error", '[train]\nmixed_precision = "fp8"\n[distributed]\ntp = 2\n', None, 2, ()),
    (
        "moe-no-pp",
        "error",
        "[model]\nnum_experts = 4\n[train]\ncompile_model = false\ngrad_accum_steps = 2\n[distributed]\npp = 2\n",
        None,
        2,
        (),
    ),
    ("ep-needs-moe", "error", "[distributed]\nep = 2\n", None, 2, ()),
    (
        "ep-divides-experts",
        "error",
        "[model]\nnum_experts = 6\n[train]\ncompile_model = false\n[distributed]\nep = 4\n",
        None,
        6,
        (),
    ),
    ("vlm-train-seq-len-budget", "error", VLM.replace("16", "256") + "[vlm]\n[train]\nseq_len = 700\n", None, 10, ()),
    ("vlm-no-pp", "error", VLM + "[vlm]\n[distributed]\npp = 2\n" + ACCUM, None, 10, ()),
    ("vlm-needs-hf-data", "error", VLM.replace('hf_dataset_name = "coco"\n', "") + "[vlm]\n", None, 5, ()),
    ("hf-data-needs-tokenizer", "error", '[data]\nhf_dataset_name = "wikitext"\n', None, 2, ()),
    ("packing-needs-tokenizer", "error", '[data]\npack_sequences = true\ndataset_path = "/data/tok"\n', None, 2, ()),
    ("mot-image-heads-match", "error", VLM + '[vlm]\narch = "mot"\nmot_image_n_heads = 16\n', None, 10, ()),
    ("registry-name-known", "error", '[optimizer]\nname = "adam"\n', None, 2, ()),
    ("model-n-kv-heads-implicit", "warning", "[model]\ndim = 8192\nn_heads = 64\n", None, 3, ()),
    ("vlm-section-without-vlm", "warning", '[vision_encoder]\ntype = "random"\n', None, 1, ()),
    ("value-domain", "warning", "[model]\nnorm_eps = 0.0\n", None, 2, ()),
    # constraints the schema states, reported under the reference's names
    (
        "moe-field-bounds",
        "error",
        "[model]\nnum_experts = 4\nmoe_frequency = 0\n[train]\ncompile_model = false\n",
        None,
        3,
        (),
    ),
    ("dataset-source-location", "error", "[[data.datasets]]\nweight = 2.0\n", None, 1, ()),
    ("phases-exclude-anneal", "error", "[data]\nanneal_start_step = 5\n[[data.phases]]\nstart_step = 0\n", None, 2, ()),
    ("mot-warm-start-path", "error", VLM + '[vlm]\narch = "mot"\nmot_warm_start_from_text = true\n', None, 10, ()),
    ("vlm-arch-fields", "error", VLM + '[vlm]\narch = "mot"\ncross_attention_n_heads = 4\n', None, 10, ()),
    ("vlm-arch-registered", "error", VLM + '[vlm]\narch = "moma"\n', None, 9, ()),
    (
        "vlm-needs-vision-encoder",
        "error",
        '[data]\nhf_dataset_name = "coco"\ntokenizer_path = "gpt2"\n[vlm]\nmax_text_len = 64\n',
        None,
        4,
        (),
    ),
    ("dp-shard-domain", "error", "[distributed]\ndp_shard = 0\n", None, 2, ()),
    ("betas-range", "error", "[optimizer]\nbetas = [0.9, 1.0]\n", None, 2, ()),
    ("vision-encoder-type-registered", "error", VLM.replace('"random"', '"dino"') + "[vlm]\n", None, 2, ()),
    ("adapter-type-registered", "error", VLM + '[vlm]\n[adapter]\ntype = "avgpool"\n', None, 10, ()),
    # what fails only when the job builds its mesh, model or pipeline (kempnerforge-build reference §7)
    ("cp-not-wired", "error", "[distributed]\ndp_shard = 4\ncp = 2\n", 8, 3, ()),
    ("cp-becomes-data-parallel", "warning", "[distributed]\ncp = 4\n", 4, 2, ()),
    ("cp-mesh-smaller-than-world", "error", "[distributed]\ncp = 2\n", 16, 2, ("cp-becomes-data-parallel",)),
    (
        "pp-exceeds-layers",
        "error",
        "[model]\nn_layers = 4\n[distributed]\npp = 8\n" + "[train]\ngrad_accum_steps = 8\n",
        None,
        4,
        (),
    ),
    (
        "pp-schedule-interleaved",
        "error",
        '[distributed]\npp = 2\npp_schedule = "interleaved_1f1b"\n' + ACCUM,
        None,
        3,
        (),
    ),
    ("pp-1f1b-microbatches", "error", "[train]\ngrad_accum_steps = 3\n[distributed]\npp = 4\n", None, 2, ()),
    ("pp-stage-fsdp", "error", "[distributed]\npp = 2\ntp = 2\n" + ACCUM, None, 2, ()),
    ("pp-stage-fsdp-auto-shard", "error", "[distributed]\npp = 2\n" + ACCUM, 8, 2, ()),
    (
        "vlm-tp-sequence-parallel",
        "error",
        VLM + "[vlm]\n[distributed]\ntp = 2\n[model]\nn_kv_heads = 8\n",
        None,
        10,
        (),
    ),
    (
        "hf-encoder-needs-path",
        "error",
        VLM.replace('"random"', '"siglip2"').replace("feature_dim = 64\nnum_tokens = 16\n", "") + "[vlm]\n",
        None,
        1,
        (),
    ),
    (
        "vlm-random-encoder-budget",
        "error",
        VLM.replace("num_tokens = 16", "num_tokens = 0")
        + "[vlm]\n[model]\nmax_seq_len = 512\n[train]\nseq_len = 512\n",
        None,
        10,
        (),
    ),
    ("vlm-freeze-module-alias", "error", VLM + '[vlm]\nfreeze = [{module = "vision_encoder.*"}]\n', None, 9, ()),
    (
        "fp8-dims-multiple-of-16",
        "warning",
        '[train]\nmixed_precision = "fp8"\n[model]\nvocab_size = 50257\n',
        None,
        2,
        (),
    ),
    (
        "mot-ac-no-effect",
        "warning",
        VLM + '[vlm]\narch = "mot"\n[train]\nactivation_checkpointing = "selective"\n',
        None,
        11,
        (),
    ),
    (
        "moe-shared-experts-one",
        "warning",
        "[model]\nnum_experts = 4\nmoe_shared_experts = 3\n[train]\ncompile_model = false\n",
        None,
        3,
        (),
    ),
    (
        "vlm-unfreeze-never-updated",
        "warning",
        VLM + '[vlm]\n[[vlm.freeze_schedule]]\nstart_step = 5\nspecs = [{module = "vision_encoder", frozen = false}]\n',
        None,
        11,
        (),
    ),
]


def _problems(path, world_size):
    return [
        d
        for d in trainspec.check(path, family="kempnerforge@089fbbd", world_size=world_size)
        if d.severity is not trainspec.Severity.NOTE
    ]


@pytest.mark.parametrize(("rule", "severity", "text", "world_size", "line", "also"), CASES, ids=[c[0] for c in CASES])
def test_rule_fires_alone(write, rule, severity, text, world_size, line, also):
    problems = _problems(write("job.toml", text), world_size)
    assert sorted({d.rule for d in problems}) == sorted({rule, *also}), [d.message for d in problems]
    mine = [d for d in problems if d.rule == rule]
    assert mine[0].severity.value == severity
    assert mine[0].line == line, mine[0]


def test_every_rule_has_a_case():
    family = trainspec.families.get_family("kempnerforge@089fbbd") if hasattr(trainspec, "families") else None
    from trainspec.families import get_family

    family = get_family("kempnerforge@089fbbd")
    assert {r.id for r in family.rules} <= {c[0] for c in CASES}


def test_world_size_rules_skipped_with_a_note_without_world_size(write):
    path = write("job.toml", "[distributed]\ndp_shard = 2\n")
    diagnostics = trainspec.check(path, family="kempnerforge@089fbbd")
    assert [d.rule for d in diagnostics] == ["world-size-unknown"]
    assert "world-size-product" in diagnostics[0].message
    assert "--world-size" in diagnostics[0].message


def test_auto_shard_resolved_from_world_size(write):
    path = write("job.toml", "[distributed]\ndp_shard = -1\ndp_replicate = 2\ntp = 4\n" + ACCUM)
    assert not _problems(path, 16)
    (bad,) = _problems(path, 12)
    assert bad.rule == "world-size-auto-shard-divisible"
    assert "12" in bad.message and "2·4·1·1·1 = 8" in bad.message


def test_product_message_names_all_six_factors_and_world_size(write):
    path = write("job.toml", "[distributed]\ndp_replicate = 2\ndp_shard = 3\ntp = 2\n")
    (bad,) = _problems(path, 8)
    assert "2·3·2·1·1·1 = 12" in bad.message and "world size is 8" in bad.message


def test_five_independent_rules_across_sections_in_one_run(write):
    path = write(
        "job.toml",
        """
        [model]
        dim = 4100
        [train]
        seq_len = 4096
        [eval]
        enabled = true
        [profiling]
        start_step = 9
        [distributed]
        dp_shard = 3
        """,
    )
    rules = {d.rule for d in _problems(path, 4)}
    assert rules == {
        "model-heads-divide-dim",
        "seq-len-within-max",
        "eval-needs-source",
        "profiling-window",
        "world-size-product",
    }


def test_schema_error_in_one_section_does_not_hide_rules_elsewhere(write):
    path = write(
        "job.toml",
        """
        [model]
        dim = "wide"
        [train]
        seq_len = 4096
        [profiling]
        start_step = 9
        """,
    )
    rules = {d.rule for d in _problems(path, None)}
    # seq-len-within-max reads model.max_seq_len, which is sound; heads-divide-dim reads the broken dim
    assert rules == {"wrong-type", "seq-len-within-max", "profiling-window"}


def test_kv_heads_are_32_when_absent_and_n_heads_when_null_as_kempnerforge_loads_them(write):
    path = write("job.toml", "[model]\ndim = 2048\nn_heads = 16\nn_kv_heads = 16\n[distributed]\ntp = 8\n")
    assert not _problems(path, None)
    # absent: KempnerForge keeps its built-in 32, which 4 heads cannot share
    small = write("j2.toml", "[model]\ndim = 256\nn_heads = 4\n")
    (refused,) = [d for d in _problems(small, None) if d.is_error]
    assert (refused.rule, refused.line) == ("model-kv-heads-divide-heads", 3)
    assert "model.n_kv_heads = 32 (model.n_kv_heads is 32 when it is not written" in refused.message
    with pytest.raises(trainspec.ConfigError):
        trainspec.load(small, family="kempnerforge@089fbbd")
    # a multiple of 32: the run starts, as grouped-query attention with 32 kv heads
    wide = write("j3.toml", "[model]\ndim = 8192\nn_heads = 64\n")
    assert [(d.rule, d.severity.value) for d in _problems(wide, None)] == [("model-n-kv-heads-implicit", "warning")]
    with pytest.warns(trainspec.ConfigWarning):
        assert trainspec.load(wide, family="kempnerforge@089fbbd").model.n_kv_heads == 32
    # explicit null (KempnerForge's CLI None): one kv head per query head; the file alone is still refused
    null = {"model": {"dim": 256, "n_heads": 4, "n_kv_heads": None}}
    assert [d for d in check_config(null, "kempnerforge@089fbbd") if d.is_error] == []
    with pytest.raises(trainspec.ConfigError, match="override-repairs-file"):
        trainspec.load(small, family="kempnerforge@089fbbd", overrides=["model.n_kv_heads=null"])


def test_value_domain_looks_inside_maps_and_freeze_stages(write):
    path = write(
        "job.toml",
        VLM.lstrip("\n") + "[data.anneal_weights]\nweb = -0.5\n[vlm]\n"
        '[[vlm.freeze_schedule]]\nstart_step = -10\nspecs = [{module = "adapter"}]\n',
    )
    found = {(d.config_path, d.line) for d in _problems(path, None) if d.rule == "value-domain"}
    assert found == {("data.anneal_weights.web", 9), ("vlm.freeze_schedule[0].start_step", 12)}


@pytest.mark.parametrize(
    ("precision", "device", "rules"),
    [
        ("bf16", Device("cuda", "GPU sm70", (7, 0)), ["device-bf16-unsupported"]),
        ("fp8", Device("cuda", "GPU sm70", (7, 0)), ["device-bf16-unsupported", "device-fp8-unsupported"]),
        ("fp8", Device("cuda", "GPU sm80", (8, 0)), ["device-fp8-unsupported"]),
        ("fp8", Device("cuda", "GPU sm90", (9, 0)), []),
        ("fp8", Device("cuda", "MI300X", (9, 4), rocm=True), []),
        ("bf16", Device("cuda", "MI100", (9, 0), rocm=True), []),
        ("fp8", Device("cpu", "cpu"), ["device-fp8-unsupported"]),
        ("bf16", Device("cpu", "cpu"), []),
        ("fp16", Device("cuda", "GPU sm70", (7, 0)), []),
    ],
)
def test_device_checks_need_no_torch(precision, device, rules):
    """The family's hook reads a described device; `trainspec.distributed` fills it in from torch."""
    found = device_checks({"train": {"mixed_precision": precision}}, device)
    assert [d.rule for d in found] == rules
    assert all(d.config_path == "train.mixed_precision" and d.is_error for d in found)


def test_a_finding_shows_the_keys_its_rule_declares_not_words_its_message_happens_to_use():
    """ "is not a registered name" is about model.model_type; the written optimizer.name is no related place."""
    from trainspec.engine.pipeline import check_path

    text = '[model]\nmodel_type = "llama"\n\n[optimizer]\nname = "adamw"\n'
    found = check_path("job.toml", text=text, family="kempnerforge").diagnostics
    (unknown,) = [d for d in found if d.rule == "registry-name-known"]
    assert unknown.path == ("model", "model_type") and unknown.related == ()
