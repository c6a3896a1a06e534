"""What `trainspec show` derives from a KempnerForge config: sizes of the model it builds and, with a
layout, data parallelism, tokens per step and memory per rank (docs/plan.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ...layout import Quantity
from .build import GROUPS, Model, build
from .layout import DEGREES, ffn_hidden

PARAM_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 2}
"""Bytes per value of the master weights (reference §9: FP8 is a compute mode over bfloat16 weights)."""
OPTIMIZER_STATES = {"adamw": 2, "schedule_free_adamw": 2, "lion": 1, "muon": 1}
"""Values of optimizer state kept per parameter: AdamW's two moments, schedule-free AdamW's z and second
moment, Lion's and Muon's one momentum."""

GROUP_HOW = {
    "embedding": "token embedding, vocab_size·dim",
    "attention": "q, k, v, o projections of every block (MoT: one copy per modality)",
    "mlp": "dense MLPs: 3·dim·ffn (silu) or 2·dim·ffn (gelu, relu) per layer (MoT: one copy per modality)",
    "experts": "routed experts of MoE layers and MoMa's per-modality experts, each an MLP of the expert width",
    "shared_expert": "one shared expert per MoE layer, whatever model.moe_shared_experts > 0 says",
    "router": "router gates (dim·experts), plus the expert bias of sigmoid_topk",
    "norms": "block and final norms (layernorm: weight and bias), qk-norms (2·head_dim per layer)",
    "head": "output head, vocab_size·dim (none when tied)",
    "cross_attention": "cross-attention blocks, one per vlm.cross_attention_every_n_layers layers",
    "adapter": "vision adapter Linears, with biases",
    "vision_encoder": "vision encoder",
}


def parameter_quantities(built: Model) -> list[Quantity]:
    """The total as built, by module group, trainable and frozen, and what could not be counted."""
    missing = f"; not counted: {', '.join(built.not_counted)}" if built.not_counted else ""
    out = [
        Quantity(
            "parameters",
            built.total(),
            "",
            f"every parameter KempnerForge builds for this config (module by module, exact){missing}",
        )
    ]
    groups = built.by_group()
    out += [Quantity(f"parameters_{g}", groups[g], "", GROUP_HOW[g]) for g in GROUPS if g in groups]
    out += [Quantity(f"parameters_{g}", None, "", f"not counted: {why}") for g, why in built.not_counted.items()]
    out.append(Quantity("parameters_trainable", built.total(True), "", "requires_grad after the build's freeze specs"))
    out.append(
        Quantity(
            "parameters_frozen",
            built.total(False),
            "",
            "frozen at build (vlm.freeze; MoT's unused final norm): no gradient, no optimizer state",
        )
    )
    return out


def resolved_degrees(config: Mapping[str, Any], world_size: int | None) -> dict[str, int] | None:
    """The six degrees with dp_shard = -1 resolved; None when no world size resolves it."""
    dist = dict(config["distributed"])
    if dist["dp_shard"] == -1:
        other = math.prod(dist[d] for d in DEGREES if d != "dp_shard")
        if world_size is None or world_size % other:
            return None
        dist["dp_shard"] = world_size // other
    return {d: dist[d] for d in DEGREES}


def derive(config: Mapping[str, Any], world_size: int | None) -> list[Quantity]:
    """Head dim, kv heads, FFN width, parameter counts; with a layout, data-parallel degree, tokens per step
    and memory per rank (docs/plan.md)."""
    model, train = config["model"], config["train"]
    built = build(config)
    total = built.total()
    routed = sum(t.numel for t in built.tensors if t.ep)
    out = [
        Quantity("head_dim", model["dim"] // model["n_heads"], "", "model.dim / model.n_heads"),
        Quantity("n_kv_heads_effective", model["n_kv_heads"] or model["n_heads"], "", "model.n_kv_heads"),
        Quantity("ffn_hidden", ffn_hidden(model), "", "model.ffn_hidden_dim, else 256·⌈⌊4·dim·2/3·multiplier⌋/256⌉"),
        *parameter_quantities(built),
    ]
    degrees = resolved_degrees(config, world_size)
    if degrees is None:
        why = "needs a world size (distributed.dp_shard = -1): pass --world-size"
        if world_size is not None:
            why = f"distributed.dp_shard = -1 does not resolve at world size {world_size}"
        names = ("data_parallel", "tokens_per_step", "memory_parameters", "memory_gradients", "memory_optimizer")
        return [*out, *(Quantity(n, None, "", why) for n in names)]
    g = degrees
    dp = g["dp_replicate"] * g["dp_shard"]
    tokens = train["batch_size"] * train["seq_len"] * train["grad_accum_steps"] * dp
    model_parallel = g["tp"] * g["pp"]
    shard = g["dp_shard"] * g["cp"]
    per_rank = (total - routed) / (model_parallel * shard) + routed / (model_parallel * g["ep"] * shard)
    width = PARAM_BYTES[train["mixed_precision"]]
    states = OPTIMIZER_STATES.get(config["optimizer"]["name"])
    sharding = "÷ (tp·pp·dp_shard·cp), routed experts also ÷ ep"
    return [
        *out,
        Quantity("data_parallel", dp, "", "dp_replicate · dp_shard"),
        Quantity("tokens_per_step", tokens, "", "train.batch_size · seq_len · grad_accum_steps · data_parallel"),
        Quantity("memory_parameters", round(per_rank * width), "bytes", f"parameters {sharding} · {width} bytes"),
        Quantity("memory_gradients", round(per_rank * width), "bytes", f"as the parameters ({width} bytes each)"),
        Quantity(
            "memory_optimizer",
            None if states is None else round(per_rank * width * states),
            "bytes",
            f"{states} state value(s) per parameter · {width} bytes"
            if states is not None
            else f"optimizer {config['optimizer']['name']!r} keeps state trainspec does not know",
        ),
    ]
