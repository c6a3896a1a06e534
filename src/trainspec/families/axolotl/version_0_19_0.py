"""axolotl@0.19.0, the PyPI release: what it changes on 0.18.0, by id (schema/axolotl/versions.json).

Drafted by `python tools/draft_version.py axolotl 0.19.0` from the two releases' own classes: its
schema changes are `schema/axolotl/0.19.0.patch.json` (fp8_config, ple_cpu_offload, nine GRPO
settings under `trl`, `trl.scale_rewards` as text, the adamc and polora optimizers, ternary
quantization, and the Liger plugin's `liger_kernel_impl`), and docs/releases/axolotl@0.19.0.md lists
the validators that are new, changed or removed. Here, written from reading those validators: the
rules they change (`rules_0_19_0.py`), the one they drop (nemotron_h's checkpointing check), their
examples and the typed model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainspec.spec.versions import Changes, Delta, by_id

from .rules_0_19_0 import ADDED, REMOVED, REPLACED
from .takes import loader_takes
from .unmirrored import reviewed

if TYPE_CHECKING:
    from trainspec.spec.examples import Example


def examples() -> Delta[Example]:
    """The examples of its new and changed ids, imported when the version's examples are first read."""
    from .examples_0_19_0 import ADDED as ADDED_EXAMPLES
    from .examples_0_19_0 import CHANGED as CHANGED_EXAMPLES

    return Delta(add=ADDED_EXAMPLES, replace=CHANGED_EXAMPLES, remove=REMOVED)


CHANGES = Changes(
    rules=Delta(add=by_id(*ADDED), replace=by_id(*REPLACED), remove=REMOVED),
    examples=examples,
    hooks={
        "model": "trainspec.families.axolotl.model:AxolotlConfig019",
        "loader_takes": loader_takes,  # 0.19.0 keeps an explicit use_kernels, and types it
        "unmirrored": {name: reason for name, (_, reason) in reviewed("0.19.0").items()},
    },
)
