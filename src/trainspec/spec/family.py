"""The `Family` a config family declares: its schema, models, rules and the loader's habits, as data.

A family package builds one (or one per version) from the names of this package alone; the registry
(`trainspec.families`) finds them through entry points and picks a version.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document
from trainspec.spec.formats import FORMATS
from trainspec.spec.layout_space import Derive, LayoutSpace, Memory
from trainspec.spec.rules import Rule
from trainspec.spec.schema import Schema

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from trainspec.spec.examples import Example
    from trainspec.spec.paths import Path


Migration = Callable[[Document], list[Diagnostic]]
"""Rewrites legacy keys of a freshly read document in place; returns its diagnostics."""


@dataclass(frozen=True)
class Notice:
    """An id that a family's hooks (migrations, normalizers, device checks) report, documented like a rule."""

    severity: Severity
    paths: tuple[str, ...]
    doc: str


@dataclass(frozen=True, eq=False)
class Family:
    """Everything trainspec needs to know about one kind of config.

    - `schema_file`: the canonical JSON Schema (the validator of record).
    - `model`: "module:Class" of the typed model `load` returns (imported lazily).
    - `rules`: what the schema cannot say.
    - `formats`: the names of the file formats this family is written in (`read.formats.FORMATS`;
      by default every one).
    - `migrations`: run on a document as read, before overrides.
    - `normalize`: conditional defaults, on the raw data after overrides,
      before validation (a default that depends on another field).
    - `resolve`: derived defaults, on the data after schema defaults are filled.
    - `world_size_from_config`: the world size a config states for itself,
      with a sentence saying how it was derived.
    - `notices`: the ids its hooks report besides rules and schema ids, with
      their documentation (for `trainspec rules` and `explain`).
    - `schema_rule_docs`: the documentation of ids its schema gives constraints
      (`x-trainspec-rule`), where the annotated node's description does not
      explain the rule.
    - `file_globs`: where its configs usually live (editor associations and
      the schema catalog use them; `**/*.<name>.<ext>` is always added).
    - `legacy_keys`: old config path -> the path it moved to, for keys its
      migrations rewrite; editor schemas offer them as deprecated, naming the
      new place.
    - `version`, `released`: the upstream version (a short commit, or a release
      name such as `0.2.0`) and its date (ISO); a family may register several
      versions under one name, and the plain name selects the newest
      (`kempnerforge`, `kempnerforge@latest`, `kempnerforge@089fbbd`).
      trainspec's own families read them from `schema/<family>/versions.json`
      (see `trainspec.spec.versions`).
    - `commit`: for a version named by release, the upstream commit it comes
      from; `name@commit` selects it too.
    - `follows`: the upstream version of the trainer the family reproduces,
      in words, shown by `trainspec --version` and `rules`.
    - `distribution`: the trainer's Python package (as pip names it); when it is
      installed where trainspec runs, its release picks the version of a file
      whose version nobody gave (see `installed`).
    - `checks_file_before_overrides`: the family's own loader validates the
      file before it applies command-line overrides, so an override cannot
      repair a broken file there; trainspec checks the merged config and reports
      what the file alone fails as an error (`override-repairs-file`).
    - `loader_yaml`: the YAML version the family's own loader reads plain
      scalars by: "1.1" for PyYAML's safe loader, whose readings then decide
      the verdict where they differ from YAML 1.2 (see `dialect`).
    - `loader_conversion`: what the family's loader makes of a value for a
      field of the given JSON types, as (accepted, converted); None means
      pydantic's lax mode. Type errors then say what the loader would do.
    - `loader_takes`: what the family's loader does with a value the schema
      refuses at a path, where a rule of its own takes it anyway rather than
      a type conversion (a flag read by truthiness, an empty value taken as
      not written): (path, value, the config) -> the words, or None. The
      schema's error there then says it, as for `loader_conversion`.
    - `loader_format`: the format the family's loader reads a file name as,
      when it decides differently from trainspec (SpecForge: only an exact
      lower-case `.yaml`/`.yml` is YAML); a file it cannot parse that way is
      an error (`loader-format`).
    - `loader_overrides`: the family loader's own override handling, applied
      to the loaded config (defaults filled) for a family whose loader checks
      the file before its overrides, else to the file's data as read (its
      migrations and validation then run on the result, as such a loader's
      do): (family, config, overrides) ->
      (the config it ends with, or None when it is the merged one,
      [(override, why it is refused)]); what it
      refuses that trainspec's `--set` accepted is an error
      (`override-refused-by-loader`).
    - `schema_patch`: JSON Patch operations applied to `schema_file` when it is
      read: how a project overlay extends a family version (see `overlay`).
    - `registries`: names a project's plug-ins register, by config path, on
      top of the family's own (rules that take a `registries` argument get them).
    - `trusted_schema`: skip the meta-schema check of `schema_file` when the
      validator is built (it costs about 0.1 s a process); for families whose
      own tests check the schema, as trainspec's do.
    - `layout`: the config paths that choose the parallel layout and the candidates
      worth trying at a world size (`trainspec plan`); None: the family declares none.
    - `derive`: quantities computed from the resolved config at a world size
      (head dim, parameter count, memory per rank: `trainspec show`).
    - `memory`: the family's estimate of the memory one rank needs at a world
      size, by part (`--gpu-memory` turns it into a check; `plan` keeps the
      layouts that fit and ranks them by headroom).
    - `device_checks`: what a config needs of the device a rank computes on
      (the resolved config, a `device.Device`) -> errors at config paths, with
      no file; `trainspec.distributed` runs it on the machine that runs the job
      (bfloat16 or FP8 support, for example). Its ids are among `notices`.
    - `unmirrored`: the checks of the trainer's own loader (`Class.method`) that no rule or notice
      mirrors (their documentation ends "Mirrors `Class.method`."), each with the reason; the
      reference page lists every check of the loader with what mirrors it or why nothing does.
    - `examples`: for each rule id (the family's rules and its schema's
      `x-trainspec-rule` ids), a config that breaks it and the fixed config;
      `trainspec explain` and the reference docs show them, and a test runs them.
    """

    name: str
    schema_file: Traversable | FsPath
    model: str
    rules: Sequence[Rule] = ()
    formats: frozenset[str] = frozenset(FORMATS)
    description: str = ""
    version: str = ""
    commit: str = ""
    released: str = ""
    follows: str = ""
    distribution: str = ""
    migrations: Sequence[Migration] = ()
    normalize: Callable[[dict[str, Any]], None] | None = None
    resolve: Callable[[dict[str, Any]], None] | None = None
    world_size_from_config: Callable[[dict[str, Any]], tuple[int, str] | None] | None = None
    docs_url: str = field(default="")
    examples: Mapping[str, Example] = field(default_factory=dict)
    notices: Mapping[str, Notice] = field(default_factory=dict)
    file_globs: tuple[str, ...] = ()
    legacy_keys: Mapping[str, str] = field(default_factory=dict)
    schema_rule_docs: Mapping[str, str] = field(default_factory=dict)
    checks_file_before_overrides: bool = False
    loader_yaml: str = "1.2"
    schema_patch: tuple[Mapping[str, Any], ...] = ()
    registries: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    loader_conversion: Callable[[frozenset[str], Any], tuple[bool, Any]] | None = None
    loader_takes: Callable[[Path, Any, Any], str | None] | None = None
    loader_format: Callable[[str], str] | None = None
    loader_overrides: (
        Callable[[Family, dict[str, Any], Sequence[Any]], tuple[dict[str, Any] | None, list[Any]]] | None
    ) = None
    trusted_schema: bool = False
    unmirrored: Mapping[str, str] = field(default_factory=dict)
    layout: LayoutSpace | None = None
    derive: Derive | None = None
    memory: Memory | None = None
    device_checks: Callable[[Mapping[str, Any], Device], list[Diagnostic]] | None = None
    extends: str | None = None
    """For a project overlay (`overlay.py`): the id of the family version it extends. An overlay is
    reached by its own id only; it is no version of the trainer, so `other_versions`, `versions_of`
    and the plain name never pick it."""

    @cached_property
    def schema(self) -> Schema:
        text = self.schema_file.read_text(encoding="utf-8")
        if self.schema_patch:
            import json

            import jsonpatch

            text = json.dumps(jsonpatch.apply_patch(json.loads(text), list(self.schema_patch)))
        return Schema.from_text(text, str(self.schema_file))

    @cached_property
    def validator(self) -> Any:
        from trainspec.spec.schema_walk import build_validator

        return build_validator(self.schema, check=not self.trusted_schema)

    def model_class(self) -> Any:
        """The generated (or family-extended) pydantic model; imports pydantic."""
        module, _, name = self.model.partition(":")
        return getattr(importlib.import_module(module), name)

    def rule(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    @property
    def id(self) -> str:
        """`name@version` (just the name for a family without versions): what `--family` selects."""
        return f"{self.name}@{self.version}" if self.version else self.name

    @property
    def label(self) -> str:
        """The id, with the upstream commit of a version named by release: `specforge@0.2.0 (commit abd0346)`."""
        return f"{self.id} (commit {self.commit})" if self.commit else self.id
