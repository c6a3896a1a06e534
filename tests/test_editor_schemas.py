"""The schemas as editors get them: documented, current, and checking exactly what the canonical ones check."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from trainspec.api import check_config
from trainspec.editor.schema import NotEditorSafe, editor_schema
from trainspec.editor.workspace import default_globs
from trainspec.families import get_family
from trainspec.read.files import read

ROOT = Path(__file__).resolve().parent.parent
CANONICAL = {
    "kempnerforge": ROOT / "schema" / "kempnerforge" / "job.schema.json",
    "specforge": ROOT / "schema" / "specforge" / "run.schema.json",
}
EDITOR = {name: ROOT / "editors" / "schemas" / f"{name}.schema.json" for name in CANONICAL}
CATALOGUED = (*CANONICAL, "axolotl")
"""Every family in the catalog; Axolotl's schema is open (its loader ignores unknown keys), so the tests of
closed sections above do not apply to it."""
CORPUS = {
    "kempnerforge": sorted((ROOT / "tests" / "corpus" / "kempnerforge").rglob("*.toml")),
    "specforge": sorted((ROOT / "tests" / "corpus" / "specforge").glob("*.yaml")),
}


def load(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def properties(node: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Every entry of every `properties` object in a schema, wherever it sits."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    yield f"{where}/properties/{name}", sub
            yield from properties(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from properties(value, f"{where}/{i}")


@pytest.mark.parametrize("path", [*CANONICAL.values(), *EDITOR.values()], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_property_has_a_description(path: Path) -> None:
    found = list(properties(load(path)))
    assert len(found) > 100
    missing = [where for where, sub in found if not (isinstance(sub, dict) and sub.get("description"))]
    assert missing == []


def build_tool() -> Any:
    spec = importlib.util.spec_from_file_location("build_editor_schemas", ROOT / "tools" / "build_editor_schemas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_editor_files_are_built_from_the_canonical_schemas() -> None:
    built = build_tool().build("./")
    on_disk = {name: (ROOT / "editors" / name).read_text(encoding="utf-8") for name in built}
    assert on_disk == built, "stale: run python tools/build_editor_schemas.py"


def test_catalog_lists_every_family_with_its_globs() -> None:
    catalog = load(ROOT / "editors" / "catalog.json")
    assert catalog["$schema"] == "https://json.schemastore.org/schema-catalog.json"
    assert catalog["version"] == 1
    by_url = {entry["url"]: entry for entry in catalog["schemas"]}
    assert set(by_url) == {f"./schemas/{name}.schema.json" for name in CATALOGUED}
    for url, entry in by_url.items():
        family = get_family(url.split("/")[-1].split(".")[0])
        assert (ROOT / "editors" / url).is_file()
        assert entry["fileMatch"] == default_globs(family)
        assert entry["name"] and entry["description"]


def corpus_data(family: str) -> list[Any]:
    return [read(str(path)).data for path in CORPUS[family]]


def mistakes(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Copies of a valid config, each with one mistake in its first section."""
    section = next(k for k, v in data.items() if isinstance(v, dict) and v)
    key = next(iter(data[section]))
    for bad in ("not a section", {**data[section], "bogus_key": 1}, {**data[section], key: {"wrong": "type"}}):
        broken = copy.deepcopy(data)
        broken[section] = bad
        yield broken
    yield {**copy.deepcopy(data), "bogus_section": {}}


@pytest.mark.parametrize("family", sorted(CANONICAL))
def test_editor_schema_checks_exactly_what_the_canonical_one_checks(family: str) -> None:
    canonical = Draft202012Validator(load(CANONICAL[family]))
    editor = Draft202012Validator(load(EDITOR[family]))
    for data in corpus_data(family):
        assert canonical.is_valid(data) and editor.is_valid(data)
        for broken in mistakes(data):
            assert not canonical.is_valid(broken) and not editor.is_valid(broken)


def test_a_ref_with_siblings_moves_into_allof() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"A": {"type": "integer"}},
        "properties": {"a": {"$ref": "#/$defs/A", "maximum": 3, "description": "d"}, "b": {"$ref": "#/$defs/A"}},
    }
    out = editor_schema(schema, {"toml"})
    assert out["properties"]["a"] == {"allOf": [{"$ref": "#/$defs/A"}], "maximum": 3, "description": "d"}
    assert out["properties"]["b"] == {"$ref": "#/$defs/A"}
    assert out["$schema"] == schema["$schema"]


@pytest.mark.parametrize(
    "schema, formats, message",
    [
        ({"dependentRequired": {"a": ["b"]}}, {"yaml"}, "dependentRequired"),
        ({"properties": {"a": {"prefixItems": [{}]}}}, {"yaml"}, "prefixItems"),
        (
            {"properties": {"a": {"$ref": "#/$defs/A", "x-taplo": {"hidden": True}}}, "$defs": {"A": {}}},
            {"toml"},
            "x-taplo",
        ),
        ({"properties": {"a": {"pattern": "^\\S+$"}}}, {"toml"}, "\\S"),
    ],
)
def test_what_a_server_would_skip_is_refused(schema: dict[str, Any], formats: set[str], message: str) -> None:
    with pytest.raises(NotEditorSafe, match=re.escape(message)):
        editor_schema(schema, formats)


def test_space_classes_inside_brackets_are_fine_for_taplo() -> None:
    schema = {"properties": {"a": {"pattern": "^[^\\s,]([^,]*[^\\s,])?$"}}}
    assert editor_schema(schema, {"toml"}) == schema


def annotated_nodes(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from annotated_nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from annotated_nodes(value)


@pytest.mark.parametrize("family", sorted(CANONICAL))
def test_every_enum_documents_each_value(family: str) -> None:
    nodes = [n for n in annotated_nodes(load(CANONICAL[family])) if "enum" in n and "description" in n]
    assert nodes
    for node in nodes:
        assert len(node["markdownEnumDescriptions"]) == len(node["enum"]), node["description"]
        if "x-taplo" in node:
            assert len(node["x-taplo"]["docs"]["enumValues"]) == len(node["enum"]), node["description"]


def snippet_value(body: Any) -> Any:
    """A snippet body as the editor inserts it with every placeholder left at its default."""
    if isinstance(body, dict):
        return {k: snippet_value(v) for k, v in body.items()}
    if isinstance(body, list):
        return [snippet_value(v) for v in body]
    if isinstance(body, str):
        return re.sub(r"\$\{\d+:([^}]*)\}", r"\1", body)
    return body


def test_kempnerforge_vlm_snippet_makes_a_valid_vlm_run() -> None:
    schema = load(CANONICAL["kempnerforge"])
    (snippet,) = schema["defaultSnippets"]
    config = {**snippet_value(snippet["body"]), "data": {"tokenizer_path": "gpt2", "hf_dataset_name": "wikitext"}}
    assert set(config) >= {"vlm", "vision_encoder"}
    assert [d for d in check_config(config, "kempnerforge", world_size=4) if d.is_error] == []


def test_specforge_disaggregated_snippet_makes_a_valid_deployment() -> None:
    schema = load(CANONICAL["specforge"])
    (snippet,) = schema["$defs"]["DeploymentConfig"]["defaultSnippets"]
    config = {
        "model": {"target_model_path": "Qwen/Qwen3-8B"},
        "data": {"train_data_path": "train.jsonl"},
        "deployment": snippet_value(snippet["body"]),
    }
    assert config["deployment"]["mode"] == "disaggregated"
    assert [d for d in check_config(config, "specforge") if d.is_error] == []


def test_markdown_descriptions_say_the_same_as_the_descriptions() -> None:
    """markdownDescription adds formatting only (the sections get a bold name in front)."""
    for path in CANONICAL.values():
        for node in annotated_nodes(load(path)):
            if "markdownDescription" in node:
                text = re.sub(r"^\*\*`[^`]+`\*\* — ", "", node["markdownDescription"])
                assert re.sub(r"[`*]", "", text) == re.sub(r"[`*]", "", node["description"]), node["description"]


def test_corpus_yaml_is_what_the_json_case_converts() -> None:
    """The JSON editor tests feed yaml-language-server the corpus converted to JSON: same data."""
    path = CORPUS["specforge"][0]
    assert json.loads(json.dumps(yaml.safe_load(path.read_text()))) == read(str(path)).data
