"""The family version a team runs, found from the trainer's package installed where trainspec runs."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from importlib import metadata

import pytest

import trainspec
from trainspec.engine.pipeline import check_path
from trainspec.families import every_version, get_family, installed, versions_of
from trainspec.families.entry_points import installed_version
from trainspec.spec.diagnostics import Severity

from .specforge_loader import require

RUN = "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\n"


@pytest.fixture
def release(monkeypatch):
    """release("0.1.0"): that SpecForge release is installed (None: none is); specforge@0.1.0 exists."""
    monkeypatch.delenv(installed.IGNORE, raising=False)
    base = get_family("specforge@08eaeac")
    monkeypatch.setitem(every_version(), "specforge@0.1.0", replace(base, version="0.1.0", released="2026-07-01"))
    monkeypatch.setitem(every_version(), "specforge@0.2.5", replace(base, version="0.2.5", released="2026-07-30"))

    def install(version: str | None) -> None:
        monkeypatch.setattr(installed, "installed_release", lambda name: version if name == "specforge" else None)

    return install


def checked(tmp_path, family: str | None = None, text: str = RUN):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    result = check_path(path, family=family)
    return result.family.id, [(d.rule, d.severity, d.message) for d in result.diagnostics if d.rule.startswith("inst")]


def test_the_installed_release_selects_its_version_with_a_note(tmp_path, release):
    release("0.1.0")
    family, [(rule, severity, message)] = checked(tmp_path)
    assert (family, rule, severity) == ("specforge@0.1.0", "installed-release", Severity.NOTE)
    assert "the release of `specforge` installed here (0.1.0)" in message


@pytest.mark.parametrize("given", [None, "specforge"])
def test_a_family_named_without_a_version_follows_the_installed_release(tmp_path, release, given):
    release("0.1.0")
    assert checked(tmp_path, given)[0] == "specforge@0.1.0"


@pytest.mark.parametrize("given", ["specforge@latest", "specforge@08eaeac"])
def test_a_version_given_by_flag_or_project_pins_it(tmp_path, release, given):
    release("0.1.0")
    assert checked(tmp_path, given) == (get_family(given).id, [])


def test_a_version_named_by_the_file_pins_it(tmp_path, release):
    release("0.1.0")
    text = "# yaml-language-server: $schema=.trainspec/schemas/specforge@08eaeac.schema.json\n" + RUN
    assert checked(tmp_path, None, text) == ("specforge@08eaeac", [])


def test_an_unknown_release_is_a_warning_naming_the_nearest_known_versions(tmp_path, release):
    release("0.2.1")
    family, [(rule, severity, message)] = checked(tmp_path)
    assert (family, rule, severity) == (get_family("specforge").id, "installed-release-unknown", Severity.WARNING)
    assert "`specforge` 0.2.1 is installed here" in message
    assert "the nearest known: specforge@0.2.0, specforge@0.2.5" in message


def test_without_the_package_or_with_the_lookup_off_the_newest_version_checks(tmp_path, release, monkeypatch):
    release(None)
    assert checked(tmp_path) == (get_family("specforge").id, [])
    release("0.1.0")
    monkeypatch.setenv(installed.IGNORE, "1")
    assert checked(tmp_path) == (get_family("specforge").id, [])


def test_the_api_reports_the_note(tmp_path, release):
    release("0.1.0")
    path = tmp_path / "run.yaml"
    path.write_text(RUN)
    assert "installed-release" in {d.rule for d in trainspec.check(path)}


def test_the_release_is_read_from_the_package_metadata_without_importing_it(monkeypatch):
    require()
    installed.installed_release.cache_clear()
    assert installed.installed_release("specforge") == "0.2.0"
    assert "specforge" not in sys.modules
    assert installed.installed_release("no-such-trainer-package") is None


def test_with_specforge_0_2_0_installed_check_reports_specforge_0_2_0_without_being_told(tmp_path, monkeypatch):
    require()
    monkeypatch.delenv(installed.IGNORE)
    installed.installed_release.cache_clear()
    family, [(rule, _, _)] = checked(tmp_path)
    assert (family, rule) == ("specforge@0.2.0", "installed-release")
    path = tmp_path / "run.yaml"
    env = {k: v for k, v in os.environ.items() if k != installed.IGNORE}
    shown = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", str(path)], capture_output=True, text=True, env=env
    )
    assert (
        "note[installed-release] checked as specforge@0.2.0, the release of `specforge` installed here" in shown.stdout
    )


@pytest.mark.parametrize("name", ["pytest", "pydantic", "PyYAML", "pyyaml", "no-such-trainer-package"])
def test_the_release_is_read_as_importlib_metadata_reads_it(name):
    try:
        expected = metadata.version(name)
    except metadata.PackageNotFoundError:
        expected = None
    assert installed_version(name) == expected


def test_a_distribution_folder_is_read_without_importlib_metadata(tmp_path, monkeypatch):
    (tmp_path / "Fake_Trainer-1.2.3.dist-info").mkdir()
    (tmp_path / "Fake_Trainer-1.2.3.dist-info" / "METADATA").write_text(
        "Name: fake-trainer\nVersion: 1.2.3\n\nVersion: 9\n"
    )
    (tmp_path / "other.egg-info").write_text("Name: other\nVersion: 0.1\n")  # a file: left to importlib.metadata
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert installed_version("fake.trainer") == metadata.version("fake-trainer") == "1.2.3"
    assert installed_version("other") == metadata.version("other") == "0.1"


def test_the_language_server_checks_as_the_installed_release(tmp_path, release):
    from trainspec.editor.lsp.analysis import Analysis, Settings

    release("0.1.0")
    analysis = Analysis(str(tmp_path / "run.yaml"), RUN, Settings(), "utf-16")
    assert analysis.family is not None and analysis.family.id == "specforge@0.1.0"
    assert "installed-release" in {d.rule for d in analysis.diagnostics}
    assert analysis.resolved.family is analysis.family  # completion and hover use the same version


def test_the_installed_release_that_is_the_newest_version_needs_no_note(tmp_path, release):
    newest = get_family("specforge")
    release(newest.version)
    assert checked(tmp_path) == (newest.id, [])


AXOLOTL_RUN = """base_model: HuggingFaceTB/SmolLM2-135M
datasets:
  - path: mhenrichsen/alpaca_2k_test
    type: alpaca
micro_batch_size: 1
gradient_accumulation_steps: 1
learning_rate: 0.0002
adapter: lora
ple_cpu_offload: true
"""
"""An Axolotl config that only 0.19.0 refuses (`ple_cpu_offload` needs qlora in 4 bits or lora in 8)."""


def _fake_axolotl(folder, version: str) -> None:
    info = folder / f"axolotl-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: axolotl\nVersion: {version}\n")


@pytest.mark.parametrize(("version", "expected"), [("0.19.0", "axolotl@0.19.0"), ("0.18.0", "axolotl@0.18.0")])
def test_the_installed_axolotl_release_picks_its_version(tmp_path, monkeypatch, version, expected):
    _fake_axolotl(tmp_path / "site", version)
    monkeypatch.delenv(installed.IGNORE, raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "site"), *sys.path])
    installed.installed_release.cache_clear()
    try:
        path = tmp_path / "cfg.yml"
        path.write_text(AXOLOTL_RUN)
        result = check_path(path)
    finally:
        installed.installed_release.cache_clear()
    assert result.family.id == expected
    rules = {d.rule for d in result.diagnostics}
    assert ("ple-cpu-offload-setup" in rules) == (version == "0.19.0")
    assert ("installed-release" in rules) == (version != versions_of("axolotl")[0].version)  # the newest needs none


def test_with_axolotl_0_19_0_installed_the_command_line_checks_as_0_19_0(tmp_path):
    _fake_axolotl(tmp_path / "site", "0.19.0")
    path = tmp_path / "cfg.yml"
    path.write_text(AXOLOTL_RUN)
    env = {k: v for k, v in os.environ.items() if k != installed.IGNORE}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), *sys.path])
    shown = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", str(path)], capture_output=True, text=True, env=env
    )
    assert "error[ple-cpu-offload-setup]" in shown.stdout, shown.stdout + shown.stderr
    assert shown.returncode == 1
