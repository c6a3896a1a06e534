"""The generated models agree with the schema (the validator of record) wherever they can express a constraint.

Where datamodel-code-generator drops a constraint, the gap is listed in
docs/generator-gaps.md and pinned here, so a generator upgrade that closes or
widens a gap shows up as a failing test.
"""

from __future__ import annotations

import math

import pydantic
import pytest

from trainspec.api import check_config
from trainspec.families import get_family
from trainspec.read.files import read
from trainspec.validate.explain import findings

from .conftest import CORPUS, ROOT

VE = {"vision_encoder": {"type": "random"}}

# (family, raw config, schema and model both accept it?)
AGREE = [
    ("kempnerforge@089fbbd", {}, True),
    ("kempnerforge@089fbbd", {"model": {"dim": "x"}}, False),
    ("kempnerforge@089fbbd", {"model": {"dim": 4.0}}, False),
    ("kempnerforge@089fbbd", {"model": {"dim": True}}, False),
    ("kempnerforge@089fbbd", {"model": {"zzz": 1}}, False),
    ("kempnerforge@089fbbd", {"video": {}}, False),
    ("kempnerforge@089fbbd", {"model": {"n_kv_heads": None}}, True),
    ("kempnerforge@089fbbd", {"model": {"n_kv_heads": 0}}, False),
    ("kempnerforge@089fbbd", {"model": {"norm_type": "batchnorm"}}, False),
    ("kempnerforge@089fbbd", {"model": {"num_experts": -1}}, False),
    ("kempnerforge@089fbbd", {"train": {"seq_len": None}}, False),
    ("kempnerforge@089fbbd", {"train": {"grad_clip_norm": 0.0}}, False),
    ("kempnerforge@089fbbd", {"distributed": {"dp_shard": 0}}, False),
    ("kempnerforge@089fbbd", {"distributed": {"dp_shard": -1}}, True),
    ("kempnerforge@089fbbd", {"distributed": {"dp_shard": 3}}, True),
    ("kempnerforge@089fbbd", {"distributed": {"dp_shard": -1.0}}, False),
    ("kempnerforge@089fbbd", {"optimizer": {"betas": [0.9]}}, False),
    ("kempnerforge@089fbbd", {"optimizer": {"betas": [0.9, 1.0]}}, False),
    ("kempnerforge@089fbbd", {"optimizer": {"betas": [0.9, 0.95, 0.99]}}, False),
    ("kempnerforge@089fbbd", {"checkpoint": {"load_path": None, "exclude_from_loading": ["optimizer"]}}, True),
    ("kempnerforge@089fbbd", {"checkpoint": {"exclude_from_loading": "optimizer"}}, False),
    ("kempnerforge@089fbbd", {"data": {"datasets": [{"weight": 1.0}]}}, False),
    ("kempnerforge@089fbbd", {"data": {"datasets": [{"path": "/a"}, {"hf_name": "b", "weight": 0.5}]}}, True),
    ("kempnerforge@089fbbd", {"data": {"datasets": ["web"]}}, False),
    ("kempnerforge@089fbbd", {"data": {"anneal_weights": {"web": "high"}}}, False),
    ("kempnerforge@089fbbd", {"data": {"phases": [{"start_step": 0, "dataset_weights": {"web": -1.0}}]}}, False),
    ("kempnerforge@089fbbd", {"vlm": {"arch": "moma"}, **VE}, False),
    ("kempnerforge@089fbbd", {"vlm": {"arch": "mot", "cross_attention_every_n_layers": 2}, **VE}, False),
    ("kempnerforge@089fbbd", {"vlm": {"arch": "cross_attention", "cross_attention_every_n_layers": 2}, **VE}, True),
    ("kempnerforge@089fbbd", {"vlm": {}, **VE}, True),
    ("kempnerforge@089fbbd", {"vlm": {"freeze": [{"frozen": True}]}, **VE}, False),
    ("kempnerforge@089fbbd", {"vlm": {"freeze_schedule": [{"start_step": 5}]}, **VE}, False),
    ("kempnerforge@089fbbd", {"vision_encoder": {"type": "dino"}}, False),
    ("kempnerforge@089fbbd", {"adapter": {"type": "avgpool"}}, False),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}}, True),
    ("specforge", {"model": {}, "data": {}}, False),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}, "tracking": None}, False),
    ("specforge", {"model": {"target_model_path": "m", "target_backend": "hf"}, "data": {}}, False),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}, "run_id": 5}, False),
    ("specforge", {"model": {"target_model_path": "m", "draft_num_hidden_layers": 0}, "data": {}}, False),
    ("specforge", {"model": {"target_model_path": "m", "torch_dtype": "float8"}, "data": {}}, False),
    ("specforge", {"model": {"target_model_path": "m", "input_modality": "text\n"}, "data": {}}, False),
    ("specforge", {"model": {"target_model_path": "m", "input_modality": "a\x1cb"}, "data": {}}, False),
    ("specforge", {"model": {"target_model_path": "m", "aux_hidden_state_layer_ids": [1, 2]}, "data": {}}, True),
    ("specforge", {"model": {"target_model_path": "m", "aux_hidden_state_layer_ids": ["1"]}, "data": {}}, False),
    ("specforge", {"model": {"target_model_path": "m", "sglang_mem_fraction_static": 1.5}, "data": {}}, False),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}, "training": {"role": None}}, False),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}, "training": {"batch_size": 2.0}}, False),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}, "training": {"learning_rate": 1}}, True),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}, "deployment": {"trainer": {"nnodes": 2}}}, True),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}, "deployment": {"trainer": {"gpus": 2}}}, False),
    ("specforge", {"model": {"target_model_path": "m"}, "data": {}, "deployment": {"disaggregated": None}}, True),
]

# Constraints the generator drops: the schema rejects these, the generated model accepts them.
# Each name is a row of docs/generator-gaps.md.
GAPS = [
    ("if-then", "kempnerforge", {"vlm": {}}),
    ("if-then", "kempnerforge", {"model": {"num_experts": 4, "moe_top_k": 0}}),
    ("if-then", "kempnerforge", {"data": {"phases": [{"start_step": 0}], "anneal_start_step": 5}}),
    ("if-then", "kempnerforge", {"vlm": {"arch": "mot", "mot_warm_start_from_text": True}, **VE}),
    ("contains", "kempnerforge", {"vlm": {"arch": "mot", "mot_modalities": ["audio", "text"]}, **VE}),
    ("uniqueItems", "kempnerforge", {"vlm": {"arch": "mot", "mot_modalities": ["image", "text", "text"]}, **VE}),
    (
        "if-then",
        "specforge",
        {"model": {"target_model_path": "m"}, "data": {}, "deployment": {"mode": "disaggregated"}},
    ),
]


def schema_accepts(family: str, data: dict) -> bool:
    fam = get_family(family)
    return not list(findings(fam.schema, fam.validator, data))


def model_accepts(family: str, data: dict) -> bool:
    fam = get_family(family)
    try:
        fam.model_class().model_validate(fam.schema.fill_defaults(data))
    except pydantic.ValidationError:
        return False
    return True


@pytest.mark.parametrize(("family", "data", "valid"), AGREE, ids=[str(i) for i in range(len(AGREE))])
def test_schema_and_model_agree(family, data, valid):
    assert schema_accepts(family, data) is valid
    assert model_accepts(family, data) is valid


@pytest.mark.parametrize(
    ("family", "data"),
    [
        ("kempnerforge@089fbbd", {"vlm": None, **VE}),
        ("kempnerforge@089fbbd", {"vision_encoder": None}),
        ("kempnerforge@089fbbd", {"adapter": None}),
        ("kempnerforge@5666d0d", {"video": None}),
        ("kempnerforge@5666d0d", {"video": None, "vlm": None, "vision_encoder": None, "adapter": None}),
    ],
)
def test_a_null_optional_section_is_that_section_left_out_except_in_a_file(family, data):
    """What the trainer holds and the model dumps for an absent section: the model and `check_config` take
    it as left out; the schema still refuses it written in a file (KempnerForge reads TOML, which has no null)."""
    assert not schema_accepts(family, data)
    assert model_accepts(family, data)
    assert [d for d in check_config(data, family, world_size=1) if d.is_error] == []


CORPUS_FILES = [("kempnerforge", p) for p in sorted((CORPUS / "kempnerforge").rglob("*.toml"))] + [
    ("specforge", p) for p in sorted((CORPUS / "specforge").glob("*.yaml"))
]


@pytest.mark.parametrize(("family", "path"), CORPUS_FILES, ids=[p.name for _, p in CORPUS_FILES])
def test_corpus_accepted_by_schema_and_model(family, path):
    data = read(str(path)).data
    assert schema_accepts(family, data)
    assert model_accepts(family, data)


@pytest.mark.parametrize(("gap", "family", "data"), GAPS, ids=[f"{g}-{i}" for i, (g, _, _) in enumerate(GAPS)])
def test_known_generator_gaps(gap, family, data):
    assert not schema_accepts(family, data)
    assert model_accepts(family, data), f"the {gap} gap is closed: update docs/generator-gaps.md and this table"


def test_gaps_are_written_down():
    text = (ROOT / "docs" / "generator-gaps.md").read_text()
    for gap, _, _ in GAPS:
        assert f"`{gap}`" in text


def test_discriminated_union_needs_filled_defaults():
    """The generated union cannot pick a variant when `arch` is absent; trainspec fills it first."""
    fam = get_family("kempnerforge")
    raw = {"vlm": {}, **VE}
    with pytest.raises(pydantic.ValidationError):
        fam.model_class().model_validate(raw)
    assert fam.model_class().model_validate(fam.schema.fill_defaults(raw)).vlm.arch == "joint_decoder"


def test_non_finite_numbers_are_refused_by_trainspec_not_the_schema(write):
    import trainspec

    fam = get_family("kempnerforge")
    assert schema_accepts("kempnerforge", {"optimizer": {"lr": math.nan}})  # NaN compares false with every bound
    (d,) = [
        d
        for d in trainspec.check(write("j.toml", "[optimizer]\nlr = nan\n"), family=fam)
        if d.severity is trainspec.Severity.ERROR
    ]
    assert d.rule == "non-finite-number" and d.line == 2
