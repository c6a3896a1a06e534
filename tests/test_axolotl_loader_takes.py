"""The values Axolotl's loader takes by a validator of its own before the fields are typed (rows A6 and A7 of
docs/loader-differences.md): trainspec refuses them, and its error says what the loader does with the value
(`trainspec.families.axolotl.takes`). Each verdict was probed through the loaders of 0.18.0 and 0.19.0."""

from __future__ import annotations

import pytest

import trainspec
from trainspec.spec.diagnostics import Severity

BASE = (
    "base_model: meta-llama/Llama-3.2-1B\ndatasets:\n  - path: x\n    type: alpaca\nmicro_batch_size: 1\n"
    "gradient_accumulation_steps: 1\nnum_epochs: 1\noutput_dir: out\n"
)
KERNELS = "plugins:\n  - axolotl.integrations.kernels.KernelsPlugin\n"


def errors(tmp_path, text: str, version: str) -> dict[str, str]:
    path = tmp_path / "config.yaml"
    path.write_text(BASE + text, encoding="utf-8")
    found = trainspec.check(path, family=f"axolotl@{version}", world_size=1, gpu="h100")
    return {".".join(map(str, d.path)): d.message for d in found if d.severity is Severity.ERROR}


@pytest.mark.parametrize("version", ["0.18.0", "0.19.0"])
@pytest.mark.parametrize(
    ("text", "path", "says"),
    [
        ("learning_rate: 0.0001\nflash_attention: 5\n", "flash_attention", "by truthiness, as true, and removes"),
        ("learning_rate: 0.0001\nsdp_attention: ''\n", "sdp_attention", "by truthiness, as false, and removes"),
        (
            "learning_rate: 0.0001\nfsdp_version: ''\nfsdp_config:\n  reshard_after_forward: true\n",
            "fsdp_version",
            "takes it as not written and uses FSDP version 1",
        ),
        (
            "learning_rate: 0.0001\nfsdp_version: []\nfsdp_config:\n  fsdp_version: 2\n",
            "fsdp_version",
            "takes it as not written and uses FSDP version 2",
        ),
        ("learning_rate: ''\n", "learning_rate", "keeps the empty text, and torch refuses it"),
    ],
)
def test_the_error_says_what_the_loader_takes_the_value_as(tmp_path, version, text, path, says):
    message = errors(tmp_path, text, version)[path]
    assert message.startswith(f"`{path}` must be")
    assert says in message


@pytest.mark.parametrize("version", ["0.18.0", "0.19.0"])
def test_an_empty_fsdp_version_without_fsdp_config_is_refused_by_both(tmp_path, version):
    message = errors(tmp_path, "learning_rate: 0.0001\nfsdp_version: ''\n", version)["fsdp_version"]
    assert "loader" not in message


def test_use_kernels_under_the_kernels_plugin_is_replaced_by_0_18_0_and_typed_by_0_19_0(tmp_path):
    text = f"learning_rate: 0.0001\n{KERNELS}use_kernels: 5\n"
    assert (
        "axolotl 0.18.0's loader replaces any value but true by true" in errors(tmp_path, text, "0.18.0")["use_kernels"]
    )
    assert "loader" not in errors(tmp_path, text, "0.19.0")["use_kernels"]
    without = errors(tmp_path, "learning_rate: 0.0001\nuse_kernels: 5\n", "0.18.0")["use_kernels"]
    assert "loader" not in without  # without the plugin, the field is typed
