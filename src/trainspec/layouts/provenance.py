"""The resolved config, leaf by leaf with where each value came from, and what it implies (`trainspec show`).

A value comes from the file (file:line), an override (`override #k`), the
schema's default, or a family hook that derives it (normalize before
validation, resolve after defaults). The family's `derive` computes the
quantities a reader would otherwise work out by hand: head dim, parameter
count, memory per rank under the layout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path as FsPath
from typing import Any

from trainspec.engine.pipeline import as_overrides, world_sizes_of
from trainspec.engine.runner import Options, check_file
from trainspec.read.directives import directives_of
from trainspec.read.project import find_project
from trainspec.spec.codes import UNKNOWN_KEY, WORLD_SIZE_DERIVED
from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.family import Family
from trainspec.spec.layout_space import Quantity
from trainspec.spec.paths import Path, format_path, is_prefix, parse_path
from trainspec.spec.result import Outcome, Result, exit_status
from trainspec.spec.rules import ABSENT

SCHEMA_DEFAULT = "schema default"


@dataclass(frozen=True)
class Leaf:
    """One resolved value and its origin."""

    path: str
    value: Any
    origin: str


@dataclass
class Shown:
    """What `show` found: the leaves in config order, the derived quantities, and the check's diagnostics."""

    file: str
    family: Family | None
    world_size: int | None
    leaves: list[Leaf] = field(default_factory=list)
    quantities: list[Quantity] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    note: str = ""
    outcome: Outcome = Outcome.CHECKED
    world_size_from: str = ""
    """Where `world_size` came from, in words (`--world-size`, the file's directive, the project
    configuration, the config's own topology): a size shown without its source reads as a guess."""

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    @property
    def exit_status(self) -> int:
        return exit_status(self.outcome, self.ok)


def show(
    path: str | FsPath,
    *,
    family: str | Family | None = None,
    overrides: str | Iterable[str] = (),
    world_size: int | None = None,
    gpu: Device | None = None,
    use_project: bool = False,
) -> Shown:
    """The resolved config of one file with every leaf's origin and the family's derived quantities.

    Raises ValueError for a world size below 1; problems of the config are in `diagnostics`. One string
    is one override. A config that states its own world size (SpecForge's trainer topology) is shown at
    that size, and `note` says when `world_size` disagrees with it. `gpu`: the target GPU, for the rules
    that read it (`device.target`).
    """
    # as `trainspec check` takes --world-size (`use_project`: with the project configuration, as `check` reads it)
    options = Options(
        family=family,
        overrides=tuple(as_overrides(overrides)),
        world_sizes=world_sizes_of(world_size),
        fallback_sizes=world_size is None,
        sizes_given=world_size is not None,
        as_found=True,
        gpu=gpu,
        use_project=use_project,
    )
    result = check_file(str(path), options)
    shown = Shown(result.file, result.family, result.world_size, diagnostics=result.diagnostics, outcome=result.outcome)
    shown.world_size_from = _world_size_from(result, world_size, options if use_project else None)
    if result.family is None or result.config is None or result.document is None:
        return shown
    shown.leaves = list(leaves(result))
    shown.quantities, shown.note = quantities(result)
    if world_size is not None and result.world_size is not None and result.world_size != world_size:
        disagrees = (
            f"the world size {world_size} given disagrees with the {result.world_size} the config runs at; "
            f"shown at {result.world_size}"
        )
        shown.note = f"{shown.note}\n{disagrees}" if shown.note else disagrees
    return shown


def _world_size_from(result: Result, given: int | None, options: Options | None) -> str:
    """Where the size `result` was checked at came from, in the order a check takes it (docs/project.md)."""
    if result.world_size is None:
        return ""
    derived = [d.message for d in result.diagnostics if d.rule == WORLD_SIZE_DERIVED.id]
    if derived:
        return "the config's " + derived[0].partition(" from ")[2].split(";")[0]
    if given is not None:
        return "--world-size" if given == result.world_size else "the config's own topology, not the --world-size given"
    if result.document is not None and directives_of(result.document)[0].world_sizes:
        return "the file's directive"
    project = find_project(result.file) if options is not None else None
    if project is not None:
        entry = project.entry_for(result.file)
        if entry is not None and entry.settings.world_sizes:
            return f"the entry for {', '.join(entry.paths)} in {project.source.name}"
        return f"`world-size` in {project.source.name}"
    return ""


def leaves(result: Result) -> Iterator[Leaf]:
    """Every leaf of the resolved config with its origin."""
    assert result.family is not None and result.config is not None and result.document is not None
    doc, fam = result.document, result.family
    filled = fam.schema.fill_defaults(doc.data)
    for path, value in _walk(result.config, ()):
        origin = doc.origin(path)
        if _at(filled, path) != value:
            origin = _hook("resolve", fam.resolve)
        elif origin is None and doc.is_written(path):
            pos = doc.where(path)
            origin = f"{doc.file}:{pos.line}" if pos else doc.file
        elif origin is None:
            origin = SCHEMA_DEFAULT if _at(doc.data, path) is ABSENT else _hook("normalize", fam.normalize)
        yield Leaf(format_path(path), value, origin)


def quantities(result: Result) -> tuple[list[Quantity], str]:
    """The family's derived quantities, or why there are none (no hook, errors that make them meaningless)."""
    fam = result.family
    assert fam is not None and result.config is not None
    if fam.derive is None:
        return [], f"family {fam.id} derives no quantities"
    world_rules = {r.id for r in fam.rules if r.needs_world_size}
    unread = {*world_rules, UNKNOWN_KEY.id}  # a key the family does not know is one no quantity reads
    failing = [d.path for d in result.diagnostics if d.is_error and d.rule not in unread]
    withheld = "derived quantities are shown for a config without errors (world-size errors aside)"
    if () in failing:
        return [], withheld
    huge = next((p for p, v in _walk(result.config, ()) if type(v) is int and abs(v) >= 2**63), None)
    if huge is not None:  # products of such numbers overflow floats and have more digits than Python writes
        return [], f"derived quantities are not computed: `{format_path(huge)}` is beyond a 64-bit integer"
    try:
        found = fam.derive(result.config, result.world_size)
    except Exception as exc:  # a family hook must not take the command down
        if failing:  # a config with errors may well break the hook: nothing to report
            return [], withheld
        return [], f"the derive hook of family {fam.name} failed ({type(exc).__name__}: {exc}); please report it"
    if not failing:
        return found, ""
    kept = [q if _independent(q, failing) else _withheld(q, failing) for q in found]
    if all(q.value is None for q in kept):
        return [], withheld
    if kept == found:
        return kept, ""
    return kept, "a quantity derived from a value with errors is withheld (null, naming that value)"


def _independent(quantity: Quantity, failing: list[Path]) -> bool:
    """Whether the quantity reads none of the values with errors (nor a table holding one)."""
    if quantity.reads is None:
        return False
    reads = [parse_path(r) for r in quantity.reads]
    return not any(is_prefix(r, p) or is_prefix(p, r) for r in reads for p in failing)


def _withheld(quantity: Quantity, failing: list[Path]) -> Quantity:
    reads = [parse_path(r) for r in quantity.reads or ()]
    bad = [p for p in failing if not reads or any(is_prefix(r, p) or is_prefix(p, r) for r in reads)]
    named = ", ".join(sorted({format_path(p) for p in bad}))
    return replace(quantity, value=None, how=f"withheld: derived from {named}, where the config has an error")


def _hook(stage: str, hook: Callable[..., Any] | None) -> str:
    name = getattr(hook, "__qualname__", stage)
    return f"derived by the family's {stage} hook ({name})"


def _walk(value: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    """Leaves: scalars, lists of scalars, empty tables; lists of tables are walked item by item."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for n, item in enumerate(value):
            yield from _walk(item, (*path, n))
    else:
        yield path, value


def _at(data: Any, path: Sequence[str | int]) -> Any:
    for part in path:
        inside_list = isinstance(data, list) and isinstance(part, int) and part < len(data)
        if inside_list or (isinstance(data, dict) and part in data):
            data = data[part]
        else:
            return ABSENT
    return data
