"""trainspec: validate ML training-run configs against one canonical schema per family.

import trainspec
from trainspec.generated.kempnerforge import JobConfig

cfg = trainspec.load("job.toml", model=JobConfig, world_size=8)   # a JobConfig, or ConfigError
for d in trainspec.check("job.toml"):                               # every problem at once
    print(d.line, d.rule, d.message)
"""

from .api import check, load
from .diagnostics import Diagnostic, Severity
from .errors import ConfigError, ConfigWarning, TrainspecError
from .families import Family
from .rules import Violation, rule

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
