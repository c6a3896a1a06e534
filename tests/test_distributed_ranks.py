"""trainspec.distributed on live gloo process groups of 2 and 3 CPU processes, and the tiny trainer under torchrun.

Each group is started once and runs every scenario in sequence: after a
failed verify the group must still be usable, which shows that no rank was
left behind in a collective. Run as a script, this file is one such rank.
A scenario's mode says what each rank does: "model" verifies what
`trainspec.load` returned, "path" verifies the path, "load" calls
`load_verified` (a rank whose path is null stays away, like a stuck rank).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.external  # launches gloo process groups and torchrun

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "examples" / "tiny_kempnerforge.toml"
TRAINER = ROOT / "examples" / "tiny_trainer.py"
TIMEOUT = 120  # seconds; a hang in a collective fails the test instead of blocking the run
LATE = 2  # seconds load_verified waits for a rank that never comes, far below the group's TIMEOUT // 2
SHARD3 = "distributed.dp_shard=3"


def variant(directory: Path, name: str, *replacements: tuple[str, str]) -> str:
    """The tiny example config with lines replaced, written to `directory`."""
    text = TINY.read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    path = directory / f"{name}.toml"
    path.write_text(text)
    return str(path)


def launch(world: int, scenarios: list[dict[str, Any]], directory: Path) -> list[dict[str, Any]]:
    """Start `world` ranks of this file as a script on one file-store gloo group; every rank's results."""
    plan = directory / f"plan{world}.json"
    plan.write_text(json.dumps(scenarios))
    store = directory / f"store{world}"
    env = {**os.environ, "WORLD_SIZE": str(world), "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, str(rank), str(world), str(store), str(plan)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(world)
    ]
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=TIMEOUT))
    except subprocess.TimeoutExpired:
        for proc in procs:
            proc.kill()
        pytest.fail(f"{world} ranks did not finish within {TIMEOUT} s: a rank hangs in a collective")
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    return [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]


def rank_main(rank: int, world: int, store: str, plan: str) -> None:
    """One rank: join the group, verify every scenario's config, print the results as one JSON line."""
    from datetime import timedelta

    import torch.distributed as dist

    import trainspec
    import trainspec.distributed as tsd

    before = tsd.world_size()
    dist.init_process_group(
        "gloo", init_method=f"file://{store}", rank=rank, world_size=world, timeout=timedelta(seconds=TIMEOUT // 2)
    )
    after = tsd.world_size()
    results: dict[str, Any] = {"before": [before.size, before.source], "after": [after.size, after.source]}
    for scenario in json.loads(Path(plan).read_text()):
        name, path, started = scenario["name"], scenario["configs"][rank], time.monotonic()
        try:
            if scenario["mode"] == "model":
                tsd.verify(trainspec.load(path), device="cpu", source=path)
                results[name] = {"ok": True}
            elif scenario["mode"] == "path":
                tsd.verify(path, device="cpu")
                results[name] = {"ok": True}
            elif path is not None:
                overrides = scenario.get("overrides", {}).get(str(rank), [])
                timeout = timedelta(seconds=scenario["timeout"]) if "timeout" in scenario else tsd.LOAD_TIMEOUT
                cfg = tsd.load_verified(path, overrides=overrides, device="cpu", timeout=timeout)
                results[name] = {"ok": True, "model": [type(cfg).__name__, cfg.model.dim]}
        except trainspec.ConfigError as exc:
            results[name] = {"ok": False, "error": str(exc), "rules": sorted({d.rule for d in exc.diagnostics})}
        except RuntimeError as exc:
            if scenario["mode"] != "load":
                raise
            results[name] = {"ok": False, "late": str(exc), "seconds": time.monotonic() - started}
    dist.destroy_process_group()
    print(json.dumps(results))


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    d = tmp_path_factory.mktemp("two")
    tiny = str(TINY)
    fixed3 = variant(d, "fixed3", ("dp_shard = -1", "dp_shard = 3"))
    wider = variant(d, "wider", ("dim = 64", "dim = 128"), ("max_steps = 40", "max_steps = 50"))
    broken = variant(d, "broken", ("[model]\n", "[model\n"))
    return launch(
        2,
        [
            {"name": "same", "mode": "model", "configs": [tiny, tiny]},
            {"name": "misfit", "mode": "model", "configs": [fixed3, fixed3]},
            {"name": "differs", "mode": "model", "configs": [tiny, wider]},
            {"name": "one-misfit", "mode": "path", "configs": [tiny, fixed3]},
            {"name": "unreadable", "mode": "path", "configs": [tiny, str(d / "missing.toml")]},
            {"name": "load-broken", "mode": "load", "configs": [tiny, broken]},
            {"name": "load-override", "mode": "load", "configs": [tiny, tiny], "overrides": {"1": [SHARD3]}},
            {"name": "load-differs", "mode": "load", "configs": [tiny, wider]},
            {"name": "load-same", "mode": "load", "configs": [tiny, tiny]},
            {"name": "same-again", "mode": "path", "configs": [tiny, tiny]},
            # last: after a timeout the ranks disagree on how many groups they made, so no new group would work
            {"name": "load-absent", "mode": "load", "configs": [tiny, None], "timeout": LATE},
        ],
        d,
    )


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    d = tmp_path_factory.mktemp("three")
    tiny = str(TINY)
    tp2 = variant(d, "tp2", ("[distributed]\n", "[distributed]\ntp = 2\n"))
    fixed2 = variant(d, "fixed2", ("dp_shard = -1", "dp_shard = 2"))
    deeper = variant(d, "deeper", ("n_layers = 2", "n_layers = 3"))
    return launch(
        3,
        [
            {"name": "same", "mode": "model", "configs": [tiny] * 3},
            {"name": "auto-shard", "mode": "model", "configs": [tp2] * 3},
            {"name": "product", "mode": "path", "configs": [fixed2] * 3},
            {"name": "differs", "mode": "model", "configs": [tiny, tiny, deeper]},
            {"name": "same-again", "mode": "model", "configs": [tiny] * 3},
        ],
        d,
    )


def same_error(results: list[dict[str, Any]], scenario: str) -> dict[str, Any]:
    """The one error every rank raised in `scenario`."""
    found = [r[scenario] for r in results]
    assert not any(f["ok"] for f in found), found
    assert all(f == found[0] for f in found), "ranks raised different errors"
    return found[0]


def test_world_size_before_and_after_the_group_starts(two: Any, three: Any) -> None:
    for results, world in ((two, 2), (three, 3)):
        for r in results:
            assert r["before"] == [world, "WORLD_SIZE"]
            assert r["after"] == [world, "torch.distributed process group"]


@pytest.mark.parametrize("group", ["two", "three"])
def test_the_same_fitting_config_passes_on_every_rank(group: str, request: pytest.FixtureRequest) -> None:
    results = request.getfixturevalue(group)
    for r in results:
        assert r["same"] == {"ok": True}
        assert r["same-again"] == {"ok": True}  # after the failures below: nobody was left in a collective


@pytest.mark.parametrize(
    ("group", "scenario", "rule", "says"),
    [
        ("two", "misfit", "world-size-product", "1·3·1·1·1·1 = 3 but the world size is 2"),
        ("three", "auto-shard", "world-size-auto-shard-divisible", "world size 3 is not divisible by"),
        ("three", "product", "world-size-product", "1·2·1·1·1·1 = 2 but the world size is 3"),
    ],
)
def test_a_world_size_rule_failing_at_the_real_world_size_stops_every_rank(
    group: str, scenario: str, rule: str, says: str, request: pytest.FixtureRequest
) -> None:
    error = same_error(request.getfixturevalue(group), scenario)
    assert error["rules"] == [rule]
    assert f"error[{rule}]" in error["error"] and says in error["error"]
    assert "on rank" not in error["error"]  # every rank found it: reported once, without rank prefixes


def test_different_configs_name_the_ranks_files_and_paths(two: Any, three: Any) -> None:
    for scenario in ("differs", "load-differs"):  # verify on loaded models, and load_verified
        error = same_error(two, scenario)
        assert error["rules"] == ["config-differs-across-ranks"]
        assert differing(error["error"], 1, "wider.toml").startswith(
            "2 value(s) differ: model.dim (rank 0: 64, rank 1: 128), train.max_steps (rank 0: 40, rank 1: 50)"
        )
    error = same_error(three, "differs")
    assert differing(error["error"], 2, "deeper.toml").startswith(
        "1 value(s) differ: model.n_layers (rank 0: 2, rank 2: 3)"
    )


def differing(error: str, other: int, file: str) -> str:
    """What `error` says after "rank OTHER loaded a different config than rank 0 (read …/FILE; rank 0 read TINY): "."""
    _, found, rest = error.partition(f"rank {other} loaded a different config than rank 0 (read ")
    assert found, error
    read, _, rest = rest.partition("; ")
    assert Path(read).name == file, read
    prefix = f"rank 0 read {TINY}): "
    assert rest.startswith(prefix), rest
    return rest[len(prefix) :]


def test_a_failure_on_one_rank_stops_every_rank(two: Any) -> None:
    error = same_error(two, "one-misfit")
    assert error["rules"] == ["config-differs-across-ranks", "world-size-product"]
    assert re.search(r"fixed3\.toml:\d+:\d+: error\[world-size-product\] on rank 1: ", error["error"])
    assert "distributed.dp_shard (rank 0: -1, rank 1: 3)" in error["error"]
    error = same_error(two, "unreadable")
    assert "on rank 1: " in error["error"] and "missing.toml" in error["error"]


def test_load_verified_gives_every_rank_the_model(two: Any) -> None:
    for r in two:
        assert r["load-same"] == {"ok": True, "model": ["JobConfig", 64]}


def test_a_file_that_does_not_load_on_one_rank_stops_every_rank(two: Any) -> None:
    error = same_error(two, "load-broken")
    assert error["rules"] == ["syntax-error"]
    assert re.search(r"broken\.toml:\d+:\d+: error\[syntax-error\] on rank 1: ", error["error"]), error["error"]


def test_a_rank_specific_override_stops_every_rank(two: Any) -> None:
    error = same_error(two, "load-override")
    assert error["rules"] == ["config-differs-across-ranks", "world-size-product"]
    assert "error[world-size-product] on rank 1: " in error["error"]
    assert "distributed.dp_shard (rank 0: -1, rank 1: 3)" in error["error"]


def test_a_rank_that_never_arrives_is_a_clear_error_within_the_timeout(two: Any) -> None:
    found = two[0]["load-absent"]
    assert not found["ok"]
    assert f"not every rank reached trainspec's config check within {LATE} s" in found["late"]
    assert found["seconds"] < LATE + 10  # not the group's own timeout (TIMEOUT // 2)
    assert "load-absent" not in two[1]


def torchrun(*args: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        str(TRAINER),
        str(TINY),
        *args,
    ]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the tiny trainer did not finish within {TIMEOUT} s")


def losses(output: str) -> list[float]:
    return [float(m) for m in re.findall(r"^step \d+ loss ([0-9.]+)$", output, re.MULTILINE)]


def test_the_tiny_trainer_trains_under_torchrun() -> None:
    run = torchrun()
    assert run.returncode == 0, run.stderr
    assert "world size 2 (from WORLD_SIZE)" in run.stdout
    found = losses(run.stdout)
    assert len(found) == 9  # steps 1, 5, 10, ..., 40 of train.max_steps = 40
    assert found[-1] < found[0] - 1.0, found


def test_the_tiny_trainer_stops_before_the_first_step_on_a_misfit() -> None:
    run = torchrun("-o", "distributed.dp_shard=3")
    assert run.returncode != 0
    assert losses(run.stdout) == []
    for rank in (0, 1):
        assert f"rank {rank}: 1 error(s) in config:\n" in run.stderr, run.stderr
    assert (
        len(
            re.findall(r"tiny_kempnerforge\.toml: .*error\[world-size-product\] .* but the world size is 2", run.stderr)
        )
        == 2
    ), run.stderr


if __name__ == "__main__":
    rank_main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
