"""KempnerForge's JobConfig (TOML): its oldest version written out, the later ones folded from it.

`schema/kempnerforge/versions.json` lists the versions; each later one is its
base plus its `Changes` (`version_<version>.py`), folded by `trainspec.spec.versions`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainspec.spec.family import Family
from trainspec.spec.layout_space import MemoryEstimate, Quantity
from trainspec.spec.lazy import LazyMapping
from trainspec.spec.resources import schema_dir
from trainspec.spec.versions import fold_versions, release_fields

from .defaults import resolve
from .layout import LAYOUT
from .precision import NOTICES, device_checks
from .rules import RULES
from .rules_build import RULES as BUILD_RULES

if TYPE_CHECKING:
    from trainspec.spec.examples import Example

SCHEMAS = schema_dir() / "kempnerforge"


def examples() -> dict[str, Example]:
    """Each rule's example (read by `explain`, the docs and the tests, never by a check)."""
    from .examples import EXAMPLES
    from .examples_build import EXAMPLES as BUILD_EXAMPLES

    return {**EXAMPLES, **BUILD_EXAMPLES}


def memory_estimate(config: Mapping[str, Any], world_size: int) -> MemoryEstimate | None:
    """`memory.estimate`, imported when first asked (`show`, `plan`, `--gpu-memory`): a check needs none."""
    from .memory import estimate

    return estimate(config, world_size)


def derive(config: Mapping[str, Any], world_size: int | None) -> list[Quantity]:
    """`quantities.derive`, imported when first asked (`show`, `plan`)."""
    from .quantities import derive

    return derive(config, world_size)


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
    from trainspec.spec.document import Document
    from trainspec.spec.overrides import apply_overrides

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
    **release_fields(SCHEMAS),
    model="trainspec.generated.kempnerforge:JobConfig",
    rules=(*RULES, *BUILD_RULES),
    examples=LazyMapping(examples),
    notices=NOTICES,
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
    memory=memory_estimate,
)

FAMILIES = fold_versions(FAMILY, SCHEMAS)
"""Every KempnerForge version trainspec follows, oldest first; the plain name selects the newest."""
