"""trainspec at launch: the real world size, checks on the live process group, torch types.

The only module of trainspec that imports torch, and only inside functions, so
`trainspec check` and `trainspec.load` stay free of it (torch is the optional
`trainspec[torch]` extra).

    dist.init_process_group("gloo")
    cfg = trainspec.distributed.load_verified("job.toml")   # on every rank; the same ConfigError on every rank
    dtype = trainspec.distributed.torch_dtype("bfloat16")
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from trainspec.api import check_config, check_path, family_of_model, to_model
from trainspec.families import get_family
from trainspec.spec.codes import CONFIG_DIFFERS_ACROSS_RANKS, DEVICE_COUNT_PER_NODE, VERIFY_FAILED
from trainspec.spec.device import Device
from trainspec.spec.diagnostics import Clause, Diagnostic, Join, Related, Severity, read_shown_path
from trainspec.spec.errors import ConfigError, InvalidType, InvalidValue, TrainspecError
from trainspec.spec.family import Family
from trainspec.spec.paths import Path, format_path

if TYPE_CHECKING:
    import torch
    from torch.distributed import ProcessGroup

DIFFERING_PATHS_SHOWN = 5

LOAD_TIMEOUT = timedelta(minutes=5)
"""How long `load_verified` waits for the other ranks: loading a config takes seconds, so a rank this late is
stuck or gone; the process group's own timeout (10-30 minutes by default) is sized for training steps instead."""


class TorchMissing(TrainspecError, ModuleNotFoundError):
    """torch is not installed where `trainspec.distributed` was asked for something only torch knows."""


def needs_torch(module: str = "torch") -> Any:
    """`module` of torch, imported; TorchMissing naming the extra to install when torch is not there, since a
    bare `No module named 'torch'` does not say that trainspec installs it only on request."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        raise TorchMissing(
            "trainspec.distributed needs torch, which is not installed here: pip install 'trainspec[torch]' "
            "(or install torch as your trainer does); trainspec.check and trainspec.load work without it",
            name="torch",
        ) from None


class RanksNotReady(TrainspecError, RuntimeError):
    """The ranks could not run trainspec's check together (no process group, or a rank never arrived)."""


@dataclass(frozen=True)
class WorldSize:
    """A world size and where it came from (for messages: "world size 8 (from WORLD_SIZE)")."""

    size: int
    source: str


def world_size(environ: Mapping[str, str] | None = None) -> WorldSize:
    """The number of ranks of this run: the live process group's, else the launcher's, else 1.

    Sources, in order: an initialized default `torch.distributed` process group;
    torchrun's `WORLD_SIZE`; SLURM's `SLURM_NTASKS`; `SLURM_NNODES` × `SLURM_NTASKS_PER_NODE`;
    else `WorldSize(1, "single process")`, since a process nothing launched as a
    rank trains alone (so `.size` is always usable, e.g. for `trainspec.load(world_size=...)`).
    torch is consulted only if something already imported `torch.distributed`
    (no process group can exist otherwise), so this is cheap in a CLI.
    A launcher variable that is set but not a positive integer raises ValueError.
    """
    if "torch.distributed" in sys.modules:
        dist = needs_torch("torch.distributed")

        if dist.is_available() and dist.is_initialized():
            return WorldSize(dist.get_world_size(), "torch.distributed process group")
    env = os.environ if environ is None else environ
    for name in ("WORLD_SIZE", "SLURM_NTASKS"):
        if env.get(name):
            return WorldSize(_positive(env, name), name)
    if env.get("SLURM_NNODES") and env.get("SLURM_NTASKS_PER_NODE"):
        size = _positive(env, "SLURM_NNODES") * _positive(env, "SLURM_NTASKS_PER_NODE")
        return WorldSize(size, "SLURM_NNODES × SLURM_NTASKS_PER_NODE")
    return WorldSize(1, "single process")


def _positive(env: Mapping[str, str], name: str) -> int:
    text = env[name].strip()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise InvalidValue(f"{name}={env[name]!r} is not a positive integer")
    return int(text)


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype a config names by its torch name (e.g. `checkpoint.export_dtype` = "bfloat16")."""
    torch = needs_torch()

    found = getattr(torch, name, None) if name.isidentifier() else None
    if not isinstance(found, torch.dtype):
        raise InvalidValue(f"{name!r} is not a torch dtype name (e.g. float32, bfloat16, float16)")
    return found


def device_diagnostics(
    config: Any,
    device: str | torch.device | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    source: str = "<config>",
    family: str | Family | None = None,
) -> list[Diagnostic]:
    """What this process's hardware cannot do that the config asks for, as error diagnostics.

    `config` is a typed model (as `trainspec.load` returns; its family is found
    from its class unless `family` says). `device` is the device the trainer
    computes on (default: CUDA when torch sees one, else CPU). Checked: what
    the family says its configs need of the device (`Family.device_checks`:
    bfloat16 weights on a GPU without native bfloat16, FP8 matmuls...), and
    more processes on this node (`LOCAL_WORLD_SIZE`, else
    `SLURM_NTASKS_PER_NODE`) than GPUs visible to torch. CPU takes any number
    of processes.
    """
    torch = needs_torch()

    dev = torch.device(device) if device is not None else _default_device()
    fam = _family_of(config, family)
    out: list[Diagnostic] = []
    if fam.device_checks is not None:
        found = fam.device_checks(config.model_dump(mode="json"), _described(dev))
        out += [replace(d, file=source, origin=f"device {dev}") for d in found]
    if dev.type == "cuda":
        env = os.environ if environ is None else environ
        given = (env.get(n, "") for n in ("LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE"))
        local = next(
            (int(text) for text in given if text.isascii() and text.isdigit()),
            None,
        )
        visible = torch.cuda.device_count()
        if local is not None and local > visible:
            message = (
                f"{local} processes on this node but torch sees {visible} CUDA device(s) "
                f"(CUDA_VISIBLE_DEVICES={env.get('CUDA_VISIBLE_DEVICES', 'unset')}); start at most one process "
                "per device"
            )
            rule = DEVICE_COUNT_PER_NODE.id
            out.append(Diagnostic(source, None, None, (), rule, Severity.ERROR, message, origin=f"device {dev}"))
    return out


def _described(dev: torch.device) -> Device:
    """The device as a family's `device_checks` reads it."""
    torch = needs_torch()

    if dev.type != "cuda":
        return Device(dev.type, dev.type)
    rocm = torch.version.hip is not None  # ROCm GPUs all have bf16; capabilities differ
    return Device(dev.type, torch.cuda.get_device_name(dev), torch.cuda.get_device_capability(dev), rocm)


def _default_device() -> torch.device:
    torch = needs_torch()

    return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")


def verify(
    config: Any,
    *,
    family: str | Family | None = None,
    overrides: Sequence[str] = (),
    device: str | torch.device | None = None,
    group: ProcessGroup | None = None,
    source: str | None = None,
    timeout: timedelta | None = None,
) -> Any:
    """Check, on every rank of a live process group, that the config fits this run; return the model.

    Call it on every rank of `group` (default: the default group), after
    `init_process_group`, with what the rank loaded:

    - a typed model returned by `trainspec.load` (its family is found from its
      class unless `family` says; `source`, e.g. the file it came from, names
      it in diagnostics), or
    - the config file's path (plus `family` and `overrides`, as for `load`):
      then a rank whose file does not even load takes part too, and
      diagnostics point at file lines.

    Checked: the family's rules at the group's real world size (the
    world-size rules among them), `device_diagnostics` for `device`, and that
    every rank resolved the same config (a sha256 of its canonical JSON).
    Every rank runs the same collectives whatever it found, then all decide
    together, so on any failure every rank raises the same ConfigError (naming
    the ranks involved, and the first config paths that differ) and none is
    left waiting in a collective.

    With `timeout`, ranks that have not all arrived within it make the others
    raise RanksNotReady rather than wait out the group's own timeout; that
    takes a fresh gloo group of every rank, so it excludes `group`.
    """
    dist = needs_torch("torch.distributed")

    if not (dist.is_available() and dist.is_initialized()):
        raise RanksNotReady("trainspec.distributed.verify needs an initialized torch.distributed process group")
    if group is not None and timeout is not None:
        raise InvalidValue("pass group or timeout, not both: a timeout needs a new gloo group of every rank")
    ranks = dist.get_process_group_ranks(group) if group is not None else list(range(dist.get_world_size()))
    model, source, errors = _check_locally(config, family, overrides, device, len(ranks), source or "<config>")
    canonical = _canonical(model) if model is not None else b""
    digest = hashlib.sha256(canonical).digest() if model is not None else bytes(32)
    with _exchange_group(group, timeout) as exchange:
        summaries = _all_gather_bytes(bytes([bool(errors), model is not None]) + digest, exchange)
        digests = {s[2:] for s in summaries if s[1]}
        if not any(s[0] for s in summaries) and len(digests) == 1:
            return model
        payload = {
            "source": source,
            "errors": [d.to_dict() for d in errors],
            "config": canonical.decode() if model is not None else None,
        }
        reports = [json.loads(r) for r in _all_gather_bytes(json.dumps(payload).encode(), exchange, sized=True)]
    raise ConfigError(_explain(ranks, reports))


def load_verified(
    path: str | os.PathLike[str],
    *,
    family: str | Family | None = None,
    overrides: Sequence[str] = (),
    device: str | torch.device | None = None,
    group: ProcessGroup | None = None,
    timeout: timedelta | None = LOAD_TIMEOUT,
) -> Any:
    """`trainspec.load` on every rank of a live process group: the same typed model, or the same ConfigError.

    `load` on each rank followed by `verify` leaves a rank whose own load
    raised (a rank-specific override, a file that differs on its node)
    outside the collectives, and the others then hang or fail in gloo
    instead of reporting the config. This is `verify` given the path: a load
    that fails is one more finding to share. Ranks that have not all arrived
    within `timeout` make the others raise RanksNotReady; with `group`, pass
    `timeout=None` (that group's own timeout then bounds the wait).
    """
    return verify(path, family=family, overrides=overrides, device=device, group=group, timeout=timeout)


def _check_locally(
    config: Any,
    family: str | Family | None,
    overrides: Sequence[str],
    device: str | torch.device | None,
    size: int,
    source: str,
) -> tuple[Any, str, list[Diagnostic]]:
    """This rank's model, its source name, and its errors; never raises, so the rank reaches the collectives."""
    try:
        if isinstance(config, (str, os.PathLike)):
            source = os.fspath(config)
            result = check_path(source, family=family, overrides=overrides, world_size=size)
            fam = result.family
            errors = [d for d in result.diagnostics if d.is_error]
            try:  # a model even when rules fail, so the configs can still be compared across ranks
                model = to_model(result) if result.config is not None else None
            except ConfigError as exc:  # the typed model refused the config; the schema errors say why, if any
                model, errors = None, errors or [d for d in exc.diagnostics if d.is_error]
        else:
            if overrides:
                raise InvalidType("overrides apply when verify is given a path; this config is already loaded")
            fam = _family_of(config, family)
            # None marks an absent optional section or key; the schema wants those left out
            dump = config.model_dump(mode="json", exclude_none=True)
            errors = [d for d in check_config(dump, fam, world_size=size, source=source) if d.is_error]
            model = config
        if model is not None:
            errors += device_diagnostics(model, device, source=source, family=fam)
    except Exception as exc:  # reported through the collectives, like any finding
        return (
            None,
            source,
            [Diagnostic(source, None, None, (), VERIFY_FAILED.id, Severity.ERROR, f"{type(exc).__name__}: {exc}")],
        )
    return model, source, errors


@contextmanager
def _exchange_group(group: ProcessGroup | None, timeout: timedelta | None) -> Iterator[ProcessGroup | None]:
    """`group`, or for a timeout a new gloo group of every rank whose collectives give up after it.

    torch cannot change a live group's timeout, hence the new group; it is
    made after the local checks, so it bounds how late a rank arrives, not how
    long loading takes. Every rank must make it (its name is a counter each
    rank advances), and after a timeout the counters disagree: stop the run.
    """
    if timeout is None:
        yield group
        return
    dist = needs_torch("torch.distributed")

    bounded = None
    try:
        bounded = dist.new_group(backend="gloo", timeout=timeout)
        yield bounded
    except RuntimeError as exc:  # torch's timeout, store and connection errors are all RuntimeErrors
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RanksNotReady(
            f"not every rank reached trainspec's config check within {timeout.total_seconds():g} s (a rank that "
            f"does not call it, is stuck or exited); stop the run: {reason}"
        ) from exc
    finally:
        if bounded is not None:
            dist.destroy_process_group(bounded)


def _family_of(model: Any, family: str | Family | None) -> Family:
    if isinstance(family, Family):
        return family
    if isinstance(family, str):
        return get_family(family)
    return family_of_model(type(model))  # every version: a config loaded as an older one is that version's


def _canonical(model: Any) -> bytes:
    """The resolved config as JSON with sorted keys: equal bytes exactly when the configs are equal."""
    return json.dumps(model.model_dump(mode="json"), sort_keys=True, separators=(",", ":")).encode()


def _all_gather_bytes(data: bytes, group: ProcessGroup | None, *, sized: bool = False) -> list[bytes]:
    """Every rank's bytes, in rank order, via plain uint8 tensors (no pickling, no numpy).

    Without `sized` every rank must send the same length; with it, lengths are
    gathered first and the payloads padded to the longest.
    """
    torch = needs_torch()
    dist = needs_torch("torch.distributed")

    dev = _collective_device(group)
    size = dist.get_world_size(group)
    lengths = [len(data)] * size
    if sized:
        mine_len = torch.tensor([len(data)], dtype=torch.int64, device=dev)
        gathered_len = [torch.empty_like(mine_len) for _ in range(size)]
        dist.all_gather(gathered_len, mine_len, group=group)
        lengths = [int(t.item()) for t in gathered_len]
    padded = torch.zeros(max(lengths), dtype=torch.uint8, device=dev)
    padded[: len(data)] = torch.tensor(list(data), dtype=torch.uint8, device=dev)
    gathered = [torch.empty_like(padded) for _ in range(size)]
    dist.all_gather(gathered, padded, group=group)
    return [bytes(t[:n].tolist()) for t, n in zip(gathered, lengths, strict=True)]


def _collective_device(group: ProcessGroup | None) -> torch.device:
    """CPU when the group's backend takes CPU tensors (gloo), else the current CUDA device (nccl)."""
    torch = needs_torch()
    dist = needs_torch("torch.distributed")

    backend = str(dist.get_backend(group))
    capability = dist.Backend.backend_capability
    kinds = {kind for part in backend.split(",") for kind in capability.get(part.split(":")[-1], [])}
    return torch.device("cpu") if "cpu" in kinds else torch.device("cuda", torch.cuda.current_device())


def _explain(ranks: Sequence[int], reports: Sequence[Mapping[str, Any]]) -> list[Diagnostic]:
    """The diagnostics every rank raises, from every rank's report (identical input -> identical output).

    A report is {"source", "errors": [Diagnostic.to_dict()], "config": canonical JSON or None}.
    Errors every rank found are reported once; others are prefixed with the
    ranks that found them. Configs are compared with the lowest rank that has one.
    """
    by_errors: dict[str, list[int]] = {}
    for rank, report in zip(ranks, reports, strict=True):
        if report["errors"]:
            by_errors.setdefault(json.dumps(report["errors"], sort_keys=True), []).append(rank)
    out: list[Diagnostic] = []
    for key, found_on in by_errors.items():
        where = () if len(found_on) == len(ranks) else (Clause(f"on {_ranks(found_on)}", Join.BEFORE),)
        out += [_diagnostic(d, where) for d in json.loads(key)]
    loaded = [
        (rank, r["source"], json.loads(r["config"]))
        for rank, r in zip(ranks, reports, strict=True)
        if r["config"] is not None
    ]
    if loaded:
        out += _differences(loaded)
    return out


def _differences(loaded: list[tuple[int, str, Any]]) -> Iterator[Diagnostic]:
    ref_rank, ref_source, ref = loaded[0]
    groups: dict[str, list[tuple[int, str, Any]]] = {}
    for rank, source, config in loaded[1:]:
        if config != ref:
            groups.setdefault(json.dumps(config, sort_keys=True), []).append((rank, source, config))
    for members in groups.values():
        other_rank, _, other = members[0]
        diffs = list(_diff(ref, other, ()))
        shown = ", ".join(
            f"{format_path(p)} (rank {ref_rank}: {_show(a)}, rank {other_rank}: {_show(b)})"
            for p, a, b in diffs[:DIFFERING_PATHS_SHOWN]
        )
        more = f" and {len(diffs) - DIFFERING_PATHS_SHOWN} more" if len(diffs) > DIFFERING_PATHS_SHOWN else ""
        others = [rank for rank, _, _ in members]
        files = sorted({source for _, source, _ in members} - {ref_source})
        read = f" (read {', '.join(files)}; rank {ref_rank} read {ref_source})" if files else ""
        yield Diagnostic(
            ref_source,
            None,
            None,
            diffs[0][0],
            CONFIG_DIFFERS_ACROSS_RANKS.id,
            Severity.ERROR,
            f"{_ranks(others)} loaded a different config than rank {ref_rank}{read}: {len(diffs)} value(s) differ: "
            f"{shown}{more}; every rank must train with the same config",
            origin="the configs the ranks loaded",
        )


def _diff(a: Any, b: Any, path: Path) -> Iterator[tuple[Path, Any, Any]]:
    """Leaf paths where two JSON values differ, in sorted-key order."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            yield from _diff(a.get(key), b.get(key), (*path, key))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _diff(x, y, (*path, i))
    elif a != b:
        yield path, a, b


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _ranks(ranks: Iterable[int]) -> str:
    listed = list(ranks)
    return ("rank " if len(listed) == 1 else "ranks ") + ", ".join(map(str, listed))


def _diagnostic(d: Mapping[str, Any], clauses: tuple[Clause, ...]) -> Diagnostic:
    """A diagnostic from another rank's report (its message as it was written there), with `clauses` added."""
    related = tuple(Related(read_shown_path(r["config_path"]), r["line"], r["column"]) for r in d["related"])
    return Diagnostic(
        d["file"],
        d["line"],
        d["column"],
        read_shown_path(d["config_path"]),
        d["rule"],
        Severity(d["severity"]),
        d["message"],
        d["origin"],
        related,
        clauses=clauses,
    )
