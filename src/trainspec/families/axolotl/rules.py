"""Axolotl's cross-field rules, one module per area (`rules_<area>.py`), in one list.

Each rule mirrors a validator of `axolotl/utils/schemas/validation.py` or `config.py`, or of a
plugin's settings model (`axolotl/integrations/*/args.py`), and names it in its docstring's last line;
`unmirrored.py` lists the validators none mirrors, and why.
"""

from __future__ import annotations

from trainspec.spec.rules import Rule

from .rules_config import RULES as CONFIG
from .rules_data_training import RULES as DATA_TRAINING
from .rules_ebft import RULES as EBFT
from .rules_loader_failures import RULES as LOADER_FAILURES
from .rules_mesh import RULES as MESH
from .rules_peft_rl_optim import RULES as PEFT_RL_OPTIM
from .rules_plugins import RULES as PLUGINS
from .rules_plugins_kernels import RULES as KERNELS
from .rules_system_model import RULES as SYSTEM_MODEL

RULES: list[Rule] = [
    *CONFIG,
    *DATA_TRAINING,
    *PEFT_RL_OPTIM,
    *SYSTEM_MODEL,
    *MESH,
    *PLUGINS,
    *KERNELS,
    *EBFT,
    *LOADER_FAILURES,
]
