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

from typing import TYPE_CHECKING, Any

from trainspec.spec import __version__ as __version__
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.errors import ConfigError, ConfigWarning, TrainspecError
from trainspec.spec.family import Family
from trainspec.spec.rules import Violation, rule

if TYPE_CHECKING:
    from trainspec.api import check, load
    from trainspec.layouts.planner import plan
    from trainspec.layouts.provenance import show

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
    "check": "api",
    "load": "api",
    "plan": "layouts.planner",
    "show": "layouts.provenance",
    "sweep": "engine.sweeper",
}


def __getattr__(name: str) -> Any:
    """`check`, `load`, `plan`, `show` and `sweep` import the checking pipeline on first use, so the command
    line starts (and handles Ctrl-C) before any of it is imported."""
    if name in _ENTRY_POINTS:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_ENTRY_POINTS[name]}"), name)
    raise AttributeError(f"module 'trainspec' has no attribute {name!r}")
