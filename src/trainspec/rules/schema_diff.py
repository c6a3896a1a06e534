"""What changes between two family versions: fields and rules, for `trainspec schema diff A B`.

It is how a team reads what an upgrade of its trainer means for its configs:
fields added and removed, changed types, defaults, bounds and allowed values,
and rules added, removed or changed (severity, paths, documentation).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from trainspec.rules.catalogue import RuleInfo, family_rules
from trainspec.spec.family import Family
from trainspec.validate.fields import Field, fields


@dataclass(frozen=True)
class Change:
    """One difference: `kind` is "added", "removed" or "changed"; `what` names the field or rule."""

    kind: str
    subject: str
    what: str
    before: str = ""
    after: str = ""


def diff(old: Family, new: Family) -> list[Change]:
    """Field changes, then rule changes, each sorted."""
    return _field_changes(old, new) + _rule_changes(old, new)


def _key(field: Field) -> str:
    return f"{field.path} (when {field.variant})" if field.variant else field.path


def _field_changes(old: Family, new: Family) -> list[Change]:
    before = {_key(f): f for f in fields(old.schema)}
    after = {_key(f): f for f in fields(new.schema)}
    changes = [Change("added", "field", key, after=_summary(after[key])) for key in after.keys() - before.keys()]
    changes += [Change("removed", "field", key, before=_summary(before[key])) for key in before.keys() - after.keys()]
    for key in before.keys() & after.keys():
        for aspect in ("type", "default", "bounds"):
            was, now = getattr(before[key], aspect), getattr(after[key], aspect)
            if was != now:
                changes.append(Change("changed", f"field {aspect}", key, was or "(none)", now or "(none)"))
    return sorted(changes, key=lambda c: (c.what, c.kind, c.subject))


def _summary(field: Field) -> str:
    parts = [field.type, f"default {field.default}" if field.default else "", field.bounds]
    return "; ".join(p for p in parts if p)


def _rule_changes(old: Family, new: Family) -> list[Change]:
    before = {r.id: r for r in family_rules(old)}
    after = {r.id: r for r in family_rules(new)}
    changes = [Change("added", "rule", i, after=_rule(after[i])) for i in after.keys() - before.keys()]
    changes += [Change("removed", "rule", i, before=_rule(before[i])) for i in before.keys() - after.keys()]
    for rule_id in before.keys() & after.keys():
        was, now = before[rule_id], after[rule_id]
        for aspect, a, b in (
            ("severity", was.severity.value, now.severity.value),
            ("paths", ", ".join(was.paths), ", ".join(now.paths)),
            ("documentation", was.doc.strip(), now.doc.strip()),
        ):
            if a != b:
                changes.append(Change("changed", f"rule {aspect}", rule_id, a, b))
    return sorted(changes, key=lambda c: (c.what, c.kind, c.subject))


def _rule(info: RuleInfo) -> str:
    return f"{info.severity.value}: {info.summary}"


def render_text(old: Family, new: Family, changes: list[Change]) -> str:
    """One line per change, grouped under fields and rules, with a count."""
    lines = [f"{old.label} -> {new.label}: {len(changes)} change{'s' if len(changes) != 1 else ''}"]
    for title, prefix in (("fields", "field"), ("rules", "rule")):
        group = [c for c in changes if c.subject.startswith(prefix)]
        if not group:
            continue
        lines += ["", f"{title}:"]
        for c in group:
            aspect = c.subject.removeprefix(prefix).strip()
            if c.kind == "added":
                lines.append(f"  + {c.what}: {c.after}")
            elif c.kind == "removed":
                lines.append(f"  - {c.what}: {c.before}")
            else:
                lines.append(f"  ~ {c.what} ({aspect}): {_short(c.before)} -> {_short(c.after)}")
    return "\n".join(lines) + "\n"


def _short(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def as_dict(old: Family, new: Family, changes: list[Change]) -> dict[str, object]:
    commits = {f"{end}_commit": f.commit for end, f in (("from", old), ("to", new)) if f.commit}
    return {"from": old.id, "to": new.id, **commits, "changes": [asdict(c) for c in changes]}
