"""SpecForge's run config (YAML/JSON): its oldest version written out, the later ones folded from it.

The oldest is `specforge/config/schema.py` as of 2026-07-21; `schema/specforge/versions.json`
lists the versions, each later one its base plus its `Changes` (`version_<version>.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainspec.spec.family import Family
from trainspec.spec.lazy import LazyMapping
from trainspec.spec.paths import format_path
from trainspec.spec.resources import schema_dir
from trainspec.spec.versions import fold_versions, release_fields
from trainspec.spec.wording import show

from .layout import LAYOUT, derive
from .migrations import LEGACY, NOTICES, migrate_legacy
from .normalize import normalize
from .overrides import apply_overrides
from .rules import RULES

if TYPE_CHECKING:
    from trainspec.spec.examples import Example

SCHEMAS = schema_dir() / "specforge"


def examples() -> dict[str, Example]:
    """Each rule's example (read by `explain`, the docs and the tests, never by a check)."""
    from .examples import EXAMPLES

    return EXAMPLES


def world_size_from_config(config: dict[str, Any]) -> tuple[int, str] | None:
    """The trainer world size the config plans for; a producer runs as one process."""
    trainer = config.get("deployment", {}).get("trainer", {})
    nnodes, nproc = trainer.get("nnodes"), trainer.get("nproc_per_node")
    if config.get("training", {}).get("role") == "producer":
        return 1, 'world size 1: training.role = "producer" runs as a single process'
    if not isinstance(nnodes, int) or not isinstance(nproc, int):
        return None
    size = nnodes * nproc
    return (
        size,
        f"world size {show(size)} from deployment.trainer.nnodes × nproc_per_node = {show(nnodes)} × {show(nproc)}",
    )


SCHEMA_RULE_DOCS = {
    "deployment-disaggregated-required": "`deployment.mode: disaggregated` needs a `deployment.disaggregated` "
    "section: the producer and consumer need its control directory and transfer backend.",
    "deployment-disaggregated-needs-mode": "A `deployment.disaggregated` section is only used when "
    "`deployment.mode` is `disaggregated`; with any other mode, remove it or set the mode.",
    "disaggregated-control-dir-nonempty": "`deployment.disaggregated.control_dir` must not be empty or blank: "
    "the launch references, manifest and lifecycle markers live beneath it.",
    "capture-devices-unique": "A capture server's `cuda_visible_devices` lists at least one device and none twice.",
    "managed-trainer-devices-unique": "`managed_local.trainer_cuda_visible_devices` lists at least one "
    "device and none twice.",
}


FAMILY = Family(
    name="specforge",
    description="SpecForge run config: speculative-decoding draft training (YAML/JSON).",
    **release_fields(SCHEMAS),
    model="trainspec.families.specforge.model:RunConfig",
    rules=RULES,
    examples=LazyMapping(examples),
    trusted_schema=True,  # tests/test_schema.py checks it against the meta-schema
    formats=frozenset({"yaml", "json"}),
    migrations=(migrate_legacy,),
    notices=NOTICES,
    file_globs=("**/examples/configs/*.yaml",),
    schema_rule_docs=SCHEMA_RULE_DOCS,
    legacy_keys={f"training.{key}": format_path(path) for key, path in LEGACY.items()},
    normalize=normalize,
    world_size_from_config=world_size_from_config,
    checks_file_before_overrides=True,
    loader_format=lambda name: "yaml" if name.endswith((".yaml", ".yml")) else "json",  # case-sensitive upstream
    loader_overrides=apply_overrides,
    layout=LAYOUT,
    derive=derive,
    loader_yaml="1.1",  # SpecForge reads YAML with PyYAML's safe loader, then validates with pydantic (lax)
    distribution="specforge",  # pip install specforge: its release picks the version (trainspec.families.installed)
)

FAMILIES = fold_versions(FAMILY, SCHEMAS)
"""Every SpecForge version trainspec follows, oldest first; the plain name selects the newest."""
