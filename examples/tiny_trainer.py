"""A small real trainer on trainspec's typed KempnerForge config.

    torchrun --nproc_per_node=2 examples/tiny_trainer.py examples/tiny_kempnerforge.toml [-o key=value ...]

Every rank joins a gloo process group and loads the config with
`trainspec.distributed.load_verified` before building anything: a config that
does not load on some rank, does not fit the real world size, or differs
between ranks, stops every rank before the first step with trainspec's error
(exit code 2). Then it
trains a decoder-only transformer built from [model] with DDP on CPU, on
synthetic token sequences (arithmetic progressions modulo the vocabulary, so
the loss has something to learn), and rank 0 prints the loss.

Data parallelism only: every rank is a DDP replica (dp_shard and dp_replicate
alike); tp, pp, cp, ep > 1, MoE and VLM configs are refused, as are
optimizers other than AdamW and the wsd/rex schedules.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Callable
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import trainspec
import trainspec.distributed
from trainspec.families.kempnerforge.precision import master_dtype
from trainspec.generated.kempnerforge import JobConfig, ModelConfig, TrainConfig


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def norm(cfg: ModelConfig, dim: int) -> nn.Module:
    return RMSNorm(dim, cfg.norm_eps) if cfg.norm_type == "rmsnorm" else nn.LayerNorm(dim, eps=cfg.norm_eps)


def ffn_hidden(cfg: ModelConfig) -> int:
    """The reference's formula: 256·⌈⌊4·dim·2/3·multiplier⌋ / 256⌉ unless model.ffn_hidden_dim is set."""
    if cfg.ffn_hidden_dim is not None:
        return cfg.ffn_hidden_dim
    return 256 * math.ceil(int(4 * cfg.dim * 2 / 3 * cfg.ffn_dim_multiplier) / 256)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (rotate-half form) on (batch, heads, seq, head_dim)."""
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-b, a), dim=-1) * sin


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        assert cfg.n_kv_heads is not None  # absent means 32 (KempnerForge keeps its default), null means n_heads
        self.n_heads, self.n_kv_heads, self.head_dim = cfg.n_heads, cfg.n_kv_heads, cfg.dim // cfg.n_heads
        self.wq = nn.Linear(cfg.dim, cfg.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(cfg.n_heads * self.head_dim, cfg.dim, bias=False)
        self.q_norm = norm(cfg, self.head_dim) if cfg.qk_norm else nn.Identity()
        self.k_norm = norm(cfg, self.head_dim) if cfg.qk_norm else nn.Identity()

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.q_norm(self.wq(x).view(b, s, self.n_heads, self.head_dim)).transpose(1, 2)
        k = self.k_norm(self.wk(x).view(b, s, self.n_kv_heads, self.head_dim)).transpose(1, 2)
        v = self.wv(x).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        group = self.n_heads // self.n_kv_heads  # grouped-query attention: kv heads serve `group` query heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(b, s, -1))


ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"silu": F.silu, "gelu": F.gelu, "relu": F.relu}


class MLP(nn.Module):
    """SwiGLU for activation = "silu"; a plain two-layer MLP for gelu and relu."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        hidden = ffn_hidden(cfg)
        self.w1 = nn.Linear(cfg.dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, cfg.dim, bias=False)
        self.w3 = nn.Linear(cfg.dim, hidden, bias=False) if cfg.activation == "silu" else None
        self.act = ACTIVATIONS[cfg.activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.w1(x))
        return self.w2(h * self.w3(x) if self.w3 is not None else h)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.attention_norm, self.attention = norm(cfg, cfg.dim), Attention(cfg)
        self.mlp_norm, self.mlp = norm(cfg, cfg.dim), MLP(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Transformer(nn.Module):
    cos: torch.Tensor
    sin: torch.Tensor

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = norm(cfg, cfg.dim)
        self.output = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        head_dim = cfg.dim // cfg.n_heads
        freqs = cfg.rope_theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        angles = torch.outer(torch.arange(cfg.max_seq_len, dtype=torch.float32), freqs).repeat(1, 2)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=cfg.init_std)
        if cfg.tie_embeddings:
            self.output.weight = self.embedding.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        s = tokens.shape[1]
        cos, sin = self.cos[:s].to(self.embedding.weight.dtype), self.sin[:s].to(self.embedding.weight.dtype)
        x = self.embedding(tokens)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.output(self.norm(x))


def refuse_unsupported(cfg: JobConfig) -> None:
    """This trainer does data parallelism on dense text models only; say so instead of training something else."""
    d = cfg.distributed
    problems = [f"distributed.{n} = {v}" for n, v in (("tp", d.tp), ("pp", d.pp), ("cp", d.cp), ("ep", d.ep)) if v > 1]
    problems += [f"model.num_experts = {cfg.model.num_experts}"] if cfg.model.num_experts > 0 else []
    problems += ["a [vlm] section"] if cfg.vlm is not None else []
    problems += [f'optimizer.name = "{cfg.optimizer.name}"'] if cfg.optimizer.name != "adamw" else []
    problems += [f'scheduler.name = "{cfg.scheduler.name}"'] if cfg.scheduler.name in ("wsd", "rex") else []
    if problems:
        raise SystemExit(f"tiny_trainer supports dense, data-parallel AdamW runs only; not {', '.join(problems)}")


def lr_factor(cfg: JobConfig, step: int) -> float:
    """Linear warm-up, then the scheduler's decay to min_lr_ratio (cosine or linear; constant and none stay)."""
    s = cfg.scheduler
    if step < s.warmup_steps:
        return (step + 1) / s.warmup_steps
    if s.name in ("constant", "none"):
        return 1.0
    decay = s.decay_steps if s.decay_steps is not None else max(cfg.train.max_steps - s.warmup_steps, 1)
    progress = min((step - s.warmup_steps) / decay, 1.0)
    shape = 0.5 * (1 + math.cos(math.pi * progress)) if s.name == "cosine" else 1 - progress
    return s.min_lr_ratio + (1 - s.min_lr_ratio) * shape


def synthetic_batch(train: TrainConfig, vocab_size: int, generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """Sequences start + stride·t (mod vocab): predictable after two tokens, so the loss can fall."""
    start = torch.randint(0, vocab_size, (train.batch_size, 1), generator=generator)
    stride = torch.randint(1, 5, (train.batch_size, 1), generator=generator)
    tokens = (start + stride * torch.arange(train.seq_len + 1)) % vocab_size
    return tokens[:, :-1], tokens[:, 1:]


def loss_of(logits: torch.Tensor, targets: torch.Tensor, z_loss_weight: float) -> torch.Tensor:
    logits = logits.float()
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
    if z_loss_weight:
        loss = loss + z_loss_weight * torch.logsumexp(logits, dim=-1).pow(2).mean()
    return loss


def train(cfg: JobConfig, rank: int, group: dist.ProcessGroup) -> None:
    refuse_unsupported(cfg)
    torch.manual_seed(cfg.train.seed)  # the same initial weights on every rank
    model = Transformer(cfg.model).to(master_dtype(cfg.train.mixed_precision))
    ddp = DistributedDataParallel(model, process_group=group)
    forward = torch.compile(ddp) if cfg.train.compile_model else ddp
    o = cfg.optimizer
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=o.lr, betas=(o.betas[0], o.betas[1]), eps=o.eps, weight_decay=o.weight_decay
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_factor(cfg, step))
    generator = torch.Generator().manual_seed(cfg.train.seed * 1000 + rank)  # different data on every rank
    accum = cfg.train.grad_accum_steps
    for step in range(1, cfg.train.max_steps + 1):
        total = torch.zeros(())
        for micro in range(accum):
            inputs, targets = synthetic_batch(cfg.train, cfg.model.vocab_size, generator)
            with ddp.no_sync() if micro < accum - 1 else contextlib.nullcontext():
                loss = loss_of(forward(inputs), targets, cfg.train.z_loss_weight) / accum
                loss.backward()
            total += loss.detach().float()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.train.grad_clip_norm)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        if step == 1 or step % cfg.metrics.log_interval == 0 or step == cfg.train.max_steps:
            dist.all_reduce(total, group=group)  # every rank logs on the same steps, so this always matches
            if rank == 0:
                print(f"step {step} loss {total.item() / dist.get_world_size(group):.4f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", help="a KempnerForge TOML config")
    parser.add_argument("-o", "--override", action="append", default=[], help="key=value, as for trainspec check")
    args = parser.parse_args(argv)
    launched = trainspec.distributed.world_size()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    try:
        if rank == 0:
            print(f"world size {launched.size} (from {launched.source})", flush=True)
        try:
            cfg = trainspec.distributed.load_verified(
                args.config, family="kempnerforge", overrides=args.override, device="cpu"
            )
        except trainspec.ConfigError as exc:  # raised alike on every rank, so every rank stops here
            print(f"rank {rank}: {exc}", file=sys.stderr, flush=True)
            return 2
        # the config's timeout only exists once it is loaded, so training gets a group of its own
        group = dist.new_group(backend="gloo", timeout=timedelta(seconds=cfg.distributed.nccl_timeout_sec))
        train(cfg, rank, group)
        dist.barrier(group)  # no rank tears the group down while another still has gloo work in flight
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
