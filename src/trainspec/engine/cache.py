"""Results of unchanged files, reused: `trainspec check` looks each file up before it checks it.

A file's result is stored under a key made of everything its diagnostics depend on:

- the run's context: the cache format, trainspec's version and the size and modification time of
  each of its own files and schemas (a checkout edited in place), the Python version, the
  distributions installed beside trainspec, by name and version (third-party families, the trainer
  release a family version follows, the libraries that read and validate), every `TRAINSPEC_*`
  environment variable but the cache's own (limits, `TRAINSPEC_IGNORE_INSTALLED`), the working
  directory (reports name files as given), and the run's options (`runner.Options`: family,
  overrides, world sizes, GPU and its memory, --select/--ignore, --warnings-as-errors,
  --skip-unknown, --isolated, ...);
- the file's own part: its name as given, whether a walk or glob found it, the hash of its bytes
  (the text piped in, for `-`), and the path and bytes of the project configuration that governs it.
  Suppression comments and file directives are in the bytes.

Some results are never stored, and so always checked again: a file that is a symbolic link (whether
it is read depends on where it points), that cannot be read or is over the size limit, that changed
while it was checked, or that an unusable project configuration governs; a check that crashed (an
`internal`-category id such as `internal-error` or `hook-failed`, or a rule that raised); a file
checked as a project overlay (a file besides the config, and besides the project configuration),
or whose family could not be found (overlays another project registers may name it).

What is stored is the result a report takes (`Result.for_report`), as data (`cache_codec`), and the
reporters render it as they render a fresh one, so output is the same with and without the cache.
Files found in the store are decoded in this process; the rest are checked as `runner.iter_check_files`
checks them (in a process pool when there are many), and the results come out in the order of the files.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

from trainspec import spec
from trainspec.engine import cache_codec, cache_store
from trainspec.engine.cache_run import installation as _installation
from trainspec.engine.cache_store import Pack, Store, Uncachable
from trainspec.engine.progress import Progress
from trainspec.engine.runner import Options, iter_check_files, report_file
from trainspec.families import UnknownFamily, get_family
from trainspec.read.files import read_bytes
from trainspec.read.project import ProjectError, find_project
from trainspec.spec.codes import REGISTRY, Category
from trainspec.spec.document import ReadError
from trainspec.spec.family import Family
from trainspec.spec.limits import FILE_BYTES, LimitExceeded
from trainspec.spec.result import Outcome, Result

FLUSH_EVERY = 20_000
"""Results a run holds before it writes them (the packs are written again at the end)."""
PER_FILE = frozenset({"expanded", "texts"})
"""Options that differ by file: they enter each file's key as what they say of that file."""
NOT_STORED = frozenset(
    {Outcome.CRASHED, Outcome.UNREADABLE, Outcome.UNKNOWN_FAMILY, Outcome.UNUSABLE_DIRECTIVE, Outcome.UNUSABLE_SETTINGS}
)


def store() -> Store | None:
    """The user's store, or None when there is no folder for one (no home directory)."""
    root = cache_store.cache_dir()
    return Store(root) if root is not None else None


def iter_cached(
    files: Sequence[str],
    options: Options,
    jobs: int | None = None,
    progress: Progress | None = None,
    store: Store | None = None,
) -> Iterator[Result]:
    """`runner.iter_check_files` (same results, same order, skipped files included), with each result found
    in `store` taken from it and each other one it can hold written to it."""
    try:
        run = _Run(store, options) if store is not None else None
    except Uncachable:  # an option of a type no key can hold (the Python API's)
        run = None
    if run is None:
        yield from iter_check_files(files, options, jobs, progress)
        return
    plans = [run.plan(file) for file in files]
    found = [plan[0].get(file, plan[1]) if plan is not None else None for file, plan in zip(files, plans, strict=True)]
    misses = [file for file, text in zip(files, found, strict=True) if text is None]
    checked = iter_check_files(misses, options, jobs)  # started on the first miss
    try:
        for file, plan, text in zip(files, plans, found, strict=True):
            result = run.decoded(text, file) if text is not None else None
            if result is None:
                result = next(checked) if text is None else report_file(file, options)
                run.remember(file, plan, result)
            else:
                assert plan is not None
                run.used.add(plan[0].name)
                run.store.hits += 1
            if progress is not None:
                progress.advance()
            yield result
            if run.pending >= FLUSH_EVERY:
                run.save()
    finally:
        stop = getattr(checked, "close", None)  # a reader that stopped early: no worker goes on checking
        if stop is not None:
            stop()
        if progress is not None:
            progress.close()
    run.save()


class _Run:
    """One run's lookups: its context, the packs it read (one per folder), the projects it hashed."""

    def __init__(self, store: Store, options: Options) -> None:
        self.store = store
        self.options = options
        self.context = context(options)
        self.packs: dict[str, Pack] = {}
        """By the folder of a file, as written."""
        self.projects: dict[str, str | None] = {}
        """Project configuration as found for a folder as written -> what the key says of it ("" none)."""
        self.families: dict[str, Family] = {}
        self.used: set[str] = set()
        self.pending = 0
        try:
            self.limit: int | None = FILE_BYTES.value
        except LimitExceeded:
            self.limit = None  # every check says so; nothing is stored

    def plan(self, file: str) -> tuple[Pack, str] | None:
        """(the pack of `file`, its key), or None when its result is never stored."""
        content = self._content(file)
        if content is None:
            return None
        folder = os.path.dirname(file)
        if folder not in self.projects:
            self.projects[folder] = self._project(file)
        project = self.projects[folder]
        if project is None:
            return None
        pack = self.packs.get(folder)
        if pack is None:  # one pack per folder and project configuration: changed back, it finds its results again
            where = f"{self.context}\0{os.path.dirname(os.path.abspath(file))}\0{project}"
            pack = self.packs[folder] = self.store.load(_digest(where.encode("utf-8", "surrogatepass")), self.context)
        own = f"{file}\0{file in self.options.expanded:d}{file in self.options.texts:d}\0{project}\0"
        key = hashlib.blake2b(own.encode("utf-8", "surrogatepass"), digest_size=20)
        key.update(content)
        return pack, key.hexdigest()

    def _content(self, file: str) -> bytes | None:
        text = self.options.texts.get(file)
        if text is not None:
            return text.encode("utf-8", "surrogatepass")
        if self.limit is None:
            return None
        return cache_store.read_regular(file, self.limit)

    def _project(self, file: str) -> str | None:
        """The project configuration governing `file`, as its key holds it: "" for none, its path and the hash
        of its bytes, or None when it cannot be used (the check reports why; nothing is stored)."""
        if not self.options.use_project:
            return ""
        try:
            project = find_project(file)
            if project is None:
                return ""
            return f"{project.source}\0{_digest(read_bytes(str(project.source)))}"
        except (ProjectError, ReadError, LimitExceeded, OSError):
            return None

    def decoded(self, text: str, file: str) -> Result | None:
        """The stored result of `file`, or None when it does not decode (then it is checked again)."""
        try:
            return cache_codec.decode(text, file, self._family)
        except Exception:
            return None

    def _family(self, family_id: str) -> Family:
        family = self.families.get(family_id)
        if family is None:
            family = self.families[family_id] = get_family(family_id)
            if family.extends is not None:
                raise UnknownFamily(family_id)  # overlays are never stored
        return family

    def remember(self, file: str, plan: tuple[Pack, str] | None, result: Result) -> None:
        """Add `result` to its pack when it can be stored, and the file still holds what its key was made of."""
        if plan is None or not storable(result) or self.plan(file) != plan:
            return
        try:
            encoded = cache_codec.encode(result)
            if not cache_codec.same(cache_codec.decode(encoded, file, self._family), result):
                return
        except (Uncachable, ValueError, UnknownFamily):
            return
        plan[0].put(file, plan[1], encoded)
        self.pending += 1
        self.store.stored += 1

    def save(self) -> None:
        """Write the results held, and mark the packs results were taken from as used."""
        written = self.store.save(self.packs.values(), self.context)
        for name in self.used - written:
            self.store.touch(name)
        self.used.clear()
        self.pending = 0


def storable(result: Result) -> bool:
    """Whether a result depends on nothing but its key: the check did not crash or find its family missing,
    and no file besides the config and its project configuration was read."""
    if result.outcome in NOT_STORED:
        return False
    if result.family is not None and result.family.extends is not None:
        return False
    return not any(crashed(d.rule, d.text) for d in result.diagnostics)


def crashed(rule: str, text: str) -> bool:
    """A diagnostic that says trainspec or a family's code failed (an exception, which may not happen again)."""
    code = REGISTRY.get(rule)
    if code is not None:
        return code.category is Category.INTERNAL
    return text.startswith(f"rule {rule} failed on this config (")


def context(options: Options) -> str:
    """The part of every key that a run shares: see the module's docstring."""
    environment = sorted(
        (name, value)
        for name, value in os.environ.items()
        if name.startswith("TRAINSPEC_") and name not in (cache_store.DIR_VARIABLE, cache_store.OFF_VARIABLE)
    )
    settings = {
        f.name: _canonical(getattr(options, f.name)) for f in dataclasses.fields(options) if f.name not in PER_FILE
    }
    parts = [cache_store.FORMAT, spec.__version__, _installation(), environment, os.getcwd(), settings]
    return _digest(json.dumps(parts, sort_keys=True).encode("utf-8", "surrogatepass"))


def _canonical(value: Any) -> Any:
    """An option as JSON data that says exactly what it is (a family by its id and overlay, a dataclass
    by its fields); Uncachable for a type this does not know."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return [type(value).__name__, _canonical(value.value)]
    if isinstance(value, Family):
        return ["Family", value.id, value.extends, repr(value.schema_patch), repr(value.registries)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return [type(value).__name__, fields]
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=repr)
    if isinstance(value, dict):
        return sorted(([_canonical(k), _canonical(v)] for k, v in value.items()), key=repr)
    raise Uncachable(f"an option of type {type(value).__name__}")


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()
