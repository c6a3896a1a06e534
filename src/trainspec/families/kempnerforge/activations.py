"""Bytes a KempnerForge training step keeps for backward on one rank (kempnerforge-build reference §5.4).

An estimate: the reference measured eager execution of one block on CPU (bf16, FlashAttention-style
attention); CUDA kernels, torch.compile, the allocator and routing imbalance change it. Activation
checkpointing is applied as the trainer really applies it: `full` wraps only `TransformerBlock`s (not
MoT or MoMa blocks, not cross-attention blocks), `selective` only `Attention` modules (not MoT's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .build import sequence_parallel, visual_tokens
from .layout import expert_ffn_hidden, ffn_hidden

MLP_BYTES = {"silu": 8, "gelu": 4, "relu": 2}
"""Bytes per token per FFN channel an MLP saves: SwiGLU's gate, up and product; gelu's input and output;
relu's output, shared with the down projection's input."""


@dataclass(frozen=True)
class Tokens:
    """Tokens of one micro-batch on one rank: in the residual stream (`t`), per sequence (`seq`), whose
    logits are computed (`out`); `how` says where the lengths come from."""

    batch: int
    seq: int
    out_seq: int
    how: str

    @property
    def t(self) -> int:
        return self.batch * self.seq


def tokens(config: Mapping[str, Any]) -> Tokens:
    """The residual length: train.seq_len for text; visual tokens + vlm.max_text_len for image-prefix VLMs
    (logits for the text only); vlm.max_text_len for cross-attention (§2.5)."""
    train, vlm = config["train"], config.get("vlm")
    batch = train["batch_size"]
    if vlm is None:
        return Tokens(batch, train["seq_len"], train["seq_len"], "train.batch_size × train.seq_len tokens")
    text = vlm["max_text_len"]
    if vlm["arch"] == "cross_attention":
        return Tokens(batch, text, text, "train.batch_size × vlm.max_text_len tokens (cross-attention: text only)")
    n_vis = visual_tokens(config)
    if n_vis is None:
        return Tokens(
            batch,
            train["seq_len"],
            text,
            "train.batch_size × train.seq_len tokens (the hub encoder's token count is not known offline)",
        )
    how = f"train.batch_size × ({n_vis} visual tokens + vlm.max_text_len) tokens, logits for the text only"
    return Tokens(batch, n_vis + text, text, how)


@dataclass(frozen=True)
class Activations:
    """Saved for backward over all layers of the rank (`saved`), the recompute of one layer during backward
    under checkpointing (`recompute`), the logits with cross-entropy's log-softmax (`logits`), and the
    logits' gradient, made at the start of the loss backward (`logits_gradient`). `uneven`: saved plus
    recompute if routing sent every token to one expert (None without MoE layers)."""

    saved: int
    recompute: int
    logits: int
    logits_gradient: int
    how: str
    uneven: int | None = None


def layer_bytes(
    config: Mapping[str, Any], moe: bool, tok: Tokens, tp: int, ep: int, uneven: bool = False
) -> tuple[int, int]:
    """(saved without checkpointing, of which attention internals a `selective` wrapper drops) of one layer;
    `uneven`: its MoE FFN with every expert padded to all the tokens (one expert takes them all)."""
    model, vlm = config["model"], config.get("vlm")
    d, h = model["dim"], model["n_heads"]
    kv, hd = model["n_kv_heads"] or h, d // h
    t = tok.t
    layernorm = model["norm_type"] == "layernorm"
    norms, const = (0, 16) if layernorm else (12 * d, 8)
    qk = 8 * d + 8 * kv * hd + 4 * h + 4 * kv if model["qk_norm"] else 0
    attention = 9 * d + 4 * h + qk
    arch = vlm["arch"] if vlm is not None else None
    act = model["activation"]
    if moe:
        mlp_tp, ffn = 0, moe_bytes(model, t, ep, uneven)
    elif arch == "moma":
        mlp_tp, ffn = 0, t * (MLP_BYTES[act] * expert_ffn_hidden(model) + 4 * d)
    else:
        mlp_tp, ffn = MLP_BYTES[act] * ffn_hidden(model), 0
    replicated = arch == "mot"  # tensor parallelism shards nothing of a MoT block
    split = 1 if replicated else tp
    if split > 1 and sequence_parallel(config):
        per_token = (attention + 9 * d + mlp_tp) / split + 4 * d
    else:
        per_token = (attention + mlp_tp) / split + norms + 9 * d + const
    mask = masked_attention(config, tok, h // split)
    dropped = (10 * d + 4 * h + qk) / split
    return math.ceil(t * per_token) + ffn + mask, math.ceil(t * dropped)


def moe_bytes(model: Mapping[str, Any], t: int, ep: int, uneven: bool = False) -> int:
    """A MoE FFN on the grouped path: every expert padded to the load of the busiest, M (balanced
    ⌈T·K/E⌉; `uneven`: T, the most one expert can get, as each token picks K different experts), the
    routed copies of the tokens, and (unpacked experts) the stacked copy of the rank's expert weights."""
    d, e, k = model["dim"], model["num_experts"], model["moe_top_k"]
    fe, silu = expert_ffn_hidden(model), model["activation"] == "silu"
    m = t if uneven else math.ceil(t * k / e)
    stacked = 0 if model.get("moe_packed_experts") else (6 if silu else 4) * (e // ep) * d * fe
    return 2 * e * m * (d + (4 if silu else 2) * fe) + 2 * t * k * d + stacked


def masked_attention(config: Mapping[str, Any], tok: Tokens, heads: int) -> int:
    """Packed documents and video frame masks build an explicit (S, S) mask per layer; the math kernel
    also materialises the attention probabilities."""
    model, data = config["model"], config.get("data") or {}
    mask = tok.batch * tok.seq**2 if data.get("pack_sequences") or config.get("video") is not None else 0
    probabilities = 2 * tok.batch * heads * tok.seq**2 if model["sdpa_backend"] == "math" else 0
    return mask + probabilities


def activations(config: Mapping[str, Any], tp: int, ep: int, layers: range, in_flight: int) -> Activations:
    """The rank's saved activations for the layers it holds, `in_flight` micro-batches of them at once."""
    model, train, vlm = config["model"], config["train"], config.get("vlm")
    tok = tokens(config)
    mode = train["activation_checkpointing"]
    arch = vlm["arch"] if vlm is not None else None
    e, f = model["num_experts"], model["moe_frequency"]
    full_applies = arch not in ("mot", "moma")
    selective_applies = arch != "mot"
    moe_layers = [i for i in layers if e > 0 and arch != "moma" and (i + 1) % f == 0]
    saved, recompute = _saved(config, tok, tp, ep, layers, moe_layers, mode, full_applies, selective_applies)
    uneven = None
    if moe_layers:
        uneven = sum(_saved(config, tok, tp, ep, layers, moe_layers, mode, full_applies, selective_applies, True))
    if arch == "cross_attention":  # cross-attention blocks are never checkpointed: about a dense block each
        every = config["vlm"]["cross_attention_every_n_layers"]
        blocks = sum(1 for i in layers if (i + 1) % every == 0)
        cross = blocks * layer_bytes({**config, "vlm": None}, False, tok, tp, ep)[0]
        saved += cross
        uneven = None if uneven is None else uneven + cross
    width = 4 if train["mixed_precision"] == "fp32" else 2
    n_logits = tok.batch * tok.out_seq * model["vocab_size"]
    logits = (2 * width + (4 if train["z_loss_weight"] > 0 else 0)) * n_logits
    applied = mode if (mode == "full" and full_applies) or (mode == "selective" and selective_applies) else "none"
    noop = f" ({mode} has no effect on {arch} blocks)" if applied != mode else ""
    how = f"activation checkpointing {applied}{noop}; {tok.how}"
    if in_flight > 1:
        how += f"; {in_flight} micro-batches in flight on the pipeline stage"
    return Activations(
        saved * in_flight,
        recompute,
        logits,
        4 * n_logits,  # measured: 4 bytes per logit at the start of the loss backward
        how,
        None if uneven is None else uneven + (in_flight - 1) * saved,
    )


def _saved(
    config: Mapping[str, Any],
    tok: Tokens,
    tp: int,
    ep: int,
    layers: range,
    moe_layers: list[int],
    mode: str,
    full_applies: bool,
    selective_applies: bool,
    uneven: bool = False,
) -> tuple[int, int]:
    """(saved for backward over `layers`, the recompute of one layer) under the checkpointing that applies."""
    saved = recompute = 0
    d = config["model"]["dim"]
    for i in layers:
        none, attention = layer_bytes(config, i in moe_layers, tok, tp, ep, uneven)
        if mode == "full" and full_applies:
            split = tp if tp > 1 and sequence_parallel(config) else 1
            saved += tok.t * 2 * d // split
            recompute = max(recompute, none)
        elif mode == "selective" and selective_applies:
            saved += none - attention
            recompute = max(recompute, attention)
        else:
            saved += none
    return saved, recompute
