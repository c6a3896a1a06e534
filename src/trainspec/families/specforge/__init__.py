"""SpecForge's run config (YAML/JSON), as `specforge/config/schema.py` defined it on 2026-07-21."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from ...paths import format_path
from .. import Family
from .examples import EXAMPLES
from .migrations import LEGACY, NOTICES, migrate_legacy
from .normalize import normalize
from .rules import RULES


def world_size_from_config(config: dict[str, Any]) -> tuple[int, str] | None:
    """The trainer world size the config plans for; a producer runs as one process."""
    trainer = config.get("deployment", {}).get("trainer", {})
    nnodes, nproc = trainer.get("nnodes"), trainer.get("nproc_per_node")
    if config.get("training", {}).get("role") == "producer":
        return 1, "world size 1: training.role = \"producer\" runs as a single process"
    if not isinstance(nnodes, int) or not isinstance(nproc, int):
        return None
    return nnodes * nproc, (f"world size {nnodes * nproc} from deployment.trainer.nnodes × nproc_per_node "
                            f"= {nnodes} × {nproc}")


FAMILY = Family(
    name="specforge",
    description="SpecForge run config: speculative-decoding draft training (YAML/JSON).",
    schema_file=files("trainspec") / "schemas" / "specforge" / "run.schema.json",
    model="trainspec.families.specforge.model:RunConfig",
    rules=RULES,
    examples=EXAMPLES,
    trusted_schema=True,  # tests/test_schema.py checks it against the meta-schema
    formats=frozenset({"yaml", "json"}),
    migrations=(migrate_legacy,),
    notices=NOTICES,
    legacy_keys={f"training.{key}": format_path(path) for key, path in LEGACY.items()},
    normalize=normalize,
    world_size_from_config=world_size_from_config,
)
