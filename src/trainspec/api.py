"""The public entry points: check a file, or load it as a typed model.

`load` gives the family's generated pydantic model; pass `model=` (the
class) and a type checker sees that class, not `Any`. Warnings of a config
that loads are issued through `warnings` as `ConfigWarning`s, so they show
once per place by default and a trainer can turn them into errors
(`warnings.simplefilter("error", trainspec.ConfigWarning)`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any, TypeVar, overload

from trainspec.engine.checker import check_document
from trainspec.engine.pipeline import check_path, world_sizes_of
from trainspec.families import building, every_version, get_family
from trainspec.read.plain_data import as_data
from trainspec.spec.codes import MODEL_MISMATCH
from trainspec.spec.device import Device, target
from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document
from trainspec.spec.errors import ConfigError, ConfigWarning, InvalidType
from trainspec.spec.family import Family
from trainspec.spec.result import Result

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

__all__ = ["check", "check_config", "check_path", "load", "to_model"]


def check(
    path: str | FsPath,
    *,
    family: str | Family | None = None,
    overrides: Iterable[str] = (),
    world_size: int | Sequence[int] | None = None,
    gpu: str | Device | None = None,
) -> list[Diagnostic]:
    """Every diagnostic for one config file, sorted by position.

    `gpu`: the GPU the job runs on, as `--gpu` takes it (`"h100"`, `"sm_90"`; ValueError for an unknown
    name) or a `Device`, for the rules that read it and the family's device checks.
    """
    _need_path(path, "check")
    device = target(gpu) if isinstance(gpu, str) else gpu
    found = check_path(path, family=family, overrides=overrides, world_size=world_size, device=device).diagnostics
    return sorted(found, key=Diagnostic.sort_key)


def check_config(
    config: Mapping[str, Any],
    family: str | Family,
    *,
    world_size: int | None = None,
    source: str = "<config>",
    gpu: str | Device | None = None,
) -> list[Diagnostic]:
    """Every diagnostic for a config already in memory (e.g. a loaded model's dump), sorted.

    It runs the same pipeline as a file, except legacy migrations (they apply
    only where files are read), so a config resolved on one machine
    can be re-checked where the world size is known (at launch). The data has
    no positions: diagnostics name `source` as their file and carry no line.
    A part no config file could hold (a recursive dict, a complex number, an
    integer key) is an error at its path, and the rest is still checked; a null
    where a key may be left out and has no default (a dump's `"vlm": None`) is
    that key left out, as the trainer holds it. `gpu` is the target GPU, as `check` takes it.

    Raises TypeError when `config` is not a mapping or `family` not a name or a Family.
    """
    if not isinstance(config, Mapping):
        raise InvalidType(f"check_config() takes the config as a mapping (a dict), not {type(config).__name__}")
    if not isinstance(family, str | Family):
        raise InvalidType(f"check_config() takes the family as a name or a Family, not {type(family).__name__}")
    sizes = world_sizes_of(world_size)
    fam = get_family(family) if isinstance(family, str) else family
    data, problems = as_data(config, source)
    doc = Document(source, "data", "", fam.schema.without_absent_nulls(data), dict, problems)
    doc.mark_origin((), "the resolved config")
    device = target(gpu) if isinstance(gpu, str) else gpu
    result = check_document(doc, fam, (), sizes, migrate=False, device=device)
    return sorted(result.diagnostics, key=Diagnostic.sort_key)


@overload
def load(
    path: str | FsPath,
    *,
    model: type[M],
    family: str | Family | None = None,
    overrides: Iterable[str] = (),
    world_size: int | None = None,
) -> M: ...


@overload
def load(
    path: str | FsPath,
    *,
    model: None = None,
    family: str | Family | None = None,
    overrides: Iterable[str] = (),
    world_size: int | None = None,
) -> BaseModel: ...


def load(
    path: str | FsPath,
    *,
    model: type[M] | None = None,
    family: str | Family | None = None,
    overrides: Iterable[str] = (),
    world_size: int | None = None,
) -> BaseModel:
    """The validated config as the family's typed model, defaults filled.

    `model` names the family by its model class (`load(p, model=JobConfig) -> JobConfig`);
    it must be the class the family builds. Raises ConfigError (with every
    diagnostic) when the config has errors; each warning is issued as a
    ConfigWarning.
    """
    _need_path(path, "load")
    if model is not None and family is None:
        family = family_of_model(model)
    result = check_path(path, family=family, overrides=overrides, world_size=world_size)
    if not result.ok or result.config is None or result.family is None:
        raise ConfigError(sorted(result.diagnostics, key=Diagnostic.sort_key))
    loaded = to_model(result)
    if model is not None and not isinstance(loaded, model):
        raise InvalidType(
            f"{path} loads as {type(loaded).__name__} (family {result.family.name}), not {model.__name__}"
        )
    for d in sorted(result.diagnostics, key=Diagnostic.sort_key):
        if d.severity is Severity.WARNING:
            warnings.warn(ConfigWarning(d), stacklevel=2)
    return loaded


def _need_path(path: object, caller: str) -> None:
    """A TypeError for what is not a path (`None` is not the current directory, nor a file named "None")."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidType(f"{caller}() takes a path (a str or os.PathLike), not {type(path).__name__}")


def family_of_model(model: type[Any]) -> Family:
    """The registered family whose typed model is `model` (or a subclass of it), newest first. A family that
    names `model` itself is found without importing any other family's models."""
    named = building(f"{model.__module__}:{model.__qualname__}")
    if named is not None:
        return named
    for family in sorted(every_version().values(), key=lambda f: f.released, reverse=True):
        if issubclass(family.model_class(), model):
            return family
    raise InvalidType(f"no registered family builds {model.__module__}.{model.__qualname__}")


def to_model(result: Result) -> BaseModel:
    """Build the typed model of a clean result (imports pydantic)."""
    import pydantic

    assert result.family is not None
    cls = result.family.model_class()
    try:
        built: BaseModel = cls.model_validate(result.config)
    except pydantic.ValidationError as exc:  # the schema accepted what the model cannot express
        raise ConfigError(
            [
                Diagnostic(
                    result.file,
                    None,
                    None,
                    tuple(err["loc"]),
                    MODEL_MISMATCH.id,
                    Severity.ERROR,
                    f"the typed model refused a value the schema accepts: {err['msg']}",
                )
                for err in exc.errors()
            ]
        ) from None
    return built
