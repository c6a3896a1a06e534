"""specforge@a6b6b02: what it changes on 08eaeac, by id (schema/specforge/versions.json names this).

Its schema changes are `schema/specforge/a6b6b02.patch.json`; here are its rules (the inbox
relay's three, after every base rule), their examples and its typed model, folded onto
08eaeac's by `trainspec.versions.fold`.
"""

from __future__ import annotations

from ...versions import Changes, Delta, by_id
from .examples import EXAMPLES_A6B6B02
from .rules_a6b6b02 import inbox_server_url_multinode, inbox_server_url_online_only, inbox_server_url_origin

CHANGES = Changes(
    rules=Delta(add=by_id(inbox_server_url_origin, inbox_server_url_online_only, inbox_server_url_multinode)),
    examples=Delta(add=EXAMPLES_A6B6B02),
    hooks={"model": "trainspec.families.specforge.model:RunConfigA6b6b02"},
)
