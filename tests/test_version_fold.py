"""Versions as declared deltas: the fold's id checks, versions.json as the one source of release metadata,
and every shipped version exactly as it was when versions were spliced by position.

`tests/data/versions/` holds what the versions were before the fold (rule, example and
schema-doc ids in order, and the family's ids, severities and sources as `trainspec rules`
listed them) and the `schema diff` outputs; a change to a version's rules is a change to these
files, made on purpose.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from trainspec import Family, families, rule
from trainspec.cli import main
from trainspec.families import every_version, get_family
from trainspec.spec.examples import Example
from trainspec.spec.versions import (
    Changes,
    Delta,
    VersionError,
    by_id,
    fold,
    fold_version,
    fold_versions,
    read_releases,
)

from .conftest import ROOT

DATA = ROOT / "tests" / "data" / "versions"
BASE = {"a": 1, "b": 2, "c": 3}
SHIPPED = ("kempnerforge", "specforge")


def test_the_fold_keeps_base_order_places_inserts_before_their_anchor_and_adds_last():
    delta = Delta(add={"z": 26}, insert={"b": {"x": 24, "y": 25}}, replace={"b": 20}, remove=("a",))
    folded = fold(BASE, delta, "v2")
    assert list(folded.items()) == [("x", 24), ("y", 25), ("b", 20), ("c", 3), ("z", 26)]
    assert fold(BASE, Delta(), "v2") == BASE and BASE == {"a": 1, "b": 2, "c": 3}


@pytest.mark.parametrize(
    ("delta", "problem"),
    [
        (Delta(replace={"q": 0}), "replaces 'q', which the base lacks"),
        (Delta(remove=("q",)), "removes 'q', which the base lacks"),
        (Delta(add={"a": 0}), "adds 'a', which the base has (replace it instead)"),
        (Delta(insert={"c": {"b": 0}}), "adds 'b', which the base has (replace it instead)"),
        (Delta(insert={"q": {"x": 0}}), "inserts before 'q', which the base lacks"),
        (Delta(insert={"a": {"x": 0}}, remove=("a",)), "inserts before 'a', which it removes"),
        (Delta(insert={"a": {"x": 0}}, add={"x": 1}), "adds 'x' twice"),
        (Delta(replace={"a": 0}, remove=("a",)), "replaces and removes 'a'"),
    ],
)
def test_an_id_that_does_not_fit_the_base_is_refused_with_its_name(delta, problem):
    with pytest.raises(VersionError) as raised:
        fold(BASE, delta, "tiny@v2 on tiny@v1: rules")
    assert str(raised.value) == f"tiny@v2 on tiny@v1: rules: {problem}"


def test_every_problem_of_a_delta_is_named_at_once():
    with pytest.raises(VersionError) as raised:
        fold(BASE, Delta(replace={"q": 0}, remove=("r",), add={"a": 0}), "v2")
    assert str(raised.value) == (
        "v2: replaces 'q', which the base lacks; removes 'r', which the base lacks; "
        "adds 'a', which the base has (replace it instead)"
    )


@rule("width-even", "error", "model.width")
def width_even(width: int):
    """Widths split in halves."""
    if width % 2:
        yield "odd"


@rule("width-small", "warning", "model.width")
def width_small(width: int):
    """Small widths train slowly."""
    if width < 4:
        yield "small"


def _tiny(tmp_path, entries: list[dict[str, str]]) -> Family:
    (tmp_path / "versions.json").write_text(json.dumps({"versions": entries}))
    return Family(name="tiny", schema_file=tmp_path / "v1.json", model="x:Y", version="v1", rules=(width_even,))


def test_a_version_is_its_base_with_its_changes_and_its_release_metadata(tmp_path):
    v1 = _tiny(tmp_path, [])
    v2 = fold_version(
        v1,
        Changes(rules=Delta(insert={"width-even": by_id(width_small)}), hooks={"description": "v2"}),
        {"version": "v2", "commit": "", "released": "2026-02-01", "follows": "Tiny v2", "schema_file": tmp_path},
    )
    assert [r.id for r in v2.rules] == ["width-small", "width-even"] and v2.description == "v2"
    assert (v2.id, v2.released, v2.follows, v2.schema_file) == ("tiny@v2", "2026-02-01", "Tiny v2", tmp_path)
    assert [r.id for r in v1.rules] == ["width-even"]


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        (Changes(hooks={"rules": ()}), "hooks may not set ['rules'] (versions.json and the deltas do)"),
        (Changes(hooks={"released": "2027-01-01"}), "hooks may not set ['released']"),
        (Changes(hooks={"no_such_field": 1}), "hooks name no Family field: ['no_such_field']"),
        (Changes(rules=Delta(add={"other-id": width_small})), "rules: 'other-id' names the rule 'width-small'"),
        (Changes(rules=Delta(remove=("width-small",))), "rules: removes 'width-small', which the base lacks"),
    ],
)
def test_changes_that_do_not_fit_are_refused(tmp_path, changes, problem):
    fields = {"version": "v2", "commit": "", "released": "", "follows": "", "schema_file": tmp_path}
    with pytest.raises(VersionError) as raised:
        fold_version(_tiny(tmp_path, []), changes, fields)
    assert str(raised.value).startswith("tiny@v2 on tiny@v1: ") and problem in str(raised.value)


@pytest.mark.parametrize("given", ["delta", "function"])
def test_an_example_id_the_base_lacks_is_refused_when_the_examples_are_first_read(tmp_path, given):
    """A check never reads examples, so a version folds them when they are first read, and refuses there what
    it would have refused at import; `test_every_registered_version_s_examples_fold` reads every one."""
    v1 = replace(_tiny(tmp_path, []), examples={"width-even": Example("[model]\nwidth = 3\n", "")})
    delta = Delta(replace={"width-small": Example(None, "")})
    read: list[str] = []
    changes = Changes(examples=delta if given == "delta" else lambda: read.append("read") or delta)
    fields = {"version": "v2", "commit": "", "released": "", "follows": "", "schema_file": tmp_path}
    v2 = fold_version(v1, changes, fields)
    assert read == []
    with pytest.raises(VersionError) as raised:
        list(v2.examples)
    assert str(raised.value) == "tiny@v2 on tiny@v1: examples: replaces 'width-small', which the base lacks"
    with pytest.raises(VersionError):
        v2.examples.get("width-even")  # and again at every read after it


def test_every_registered_version_s_examples_fold():
    for family in every_version().values():
        assert all(isinstance(example, Example) for example in family.examples.values()), family.id


def test_versions_json_builds_each_version_on_the_base_it_names(tmp_path):
    v1 = _tiny(
        tmp_path,
        [
            {"version": "v1", "released": "2026-01-01", "schema": "v1.json"},
            {"version": "v2", "released": "2026-02-01", "base": "v1", "patch": "p2.json", "schema": "v2.json"},
            {
                "version": "0.3.0",
                "commit": "abc1234",
                "released": "2026-03-01",
                "base": "v1",
                "patch": "p3.json",
                "schema": "v3.json",
                "changes": f"{__name__}:WITH_SMALL",
            },
        ],
    )
    families = fold_versions(v1, tmp_path)
    assert [f.id for f in families] == ["tiny@v1", "tiny@v2", "tiny@0.3.0"]
    assert [[r.id for r in f.rules] for f in families] == [
        ["width-even"],
        ["width-even"],
        ["width-even", "width-small"],
    ]
    assert families[2].commit == "abc1234" and families[2].schema_file == tmp_path / "v3.json"


WITH_SMALL = Changes(rules=Delta(add=by_id(width_small)))
NOT_CHANGES = {"rules": ()}


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ([{"version": "v1", "released": "", "schema": "a", "colour": "red"}], "1: unknown keys ['colour'] (known: "),
        (
            [{"version": "v1", "schema": "a"}],
            "1: Release.__init__() missing 1 required positional argument: 'released'",
        ),
        (
            [{"version": "v1", "released": "", "schema": "a", "base": "v0"}],
            "1: the oldest version has a hand-written schema: no base, patch or changes",
        ),
        (
            [{"version": "v1", "released": "", "schema": "a"}, {"version": "v2", "released": "", "schema": "b"}],
            "2: needs a patch and a base among the versions listed before it",
        ),
        (
            [
                {"version": "v1", "released": "", "schema": "a"},
                {"version": "v2", "released": "", "schema": "b", "base": "v3", "patch": "p"},
            ],
            "2: needs a patch and a base among the versions listed before it",
        ),
        (
            [
                {"version": "v1", "released": "", "schema": "a"},
                {"version": "0.2.0", "commit": "v1", "released": "", "schema": "b", "base": "v1", "patch": "p"},
            ],
            "2: names '0.2.0' (commit 'v1') a second time",
        ),
    ],
)
def test_a_malformed_versions_json_is_refused_naming_the_entry(tmp_path, entries, problem):
    (tmp_path / "versions.json").write_text(json.dumps({"versions": entries}))
    with pytest.raises(VersionError) as raised:
        read_releases(tmp_path)
    assert f"{tmp_path / 'versions.json'}: entry {problem}" in str(raised.value)


def test_a_changes_name_that_is_no_changes_object_and_an_unlisted_oldest_are_refused(tmp_path):
    entries = [
        {"version": "v1", "released": "", "schema": "v1.json"},
        {
            "version": "v2",
            "released": "",
            "base": "v1",
            "patch": "p",
            "schema": "v2.json",
            "changes": f"{__name__}:NOT_CHANGES",
        },
    ]
    with pytest.raises(
        VersionError, match=f"version v2: {__name__}:NOT_CHANGES is not a trainspec.spec.versions.Changes"
    ):
        fold_versions(_tiny(tmp_path, entries), tmp_path)
    with pytest.raises(VersionError, match="tiny@v0 is not the oldest version listed in"):
        fold_versions(replace(_tiny(tmp_path, entries), version="v0"), tmp_path)


def test_a_version_named_by_release_is_selected_by_its_commit_too(monkeypatch, tmp_path):
    release = replace(_tiny(tmp_path, []), version="0.2.0", commit="abd0346")
    monkeypatch.setitem(every_version(), release.id, release)
    assert get_family("tiny@0.2.0") is release and get_family("tiny@abd0346") is release


# -- the shipped versions, unchanged -------------------------------------------------------------


@pytest.mark.parametrize("family", sorted(json.loads((DATA / "ids.json").read_text())))
def test_every_shipped_version_has_the_rules_examples_and_docs_it_had_in_order(family, capsys):
    expected = json.loads((DATA / "ids.json").read_text())[family]
    found = get_family(family)
    assert [r.id for r in found.rules] == expected["rules"]
    assert list(found.examples) == expected["examples"]
    assert list(found.schema_rule_docs) == expected["schema_rule_docs"]
    assert main(["rules", family, "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    family_ids = [f"{r['id']} {r['severity']} {r['source']}" for r in listed if r["source"] != "engine"]
    assert family_ids == expected["listed"]


def test_version_lists_every_shipped_version_with_what_it_follows(capsys, monkeypatch):
    shipped = {i: f for i, f in every_version().items() if f.name in SHIPPED and f.extends is None}
    monkeypatch.setattr(families, "_loaded", shipped)  # other tests register families of their own
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  kempnerforge@089fbbd: follows KempnerForge 089fbbd (2026-05-12)",
        "  kempnerforge@5666d0d: follows KempnerForge 5666d0d (2026-06-30)",
        "  specforge@08eaeac: follows SpecForge 08eaeac (config module of 2026-07-21)",
        "  specforge@0.2.0 (commit abd0346): follows SpecForge 0.2.0 (the PyPI release, config module of 2026-08-07)",
        "  specforge@a6b6b02: follows SpecForge a6b6b02 (config module of 2026-08-08)",
    ]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["kempnerforge@089fbbd", "kempnerforge@5666d0d"], "kempnerforge-089fbbd-5666d0d.txt"),
        (["specforge@08eaeac", "specforge@a6b6b02", "--format", "json"], "specforge-08eaeac-a6b6b02.json"),
    ],
)
def test_schema_diff_between_the_shipped_versions_is_unchanged(args, expected, capsys):
    assert main(["schema", "diff", *args]) == 0
    assert capsys.readouterr().out == (DATA / expected).read_text(encoding="utf-8")


def test_each_family_reads_its_release_metadata_from_versions_json():
    for family in every_version().values():
        if family.extends is not None or family.name not in SHIPPED:
            continue
        (release,) = (r for r in read_releases(family.schema_file.parent) if r.version == family.version)
        assert (family.released, family.follows, family.commit) == (release.released, release.follows, release.commit)
        assert family.schema_file.name == release.schema


def test_every_shipped_version_is_held_here_and_named_in_the_docs_with_its_date():
    shipped = {f.id: f for f in every_version().values() if f.name in SHIPPED and f.extends is None}
    assert sorted(shipped) == sorted(json.loads((DATA / "ids.json").read_text()))
    docs = (ROOT / "docs" / "versions.md").read_text(encoding="utf-8")
    intro = docs[: docs.index("\n## ")]
    assert [i for i, f in shipped.items() if f"`{i}` (" not in intro or f.released not in intro] == []
