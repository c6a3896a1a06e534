"""trainspec: validate ML training-run configs against one canonical schema per family.

import trainspec
cfg = trainspec.load("job.toml", world_size=8)      # typed model, or ConfigError
for d in trainspec.check("job.toml"):                 # every problem at once
    print(d.line, d.rule, d.message)
"""

from .api import ConfigError, check, load
from .diagnostics import Diagnostic, Severity
from .families import Family
from .rules import Violation, rule

__all__ = ["ConfigError", "Diagnostic", "Family", "Severity", "Violation", "check", "load", "rule"]
__version__ = "0.1.0"
