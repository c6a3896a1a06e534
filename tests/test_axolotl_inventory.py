"""Every validator of each Axolotl release is accounted for: a rule (or notice) of the family at that
release mirrors it, or the reviewed table `trainspec.families.axolotl.unmirrored` says why none does
(`reviewed(release)`: 0.18.0's tables, with 0.19.0's changes for 0.19.0).

The validators are enumerated from the release itself (`validator_inventory` in tests/axolotl_loader.py:
the config classes and every plugin's settings model), each with a hash of its source: 0.18.0 in this
process, 0.19.0 in its oracle's subprocess. A table entry records the hash it was reviewed at: when the
source changes, the entry is stale and the validator must be reviewed again. An entry for a validator that
is gone, or that a rule now mirrors, is stale too.
"""

from __future__ import annotations

from functools import cache

import pytest

from trainspec.families import get_family
from trainspec.families.axolotl.unmirrored import CHANGED_0_19_0, PLUGIN_SETTINGS, REASONS, UNMIRRORED, reviewed
from trainspec.spec.rules import mirrored

from .axolotl_loader import RELEASE, RELEASES, Served
from .test_axolotl_rules_upstream import Validator, upstream_inventory

pytestmark = pytest.mark.external  # the loader imports torch and transformers

Table = dict[str, tuple[str, str]]


@cache
def inventory(release: str) -> dict[str, Validator]:
    """The release's validators: 0.18.0's from this process, another release's from its oracle's subprocess."""
    if release == RELEASE:
        return upstream_inventory()
    served = Served(release)
    try:
        found = served.inventory()
    finally:
        served.close()
    return {name: Validator(name, digest, plugin) for name, (digest, plugin) in found.items()}


def mirrors(release: str = RELEASE) -> dict[str, list[str]]:
    """`Class.method` -> the ids of the family's rules and notices at the release that mirror it."""
    family = get_family(f"axolotl@{release}")
    found: dict[str, list[str]] = {}
    named = [(r.id, r.mirrors) for r in family.rules] + [(i, mirrored(n.doc)) for i, n in family.notices.items()]
    for rule_id, name in named:
        if name:
            found.setdefault(name, []).append(rule_id)
    return found


def table(release: str = RELEASE) -> Table:
    return reviewed(release)


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
            found.append(f"{name}: this release has no such validator any more; remove the entry")
        elif name in mirrored_by:
            found.append(f"{name}: mirrored by {', '.join(mirrored_by[name])}; remove the entry")
        elif inventory[name].digest != digest:
            found.append(f"{name}: its source changed ({digest} -> {inventory[name].digest}); review it again")
    return found


RELEASE_NAMES = sorted(RELEASES)


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_every_validator_is_mirrored_or_reviewed(release):
    missing = unaccounted(inventory(release), mirrors(release), table(release))
    assert not missing, (
        f"axolotl {release} validators no rule mirrors and unmirrored.py does not list; mirror each or add it:\n"
        + "\n".join(missing)
    )


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_no_table_entry_is_stale(release):
    found = stale(inventory(release), mirrors(release), table(release))
    assert not found, f"axolotl {release}:\n" + "\n".join(found)


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
    found = upstream_inventory()
    wrong = [n for n in UNMIRRORED if n in found and found[n].plugin]
    wrong += [n for n in PLUGIN_SETTINGS if n in found and not found[n].plugin]
    assert not wrong, f"in the wrong section of unmirrored.py: {wrong}"


def test_0_19_0_changes_only_what_it_has():
    """Each 0.19.0 change of the table names a validator of 0.19.0, or one of 0.18.0's table it drops."""
    found = inventory("0.19.0")
    wrong = [n for n, entry in CHANGED_0_19_0.items() if entry is not None and n not in found]
    wrong += [n for n, entry in CHANGED_0_19_0.items() if entry is None and n not in {**UNMIRRORED, **PLUGIN_SETTINGS}]
    assert not wrong, wrong


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_every_reason_is_specific(release):
    vague = [name for name, (_, reason) in table(release).items() if not reason.startswith(REASONS)]
    assert not vague, f"a reason starts with one of {REASONS} and says how: {vague}"
    unexplained = [name for name, (_, reason) in table(release).items() if "(" not in reason and "`" not in reason]
    assert not unexplained, f"a reason says what the validator does, in brackets or naming a key: {unexplained}"


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_the_inventory_sees_every_kind_of_validator(release):
    found = inventory(release)
    assert found["AxolotlConfigWCapabilities.check_fp8"].plugin is False  # on the model itself
    assert "AxolotlInputConfig.check_fp8" not in found  # named by the class that defines it
    assert found["LigerArgs.check_tiled_mlp_conflict"].plugin  # a plugin whose package imports here
    assert found["CutCrossEntropyArgs.check_dtype_is_half"].plugin  # its package needs `evaluate`: by path
    assert found["QATConfig.validate_dtype"].digest == found["PTQConfig.validate_dtype"].digest
    assert len({v.digest for v in found.values()}) > len(found) // 2


def test_0_19_0_is_read_from_its_own_release():
    """The two inventories differ where the releases do: 0.19.0's new validators are only in its own."""
    assert "SystemValidationMixin.check_flash_attn_available" in inventory("0.19.0")
    assert "SystemValidationMixin.check_flash_attn_available" not in inventory(RELEASE)


@pytest.mark.parametrize("release", RELEASE_NAMES)
def test_the_family_publishes_the_table(release):
    family = get_family(f"axolotl@{release}")
    assert dict(family.unmirrored) == {name: reason for name, (_, reason) in table(release).items()}
