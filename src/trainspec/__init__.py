"""trainspec: validate ML training-run configs against one canonical schema per family.

import trainspec
from trainspec.generated.kempnerforge import JobConfig

cfg = trainspec.load("job.toml", model=JobConfig, world_size=8)   # a JobConfig, or ConfigError
for d in trainspec.check("job.toml"):                               # every problem at once
    print(d.line, d.rule, d.message)
"""

from typing import TYPE_CHECKING, Any

from .diagnostics import Diagnostic, Severity
from .errors import ConfigError, ConfigWarning, TrainspecError
from .families import Family
from .rules import Violation, rule

if TYPE_CHECKING:
    from .api import check, load

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
    "rule",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """`check` and `load` import the checking pipeline on first use, so the command line starts (and
    handles Ctrl-C) before any of it is imported."""
    if name in ("check", "load"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'trainspec' has no attribute {name!r}")
