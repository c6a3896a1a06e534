"""Tie a workspace's config files to their editor schemas (`trainspec editor init|annotate`).

`init` gives a workspace (VS Code settings, and the schema files they point
at) the associations by glob; `annotate` writes the association into each
file, which every editor running yaml-language-server or taplo honours
(Neovim, Helix, JetBrains with the LSP plugin) without any settings.

Both write the editor schemas into the workspace (`.trainspec/schemas/` by
default) so the associations work offline and for everyone who clones it.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainspec.editor import jsonc
from trainspec.editor.schema import NotEditorSafe, editor_schema_text
from trainspec.families import all_families, stem
from trainspec.read.text_lines import line_ending
from trainspec.spec.errors import TrainspecError
from trainspec.spec.escaping import terminal
from trainspec.spec.formats import BY_EXTENSION, FORMATS, InputFormat, in_words, known_format
from trainspec.write.safe_write import WriteRefused, read_text, write_text

SCHEMA_DIR = Path(".trainspec") / "schemas"


class EditorError(TrainspecError):
    """A usage problem: reported on stderr, exit status 2."""


def default_globs(family: Any) -> list[str]:
    """The globs `init` and the catalog use for a family when none are given: where the family says
    its configs live (`Family.file_globs`), and `**/*.<family>.<ext>` for each of its formats."""
    named = [f"**/*.{family.name}{ext}" for fmt in sorted(family.formats) for ext in FORMATS[fmt].extensions]
    return [*family.file_globs, *named]


def glob_format(glob: str) -> str:
    fmt = known_format(glob)
    if fmt is None:
        raise EditorError(f"cannot tell the file format of {glob!r}: end it in {in_words(BY_EXTENSION)}")
    return fmt.name


def glob_regex(glob: str) -> str:
    """taplo matches association keys as regular expressions against the whole document URI.

    A glob matches at any depth of the workspace, as yaml-language-server
    and VS Code's JSON support read relative globs.
    """
    body = glob.removeprefix("**/")
    out = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        c = body[i]
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
        i += 1
    return ".*/" + "".join(out) + "$"


@dataclass(frozen=True)
class Planned:
    """One file a command will write: where, the text, what it holds now (None: no file), and the
    directory no link may lead it out of. Everything is planned, and refused, before anything is written."""

    path: Path
    text: str
    old: str | None
    within: Path | None

    def write(self, shown: Path) -> None:
        if self.old == self.text:
            print(terminal(f"{shown.as_posix()} unchanged"))
            return
        write_text(self.path, self.text, expected=self.old, within=self.within)
        print(terminal(f"wrote {shown.as_posix()}"))


def plan_schema(root: Path, schema_dir: Path, family: str) -> Planned:
    """A family's editor schema in the workspace, to be written (or refreshed).

    No symbolic link may lead the write out of the workspace, or out of the schema
    directory when it was given outside the workspace (`--schema-dir /abs/path`).
    """
    directory = root / schema_dir
    path = directory / f"{family}.schema.json"
    try:
        text = editor_schema_text(family)
    except NotEditorSafe as exc:
        raise EditorError(f"the {family} schema cannot be served to editors: {exc}") from exc
    within = root if _under(directory, root) is not None else directory
    return Planned(path, text, read_text(path, within), within)


def write_schema(root: Path, schema_dir: Path, family: str) -> Path:
    """Write (or refresh) a family's editor schema in the workspace; return its path."""
    planned = plan_schema(root, schema_dir, family)
    if planned.old != planned.text:
        write_text(planned.path, planned.text, expected=planned.old, within=planned.within)
    return planned.path


def _under(path: Path, root: Path) -> Path | None:
    """`path` relative to `root` when it lies there (judged by the names, not by following links)."""
    full, base = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    return full.relative_to(base) if full.is_relative_to(base) else None


def _union(existing: Any, new: Sequence[str], where: str) -> list[str]:
    if existing is None:
        existing = []
    old = [existing] if isinstance(existing, str) else existing
    if not isinstance(old, list) or not all(isinstance(g, str) for g in old):
        raise EditorError(f"{where} in .vscode/settings.json is not a glob or a list of globs; fix or remove it")
    return old + [g for g in new if g not in old]


def _yaml_schemas(settings: dict[str, Any], schema_ref: str, schema_uri: str, globs: list[str]) -> None:
    """`yaml.schemas` (YAML extension / yaml-language-server): workspace-relative path -> globs."""
    schemas = settings.setdefault("yaml.schemas", {})
    schemas[schema_ref] = _union(schemas.get(schema_ref), globs, f"`yaml.schemas` entry {schema_ref!r}")


def _json_schemas(settings: dict[str, Any], schema_ref: str, schema_uri: str, globs: list[str]) -> None:
    """`json.schemas` (VS Code's JSON support): entries of `fileMatch` globs and the schema's `url`."""
    entries = settings.setdefault("json.schemas", [])
    entry = next((e for e in entries if isinstance(e, dict) and e.get("url") == schema_ref), None)
    if entry is None:
        entries.append({"fileMatch": globs, "url": schema_ref})
    else:
        entry["fileMatch"] = _union(entry.get("fileMatch"), globs, "`json.schemas` `fileMatch`")


def _taplo_associations(settings: dict[str, Any], schema_ref: str, schema_uri: str, globs: list[str]) -> None:
    """`evenBetterToml.schema.associations` (taplo): URI regex -> schema. taplo resolves a `./` path
    against the parent of the workspace folder (measured), so it gets an absolute URI."""
    associations = settings.setdefault("evenBetterToml.schema.associations", {})
    for glob in globs:
        associations[glob_regex(glob)] = schema_uri


SETTINGS: dict[str, tuple[type, Callable[[dict[str, Any], str, str, list[str]], None]]] = {
    "yaml.schemas": (dict, _yaml_schemas),
    "json.schemas": (list, _json_schemas),
    "evenBetterToml.schema.associations": (dict, _taplo_associations),
}
"""The VS Code settings that tie files to a schema (a format names the ones its files go in,
`Syntax.EDITOR_SETTINGS`): the shape each must have, and what adds one schema's globs to it."""


def merge_settings(settings: dict[str, Any], schema_ref: str, schema_uri: str, globs: Sequence[str]) -> None:
    """Add one schema's associations to VS Code settings, keeping everything already there: each glob goes
    into every setting its format names (`SETTINGS`), the globs of the formats in the table's order."""
    by_format: dict[str, list[str]] = {}
    for glob in globs:
        by_format.setdefault(glob_format(glob), []).append(glob)
    for key, (kind, _) in SETTINGS.items():
        if key in settings and not isinstance(settings[key], kind):
            shape = "an object" if kind is dict else "an array"
            raise EditorError(f"`{key}` in .vscode/settings.json is not {shape}; fix or remove it")
    for key, (_, add) in SETTINGS.items():
        matched = [g for f in FORMATS.values() if key in f.syntax().EDITOR_SETTINGS for g in by_format.get(f.name, [])]
        if matched:
            add(settings, schema_ref, schema_uri, matched)


def init(root: Path, families: Sequence[Any], globs: Sequence[str], schema_dir: Path) -> Path:
    """Write each family's schema and merge its associations into `.vscode/settings.json`.

    Settings name a schema in the workspace by a `./` path (VS Code resolves it against the
    workspace folder, so it works for everyone who clones it) and one outside by its file URI.
    The settings are edited in place (`jsonc`: comments, layout and every other byte kept), and
    every file is planned, or refused, before any is written; a file that would not change is not.
    """
    settings_path = root / ".vscode" / "settings.json"
    old = read_text(settings_path, root)
    try:
        tree = jsonc.parse(old or "")
    except jsonc.JsoncError as exc:
        raise EditorError(f"{settings_path} is not JSON with comments ({exc}); nothing was written") from exc
    settings = copy.deepcopy(tree.value) if tree is not None else {}
    if not isinstance(settings, dict):
        raise EditorError(f"{settings_path} does not hold a JSON object; nothing was written")
    planned = []
    for family in families:
        schema = plan_schema(root, schema_dir, stem(family))
        inside = _under(schema.path, root)
        ref = "./" + inside.as_posix() if inside is not None else schema.path.resolve().as_uri()
        merge_settings(settings, ref, schema.path.resolve().as_uri(), list(globs) or default_globs(family))
        planned.append((schema, inside if inside is not None else schema.path))
    if tree is None:  # no file, or only blanks and comments: the comments stay, above the settings
        kept = (old or "").rstrip()
        text = (kept + line_ending(kept) if kept else "") + json.dumps(settings, indent=4, ensure_ascii=False) + "\n"
    else:
        try:
            text = jsonc.edited(old or "", tree, settings)
        except jsonc.JsoncError as exc:
            raise EditorError(f"cannot edit {settings_path} in place ({exc}); nothing was written") from exc
    planned.append((Planned(settings_path, text, old, root), settings_path.relative_to(root)))
    for file, shown in planned:
        file.write(shown)
    return settings_path


def annotated(text: str, fmt: InputFormat, reference: str) -> str:
    """`text` with exactly one schema comment, on its first line; every other line kept as it was.

    An earlier directive is dropped from the leading comment block (TOML: taplo reads it only
    there) or from anywhere, where the format's language server reads it on any comment line
    (`Syntax.DIRECTIVE_ANYWHERE`; YAML's modeline).
    """
    assert fmt.schema_directive is not None and fmt.directive is not None and fmt.comment is not None
    newline = line_ending(text)
    lines = text.splitlines(keepends=True)
    head = len(lines) if fmt.syntax().DIRECTIVE_ANYWHERE else 0
    while head < len(lines) and lines[head].lstrip().startswith(fmt.comment):
        head += 1
    directive = fmt.directive
    kept = [ln for ln in lines[:head] if not directive.fullmatch(ln.rstrip("\r\n").rstrip())] + lines[head:]
    return fmt.schema_directive.format(reference) + newline + "".join(kept)


def family_of(path: Path, family: str | None) -> str:
    from trainspec.read.detect import detect
    from trainspec.read.files import read
    from trainspec.spec.document import ReadError

    if family is not None:
        return family
    try:
        doc = read(str(path))
    except ReadError as exc:
        raise EditorError(f"{path}: {exc.diagnostic.message}") from exc
    found, why = detect(doc, all_families(), by_reference=False)
    if found is None:
        raise EditorError(f"{path}: {why}")
    return stem(found)


WORKSPACE_MARKERS = (".trainspec", ".git", ".hg", ".vscode")
"""What marks a workspace root, in order of preference: trainspec's own folder, a repository, VS Code settings."""


def workspace_root(start: Path) -> Path:
    """The folder an editor opens for files under `start`: the nearest one above holding `.trainspec/`,
    else the nearest holding a repository or VS Code settings, else the folder itself, so every file
    of a repository shares one copy of the schemas."""
    folder = Path(os.path.abspath(start))
    if not folder.is_dir():
        folder = folder.parent
    return _marked_root(folder) or folder


def _marked_root(folder: Path) -> Path | None:
    for marker in WORKSPACE_MARKERS:
        for candidate in (folder, *folder.parents):
            if (candidate / marker).exists():
                return candidate
    return None


def annotation_root(path: Path) -> Path:
    """Where `annotate` puts the schemas for `path`: its workspace root (see `workspace_root`); outside any
    repository, the working directory, the folder the user works in (a `.trainspec/` beside each file of
    several folders would be copies nobody expects). A file outside both is refused: give `--root`."""
    folder = Path(os.path.abspath(path)).parent
    found = _marked_root(folder)
    if found is not None:
        return found
    here = Path.cwd()
    if folder.is_relative_to(here):
        return here
    raise EditorError(
        f"{path}: no workspace holds it (no .trainspec, .git, .hg or .vscode folder above it, and it is outside "
        "the working directory); give --root FOLDER, the folder you open in your editor, for the schemas"
    )


def annotate(files: Sequence[Path], family: str | None, root: Path | None, schema_dir: Path) -> int:
    """Annotate each file; a file that cannot be annotated is reported and the others still are.

    Without a `root`, each file's workspace root (`annotation_root`) holds the schemas.

    A file is rewritten like `trainspec migrate` rewrites one (`safe_write`): a symbolic link's
    target is annotated, and its byte-order mark, mode and owner are kept.
    """
    failed = 0
    for path in files:
        try:
            _annotate_one(path, family, root or annotation_root(path), schema_dir)
        except (EditorError, WriteRefused) as exc:
            print(terminal(f"trainspec: {exc}"), file=sys.stderr)
            failed += 1
    return failed


def _annotate_one(path: Path, family: str | None, root: Path, schema_dir: Path) -> None:
    fmt = known_format(path)
    if fmt is None:
        named = in_words((f.name.upper() for f in FORMATS.values() if f.schema_directive is not None), "or")
        raise EditorError(f"{path}: not a {named} file")
    if fmt.schema_directive is None:
        raise EditorError(f"{path}: {fmt.name.upper()} has no comments to carry a schema; use `trainspec editor init`")
    text = read_text(path)
    if text is None:
        raise EditorError(f"{path}: no such file")
    schema = write_schema(root, schema_dir, family_of(path, family))
    reference = Path(os.path.relpath(schema.resolve(), path.resolve().parent)).as_posix()
    if not reference.startswith("../"):
        reference = "./" + reference
    new = annotated(text, fmt, reference)
    if new == text:
        print(terminal(f"{path}: already annotated"))
        return
    write_text(path, new, expected=text)
    print(terminal(f"{path}: annotated with {reference}"))
