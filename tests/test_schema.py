"""Schema loading and navigation: self-contained schemas only, defaults, paths."""

from __future__ import annotations

import json

import pytest

from trainspec.families import get_family
from trainspec.spec.paths import format_path
from trainspec.spec.schema import Schema, SchemaError


def test_remote_ref_is_refused_with_a_clear_message():
    with pytest.raises(SchemaError, match="never fetches schemas over the network"):
        Schema({"properties": {"a": {"$ref": "https://example.com/other.json"}}}, "fam.schema.json")


def test_dangling_local_ref_is_refused():
    with pytest.raises(SchemaError, match="dangling"):
        Schema({"properties": {"a": {"$ref": "#/$defs/Missing"}}})


def test_defaults_fill_sections_and_pick_the_union_branch():
    schema = get_family("kempnerforge").schema
    filled = schema.fill_defaults({"vlm": {"arch": "mot"}})
    assert filled["model"]["dim"] == 4096 and filled["train"]["seq_len"] == 2048
    assert filled["vlm"]["mot_modalities"] == ["image", "text"]
    assert "mot" in filled["vlm"]["module_patterns"] and "cross_attention" not in filled["vlm"]["module_patterns"]
    assert "vision_encoder" not in filled  # optional sections stay absent
    filled = schema.fill_defaults({"vlm": {}})
    assert filled["vlm"]["arch"] == "joint_decoder"


def test_fill_defaults_does_not_touch_its_input():
    schema = get_family("kempnerforge").schema
    data = {"model": {"dim": 64}}
    schema.fill_defaults(data)
    assert data == {"model": {"dim": 64}}


def test_path_index_knows_every_section_and_variant_key():
    paths = {format_path(p) for p in get_family("kempnerforge").schema.paths}
    assert {
        "model.dim",
        "data.datasets[0].weight",
        "vlm.cross_attention_every_n_layers",
        "vlm.mot_warm_start_path",
        "vlm.freeze_schedule[0].specs[0].module",
    } <= paths


@pytest.mark.parametrize("name", ["kempnerforge", "specforge", "axolotl"])
def test_builtin_schemas_are_valid_draft_2020_12(name):
    """The built-in families skip this check at run time (`trusted_schema`), so it runs here."""
    from jsonschema import Draft202012Validator

    family = get_family(name)
    assert family.trusted_schema
    Draft202012Validator.check_schema(family.schema.root)


def test_inlined_schema_validates_like_the_original_even_when_recursive(tmp_path):
    import trainspec
    from trainspec.spec.family import Family

    schema = tmp_path / "tree.schema.json"
    schema.write_text(
        json.dumps(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$ref": "#/$defs/Node",
                "$defs": {
                    "Node": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "value": {"type": "integer", "minimum": 0, "description": "A value."},
                            "child": {"$ref": "#/$defs/Node", "description": "The next node."},
                        },
                    }
                },
            }
        )
    )
    family = Family(name="tree", schema_file=schema, model="x:Y", formats=frozenset({"yaml"}))
    assert "$ref" not in family.schema.inlined["properties"]["value"]
    assert family.schema.inlined["properties"]["child"] == {
        "$ref": "#/$defs/Node",
        "description": "The next node.",
    }
    (tmp_path / "t.yaml").write_text("value: 1\nchild:\n  child:\n    child:\n      value: -1\n      oops: 2\n")
    found = {(d.rule, d.config_path, d.line) for d in trainspec.check(tmp_path / "t.yaml", family=family)}
    assert found == {("out-of-range", "child.child.child.value", 5), ("unknown-key", "child.child.child.oops", 6)}
