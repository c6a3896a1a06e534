"""Every rule id a check can report, with its documentation and example.

Three sources: a family's rules (`Family.rules`), the ids its schema gives
constraints (`x-trainspec-rule`), and the engine's own ids (`codes`),
which every family can report. `trainspec rules`, `trainspec explain`, the
SARIF reporter, `--select`/`--ignore` validation and the reference docs all
read this one catalogue.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from trainspec.families import all_families
from trainspec.read.suppressions import matches
from trainspec.spec.codes import REGISTRY, Category
from trainspec.spec.diagnostics import Severity
from trainspec.spec.examples import Example
from trainspec.spec.family import Family
from trainspec.spec.paths import Path, format_path
from trainspec.validate.explain import RULE_ANNOTATION

ENGINE = "engine"
"""The `family` of the engine's own ids."""


@dataclass(frozen=True)
class RuleInfo:
    id: str
    severity: Severity
    paths: tuple[str, ...]
    summary: str
    doc: str
    family: str
    source: str
    """"rule" (a Family rule), "hook" (a Family notice), "schema" (an `x-trainspec-rule` id) or "engine"."""
    example: Example | None
    category: Category | None = None
    """The stage of a check that reports an engine id (None for a family's ids)."""


@cache
def family_rules(family: Family) -> tuple[RuleInfo, ...]:
    """The family's rules and schema ids, sorted by id."""
    found: dict[str, RuleInfo] = {}
    for r in family.rules:
        found[r.id] = RuleInfo(
            r.id, r.severity, r.paths, r.summary, r.doc, family.name, "rule", family.examples.get(r.id)
        )
    for notice_id, notice in family.notices.items():
        found[notice_id] = RuleInfo(
            notice_id,
            notice.severity,
            notice.paths,
            _first_sentence(notice.doc),
            notice.doc,
            family.name,
            "hook",
            family.examples.get(notice_id),
        )
    annotated: dict[str, tuple[list[str], list[str]]] = {}
    for rule_id, where, description in _annotations(family.schema.root, family.schema.root, (), "", frozenset()):
        paths, texts = annotated.setdefault(rule_id, ([], []))
        paths.extend(p for p in where if p not in paths)
        if description and description not in texts:
            texts.append(description)
    for rule_id, (paths, texts) in annotated.items():
        if rule_id in found:
            continue
        doc = (
            family.schema_rule_docs.get(rule_id) or "\n\n".join(texts) or f"A schema constraint on {', '.join(paths)}."
        )
        found[rule_id] = RuleInfo(
            rule_id,
            Severity.ERROR,
            tuple(paths),
            _first_sentence(doc),
            doc,
            family.name,
            "schema",
            family.examples.get(rule_id),
        )
    return tuple(found[k] for k in sorted(found))


@cache
def engine_rules() -> tuple[RuleInfo, ...]:
    """The engine's ids, grouped by category (in the order `Category` declares them), each group by id;
    each with the example of the first family (by name) that shows it."""
    order = list(Category)
    families = [f for _, f in sorted(all_families().items())]
    return tuple(
        RuleInfo(
            code.id,
            code.severity,
            (),
            code.summary,
            code.doc,
            ENGINE,
            "engine",
            next((f.examples[code.id] for f in families if code.id in f.examples), None),
            code.category,
        )
        for code in sorted(REGISTRY.values(), key=lambda c: (order.index(c.category), c.id))
    )


def catalogue(families: dict[str, Family] | None = None) -> list[RuleInfo]:
    """Every family's rules (families by name), then the engine's."""
    families = all_families() if families is None else families
    return [info for name in sorted(families) for info in family_rules(families[name])] + list(engine_rules())


def names_a_rule(pattern: str) -> bool:
    """Whether an id or id prefix (as --select, --ignore and a project's settings take them) matches a rule
    of an installed family or of the engine."""
    return any(matches(i, pattern) for i in _rule_ids(tuple(all_families().values())))


@cache
def _rule_ids(families: tuple[Family, ...]) -> tuple[str, ...]:
    """Every rule id of these families and of the engine: the catalogue built once per run (and again only
    when a family is registered)."""
    return tuple(info.id for family in families for info in family_rules(family)) + tuple(
        info.id for info in engine_rules()
    )


def lookup(rule_id: str, family: Family | None) -> RuleInfo | None:
    """What `rule_id` means in a file of `family` (None: a file of no known family)."""
    if family is not None:
        for info in family_rules(family):
            if info.id == rule_id:
                return info
    return next((info for info in engine_rules() if info.id == rule_id), None)


_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.\s+(?=[A-Z])")


def _first_sentence(text: str) -> str:
    first = text.strip().split("\n\n")[0].replace("\n", " ")
    m = _SENTENCE_END.search(first)
    return first[: m.start() + 1] if m else first


def _annotations(
    root: Any, node: Any, path: Path, description: str, active: frozenset[str], conditional: bool = False
) -> Iterator[tuple[str, list[str], str]]:
    """(rule id, config paths, description) for every `x-trainspec-rule` in the schema.

    An annotated `then` names the keys it constrains; any other annotated
    node names its own path.
    """
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in active:
        target = root
        for part in ref.lstrip("#").split("/")[1:]:
            target = target[part.replace("~1", "/").replace("~0", "~")]
        yield from _annotations(root, target, path, description, active | {ref})
    description = str(node.get("description", description))
    if RULE_ANNOTATION in node:
        keys = [*node.get("properties", {}), *node.get("required", ())] if conditional else []
        paths = list(dict.fromkeys(_show((*path, k)) for k in keys)) or [_show(path)]
        yield str(node[RULE_ANNOTATION]), paths, description
    disc = node.get("discriminator")
    if isinstance(disc, dict) and RULE_ANNOTATION in disc:
        yield str(disc[RULE_ANNOTATION]), [_show((*path, disc["propertyName"]))], description
    for name, spec in node.get("properties", {}).items():
        yield from _annotations(root, spec, (*path, name), "", active)
    if isinstance(node.get("items"), dict):
        yield from _annotations(root, node["items"], (*path, 0), "", active)
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(key, ()):
            yield from _annotations(root, sub, path, description, active)
    for key in ("then", "else"):
        if key in node:
            yield from _annotations(root, node[key], path, description, active, conditional=True)


def _show(path: Path) -> str:
    """A schema location as a config path; list items show as `[]`."""
    return format_path(path, pattern=True)
