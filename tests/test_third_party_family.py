"""A family added from outside trainspec: its own schema, generated model and rules, via an entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from .conftest import ROOT

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:example:tinytrain",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "model": {
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "description": "The network.",
            "properties": {
                "width": {"type": "integer", "minimum": 1, "default": 64, "description": "Hidden width."},
                "heads": {"type": "integer", "minimum": 1, "default": 4, "description": "Attention heads."},
            },
        },
        "steps": {"type": "integer", "minimum": 1, "default": 10, "description": "Training steps."},
    },
}

FAMILY = '''
from collections.abc import Iterator
from pathlib import Path

from trainspec import Family, rule


@rule("heads-divide-width", "error", "model.width", "model.heads")
def heads_divide_width(width: int, heads: int) -> Iterator[str]:
    """Each head gets width / heads channels."""
    if width % heads:
        yield f"model.width = {width} is not divisible by model.heads = {heads}"


FAMILY = Family(
    name="tinytrain",
    schema_file=Path(__file__).with_name("tinytrain.schema.json"),
    model="tinytrain.models:TinyConfig",
    rules=[heads_divide_width],
    formats=frozenset({"yaml"}),
)
'''


@pytest.mark.external
def test_family_from_an_entry_point_checks_and_loads(tmp_path):
    site = tmp_path / "site"
    pkg = site / "tinytrain"
    pkg.mkdir(parents=True)
    (pkg / "tinytrain.schema.json").write_text(json.dumps(SCHEMA))
    (pkg / "__init__.py").write_text(textwrap.dedent(FAMILY))
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "generate_models.py"),
            "--schema",
            str(pkg / "tinytrain.schema.json"),
            "--class-name",
            "TinyConfig",
            "--output",
            str(pkg / "models.py"),
        ],
        check=True,
        capture_output=True,
    )
    dist = site / "tinytrain-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tinytrain\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[trainspec.families]\ntinytrain = tinytrain:FAMILY\n")
    (tmp_path / "run.yaml").write_text("model:\n  width: 100\n  heads: 3\nsteps: 5\n")
    (tmp_path / "ok.yaml").write_text("model:\n  width: 96\n  heads: 3\n")
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "TRAINSPEC_CACHE_DIR": os.environ["TRAINSPEC_CACHE_DIR"]}

    bad = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", "run.yaml"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert bad.returncode == 1, bad.stderr
    assert bad.stdout.startswith("run.yaml:2:3: error[heads-divide-width] model.width = 100 is not divisible")

    load = subprocess.run(
        [sys.executable, "-c", "import trainspec; c = trainspec.load('ok.yaml'); print(type(c).__name__, c.steps)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert load.returncode == 0, load.stderr
    assert load.stdout.split() == ["TinyConfig", "10"]


def test_a_family_that_fails_to_import_does_not_stop_the_others(tmp_path):
    site = tmp_path / "site"
    (site / "brokenfam").mkdir(parents=True)
    (site / "brokenfam" / "__init__.py").write_text("raise RuntimeError('missing dependency')\n")
    dist = site / "brokenfam-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenfam\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[trainspec.families]\nbrokenfam = brokenfam:FAMILY\n")
    (tmp_path / "job.toml").write_text("[model]\ndim = 64\nn_heads = 4\nn_kv_heads = 4\n")
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "TRAINSPEC_CACHE_DIR": os.environ["TRAINSPEC_CACHE_DIR"]}
    ok = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", "job.toml"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    named = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", "--family", "brokenfam", "job.toml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert named.returncode == 2 and "Traceback" not in named.stderr
    assert "installed but unusable" in named.stderr and "missing dependency" in named.stderr


def test_an_invalid_family_schema_is_a_usage_error(tmp_path):
    import trainspec
    from trainspec.cli import main
    from trainspec.spec.family import Family

    bad = tmp_path / "bad.schema.json"
    bad.write_text(json.dumps({"type": "object", "properties": {"steps": {"type": "integer", "minimum": "one"}}}))
    family = Family(name="badschema", schema_file=bad, model="x:Y", formats=frozenset({"yaml"}))
    (tmp_path / "run.yaml").write_text("steps: 5\n")
    (diagnostic,) = trainspec.check(tmp_path / "run.yaml", family=family)
    assert diagnostic.rule == "invalid-family-schema"
    assert "badschema" in diagnostic.message and "'one' is not of type 'number'" in diagnostic.message
    trainspec.families.register(family)
    try:
        assert main(["check", "--family", "badschema", str(tmp_path / "run.yaml")]) == 2
    finally:
        trainspec.families.all_families().pop("badschema")
