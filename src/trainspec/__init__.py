"""trainspec: validate ML training-run configs against one canonical schema per family.

import trainspec
from trainspec.generated.kempnerforge import JobConfig

cfg = trainspec.load("job.toml", model=JobConfig, world_size=8)   # a JobConfig, or ConfigError
for d in trainspec.check("job.toml"):                               # every problem at once
    print(d.line, d.rule, d.message)
trainspec.plan("job.toml", gpus=64)                                 # the layouts that pass at 64 GPUs
trainspec.sweep("job.toml", ["optimizer.lr=1e-4,3e-4"], world_size=[8, 16])   # every combination
trainspec.show("job.toml", world_size=8).quantities                 # parameter count, memory per rank
"""

from __future__ import annotations

from trainspec.spec import __version__ as __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a replayed check never needs it)
if TYPE_CHECKING:
    from typing import Any

    from trainspec.api import check, load
    from trainspec.layouts.planner import plan
    from trainspec.layouts.provenance import show
    from trainspec.spec.diagnostics import Diagnostic, Severity
    from trainspec.spec.errors import ConfigError, ConfigWarning, TrainspecError
    from trainspec.spec.family import Family
    from trainspec.spec.rules import Violation, rule

__all__ = [
    "ConfigError",
    "ConfigWarning",
    "Diagnostic",
    "Family",
    "Severity",
    "TrainspecError",
    "Violation",
    "check",
    "load",
    "plan",
    "rule",
    "show",
    "sweep",
]
_ENTRY_POINTS = {
    "ConfigError": "spec.errors",
    "ConfigWarning": "spec.errors",
    "Diagnostic": "spec.diagnostics",
    "Family": "spec.family",
    "Severity": "spec.diagnostics",
    "TrainspecError": "spec.errors",
    "Violation": "spec.rules",
    "rule": "spec.rules",
    "check": "api",
    "load": "api",
    "plan": "layouts.planner",
    "show": "layouts.provenance",
    "sweep": "engine.sweeper",
}


def __getattr__(name: str) -> Any:
    """`check`, `load`, `plan`, `show` and `sweep` import the checking pipeline on first use, so the command
    line starts (and handles Ctrl-C) before any of it is imported; the other names import their module of
    `spec` on first use, so a check answered from the result cache (`engine.cache_run`) imports none."""
    if name in _ENTRY_POINTS:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_ENTRY_POINTS[name]}"), name)
    raise AttributeError(f"module 'trainspec' has no attribute {name!r}")
