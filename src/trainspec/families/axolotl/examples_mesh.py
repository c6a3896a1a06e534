"""Examples of the device-mesh rules (`rules_mesh.py`): a config that breaks each, and the fix."""

from __future__ import annotations

from trainspec.spec.examples import Example, Run

from .examples_keys import BASE

FSDP2 = "fsdp_version: 2\nfsdp_config:\n  offload_params: false\n"

EXAMPLES: dict[str, Example] = {
    "mesh-fits-world-size": Example(
        BASE + FSDP2 + "tensor_parallel_size: 3\n",
        BASE + FSDP2 + "tensor_parallel_size: 2\n",
        "yaml",
        run=Run(world_sizes=(8,)),
    ),
}
