"""specforge@a6b6b02: what it changes on 0.2.0, by id (schema/specforge/versions.json names this).

Upstream's config module of 2026-08-08 declares the same fields, bounds and checks as the 0.2.0
release (abd0346, the day before): its patch only names it, and it keeps 0.2.0's rules and
examples. Its own typed model is built from its schema.
"""

from __future__ import annotations

from trainspec.spec.versions import Changes

CHANGES = Changes(hooks={"model": "trainspec.families.specforge.model:RunConfigA6b6b02"})
