"""What `trainspec show` derives from a KempnerForge config: sizes of the model it builds and, with a
layout, data parallelism, tokens per step and memory per rank (docs/plan.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from trainspec.spec.layout_space import Quantity

from .build import GROUPS, Model, build
from .layout import ffn_hidden
from .memory import estimate, resolved_degrees

MODEL = ("model",)
BUILT = ("model", "vlm", "vision_encoder", "adapter")
"""What the model KempnerForge builds is made of: its parameter counts read nothing else."""
LAID_OUT = ("model", "train", "optimizer", "distributed", "vlm", "vision_encoder", "adapter", "video")
RUN = (*LAID_OUT, "data.pack_sequences")
"""What a step's memory reads: all but the data sources (packed documents add an attention mask)."""

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
            reads=BUILT,
        )
    ]
    groups = built.by_group()
    out += [Quantity(f"parameters_{g}", groups[g], "", GROUP_HOW[g], BUILT) for g in GROUPS if g in groups]
    out += [Quantity(f"parameters_{g}", None, "", f"not counted: {why}", BUILT) for g, why in built.not_counted.items()]
    out.append(
        Quantity("parameters_trainable", built.total(True), "", "requires_grad after the build's freeze specs", BUILT)
    )
    out.append(
        Quantity(
            "parameters_frozen",
            built.total(False),
            "",
            "frozen at build (vlm.freeze; MoT's unused final norm): no gradient, no optimizer state",
            BUILT,
        )
    )
    return out


def derive(config: Mapping[str, Any], world_size: int | None) -> list[Quantity]:
    """Head dim, kv heads, FFN width, parameter counts; with a layout, data-parallel degree, tokens per step
    and the memory estimate per rank (docs/plan.md)."""
    model, train = config["model"], config["train"]
    built = build(config)
    out = [
        Quantity("head_dim", model["dim"] // model["n_heads"], "", "model.dim / model.n_heads", MODEL),
        Quantity("n_kv_heads_effective", model["n_kv_heads"] or model["n_heads"], "", "model.n_kv_heads", MODEL),
        Quantity(
            "ffn_hidden", ffn_hidden(model), "", "model.ffn_hidden_dim, else 256·⌈⌊4·dim·2/3·multiplier⌋/256⌉", MODEL
        ),
        *parameter_quantities(built),
    ]
    g = resolved_degrees(config, world_size)
    estimated = None if g is None else estimate(config, math.prod(g.values()), built)
    if g is None or estimated is None:
        why = "needs a world size (distributed.dp_shard = -1): pass --world-size"
        if world_size is not None:
            why = f"distributed.dp_shard = -1 does not resolve at world size {world_size}"
        names = ("data_parallel", "tokens_per_step", "memory_parameters", "memory_gradients", "memory_optimizer")
        return [*out, *(Quantity(n, None, "", why, RUN) for n in names)]
    dp = g["dp_replicate"] * g["dp_shard"]
    tokens = train["batch_size"] * train["seq_len"] * train["grad_accum_steps"] * dp
    labelled = [replace(q, how=f"estimate: {q.how}", reads=RUN) for q in estimated.parts]
    return [
        *out,
        Quantity("data_parallel", dp, "", "dp_replicate · dp_shard", ("distributed",)),
        Quantity(
            "tokens_per_step",
            tokens,
            "",
            "train.batch_size · seq_len · grad_accum_steps · data_parallel",
            ("train", "distributed"),
        ),
        *labelled,
        Quantity("memory_total", estimated.total, "bytes", "estimate: the sum of the memory_* parts above", RUN),
        *(replace(q, how=f"estimate: {q.how}", reads=RUN) for q in estimated.beside),
        Quantity("memory_assumptions", estimated.assumptions, "", "what every memory_* figure assumes", RUN),
    ]
