"""SpecForge's own loading path, from the installed release, as a test oracle.

`specforge==0.2.0` is a test dependency installed with `--no-deps` (tools/setup-dev.sh): the package
pulls in torch, SGLang and transformers, but its loader module `specforge/config/schema.py` needs only
pydantic and the standard library. That one file is imported by its path, so the package's
`__init__` modules (and whatever they may import in a later release) never run.

`load` drives the path `specforge train --config FILE [OVERRIDES]` takes before anything starts
(`specforge/cli.py`, `specforge/launch_plan.py` of 0.2.0):

1. read: `Config.from_file` picks PyYAML's safe loader for a name ending in `.yaml`/`.yml`, JSON
   for anything else;
2. migrate the legacy `training.*` keys (`migrate_legacy_config`) and validate (`Config.model_validate`);
3. apply the dotted overrides (`apply_overrides`, which re-validates);
4. world size: the launcher validates `nnodes * nproc_per_node` (`Config.validate_world_size`);
   inside torchrun it takes `WORLD_SIZE`, which must equal that product for a trainer role, and a
   producer must not run as a multi-rank job (launch_plan.py, `build_launch_plan`).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

RELEASE = "0.2.0"
MODULE = "specforge/config/schema.py"


@cache
def schema_module() -> ModuleType | None:
    """The installed release's `specforge/config/schema.py`, imported from its file; None when not installed."""
    try:
        dist = metadata.distribution("specforge")
    except metadata.PackageNotFoundError:
        return None
    if dist.version != RELEASE:
        raise RuntimeError(f"the SpecForge oracle is specforge=={RELEASE}, but {dist.version} is installed")
    path = Path(str(dist.locate_file(MODULE)))
    name = "_specforge_config_schema_" + RELEASE.replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic resolves the module's postponed annotations through it
    spec.loader.exec_module(module)
    return module


def require() -> ModuleType:
    """The loader module; a test that needs it fails when it is not installed (the oracle is part of the
    suite, not an option: tools/setup-dev.sh installs it)."""
    import pytest

    module = schema_module()
    if module is None:
        pytest.fail(f"specforge=={RELEASE} is not installed (tools/setup-dev.sh installs it with --no-deps)")
    return module


@dataclass(frozen=True)
class Verdict:
    """What the loader did: `stage` is "" when it accepted, else where it refused ("read", "migrate",
    "validate", "overrides", "world-size"), with its message."""

    stage: str = ""
    message: str = ""

    @property
    def accepted(self) -> bool:
        return not self.stage


def load(path: str | Path, overrides: Sequence[str] = (), world_size: int | None = None, role: str = "") -> Verdict:
    """Run the file through SpecForge's loading path; `world_size` is torchrun's `WORLD_SIZE` (None: the
    launcher's plan, `nnodes * nproc_per_node`); `role` the `--role` given (a producer runs alone)."""
    from pydantic import ValidationError

    schema = require()
    stage = "file"
    try:
        config = schema.Config.from_file(str(path))
        stage = "overrides"
        if overrides:
            config = schema.apply_overrides(config, list(overrides))
        stage = "world-size"
        _world_size(config, world_size, role)
    except Exception as exc:  # the loader refuses with ValueError, pydantic's ValidationError, YAML or JSON errors
        if stage == "file":
            stage = (
                "validate" if isinstance(exc, ValidationError) else "read" if type(exc) is not ValueError else "migrate"
            )
        return Verdict(stage, f"{type(exc).__name__}: {exc}")
    return Verdict()


def _world_size(config: Any, world_size: int | None, role: str) -> None:
    """The launcher's world-size checks (launch_plan.py: `_trainer_command`, `build_launch_plan`)."""
    trainer = config.deployment.trainer
    planned = trainer.nnodes * trainer.nproc_per_node
    producer = (role or config.training.role) == "producer"
    if world_size is None:
        if not producer:
            config.validate_world_size(planned)
    elif producer:
        if world_size > 1:
            raise ValueError("producer must be a direct single process, not a multi-rank torchrun worker")
    else:
        if world_size != planned:
            raise ValueError(f"torchrun WORLD_SIZE={world_size} does not match deployment.trainer topology")
        config.validate_world_size(world_size)
