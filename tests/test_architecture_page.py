"""docs/architecture.md names what is in the code: every file, module and name it puts in backticks exists.

A file is `read/yaml.py` (under src/trainspec, or the repository), a name is `module.name` or
`Class.attribute` (`engine.runner.check_file`, `Family.device_checks`), or `file.py: name`. The
layer drawing is kept by tests/test_layers.py; what is raised is checked here too.
"""

from __future__ import annotations

import ast
import builtins
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "trainspec"
PAGE = ROOT / "docs" / "architecture.md"
QUOTED = re.compile(r"`([^`\n]+)`")
FILE = re.compile(r"^([\w./*<>\[\]{},-]+\.py)(?:: (\w+(?:\.\w+)?))?$")
DOTTED = re.compile(r"^(?:trainspec\.)?([A-Za-z_]\w*(?:\.\w+)+)$")


@cache
def modules() -> dict[str, Path]:
    """Every module of trainspec by dotted name relative to the package (`spec.paths`, `families`)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@cache
def defined(path: Path) -> frozenset[str]:
    """The names a module defines at its top level, and `Class.attribute` for its classes' members."""
    names: set[str] = set()
    body = ast.parse(path.read_text(encoding="utf-8")).body
    for node in [*body, *(inner for block in body if isinstance(block, ast.If) for inner in block.body)]:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(f"{node.name}.{inner.name}")
                    names.update(f"{node.name}.{attribute}" for attribute in _set_on_self(inner))
                elif isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                    names.add(f"{node.name}.{inner.target.id}")
                elif isinstance(inner, ast.Assign):
                    names.update(f"{node.name}.{t.id}" for t in inner.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return frozenset(names)


def _set_on_self(method: ast.AST) -> set[str]:
    """The attributes a method sets on `self` (`self.data = ...`)."""
    return {
        target.attr
        for node in ast.walk(method)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
    }


def files_named(pattern: str) -> list[Path]:
    """`read/{toml,yaml,json}.py` -> the three files; `families/*/rules*.py` -> every match."""
    braces = re.search(r"\{([^}]*)\}", pattern)
    if braces:
        return [p for choice in braces[1].split(",") for p in files_named(pattern.replace(braces[0], choice))]
    if "<" in pattern:
        return [PACKAGE]  # a placeholder (`report/<name>.py`): its folder is checked by the words around it
    for base in (PACKAGE, ROOT):
        found = sorted(base.glob(pattern))
        if found:
            return found
    return []


def missing(reference: str) -> str | None:
    """Why `reference` names nothing in the code (None: it names something, or is not a code reference)."""
    file = FILE.match(reference)
    if file:
        paths = files_named(file[1])
        if not paths:
            return f"`{reference}`: no such file"
        if file[2] and not any(p.is_file() and file[2] in defined(p) for p in paths):
            return f"`{reference}`: {file[1]} defines no `{file[2]}`"
        return None
    dotted = DOTTED.match(reference)
    if dotted is None or "/" in reference or reference.endswith((".md", ".json", ".toml", ".yaml", ".yml")):
        return None
    parts = dotted[1].split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest module whose dotted name ends the prefix
        prefix = ".".join(parts[:cut])
        rest = ".".join(parts[cut:])
        owners = [p for name, p in modules().items() if name == prefix or name.endswith("." + prefix)]
        if owners:
            return None if any(rest in defined(p) for p in owners) else f"`{reference}`: no `{rest}` in {prefix}"
    owner = parts[0]
    if owner[0].isupper():  # `Class.attribute`
        holders = [p for p in modules().values() if owner in defined(p)]
        if not holders:
            return f"`{reference}`: no class {owner}"
        return None if any(reference in defined(p) for p in holders) else f"`{reference}`: {owner} has no {parts[1]}"
    return None


def test_every_file_and_name_the_page_gives_exists():
    found = [why for ref in QUOTED.findall(PAGE.read_text(encoding="utf-8")) if (why := missing(ref))]
    assert found == []


def test_a_wrong_name_is_caught():
    assert missing("engine/runner.py: no_such_function") is not None
    assert missing("engine.runner.no_such_function") is not None
    assert missing("Family.no_such_field") is not None
    assert missing("read/nowhere.py") is not None
    assert missing("engine.runner.check_file") is None
    assert missing("Family.device_checks") is None


BUILTIN_ERRORS = {
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, Exception)
}
INTERNAL = {
    ("validate/fast.py", "ValueError"): "jsonschema-rs calls a custom keyword's `validate`, expecting a ValueError",
    ("__init__.py", "AttributeError"): "a module's `__getattr__` says a name is missing so",
    ("editor/lsp/reparse.py", "KeyError"): "a Mapping's `__getitem__` says a key is missing so",
    ("families/kempnerforge/precision.py", "ModuleNotFoundError"): "torch missing stays what an import raises",
}
"""(module, builtin exception) raised on purpose where Python's protocols ask for exactly that, with why."""


def test_what_trainspec_raises_derives_from_trainspec_error():
    """The page says everything trainspec raises on purpose derives from `TrainspecError` (`InvalidValue` and
    `InvalidType` are a ValueError and a TypeError too); a bare builtin exception raised anywhere else fails."""
    assert "derives from `trainspec.TrainspecError`" in PAGE.read_text(encoding="utf-8")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            call = node.exc if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) else None
            raised = call.func.id if call is not None and isinstance(call.func, ast.Name) else None
            if isinstance(raised, str) and raised in BUILTIN_ERRORS and (relative, raised) not in INTERNAL:
                found.append(f"{relative}:{node.lineno}: raise {raised}")
    assert found == []
