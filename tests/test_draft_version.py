"""tools/draft_version.py: a release drafted as a delta on its base, from the two releases' own classes."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import Any

import jsonpatch
import pytest
from pydantic import BaseModel, field_validator, model_validator

from .conftest import ROOT


def _tool() -> Any:
    sys.path.insert(0, str(ROOT / "tools"))  # it imports draft_schema and family_drift by name
    spec = importlib.util.spec_from_file_location("draft_version", ROOT / "tools" / "draft_version.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["draft_version"] = module
    spec.loader.exec_module(module)
    return module


tool = _tool()

OLD = {
    "type": "object",
    "properties": {
        "lr": {"type": "number", "minimum": 0, "description": "upstream words"},
        "opt": {"type": "string", "enum": ["adamw", "sgd"]},
        "gone": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["a", "b"]},
    },
}
NEW = {
    "type": "object",
    "properties": {
        "lr": {"type": "number", "minimum": 1e-9, "description": "new upstream words"},
        "opt": {"type": "string", "enum": ["adamw", "sgd", "polora"]},
        "mode": {"type": "string", "enum": ["a", "b", "c"]},
        "fresh": {"type": "boolean", "default": False, "description": "new"},
    },
}
CURATED = {
    "$id": "urn:x",
    "type": "object",
    "properties": {
        "lr": {"type": "number", "minimum": 0, "description": "curated words"},
        "opt": {"type": "string", "enum": ["adamw", "sgd"]},
        "gone": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["b", "a"]},  # curated in another order: left to a person
    },
}


def test_the_draft_difference_becomes_a_patch_on_the_curated_schema_that_keeps_its_words():
    ops, review = tool.schema_ops(OLD, NEW, CURATED)
    patched = jsonpatch.apply_patch(CURATED, ops)
    assert patched["properties"]["lr"] == {"type": "number", "minimum": 1e-9, "description": "curated words"}
    assert patched["properties"]["opt"]["enum"] == ["adamw", "sgd", "polora"]
    assert patched["properties"]["fresh"] == {"type": "boolean", "default": False, "description": "new"}
    assert "gone" not in patched["properties"]
    assert patched["properties"]["mode"] == CURATED["properties"]["mode"]
    assert review == ['/properties/mode: enum ["a", "b"] -> ["a", "b", "c"] (curated: ["b", "a"])']


class Base(BaseModel):
    x: int = 0

    @field_validator("x")
    @classmethod
    def positive(cls, v: int) -> int:
        return abs(v)


class Old(Base):
    @model_validator(mode="before")
    @classmethod
    def check(cls, data: Any) -> Any:
        return data

    @model_validator(mode="after")
    def dropped(self) -> Old:
        return self


class New(Base):
    @model_validator(mode="before")
    @classmethod
    def check(cls, data: Any) -> Any:
        if data.get("x") == 1:
            raise ValueError("no")
        return data

    @model_validator(mode="after")
    def added(self) -> New:
        return self


def test_the_validator_inventory_finds_what_is_new_changed_and_removed():
    old = tool.validators(tool.reachable(Old), "m", __name__)
    new = tool.validators(tool.reachable(New), "m", __name__)
    # the classes differ in name here; upstream they keep it, so compare by the method's own name
    rename = {"Old.": "", "New.": "", "Base.": "Base."}

    def key(name: str) -> str:
        tail = name.split(".", 1)[1]
        for part, to in rename.items():
            tail = tail.replace(part, to)
        return tail

    diff = tool.inventory_diff({key(k): v for k, v in old.items()}, {key(k): v for k, v in new.items()})
    assert diff == {"new": ["added"], "changed": ["check"], "removed": ["dropped"]}
    assert {v["mode"] for v in new.values()} == {"model before", "model after", "field after (x)"}


@pytest.mark.external  # two subprocesses import both releases' config classes
def test_the_drafted_axolotl_0_19_0_delta_is_what_the_installed_releases_give():
    """The patch and the report in the repository are the tool's output from axolotl 0.18.0 (this
    environment) and 0.19.0 (.oracles/axolotl-0.19.0, which tools/setup-dev.sh installs)."""
    if not (ROOT / ".oracles" / "axolotl-0.19.0" / "axolotl").is_dir():
        pytest.fail("axolotl 0.19.0 is not in .oracles/axolotl-0.19.0: run tools/setup-dev.sh")
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "draft_version.py"), "axolotl", "0.19.0", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    patch = json.loads((ROOT / "schema" / "axolotl" / "0.19.0.patch.json").read_text(encoding="utf-8"))
    assert patch[0] == {"op": "replace", "path": "/$id", "value": "urn:trainspec:schema:axolotl@0.19.0"}
    report = (ROOT / "docs" / "releases" / "axolotl@0.19.0.md").read_text(encoding="utf-8")
    assert "removed: `axolotl.utils.schemas.validation.ModelCompatibilityValidationMixin." in report
