"""Axolotl's cross-field rules, one module per area (`rules_<area>.py`), in one list.

Each rule mirrors a validator of `axolotl/utils/schemas/validation.py` or `config.py`
and names it in its docstring's last line.
"""

from __future__ import annotations

from trainspec.rules import Rule

from .rules_config import RULES as CONFIG
from .rules_data_training import RULES as DATA_TRAINING
from .rules_ebft import RULES as EBFT
from .rules_mesh import RULES as MESH
from .rules_peft_rl_optim import RULES as PEFT_RL_OPTIM
from .rules_system_model import RULES as SYSTEM_MODEL

RULES: list[Rule] = [*CONFIG, *DATA_TRAINING, *PEFT_RL_OPTIM, *EBFT, *SYSTEM_MODEL, *MESH]
