"""KempnerForge's JobConfig (TOML), as of KempnerForge commit 089fbbd."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from .. import Family
from .examples import EXAMPLES
from .rules import RULES

DEFAULT_ADAPTER = {"type": "mlp_2layer", "hidden_dim": 0, "activation": "gelu"}


def resolve(config: dict[str, Any]) -> None:
    """Derived defaults: kv heads follow n_heads; a VLM run gets the default adapter."""
    model = config.get("model")
    if isinstance(model, dict) and model.get("n_kv_heads") is None and isinstance(model.get("n_heads"), int):
        model["n_kv_heads"] = model["n_heads"]
    if isinstance(config.get("vlm"), dict) and "adapter" not in config:
        config["adapter"] = dict(DEFAULT_ADAPTER)


FAMILY = Family(
    name="kempnerforge",
    description="KempnerForge JobConfig: TOML training-run configs (dense, MoE and VLM).",
    schema_file=files("trainspec") / "schemas" / "kempnerforge" / "job.schema.json",
    model="trainspec.generated.kempnerforge:JobConfig",
    rules=RULES,
    examples=EXAMPLES,
    trusted_schema=True,  # tests/test_schema.py checks it against the meta-schema
    formats=frozenset({"toml", "json", "yaml"}),
    resolve=resolve,
)
