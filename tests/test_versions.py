"""Family versions: selection by name, messages that know the other versions, schema diff, the build."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from trainspec import Family, rule
from trainspec.cli import main
from trainspec.engine.pipeline import check_path
from trainspec.families import UnknownFamily, every_version, get_family
from trainspec.rules.schema_diff import diff

from .conftest import ROOT

V1 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:tiny",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "model": {
            "type": "object",
            "default": {},
            "additionalProperties": False,
            "properties": {
                "kind": {"type": "string", "enum": ["dense"], "default": "dense", "description": "Kind."},
                "width": {"type": "integer", "minimum": 1, "default": 8, "description": "Width."},
            },
        }
    },
}
PATCH = [
    {"op": "add", "path": "/properties/model/properties/kind/enum/-", "value": "moe"},
    {"op": "add", "path": "/properties/video", "value": {"type": "object", "description": "Video."}},
    {"op": "replace", "path": "/properties/model/properties/width/minimum", "value": 2},
]


@rule("width-even", "error", "model.width")
def width_even(width: int):
    """Version 2 splits the width in halves."""
    if width % 2:
        yield f"model.width = {width} is odd"


@pytest.fixture
def tiny(tmp_path, monkeypatch) -> tuple[Family, Family]:
    import jsonpatch

    (tmp_path / "v1.json").write_text(json.dumps(V1))
    (tmp_path / "v2.json").write_text(json.dumps(jsonpatch.apply_patch(V1, PATCH)))
    common = {"name": "tiny", "model": "x:Y", "formats": frozenset({"yaml"})}
    v1 = Family(schema_file=tmp_path / "v1.json", version="v1", released="2026-01-01", **common)
    v2 = Family(schema_file=tmp_path / "v2.json", version="v2", released="2026-02-01", rules=[width_even], **common)
    for family in (v1, v2):
        monkeypatch.setitem(every_version(), family.id, family)
    return v1, v2


def test_the_plain_name_and_latest_select_the_newest_version(tiny):
    v1, v2 = tiny
    assert get_family("tiny") is v2 and get_family("tiny@latest") is v2 and get_family("tiny@v1") is v1
    with pytest.raises(UnknownFamily, match="family 'tiny' has no version 'v9'; known versions: tiny@v2, tiny@v1"):
        get_family("tiny@v9")


def test_a_key_of_a_newer_version_says_so_instead_of_guessing(tiny, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("video: {}\nmodel:\n  kind: moe\n")
    found = {d.rule: d.message for d in check_path(path, family="tiny@v1").diagnostics}
    assert found["unknown-key"] == (
        "`video` is not in tiny@v1; it exists in tiny@v2 (2026-02-01), a newer version: select it with --family tiny@v2"
    )
    assert found["not-allowed-value"].endswith(
        "('moe' exists in tiny@v2 (2026-02-01), a newer version: select it with --family tiny@v2)"
    )
    assert [d.rule for d in check_path(path, family="tiny").diagnostics] == []


def test_a_removed_key_names_the_older_version(tiny, tmp_path, monkeypatch):
    v1, _ = tiny
    path = tmp_path / "c.yaml"
    v0 = V1 | {"properties": {"model": V1["properties"]["model"], "legacy": {"type": "integer"}}}
    (tmp_path / "v0.json").write_text(json.dumps(v0))
    ancient = Family(**{**v1.__dict__, "schema_file": tmp_path / "v0.json", "released": "2025-01-01", "version": "v0"})
    monkeypatch.setitem(every_version(), ancient.id, ancient)
    path.write_text("legacy: 1\n")
    (d,) = [d for d in check_path(path, family="tiny").diagnostics if d.is_error]
    assert (
        d.message == "`legacy` is not in tiny@v2; it exists in tiny@v0 (2025-01-01), an older version (removed since)"
    )


def test_schema_diff_lists_fields_bounds_values_and_rules(tiny, capsys):
    v1, v2 = tiny
    changes = {(c.kind, c.subject, c.what) for c in diff(v1, v2)}
    assert ("added", "field", "video") in changes
    assert ("changed", "field bounds", "model.width") in changes
    assert ("changed", "field bounds", "model.kind") in changes
    assert ("added", "rule", "width-even") in changes
    assert main(["schema", "diff", "tiny@v1", "tiny@v2", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["from"] == "tiny@v1" and out["to"] == "tiny@v2" and len(out["changes"]) == len(changes)
    assert main(["schema", "diff", "tiny@v1", "tiny@v2"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"tiny@v1 -> tiny@v2: {len(changes)} changes") and "  + video: object" in text


def test_schema_diff_refuses_two_families(capsys):
    """What changes across families is no upgrade anyone makes: a list of 500 changes would hide the mistake."""
    assert main(["schema", "diff", "kempnerforge", "specforge"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "kempnerforge and specforge are different families" in err
    assert "versions of kempnerforge: kempnerforge@5666d0d, kempnerforge@089fbbd" in err


def _tool():
    spec = importlib.util.spec_from_file_location("build_schema_versions", ROOT / "tools" / "build_schema_versions.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_versions_are_built_from_the_base_and_the_patches(tmp_path):
    family = tmp_path / "tiny"
    family.mkdir()
    (family / "base.schema.json").write_text(json.dumps(V1))
    (family / "v2.patch.json").write_text(json.dumps(PATCH))
    (family / "versions.json").write_text(
        json.dumps(
            {
                "versions": [
                    {"version": "v1", "released": "2026-01-01", "schema": "base.schema.json"},
                    {
                        "version": "v2",
                        "released": "2026-02-01",
                        "base": "v1",
                        "patch": "v2.patch.json",
                        "schema": "v2.schema.json",
                    },
                ]
            }
        )
    )
    (built,) = _tool().build(tmp_path).items()
    assert built[0] == family / "v2.schema.json"
    schema = json.loads(built[1])
    assert (
        schema["properties"]["model"]["properties"]["kind"]["enum"] == ["dense", "moe"]
        and "video" in schema["properties"]
    )


def test_the_committed_versions_are_built_from_their_patches():
    stale = [p for p, text in _tool().build().items() if Path(p).read_text(encoding="utf-8") != text]
    assert stale == [], "run python tools/build_schema_versions.py"


def test_a_project_overlay_adds_an_optimizer_name_and_a_key_for_checks_and_editors(tmp_path, capsys):
    overlay = tmp_path / "acme.json"
    overlay.write_text(
        json.dumps(
            {
                "family": "kempnerforge@089fbbd",
                "name": "acme",
                "patch": [
                    {
                        "op": "add",
                        "path": "/properties/acme",
                        "value": {
                            "type": "object",
                            "description": "Acme's own settings.",
                            "properties": {"shards": {"type": "integer", "minimum": 1}},
                            "additionalProperties": False,
                        },
                    }
                ],
                "registries": {"optimizer.name": ["acme_adamw"]},
            }
        )
    )
    job = tmp_path / "job.toml"
    job.write_text('[optimizer]\nname = "acme_adamw"\n\n[acme]\nshards = 4\n')
    assert main(["check", str(job), "--world-size", "1"]) == 2  # without the overlay: half its keys are unknown
    assert "(unknown top-level keys: `acme`)" in capsys.readouterr().out
    assert main(["check", str(job), "--world-size", "1", "--family", "kempnerforge"]) == 1
    out = capsys.readouterr().out
    assert "unknown-key" in out and "registry-name-known" in out
    assert main(["check", str(job), "--world-size", "1", "--overlay", str(overlay)]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad.toml"
    bad.write_text("[acme]\nshards = 0\n")
    assert main(["check", str(bad), "--world-size", "1", "--overlay", str(overlay), "--jobs", "1"]) == 1
    assert "error[out-of-range]" in capsys.readouterr().out
    assert main(["schema", "--overlay", str(overlay)]) == 0
    editor = json.loads(capsys.readouterr().out)
    assert editor["properties"]["acme"]["properties"]["shards"]["minimum"] == 1
    assert get_family("kempnerforge@089fbbd+acme").registries["optimizer.name"] == ("acme_adamw",)


def test_a_broken_overlay_is_a_usage_error(tmp_path, capsys):
    overlay = tmp_path / "bad.json"
    overlay.write_text(
        json.dumps({"family": "kempnerforge", "name": "x", "patch": [{"op": "remove", "path": "/nope"}]})
    )
    job = tmp_path / "job.toml"
    job.write_text("[model]\ndim = 64\n")
    assert main(["check", str(job), "--overlay", str(overlay)]) == 2
    assert "the patch does not apply to kempnerforge@" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("directive", "version"),
    [
        ("#:schema ./.trainspec/schemas/kempnerforge@089fbbd.schema.json", "kempnerforge@089fbbd"),
        ("#:schema ./.trainspec/schemas/kempnerforge.schema.json", "kempnerforge@5666d0d"),
        ("#:schema urn:trainspec:schema:kempnerforge@089fbbd", "kempnerforge@089fbbd"),
    ],
)
def test_a_schema_directive_naming_a_version_selects_it(tmp_path, directive, version):
    path = tmp_path / "job.toml"
    path.write_text(f"{directive}\n[model]\ndim = 64\n")
    assert check_path(path).family is get_family(version)


@pytest.mark.parametrize("name", ["vlm_7b_moma.toml", "vlm_video_webvid.toml"])
def test_newer_corpus_under_the_older_version_names_the_version_that_has_it(name):
    path = ROOT / "tests" / "corpus" / "kempnerforge-5666d0d" / "train" / name
    found = check_path(path, family="kempnerforge@089fbbd", world_size=4).diagnostics
    # vlm-needs-hf-data is 089fbbd's own rule (5666d0d exempts video runs): a rule, not a key or value
    errors = [d for d in found if d.is_error and d.rule != "vlm-needs-hf-data"]
    assert errors and all("exists in kempnerforge@5666d0d (2026-06-30), a newer version" in d.message for d in errors)


VIDEO = "[video]\nenabled = true\n"
NEWER = "kempnerforge@5666d0d"


@pytest.mark.parametrize(
    ("head", "argv", "advice"),
    [
        ("# trainspec: family=kempnerforge@089fbbd\n", [], f"change the file's directive to `family={NEWER}`"),
        ("", ["--family", "kempnerforge@089fbbd"], f"select it with --family {NEWER}"),
        (
            "#:schema ./.trainspec/schemas/kempnerforge@089fbbd.schema.json\n",
            [],
            f"select it with --family {NEWER} or a `# trainspec: family={NEWER}` line in the file",
        ),
        ("", ["project"], f'set `family = "{NEWER}"` for this file in the project configuration'),
    ],
)
def test_advice_to_use_another_version_changes_what_selected_this_one(tmp_path, capsys, head, argv, advice):
    """A directive outranks --family: advising the flag to a file whose directive pinned the version changes nothing."""
    path = tmp_path / "job.toml"
    path.write_text(head + VIDEO)
    if argv == ["project"]:
        (tmp_path / ".trainspec.toml").write_text('family = "kempnerforge@089fbbd"\n')
        argv = []
    assert main(["check", str(path), *argv]) == 1
    out = capsys.readouterr().out
    assert f"exists in kempnerforge@5666d0d (2026-06-30), a newer version: {advice}\n" in out


@pytest.mark.parametrize("version", ["kempnerforge@089fbbd", "kempnerforge@5666d0d", "specforge@08eaeac"])
def test_each_versions_schema_id_names_and_selects_it(tmp_path, version):
    """docs/versions.md: a file naming a version's `$id` selects that version (the oldest's included)."""
    family = get_family(version)
    assert family.schema.id == f"urn:trainspec:schema:{version}"
    directive = "#:schema {}" if "toml" in family.formats else "# yaml-language-server: $schema={}"
    path = tmp_path / ("job.toml" if "toml" in family.formats else "run.yaml")
    path.write_text(directive.format(family.schema.id) + "\n")
    assert check_path(path).family is family


def test_a_schema_key_is_refused_as_the_loader_refuses_it_and_the_error_names_what_works(tmp_path):
    """SpecForge's root is closed (reference §7): a `$schema` key fails the load, whatever editors make of it."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"$schema": "urn:trainspec:schema:specforge@08eaeac", "model": {}, "data": {}}))
    result = check_path(path)
    assert result.family is get_family("specforge@08eaeac")
    [found] = [d for d in result.diagnostics if d.rule == "unknown-key"]
    assert found.is_error and "name the schema in a comment instead" in found.message
