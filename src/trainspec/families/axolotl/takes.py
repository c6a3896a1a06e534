"""What Axolotl's loader does with a value the schema refuses, where a validator of its own takes it before
the fields are typed (`Family.loader_takes`): the schema's error there then says what the loader would do.
Each is a row of docs/loader-differences.md: A6 (empty values) and A7 (the legacy attention flags, and
0.18.0's `use_kernels` under the kernels plugin).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainspec.spec.paths import Path
from trainspec.spec.wording import show

from .attention import LEGACY_ATTENTION_FLAGS
from .plugins import listed

EMPTY: tuple[Any, ...] = ("", [], {})


def _fsdp_version(config: Mapping[str, Any]) -> int | None:
    """The FSDP version `check_fsdp_version_in_fsdp_config` sets for an empty `fsdp_version`: the one
    `fsdp_config` names, else 1; None where `fsdp_config` is empty (the empty value is then typed, and refused)."""
    section = config.get("fsdp_config")
    if not isinstance(section, dict) or not section:
        return None
    named = section.get("version") or section.get("fsdp_version")
    return named if isinstance(named, int) and not isinstance(named, bool) else 1


def loader_takes_0_18_0(path: Path, value: Any, config: Any) -> str | None:
    """Axolotl 0.18.0's readings (`Family.loader_takes`)."""
    if path == ("use_kernels",) and isinstance(config, dict) and listed(config.get("plugins"), "kernels"):
        # KernelsArgs.check_use_kernels: any value but true becomes true, before the field is typed
        return "with the kernels plugin, axolotl 0.18.0's loader replaces any value but true by true"
    return loader_takes(path, value, config)


def loader_takes(path: Path, value: Any, config: Any) -> str | None:
    """Axolotl 0.19.0's readings, and 0.18.0's but one (`Family.loader_takes`)."""
    if not isinstance(config, dict) or len(path) != 1:
        return None
    key = path[0]
    if key in LEGACY_ATTENTION_FLAGS:
        # AxolotlInputConfig.normalize_attn_implementation reads the flags by truthiness and removes them
        return (
            f"axolotl's loader takes any value here: it reads it by truthiness, as {show(bool(value))}, and removes "
            "the flag"
        )
    if key == "fsdp_version" and any(value == e and type(value) is type(e) for e in EMPTY):
        version = _fsdp_version(config)
        if version is not None:
            return f"axolotl's loader takes it as not written and uses FSDP version {version}"
    if key == "learning_rate" and value == "":
        return "axolotl's loader keeps the empty text, and torch refuses it when the optimizer is built"
    return None
