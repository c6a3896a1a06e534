"""Differential test: every case through trainspec and through SpecForge 0.2.0's own loading path.

Hypothesis draws each case from the family schema and the mutations that matter (values drawn from
each field's own schema, values of a wrong type, YAML 1.1 scalars written raw, unknown and legacy
keys, removed keys, null sections, `path=value` overrides, torchrun world sizes), on top of
SpecForge's own example configs; it writes the case as YAML (or JSON) and runs it through
`trainspec.check` at `VERSION` and through the real loader (tests/specforge_loader.py). The two
verdicts (an error, or none) must agree, with two exceptions:

- trainspec must never accept what the loader refuses: such a case fails the test;
- where trainspec is stricter, the case must fall under one of `CLASSES`, each a row of
  docs/loader-differences.md, and the test counts which.

The counts of cases and of each disagreement class are printed at the end of the run. Seeded:
the same cases every run. TRAINSPEC_DIFFERENTIAL_CASES sets how many (2,000 in CI); another
sequence: TRAINSPEC_DIFFERENTIAL_SEED. A longer run:
`TRAINSPEC_DIFFERENTIAL_CASES=50000 pytest tests/test_specforge_differential.py`.
"""

from __future__ import annotations

import copy
import json
import math
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

import trainspec
from trainspec.families import get_family
from trainspec.spec.diagnostics import Diagnostic, Severity

from .conftest import CORPUS, REPORTS, ROOT
from .differential import WRONG, YAML_1_1, Classes, Judge, remove_path, render, seeded, set_path, set_raw, undocumented
from .specforge_loader import Verdict, load, require

VERSION = "specforge@0.2.0"
CASES = int(os.environ.get("TRAINSPEC_DIFFERENTIAL_CASES", "2000"))
SEED = int(os.environ.get("TRAINSPEC_DIFFERENTIAL_SEED", "0"))
DOC = ROOT / "docs" / "loader-differences.md"

EXAMPLES = sorted((CORPUS / "specforge").glob("*.yaml")) + sorted((CORPUS / "specforge-a6b6b02").glob("*.yaml"))
OVERRIDE_VALUES = ["", "null", "yes", "true", "1", " 7", "0", "-3", "2.0", "[1, 2]", "{}", "abc", "1e-3", "[a", "x=y"]
LEGACY = {
    "deployment_mode": ["local_colocated", "disaggregated", None, "elsewhere"],
    "server_urls": [[], ["http://h:1"], None, "http://h:1"],
    "metadata_db_path": ["", "consumer.sqlite", "/s/consumer.sqlite", "/s/other.db", "/s/", None],
}


# -- the family schema, as paths and the subschema of each ------------------------------------------------


@cache
def fields() -> tuple[tuple[tuple[str, ...], dict[str, Any]], ...]:
    """Every field path below the root (a list item as index 0) with its inlined subschema."""
    schema = get_family(VERSION).schema
    found: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def walk(node: dict[str, Any], path: tuple[str, ...]) -> None:
        for branch in schema.branches(node, every=True, conditional=False):
            for name, sub in branch.get("properties", {}).items():
                here = (*path, name)
                if here not in {p for p, _ in found}:
                    found.append((here, _plain(sub)))
                    walk(sub, here)
            if isinstance(branch.get("items"), dict) and path:
                walk(branch["items"], (*path, "0"))

    walk(schema.inlined, ())
    return tuple(found)


def _plain(node: Any) -> Any:
    """A subschema without trainspec's annotations (hypothesis-jsonschema needs only the keywords)."""
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {k: _plain(v) for k, v in node.items() if not k.startswith(("x-", "markdown", "defaultSnippets"))}


@cache
def value_of(index: int) -> st.SearchStrategy[Any]:
    """A value the field's own schema allows; a section or a list of sections is drawn empty (the example
    configs fill them, and hypothesis-jsonschema's object strategy does not run on this hypothesis)."""
    node = fields()[index][1]
    if '"object"' in json.dumps(node) or '"properties"' in json.dumps(node):
        return st.sampled_from([{}, []])
    return from_schema(node).filter(lambda v: not isinstance(v, float) or math.isfinite(v))


# -- a case ----------------------------------------------------------------------------------------------


@dataclass
class Case:
    config: Any
    raw: dict[str, str]  # marker -> raw YAML scalar written in its place
    overrides: list[str]
    world_size: int | None
    name: str
    steps: list[str]

    def text(self) -> str:
        if self.name.endswith(".json"):
            return json.dumps(self.config, indent=2)
        return render(self.config, self.raw)

    def describe(self) -> str:
        return f"{self.name} ({'; '.join(self.steps)}), overrides {self.overrides}, world size {self.world_size}"


@cache
def example_config(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@st.composite
def cases(draw: st.DrawFn) -> Case:
    example = draw(st.sampled_from(EXAMPLES))
    config = copy.deepcopy(example_config(example))
    raw: dict[str, str] = {}
    steps: list[str] = [example.name]
    name = draw(st.sampled_from(["run.yaml"] * 6 + ["run.yml", "run.json"]))
    for _ in range(draw(st.sampled_from([0, 1, 1, 2, 2, 3, 4]))):
        kind = draw(st.sampled_from(["valid"] * 4 + ["wrong"] * 2 + ["yaml11"] * 2 + ["unknown", "legacy", "remove"]))
        index = draw(st.integers(0, len(fields()) - 1))
        path = fields()[index][0]
        where = ".".join(path)
        if kind == "valid":
            value = draw(value_of(index))
            if set_path(config, path, value):
                steps.append(f"{where} = {value!r}")
        elif kind == "wrong":
            value = draw(st.sampled_from(WRONG))
            if set_path(config, path, value):
                steps.append(f"{where} = {value!r}")
        elif kind == "yaml11" and not name.endswith(".json"):
            scalar = draw(st.sampled_from(YAML_1_1))
            if set_raw(config, raw, path, scalar):
                steps.append(f"{where}: {scalar} (raw YAML)")
        elif kind == "unknown":
            typo = draw(st.sampled_from([path[-1] + "s", path[-1][:-1], "extra"]))
            if set_path(config, (*path[:-1], typo), 1):
                steps.append(f"unknown key {'.'.join((*path[:-1], typo))}")
        elif kind == "legacy":
            key = draw(st.sampled_from(sorted(LEGACY)))
            value = draw(st.sampled_from(LEGACY[key]))
            if set_path(config, ("training", key), value):
                steps.append(f"legacy training.{key} = {value!r}")
        elif kind == "remove" and remove_path(config, path):
            steps.append(f"removed {where}")
    overrides = [draw(overrides_item()) for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3])))]
    world_size = draw(st.sampled_from([None, None, None, "planned", "planned", 1, 2, 3, 4, 8, 16]))
    if world_size == "planned":  # torchrun's WORLD_SIZE as the launcher sets it
        deployment = config.get("deployment") if isinstance(config, dict) else None
        trainer = deployment.get("trainer") if isinstance(deployment, dict) else None
        trainer = trainer if isinstance(trainer, dict) else {}
        nnodes, nproc = trainer.get("nnodes", 1), trainer.get("nproc_per_node", 1)
        world_size = nnodes * nproc if isinstance(nnodes, int) and isinstance(nproc, int) else None
        world_size = world_size if world_size is not None and world_size >= 1 else None  # torchrun starts 1 or more
    return Case(config, raw, overrides, world_size if isinstance(world_size, int) else None, name, steps)


@st.composite
def overrides_item(draw: st.DrawFn) -> str:
    index = draw(st.integers(0, len(fields()) - 1))
    path = ".".join(fields()[index][0])
    shape = draw(st.sampled_from(["drawn", "drawn", "text", "unknown", "legacy", "no-equals"]))
    if shape == "drawn":
        value = draw(value_of(index))
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)  # as a person types it
        return f"{path}={text}"
    if shape == "text":
        return f"{path}={draw(st.sampled_from(OVERRIDE_VALUES))}"
    if shape == "unknown":
        return f"{path}x=1"
    if shape == "legacy":
        return "training.deployment_mode=disaggregated"
    return path


# -- the two verdicts, and the disagreement classes --------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    case: Case
    errors: list[Diagnostic]
    loader: Verdict


CLASSES: Classes = {
    # class -> (the row of docs/loader-differences.md, which of trainspec's errors belong to it)
    "YAML 1.1 booleans": ("Q11 file formats (§7)", lambda d: "'s loader reads it as" in d.message),
    "duplicate keys": ("Q11 file formats (§7)", lambda d: "duplicate-key" in (d.rule, d.message.split(":")[0])),
    "lax coercion": ("Q3 lax coercion", lambda d: "'s loader itself reads it as" in d.message),
    "non-finite numbers": ("Q4 NaN and infinity", lambda d: "non-finite-number" in d.rule + d.message),
    "empty training section": (
        "Q2 null sections",
        lambda d: (
            (d.config_path == "training" and "must be a table/mapping" in d.message)
            or (d.message.startswith("`training` is ") and "not a table" in d.message)
        ),  # so overrides cannot set in it
    ),
    "override values typed": ("Q10 overrides (§6)", lambda d: d.origin is not None and "must be" in d.message),
}
"""Each way trainspec may be stricter than the loader, with the documented row it falls under."""


def run(case: Case, directory: Path) -> Outcome:
    path = directory / case.name
    path.write_text(case.text(), encoding="utf-8")
    found = trainspec.check(path, family=VERSION, overrides=case.overrides, world_size=case.world_size)
    errors = [d for d in found if d.severity is Severity.ERROR]
    return Outcome(case, errors, load(path, case.overrides, case.world_size))


def _shown(outcome: Outcome) -> str:
    errors = "; ".join(f"{d.rule}: {d.message}" for d in outcome.errors) or "no error"
    loader = outcome.loader.message or "accepts"
    return f"{outcome.case.describe()}\n  trainspec: {errors}\n  loader: {loader}\n---\n{outcome.case.text()}"


def test_every_class_is_a_documented_row():
    text = DOC.read_text(encoding="utf-8")
    assert not undocumented(CLASSES, text), f"{undocumented(CLASSES, text)} in {DOC.name}"
    assert "TRAINSPEC_DIFFERENTIAL_CASES" in text


def test_trainspec_and_specforge_0_2_0_agree(tmp_path):
    require()
    judge = Judge("SpecForge 0.2.0", CLASSES)

    @seeded(SEED, CASES)
    @given(cases())
    def agree(case: Case) -> None:
        outcome = run(case, tmp_path)
        judge(outcome.errors, not outcome.loader.accepted, lambda: _shown(outcome))

    agree()
    REPORTS.append(
        f"SpecForge 0.2.0 differential ({VERSION}, seed {SEED}): {judge.counts['cases']} cases; a stricter case "
        "counts once per class of its errors; " + judge.summary()
    )
    judge.finish()
    assert judge.counts["cases"] >= CASES
    assert any(k.startswith("stricter") for k in judge.counts), "the cases must reach a stricter verdict at least once"
