"""Every Axolotl error rule's example, through the released loader: it refuses the broken config and loads the fix.

An error means the loader refuses the config (docs/architecture.md, "What a severity means"), so each error
rule's example is a probe of the validator it mirrors: the bad config must be refused by Axolotl 0.18.0's own
`validate_config` and the fixed one accepted, on the machine the example names (its `--gpu`, as
`capabilities.capabilities` reads it, and its world size as the GPU count; one H100 when it names none).
That exercises every refusing validator a rule mirrors at least once. Warning rules are probed too: the loader
warns about (or refuses) each broken config.

`STRICTER` lists the error rules whose bad config the loader loads, each with the row of
docs/loader-differences.md that says why trainspec refuses it anyway.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import trainspec
from trainspec.families import get_family
from trainspec.families.axolotl.capabilities import capabilities
from trainspec.spec.device import target
from trainspec.spec.diagnostics import Severity
from trainspec.spec.examples import Example

from .axolotl_loader import RELEASE, TARGET, Verdict, load, require

pytestmark = pytest.mark.external  # the loader imports torch and transformers

VERSION = f"axolotl@{RELEASE}"
DOC = Path(__file__).resolve().parent.parent / "docs" / "loader-differences.md"

STRICTER: dict[str, str] = {
    # rule id -> the row of docs/loader-differences.md under which trainspec refuses what the loader loads
    "mesh-fits-world-size": "A4 the device mesh",  # validation passes; the job stops building its mesh
    "bf16-unsupported-gpu": "A5 bf16 on a GPU without it",  # the loader warns; training fails on the GPU
}
QUIET: dict[str, str] = {
    # warning rule id -> why the loader says nothing about its broken config
}


def _machine(example: Example, fixed: bool) -> dict[str, dict[str, Any]]:
    """What `gpu_capabilities` would report on the machine the example is checked for."""
    run = example.options(fixed)
    found = capabilities(target(run.gpu or "h100"))
    gpus = run.world_sizes[0] if run.world_sizes else 1
    return {
        "capabilities": {
            "bf16": found.bf16,
            "tf32": found.tf32,
            "fp8": found.fp8,
            "n_gpu": gpus,
            "compute_capability": found.compute_capability,
        },
        "env_capabilities": TARGET["env_capabilities"],
    }


def _through_loader(example: Example, fixed: bool, tmp_path: Path) -> Verdict:
    text = example.good if fixed else example.bad
    assert text is not None and not example.options(fixed).overrides, "a probe is a whole file"
    path = tmp_path / ("fixed.yaml" if fixed else "broken.yaml")
    path.write_text(text, encoding="utf-8")
    return load(path, _machine(example, fixed))


def _rules(severity: str) -> list[str]:
    family = get_family(VERSION)
    return sorted(r.id for r in family.rules if r.severity.value == severity and r.id in family.examples)


@pytest.mark.parametrize("rule_id", _rules("error"))
def test_the_loader_refuses_what_an_error_rule_refuses(rule_id, tmp_path):
    require()
    example = get_family(VERSION).examples[rule_id]
    broken = _through_loader(example, False, tmp_path)
    if rule_id in STRICTER:
        assert broken.accepted, f"{rule_id}: the loader refuses it now ({broken.refused}); remove it from STRICTER"
    else:
        assert not broken.accepted, f"{rule_id}: Axolotl {RELEASE} loads the broken example"
    fixed = _through_loader(example, True, tmp_path)
    assert fixed.accepted, f"{rule_id}: Axolotl {RELEASE} refuses the fixed example: {fixed.refused}"


@pytest.mark.parametrize("rule_id", _rules("warning"))
def test_the_loader_warns_where_a_warning_rule_warns(rule_id, tmp_path):
    require()
    example = get_family(VERSION).examples[rule_id]
    broken = _through_loader(example, False, tmp_path)
    if rule_id in QUIET:
        assert broken.outcome == "accepted", f"{rule_id}: the loader says something now; remove it from QUIET"
    else:
        assert broken.outcome != "accepted", f"{rule_id}: Axolotl {RELEASE} loads the broken example without a word"


def test_every_exception_is_a_documented_row():
    text = DOC.read_text(encoding="utf-8")
    missing = [row for row in STRICTER.values() if row not in text]
    assert not missing, f"rows not in {DOC.name}: {missing}"


def test_every_refusing_validator_a_rule_mirrors_is_probed():
    family = get_family(VERSION)
    probed = {r.mirrors for r in family.rules if r.severity.value == "error" and r.id in family.examples}
    refusing = {r.mirrors for r in family.rules if r.severity.value == "error"}
    assert refusing <= probed
    assert len(probed) > 60


ALIASES = [
    ("qat:\n  weight_dtype: fp8\n", True),
    ("qat:\n  activation_dtype: float8\n  weight_dtype: int8\n", True),
    ("quantization:\n  weight_dtype: fp8\n", True),
    ("image_resize_algorithm: BICUBIC\n", True),
    ("image_resize_algorithm: Lanczos\n", True),
    ("qat:\n  weight_dtype: fp16\n", False),
    ("image_resize_algorithm: NEAREST\n", False),
]


@pytest.mark.parametrize(("extra", "loads"), ALIASES)
def test_a_spelling_the_loader_converts_is_a_warning_and_others_an_error(extra, loads, tmp_path):
    """`loader-alias` rewrites exactly the spellings the loader converts; the schema refuses the rest, as it does."""
    require()
    base = get_family(VERSION).examples["loader-alias"].good.split("qat:")[0]
    path = tmp_path / "config.yaml"
    path.write_text(base + extra, encoding="utf-8")
    assert load(path).accepted is loads
    found = trainspec.check(path, family=VERSION)
    errors = [d for d in found if d.severity is Severity.ERROR]
    aliases = [d for d in found if d.rule == "loader-alias"]
    assert (not errors and aliases) if loads else (errors and not aliases), found
