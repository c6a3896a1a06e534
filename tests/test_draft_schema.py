"""tools/draft_schema.py: a schema drafted from config classes reads back, field by field, as those classes."""

from __future__ import annotations

import enum
import importlib.util
import sys
from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field

from .conftest import ROOT


def _tool(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # draft_schema imports family_drift by name, as when run beside it
    spec.loader.exec_module(module)
    return module


drift = _tool("family_drift")
draft_schema = _tool("draft_schema")


class Dtype(enum.Enum):
    """Values that are no JSON (a dtype object, say): written by name."""

    int4 = object()
    int8 = object()


class Lora(BaseModel):
    model_config = ConfigDict(extra="forbid")
    r: int = Field(default=8, gt=0, description="Rank.")
    targets: list[str] | str | None = None


class Sft(BaseModel):
    path: str = Field(json_schema_extra={"description": "Where the data is."})
    kind: str | None = None


class Dpo(BaseModel):
    path: str
    beta: float = 0.1


class Config(BaseModel):
    """A trainer's config."""

    base_model: str
    bf16: Literal["auto"] | bool | None = "auto"
    optimizer: Literal["adamw", "lion"] | str = "adamw"
    template: Literal["chatml"] | Annotated[str, Field(pattern="^fallback_")] | None = None
    warmup: int | None = Field(default=None, ge=0)
    anything: Any | None = None
    dtype: Dtype = Dtype.int8
    lora: Lora | None = None
    datasets: Annotated[list[Sft | Dpo], Field(min_length=1)] | None = None
    old_name: int | None = Field(default=None, deprecated="Use `warmup`.", description="Steps.")


def test_the_draft_is_a_valid_schema_that_reads_back_as_the_classes():
    schema = draft_schema.draft(Config)
    Draft202012Validator.check_schema(schema)
    assert drift.compare(drift.schema_rows(schema), drift.class_rows(Config)) == []


def test_the_draft_keeps_what_each_member_of_a_union_allows():
    validator = Draft202012Validator(draft_schema.draft(Config))
    good = {"base_model": "m", "bf16": True, "optimizer": "sgd", "template": "chatml", "dtype": "int4"}
    assert list(validator.iter_errors(good)) == []
    assert list(validator.iter_errors({**good, "template": "fallback_chatml", "anything": [1]})) == []
    for bad in ({"bf16": "yes"}, {"template": "llama"}, {"warmup": -1}, {"dtype": "int2"}, {"lora": {"x": 1}}):
        assert list(validator.iter_errors({**good, **bad})), bad
    assert list(validator.iter_errors({"bf16": True})), "base_model is required"


def test_the_draft_carries_descriptions_requirements_and_closed_sections():
    schema = draft_schema.draft(Config)
    props = schema["properties"]
    assert schema["description"] == "A trainer's config." and schema["required"] == ["base_model"]
    assert "additionalProperties" not in schema, "pydantic's default ignores unknown keys"
    assert props["lora"]["additionalProperties"] is False
    assert props["lora"]["properties"]["r"] == {
        "description": "Rank.",
        "type": "integer",
        "exclusiveMinimum": 0,
        "default": 8,
    }
    item = props["datasets"]["items"]
    assert item["properties"]["path"]["description"] == "Where the data is."
    assert set(item["properties"]) == {"path", "kind", "beta"} and "required" not in item  # either class
    assert "type" not in props["anything"]
    assert props["old_name"]["deprecated"] is True and props["old_name"]["description"] == "Use `warmup`. Steps."
