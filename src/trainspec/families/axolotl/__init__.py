"""Axolotl's config (YAML): one release, 0.18.0, drafted from its config classes and curated.

`schema/axolotl/config.schema.json` was drafted by `tools/draft_schema.py` from
`axolotl.utils.schemas.config.AxolotlInputConfig` and then curated (descriptions for
people, the header); `tools/family_drift.py` keeps it and the classes together. The loader
reads YAML with PyYAML's safe loader and validates with pydantic in lax mode, ignoring keys
it does not know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainspec.spec.family import Family
from trainspec.spec.lazy import LazyMapping
from trainspec.spec.resources import schema_dir
from trainspec.spec.versions import fold_versions, release_fields

from .aliases import NOTICES as ALIAS_NOTICES
from .aliases import migrate_aliases
from .fsdp_prefix import NOTICES as FSDP_PREFIX_NOTICES
from .fsdp_prefix import migrate_fsdp_prefix
from .layout import LAYOUT, derive
from .migrations import LEGACY_KEYS, NOTICES, migrate_keys
from .overrides import apply_overrides
from .rules import RULES
from .takes import loader_takes_0_18_0
from .unmirrored import PLUGIN_SETTINGS, UNMIRRORED

if TYPE_CHECKING:
    from trainspec.spec.examples import Example

SCHEMAS = schema_dir() / "axolotl"


def examples() -> dict[str, Example]:
    """Each rule's example (read by `explain`, the docs and the tests, never by a check)."""
    from .examples import EXAMPLES

    return EXAMPLES


FAMILY = Family(
    name="axolotl",
    description="Axolotl fine-tuning config (YAML).",
    **release_fields(SCHEMAS),
    model="trainspec.families.axolotl.model:AxolotlConfig",
    rules=RULES,
    examples=LazyMapping(examples),
    trusted_schema=True,  # tests/test_schema.py checks it against the meta-schema
    formats=frozenset({"yaml"}),
    migrations=(migrate_keys, migrate_fsdp_prefix, migrate_aliases),
    notices={**NOTICES, **FSDP_PREFIX_NOTICES, **ALIAS_NOTICES},
    legacy_keys=LEGACY_KEYS,
    loader_overrides=apply_overrides,
    loader_yaml="1.1",  # `axolotl.cli.config.load_cfg` reads the file with PyYAML's safe_load
    loader_takes=loader_takes_0_18_0,
    distribution="axolotl",  # pip install axolotl: its release picks the version (trainspec.families.installed)
    layout=LAYOUT,
    derive=derive,
    docs_url="https://docs.axolotl.ai/docs/config-reference.html",
    unmirrored={name: reason for name, (_, reason) in {**UNMIRRORED, **PLUGIN_SETTINGS}.items()},
)

FAMILIES = fold_versions(FAMILY, SCHEMAS)
"""Every Axolotl version trainspec follows, oldest first; the plain name selects the newest."""
