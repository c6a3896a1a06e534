"""Axolotl's cross-field rules, one module per area (`rules_<area>.py`), in one list.

Each rule mirrors a validator of `axolotl/utils/schemas/validation.py` or `config.py`
and names it in its docstring's last line.
"""

from __future__ import annotations

from ...rules import Rule
from .rules_mesh import RULES as MESH

RULES: list[Rule] = [*MESH]
