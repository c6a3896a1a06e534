"""kempnerforge@5666d0d: its corpus, and every new or changed rule, broken on its own (id, severity, line)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import trainspec
from trainspec.api import check_config
from trainspec.families import get_family
from trainspec.families.kempnerforge.rules_5666d0d import tokens_per_frame

from .conftest import CORPUS, FAILS_WHEN_BUILT, ROOT, corpus_world_size

V = "kempnerforge@5666d0d"
BASE = "kempnerforge@089fbbd"
NEW_CORPUS = sorted((CORPUS / "kempnerforge-5666d0d" / "train").glob("*.toml"))
OLD_CORPUS = sorted((CORPUS / "kempnerforge").rglob("*.toml"))
EXPECTED_WARNINGS = {"vlm_7b_moma.toml": ["moma-ac-full"]}
"""The corpus README: exactly one warning in the whole 5666d0d corpus."""

VLM = """[vision_encoder]
type = "random"
feature_dim = 64
num_tokens = 16
[data]
hf_dataset_name = "coco"
tokenizer_path = "gpt2"
"""
MOMA = VLM + '[train]\ncompile_model = false\n[vlm]\narch = "moma"\n'  # [vlm] on line 10, arch on 11
EXPERTS = "[vlm.moma_experts_per_modality]\n"  # on line 12 after MOMA
VIDEO = VLM + "[vlm]\nmax_text_len = 64\n[video]\n"  # [video] on line 10
VLM196 = VLM.replace("num_tokens = 16", "num_tokens = 196")
POOLED = VLM196 + '[adapter]\ntype = "avgpool"\npool_window = 2\n[vlm]\nmax_text_len = 64\n[video]\nmax_frames = 8\n'
"""Reference §7: 196 tokens, avgpool window 2, 8 frames, max_text_len 64 -> 8·49 + 64 = 456 (lines 1-14)."""
WINDOW = "[checkpoint.dyn_ckpt_window]\n"


def _problems(path: Path, world_size: int | None, family: str = V, overrides: tuple[str, ...] = ()) -> list[Any]:
    return [
        d
        for d in trainspec.check(path, family=family, world_size=world_size, overrides=overrides)
        if d.severity is not trainspec.Severity.NOTE
    ]


# -- the corpus ---------------------------------------------------------------------------------


def test_the_corpus_copy_is_the_three_files_of_the_reference():
    assert [p.name for p in NEW_CORPUS] == ["vlm_7b_moma.toml", "vlm_7b_siglip2.toml", "vlm_video_webvid.toml"]


@pytest.mark.parametrize("family", [V, "kempnerforge"])
@pytest.mark.parametrize("path", NEW_CORPUS, ids=lambda p: p.name)
def test_new_corpus_is_clean_at_world_size_4(path, family):
    found = _problems(path, corpus_world_size(path), family)
    assert not [d for d in found if d.is_error], found
    assert [d.rule for d in found] == EXPECTED_WARNINGS.get(path.name, []), found


def test_the_moma_warning_is_at_activation_checkpointing():
    (warning,) = _problems(CORPUS / "kempnerforge-5666d0d" / "train" / "vlm_7b_moma.toml", 4)
    assert warning.severity.value == "warning" and warning.config_path == "train.activation_checkpointing"
    assert 'vlm.arch = "moma"' in warning.message and '"selective"' in warning.message


@pytest.mark.parametrize("path", OLD_CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_089fbbd_corpus_stays_clean_under_5666d0d(path):
    found = [d.rule for d in _problems(path, corpus_world_size(path))]
    assert found == ([FAILS_WHEN_BUILT[path.name]] if path.name in FAILS_WHEN_BUILT else [])


@pytest.mark.parametrize(
    ("name", "refused_by"),
    [
        ("vlm_7b_moma.toml", {"vlm-arch-registered", "vlm-arch-fields"}),
        ("vlm_video_webvid.toml", {"unknown-key"}),
        ("vlm_7b_siglip2.toml", set()),
    ],
)
def test_089fbbd_refuses_the_moma_and_video_files(name, refused_by):
    errors = {d.rule for d in _problems(CORPUS / "kempnerforge-5666d0d" / "train" / name, 4, BASE) if d.is_error}
    assert refused_by <= errors and bool(errors) == bool(refused_by), errors


def test_corpus_files_load_as_the_typed_model():
    moma, siglip, video = NEW_CORPUS
    with pytest.warns(trainspec.ConfigWarning, match="moma-ac-full"):
        loaded = trainspec.load(moma, family=V, world_size=4)
    assert loaded.vlm.moma_experts_per_modality == {"image": 4, "text": 4}
    assert trainspec.load(siglip, family=V, world_size=4).adapter.pool_window == 2  # the default adapter
    config = trainspec.load(video, family=V, world_size=4)
    assert config.video.max_frames == 8 and config.adapter.type == "avgpool"


# -- the new and changed rules, one at a time ---------------------------------------------------

# (rule id, severity, config text, world size, line of the diagnostic, other rules that must fire with it)
CASES = [
    ("checkpoint-dyn-window-range", "error", WINDOW + "start = 100\nstop = 50\n", None, 3, ()),
    ("checkpoint-dyn-window-strategy-registered", "error", WINDOW + 'strategy = "linear"\n', None, 2, ()),
    ("vlm-moma-experts-missing-modality", "error", MOMA + EXPERTS + "image = 2\n", None, 12, ()),
    ("vlm-moma-experts-unknown-modality", "error", MOMA + EXPERTS + "image = 4\ntext = 4\naudio = 2\n", None, 12, ()),
    ("moma-modalities-shape", "error", MOMA + 'moma_modalities = ["text"]\n', None, 12, ()),
    ("moma-modalities-shape", "error", MOMA + 'moma_modalities = ["image", "audio"]\n', None, 12, ()),
    ("moma-modalities-shape", "error", MOMA + 'moma_modalities = ["text", "audio"]\n', None, 12, ()),
    ("moma-modalities-shape", "error", MOMA + 'moma_modalities = ["image", "text", "image"]\n', None, 12, ()),
    ("video-frames-order", "error", VIDEO + "max_frames = 2\n", None, 11, ()),
    ("video-frames-order", "error", VIDEO + "max_frames = 6\nmin_frames = 7\n", None, 12, ()),
    ("video-dataset-type-registered", "error", VIDEO + 'dataset_type = "kinetics"\n', None, 11, ()),
    ("video-sampling-policy-registered", "error", VIDEO + 'sampling_policy = "random"\n', None, 11, ()),
    ("video-needs-vlm", "error", "[model]\ndim = 4096\n[video]\nmax_frames = 8\n", None, 3, ()),
    (
        "adapter-pool-square-grid",
        "error",
        VLM.replace("= 16", "= 197") + '[adapter]\ntype = "avgpool"\n[vlm]\n',
        None,
        4,
        (),
    ),
    (  # every arch, also cross_attention (whose budget counts no visual tokens)
        "adapter-pool-square-grid",
        "error",
        VLM.replace("= 16", "= 60") + '[adapter]\ntype = "attentional_pool"\n[vlm]\narch = "cross_attention"\n',
        None,
        4,
        (),
    ),
    (
        "adapter-pool-divisible-grid",
        "error",
        VLM196 + '[adapter]\ntype = "attentional_pool"\npool_window = 3\n[vlm]\n',
        None,
        4,
        (),
    ),
    (
        "adapter-pool-divisible-grid",
        "error",
        VLM.replace("= 16", "= 1") + '[adapter]\ntype = "attentional_pool"\n[vlm]\n',
        None,
        4,
        (),
    ),
    (
        "vlm-max-seq-len-budget",
        "error",
        POOLED + "[model]\nmax_seq_len = 455\n[train]\nseq_len = 455\n",
        None,
        16,
        ("vlm-train-seq-len-budget",),
    ),
    (
        "vlm-train-seq-len-budget",
        "error",
        POOLED + "[model]\nmax_seq_len = 576\n[train]\nseq_len = 455\n",
        None,
        18,
        (),
    ),
    ("moma-no-moe", "error", MOMA + "[model]\nnum_experts = 8\n", None, 13, ()),
    ("moma-no-ep", "error", MOMA + "[distributed]\nep = 2\n", None, 13, ("ep-needs-moe",)),
    ("moma-compile", "warning", VLM + '[vlm]\narch = "moma"\n[train]\ncompile_model = true\n', None, 11, ()),
    ("moma-compile", "warning", VLM + '[vlm]\narch = "moma"\n', None, 9, ()),  # compile_model defaults to true
    (
        "moma-ac-full",
        "warning",
        MOMA.replace("compile_model = false\n", 'compile_model = false\nactivation_checkpointing = "full"\n'),
        None,
        10,
        (),
    ),
    ("moma-expert-ffn-multiplier", "warning", MOMA + "[model]\nmoe_expert_ffn_multiplier = 0.0\n", None, 13, ()),
    ("moe-field-bounds", "error", "[model]\nnum_experts = 4\nmoe_expert_ffn_multiplier = 0.0\n", None, 3, ()),
    ("moe-field-bounds", "error", "[model]\nnum_experts = 4\nmoe_router_z_loss_weight = -0.1\n", None, 3, ()),
    (
        "vlm-needs-hf-data",
        "error",
        VIDEO.replace('hf_dataset_name = "coco"\ntokenizer_path = "gpt2"\n', ""),
        None,
        5,
        (),
    ),
    (
        "adapter-pool-heads-divide-width",
        "error",
        VLM196 + '[adapter]\ntype = "attentional_pool"\npool_heads = 24\n[vlm]\n',
        None,
        10,
        (),
    ),
]


@pytest.mark.parametrize(("rule", "severity", "text", "world_size", "line", "also"), CASES, ids=[c[0] for c in CASES])
def test_rule_fires_alone(write, rule, severity, text, world_size, line, also):
    problems = [d for d in _problems(write("job.toml", text), world_size) if d.rule != "moe-compile"]
    assert sorted({d.rule for d in problems}) == sorted({rule, *also}), [d.message for d in problems]
    mine = [d for d in problems if d.rule == rule]
    assert mine[0].severity.value == severity
    assert mine[0].line == line, mine[0]


def test_every_new_rule_and_schema_id_has_a_case():
    new_rules = {r.id for r in get_family(V).rules} - {r.id for r in get_family(BASE).rules}
    changed = {"vlm-max-seq-len-budget", "vlm-train-seq-len-budget", "vlm-needs-hf-data", "moe-field-bounds"}
    schema_ids = {
        "checkpoint-dyn-window-strategy-registered",
        "moma-modalities-shape",
        "video-needs-vlm",
        "video-dataset-type-registered",
        "video-sampling-policy-registered",
    }
    assert new_rules | changed | schema_ids <= {c[0] for c in CASES}


def test_plain_kempnerforge_is_5666d0d_with_its_rules_and_examples():
    family = get_family("kempnerforge")
    assert family.id == V
    assert {"moma-no-moe", "video-frames-order"} <= {r.id for r in family.rules}
    assert {"moma-no-moe", "video-needs-vlm"} <= set(family.examples)
    assert "moma-no-moe" not in {r.id for r in get_family(BASE).rules}


# -- formulas of reference §7 -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("num_tokens", "window", "avgpool", "attentional_pool"),
    [
        (196, 2, 49, 49),
        (729, 3, 81, 81),
        (196, 3, 25, None),
        (100, 3, 16, None),
        (64, 4, 4, 4),
        (1, 2, 1, None),
        (60, 2, None, None),
        (60, 3, None, None),
    ],
)
def test_tokens_per_frame(num_tokens, window, avgpool, attentional_pool):
    assert tokens_per_frame("avgpool", window, num_tokens) == avgpool
    assert tokens_per_frame("attentional_pool", window, num_tokens) == attentional_pool
    assert tokens_per_frame("mlp_2layer", window, num_tokens) == num_tokens
    assert tokens_per_frame("linear", window, num_tokens) == num_tokens


def test_tokens_per_frame_defers_an_unknown_token_count():
    assert tokens_per_frame("attentional_pool", 3, 0) == 0


def _budget_errors(write, text: str) -> list[Any]:
    return [d for d in _problems(write("job.toml", text), None) if d.rule.endswith("seq-len-budget")]


def test_pooled_video_budget_is_456(write):
    assert _budget_errors(write, POOLED + "[model]\nmax_seq_len = 456\n[train]\nseq_len = 456\n") == []
    (error, _) = _budget_errors(write, POOLED + "[model]\nmax_seq_len = 455\n[train]\nseq_len = 455\n")
    assert error.rule == "vlm-max-seq-len-budget"
    for part in (
        "model.max_seq_len = 455",
        "392 visual tokens",
        "video.max_frames = 8 frames × 49 tokens per frame",
        'adapter.type = "avgpool"',
        "adapter.pool_window = 2",
        "vision_encoder.num_tokens = 196",
        "vlm.max_text_len = 64 = 456",
    ):
        assert part in error.message, error.message


@pytest.mark.parametrize(
    ("arch", "need"), [("joint_decoder", 1536), ("mot", 1536), ("moma", 1536), ("cross_attention", 512)]
)
def test_default_video_budget_by_arch(write, arch, need):
    """64 tokens, the default adapter, [video] with its default 16 frames, max_text_len 512 (reference §7)."""
    text = VLM.replace("= 16", "= 64") + f'[vlm]\narch = "{arch}"\n[video]\n[train]\ncompile_model = false\n'
    fits = text + f"seq_len = {need}\n[model]\nmax_seq_len = {need}\n"
    assert _budget_errors(write, fits) == []
    short = text + f"seq_len = {need - 1}\n[model]\nmax_seq_len = {need - 1}\n"
    errors = _budget_errors(write, short)
    assert sorted(d.rule for d in errors) == ["vlm-max-seq-len-budget", "vlm-train-seq-len-budget"]
    assert all(f"= {need}" in d.message for d in errors)


def test_without_video_and_pooling_the_budget_is_that_of_089fbbd(write):
    text = VLM.replace("= 16", "= 256") + "[vlm]\n[model]\nmax_seq_len = 767\n[train]\nseq_len = 767\n"
    for family in (V, BASE):
        found = [d for d in _problems(write("job.toml", text), None, family) if d.rule.endswith("budget")]
        assert len(found) == 2 and all("= 768" in d.message for d in found)


def test_an_unknown_token_count_defers_the_pooling_and_budget_rules(write):
    text = VLM.replace("= 16", "= 0") + '[adapter]\ntype = "attentional_pool"\npool_window = 5\n[vlm]\n[video]\n'
    assert _problems(write("job.toml", text + "[model]\nmax_seq_len = 8\n[train]\nseq_len = 8\n"), None) == []


# -- what 5666d0d accepts, and what it refuses by type --------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[checkpoint]\nkeep_last_n = 0\n",
        "[checkpoint]\nkeep_last_n = -1\n",
        "[train]\nseed = 1\ndata_seed = -5\n",
        "[checkpoint]\ninterval = 100\n[checkpoint.dyn_ckpt_window]\n",
        WINDOW + "start = 64\nstop = 64\n",
        "[model]\nnum_experts = 0\nmoe_expert_ffn_multiplier = 0.0\nmoe_router_z_loss_weight = -1.0\n",
        "[model]\nnum_experts = 4\nmoe_expert_ffn_multiplier = 0.5\nmoe_router_z_loss_weight = 0.001\n"
        "[train]\ncompile_model = false\n",
        MOMA
        + 'moma_modalities = ["image", "text", "audio"]\nmoma_capacity_factor = 0.5\n'
        + EXPERTS
        + "image = 1\ntext = 7\naudio = 2\n",
        VIDEO + 'max_frames = 4\nmin_frames = 4\nfps = 0.5\nsplit = "validation"\n',
    ],
)
def test_accepted_by_5666d0d(write, text):
    assert _problems(write("job.toml", text), None) == []


def test_keep_last_n_below_1_is_refused_by_089fbbd_only(write):
    path = write("job.toml", "[checkpoint]\nkeep_last_n = 0\n")
    assert [d.rule for d in _problems(path, None, BASE)] == ["out-of-range"]
    assert _problems(path, None) == []


def test_an_empty_window_gets_every_default():
    assert check_config({"checkpoint": {"dyn_ckpt_window": {}}}, V, world_size=4) == []
    filled = get_family(V).schema.fill_defaults({"checkpoint": {"dyn_ckpt_window": {}}})
    assert filled["checkpoint"]["dyn_ckpt_window"] == {"start": 0, "stop": 512, "strategy": "power2"}
    assert get_family(V).schema.fill_defaults({})["checkpoint"]["dyn_ckpt_window"] is None


@pytest.mark.parametrize(
    ("text", "rule", "path"),
    [
        ("[checkpoint]\ndyn_ckpt_window = 5\n", "wrong-type", "checkpoint.dyn_ckpt_window"),  # Q22
        ("video = 3\n" + VLM + "[vlm]\n", "wrong-type", "video"),
        (MOMA + 'moma_modalities = "image text"\n', "wrong-type", "vlm.moma_modalities"),  # Q24
        (MOMA + EXPERTS + "image = 2.5\ntext = 4\n", "wrong-type", "vlm.moma_experts_per_modality.image"),  # Q20
        (MOMA + EXPERTS + "image = true\ntext = 4\n", "wrong-type", "vlm.moma_experts_per_modality.image"),
        (MOMA + EXPERTS + "image = 0\ntext = 4\n", "out-of-range", "vlm.moma_experts_per_modality.image"),
        (MOMA + "moma_capacity_factor = -0.5\n", "out-of-range", "vlm.moma_capacity_factor"),
        (VLM + '[adapter]\ntype = "linear"\npool_window = 0\n[vlm]\n', "out-of-range", "adapter.pool_window"),
        (VLM + "[adapter]\npool_heads = 0\n[vlm]\n", "out-of-range", "adapter.pool_heads"),
        (VIDEO + "fps = 0.0\n", "out-of-range", "video.fps"),
        (VIDEO + 'split = "test"\n', "not-allowed-value", "video.split"),
        (VIDEO + "frames = 8\n", "unknown-key", "video.frames"),
        (WINDOW + "start = -1\n", "out-of-range", "checkpoint.dyn_ckpt_window.start"),
        (WINDOW + "every = 2\n", "unknown-key", "checkpoint.dyn_ckpt_window.every"),
        (VLM + "[vlm]\nmoma_gumbel_noise = false\n", "vlm-arch-fields", "vlm.moma_gumbel_noise"),
    ],
)
def test_refused_by_the_schema(write, text, rule, path):
    found = [(d.rule, d.config_path) for d in _problems(write("job.toml", text), None) if d.is_error]
    assert (rule, path) in found, found


def test_min_and_max_frames_0_report_the_bounds_not_the_order(write):
    found = _problems(write("job.toml", VIDEO + "max_frames = 0\nmin_frames = 0\n"), None)
    assert sorted((d.rule, d.config_path) for d in found) == [
        ("out-of-range", "video.max_frames"),
        ("out-of-range", "video.min_frames"),
    ]


def test_messages_name_fields_and_values(write):
    def message(text: str, rule: str) -> str:
        return next(d.message for d in _problems(write("job.toml", text), None) if d.rule == rule)

    missing = message(MOMA + EXPERTS + "image = 2\n", "vlm-moma-experts-missing-modality")
    assert '"text"' in missing and '{"image": 2}' in missing and '["image", "text"]' in missing
    extra = message(MOMA + EXPERTS + "image = 4\ntext = 4\nvideo = 1\naudio = 2\n", "vlm-moma-experts-unknown-modality")
    assert '"audio", "video"' in extra and '"image", "text"' in extra
    window = message(WINDOW + "start = 100\nstop = 50\n", "checkpoint-dyn-window-range")
    assert "stop = 50" in window and "start = 100" in window
    frames = message(VIDEO + "max_frames = 2\n", "video-frames-order")
    assert "video.min_frames = 4" in frames and "video.max_frames = 2" in frames
    grid = message(
        VLM196 + '[adapter]\ntype = "attentional_pool"\npool_window = 3\n[vlm]\n', "adapter-pool-divisible-grid"
    )
    assert "14×14" in grid and "adapter.pool_window = 3" in grid and "196" in grid and "avgpool" in grid
    square = message(VLM.replace("= 16", "= 197") + '[adapter]\ntype = "avgpool"\n[vlm]\n', "adapter-pool-square-grid")
    assert "197" in square and "perfect square" in square and "class token" in square
    moe = message(MOMA + "[model]\nnum_experts = 8\n", "moma-no-moe")
    assert "model.num_experts = 8" in moe and "vlm.moma_experts_per_modality" in moe
    assert "distributed.ep = 2" in message(MOMA + "[distributed]\nep = 2\n", "moma-no-ep")
    assert "video" in message("[video]\n", "video-needs-vlm")


def test_video_run_needs_a_tokenizer_but_no_hf_dataset(write):
    no_hf = VIDEO.replace('hf_dataset_name = "coco"\n', "")
    assert _problems(write("job.toml", no_hf), None) == []
    image_run = VLM.replace('hf_dataset_name = "coco"\n', "") + "[vlm]\n"
    assert [d.rule for d in _problems(write("job.toml", image_run), None)] == ["vlm-needs-hf-data"]


def test_pooling_rules_need_vlm(write):
    text = VLM.replace("= 16", "= 197") + '[adapter]\ntype = "attentional_pool"\npool_window = 3\n'
    assert [d.rule for d in _problems(write("job.toml", text), None)] == ["vlm-section-without-vlm"] * 2


def test_switching_to_moma_on_the_command_line_applies_the_moma_rules(write):
    """Q13: trainspec dispatches on the final arch, so `--set vlm.arch=moma` is stricter than KempnerForge."""
    path = write(
        "job.toml", VLM + '[vlm]\narch = "joint_decoder"\n[model]\nnum_experts = 8\n[train]\ncompile_model = false\n'
    )
    assert _problems(path, None) == []
    assert [d.rule for d in _problems(path, None, overrides=("vlm.arch=moma",))] == ["moma-no-moe"]


@pytest.mark.parametrize("family", [V, BASE])
def test_switching_to_cross_attention_on_the_command_line_keeps_the_file_budget(write, family):
    """Q13: the loader builds [vlm] as the file's arch and only then sets the string, so a joint decoder's
    budget (visual tokens + text) still holds after `--set vlm.arch=cross_attention`. The file loads (only
    the launch-time train.seq_len budget fails it); the launch with the switch fails the same budget."""
    text = VLM + "[vlm]\nmax_text_len = 64\n[model]\nmax_seq_len = 80\n[train]\nseq_len = 64\n"
    path = write("job.toml", text)
    assert [d.rule for d in _problems(path, 1, family)] == ["vlm-train-seq-len-budget"]  # 16 + 64 = 80 > 64
    [refused] = _problems(path, 1, family, overrides=("vlm.arch=cross_attention",))
    assert refused.rule == "override-refused-by-loader" and "train.seq_len = 64" in refused.message
    assert '"joint_decoder"' in refused.message and "16" in refused.message
    assert 'keeps vlm.arch = "joint_decoder", not "cross_attention"' in refused.message
    # the other checks of the launch see the overrides: a budget they fix is fixed
    assert _problems(path, 1, family, overrides=("vlm.arch=cross_attention", "train.seq_len=80")) == []
    # a shorter model.max_seq_len with the switch: the loader checks the merged config with the file's arch
    found = _problems(path, 1, family, overrides=("vlm.arch=cross_attention", "model.max_seq_len=64"))
    assert {d.rule for d in found} == {"override-refused-by-loader"}
    assert any("model.max_seq_len = 64" in d.message for d in found)


def test_switching_away_from_moma_keeps_no_moma_key(write):
    """Q13: with MoMa keys in the file, `--set vlm.arch=joint_decoder` is refused (they are unknown keys)."""
    path = write("job.toml", MOMA + "moma_gumbel_noise = false\n")
    found = _problems(path, None, overrides=("vlm.arch=joint_decoder",))
    assert {d.rule for d in found if d.is_error} == {"vlm-arch-fields"}


# -- the built schema and its editor form ------------------------------------------------------


def _load(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _nodes(node: Any):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


SCHEMA = ROOT / "schema" / "kempnerforge" / "job@5666d0d.schema.json"


def test_every_property_of_5666d0d_is_documented():
    for node in _nodes(_load(SCHEMA)):
        for name, sub in node.get("properties", {}).items() if isinstance(node.get("properties"), dict) else ():
            assert isinstance(sub, dict) and sub.get("description"), name
        if "enum" in node and "description" in node:
            assert len(node["markdownEnumDescriptions"]) == len(node["enum"]), node["description"]
            assert len(node["x-taplo"]["docs"]["enumValues"]) == len(node["enum"]), node["description"]
        if "markdownDescription" in node:
            text = re.sub(r"^\*\*`[^`]+`\*\* — ", "", node["markdownDescription"])
            assert re.sub(r"[`*]", "", text) == re.sub(r"[`*]", "", node["description"]), node["description"]


def test_5666d0d_names_its_rules_in_the_schema_and_links_its_own_sources():
    text = SCHEMA.read_text(encoding="utf-8")
    for rule_id in (
        "moe-field-bounds",
        "moma-modalities-shape",
        "video-needs-vlm",
        "checkpoint-dyn-window-strategy-registered",
        "video-dataset-type-registered",
        "video-sampling-policy-registered",
    ):
        assert f'"x-trainspec-rule": "{rule_id}"' in text
    assert "/blob/089fbbd/" not in text and "/blob/5666d0d/" in text
    editor = (ROOT / "editors" / "schemas" / "kempnerforge@5666d0d.schema.json").read_text(encoding="utf-8")
    assert "dependentRequired" not in editor and "unevaluatedProperties" not in editor


def test_video_snippet_makes_a_valid_video_run():
    (_, snippet) = _load(SCHEMA)["defaultSnippets"]
    body = json.loads(re.sub(r"\$\{\d+:([^}]*)\}", r"\1", json.dumps(snippet["body"])))
    assert set(body) == {"video", "vlm", "vision_encoder", "adapter"}
    config = {**body, "data": {"tokenizer_path": "gpt2"}}
    assert check_config(config, V, world_size=4) == []
