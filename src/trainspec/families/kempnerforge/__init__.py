"""KempnerForge's JobConfig (TOML), as of KempnerForge commit 089fbbd."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ...resources import schema_dir
from .. import Family
from .examples import EXAMPLES, EXAMPLES_5666D0D
from .layout import LAYOUT, derive
from .precision import device_checks
from .rules import RULES
from .rules_5666d0d import RULES as RULES_5666D0D
from .rules_5666d0d import SCHEMA_RULE_DOCS as SCHEMA_RULE_DOCS_5666D0D

DEFAULT_ADAPTER = {"type": "mlp_2layer", "hidden_dim": 0, "activation": "gelu"}


def resolve(config: dict[str, Any]) -> None:
    """Derived defaults: an explicit null n_kv_heads follows n_heads (absent is the schema's 32, as
    KempnerForge keeps it); a VLM run gets the default adapter."""
    model = config.get("model")
    if isinstance(model, dict) and model.get("n_kv_heads") is None and isinstance(model.get("n_heads"), int):
        model["n_kv_heads"] = model["n_heads"]
    if isinstance(config.get("vlm"), dict) and "adapter" not in config:
        config["adapter"] = dict(DEFAULT_ADAPTER)


def loader_conversion(types: frozenset[str], value: Any) -> tuple[bool, Any]:
    """What KempnerForge's own value conversion makes of a value for a field of these JSON types
    (reference §2.5): floats truncate into integer fields, integer text is read, any value is kept in
    a text field, a single value is wrapped into an array."""
    if "string" in types:
        return True, value
    if isinstance(value, bool) and "integer" in types:
        return True, value  # kept as a boolean: true acts as 1
    if isinstance(value, float) and "number" in types:
        return True, value  # NaN and infinity pass its bound checks
    if "integer" in types:
        if isinstance(value, float) and math.isfinite(value):
            return True, int(value)
        if isinstance(value, str):
            try:
                return True, int(value)
            except ValueError:
                return False, None
    if "number" in types and isinstance(value, (int, str)):
        try:
            return True, float(value)
        except ValueError:
            return False, None
    if "boolean" in types and not isinstance(value, (dict, list)):
        return True, value.lower() in ("true", "1", "yes") if isinstance(value, str) else bool(value)
    if "array" in types and not isinstance(value, list):
        return True, [value]
    return False, None


def loader_overrides(family: Any, config: dict[str, Any], overrides: Any) -> tuple[dict[str, Any] | None, list[Any]]:
    """KempnerForge builds the [vlm] variant from the file; a command-line `vlm.arch` changes only the string
    (reference §12 Q13): the merged config is judged with the file's arch, which keeps deciding the field set
    and the token budgets. None when no override switches the arch (nothing to judge apart)."""
    from ...document import Document
    from ...overrides import apply_overrides

    written = config.get("vlm", {}).get("arch") if isinstance(config.get("vlm"), dict) else None
    doc = Document("", "data", "", config, dict)
    apply_overrides(doc, list(overrides), family.schema)
    merged_vlm = doc.data.get("vlm")
    if written is None or not isinstance(merged_vlm, dict) or merged_vlm.get("arch") == written:
        return None, []
    merged_vlm["arch"] = written
    return doc.data, []


SCHEMA_RULE_DOCS = {
    "adapter-type-registered": "`adapter.type` must name a registered adapter (mlp_2layer, linear).\n\n"
    "KempnerForge looks the name up in its adapter registry when it loads the config.",
    "betas-range": "`optimizer.betas` must be exactly two numbers, each at least 0 and below 1.\n\n"
    "KempnerForge reads only the first two and compares them with the range; trainspec also refuses a third.",
    "dataset-source-location": "Every `[[data.datasets]]` entry needs a `path` or an `hf_name`.\n\n"
    "An entry with neither has nothing to read.",
    "dp-shard-domain": "`distributed.dp_shard` is -1 (every rank left after the other degrees) or at least 1.",
    "vision-encoder-type-registered": "`vision_encoder.type` must name a registered encoder (random, siglip2, "
    "clip).\n\nKempnerForge looks the name up in its encoder registry when it loads the config.",
    "vlm-arch-fields": "Which keys `[vlm]` takes depends on `vlm.arch`: a key of another architecture is "
    "unknown.\n\nThe common keys are arch, max_text_len, freeze, freeze_schedule and module_patterns; "
    "cross_attention adds cross_attention_*, mot adds mot_*.",
    "vlm-arch-registered": "`vlm.arch` must name a registered VLM architecture (joint_decoder, cross_attention, mot).",
}


FAMILY = Family(
    name="kempnerforge",
    description="KempnerForge JobConfig: TOML training-run configs (dense, MoE and VLM).",
    version="089fbbd",
    released="2026-05-12",
    follows="KempnerForge 089fbbd (2026-05-12)",
    schema_file=schema_dir() / "kempnerforge" / "job.schema.json",
    model="trainspec.generated.kempnerforge:JobConfig",
    rules=RULES,
    examples=EXAMPLES,
    schema_rule_docs=SCHEMA_RULE_DOCS,
    file_globs=("**/configs/train/*.toml", "**/configs/model/*.toml"),
    checks_file_before_overrides=True,
    trusted_schema=True,  # tests/test_schema.py checks it against the meta-schema
    formats=frozenset({"toml"}),  # KempnerForge reads TOML only
    resolve=resolve,
    loader_conversion=loader_conversion,
    loader_overrides=loader_overrides,
    layout=LAYOUT,
    derive=derive,
    device_checks=device_checks,
)

POOLING_DEFAULTS_5666D0D = {"pool_window": 2, "pool_heads": 16}


def resolve_5666d0d(config: dict[str, Any]) -> None:
    """As `resolve`; the default adapter of a VLM run also has 5666d0d's pooling fields."""
    defaulted = isinstance(config.get("vlm"), dict) and "adapter" not in config
    resolve(config)
    if defaulted:
        config["adapter"].update(POOLING_DEFAULTS_5666D0D)


FAMILY_5666D0D = replace(
    FAMILY,
    version="5666d0d",
    released="2026-06-30",
    follows="KempnerForge 5666d0d (2026-06-30)",
    schema_file=schema_dir() / "kempnerforge" / "job@5666d0d.schema.json",
    model="trainspec.generated.kempnerforge_5666d0d:JobConfig",
    rules=RULES_5666D0D,
    examples=EXAMPLES_5666D0D,
    schema_rule_docs={**SCHEMA_RULE_DOCS, **SCHEMA_RULE_DOCS_5666D0D},
    resolve=resolve_5666d0d,
)

FAMILIES = (FAMILY, FAMILY_5666D0D)
"""Every KempnerForge version trainspec follows, oldest first; the plain name selects the newest."""
