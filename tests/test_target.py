"""The target machine as an input: the GPU catalogue, `--gpu`, the project's `gpu`, the `gpu=` directive,
rules that read the `device`, and a family's device checks run ahead of the job."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from trainspec import Family, rule
from trainspec.cli import main
from trainspec.engine.pipeline import check_path
from trainspec.engine.runner import run_example
from trainspec.spec.codes import GPU_UNKNOWN, INVALID_DIRECTIVE
from trainspec.spec.device import GPUS, Device, target
from trainspec.spec.diagnostics import Severity
from trainspec.spec.examples import Example, Run
from trainspec.spec.rules import Context

from .conftest import ROOT

BF16 = '[train]\nmixed_precision = "bf16"\n'
FP8 = '[train]\nmixed_precision = "fp8"\n'
FP16_7B = (
    (ROOT / "examples" / "kempnerforge_7b_12gpu.toml")
    .read_text()
    .replace("[train]\n", '[train]\nmixed_precision = "fp16"\n')
)
"""A 7B run on 12 GPUs in fp16, which a T4 has."""


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def rules_of(out: str) -> list[str]:
    return [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "[" in line and "]" in line]


@pytest.mark.parametrize(
    ("typed", "name", "capability", "gib"),
    [
        ("h100", "NVIDIA H100 80GB", (9, 0), 80),
        ("H100", "NVIDIA H100 80GB", (9, 0), 80),
        ("nvidia-h100", "NVIDIA H100 80GB", (9, 0), 80),
        ("a100_40gb", "NVIDIA A100 40GB", (8, 0), 40),
        ("A100-40GB", "NVIDIA A100 40GB", (8, 0), 40),
        ("RTX 4090", "NVIDIA GeForce RTX 4090", (8, 9), 24),
        ("v100", "NVIDIA V100 32GB", (7, 0), 32),
        ("t4", "NVIDIA T4", (7, 5), 16),
        ("l40s", "NVIDIA L40S", (8, 9), 48),
        ("b200", "NVIDIA B200", (10, 0), 180),
    ],
)
def test_gpus_are_read_by_the_names_people_type(typed, name, capability, gib):
    assert target(typed) == Device("cuda", name, capability, memory=gib * 2**30)


def test_amd_gpus_are_rocm_devices_with_their_memory():
    found = target("MI300X")
    assert found.rocm and found.capability is None and found.memory == 192 * 2**30


@pytest.mark.parametrize(
    ("typed", "capability"),
    [("sm_90", (9, 0)), ("sm90", (9, 0)), ("9.0", (9, 0)), ("sm_100", (10, 0)), ("12.0", (12, 0)), ("8.9", (8, 9))],
)
def test_a_compute_capability_stands_for_a_gpu_of_unknown_memory(typed, capability):
    assert target(typed) == Device("cuda", f"sm_{capability[0]}{capability[1]}", capability)


def test_an_amd_architecture_is_a_rocm_device():
    assert target("gfx942") == Device("cuda", "an AMD GPU (gfx942)", None, rocm=True)


@pytest.mark.parametrize(("typed", "suggested"), [("h10", "h100"), ("mi300", "mi300x"), ("a100-40", "a100-40gb")])
def test_an_unknown_gpu_suggests_the_closest_and_lists_the_rest(typed, suggested):
    with pytest.raises(ValueError) as raised:
        target(typed)
    message = str(raised.value)
    assert f"unknown GPU {typed!r} (did you mean {suggested}?)" in message
    assert "known: a10, a100, " in message and "(sm_90 or 9.0)" in message


def test_every_catalogued_gpu_has_its_memory_and_a_capability_or_rocm():
    for name, device in GPUS.items():
        assert device.memory and device.memory % 2**30 == 0, name
        assert (device.capability is None) == device.rocm, name
        assert target(name) is device


def test_a_context_holds_one_world_size_or_none():
    context = Context((8, 16), target("h100"))
    assert context.world_size is None and context.at(8).world_size == 8 and context.at(8).device is context.device
    assert context.at(None).world_sizes == ()


# -- the command line --------------------------------------------------------------------------------------


@pytest.fixture
def config(tmp_path: Path):
    def _write(text: str, name: str = "job.toml") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return _write


def test_without_a_gpu_no_device_check_runs(capsys, config):
    code, out, _ = run(capsys, "check", config(BF16), "--isolated")
    assert code == 0 and "device-" not in out and GPU_UNKNOWN.id not in out


def test_gpu_names_the_target_of_the_familys_device_checks(capsys, config):
    path = config(BF16)
    code, out, _ = run(capsys, "check", path, "--isolated", "--gpu", "v100")
    assert code == 1
    assert f"{path}:2:1: error[device-bf16-unsupported] " in out
    assert "but NVIDIA V100 32GB (compute capability 7.0) has no native bfloat16" in out
    assert run(capsys, "check", path, "--isolated", "--gpu", "a100")[0] == 0


@pytest.mark.parametrize(("gpu", "fails"), [("a100", True), ("l4", False), ("h100", False), ("sm_86", True)])
def test_fp8_needs_a_gpu_of_capability_8_9(capsys, config, gpu, fails):
    code, out, _ = run(capsys, "check", config(FP8), "--isolated", "--gpu", gpu)
    assert ("device-fp8-unsupported" in rules_of(out)) is fails and code == int(fails)


def test_an_unknown_gpu_is_a_usage_error(capsys, config):
    with pytest.raises(SystemExit) as exit_:
        main(["check", config(BF16), "--gpu", "h10"])
    assert exit_.value.code == 2
    assert "argument --gpu: unknown GPU 'h10' (did you mean h100?)" in capsys.readouterr().err


def test_the_device_checks_run_on_the_config_after_overrides(capsys, config):
    path = config('[train]\nmixed_precision = "fp16"\n')
    code, out, _ = run(capsys, "check", path, "--isolated", "--gpu", "v100", "--set", "train.mixed_precision=bf16")
    assert code == 1 and rules_of(out) == ["device-bf16-unsupported", "world-size-unknown"]
    path = config(BF16, "fixed.toml")
    code, out, _ = run(capsys, "check", path, "--isolated", "--gpu", "v100", "--set", "train.mixed_precision=fp16")
    assert code == 0, out  # the file's own bf16 is no load-time error: the device is the launch's question


def test_a_gpu_of_known_memory_is_the_memory_budget(capsys, config):
    path = config(FP16_7B)
    code, out, _ = run(capsys, "check", path, "--isolated", "--world-size", "12", "--gpu", "t4")
    assert code == 1 and "error[gpu-memory-exceeded] the estimated memory per rank, " in out
    assert "exceeds the 16.0 GiB of NVIDIA T4; the largest part is" in out
    assert run(capsys, "check", path, "--isolated", "--world-size", "12", "--gpu", "h100")[0] == 0
    given = run(capsys, "check", path, "--isolated", "--world-size", "12", "--gpu", "t4", "--gpu-memory", "80GiB")
    assert given[0] == 0, "--gpu-memory, when given, is the budget"
    unsized = run(capsys, "check", path, "--isolated", "--gpu", "t4")[1]
    assert "note[world-size-unknown] the memory of NVIDIA T4 not checked: " in unsized
    assert run(capsys, "check", path, "--isolated", "--world-size", "12", "--gpu", "sm_75")[0] == 0  # no memory known


def test_sweep_show_and_plan_take_the_gpu(capsys, config):
    path = config(BF16)
    code, out, _ = run(
        capsys, "check", path, "--isolated", "--gpu", "v100", "--sweep", "train.mixed_precision=bf16,fp16"
    )
    assert code == 1 and "1 of 2 variants fail" in out and "device-bf16-unsupported" in out
    code, out, _ = run(capsys, "show", path, "--gpu", "v100", "--format", "json")
    assert code == 1 and "device-bf16-unsupported" in {d["rule"] for d in json.loads(out)["diagnostics"]}
    fp16 = config(FP16_7B, "p.toml")
    code, out, _ = run(capsys, "plan", fp16, "--gpus", "12", "--gpu", "t4")
    assert "gpu-memory-exceeded" in out  # the T4's 16 GiB is the budget the layouts must fit


# -- the directive and the project configuration -------------------------------------------------------------


def test_a_directive_names_the_gpu_and_outranks_the_command_line(capsys, config):
    path = config("# trainspec: gpu=v100\n" + BF16)
    code, out, _ = run(capsys, "check", path, "--isolated")
    assert code == 1 and "NVIDIA V100 32GB" in out
    code, out, _ = run(capsys, "check", path, "--isolated", "--gpu", "h100")
    assert code == 1 and "NVIDIA V100 32GB" in out
    assert (
        run(capsys, "check", config("# trainspec: gpu=sm_90 world-size=1\n" + BF16, "b.toml"), "--gpu", "v100")[0] == 0
    )


def test_an_unknown_gpu_in_a_directive_is_an_error_at_its_line(capsys, config):
    path = config("# trainspec: gpu=h10\n" + BF16)
    code, out, _ = run(capsys, "check", path, "--isolated")
    assert code == 1
    assert (
        f"{path}:1:14: error[{INVALID_DIRECTIVE.id}] file directive: gpu: unknown GPU 'h10' (did you mean h100?)" in out
    )
    assert "write `# trainspec: gpu=h100` (or gpu=sm_90)" in out


def project(folder: Path, settings: str) -> None:
    (folder / ".trainspec.toml").write_text(textwrap.dedent(settings))


def test_the_project_names_the_gpu_below_the_command_line_and_an_entry_above_it(capsys, tmp_path):
    project(
        tmp_path,
        """\
        gpu = "v100"

        [[configs]]
        paths = ["pinned/*.toml"]
        gpu = "t4"
        """,
    )
    (tmp_path / "pinned").mkdir()
    loose, pinned = tmp_path / "job.toml", tmp_path / "pinned" / "job.toml"
    for path in (loose, pinned):
        path.write_text(BF16)
    code, out, _ = run(capsys, "check", str(loose))
    assert code == 1 and "NVIDIA V100 32GB" in out
    assert run(capsys, "check", str(loose), "--gpu", "a100")[0] == 0
    code, out, _ = run(capsys, "check", str(pinned), "--gpu", "a100")
    assert code == 1 and "NVIDIA T4" in out


def test_an_unknown_gpu_in_the_project_is_told_at_its_line(capsys, tmp_path):
    project(tmp_path, '# settings\ngpu = "a100-48gb"\n')
    (tmp_path / "job.toml").write_text(BF16)
    code, out, err = run(capsys, "check", str(tmp_path / "job.toml"))
    assert code == 2
    assert (
        ".trainspec.toml:2:8: gpu 'a100-48gb': unknown GPU 'a100-48gb' (did you mean a100-80gb?); known: " in out + err
    )


# -- rules that read the device ------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "precision": {"type": "string", "default": "bf16", "description": "Training precision."},
        "shards": {"type": "integer", "default": 1, "description": "Shards."},
    },
}


@rule("bf16-needs-ampere", "error", "precision")
def bf16_needs_ampere(precision: str, device: Device):
    """bfloat16 needs compute capability 8.0."""
    if precision == "bf16" and not device.rocm and device.capability is not None and device.capability < (8, 0):
        yield f'precision = "bf16" needs compute capability 8.0; {device.name} has {device.capability}'


@rule("shards-fit-gpus", "error", "shards")
def shards_fit_gpus(shards: int, world_size: int, device: Device):
    """Every rank of a small GPU holds one shard."""
    if device.memory is not None and device.memory < 40 * 2**30 and shards != world_size:
        yield f"shards = {shards} must equal the world size {world_size} on {device.name}"


@pytest.fixture
def devicefamily(tmp_path: Path) -> Family:
    schema = tmp_path / "dev.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    return Family(
        name="devicefamily",
        schema_file=schema,
        model="nowhere:Model",
        rules=[bf16_needs_ampere, shards_fit_gpus],
        formats=frozenset({"yaml"}),
    )


def test_a_rule_with_a_device_parameter_reads_the_device_and_runs_at_launch():
    assert bf16_needs_ampere.needs_device and bf16_needs_ampere.at_launch and not bf16_needs_ampere.needs_world_size
    assert shards_fit_gpus.needs_device and shards_fit_gpus.needs_world_size


def test_without_a_target_device_rules_are_skipped_with_a_note(devicefamily, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("precision: bf16\nshards: 2\n")
    found = check_path(path, family=devicefamily, world_size=4).diagnostics
    assert [(d.rule, d.severity) for d in found] == [(GPU_UNKNOWN.id, Severity.NOTE)]
    assert found[0].message == (
        "GPU rules not checked (bf16-needs-ampere, shards-fit-gpus): no target GPU known; "
        "pass --gpu NAME (e.g. h100) or --gpu sm_90"
    )


def test_device_rules_run_at_the_target_and_each_world_size(devicefamily, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("precision: bf16\nshards: 2\n")
    found = check_path(path, family=devicefamily, world_size=[2, 4], device=target("t4")).diagnostics
    assert [(d.rule, d.world_size, d.line) for d in found] == [
        ("bf16-needs-ampere", None, 1),
        ("world-size-checked", 2, None),
        ("shards-fit-gpus", 4, 2),
    ]
    assert check_path(path, family=devicefamily, world_size=4, device=target("h100")).diagnostics == []
    (sized,) = check_path(path, family=devicefamily, device=target("t4")).diagnostics[1:]
    assert sized.rule == "world-size-unknown" and "shards-fit-gpus" in sized.message


def test_a_suppressed_device_rule_is_not_unused_without_a_target(capsys, devicefamily, tmp_path):
    from trainspec.families import register

    register(devicefamily)  # gone after the test (conftest)
    path = tmp_path / "c.yaml"
    path.write_text("precision: bf16  # trainspec: ignore[bf16-needs-ampere]\n")
    code, out, _ = run(capsys, "check", str(path), "--family", "devicefamily", "--isolated")
    assert code == 0 and "unused-suppression" not in out
    code, out, _ = run(capsys, "check", str(path), "--family", "devicefamily", "--isolated", "--gpu", "v100")
    assert code == 0 and "bf16-needs-ampere" not in out


# -- examples ------------------------------------------------------------------------------------------------


def test_an_example_runs_at_its_gpu():
    example = Example(bad=BF16, good='[train]\nmixed_precision = "fp16"\n', run=Run(gpu="v100"))
    assert example.command(False) == "trainspec check example.toml --gpu v100"
    assert "device-bf16-unsupported" in {d.rule for d in run_example(example, fixed=False, family="kempnerforge")}
    assert not [d for d in run_example(example, fixed=True, family="kempnerforge") if d.is_error]


def test_the_python_api_takes_the_gpu(tmp_path):
    import trainspec
    from trainspec.api import check_config

    path = tmp_path / "job.toml"
    path.write_text(BF16)
    assert "device-bf16-unsupported" in {d.rule for d in trainspec.check(path, gpu="v100")}
    assert "device-bf16-unsupported" not in {d.rule for d in trainspec.check(path)}
    config = {"train": {"mixed_precision": "bf16"}}
    assert "device-bf16-unsupported" in {d.rule for d in check_config(config, "kempnerforge", gpu=target("t4"))}
    with pytest.raises(ValueError, match="did you mean h100"):
        trainspec.check(path, gpu="h10")
