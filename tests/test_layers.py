"""trainspec's modules import one way: the command line on top, plain data at the bottom, no cycles.

The graph is read from the source (every import, those inside functions too,
except `if TYPE_CHECKING:` blocks), so a lazy import cannot hide a loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
TOP = ("trainspec.cli", "trainspec.commands", "trainspec.__main__")
"""The command line: nothing below it may import it."""
LEAVES = {
    "trainspec.examples": "rule examples are plain data",
    "trainspec.diagnostics": "diagnostics are plain data",
    "trainspec.paths": "config paths are plain data",
    "trainspec.formats": "the format table is plain data",
    "trainspec.escaping": "escaping is plain text",
}
PIPELINE = ("trainspec.checker", "trainspec.pipeline", "trainspec.runner", "trainspec.api")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(name: str, source: str, is_package: bool, modules: set[str]) -> set[str]:
    """The trainspec modules `name` imports (a `from pkg import mod` counts as importing `pkg.mod`)."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    skipped = {id(n) for top in ast.walk(ast.parse(source)) if _type_checking_only(top) for n in ast.walk(top)}
    for node in ast.walk(ast.parse(source)):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in modules)
    return {m for m in found if m in modules}


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in (SRC / "trainspec").rglob("*.py")}
    return {
        name: imports_of(name, path.read_text(), path.name == "__init__.py", set(files)) - {name}
        for name, path in files.items()
    }


def violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            if target.startswith(TOP) and not module.startswith(TOP):
                found.append(f"{module} imports the command line ({target})")
            if module in LEAVES and target.startswith("trainspec") and target not in LEAVES:
                found.append(f"{module} imports {target}, but {LEAVES[module]}")
            if module.startswith("trainspec.reporters") and target.startswith(PIPELINE):
                found.append(f"{module} imports {target}: reporters format results, they do not produce them")
    return found + [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(edges)]


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


def test_layers_go_one_way_and_nothing_loops():
    assert violations(graph()) == []


@pytest.mark.parametrize(
    ("module", "target", "complaint"),
    [
        ("trainspec.schema", "trainspec.commands.check", "imports the command line"),
        ("trainspec.runner", "trainspec.cli", "imports the command line"),
        ("trainspec.examples", "trainspec.runner", "plain data"),
        ("trainspec.reporters.text", "trainspec.pipeline", "reporters format results"),
        ("trainspec.paths", "trainspec.checker", "import cycle"),
    ],
)
def test_the_layer_check_catches_a_wrong_import(module, target, complaint):
    edges = graph()
    edges[module] = edges[module] | {target}
    assert any(complaint in v for v in violations(edges))
