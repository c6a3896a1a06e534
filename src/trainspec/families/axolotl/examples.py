"""For each Axolotl rule and notice: a config that breaks it and the fixed one, gathered from the
areas' `examples_<area>.py` (a test runs every one)."""

from __future__ import annotations

from ...examples import Example
from .examples_keys import EXAMPLES as KEYS
from .examples_mesh import EXAMPLES as MESH

EXAMPLES: dict[str, Example] = {**KEYS, **MESH}
