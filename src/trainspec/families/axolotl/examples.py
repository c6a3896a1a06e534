"""For each Axolotl rule and notice: a config that breaks it and the fixed one, gathered from the
areas' `examples_<area>.py` (a test runs every one)."""

from __future__ import annotations

from trainspec.spec.examples import Example

from .examples_config import EXAMPLES as CONFIG
from .examples_data_training import EXAMPLES as DATA_TRAINING
from .examples_ebft import EXAMPLES as EBFT
from .examples_keys import EXAMPLES as KEYS
from .examples_mesh import EXAMPLES as MESH
from .examples_peft_rl_optim import EXAMPLES as PEFT_RL_OPTIM
from .examples_plugins import EXAMPLES as PLUGINS
from .examples_system_model import EXAMPLES as SYSTEM_MODEL

EXAMPLES: dict[str, Example] = {
    **KEYS,
    **CONFIG,
    **DATA_TRAINING,
    **PEFT_RL_OPTIM,
    **SYSTEM_MODEL,
    **MESH,
    **PLUGINS,
    **EBFT,
}
