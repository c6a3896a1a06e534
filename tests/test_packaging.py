"""The generator's drift check, and the release (sdist -> wheel -> install) working outside the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from trainspec.families import get_family

from .conftest import CORPUS, ROOT


def _copy_for_generation(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    for name in ("schema", "generated", "tools"):
        shutil.copytree(ROOT / name, repo / name)
    return repo


def _drift_check(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "tools/generate_models.py", "--check"], cwd=repo, capture_output=True, text=True
    )


@pytest.mark.external
def test_drift_check_fails_after_hand_edit_and_passes_after_regeneration(tmp_path):
    repo = _copy_for_generation(tmp_path)
    assert _drift_check(repo).returncode == 0
    model = repo / "generated" / "kempnerforge.py"
    model.write_text(model.read_text().replace("= 4096", "= 8192", 1))
    stale = _drift_check(repo)
    assert stale.returncode == 1 and "generated/ is stale" in stale.stderr and "8192" in stale.stdout
    subprocess.run([sys.executable, "tools/generate_models.py"], cwd=repo, check=True, capture_output=True)
    assert _drift_check(repo).returncode == 0


@pytest.mark.external
def test_drift_check_notices_a_schema_change(tmp_path):
    repo = _copy_for_generation(tmp_path)
    schema = repo / "schema" / "kempnerforge" / "job.schema.json"
    schema.write_text(schema.read_text().replace('"default": 4096', '"default": 1024', 1))
    assert _drift_check(repo).returncode == 1


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from the sdist, as installers build it: only what the sdist carries reaches it."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)], check=True)
    (sdist,) = out.glob("trainspec-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(out / "unpacked", filter="data")
    (source,) = (out / "unpacked").iterdir()
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)], check=True)
    (found,) = out.glob("trainspec-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment, outside the repository, with the wheel installed; its python."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True)
    return python


@pytest.mark.external
def test_wheel_carries_schemas_and_generated_models(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "trainspec/schemas/kempnerforge/job.schema.json" in names
    assert "trainspec/schemas/specforge/run.schema.json" in names
    assert "trainspec/generated/kempnerforge.py" in names
    assert "trainspec/generated/specforge.py" in names
    assert "trainspec/py.typed" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)  # pyproject says MIT: the text ships
    assert not any("__pycache__" in name for name in names)


@pytest.mark.external
def test_installed_wheel_checks_and_loads_outside_the_repo(installed, tmp_path):
    python = installed
    env_dir = python.parent.parent
    work = tmp_path / "elsewhere"
    work.mkdir()
    config = CORPUS / "kempnerforge" / "train" / "7b_12gpu_tp4.toml"
    shutil.copy(config, work / "job.toml")
    check = subprocess.run(
        [str(env_dir / "bin" / "trainspec"), "check", "job.toml", "--world-size", "12"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    bad = subprocess.run(
        [str(env_dir / "bin" / "trainspec"), "check", "job.toml", "--world-size", "8"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "world-size-product" in bad.stdout
    load = subprocess.run(
        [
            str(python),
            "-c",
            "import trainspec, sys; c = trainspec.load('job.toml', world_size=12); "
            "print(type(c).__module__, c.model.n_kv_heads, c.distributed.tp); "
            "print('torch' in sys.modules)",
        ],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert load.returncode == 0, load.stderr
    newest = get_family("kempnerforge").model.partition(":")[0]  # what the plain name loads
    assert load.stdout.split() == [newest, "8", "4", "False"]
    without_torch = subprocess.run(  # the wheel alone has no torch: asking for it names the extra
        [str(python), "-c", "import trainspec.distributed as d; d.torch_dtype('bfloat16')"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert without_torch.returncode == 1
    assert "needs torch, which is not installed here: pip install 'trainspec[torch]'" in without_torch.stderr


@pytest.mark.external
def test_a_type_checker_sees_the_family_model_of_a_loaded_config(installed, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import trainspec\n"
        "from trainspec.generated.kempnerforge import JobConfig\n"
        "config = trainspec.load('job.toml', model=JobConfig)\n"
        "reveal_type(config)\n"
        "reveal_type(config.model.n_heads)\n"
        "config.model.no_such_field\n"
    )
    found = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-executable", str(installed), "--no-incremental", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert 'Revealed type is "trainspec.generated.kempnerforge.JobConfig"' in found.stdout, found.stdout
    assert 'Revealed type is "int"' in found.stdout, found.stdout
    assert '"ModelConfig" has no attribute "no_such_field"' in found.stdout, found.stdout


def test_the_license_pyproject_names_is_in_the_repository_and_the_sdist():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT" and project["project"]["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    assert "LICENSE" in project["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
