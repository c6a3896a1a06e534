"""A rule's example: a config that breaks the rule, and the same config fixed.

Families keep theirs as data beside their rules (`Family.examples`, rule id
-> Example); the engine's own ids take theirs from the families too. The
runner checks them the way a user would (`runner.run_example`), for
`trainspec explain`, the reference docs and a test, so an example cannot
drift away from what its rule really does. A check never reads them, so a family
gives them as a `lazy.LazyMapping`, built on first read: their modules (and this
one) are imported only by what shows them. This module is plain data: it imports
nothing of trainspec.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    """The options a check of an example runs with (as `--family`, `--world-size`, `--set`, `--gpu-memory`
    and `--gpu` give them)."""

    world_sizes: tuple[int, ...] = ()
    overrides: tuple[str, ...] = ()
    family: str | None = None
    gpu_memory: str = ""
    gpu: str = ""
    """The target GPU, as `--gpu` takes it (`h100`, `sm_90`)."""

    def argv(self) -> list[str]:
        family = ["--family", self.family] if self.family else []
        family += ["--gpu-memory", self.gpu_memory] if self.gpu_memory else []
        family += ["--gpu", self.gpu] if self.gpu else []
        sizes = ["--world-size", ",".join(map(str, self.world_sizes))] if self.world_sizes else []
        return family + sizes + [arg for override in self.overrides for arg in ("--set", override)]


@dataclass(frozen=True)
class Example:
    """`bad` breaks the rule, `good` is the fix; both are whole files in `fmt`.

    `run` holds the options of both checks (e.g. a world size); `fixed_run`,
    when given, replaces them for the fixed check, for rules whose fix is on
    the command line. `bad=None` means the file does not exist; `filename`
    names the bad file when its name is the problem.
    """

    bad: str | None
    good: str
    fmt: str = "toml"
    run: Run = Run()
    fixed_run: Run | None = None
    filename: str = ""

    def file(self, fixed: bool) -> str:
        default = f"example.{self.fmt}"
        return default if fixed or not self.filename else self.filename

    def options(self, fixed: bool) -> Run:
        return self.fixed_run if fixed and self.fixed_run is not None else self.run

    def command(self, fixed: bool) -> str:
        import shlex

        return "trainspec check " + shlex.join([self.file(fixed), *self.options(fixed).argv()])
