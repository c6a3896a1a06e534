"""trainspec.distributed in one process: world size sources, torch dtypes, device checks, no torch in the CLI."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

try:
    import torch
    import torch.distributed as dist
except ModuleNotFoundError:  # the fast loop (`-m "not external"`) collects this module where torch is absent
    torch = dist = None  # type: ignore[assignment]

import trainspec
from trainspec.api import check_config
from trainspec.distributed import (
    WorldSize,
    device_diagnostics,
    load_verified,
    torch_dtype,
    world_size,
)
from trainspec.families.kempnerforge.precision import master_dtype

pytestmark = pytest.mark.external  # needs torch


@pytest.fixture(autouse=True)
def _torch_is_installed() -> None:
    """Run without torch, these tests fail saying so (tools/setup-dev.sh installs its CPU build)."""
    if torch is None:
        pytest.fail("torch is not installed: tools/setup-dev.sh installs it")


ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "examples" / "tiny_kempnerforge.toml"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"WORLD_SIZE": "8"}, WorldSize(8, "WORLD_SIZE")),
        ({"SLURM_NTASKS": "12"}, WorldSize(12, "SLURM_NTASKS")),
        ({"SLURM_NNODES": "3", "SLURM_NTASKS_PER_NODE": "4"}, WorldSize(12, "SLURM_NNODES × SLURM_NTASKS_PER_NODE")),
        # torchrun inside a SLURM allocation: torchrun's count of ranks wins over SLURM's count of tasks
        ({"WORLD_SIZE": "16", "SLURM_NTASKS": "2", "SLURM_NNODES": "2"}, WorldSize(16, "WORLD_SIZE")),
        ({"SLURM_NTASKS": "6", "SLURM_NNODES": "3", "SLURM_NTASKS_PER_NODE": "4"}, WorldSize(6, "SLURM_NTASKS")),
        ({"SLURM_NNODES": "3"}, WorldSize(1, "single process")),  # nodes but no task count: not a size
        ({}, WorldSize(1, "single process")),
    ],
)
def test_world_size_from_the_launcher_environment(environ: dict[str, str], expected: WorldSize) -> None:
    assert world_size(environ) == expected


@pytest.mark.parametrize(
    "environ", [{"WORLD_SIZE": "two"}, {"SLURM_NTASKS": "0"}, {"SLURM_NNODES": "2", "SLURM_NTASKS_PER_NODE": "4(x2)"}]
)
def test_world_size_refuses_a_malformed_launcher_variable(environ: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="is not a positive integer"):
        world_size(environ)


def test_world_size_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "5")
    assert world_size() == WorldSize(5, "WORLD_SIZE")


def test_world_size_is_one_in_a_plain_process() -> None:
    assert not dist.is_initialized()
    found = world_size({})
    assert (found.size, found.source) == (1, "single process")


def test_load_verified_refuses_a_group_with_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A timeout needs a new group of every rank, which the ranks outside `group` would never make."""
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    subgroup: Any = object()  # refused before it is used
    with pytest.raises(ValueError, match="pass group or timeout, not both"):
        load_verified(TINY, group=subgroup)


@pytest.mark.parametrize(
    ("precision", "dtype"),
    [("bf16", "bfloat16"), ("fp16", "float16"), ("fp32", "float32"), ("fp8", "bfloat16")],
)
def test_master_dtype_follows_the_reference(precision: str, dtype: str) -> None:
    assert master_dtype(precision) is getattr(torch, dtype)


def test_torch_dtype_by_name() -> None:
    assert torch_dtype("bfloat16") is torch.bfloat16
    assert torch_dtype("float32") is torch.float32
    for bad in ("bf17", "nn", "float32; x"):
        with pytest.raises(ValueError):
            torch_dtype(bad)
    with pytest.raises(ValueError, match="unknown mixed precision"):
        master_dtype("int8")


def tiny(**sections: str) -> Any:
    """The tiny example config as a typed model, with `train.mixed_precision` etc. replaced."""
    cfg = trainspec.load(TINY)
    return cfg.model_copy(update={"train": cfg.train.model_copy(update=sections)})


def test_cpu_takes_any_precision_but_fp8() -> None:
    for precision in ("bf16", "fp16", "fp32"):
        assert device_diagnostics(tiny(mixed_precision=precision), "cpu") == []
    [found] = device_diagnostics(tiny(mixed_precision="fp8"), "cpu", source="job.toml")
    assert (found.rule, found.config_path, found.file, found.is_error) == (
        "device-fp8-unsupported",
        "train.mixed_precision",
        "job.toml",
        True,
    )
    assert "compute capability 8.9" in found.message


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make torch.cuda describe 4 GPUs of a given compute capability (this machine has none)."""

    def install(capability: tuple[int, int]) -> None:
        monkeypatch.setattr(torch.version, "hip", None)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: f"GPU sm{capability[0]}{capability[1]}")
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: capability)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)

    return install


def test_gpu_without_bf16(fake_gpu: Any) -> None:
    fake_gpu((7, 0))
    rules = {d.rule for d in device_diagnostics(tiny(mixed_precision="bf16"), "cuda:0", environ={})}
    assert rules == {"device-bf16-unsupported"}
    assert device_diagnostics(tiny(mixed_precision="fp16"), "cuda:0", environ={}) == []
    rules = {d.rule for d in device_diagnostics(tiny(mixed_precision="fp8"), "cuda:0", environ={})}
    assert rules == {"device-bf16-unsupported", "device-fp8-unsupported"}


def test_gpu_with_bf16_and_fp8(fake_gpu: Any) -> None:
    fake_gpu((9, 0))
    for precision in ("bf16", "fp8"):
        assert device_diagnostics(tiny(mixed_precision=precision), "cuda", environ={"LOCAL_WORLD_SIZE": "4"}) == []
    fake_gpu((8, 0))
    assert [d.rule for d in device_diagnostics(tiny(mixed_precision="fp8"), "cuda", environ={})] == [
        "device-fp8-unsupported"
    ]


@pytest.mark.parametrize("variable", ["LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE"])
def test_more_processes_per_node_than_gpus(fake_gpu: Any, variable: str) -> None:
    fake_gpu((9, 0))
    [found] = device_diagnostics(tiny(), "cuda", environ={variable: "8", "CUDA_VISIBLE_DEVICES": "0,1,2,3"})
    assert found.rule == "device-count-per-node"
    assert "8 processes on this node but torch sees 4 CUDA device(s)" in found.message
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3" in found.message


def test_check_config_runs_the_world_size_rules_on_a_loaded_model() -> None:
    dump = trainspec.load(TINY, overrides=["distributed.dp_shard=2"]).model_dump(mode="json", exclude_none=True)
    assert not [d for d in check_config(dump, "kempnerforge", world_size=2) if d.is_error]
    [error] = [d for d in check_config(dump, "kempnerforge", world_size=3, source="tiny.toml") if d.is_error]
    assert (error.rule, error.file, error.line, error.config_path) == (
        "world-size-product",
        "tiny.toml",
        None,
        "distributed.dp_shard",
    )
    assert "1·2·1·1·1·1 = 2 but the world size is 3" in error.message


def test_check_and_load_never_import_torch() -> None:
    """Run in a fresh interpreter: this test process has imported torch itself."""
    script = textwrap.dedent(f"""
        import sys
        import trainspec, trainspec.distributed
        from trainspec.cli import main
        path = {str(TINY)!r}
        trainspec.load(path, world_size=2)
        assert main(["check", path, "--world-size", "2"]) == 0
        assert trainspec.distributed.world_size({{"WORLD_SIZE": "2"}}).size == 2
        assert trainspec.distributed.world_size({{}}).size == 1
        leaked = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
        print("leaked", leaked)
        sys.exit(1 if leaked else 0)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "leaked []" in run.stdout


def test_a_local_check_that_raises_is_reported_as_verify_failed_on_a_live_group() -> None:
    import trainspec.distributed as tsd

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        config = trainspec.load(TINY)
        with pytest.raises(trainspec.ConfigError) as caught:
            tsd.verify(config, overrides=["model.dim=128"])
    finally:
        dist.destroy_process_group()
    (failed,) = caught.value.diagnostics
    assert failed.rule == "verify-failed" and "overrides apply when verify is given a path" in failed.message


def test_verify_finds_the_version_a_config_was_loaded_as() -> None:
    import trainspec.distributed as tsd

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        config = trainspec.load(TINY, family="kempnerforge@089fbbd")
        assert tsd.verify(config) is config
    finally:
        dist.destroy_process_group()


def test_without_torch_the_error_names_the_extra_to_install(monkeypatch):
    import trainspec.distributed as tsd

    monkeypatch.setitem(sys.modules, "torch", None)  # what an environment without torch answers
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'trainspec\[torch\]'") as caught:
        tsd.torch_dtype("bfloat16")
    assert isinstance(caught.value, tsd.TorchMissing) and isinstance(caught.value, trainspec.TrainspecError)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'trainspec\[torch\]'") as missing:
        master_dtype("bf16")
    assert missing.value.name == "torch"
