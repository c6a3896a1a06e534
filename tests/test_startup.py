"""What a one-file check leaves unimported, and the entry-point reader that makes it possible."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from trainspec.families.entry_points import entry_points

from .conftest import ROOT

entry_points_module = importlib.import_module("trainspec.families.entry_points")
"""The module (`trainspec.families.entry_points` is also the function's name in the package)."""

GROUP = "trainspec.families"


def _dist(folder: Path, name: str, entry_points_txt: str | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).mkdir()
    (folder / name / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.partition('-')[0]}\nVersion: 1\n")
    if entry_points_txt is not None:
        (folder / name / "entry_points.txt").write_text(entry_points_txt)


def _listed(group: str) -> list[tuple[str, str]]:
    return [(e.name, e.value) for e in metadata.entry_points(group=group)]


def test_entry_points_are_read_as_importlib_metadata_reads_them(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "alpha-1.0.dist-info", f"[console_scripts]\nx = y:z\n\n[{GROUP}]\n# a comment\n a =  alpha:FAMILY \n")
    _dist(first, "Beta_Pkg-2.dist-info", f"[{GROUP}]\nbeta = beta.fam:FAMILIES [extra]\n")
    _dist(first, "gamma.egg-info", f"[{GROUP}]\ngamma=gamma\n")
    _dist(first, "nothing-1.dist-info", None)
    _dist(second, "alpha-0.9.dist-info", f"[{GROUP}]\nshadowed = alpha.old:FAMILY\n")  # the first alpha wins
    _dist(second, "beta.pkg-3.dist-info", f"[{GROUP}]\nalso_shadowed = beta:X\n")  # same normalized name
    _dist(second, "delta-1.dist-info", f"[{GROUP}]\ndelta = delta:FAMILY\n[other]\ndelta = no:thanks\n")
    (second / "legacy.egg-info").write_text("Name: legacy\n")  # a metadata file, not a folder
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    expected = _listed(GROUP)
    assert [tuple(e) for e in entry_points(GROUP)] == expected
    assert {name for name, _ in expected} == {"a", "beta", "gamma", "delta"}
    assert [tuple(e) for e in entry_points("other")] == _listed("other")


def test_an_unusual_distribution_name_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    _dist(tmp_path, "Upper-1.DIST-INFO", f"[{GROUP}]\nupper = upper:FAMILY\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert [tuple(e) for e in entry_points(GROUP)] == _listed(GROUP) == [("upper", "upper:FAMILY")]


def test_an_entry_point_loads_the_object_it_names():
    (kempnerforge,) = (e for e in entry_points(GROUP) if e.name == "kempnerforge")
    from trainspec.families.kempnerforge import FAMILIES

    assert kempnerforge.load() is FAMILIES


@pytest.mark.parametrize("name", ["jsonschema", "importlib.metadata", "yaml", "pydantic"])
def test_a_valid_file_under_a_project_configuration_is_checked_without(name, tmp_path):
    """A valid file (the usual case) is answered by the compiled validators, its project configuration
    included; these imports would cost a one-file check about 90 ms."""
    (tmp_path / ".trainspec.toml").write_text(
        'world-size = "1..8"\nwarnings-as-errors = true\n[[configs]]\npaths = ["*.toml"]\nselect = ["model"]\n'
    )
    config = tmp_path / "job.toml"
    config.write_text((ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_text())
    probe = (
        "import sys, io, contextlib\nfrom trainspec.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n    code = main(sys.argv[1:])\n"
        f"print(code, {name!r} in sys.modules, repr(out.getvalue()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "check", str(config), "--world-size", "12"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    code, imported, _ = done.stdout.split(maxsplit=2)
    assert (code, imported) == ("0", "False"), done.stdout + done.stderr


def _imported_by_check(tmp_path: Path, text: str, *args: str) -> tuple[int, set[str]]:
    """The exit code of `trainspec check job.toml ARGS` in a fresh process, and the modules it imported."""
    (tmp_path / "job.toml").write_text(text)
    probe = (
        "import sys, io, contextlib\nfrom trainspec.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
        "print(code, *sorted(sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "check", "job.toml", *args], capture_output=True, text=True, cwd=tmp_path
    )
    code, *modules = done.stdout.split()
    return int(code), set(modules)


def test_a_check_of_a_named_family_imports_no_other_family(tmp_path):
    text = (ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_text()
    code, modules = _imported_by_check(tmp_path, text, "--family", "kempnerforge", "--world-size", "12")
    assert code == 0
    assert "trainspec.families.kempnerforge" in modules
    assert not {m for m in modules if m.startswith(("trainspec.families.specforge", "trainspec.families.axolotl"))}


def test_a_check_imports_no_rule_examples_and_no_memory_model(tmp_path):
    """Examples are read by `explain`, the docs and the tests (`Family.examples` is built on first read);
    the memory estimate by `show`, `plan` and `--gpu-memory`."""
    text = (ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_text() + "\n[model]\nn_heads = 7\n"
    code, modules = _imported_by_check(tmp_path, text, "--world-size", "12")
    assert code == 1
    unwanted = {m for m in modules if m.startswith("trainspec.families.") and ".examples" in m}
    unwanted |= {m for m in modules if m.endswith(("kempnerforge.memory", "kempnerforge.quantities"))}
    assert not unwanted


def test_a_project_configuration_naming_other_families_imports_none_of_them(tmp_path):
    """The project configuration's verdict checks that each family it names exists: for trainspec's own, from
    the versions.json each builds its versions from, without importing them."""
    (tmp_path / ".trainspec.toml").write_text(
        '[[configs]]\npaths = ["*.yaml"]\nfamily = "specforge"\n'
        '[[configs]]\npaths = ["a/*.yaml"]\nfamily = "axolotl@0.18.0"\n'
        '[[configs]]\npaths = ["b/*.yaml"]\nfamily = "specforge@abd0346"\n'
    )
    text = (ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_text()
    code, modules = _imported_by_check(tmp_path, text, "--family", "kempnerforge", "--world-size", "12")
    assert code == 0
    assert not {m for m in modules if m.startswith(("trainspec.families.specforge", "trainspec.families.axolotl"))}


def test_a_family_found_without_import_is_one_get_family_finds():
    from trainspec.families import every_version, found_without_import, get_family

    names = {f.name for f in every_version().values()}
    specs = {*names, *(f"{n}@latest" for n in names), *(f.id for f in every_version().values())}
    specs |= {f"{f.name}@{f.commit}" for f in every_version().values() if f.commit}
    specs |= {"kempnerforge@nope", "nofamily", "nofamily@1", "specforge@"}
    for spec in sorted(specs):
        if found_without_import(spec):
            assert get_family(spec) is not None, spec
    assert found_without_import("kempnerforge@5666d0d") and found_without_import("specforge@abd0346")
    assert not found_without_import("kempnerforge@nope") and not found_without_import("nofamily")


def test_a_toml_date_where_a_string_belongs_is_explained_without_python_jsonschema(tmp_path):
    """The compiled validator cannot read a date; the explainer judges it where no union or condition
    reads it, so an invalid file's one-file check still skips python-jsonschema's import."""
    text = (ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_text() + "\n[eval]\nhf_dataset_split = 1979-05-27\n"
    code, modules = _imported_by_check(tmp_path, text, "--family", "kempnerforge", "--world-size", "12")
    assert code == 1 and "jsonschema" not in modules


def test_an_invalid_project_configuration_is_still_explained(tmp_path):
    (tmp_path / ".trainspec.toml").write_text('world-size = "8,x"\nset = ["no-equals"]\n')
    config = tmp_path / "job.toml"
    config.write_text((ROOT / "examples" / "kempnerforge_7b_12gpu.toml").read_text())
    done = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", str(config)], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 2
    assert "is not a world size" in done.stdout + done.stderr
    assert "is not an override" in done.stdout + done.stderr


def test_a_malformed_entry_point_anywhere_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    """Python 3.15's importlib.metadata refuses every group when one value is malformed; whatever the
    installed one does, the reader does the same by asking it."""
    _dist(
        tmp_path, "other-1.dist-info", f"[napari.manifest]\nother = other:manifests/napari.yaml\n[{GROUP}]\nok = o:F\n"
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    asked = []
    monkeypatch.setattr(metadata, "entry_points", lambda group: asked.append(group) or [])
    assert entry_points(GROUP) == [] and asked == [GROUP]


# -- the cache of large folders' listings --------------------------------------------------------------


@pytest.fixture
def large_folder(tmp_path, monkeypatch):
    """A folder on `sys.path` large enough for its listing to be kept, settled at once, and a cache folder."""
    folder = tmp_path / "large"
    folder.mkdir()
    for n in range(entry_points_module.LISTED_FROM):
        (folder / f"module_{n}.py").write_text("")
    _dist(folder, "alpha-1.dist-info", f"[{GROUP}]\na = alpha:FAMILY\n")
    monkeypatch.setattr(sys, "path", [str(folder)])
    monkeypatch.setattr(entry_points_module, "SETTLED_AFTER_NS", -(10**12))
    monkeypatch.setenv("TRAINSPEC_CACHE_DIR", str(tmp_path / "cache"))
    return folder


def _cached(folder: Path) -> dict:
    return json.loads((folder.parent / "cache" / "listings.json").read_text())["folders"]


def test_a_large_folder_s_listing_is_kept_and_taken_while_its_stamp_is_the_same(large_folder, monkeypatch):
    assert [tuple(e) for e in entry_points(GROUP)] == _listed(GROUP) == [("a", "alpha:FAMILY")]
    assert _cached(large_folder)[str(large_folder)]["children"] == ["alpha-1.dist-info"]
    listed = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": listed.append(path) or real(path))
    assert [tuple(e) for e in entry_points(GROUP)] == [("a", "alpha:FAMILY")]
    assert listed == []  # taken from the cache
    _dist(large_folder, "beta-1.dist-info", f"[{GROUP}]\nb = beta:FAMILY\n")  # the folder's stamp changes
    found = [tuple(e) for e in entry_points(GROUP)]
    assert listed == [str(large_folder)]
    assert found == _listed(GROUP) and sorted(found) == [("a", "alpha:FAMILY"), ("b", "beta:FAMILY")]
    assert sorted(_cached(large_folder)[str(large_folder)]["children"]) == ["alpha-1.dist-info", "beta-1.dist-info"]


def test_a_folder_changed_moments_ago_is_not_kept(large_folder, monkeypatch):
    monkeypatch.setattr(entry_points_module, "SETTLED_AFTER_NS", 10**12)
    assert [tuple(e) for e in entry_points(GROUP)] == _listed(GROUP)
    assert not (large_folder.parent / "cache" / "listings.json").exists()


@pytest.mark.parametrize(
    "cached",
    [
        "not json",
        json.dumps({"format": 1, "folders": {"FOLDER": {"stamp": "STAMP", "children": ["../evil-1.dist-info"]}}}),
        json.dumps({"format": 1, "folders": {"FOLDER": {"stamp": "STAMP", "children": [7]}}}),
        json.dumps({"format": 1, "folders": {"FOLDER": {"stamp": [1, 2, 3], "children": []}}}),
        json.dumps({"format": 1, "folders": {"relative": {"stamp": "STAMP", "children": []}}}),
        json.dumps({"format": 2, "folders": {}}),
        json.dumps([1, 2]),
    ],
)
def test_a_malformed_or_hostile_cache_is_not_read(large_folder, cached):
    entry_points(GROUP)
    stamp = json.dumps(_cached(large_folder)[str(large_folder)]["stamp"])
    cache = large_folder.parent / "cache" / "listings.json"
    cache.write_text(cached.replace('"FOLDER"', json.dumps(str(large_folder))).replace('"STAMP"', stamp))
    assert [tuple(e) for e in entry_points(GROUP)] == _listed(GROUP) == [("a", "alpha:FAMILY")]
    assert _cached(large_folder)[str(large_folder)]["children"] == ["alpha-1.dist-info"]  # written anew


def test_a_cache_file_others_may_write_or_a_link_is_not_read(large_folder):
    entry_points(GROUP)
    cache = large_folder.parent / "cache" / "listings.json"
    folders = _cached(large_folder)
    folders[str(large_folder)]["children"] = []  # were it read, alpha would be missing
    cache.write_text(json.dumps({"format": 1, "folders": folders}))
    cache.chmod(0o666)
    assert [tuple(e) for e in entry_points(GROUP)] == [("a", "alpha:FAMILY")]
    cache.unlink()
    elsewhere = large_folder.parent / "elsewhere.json"
    elsewhere.write_text(json.dumps({"format": 1, "folders": folders}))
    cache.symlink_to(elsewhere)
    assert [tuple(e) for e in entry_points(GROUP)] == [("a", "alpha:FAMILY")]


def test_an_unwritable_cache_folder_costs_only_the_listing(large_folder, monkeypatch):
    blocked = large_folder.parent / "blocked"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("TRAINSPEC_CACHE_DIR", str(blocked / "cache"))
    assert [tuple(e) for e in entry_points(GROUP)] == _listed(GROUP) == [("a", "alpha:FAMILY")]
