"""Axolotl's own validation path, from an installed release, as a test oracle.

Two releases serve as oracles (`RELEASES`). `axolotl==0.18.0` is a test dependency of the main
virtualenv, installed with `--no-deps` (tools/setup-dev.sh) beside only what its config modules import
when they validate (transformers, accelerate, peft, pillow, addict; torch is the suite's own): the
package's other dependencies (datasets, bitsandbytes, trl, ...) are for training, not for reading a
config. `axolotl==0.19.0` pins other transformers, peft, huggingface_hub and tokenizers releases, so
tools/setup-dev.sh installs it and those into a folder of its own (`Release.folder`,
`.oracles/axolotl-0.19.0`); torch, pydantic, PyYAML and accelerate come from the main virtualenv.
That release runs in a subprocess whose `sys.path` puts its folder first (`Served`): it serves
verdicts for many configs over JSON lines on stdin/stdout, so one import (seconds) serves a whole run.
The same code serves either release, in process (`load`, 0.18.0) or in a subprocess (`Served`).

`verdict` drives what `axolotl train FILE` does before anything starts (`axolotl/cli/config.py`,
`load_cfg`): PyYAML's `safe_load`, the plugins registered (`prepare_plugins`), then
`axolotl.utils.config.validate_config(cfg, capabilities, env_capabilities)` at a target (`target`:
the probe `gpu_capabilities` would report on a node of `world_size` GPUs of a kind trainspec's
`--gpu` names, with the release's newest allowed torch). The loader's warnings are its log records at
WARNING or above and Python warnings raised while it validates. 0.19.0's `load_cfg` lets the
config's plugins undo what their `register` did when validation fails; the oracle does the same.

The loader probes the machine it runs on in a few places; trainspec checks a config for the job's
machine, so the oracle shows the loader that machine as having them, by the smallest means that
leaves the loader's own code running (`_job_environment`):

- `fp8: true` asks accelerate's `is_fp8_available` (torchao, Transformer Engine or MS-AMP installed):
  answered yes (the name the config module imported is replaced while validating);
- `context_parallel_size > 1` imports `ring_flash_attn`, `tokenizer_use_mistral_common` looks it up
  with `importlib.util.find_spec`: an empty module of that name is in `sys.modules` while validating;
- a plugin (`plugins:`) whose module imports a package not installed here (`evaluate`, `wandb`,
  `llmcompressor`) is registered as a stand-in that brings the plugin's own arguments model, read
  from its `args.py` by path, so its fields and validators still run (`Release.standin_args`);
- a plugin whose `register(cfg)` starts the job's services (NeMo Gym clones and starts its servers)
  is registered without that call (`Release.runtime_register`);
- `tensor_parallel_size > 1` and `deepcompile` read the DeepSpeed JSON file `deepspeed` names (a path
  relative to where the job starts, such as Axolotl's `deepspeed_configs/zero3.json`): a file not
  here reads as `DEEPSPEED_FILE`, a DeepSpeed config with the one section those validators index,
  and a number (which `open` would take for a file descriptor of this process) is refused as the
  field's type refuses it.

Importing the loader takes seconds (torch, transformers): `oracle()` imports it once, on first use.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
STANDIN_ARGS = {
    "axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin": ("cut_cross_entropy", "CutCrossEntropyArgs"),
    "axolotl.integrations.diffusion.DiffusionPlugin": ("diffusion", "DiffusionArgs"),
    "axolotl.integrations.llm_compressor.LLMCompressorPlugin": ("llm_compressor", "LLMCompressorArgs"),
}
"""Plugins whose module needs a package not installed here: their folder under axolotl/integrations
and the arguments model their `get_input_args` names (the same in both releases)."""


@dataclass(frozen=True)
class Release:
    """What differs between the releases the oracle serves.

    - `torch_version`: the newest torch the release allows, as `gpu_capabilities` reports it;
    - `folder`: where its oracle environment is installed (None: the main virtualenv);
    - `standin_args`: plugins registered as stand-ins (see the module docstring);
    - `runtime_register`: plugins whose `register(cfg)` the oracle leaves out.
    """

    name: str
    torch_version: str
    folder: Path | None = None
    standin_args: dict[str, tuple[str, str]] = field(default_factory=lambda: dict(STANDIN_ARGS))
    runtime_register: frozenset[str] = frozenset()


RELEASES = {
    "0.18.0": Release("0.18.0", "2.12.1"),  # requires torch>=2.11.0,<=2.12.1
    "0.19.0": Release(
        "0.19.0",
        "2.13.0",  # requires torch>=2.11.0,<=2.13.0
        folder=ROOT / ".oracles" / "axolotl-0.19.0",
        runtime_register=frozenset({"axolotl.integrations.nemo_gym.NemoGymPlugin"}),
    ),
}
RELEASE = "0.18.0"
"""The release the main virtualenv holds (in-process `load`)."""
ACTIVE = RELEASES[RELEASE]
"""The release this process serves: RELEASE, or the one a `--serve` subprocess was started for."""

GPU, WORLD_SIZE = "h100", 8
"""The default target, as trainspec's `--gpu` and `--world-size` name it."""


def target(gpu: str = GPU, world_size: int = WORLD_SIZE, release: str = RELEASE) -> dict[str, dict[str, Any]]:
    """What `axolotl.cli.config.gpu_capabilities` reports on `world_size` GPUs of kind `gpu` (trainspec's
    `--gpu` catalogue, read through the family's own mapping), as `validate_config` receives it."""
    from trainspec.families.axolotl.capabilities import capabilities
    from trainspec.spec.device import target as device

    found = capabilities(device(gpu))
    return {
        "capabilities": {
            "bf16": found.bf16,
            "fp8": found.fp8,
            "tf32": found.tf32,
            "n_gpu": world_size,
            "compute_capability": found.compute_capability,
        },
        "env_capabilities": {"torch_version": RELEASES[release].torch_version},
    }


TARGET: dict[str, dict[str, Any]] = {
    "capabilities": {"bf16": True, "fp8": True, "tf32": True, "n_gpu": WORLD_SIZE, "compute_capability": "sm_90"},
    "env_capabilities": {"torch_version": "2.12.1"},
}
"""The default target of 0.18.0 (eight H100s), as `validate_config` receives it."""

PROBED_MODULES = ("ring_flash_attn", "mistral_common")
"""Modules a validator imports or looks up to see whether the job's machine has them."""
DEEPSPEED_FILE = '{"zero_optimization": {}}'
"""A DeepSpeed config named by `deepspeed` but not on this machine, as the validators read it."""


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
    """`axolotl.utils.config` of the release this process serves, imported once; None when it is not installed."""
    try:
        version = metadata.version("axolotl")
    except metadata.PackageNotFoundError:
        return None
    if version != ACTIVE.name:
        raise RuntimeError(f"the Axolotl oracle is axolotl=={ACTIVE.name}, but {version} is installed")
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


def load(path: str | Path, at: dict[str, dict[str, Any]] | None = None) -> Verdict:
    """Run the file through Axolotl's loading path at `at` (default `TARGET`), in this process."""
    require()
    return verdict(Path(path).read_text(encoding="utf-8"), at or TARGET)


def verdict(text: str, at: dict[str, dict[str, Any]]) -> Verdict:
    """A config's text through the loading path of the release this process serves, at target `at`."""
    import yaml

    config = oracle()
    assert config is not None, f"axolotl=={ACTIVE.name} is not installed"
    from axolotl.utils.dict import DictDefault

    records = _Records()
    cfg: Any = None
    with _job_environment(), _captured(records) as caught:
        try:
            cfg = DictDefault(yaml.safe_load(text))
            _register_plugins(config, cfg)
            config.validate_config(cfg, **at)
        except Exception as exc:  # pydantic's ValidationError, ValueError, DeprecationWarning, YAML errors
            _undo_registration(cfg)
            return Verdict(_reason(exc), records.messages)
    return Verdict("", (*records.messages, *(str(w.message) for w in caught)))


def _undo_registration(cfg: Any) -> None:
    """What `load_cfg` of 0.19.0 does when validation fails: the config's plugins undo their `register`."""
    from axolotl.integrations.base import PluginManager

    manager = PluginManager.get_instance()
    if isinstance(cfg, dict) and cfg.get("plugins") and hasattr(manager, "on_config_validation_error"):
        with contextlib.suppress(Exception):
            manager.on_config_validation_error(cfg)


# -- the release's validators, for the inventory tests ---------------------------------------------------------


def source_digest(function: Any) -> str:
    """The first 12 hex digits of the SHA-256 of `function`'s source (decorators included), dedented, with
    blank lines, comments and trailing spaces dropped: a change of layout is no change."""
    import hashlib
    import inspect
    import textwrap

    lines = textwrap.dedent(inspect.getsource(inspect.unwrap(function))).splitlines()
    kept = [line.rstrip() for line in lines if line.strip() and not line.strip().startswith("#")]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()[:12]


def _plugin_args(folder: str) -> ModuleType | None:
    """A plugin's `args.py`: imported, or loaded by path when its package needs what is not installed here."""
    import axolotl.integrations

    path = Path(axolotl.integrations.__path__[0]) / folder / "args.py"
    if not path.is_file():
        return None
    try:
        return importlib.import_module(f"axolotl.integrations.{folder}.args")
    except ImportError:
        name = f"_axolotl_{folder}_args"  # the name the stand-ins use
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        return sys.modules[name]


def validator_inventory() -> dict[str, tuple[str, bool]]:
    """Every pydantic validator of the served release's config classes (`axolotl.utils.schemas`, with the
    models `AxolotlInputConfig` and `AxolotlConfigWCapabilities`) and of each plugin's settings model:
    `Class.method` (the class that defines it) -> (`source_digest`, whether it is a plugin's)."""
    import inspect
    import pkgutil

    oracle()
    import axolotl.integrations
    import axolotl.utils.schemas
    from pydantic import BaseModel

    schemas = pkgutil.walk_packages(axolotl.utils.schemas.__path__, "axolotl.utils.schemas.")
    modules = [(importlib.import_module(m.name), False) for m in schemas]
    for m in pkgutil.iter_modules(axolotl.integrations.__path__):
        args = _plugin_args(m.name) if m.ispkg else None
        if args is not None:
            modules.append((args, True))
    found: dict[str, tuple[str, bool]] = {}
    for module, plugin in modules:
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not issubclass(cls, BaseModel) or cls.__module__.partition(".")[0] not in ("axolotl", module.__name__):
                continue
            decorators = cls.__pydantic_decorators__
            for method, decorator in [*decorators.model_validators.items(), *decorators.field_validators.items()]:
                owner = next(c for c in cls.__mro__ if method in vars(c))
                found.setdefault(f"{owner.__name__}.{method}", (source_digest(decorator.func), plugin))
    return found


# -- the oracle in a subprocess: JSON lines over stdin and stdout ---------------------------------------------


def serve(release: str, stdin: IO[str], stdout: IO[str]) -> None:
    """Answer each request line `{"text": ..., "target": {...}}` with `{"refused": ..., "warnings": [...]}`."""
    global ACTIVE
    ACTIVE = RELEASES[release]
    oracle()
    stdout.write(json.dumps({"ready": metadata.version("axolotl")}) + "\n")
    stdout.flush()
    for line in stdin:
        request = json.loads(line)
        if "fields" in request:
            stdout.write(json.dumps(loader_fields()) + "\n")
            stdout.flush()
            continue
        if "inventory" in request:
            stdout.write(json.dumps(validator_inventory()) + "\n")
            stdout.flush()
            continue
        try:
            found = verdict(request["text"], request["target"])
        except Exception as exc:  # the oracle itself broke: said as such, never as the loader's refusal
            found = Verdict(f"ORACLE-ERROR {type(exc).__name__}: {exc}")
        stdout.write(json.dumps({"refused": found.refused, "warnings": list(found.warnings)}) + "\n")
        stdout.flush()


def _leaves(annotation: Any) -> Iterator[Any]:
    import types
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from _leaves(typing.get_args(annotation)[0])
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from _leaves(arg)
    else:
        yield annotation


def loader_fields() -> dict[str, Any]:
    """The top-level fields of the release's config model: each enum field with its values (JSON-able), and
    the number fields."""
    import enum
    import typing

    oracle()
    from axolotl.utils.schemas.config import AxolotlInputConfig

    enums: dict[str, list[Any]] = {}
    numbers: list[str] = []
    for name, info in sorted(AxolotlInputConfig.model_fields.items()):
        for leaf in _leaves(info.annotation):
            if typing.get_origin(leaf) is typing.Literal:
                enums.setdefault(name, []).extend(typing.get_args(leaf))
            elif isinstance(leaf, type) and issubclass(leaf, enum.Enum):
                enums.setdefault(name, []).extend(member.value for member in leaf)
            elif leaf in (int, float) and name not in numbers:
                numbers.append(name)
    plain = {k: [v for v in vs if v is None or isinstance(v, str | int | float | bool)] for k, vs in enums.items()}
    return {"enums": plain, "numbers": numbers}


class Served:
    """A release's oracle in a subprocess whose `sys.path` puts the release's folder first."""

    def __init__(self, release: str) -> None:
        self.release = RELEASES[release]
        folder = self.release.folder
        if folder is not None and not (folder / "axolotl").is_dir():
            raise FileNotFoundError(f"{folder} holds no axolotl: tools/setup-dev.sh installs axolotl=={release} there")
        env = {**os.environ, "PYTHONPATH": str(folder) if folder else "", "HF_HUB_OFFLINE": "1"}
        self.log = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (the loader's log, kept open while it runs)
        self.process = subprocess.Popen(
            [sys.executable, "-s", str(Path(__file__)), "--serve", release],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        if not ready:
            raise RuntimeError(
                f"the axolotl {release} oracle did not start (exit {self.process.wait()}):\n{self.tail()}"
            )
        served = json.loads(ready)["ready"]
        if served != release:
            raise RuntimeError(f"the axolotl {release} oracle imports axolotl {served}")

    def verdicts(self, requests: Iterable[tuple[str, dict[str, dict[str, Any]]]]) -> list[Verdict]:
        """Each (text, target)'s verdict, in order; the requests are written while the answers are read."""
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        items = list(requests)

        def write() -> None:
            assert process.stdin is not None
            for text, at in items:
                process.stdin.write(json.dumps({"text": text, "target": at}) + "\n")
            process.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        found = []
        for _ in items:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(
                    f"the axolotl {self.release.name} oracle stopped (exit {process.wait()}):\n{self.tail()}"
                )
            answer = json.loads(line)
            found.append(Verdict(answer["refused"], tuple(answer["warnings"])))
        writer.join()
        return found

    def fields(self) -> dict[str, Any]:
        """`loader_fields` of the release served."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"fields": True}) + "\n")
        self.process.stdin.flush()
        found: dict[str, Any] = json.loads(self.process.stdout.readline())
        return found

    def inventory(self) -> dict[str, tuple[str, bool]]:
        """`validator_inventory` of the release served."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"inventory": True}) + "\n")
        self.process.stdin.flush()
        found = json.loads(self.process.stdout.readline())
        return {name: (digest, plugin) for name, (digest, plugin) in found.items()}

    def tail(self, lines: int = 30) -> str:
        self.log.seek(0)
        return "".join(self.log.readlines()[-lines:])

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
        self.log.close()


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
    plugin in `Release.standin_args` whose module does not import here. The copy in `axolotl.utils.config`: the
    command line's (`axolotl.cli.config`) imports the CLI's own dependencies and then calls each plugin's
    `register(cfg)`, which only the hatchery and NeMo Gym plugins fill in (with runtime settings)."""
    from axolotl.integrations.base import PluginManager

    manager = PluginManager.get_instance()
    manager.plugins.clear()
    register = manager.register

    def register_or_stand_in(name: str) -> None:
        if name in ACTIVE.standin_args and not _importable(name):
            manager.plugins[name] = _stand_in(name)
        else:
            register(name)
        if name in ACTIVE.runtime_register and name in manager.plugins:
            manager.plugins[name].register = lambda cfg: None

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

    folder, name = ACTIVE.standin_args[plugin]
    path = Path(axolotl.integrations.__path__[0]) / folder / "args.py"
    module_name = f"_axolotl_{folder}_args"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return f"{module_name}.{name}"


if __name__ == "__main__":  # python tests/axolotl_loader.py --serve RELEASE (what `Served` starts)
    if len(sys.argv) != 3 or sys.argv[1] != "--serve" or sys.argv[2] not in RELEASES:
        sys.exit(f"usage: {sys.argv[0]} --serve {{{','.join(RELEASES)}}}")
    protocol, sys.stdout = sys.stdout, sys.stderr  # what the loader prints stays off the protocol
    serve(sys.argv[2], sys.stdin, protocol)
