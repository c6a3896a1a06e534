"""Every validator of Axolotl 0.18.0 is accounted for: a rule (or notice) mirrors it, or the reviewed table
`trainspec.families.axolotl.unmirrored` says why none does.

The validators are enumerated from the installed release (`upstream_inventory`: the config classes and
every plugin's settings model), each with a hash of its source. A table entry records the hash it was
reviewed at: when the source changes, the entry is stale and the validator must be reviewed again. An
entry for a validator that is gone, or that a rule now mirrors, is stale too.
"""

from __future__ import annotations

import pytest

from trainspec.families import get_family
from trainspec.families.axolotl.unmirrored import PLUGIN_SETTINGS, REASONS, UNMIRRORED
from trainspec.spec.rules import mirrored

from .axolotl_loader import RELEASE
from .test_axolotl_rules_upstream import Validator, upstream_inventory

pytestmark = pytest.mark.external  # the loader imports torch and transformers

VERSION = f"axolotl@{RELEASE}"
Table = dict[str, tuple[str, str]]


def mirrors() -> dict[str, list[str]]:
    """`Class.method` -> the ids of the family's rules and notices that mirror it."""
    family = get_family(VERSION)
    found: dict[str, list[str]] = {}
    named = [(r.id, r.mirrors) for r in family.rules] + [(i, mirrored(n.doc)) for i, n in family.notices.items()]
    for rule_id, name in named:
        if name:
            found.setdefault(name, []).append(rule_id)
    return found


def table() -> Table:
    return {**UNMIRRORED, **PLUGIN_SETTINGS}


def unaccounted(inventory: dict[str, Validator], mirrored_by: dict[str, list[str]], reviewed: Table) -> list[str]:
    """Each validator neither mirrored nor reviewed, as the table line to review and add."""
    return [
        f'    "{v.name}": ("{v.digest}", "<why no rule mirrors it>"),'
        for v in sorted(inventory.values(), key=lambda v: v.name)
        if v.name not in mirrored_by and v.name not in reviewed
    ]


def stale(inventory: dict[str, Validator], mirrored_by: dict[str, list[str]], reviewed: Table) -> list[str]:
    """Each table entry whose validator is gone, mirrored now, or changed since it was reviewed."""
    found = []
    for name, (digest, _) in sorted(reviewed.items()):
        if name not in inventory:
            found.append(f"{name}: axolotl {RELEASE} has no such validator any more; remove the entry")
        elif name in mirrored_by:
            found.append(f"{name}: mirrored by {', '.join(mirrored_by[name])}; remove the entry")
        elif inventory[name].digest != digest:
            found.append(f"{name}: its source changed ({digest} -> {inventory[name].digest}); review it again")
    return found


def test_every_validator_is_mirrored_or_reviewed():
    missing = unaccounted(upstream_inventory(), mirrors(), table())
    assert not missing, (
        f"axolotl {RELEASE} validators no rule mirrors and unmirrored.py does not list; mirror each or add it:\n"
        + "\n".join(missing)
    )


def test_no_table_entry_is_stale():
    found = stale(upstream_inventory(), mirrors(), table())
    assert not found, "\n".join(found)


def test_the_checks_catch_each_kind_of_drift():
    inventory = {n: Validator(n, d, False) for n, d in [("A.kept", "aaa"), ("A.changed", "new"), ("A.new", "ccc")]}
    inventory["A.ruled"] = Validator("A.ruled", "ddd", False)
    reviewed = {"A.kept": ("aaa", "r"), "A.changed": ("old", "r"), "A.gone": ("eee", "r"), "A.ruled": ("ddd", "r")}
    mirrored_by = {"A.ruled": ["some-rule"]}
    assert unaccounted(inventory, mirrored_by, reviewed) == ['    "A.new": ("ccc", "<why no rule mirrors it>"),']
    found = stale(inventory, mirrored_by, reviewed)
    assert [line.split(":")[0] for line in found] == ["A.changed", "A.gone", "A.ruled"]
    assert "old -> new" in found[0] and "no such validator" in found[1] and "some-rule" in found[2]


def test_the_sections_split_config_classes_from_plugin_settings():
    inventory = upstream_inventory()
    wrong = [n for n in UNMIRRORED if n in inventory and inventory[n].plugin]
    wrong += [n for n in PLUGIN_SETTINGS if n in inventory and not inventory[n].plugin]
    assert not wrong, f"in the wrong section of unmirrored.py: {wrong}"


def test_every_reason_is_specific():
    vague = [name for name, (_, reason) in table().items() if not reason.startswith(REASONS)]
    assert not vague, f"a reason starts with one of {REASONS} and says how: {vague}"
    unexplained = [name for name, (_, reason) in table().items() if "(" not in reason and "`" not in reason]
    assert not unexplained, f"a reason says what the validator does, in brackets or naming a key: {unexplained}"


def test_the_inventory_sees_every_kind_of_validator():
    inventory = upstream_inventory()
    assert inventory["AxolotlConfigWCapabilities.check_fp8"].plugin is False  # on the model itself
    assert "AxolotlInputConfig.check_fp8" not in inventory  # named by the class that defines it
    assert inventory["LigerArgs.check_tiled_mlp_conflict"].plugin  # a plugin whose package imports here
    assert inventory["CutCrossEntropyArgs.check_dtype_is_half"].plugin  # its package needs `evaluate`: by path
    assert inventory["QATConfig.validate_dtype"].digest == inventory["PTQConfig.validate_dtype"].digest
    assert len({v.digest for v in inventory.values()}) > len(inventory) // 2


def test_the_family_publishes_the_table():
    family = get_family(VERSION)
    assert dict(family.unmirrored) == {name: reason for name, (_, reason) in table().items()}
