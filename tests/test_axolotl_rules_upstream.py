"""Every Axolotl rule names the validator it mirrors, and that validator is in the installed release.

A rule's docstring ends with "Mirrors `Class.method`." (the family's contract); the class is the one
that defines the pydantic validator (a mixin of `AxolotlInputConfig`, the config model itself, or a
plugin's arguments model), as Axolotl 0.18.0 has it. A rule for what the job does after validation (its
device mesh) names the function of `axolotl.utils` that does it instead: "Mirrors `module.function`.".
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from functools import cache

import pytest

from trainspec.families import get_family

from .axolotl_loader import RELEASE, require

pytestmark = pytest.mark.external  # the loader imports torch and transformers

VERSION = f"axolotl@{RELEASE}"
MIRRORS = re.compile(r"Mirrors `(\w+)\.(\w+)`\.")


@cache
def upstream_validators() -> frozenset[str]:
    """`Class.method` of every pydantic validator in the release's config models and plugin arguments,
    named by the class that defines it."""
    require()
    import axolotl.integrations
    import axolotl.utils.schemas
    from pydantic import BaseModel

    modules = [f"axolotl.utils.schemas.{m.name}" for m in pkgutil.iter_modules(axolotl.utils.schemas.__path__)]
    modules += [f"axolotl.integrations.{m.name}.args" for m in pkgutil.iter_modules(axolotl.integrations.__path__)]
    found: set[str] = set()
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError:  # a plugin without an args module, or one needing a package not installed
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not issubclass(cls, BaseModel) or not cls.__module__.startswith("axolotl."):
                continue
            decorators = cls.__pydantic_decorators__
            for method in [*decorators.model_validators, *decorators.field_validators]:
                owner = next(c for c in cls.__mro__ if method in vars(c))
                found.add(f"{owner.__name__}.{method}")
    return frozenset(found)


def upstream_function(name: str) -> bool:
    """Whether `module.function` is a function of the release's `axolotl.utils.<module>`."""
    require()
    module, _, function = name.partition(".")
    try:
        return inspect.isfunction(getattr(importlib.import_module(f"axolotl.utils.{module}"), function, None))
    except ImportError:
        return False


def mirrored(doc: str) -> str | None:
    """The `Class.method` a rule's docstring names on its last line."""
    lines = doc.strip().splitlines()
    match = MIRRORS.fullmatch(lines[-1].strip()) if lines else None
    return f"{match[1]}.{match[2]}" if match else None


def test_the_lookup_knows_the_validators():
    validators = upstream_validators()
    assert "TrainingValidationMixin.check_gas_bsz" in validators
    assert "AxolotlConfigWCapabilities.check_fp8" in validators  # defined on the model itself
    assert "AxolotlInputConfig.check_fp8" not in validators  # named by the class that defines it
    name = "TrainingValidationMixin.check_gas_bsz"
    assert mirrored(f"Why.\n\nMirrors `{name}`.") == name
    assert mirrored("Mirrors check_gas_bsz.") is None
    assert upstream_function("distributed._get_parallel_config_kwargs")
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
