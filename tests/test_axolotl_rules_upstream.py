"""Every Axolotl rule names the validator it mirrors, and that validator is in the installed release.

A rule's docstring ends with "Mirrors `Class.method`." (the family's contract); the class is the one
that defines the pydantic validator (a mixin of `AxolotlInputConfig`, the config model itself, or a
plugin's arguments model), as Axolotl 0.18.0 has it. A rule for what happens outside the validators (the
plugins registered before them, the device mesh the job builds after) names the function of `axolotl.utils`
or `axolotl.integrations` that does it instead: "Mirrors `module.function`.".
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import pkgutil
import sys
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from trainspec.families import get_family
from trainspec.rules import mirrored

from .axolotl_loader import RELEASE, require

pytestmark = pytest.mark.external  # the loader imports torch and transformers

VERSION = f"axolotl@{RELEASE}"


@dataclass(frozen=True)
class Validator:
    """One pydantic validator of the release: `Class.method` (the class that defines it), a short hash of its
    source, and whether it belongs to a plugin's settings model (`axolotl.integrations.*.args`)."""

    name: str
    digest: str
    plugin: bool


def source_digest(function: Any) -> str:
    """The first 12 hex digits of the SHA-256 of `function`'s source (decorators included), dedented, with
    blank lines, comments and trailing spaces dropped: a change of layout is no change."""
    lines = textwrap.dedent(inspect.getsource(inspect.unwrap(function))).splitlines()
    kept = [line.rstrip() for line in lines if line.strip() and not line.strip().startswith("#")]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()[:12]


def _plugin_args(folder: str) -> ModuleType | None:
    """A plugin's `args.py`: imported, or loaded by path when its package needs what is not installed here."""
    import axolotl.integrations

    path = Path(axolotl.integrations.__path__[0]) / folder / "args.py"
    if not path.is_file():
        return None
    try:
        return importlib.import_module(f"axolotl.integrations.{folder}.args")
    except ImportError:
        name = f"_axolotl_{folder}_args"  # the name tests/axolotl_loader.py's stand-ins use
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        return sys.modules[name]


@cache
def upstream_inventory() -> dict[str, Validator]:
    """Every pydantic validator of the release's config classes (`axolotl.utils.schemas`, with the models
    `AxolotlInputConfig` and `AxolotlConfigWCapabilities`) and of each plugin's settings model, by name."""
    require()
    import axolotl.integrations
    import axolotl.utils.schemas
    from pydantic import BaseModel

    schemas = pkgutil.walk_packages(axolotl.utils.schemas.__path__, "axolotl.utils.schemas.")
    modules = [(importlib.import_module(m.name), False) for m in schemas]
    for m in pkgutil.iter_modules(axolotl.integrations.__path__):
        args = _plugin_args(m.name) if m.ispkg else None
        if args is not None:
            modules.append((args, True))
    found: dict[str, Validator] = {}
    for module, plugin in modules:
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not issubclass(cls, BaseModel) or cls.__module__.partition(".")[0] not in ("axolotl", module.__name__):
                continue
            decorators = cls.__pydantic_decorators__
            for method, decorator in [*decorators.model_validators.items(), *decorators.field_validators.items()]:
                owner = next(c for c in cls.__mro__ if method in vars(c))
                name = f"{owner.__name__}.{method}"
                found.setdefault(name, Validator(name, source_digest(decorator.func), plugin))
    return found


def upstream_validators() -> frozenset[str]:
    """`Class.method` of every pydantic validator in the release's config models and plugin arguments,
    named by the class that defines it."""
    return frozenset(upstream_inventory())


def upstream_function(name: str) -> bool:
    """Whether `module.function` is a function of the release's `axolotl.utils.<module>` or
    `axolotl.integrations.<module>` (`base.load_plugin`, which registers the plugins)."""
    require()
    module, _, function = name.partition(".")
    for package in ("axolotl.utils", "axolotl.integrations"):
        try:
            if inspect.isfunction(getattr(importlib.import_module(f"{package}.{module}"), function, None)):
                return True
        except ImportError:
            continue
    return False


def test_the_lookup_knows_the_validators():
    validators = upstream_validators()
    assert "TrainingValidationMixin.check_gas_bsz" in validators
    assert "AxolotlConfigWCapabilities.check_fp8" in validators  # defined on the model itself
    assert "AxolotlInputConfig.check_fp8" not in validators  # named by the class that defines it
    name = "TrainingValidationMixin.check_gas_bsz"
    assert mirrored(f"Why.\n\nMirrors `{name}`.") == name
    assert mirrored("Mirrors check_gas_bsz.") is None
    assert upstream_function("distributed._get_parallel_config_kwargs")
    assert upstream_function("base.load_plugin")
    assert not upstream_function("distributed.no_such_function")


def test_every_rule_mirrors_an_upstream_validator():
    family = get_family(VERSION)
    validators = upstream_validators()
    wrong = []
    for rule in family.rules:
        name = mirrored(rule.doc)
        if name is None:
            wrong.append(f"{rule.id}: the docstring's last line is not 'Mirrors `Class.method`.'")
        elif name not in validators and not upstream_function(name):
            wrong.append(f"{rule.id}: axolotl {RELEASE} has no validator (or utils function) {name}")
    assert not wrong, "\n".join(wrong)


def test_the_known_lenient_validators_are_upstream():
    from .test_axolotl_differential import KNOWN_LENIENT

    missing = sorted({v for known in KNOWN_LENIENT.values() for v in known.values()} - upstream_validators())
    assert not missing, f"KNOWN_LENIENT names validators axolotl {RELEASE} does not have: {missing}"
