"""SpecForge's run config (YAML/JSON)."""

from __future__ import annotations

from importlib.resources import files

from .. import Family

FAMILY = Family(
    name="specforge",
    description="SpecForge run config: speculative-decoding draft training (YAML/JSON).",
    schema_file=files("trainspec") / "schemas" / "specforge" / "run.schema.json",
    model="trainspec.generated.specforge:RunConfig",
    formats=frozenset({"yaml", "json"}),
)
