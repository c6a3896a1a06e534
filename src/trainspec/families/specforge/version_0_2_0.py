"""specforge@0.2.0, the release on PyPI: what it changes on 08eaeac, by id (schema/specforge/versions.json).

SpecForge 0.2.0's `specforge/config/schema.py` is upstream's file at commit abd0346 (2026-08-07). Its
schema changes are `schema/specforge/0.2.0.patch.json` (five fields: the radix-cache switch, producer
concurrency, the inbox relay, the learning-rate schedule and the prompt seed); here are its rules
(the inbox relay's three, after every base rule), their examples and its typed model.
`tests/data/drift/specforge@0.2.0.json` holds what `tools/family_drift.py` finds between this version
and the installed release's classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainspec.spec.versions import Changes, Delta, by_id

from .rules_inbox_relay import inbox_server_url_multinode, inbox_server_url_online_only, inbox_server_url_origin

if TYPE_CHECKING:
    from trainspec.spec.examples import Example


def examples() -> Delta[Example]:
    """The inbox relay rules' examples, imported when the version's examples are first read."""
    from .examples import EXAMPLES_INBOX_RELAY

    return Delta(add=EXAMPLES_INBOX_RELAY)


CHANGES = Changes(
    rules=Delta(add=by_id(inbox_server_url_origin, inbox_server_url_online_only, inbox_server_url_multinode)),
    examples=examples,
    hooks={"model": "trainspec.families.specforge.model:RunConfig020"},
)
