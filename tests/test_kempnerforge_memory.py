"""Memory per rank `show` estimates for KempnerForge jobs, by the trainer's own sharding.

The figures are the kempnerforge-build reference's worked examples: §8.3 (persistent state, exact up to
FSDP padding) and §8.4 (step buffers and activations, printed rounded to 0.01 GB; sums to the GB).
"""

from __future__ import annotations

import pytest

from trainspec.layouts.provenance import show

from .conftest import ROOT

TRAIN = ROOT / "tests" / "corpus" / "kempnerforge" / "train"
MOMA = ROOT / "tests" / "corpus" / "kempnerforge-5666d0d" / "train" / "vlm_7b_moma.toml"
GB = 10**9


def derived(path, world_size: int, *overrides: str) -> dict:
    shown = show(path, world_size=world_size, overrides=overrides)
    assert shown.ok, [d.message for d in shown.diagnostics if d.is_error]
    return {q.name: q.value for q in shown.quantities}


# (file, world size, params per rank §8.3, no-sync buffer, root + two blocks gathered, activations, logits, sum)
WORKED = [
    (TRAIN / "7b.toml", 8, 1_003_782_656, 32.12, 2.10 + 2 * 0.44, 8.59 + 7.79, 16.8, 77),
    (TRAIN / "7b_12gpu_tp4.toml", 12, 801_037_014, 9.61, 1.31 + 2 * 0.11, 1.07 + 1.04, 8.4, 28),
    (TRAIN / "moe_24gpu.toml", 24, 1_508_729_206, 36.18, 1.05 + 2 * 0.71, 51.9, 4.2, 108),
    (MOMA, 8, 5_859_304_960, 0, 0.82 + 2 * 2.90, 23.4 + 1.6, 0.41, 85),
]


@pytest.mark.parametrize("case", WORKED, ids=lambda c: c[0].name)
def test_the_worked_examples(case):
    path, world_size, per_rank, no_sync, gathered, saved, logits, total = case
    got = derived(path, world_size)
    assert got["memory_parameters"] == per_rank * 2  # bf16
    assert got["memory_gradients"] == per_rank * 2
    assert got["memory_optimizer"] == per_rank * 2 * 2  # AdamW: two states, unpadded rows on the largest rank
    assert round(got["memory_grad_accumulation"] / GB, 2) == no_sync
    assert got["memory_gathered"] / GB == pytest.approx(gathered, abs=0.02)
    assert got["memory_activations"] / GB == pytest.approx(saved, abs=0.2)
    assert got["memory_logits"] / GB == pytest.approx(logits, abs=0.05)
    # the reference's sum leaves out the logits' gradient of the loss backward (4 bytes per logit, as the logits)
    assert got["memory_logits_gradient"] == got["memory_logits"]
    assert got["memory_total"] / GB == pytest.approx(total + logits, abs=1)


@pytest.mark.parametrize("case", WORKED, ids=lambda c: c[0].name)
def test_the_step_peak_is_the_saved_activations_and_the_loss_backward(case):
    """§5.4: the loss backward peaks at ≈ 8 bytes per logit (logits and log-softmax, then their gradient) over
    what the layers saved; the step peak is its own line, not summed into the total again."""
    path, world_size, *_ = case
    got = derived(path, world_size)
    text = got["memory_logits"] // 4  # logits of the text positions (bf16 logits + bf16 log-softmax)
    assert got["memory_step_peak"] == got["memory_activations"] + 8 * text
    parts = [v for k, v in got.items() if k.startswith("memory_") and k not in ("memory_total", "memory_assumptions")]
    assert got["memory_total"] == sum(parts) - got["memory_step_peak"] - got.get("memory_activations_uneven", 0)


def test_uneven_routing_is_bounded_by_one_expert_taking_every_token():
    """§8.4: moe_24gpu saves 0.39 GB of attention and norms + 1.78 GB of MoE per layer with balanced routing,
    up to ~4.8 GB of MoE per layer if one expert takes all tokens."""
    got = derived(TRAIN / "moe_24gpu.toml", 24)
    layers = 24
    assert got["memory_activations"] / layers / GB == pytest.approx(0.39 + 1.78, abs=0.05)
    assert got["memory_activations_uneven"] / layers / GB == pytest.approx(0.39 + 4.8, abs=0.05)
    assert "memory_activations_uneven" not in derived(TRAIN / "7b.toml", 8)  # no MoE layers, no bound


def test_no_sync_buffer_is_four_times_the_sharded_state_of_7b_at_8():
    got = derived(TRAIN / "7b.toml", 8)
    state = got["memory_parameters"] + got["memory_gradients"] + got["memory_optimizer"]
    assert got["memory_grad_accumulation"] == 4 * 8_030_261_248
    assert got["memory_grad_accumulation"] == pytest.approx(4 * state, rel=0.001)


def test_every_memory_figure_is_labelled_an_estimate_with_its_assumptions():
    shown = show(TRAIN / "7b_12gpu_tp4.toml", world_size=12)
    memory = [q for q in shown.quantities if q.name.startswith("memory_")]
    assert {q.name for q in memory} >= {"memory_parameters", "memory_total", "memory_assumptions"}
    for q in memory:
        assert q.name == "memory_assumptions" or q.how.startswith("estimate:"), q
    assumptions = next(q.value for q in memory if q.name == "memory_assumptions")
    assert "tp=4 with sequence parallelism" in assumptions and "dp_shard=3" in assumptions


def test_schedule_free_adamw_keeps_three_states():
    adamw = derived(TRAIN / "7b.toml", 8)
    free = derived(TRAIN / "7b.toml", 8, "optimizer.name=schedule_free_adamw")
    assert free["memory_optimizer"] == adamw["memory_optimizer"] // 2 * 3
    parts = ("memory_parameters", "memory_gradients", "memory_optimizer")
    assert sum(free[k] for k in parts) / sum(adamw[k] for k in parts) == 1.25  # (2 + 2 + 6) / (2 + 2 + 4)


def test_moe_at_tp4_keeps_every_expert_on_every_tp_rank():
    got = derived(TRAIN / "moe_24gpu.toml", 24)
    experts = 8_455_716_864
    assert got["memory_parameters"] > experts // 6 * 2  # experts are divided by dp_shard only


def test_the_largest_pipeline_stage_is_shown(write):
    debug = (TRAIN / "debug.toml").read_text()  # 4 layers: 3 stages hold 2, 1 and 1
    got = derived(write("pp.toml", debug), 3, "distributed.pp=3", "distributed.dp_shard=1", "train.grad_accum_steps=3")
    d, v, f = 256, 32000, 768
    layer = 2 * d + 4 * d * d + 3 * d * f
    # the last stage (one layer, the final norm and the head) computes the logits and the loss, which no
    # other stage holds: it outweighs stage 0 (two layers and the embedding)
    assert got["memory_parameters"] == (layer + v * d + d) * 2
    assert got["memory_logits"] == got["memory_logits_gradient"] > 0
    # a mesh of pipeline stages alone has no data-parallel dimension, so FSDP keeps no unsharded stage (§3.1)
    assert "memory_pipeline_stage" not in got and "memory_grad_accumulation" not in got
    assert got["memory_gradients"] == got["memory_parameters"]
    no_logits = derived(
        write("pp.toml", debug),
        3,
        "distributed.pp=3",
        "distributed.dp_shard=1",
        "train.grad_accum_steps=3",
        "model.vocab_size=8",
    )
    assert no_logits["memory_parameters"] == (2 * layer + 8 * d) * 2  # a tiny head: stage 0 is the largest
    assert no_logits["memory_logits"] == 0


def test_checkpointing_that_does_nothing_is_not_counted_as_saving():
    full = show(MOMA, world_size=8)
    how = next(q.how for q in full.quantities if q.name == "memory_activations")
    assert "full has no effect on moma blocks" in how


def test_muon_keeps_one_state_for_matrices_and_two_for_the_rest():
    adamw = derived(TRAIN / "7b.toml", 8)
    muon = derived(TRAIN / "7b.toml", 8, "optimizer.name=muon")
    # embedding and head (vocab / dim > 10) and the norms stay on AdamW
    two = (2 * 525_336_576 + 266_240) // 8 * 2
    one = adamw["memory_parameters"] - two
    assert muon["memory_optimizer"] == 2 * two + one


def test_a_world_size_is_needed_for_memory():
    shown = show(TRAIN / "7b.toml")
    memory = {q.name: q for q in shown.quantities if q.name.startswith("memory_")}
    assert memory["memory_parameters"].value is None and "--world-size" in memory["memory_parameters"].how


def test_each_cross_attention_block_is_its_own_unit():
    got = derived(TRAIN / "vlm_7b_siglip2_cross_attn.toml", 8)
    block = 1_946_222_592 // 8  # eight cross-attention blocks, each larger than a text block
    assert got["memory_reduce_scatter"] == 4 * block
    assert got["memory_gathered"] == (2 * 525_336_576 + 4096 + 2 * block) * 2
