"""Every Axolotl rule names the validator it mirrors, and that validator is in the installed release.

A rule's docstring ends with "Mirrors `Class.method`." (the family's contract); the class is the one
that defines the pydantic validator (a mixin of `AxolotlInputConfig`, the config model itself, or a
plugin's arguments model), as Axolotl 0.18.0 has it. A rule for what happens outside the validators (the
plugins registered before them, the device mesh the job builds after) names the function of `axolotl.utils`
or `axolotl.integrations` that does it instead: "Mirrors `module.function`.".
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from dataclasses import dataclass
from functools import cache

import pytest

from trainspec.families import get_family
from trainspec.spec.rules import mirrored

from .axolotl_loader import RELEASE, require, validator_inventory

pytestmark = pytest.mark.external  # the loader imports torch and transformers

VERSION = f"axolotl@{RELEASE}"


@dataclass(frozen=True)
class Validator:
    """One pydantic validator of the release: `Class.method` (the class that defines it), a short hash of its
    source, and whether it belongs to a plugin's settings model (`axolotl.integrations.*.args`)."""

    name: str
    digest: str
    plugin: bool


@cache
def upstream_inventory() -> dict[str, Validator]:
    """Every pydantic validator of the release's config classes (`axolotl.utils.schemas`, with the models
    `AxolotlInputConfig` and `AxolotlConfigWCapabilities`) and of each plugin's settings model, by name
    (`axolotl_loader.validator_inventory`)."""
    require()
    return {name: Validator(name, digest, plugin) for name, (digest, plugin) in validator_inventory().items()}


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
