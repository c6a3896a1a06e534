"""tools/family_drift.py: a trainer's config classes read and compared with a family version's schema."""

from __future__ import annotations

import dataclasses
import enum
import importlib.util
import json
import sys
from typing import Annotated, Literal

import pytest
from annotated_types import Gt
from pydantic import BaseModel, ConfigDict, Field

from .conftest import ROOT
from .specforge_loader import require

DRIFT_FILE = ROOT / "tests" / "data" / "drift" / "specforge@0.2.0.json"


def _tool():
    spec = importlib.util.spec_from_file_location("family_drift", ROOT / "tools" / "family_drift.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["family_drift"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


drift = _tool()


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Server(BaseModel):
    model_config = ConfigDict(extra="forbid")
    port: int = Field(gt=0, le=65535)
    devices: list[str] = Field(min_length=1)


class Run(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "run"
    mode: Literal["a", "b"] = "a"
    color: Color = Color.RED
    ratio: Annotated[float, Field(ge=0.0)] = 0.5
    loss: Literal["x", "y"] | None = None
    servers: list[Server] = Field(default_factory=list)
    primary: Server | None = None
    added: int = 1


@dataclasses.dataclass
class Section:
    size: Annotated[int, Gt(0)] = 1
    names: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Job:
    section: Section = dataclasses.field(default_factory=Section)
    tag: str | None = None


SERVER = {
    "type": "object",
    "additionalProperties": False,
    "required": ["port", "devices"],
    "properties": {
        "port": {"type": "integer", "exclusiveMinimum": 0, "maximum": 65535},
        "devices": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    },
}
RUN = {
    "type": "object",
    "additionalProperties": False,
    "$defs": {"Server": SERVER},
    "properties": {
        "name": {"type": "string", "default": "job"},
        "mode": {"type": "string", "enum": ["a", "b", "c"], "default": "a"},
        "color": {"enum": ["red", "blue"], "default": "red"},
        "ratio": {"type": "integer", "minimum": 0, "default": 0.5},
        "loss": {"anyOf": [{"enum": ["x", "y"]}, {"type": "null"}], "default": None},
        "servers": {"type": "array", "items": {"$ref": "#/$defs/Server"}, "default": []},
        "primary": {"anyOf": [{"$ref": "#/$defs/Server"}, {"type": "null"}], "default": None},
        "gone": {"type": "boolean", "default": False},
    },
}
JOB = {
    "type": "object",
    "properties": {
        "section": {
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "properties": {
                "size": {"type": "integer", "exclusiveMinimum": 0, "default": 1},
                "names": {"type": "array", "items": {"type": "string"}, "default": []},
            },
        },
        "tag": {"type": ["string", "null"], "default": None},
    },
}


def test_each_kind_of_difference_is_found_in_a_pydantic_model():
    found = {(d.path, d.aspect, d.kind) for d in drift.compare(drift.schema_rows(RUN), drift.class_rows(Run))}
    assert found == {
        ("added", "field", "added"),
        ("gone", "field", "removed"),
        ("name", "default", "re-defaulted"),
        ("ratio", "type", "retyped"),
        ("mode", "enum", "constraint changed"),
    }


def test_nesting_items_enums_optional_sections_and_constraints_read_alike():
    rows = drift.class_rows(Run)
    assert rows["servers[].port"] == {"type": ["integer"], "exclusiveMinimum": 0, "maximum": 65535, "required": True}
    assert rows["servers[].devices"]["minItems"] == 1
    assert rows["primary"] == {"type": ["null", "object"], "closed": True, "required": False, "default": None}
    assert rows["loss"]["enum"] == ["x", "y", None]
    assert drift.schema_rows(RUN)["loss"]["enum"] == ["x", "y", None]


def test_a_dataclass_matches_its_schema():
    assert drift.compare(drift.schema_rows(JOB), drift.class_rows(Job)) == []
    changed = json.loads(json.dumps(JOB))
    changed["properties"]["section"]["properties"]["size"]["exclusiveMinimum"] = 1
    [found] = drift.compare(drift.schema_rows(changed), drift.class_rows(Job))
    assert (found.path, found.aspect, found.schema, found.classes) == ("section.size", "exclusiveMinimum", "1", "0")


def test_specforge_0_2_0_differs_from_its_family_version_only_as_the_allow_list_says():
    require()
    report = drift.run(DRIFT_FILE)
    assert report.clean, drift.render_text(report)
    reasons = [a["reason"] for a in json.loads(DRIFT_FILE.read_text())["allowed"]]
    assert all(len(r) > 20 for r in reasons)


def test_an_allow_list_entry_that_matches_nothing_fails(tmp_path):
    require()
    spec = json.loads(DRIFT_FILE.read_text())
    spec["allowed"].append({"path": "run_id", "aspect": "default", "reason": "no longer true"})
    stale = tmp_path / "drift.json"
    stale.write_text(json.dumps(spec))
    report = drift.run(stale)
    assert not report.clean
    assert "allow-list entry matches nothing: run_id (default)" in drift.render_text(report)


@pytest.mark.parametrize("aspect", ["pattern", "maxLength"])
def test_an_unlisted_difference_fails(tmp_path, aspect):
    require()
    spec = json.loads(DRIFT_FILE.read_text())
    spec["allowed"] = [a for a in spec["allowed"] if a["aspect"] != aspect]
    narrowed = tmp_path / "drift.json"
    narrowed.write_text(json.dumps(spec))
    report = drift.run(narrowed)
    assert report.drift and {d.aspect for d in report.drift} == {aspect}


def test_the_reference_page_shows_what_the_tool_finds_now():
    require()
    table = DRIFT_FILE.with_suffix(".md")
    assert table.read_text() == drift.render_markdown(drift.run(DRIFT_FILE)), (
        f"rerun: python tools/family_drift.py {DRIFT_FILE.relative_to(ROOT)} --markdown > {table.relative_to(ROOT)}"
    )
    page = (ROOT / "docs" / "reference" / "specforge@0.2.0.md").read_text()
    assert "## Compared with the released trainer" in page and table.read_text().strip() in page
