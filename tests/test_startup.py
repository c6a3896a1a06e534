"""What a one-file check leaves unimported, and the entry-point reader that makes it possible."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from trainspec.families.entry_points import entry_points

from .conftest import ROOT

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
