"""Configs the schema types correctly that Axolotl's loader still cannot load: it fails on them with an
exception of its own (TypeError, AttributeError) rather than a validation message.

Each rule names the validator that fails, the release, and whether the next release (0.19.0) still does
(each config was run through 0.19.0's `validate_config` too). Those that belong to a rule of a wider
check say it in that rule's message: `datasets-null`, `model-name-null` (`rules_data_training`),
`beta-matches-trl-beta` (`rules_config_capabilities`), `grpo-liger-context-parallel`, `gdpo-aggregation`
(`rules_peft_rl_optim`); the EBFT ones are in `rules_ebft`. Found by reading each validator and by
sweeps through the released loader (every top-level key set to each value of its type; every nullable
key, and every key of a section, set to null beside settings that switch sections on);
`tests/test_axolotl_loader_failures.py` keeps them failing there.

Not a rule: `check_tensor_parallel_size_update_ds_json` also fails (KeyError) on a DeepSpeed file
without a `zero_optimization` section; trainspec does not read the DeepSpeed file, which lives on the
launching machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from trainspec.spec.rules import ABSENT, Rule, Violation, rule
from trainspec.spec.wording import show

from .phrases import FIXED_IN, RELEASE
from .plugins import usual


@rule("deepspeed-inline-with-tensor-parallel", "error", "deepspeed", "tensor_parallel_size", raw=True)
def deepspeed_inline_with_tensor_parallel(deepspeed: Any, tensor_parallel_size: Any) -> Iterator[str]:
    """With `tensor_parallel_size` above 1, the loader opens `deepspeed` as a file, so it must be a path.

    It adds the AutoTP settings to the DeepSpeed config by reading the file `deepspeed` names; an inline
    DeepSpeed config (a mapping) makes `open` raise TypeError in Axolotl 0.18.0 and 0.19.0.

    Mirrors `OptimizationValidationMixin.check_tensor_parallel_size_update_ds_json`."""
    if isinstance(deepspeed, dict) and deepspeed and isinstance(tensor_parallel_size, int) and tensor_parallel_size > 1:
        yield (
            f"deepspeed is written inline, but with tensor_parallel_size = {tensor_parallel_size} Axolotl {RELEASE} "
            f"(and {FIXED_IN}) opens it as a file and fails with TypeError "
            "(OptimizationValidationMixin.check_tensor_parallel_size_update_ds_json); "
            "save the DeepSpeed config as a JSON file and set deepspeed to its path"
        )


@rule("deepspeed-inline-with-deepcompile", "error", "deepspeed", "deepcompile", raw=True)
def deepspeed_inline_with_deepcompile(deepspeed: Any, deepcompile: Any) -> Iterator[str]:
    """With `deepcompile`, the loader opens `deepspeed` as a file, so it must be a path.

    It adds the compile section to the DeepSpeed config by reading the file `deepspeed` names; an inline
    DeepSpeed config (a mapping) makes `open` raise TypeError in Axolotl 0.18.0 and 0.19.0.

    Mirrors `OptimizationValidationMixin.check_deepcompile`."""
    if isinstance(deepspeed, dict) and deepspeed and deepcompile:
        yield (
            f"deepspeed is written inline, but with deepcompile = true Axolotl {RELEASE} (and {FIXED_IN}) opens it "
            "as a file and fails with TypeError (OptimizationValidationMixin.check_deepcompile); "
            "save the DeepSpeed config as a JSON file and set deepspeed to its path"
        )


FSDP_VERSION_PATHS = ("optimizer", "fsdp", "fsdp_config", "fsdp_version", "deepspeed", "adapter")


def _fsdp_config_null(rule_id: str, validator: str, picks: Callable[[Any], bool], doc: str) -> Rule:
    """A rule for one of the optimizer checks that settle the FSDP version through
    `OptimizationValidationMixin._resolve_fsdp_version`: with the legacy `fsdp` list set, `fsdp_config`
    written as null and no `fsdp_version`, it reads the null section as a mapping (AttributeError in
    0.18.0 and 0.19.0). The check refuses DeepSpeed (and Q-GaLore an adapter) before it gets there."""

    def check(optimizer: Any, fsdp: Any, config: Any, version: Any, deepspeed: Any, adapter: Any) -> Iterator[str]:
        if not picks(optimizer) or deepspeed or (validator.endswith("check_qgalore") and adapter):
            return
        if fsdp and config is None and version in (ABSENT, None):
            yield (
                f"fsdp_config = null beside fsdp = {show(fsdp)} with optimizer = {show(optimizer)}: Axolotl "
                f"{RELEASE} (and {FIXED_IN}) fails with AttributeError settling the FSDP version ({validator}); "
                "remove fsdp_config: null and set fsdp_version: 2 with an fsdp_config section"
            )

    check.__doc__ = f"{doc}\n\n    Mirrors `{validator}`."
    return rule(rule_id, "error", *FSDP_VERSION_PATHS, raw=True)(check)


muon_fsdp_config_null = _fsdp_config_null(
    "muon-fsdp-config-null",
    "OptimizationValidationMixin.check_muon_deepspeed_fsdp",
    lambda optimizer: optimizer == "muon",
    "Muon with the legacy `fsdp` list and `fsdp_config: null` fails the loader while it settles the FSDP version.",
)
flash_optimizer_fsdp_config_null = _fsdp_config_null(
    "flash-optimizer-fsdp-config-null",
    "OptimizationValidationMixin.check_flashoptim_deepspeed_fsdp",
    lambda optimizer: isinstance(optimizer, str) and optimizer.startswith("flash_"),
    "A flash optimizer with the legacy `fsdp` list and `fsdp_config: null` fails the loader while it settles the "
    "FSDP version.",
)
q_galore_fsdp_config_null = _fsdp_config_null(
    "q-galore-fsdp-config-null",
    "OptimizationValidationMixin.check_qgalore",
    lambda optimizer: optimizer == "q_galore_adamw8bit",
    "Q-GaLore with the legacy `fsdp` list and `fsdp_config: null` fails the loader while it settles the FSDP version.",
)


def _unloadable(name: str) -> tuple[str, str] | None:
    """The exception `load_plugin` fails with on a plugin name, and where, before any import is tried; None when
    the name has the shape it splits and imports (whether the module is installed is the launching machine's)."""
    if "." not in name:
        return "ValueError", "splitting it into a module and a class"
    module = name.rsplit(".", 1)[0]
    if not module:
        return "ValueError", "importing a module with an empty name"
    if module.startswith("."):
        return "TypeError", f"importing {show(module)}, a relative module name"
    return None


@rule("plugin-name-unloadable", "error", "plugins", raw=True)
def plugin_name_unloadable(plugins: Any) -> Iterator[Violation]:
    """A plugin is named `module.Class`: the loader splits the name at its last dot and imports the module.

    A name with no dot, or whose module part is empty or starts with a dot, makes the loader fail with an
    exception of its own (ValueError, TypeError) while it registers the plugins, before it validates anything;
    it is not an import error, which the loader would only log. Axolotl 0.18.0 and 0.19.0 alike.

    Mirrors `base.load_plugin`."""
    if not isinstance(plugins, list):
        return
    for i, name in enumerate(plugins):
        failure = _unloadable(name) if isinstance(name, str) else None
        if failure is not None:
            exception, where = failure
            yield Violation(
                f"plugins[{i}] = {show(name)} is not a `module.Class` name: Axolotl {RELEASE} (and {FIXED_IN}) "
                f"fails with {exception} {where} (base.load_plugin); write the plugin's full name, such as "
                f"{usual('liger')}",
                at=("plugins", i),
            )


RULES: list[Rule] = [
    plugin_name_unloadable,
    muon_fsdp_config_null,
    flash_optimizer_fsdp_config_null,
    q_galore_fsdp_config_null,
    deepspeed_inline_with_tensor_parallel,
    deepspeed_inline_with_deepcompile,
]
