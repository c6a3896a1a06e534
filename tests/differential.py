"""What the differential tests share: trainspec and a trainer's real loader judge the same cases.

A test builds each case by mutating an example config (`set_path`, `remove_path`, raw YAML scalars
written in place of a marker by `render`), runs it through both, and hands both verdicts to a `Judge`:
trainspec must never accept what the loader refuses, and where trainspec is stricter every error must
fall under one of the test's `Classes`, each a row of docs/loader-differences.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, seed, settings

from trainspec.spec.diagnostics import Diagnostic

YAML_1_1 = [
    *("yes", "no", "on", "off", "Yes", "OFF", "y", "n", "017", "0o17", "0x1F", "0b101", "1:30", "1_000"),
    *("1_000.5", "2024-01-01", "2024_01_01", "1e-4", "1.0e+3", ".inf", "-.inf", ".nan", "~", "Null", "+1", ".5"),
]
"""Scalars YAML 1.1 (PyYAML, the loaders) and YAML 1.2 (trainspec, editors) read differently, or only one reads."""
WRONG = [5, 0, -1, "5", " 7", "07", 2.0, 2.5, True, False, "true", "on", [1], ["1"], {"a": 1}, None, "", "1e-3", "x y"]
"""Values of the wrong type for most fields."""


def seeded(sequence: int, cases: int) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Hypothesis settings for a differential run: the same `cases` cases every run for one `sequence`, a
    failing case shown as drawn (shrinking through two loaders takes minutes)."""

    def wrap(test: Callable[..., None]) -> Callable[..., None]:
        configured = settings(
            max_examples=cases,
            phases=[Phase.explicit, Phase.generate],
            database=None,
            deadline=None,
            derandomize=False,
            suppress_health_check=list(HealthCheck),
        )
        return seed(sequence)(configured(test))

    return wrap


Classifier = Callable[[Diagnostic], bool]
Classes = Mapping[str, tuple[str, Classifier]]
"""class name -> (the row of docs/loader-differences.md, which of trainspec's errors belong to it)."""


def set_path(config: Any, path: tuple[str, ...], value: Any) -> bool:
    """Set `path` (a list item as "0"; missing mappings are created); False where a list or a scalar is in the way."""
    node: Any = config
    for part in path[:-1]:
        if isinstance(node, list):
            if not node or part != "0":
                return False
            node = node[0]
            continue
        if not isinstance(node, dict):
            return False
        if node.get(part) is None:
            node[part] = {}
        node = node[part]
    if isinstance(node, list):
        if not node:
            return False
        node = node[0]
    if not isinstance(node, dict):
        return False
    node[path[-1]] = value
    return True


def set_raw(config: Any, raw: dict[str, str], path: tuple[str, ...], scalar: str) -> bool:
    """Set `path` to a raw YAML scalar: a marker there, which `render` replaces by the scalar."""
    marker = f"RAW{len(raw)}RAW"
    if not set_path(config, path, marker):
        return False
    raw[marker] = scalar
    return True


def remove_path(config: Any, path: tuple[str, ...]) -> bool:
    """Remove `path`; False where it is not there."""
    node: Any = config
    for part in path[:-1]:
        node = node[0] if isinstance(node, list) and node else node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict) and path[-1] in node:
        del node[path[-1]]
        return True
    return False


def render(config: Any, raw: Mapping[str, str]) -> str:
    """The config as YAML, each marker string replaced by the raw scalar it stands for."""
    text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    for marker, scalar in raw.items():
        text = text.replace(f"'{marker}'", scalar).replace(marker, scalar)
    return text


def classify(error: Diagnostic, classes: Classes) -> str | None:
    """The class a stricter error belongs to (the first that claims it)."""
    return next((name for name, (_, belongs) in classes.items() if belongs(error)), None)


def undocumented(classes: Classes, doc: str) -> list[str]:
    """The classes whose row is not a row of the page's tables."""
    return [f"class {name!r}: no row {row!r}" for name, (row, _) in classes.items() if f"| {row} |" not in doc]


@dataclass
class Judge:
    """Compares each case's two verdicts and counts the outcomes; `lenient` names the cases (by `key`) where
    trainspec is known to accept what the loader refuses (each an open bug). `finish` fails the test with
    every disagreement found, so one run shows them all."""

    loader: str
    classes: Classes
    lenient: Collection[str] = ()
    counts: Counter[str] = field(default_factory=Counter)
    seen_lenient: set[str] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)

    def __call__(self, errors: list[Diagnostic], refused: bool, shown: Callable[[], str], key: str = "") -> None:
        self.counts["cases"] += 1
        if refused and not errors:
            if key in self.lenient:
                self.seen_lenient.add(key)
                self.counts["more lenient (known)"] += 1
            else:
                self.counts["more lenient"] += 1
                self.failures.append(f"trainspec accepts what {self.loader} refuses:\n{shown()}")
            return
        if refused or not errors:
            self.counts["agree: both refuse" if refused else "agree: both accept"] += 1
            return
        found = {d.rule: classify(d, self.classes) for d in errors}
        if None in found.values():
            self.counts["stricter, in no documented way"] += 1
            self.failures.append(f"trainspec is stricter, in no documented way:\n{shown()}")
            return
        self.counts.update(f"stricter: {name} [{self.classes[name][0]}]" for name in set(found.values()) if name)

    def summary(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()) if k != "cases")

    def finish(self, shown: int = 5) -> None:
        """Fail with the first `shown` disagreements in full and the count of the rest."""
        if self.failures:
            rest = len(self.failures) - shown
            more = f"\n... and {rest} more ({self.summary()})" if rest > 0 else ""
            pytest.fail("\n\n".join(self.failures[:shown]) + more, pytrace=False)
