"""KempnerForge's derived defaults: values that follow from other fields once the schema's defaults are in."""

from __future__ import annotations

from typing import Any

DEFAULT_ADAPTER = {"type": "mlp_2layer", "hidden_dim": 0, "activation": "gelu"}


def resolve(config: dict[str, Any]) -> None:
    """Derived defaults: an explicit null n_kv_heads follows n_heads (absent is the schema's 32, as
    KempnerForge keeps it); a VLM run gets the default adapter."""
    model = config.get("model")
    if isinstance(model, dict) and model.get("n_kv_heads") is None and isinstance(model.get("n_heads"), int):
        model["n_kv_heads"] = model["n_heads"]
    if isinstance(config.get("vlm"), dict) and "adapter" not in config:
        config["adapter"] = dict(DEFAULT_ADAPTER)
