"""axolotl@0.19.0: what it changes on axolotl@0.18.0, by id (schema/axolotl/versions.json).

Drafted by tools/draft_version.py; docs/releases/axolotl@0.19.0.md lists the validators to mirror.
"""

from __future__ import annotations

from trainspec.versions import Changes, Delta

CHANGES = Changes(
    rules=Delta(),
    hooks={"model": "trainspec.families.axolotl.model:AxolotlConfig019"},
)
