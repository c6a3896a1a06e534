"""SpecForge's legacy migration (reference §5): three deployment keys that used to live under `training`.

`migrate_mapping` is written against plain mutable mappings so that the same
code serves `trainspec check` (plain dicts) and `trainspec migrate` (a
ruamel.yaml round-trip tree, whose CommentedMap is a dict subclass): new
mappings are created with the type of the tree's own mappings. Unlike
upstream, which migrates silently and aborts on the first conflict, every
legacy key is reported, and a conflict keeps the canonical value so the rest
of the config is still checked.
"""

from __future__ import annotations

import posixpath
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document
from trainspec.spec.family import Notice
from trainspec.spec.paths import Path, format_path
from trainspec.spec.schema import get
from trainspec.spec.wording import show, type_name

MIGRATED = "legacy-key-migrated"
NOT_MIGRATED = "legacy-key-not-migrated"
DB_FILE = "consumer.sqlite"

MODE: Path = ("deployment", "mode")
URLS: Path = ("deployment", "disaggregated", "server_urls")
STATE_DIR: Path = ("deployment", "disaggregated", "consumer_state_dir")
LEGACY: dict[str, Path] = {"deployment_mode": MODE, "server_urls": URLS, "metadata_db_path": STATE_DIR}


@dataclass(frozen=True)
class Step:
    """What the migration did with one legacy key."""

    legacy: Path
    target: Path
    rule: str
    message: str
    moved: bool = False
    """The legacy value now lives at `target` (so do its positions)."""
    implies_mode: bool = False
    """This key is why `deployment.mode` became "disaggregated"."""

    @property
    def severity(self) -> Severity:
        return Severity.WARNING if self.rule == MIGRATED else Severity.ERROR


def migrate_mapping(data: MutableMapping[str, Any]) -> list[Step]:
    """Move the legacy keys of `data` to their canonical places, in place; one step per legacy key."""
    training = data.get("training")
    if not isinstance(training, MutableMapping) or not any(k in training for k in LEGACY):
        return []
    present = {k: training.pop(k) for k in LEGACY if k in training}
    mode, urls, db = (present.get(k) for k in LEGACY)
    new = type(training)

    created = "deployment" not in data
    if created:
        data["deployment"] = new()
    deployment = data["deployment"]
    if not isinstance(deployment, MutableMapping):
        return [_blocked(k, v, "deployment", deployment) for k, v in present.items()]

    steps: dict[str, Step] = {}
    implied_by = None
    if mode is None and deployment.get("mode") is None:
        implied_by = "server_urls" if urls else "metadata_db_path" if db else None
        if implied_by is not None:
            deployment["mode"] = "disaggregated"
    if "deployment_mode" in present:
        steps["deployment_mode"] = _settle(deployment, "deployment_mode", mode, mode)

    if urls is not None or db is not None:
        dis = deployment.setdefault("disaggregated", new())
        if not isinstance(dis, MutableMapping):
            steps.update(
                (k, _blocked(k, v, "deployment.disaggregated", dis))
                for k, v in present.items()
                if k != "deployment_mode" and v is not None
            )
        elif db == "":
            steps["metadata_db_path"] = Step(
                ("training", "metadata_db_path"),
                STATE_DIR,
                MIGRATED,
                f"{_legacy('metadata_db_path', db)} is a legacy key; an empty path moves nothing to "
                f"{format_path(STATE_DIR)}, but it still creates the deployment.disaggregated section",
            )
        elif db is not None and (not isinstance(db, str) or posixpath.basename(db) != DB_FILE):
            now = dis.get("consumer_state_dir")
            steps["metadata_db_path"] = Step(
                ("training", "metadata_db_path"),
                STATE_DIR,
                "legacy-metadata-db-path-name",
                f"legacy key {_legacy('metadata_db_path', db)} must be a path to a file named {DB_FILE} to "
                f"migrate to {format_path(STATE_DIR)} (which is {show(now)}); write that directory as "
                f"{format_path(STATE_DIR)} instead",
            )
    for key, value in present.items():
        if key not in steps:
            canonical = (posixpath.dirname(value) or ".") if key == "metadata_db_path" and value else value
            steps[key] = _settle(deployment.get("disaggregated"), key, value, canonical)

    out = []
    for key in present:
        step = steps[key]
        if key == implied_by:
            step = Step(
                step.legacy,
                step.target,
                step.rule,
                step.message + '; it also sets deployment.mode = "disaggregated"',
                step.moved,
                True,
            )
        out.append(step)
    if created and not deployment:
        del data["deployment"]
    return out


def _legacy(key: str, value: Any) -> str:
    return f"training.{key} = {show(value)}"


def _blocked(key: str, value: Any, where: str, found: Any) -> Step:
    return Step(
        ("training", key),
        LEGACY[key],
        NOT_MIGRATED,
        f"legacy key {_legacy(key, value)} cannot move to {format_path(LEGACY[key])}: `{where}` is "
        f"{'null' if found is None else f'{type_name(found)} {show(found)}'}, not a mapping; "
        "the legacy value is dropped",
    )


def _settle(owner: Any, key: str, value: Any, canonical: Any) -> Step:
    """Store the canonical form of a legacy value in `owner` unless the canonical key already holds another."""
    legacy, target = ("training", key), LEGACY[key]
    text, where = _legacy(key, value), format_path(target)
    if value is None:
        return Step(legacy, target, MIGRATED, f"{text} is a legacy key with nothing to move to {where}; it was dropped")
    derived = f" (directory {show(canonical)})" if canonical != value else ""
    current = owner.get(target[-1])
    if current is not None and current != canonical:
        return Step(
            legacy,
            target,
            f"legacy-{key.replace('_', '-')}-conflict",
            f"legacy key {text}{derived} conflicts with {where} = {show(current)}; {where} is kept: "
            "remove the legacy key",
        )
    if current is not None:
        return Step(
            legacy, target, MIGRATED, f"{text} is a legacy key; {where} already holds the same value, so it was dropped"
        )
    owner[target[-1]] = canonical
    return Step(
        legacy,
        target,
        MIGRATED,
        f"{text} is a legacy key; it now lives at {where}{' = ' + show(canonical) if derived else ''}",
        moved=True,
    )


def migrate_legacy(doc: Document) -> list[Diagnostic]:
    """The family's Migration: migrate `doc.data` in place and re-home the moved values' positions.

    Later diagnostics on a moved value, and on a section or `deployment.mode`
    the migration created, point at the legacy key's line.
    """
    if not isinstance(doc.data, MutableMapping):
        return []
    steps = migrate_mapping(doc.data)
    out = []
    for step in steps:
        pos = doc.where(step.legacy)
        out.append(
            Diagnostic(
                doc.file,
                pos.line if pos else None,
                pos.column if pos else None,
                step.legacy,
                step.rule,
                step.severity,
                step.message,
            )
        )
    for step in steps:
        span = doc.positions.get(step.legacy)
        if step.moved:
            doc.move(step.legacy, step.target)
        if span is None:
            continue
        sections = [step.target[:n] for n in range(1, len(step.target)) if get(doc.data, step.target[:n]) is not None]
        for path in [*sections, MODE] if step.implies_mode else sections:
            doc.positions.setdefault(path, span)  # only where the file itself wrote nothing
    return out


_LEGACY_PATHS = tuple(f"training.{key}" for key in LEGACY)
NOTICES = {
    MIGRATED: Notice(
        Severity.WARNING,
        _LEGACY_PATHS,
        "A deployment setting is written under `training`, where older SpecForge versions kept it.\n\n"
        "trainspec moves it to its place under `deployment` before checking, as SpecForge does, and\n"
        "says where. `trainspec migrate FILE` rewrites the file that way, keeping everything else.",
    ),
    "legacy-deployment-mode-conflict": Notice(
        Severity.ERROR,
        ("training.deployment_mode", "deployment.mode"),
        "`training.deployment_mode` and `deployment.mode` are both written and differ.\n\n"
        "Keep one: `deployment.mode` is the current place, and the rest of the file is checked with it.",
    ),
    "legacy-server-urls-conflict": Notice(
        Severity.ERROR,
        ("training.server_urls", format_path(URLS)),
        "`training.server_urls` and `deployment.disaggregated.server_urls` are both written and differ.\n\n"
        "Keep the list under `deployment.disaggregated`.",
    ),
    "legacy-metadata-db-path-name": Notice(
        Severity.ERROR,
        ("training.metadata_db_path",),
        f"`training.metadata_db_path` does not name a file called `{DB_FILE}`.\n\n"
        "The legacy key named the consumer database file; its directory becomes\n"
        "`deployment.disaggregated.consumer_state_dir`. Any other file name cannot be migrated.",
    ),
    "legacy-metadata-db-path-conflict": Notice(
        Severity.ERROR,
        ("training.metadata_db_path", format_path(STATE_DIR)),
        "The directory of `training.metadata_db_path` differs from\n"
        "`deployment.disaggregated.consumer_state_dir`.\n\nKeep `consumer_state_dir` and remove the legacy key.",
    ),
    NOT_MIGRATED: Notice(
        Severity.ERROR,
        _LEGACY_PATHS,
        "A legacy key cannot move: `deployment` (or `deployment.disaggregated`) is not a mapping.\n\n"
        "The legacy value is dropped; fix the section it should move into.",
    ),
}
"""The ids this migration reports, for the rule catalogue (`trainspec rules`, `explain`)."""
