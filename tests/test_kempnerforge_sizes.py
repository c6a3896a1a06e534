"""Parameter counts `show` gives for KempnerForge configs: what KempnerForge builds (kempnerforge-build reference).

The expected numbers come from the reference's closed formulas (§1.1–§2.2), written out here on their
own, and from the figures it prints for its worked examples (§8.2).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from trainspec.layouts.provenance import show

from .conftest import FAILS_WHEN_BUILT, ROOT

CORPUS = sorted((ROOT / "tests" / "corpus").glob("kempnerforge*/**/*.toml"))
SEED_CORPUS = sorted((ROOT / "tests" / "corpus" / "kempnerforge").glob("**/*.toml"))


def formula(config: dict) -> int:
    """P by the reference's formulas: §1.2 text model, §1.3 MoE, §2.1 VLM arches, §2.2 adapters."""
    m = config["model"]
    d, layers, h, v = m["dim"], m["n_layers"], m["n_heads"], m["vocab_size"]
    k = m["n_kv_heads"] or h
    hd = d // h
    f = m["ffn_hidden_dim"] or 256 * math.ceil(math.floor(4 * d * (2 / 3) * m["ffn_dim_multiplier"]) / 256)
    fe = f
    if "moe_expert_ffn_multiplier" in m:
        fe = max(16, 16 * round(math.floor(f * m["moe_expert_ffn_multiplier"]) / 16))
    mats = 3 if m["activation"] == "silu" else 2
    n = d if m["norm_type"] == "rmsnorm" else 2 * d
    a = 2 * d * d + 2 * d * k * hd
    e = m["num_experts"]
    shared = 1 if m["moe_shared_experts"] > 0 else 0
    moe_ffn = e * mats * d * fe + d * e + e * (m["moe_router"] == "sigmoid_topk") + shared * mats * d * fe

    def layer(i: int) -> int:
        moe = e > 0 and (i + 1) % m["moe_frequency"] == 0
        return 2 * n + a + 2 * hd * m["qk_norm"] + (moe_ffn if moe else mats * d * f)

    embeddings = v * d * (2 - m["tie_embeddings"])
    vlm = config.get("vlm")
    if vlm is None:
        return embeddings + n + sum(layer(i) for i in range(layers))
    arch = vlm["arch"]
    if arch == "mot":
        copies = len(vlm["mot_modalities"])
        total = embeddings + n + copies * n + copies * sum(layer(i) for i in range(layers))
    elif arch == "moma":
        experts = sum(count * mats * d * fe + d * count for count in vlm["moma_experts_per_modality"].values())
        total = embeddings + n + layers * (2 * n + a + 2 * hd * m["qk_norm"] + experts)
    else:
        total = embeddings + n + sum(layer(i) for i in range(layers))
        if arch == "cross_attention":
            h_ca = vlm["cross_attention_n_heads"] or h
            k_ca = vlm["cross_attention_n_kv_heads"] or h_ca
            hd_ca = d // h_ca
            block = 2 * n + 2 * d * h_ca * hd_ca + 2 * d * k_ca * hd_ca + mats * d * f
            total += layers // vlm["cross_attention_every_n_layers"] * block
    encoder = config["vision_encoder"]
    f_in = encoder["feature_dim"] or (768 if encoder["type"] == "random" else None)
    if f_in is None:
        return total  # a hub encoder's width: the adapter is not counted
    adapter = config["adapter"]
    if adapter["type"] == "mlp_2layer":
        hidden = adapter["hidden_dim"] or d
        return total + f_in * hidden + hidden + hidden * d + d
    if adapter["type"] == "attentional_pool":
        return total + 4 * (f_in * f_in + f_in) + f_in * d + d
    return total + f_in * d + d


def derived(path: Path, *overrides: str, family: str | None = None) -> tuple[dict, dict]:
    shown = show(path, overrides=overrides, family=family)
    errors = [d.rule for d in shown.diagnostics if d.is_error]
    assert errors == ([FAILS_WHEN_BUILT[path.name]] if path.name in FAILS_WHEN_BUILT else []), errors
    config = {}
    for leaf in shown.leaves:  # the resolved config back from its leaves
        node = config
        *parents, last = leaf.path.replace("[", ".").replace("]", "").split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = leaf.value
    for spec_list in ("freeze", "freeze_schedule"):
        if isinstance(config.get("vlm", {}).get(spec_list), dict):
            config["vlm"][spec_list] = list(config["vlm"][spec_list].values())
    return config, {q.name: q.value for q in shown.quantities}


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_corpus_config_counts_what_the_formulas_give(path):
    config, values = derived(path)
    assert values["parameters"] == formula(config)


@pytest.mark.parametrize("path", SEED_CORPUS, ids=lambda p: p.name)
def test_the_seed_version_counts_its_corpus_too(path):
    config, values = derived(path, family="kempnerforge@089fbbd")
    assert "moe_expert_ffn_multiplier" not in config["model"]
    assert values["parameters"] == formula(config)


SMALL = ROOT / "tests" / "corpus" / "kempnerforge" / "train" / "debug.toml"
MOE = ("model.num_experts=4", "train.compile_model=false")
VLM = (
    "vision_encoder.type=random",
    "vision_encoder.feature_dim=96",
    "vision_encoder.num_tokens=16",
    "data.hf_dataset_name=coco",
    "data.tokenizer_path=gpt2",
    "model.max_seq_len=2048",
    "train.seq_len=1024",
)


@pytest.mark.parametrize(
    "overrides",
    [
        ("model.activation=gelu",),
        ("model.activation=relu",),
        ("model.norm_type=layernorm",),
        ("model.qk_norm=true",),
        ("model.tie_embeddings=true",),
        ("model.ffn_hidden_dim=1000",),
        (*MOE,),
        (*MOE, "model.moe_router=sigmoid_topk"),
        (*MOE, "model.moe_shared_experts=1"),
        (*MOE, "model.moe_shared_experts=2"),
        (*MOE, "model.moe_packed_experts=true", "model.activation=gelu"),
        (*MOE, "model.moe_frequency=2", "model.moe_expert_ffn_multiplier=0.5"),
        (*MOE, "model.moe_frequency=3", "model.ffn_hidden_dim=1000"),
        (*VLM, "vlm.arch=joint_decoder"),
        (*VLM, "vlm.arch=joint_decoder", "adapter.type=linear"),
        (*VLM, "vlm.arch=joint_decoder", "adapter.type=avgpool"),
        (*VLM, "vlm.arch=joint_decoder", "adapter.type=attentional_pool", "adapter.pool_heads=8"),
        (*VLM, "vlm.arch=joint_decoder", "adapter.hidden_dim=300"),
        (*VLM, "vlm.arch=cross_attention", "vlm.cross_attention_every_n_layers=2", "vlm.cross_attention_n_heads=4"),
        (*VLM, "vlm.arch=mot"),
        (*VLM, "vlm.arch=mot", *MOE, "model.moe_shared_experts=1"),
        (*VLM, "vlm.arch=moma", "train.compile_model=false"),
    ],
    ids=lambda o: ",".join(x.split("=")[0].split(".")[-1] + "=" + x.split("=")[1] for x in o),
)
def test_every_model_kind_counts_what_the_formulas_give(write, overrides):
    arch = next((o.split("=")[1] for o in overrides if o.startswith("vlm.arch=")), None)
    text = SMALL.read_text() + (f'\n[vlm]\narch = "{arch}"\n\n[vision_encoder]\n' if arch else "")
    path = write("job.toml", text)
    config, values = derived(path, *(o for o in overrides if not o.startswith("vlm.arch=")))
    assert values["parameters"] == formula(config)


def test_gelu_has_two_matrices_and_shared_experts_are_one(write):
    _, silu = derived(SMALL)
    _, gelu = derived(SMALL, "model.activation=gelu")
    assert gelu["parameters_mlp"] * 3 == silu["parameters_mlp"] * 2
    _, one = derived(SMALL, *MOE, "model.moe_shared_experts=1")
    _, two = derived(SMALL, *MOE, "model.moe_shared_experts=2")
    assert one["parameters"] == two["parameters"] and one["parameters_shared_expert"] > 0


# §8.2: the reference's figures, group by group
TRAIN = ROOT / "tests" / "corpus" / "kempnerforge" / "train"
MOMA = ROOT / "tests" / "corpus" / "kempnerforge-5666d0d" / "train" / "vlm_7b_moma.toml"
WORKED = {
    TRAIN / "7b.toml": {
        "parameters_embedding": 525_336_576,
        "parameters_head": 525_336_576,
        "parameters_attention": 1_342_177_280,
        "parameters_mlp": 5_637_144_576,
        "parameters_norms": 262_144 + 4_096,
        "parameters": 8_030_261_248,
    },
    TRAIN / "moe_24gpu.toml": {
        "parameters_embedding": 262_668_288,
        "parameters_head": 262_668_288,
        "parameters_attention": 251_658_240,
        "parameters_experts": 8_455_716_864,
        "parameters_router": 393_216,
        "parameters_norms": 98_304 + 2_048,
        "parameters": 9_233_205_248,
    },
    MOMA: {
        "parameters_embedding": 205_852_672,
        "parameters_head": 205_852_672,
        "parameters_attention": 1_342_177_280,
        "parameters_experts": 45_097_156_608,
        "parameters_router": 1_048_576,
        "parameters_norms": 262_144 + 4_096,
        "parameters_adapter": 20_979_712,
        "parameters": 46_873_333_760,
        "parameters_frozen": 0,
    },
}


@pytest.mark.parametrize("path", list(WORKED), ids=lambda p: p.name)
def test_the_worked_examples_by_module_group(path):
    _, values = derived(path)
    for name, expected in WORKED[path].items():
        assert values[name] == expected, name
    assert values["parameters_trainable"] + values["parameters_frozen"] == values["parameters"]


def test_7b_at_tp4_builds_the_same_model():
    _, values = derived(TRAIN / "7b_12gpu_tp4.toml")
    assert values["parameters"] == 8_030_261_248


def test_a_hub_encoder_is_named_as_not_counted():
    shown = show(TRAIN / "vlm_7b_siglip2_cross_attn.toml")
    quantities = {q.name: q for q in shown.quantities}
    encoder = quantities["parameters_vision_encoder"]
    assert encoder.value is None and "hub" in encoder.how and "google/siglip2-base-patch16-224" in encoder.how
    assert quantities["parameters_adapter"].value is None and "feature_dim" in quantities["parameters_adapter"].how
    assert "not counted: vision_encoder, adapter" in quantities["parameters"].how


def test_mot_freezes_its_final_norm_and_the_freeze_specs_apply(write):
    _, mot = derived(TRAIN / "vlm_7b_mot.toml")
    assert mot["parameters_frozen"] == 4096
    text = (
        (TRAIN / "vlm_7b_mot.toml").read_text().replace('arch = "mot"', 'arch = "mot"\nfreeze = [{module = "adapter"}]')
    )
    _, frozen = derived(write("mot.toml", text))
    assert frozen["parameters_frozen"] == 4096 + frozen["parameters_adapter"]
