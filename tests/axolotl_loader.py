"""Axolotl's own validation path, from the installed release, as a test oracle.

`axolotl==0.18.0` is a test dependency installed with `--no-deps` (tools/setup-dev.sh), beside only
what its config modules import when they validate (transformers, accelerate, pillow, addict; torch is
the suite's own): the package's other dependencies (datasets, bitsandbytes, trl, ...) are for
training, not for reading a config.

`load` drives what `axolotl train FILE` does before anything starts (`axolotl/cli/config.py`,
`load_cfg`, of 0.18.0): PyYAML's `safe_load`, the plugins registered (`prepare_plugins`), then
`axolotl.utils.config.validate_config(cfg, capabilities, env_capabilities)` at the fixed target
`TARGET` (the probe `gpu_capabilities` would report on one node of eight H100s with the release's
newest allowed torch). The loader's warnings are its log records at WARNING or above and Python
warnings raised while it validates.

The loader probes the machine it runs on in a few places; trainspec checks a config for the job's
machine, so the oracle shows the loader that machine as having them, by the smallest means that
leaves the loader's own code running (`_job_environment`):

- `fp8: true` asks accelerate's `is_fp8_available` (torchao, Transformer Engine or MS-AMP installed):
  answered yes (the name the config module imported is replaced while validating);
- `context_parallel_size > 1` imports `ring_flash_attn`, `tokenizer_use_mistral_common` looks it up
  with `importlib.util.find_spec`: an empty module of that name is in `sys.modules` while validating;
- a plugin (`plugins:`) whose module imports a package not installed here (`evaluate`, `wandb`,
  `llmcompressor`) is registered as a stand-in that brings the plugin's own arguments model, read
  from its `args.py` by path, so its fields and validators still run (`STANDIN_ARGS`);
- `tensor_parallel_size > 1` and `deepcompile` read the DeepSpeed JSON file `deepspeed` names (a path
  relative to where the job starts, such as Axolotl's `deepspeed_configs/zero3.json`): a file not
  here reads as `DEEPSPEED_FILE`, a DeepSpeed config with the one section those validators index,
  and a number (which `open` would take for a file descriptor of this process) is refused as the
  field's type refuses it.

Importing the loader takes seconds (torch, transformers): `oracle()` imports it once, on first use.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import io
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import IO, Any

RELEASE = "0.18.0"
GPU, WORLD_SIZE = "h100", 8
"""The target, as trainspec's `--gpu` and `--world-size` name it."""
TARGET: dict[str, dict[str, Any]] = {
    "capabilities": {"bf16": True, "fp8": True, "tf32": True, "n_gpu": WORLD_SIZE, "compute_capability": "sm_90"},
    "env_capabilities": {"torch_version": "2.12.1"},  # axolotl 0.18.0 requires torch>=2.11.0,<=2.12.1
}
"""What `axolotl.cli.config.gpu_capabilities` reports on the target, as `validate_config` receives it."""

PROBED_MODULES = ("ring_flash_attn", "mistral_common")
"""Modules a validator imports or looks up to see whether the job's machine has them."""
DEEPSPEED_FILE = '{"zero_optimization": {}}'
"""A DeepSpeed config named by `deepspeed` but not on this machine, as the validators read it."""
STANDIN_ARGS = {
    "axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin": ("cut_cross_entropy", "CutCrossEntropyArgs"),
    "axolotl.integrations.diffusion.DiffusionPlugin": ("diffusion", "DiffusionArgs"),
    "axolotl.integrations.llm_compressor.LLMCompressorPlugin": ("llm_compressor", "LLMCompressorArgs"),
}
"""Plugins whose module needs a package not installed here: their folder under axolotl/integrations
and the arguments model their `get_input_args` names."""


@dataclass(frozen=True)
class Verdict:
    """What the loader did: `refused` is its message on one line ("" when it accepted), `warnings` what it
    warned."""

    refused: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return not self.refused

    @property
    def outcome(self) -> str:
        """accepted, refused or warnings."""
        return "refused" if self.refused else "warnings" if self.warnings else "accepted"


@cache
def oracle() -> ModuleType | None:
    """`axolotl.utils.config`, imported once; None when the release is not installed."""
    try:
        version = metadata.version("axolotl")
    except metadata.PackageNotFoundError:
        return None
    if version != RELEASE:
        raise RuntimeError(f"the Axolotl oracle is axolotl=={RELEASE}, but {version} is installed")
    os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported: nothing is fetched
    import axolotl.integrations.base  # the plugins: a package missing for them shows here, not in a load
    import axolotl.utils.config

    return axolotl.utils.config


def require() -> ModuleType:
    """The loader; a test that needs it fails when it is not installed (tools/setup-dev.sh installs it)."""
    import pytest  # only a test needs it

    module = oracle()
    if module is None:
        pytest.fail(f"axolotl=={RELEASE} is not installed (tools/setup-dev.sh installs it with --no-deps)")
    return module


def load(path: str | Path, target: dict[str, dict[str, Any]] | None = None) -> Verdict:
    """Run the file through Axolotl's loading path at `target` (what `gpu_capabilities` reports on the job's
    machine, as `TARGET` has it; `TARGET` when not given)."""
    import yaml

    config = require()
    from axolotl.utils.dict import DictDefault

    records = _Records()
    with _job_environment(), _captured(records) as caught:
        try:
            cfg = DictDefault(yaml.safe_load(Path(path).read_text(encoding="utf-8")))
            _register_plugins(config, cfg)
            config.validate_config(cfg, **(target or TARGET))
        except Exception as exc:  # pydantic's ValidationError, ValueError, DeprecationWarning, YAML errors
            return Verdict(_reason(exc), records.messages)
    return Verdict("", (*records.messages, *(str(w.message) for w in caught)))


def _reason(exc: Exception) -> str:
    """The loader's message on one line: each of pydantic's errors as `field: message`, else the exception."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(config)'}: {e['msg']}".replace("\n", " ") for e in exc.errors()
        )
    return f"{type(exc).__name__}: {exc}".replace("\n", " ")


class _Records(logging.Handler):
    """The loader's log records at WARNING or above."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.found.append(record.getMessage())

    @property
    def messages(self) -> tuple[str, ...]:
        return tuple(self.found)


@contextlib.contextmanager
def _captured(records: _Records) -> Iterator[list[warnings.WarningMessage]]:
    """Axolotl's log records (its `axolotl` logger does not propagate) and Python warnings, each load afresh
    (`warning_once` remembers what it said)."""
    from axolotl.utils.logging import MultiProcessAdapter

    MultiProcessAdapter.warning_once.cache_clear()
    logger = logging.getLogger("axolotl")
    logger.addHandler(records)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
    finally:
        logger.removeHandler(records)


@contextlib.contextmanager
def _job_environment() -> Iterator[None]:
    """The job's machine as the loader's probes would find it (the module docstring lists them)."""
    import axolotl.utils.schemas.config as schema_config
    import axolotl.utils.schemas.validation as schema_validation

    absent = [name for name in PROBED_MODULES if importlib.util.find_spec(name) is None]
    for name in absent:
        module = ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
        sys.modules[name] = module
    probe = schema_config.is_fp8_available
    schema_config.is_fp8_available = lambda: True
    schema_validation.open = _job_file  # the module's own name shadows the builtin while validating
    try:
        yield
    finally:
        schema_config.is_fp8_available = probe
        del schema_validation.open
        for name in absent:
            del sys.modules[name]


def _job_file(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> IO[Any]:
    """`open` for the validators that read the DeepSpeed file the config names, on the job's machine."""
    if isinstance(file, int):
        raise TypeError(f"deepspeed: {file!r} is not a path or a DeepSpeed config")
    if "r" in mode and not os.path.exists(file):
        return io.StringIO(DEEPSPEED_FILE)
    return open(file, mode, *args, **kwargs)


def _register_plugins(loader: ModuleType, cfg: Any) -> None:
    """`prepare_plugins`, each load afresh (the plugin manager is one per process), with a stand-in for a
    plugin in `STANDIN_ARGS` whose module does not import here. The copy in `axolotl.utils.config`: the
    command line's (`axolotl.cli.config`) imports the CLI's own dependencies and then calls each plugin's
    `register(cfg)`, which only the hatchery and NeMo Gym plugins fill in (with runtime settings)."""
    from axolotl.integrations.base import PluginManager

    manager = PluginManager.get_instance()
    manager.plugins.clear()
    register = manager.register

    def register_or_stand_in(name: str) -> None:
        if name in STANDIN_ARGS and not _importable(name):
            manager.plugins[name] = _stand_in(name)
        else:
            register(name)

    manager.register = register_or_stand_in
    try:
        loader.prepare_plugins(cfg)
    finally:
        del manager.register


@cache
def _importable(plugin: str) -> bool:
    try:
        importlib.import_module(plugin.rsplit(".", 1)[0])
    except ImportError:
        return False
    return True


def _stand_in(plugin: str) -> Any:
    """A registered plugin that brings only the real one's arguments model."""
    from axolotl.integrations.base import BasePlugin

    args = _args_model(plugin)

    class StandIn(BasePlugin):
        def get_input_args(self) -> str:
            return args

    return StandIn()


@cache
def _args_model(plugin: str) -> str:
    """The plugin's arguments model as `module.Class`, its `args.py` loaded by path (the package's
    `__init__` imports what is not installed)."""
    import axolotl.integrations

    folder, name = STANDIN_ARGS[plugin]
    path = Path(axolotl.integrations.__path__[0]) / folder / "args.py"
    module_name = f"_axolotl_{folder}_args"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return f"{module_name}.{name}"
