"""A rule's example: a config that breaks the rule, and the same config fixed.

Families keep theirs as data beside their rules (`Family.examples`, rule id
-> Example); the engine's own ids keep theirs in `engine_rules`. Both are
run the way a user would run them (`trainspec check FILE OPTIONS`), by
`trainspec explain`, by the reference-docs generator and by a test, so an
example cannot drift away from what its rule really does.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass, replace

from .diagnostics import Diagnostic


@dataclass(frozen=True)
class Example:
    """`bad` breaks the rule, `good` is the fix; both are whole files in `fmt`.

    `options` are `trainspec check` options used for both runs (e.g. a world
    size); `fixed_options`, when given, replace them for the fixed run, for
    rules whose fix is on the command line. `bad=None` means the file does
    not exist; `filename` names the bad file when its name is the problem.
    """

    bad: str | None
    good: str
    fmt: str = "toml"
    options: tuple[str, ...] = ()
    fixed_options: tuple[str, ...] | None = None
    filename: str = ""

    def file(self, fixed: bool) -> str:
        default = "example." + ("yaml" if self.fmt == "yaml" else self.fmt)
        return default if fixed or not self.filename else self.filename

    def argv(self, fixed: bool) -> list[str]:
        options = self.fixed_options if fixed and self.fixed_options is not None else self.options
        return [self.file(fixed), *options]

    def command(self, fixed: bool) -> str:
        return "trainspec check " + shlex.join(self.argv(fixed))


def run(example: Example, fixed: bool) -> list[Diagnostic]:
    """What `trainspec check` says about the bad (or fixed) file, sorted, with file names as shown."""
    from .commands.check import diagnostics_for

    text = example.good if fixed else example.bad
    with tempfile.TemporaryDirectory(prefix="trainspec-example-") as tmp:
        name, *options = example.argv(fixed)
        path = os.path.join(tmp, name)
        if text is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        found = diagnostics_for([path, *options])
    return [replace(d, file=name) if d.file == path else d for d in found]
