"""trainspec's packages are layers: the command line on top, `spec` (what a family may use) at the bottom.

`LAYERS` is the one statement of the layers: docs/architecture.md's drawing
is `drawing()` (`python tests/test_layers.py` prints it). The test reads every import from the source, those inside
functions too (a lazy import cannot hide a loop), except `if TYPE_CHECKING:`
blocks, and fails on:

- a module on no layer, or on two;
- an upward import: a module importing one of a higher layer (its own layer is fine);
- a family importing another family, or anything of trainspec outside `FAMILY_API`;
- a module outside a family importing one (the engine finds families through entry points);
- a script (`tools/`, `bench/`, `examples/`) importing the command line;
- an import cycle.
"""

from __future__ import annotations

import ast
import functools
import sys
import textwrap
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
GENERATED = ROOT / "generated"
"""The typed models: `trainspec.generated.*` in a source checkout (see `trainspec/generated/__init__.py`)."""
SCRIPTS = ("tools", "bench", "examples")

LAYERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("__main__.py",), "`python -m trainspec`"),
    (("cli/",), "argument parsing and exit codes; nothing below imports them"),
    (("editor/",), "the language server and editor set-up: what `check` reports, as LSP values and settings"),
    (("__init__.py", "api.py", "distributed.py"), "the public entry points (distributed: torch, at launch)"),
    (("layouts/",), "plan, show, plan --apply: the layouts that pass, where each value comes from"),
    (("engine/",), "checking: one file's pipeline, many files and their settings, sweeps, world-size hints"),
    (("report/",), "formatting results (text, JSON, GitHub, SARIF, JUnit); never producing them"),
    (("rules/",), "running a family's rules, where a finding points, the catalogue of every id, version changes"),
    (("write/",), "writing files safely: migrations and rewritten values"),
    (("read/",), "files into documents: the format readers, detection, project settings, directives, suppressions"),
    (("validate/",), "the schema check: the fast path, explanations, fields, other versions"),
    (("families/",), "the registry (families found through entry points) and the built-in families"),
    (("generated/",), "the typed models generated from the schemas"),
    (("spec/",), "what a family may use and every stage shares; imports nothing of trainspec above it"),
)
"""The layers, top first: (the packages or top-level files on the layer, relative to src/trainspec, what they
are). A module may import its own layer and the layers below. A name ending in `/` stands for everything in
that folder, so a new module takes its package's place without an edit here."""

FAMILY_API = ("spec/",)
"""What a family may import besides its own modules and its own generated models (`generated/<name>.py`,
`generated/<name>_<version>.py`): the bottom layer."""


def module_name(path: Path) -> str:
    if path.parent == GENERATED:
        return f"trainspec.generated.{path.stem}"
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def file_of(module: str, packages: set[str]) -> str:
    """Where a module lives, relative to src/trainspec, as LAYERS names it (`report/reporters.py`)."""
    parts = module.split(".")[1:]
    if module in packages:
        parts.append("__init__")
    return "/".join(parts) + ".py"


def matches(file: str, entry: str) -> bool:
    return fnmatchcase(file, entry + "*") if entry.endswith("/") else fnmatchcase(file, entry)


def layers_of(file: str) -> list[int]:
    """The indexes (0 = top) of the layers that hold `file`: one, unless the table is wrong."""
    return [n for n, (entries, _) in enumerate(LAYERS) if any(matches(file, e) for e in entries)]


def family_of(module: str) -> str | None:
    """The family a module belongs to (`trainspec.families.specforge.rules` -> specforge); the registry's own
    modules (`trainspec.families.installed`) belong to none."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] != "families":
        return None
    return parts[2] if (SRC / "trainspec" / "families" / parts[2]).is_dir() else None


def _skipped(tree: ast.AST) -> set[int]:
    """The nodes inside `if TYPE_CHECKING:` blocks (ids of this one tree's nodes; their `else` runs)."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _is_type_checking(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }


def _is_type_checking(test: ast.expr) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING`."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str, source: str, is_package: bool, modules: set[str]) -> set[str]:
    """The trainspec modules `name` imports. `from pkg import mod` imports `pkg.mod`; `pkg` itself only
    when a name imported from it is not a module."""
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(source)
    skipped = _skipped(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            inner = {f"{target}.{alias.name}" for alias in node.names}
            found.update(inner & modules)
            if inner - modules:
                found.add(target)
    return {m for m in found if m in modules}


def graph() -> dict[str, set[str]]:
    """Each module of trainspec, and each script, with the trainspec modules it imports (a fresh copy)."""
    return {name: set(targets) for name, targets in _graph().items()}


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    files = {module_name(p): p for p in [*(SRC / "trainspec").rglob("*.py"), *GENERATED.glob("*.py")]}
    scripts = {f"{p.parent.name}.{p.stem}": p for folder in SCRIPTS for p in (ROOT / folder).glob("*.py")}
    return {
        name: frozenset(imports_of(name, path.read_text(encoding="utf-8"), path.name == "__init__.py", set(files)))
        - {name}
        for name, path in {**files, **scripts}.items()
    }


def violations(edges: dict[str, set[str]]) -> list[str]:
    modules = {m for m in edges if m.startswith("trainspec")}
    names = modules | {t for targets in edges.values() for t in targets}
    packages = {n.rpartition(".")[0] for n in names} & names
    found = []
    for module in sorted(modules):
        places = layers_of(file_of(module, packages))
        if len(places) != 1:
            found.append(f"{module} is on {len(places) or 'no'} layers of the layer table (LAYERS): one, please")
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            found += _complaints(module, target, packages)
    return found + [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(edges)]


def _complaints(module: str, target: str, packages: set[str]) -> list[str]:
    """What is wrong with `module` importing `target`."""
    there = layers_of(file_of(target, packages))
    if not module.startswith("trainspec"):  # a script
        if there and there[0] <= 1:  # `__main__.py` and `cli/`
            return [f"{module} imports {target}, the command line: scripts use the library"]
        return []
    found = []
    here = layers_of(file_of(module, packages))
    if here and there and there[0] < here[0]:
        found.append(f"{module} imports {target}, a higher layer ({LAYERS[there[0]][1]})")
    mine, theirs = family_of(module), family_of(target)
    if theirs is not None and mine != theirs:
        who = "a family imports no other family" if mine else "the engine imports no family"
        found.append(f"{module} imports {target}: {who} (families are found through entry points)")
    if mine is not None and theirs is None and not _family_may_import(mine, file_of(target, packages)):
        found.append(f"{module} imports {target}, outside the family API (FAMILY_API)")
    return found


def _family_may_import(family: str, file: str) -> bool:
    own = (f"generated/{family}.py", f"generated/{family}_*.py")
    return any(matches(file, entry) for entry in FAMILY_API) or any(fnmatchcase(file, p) for p in own)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append([*sorted(group), sorted(group)[0]])
    return groups


def drawing(width: int = 36) -> str:
    """The layer drawing of docs/architecture.md, from LAYERS: the packages of each layer, then what they are."""
    lines = []
    for entries, says in LAYERS:
        names = ", ".join(entries)
        lines += [names.ljust(width) + says] if len(names) < width else [*textwrap.wrap(names, 100), " " * width + says]
    return "\n".join(lines)


def test_layers_go_one_way_and_nothing_loops():
    assert violations(graph()) == []


def test_type_checking_imports_are_not_edges():
    source = textwrap.dedent("""
        import typing
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .b import B
        else:
            from .c import C
        if typing.TYPE_CHECKING:
            from .d import D
        def f():
            from .e import E
    """)
    modules = {"trainspec.b", "trainspec.c", "trainspec.d", "trainspec.e"}
    assert imports_of("trainspec.a", source, False, modules) == {"trainspec.c", "trainspec.e"}


def test_a_module_imported_from_its_package_is_an_edge_to_the_module():
    source = "from . import b\nfrom . import c, Thing\n"
    found = imports_of("trainspec.pkg.a", source, False, {"trainspec.pkg", "trainspec.pkg.b", "trainspec.pkg.c"})
    assert found == {"trainspec.pkg.b", "trainspec.pkg.c", "trainspec.pkg"}


@pytest.mark.parametrize(
    ("module", "target", "complaint"),
    [
        ("trainspec.spec.schema", "trainspec.cli.check", "a higher layer (argument parsing"),
        ("trainspec.engine.runner", "trainspec.cli", "a higher layer (argument parsing"),
        ("trainspec.engine.runner", "trainspec.layouts.planner", "a higher layer (plan, show"),
        ("trainspec.report.text", "trainspec.engine.pipeline", "a higher layer (checking"),
        ("trainspec.spec.paths", "trainspec.read.files", "a higher layer (files into documents"),
        ("trainspec.spec.escaping", "trainspec.families", "a higher layer (the registry"),
        ("trainspec.families.specforge.layout", "trainspec.families.kempnerforge.layout", "imports no other family"),
        ("trainspec.engine.checker", "trainspec.families.kempnerforge", "the engine imports no family"),
        ("trainspec.families.kempnerforge.rules", "trainspec.engine.checker", "outside the family API"),
        ("trainspec.families.kempnerforge.rules", "trainspec.families.installed", "outside the family API"),
        ("trainspec.families.kempnerforge.rules", "trainspec.read.project", "outside the family API"),
        ("tools.update_snapshots", "trainspec.cli.check", "scripts use the library"),
        ("tools.generate_docs", "trainspec.cli", "scripts use the library"),
        ("trainspec.spec.paths", "trainspec.spec.rules", "import cycle"),
        ("trainspec.engine.checker", "trainspec.nowhere", "on no layers"),
    ],
)
def test_the_layer_check_catches_a_wrong_import(module, target, complaint):
    edges = graph()
    edges[module] = edges[module] | {target}
    edges.setdefault(target, set())
    assert any(complaint in v for v in violations(edges)), violations(edges)


def test_a_module_on_two_layers_is_caught(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "LAYERS", (*LAYERS, (("engine/runner.py",), "again")))
    assert any("trainspec.engine.runner is on 2 layers" in v for v in violations(graph()))


def test_a_new_module_needs_no_table_edit():
    edges = graph()
    edges["trainspec.read.newformat"] = {"trainspec.spec.document"}
    assert violations(edges) == []


if __name__ == "__main__":
    print(drawing())


def test_the_architecture_page_draws_the_layers_as_they_are():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"```\n{drawing()}\n```" in page, "docs/architecture.md: paste the output of `python tests/test_layers.py`"
