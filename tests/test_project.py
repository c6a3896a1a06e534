"""Project configuration, file directives, world-size precedence and which files a family claims."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trainspec.cli import main
from trainspec.read.globs import Glob
from trainspec.read.project import ProjectError, load_project

from .conftest import CORPUS, ROOT

KF_7B = CORPUS / "kempnerforge" / "train" / "7b_12gpu_tp4.toml"  # dp_shard·tp = 3·4: runs on 12 ranks
SF_RUN = CORPUS / "specforge" / "qwen3-8b-eagle3-offline.yaml"

LIGHTNING = "seed_everything: 42\ntrainer:\n  max_epochs: 3\nmodel:\n  class_path: m.Net\n  init_args: {lr: 0.1}\n"
HYDRA = "model:\n  name: resnet\noptimizer:\n  lr: 0.1\ntraining:\n  epochs: 3\n"
OTHER_TOML = "[model]\nname = 'resnet50'\nnum_classes = 1000\n\n[train]\nepochs = 90\nlr = 0.1\n"
PRESET = "# an upstream model preset: its keys lack the [model] header\ndim = 4096\nn_layers = 32\nn_heads = 32\n"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    build_repository(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def build_repository(tmp_path: Path) -> None:
    """A user's repository: two families, per-glob world sizes, an ignored rule, an excluded folder,
    a PyTorch Lightning config and a package.json."""
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [project]
            name = "acme-training"

            [tool.trainspec]
            ignore = ["moe-compile"]
            exclude = ["legacy"]

            [[tool.trainspec.configs]]
            paths = ["configs/kf/**/*.toml"]
            family = "kempnerforge"
            world-size = "12"

            [[tool.trainspec.configs]]
            paths = ["configs/kf-small/*.toml"]
            world-size = [1, 2]

            [[tool.trainspec.configs]]
            paths = ["configs/runs/*.yaml"]
            """
        )
    )
    kf = tmp_path / "configs" / "kf"
    (kf / "nested").mkdir(parents=True)
    shutil.copy(KF_7B, kf / "7b.toml")
    (kf / "nested" / "bad.toml").write_text(KF_7B.read_text().replace("tp = 4", "tp = 3"))
    small = tmp_path / "configs" / "kf-small"
    small.mkdir()
    (small / "moe.toml").write_text("[model]\nnum_experts = 4\n[train]\ncompile_model = true\n")
    runs = tmp_path / "configs" / "runs"
    runs.mkdir()
    shutil.copy(SF_RUN, runs / "qwen3.yaml")
    (runs / "lightning.yaml").write_text(LIGHTNING)
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "old.toml").write_text("[model]\ndim = 4100\n")
    (tmp_path / "package.json").write_text('{"name": "acme", "version": "1.0.0"}\n')


def test_check_with_no_paths_checks_every_configured_glob(repo, capsys):
    code, out, _ = run(capsys, "check", "--format", "text")
    assert code == 1
    found = [line.split("] ")[0] + "]" for line in out.splitlines() if re.match(r"\S+: \w+\[", line)]
    assert found == [
        "configs/kf/nested/bad.toml:53:1: error[world-size-product]",  # at 12 ranks, the glob's size
        "configs/kf/nested/bad.toml:55:1: error[tp-divides-heads]",
        "configs/kf-small/moe.toml: note[world-size-checked]",  # moe-compile is ignored project-wide
        "configs/kf-small/moe.toml: note[world-size-checked]",
        "configs/runs/qwen3.yaml: note[world-size-derived]",
    ]
    assert "but the world size is 12" in out
    assert out.splitlines()[-1] == (
        "2 error(s), 0 warning(s) in 4 files; world sizes 1, 2, 12; "
        "1 skipped, no known family: configs/runs/lightning.yaml"
    )


def test_the_pieces_of_the_repository_run(repo, capsys):
    code, out, _ = run(capsys, "check", "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert {d["file"] for d in report["diagnostics"] if d["severity"] == "error"} == {"configs/kf/nested/bad.toml"}
    world = {d["world_size"] for d in report["diagnostics"] if d["rule"] == "world-size-checked"}
    assert world == {1, 2}  # the glob's sizes, not the command line's (none given)
    assert report["skipped"] == [
        {
            "file": "configs/runs/lightning.yaml",
            "reason": "only 1 of its 3 keys are axolotl's (unknown top-level keys: `seed_everything`, `model`): "
            "not a config of a known family; pass --family axolotl to check it as one",
        }
    ]
    assert report["summary"]["files"] == 4 and report["summary"]["skipped"] == 1


def test_a_directory_walk_skips_excluded_folders_and_lists_unknown_files(repo, capsys):
    code, out, _ = run(capsys, "check", ".", "--format", "json")
    report = json.loads(out)
    files = {d["file"] for d in report["diagnostics"]}
    assert not any("legacy" in f for f in files)
    assert {s["file"] for s in report["skipped"]} == {"configs/runs/lightning.yaml", "package.json"}
    assert code == 1


def test_the_command_line_world_size_wins_over_the_glob_and_says_what_it_replaced(repo, capsys):
    code, out, _ = run(capsys, "check", "configs/kf/7b.toml", "configs/kf-small/moe.toml", "--world-size", "8")
    assert code == 1, out  # 7b.toml is checked at the 8 given, not its glob's 12
    assert "but the world size is 8" in out
    assert (
        "configs/kf/7b.toml: note[world-size-from-project] the entry for configs/kf/**/*.toml in pyproject.toml "
        "states world size 12, set aside for the --world-size given"
    ) in out
    assert out.splitlines()[-1].endswith("in 2 files; world size 8")
    code, out, _ = run(capsys, "check", "configs/kf/7b.toml")
    assert code == 0 and out.splitlines()[-1] == "1 file checked, no problems; world size 12"  # without it: the glob's


def test_a_file_directive_outranks_the_glob_but_not_the_command_line(repo, capsys):
    path = repo / "configs" / "kf" / "7b.toml"
    path.write_text("# trainspec: world-size=16\n" + path.read_text())
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1
    assert "but the world size is 16" in out
    code, out, _ = run(capsys, "check", str(path), "--world-size", "12")
    assert code == 0, out
    assert "note[world-size-from-project] the file's directive states world size 16, set aside" in out
    assert out.splitlines()[-1] == "1 file checked, no problems; world size 12"


def test_an_excluded_file_named_explicitly_is_checked_unless_forced(repo, capsys):
    code, out, _ = run(capsys, "check", "legacy/old.toml")
    assert code == 1 and "model-heads-divide-dim" in out
    code, out, _ = run(capsys, "check", "legacy/old.toml", "--force-exclude")
    assert code == 0 and "0 files checked" in out


def test_a_broken_project_configuration_is_a_located_usage_error(repo, capsys):
    (repo / ".trainspec.toml").write_text('world-size = 0\nexclud = ["legacy"]\n')
    code, _, err = run(capsys, "check")
    assert code == 2
    assert f"{repo / '.trainspec.toml'}:1:1: world-size: 0 is not a world size" in err
    assert f"{repo / '.trainspec.toml'}:2:1: `exclud` is not a setting; did you mean `exclude`?" in err
    code, _, err = run(capsys, "check", "configs/kf/7b.toml")  # told once, not once per file it governs
    assert code == 2 and err.count("is not a setting; did you mean `exclude`?") == 1


def test_the_nearest_configuration_applies(repo, capsys):
    sub = repo / "configs" / "kf"
    (sub / ".trainspec.toml").write_text('[[configs]]\npaths = ["*.toml"]\nworld-size = 8\n')
    code, out, _ = run(capsys, "check", str(sub / "7b.toml"))
    assert code == 1 and "but the world size is 8" in out


def test_project_settings_are_read_and_merged(tmp_path):
    source = tmp_path / ".trainspec.toml"
    source.write_text(
        'world-size = "4..6"\nset = ["train.max_steps=10"]\nignore = ["a"]\n'
        '[[configs]]\npaths = ["x/**/*.toml"]\nset = ["train.seed=1"]\nignore = ["b"]\nselect = ["c"]\n'
    )
    project = load_project(source)
    assert project is not None
    inner = project.settings_for(tmp_path / "x" / "y" / "z.toml")
    assert inner.world_sizes == (4, 5, 6)
    assert inner.overrides == ("train.max_steps=10", "train.seed=1")
    assert inner.ignore == ("a", "b") and inner.select == ("c",)
    assert project.settings_for(tmp_path / "other.toml").select is None


def test_a_file_s_options_match_the_project_globs_once(tmp_path, monkeypatch):
    from trainspec.engine.runner import Options
    from trainspec.read import project as projects

    (tmp_path / ".trainspec.toml").write_text('[[configs]]\npaths = ["x/*.toml"]\nworld-size = "8"\nignore = ["b"]\n')
    matched = []
    entry_for = projects.Project.entry_for
    monkeypatch.setattr(projects.Project, "entry_for", lambda self, f: matched.append(f) or entry_for(self, f))
    options = Options(use_project=True).for_file(str(tmp_path / "x" / "run.toml"))
    assert options.world_sizes == (8,) and options.ignore == ("b",)
    assert len(matched) == 1


def test_a_pyproject_without_trainspec_settings_is_passed_over(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert load_project(tmp_path / "pyproject.toml") is None


def test_schema_errors_of_the_configuration_are_each_located(tmp_path):
    source = tmp_path / "pyproject.toml"
    source.write_text('[tool.trainspec]\nworld-size = "eight"\n\n[[tool.trainspec.configs]]\nfamily = "x"\n')
    with pytest.raises(ProjectError) as caught:
        load_project(source)
    found = [(d.line, d.config_path) for d in caught.value.diagnostics]
    assert found == [(2, "tool.trainspec.world-size"), (4, "tool.trainspec.configs[0]")]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("configs/**/*.toml", "configs/a.toml", True),
        ("configs/**/*.toml", "configs/x/y/a.toml", True),
        ("configs/*.toml", "configs/x/a.toml", False),
        ("legacy", "legacy", True),
        ("*.y?ml", "run.yaml", True),
        ("run[0-9].yaml", "run7.yaml", True),
        ("./configs/*.toml", "configs/a.toml", True),
    ],
)
def test_globs_are_relative_to_the_configuration(pattern, path, matches):
    assert Glob(pattern).fullmatch(path) is matches


# -- which files a family claims ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("lightning.yaml", LIGHTNING, "unknown top-level keys: `seed_everything`, `model`"),
        ("hydra.yaml", HYDRA, "unknown top-level keys: `optimizer`"),
        ("other.toml", OTHER_TOML, "only 2 of its 6 keys are kempnerforge's"),
        ("kf.json", '{"model": {"dim": 4096}, "train": {"batch_size": 8}}', "kempnerforge reads TOML files, not JSON"),
        (
            "named.json",
            '{"$schema": "https://example.org/other.schema.json", "model": {}}',
            "names the schema 'https://example.org/other.schema.json', which is no known family's",
        ),
    ],
)
def test_a_file_of_no_known_family_named_explicitly_says_why(capsys, tmp_path, name, text, why):
    path = tmp_path / name
    path.write_text(text)
    code, out, _ = run(capsys, "check", str(path), "--isolated")
    assert code == 2
    [line] = [line for line in out.splitlines() if "error[" in line]
    assert "error[unknown-family]" in line and why in line, line


def test_a_directory_lists_what_it_skips(capsys, tmp_path):
    shutil.copy(KF_7B, tmp_path / "job.toml")
    (tmp_path / "lightning.yaml").write_text(LIGHTNING)
    (tmp_path / "kf.json").write_text('{"model": {"dim": 4096}, "train": {"batch_size": 8}}')
    code, out, _ = run(capsys, "check", str(tmp_path), "--world-size", "12", "--isolated")
    assert code == 0
    assert f"{tmp_path}/kf.json:1:1: warning[unclaimed-config] " in out  # kempnerforge's keys, in JSON
    assert out.splitlines()[-1] == (
        f"0 error(s), 1 warning(s) in 2 files; world size 12; 1 skipped, no known family: {tmp_path}/lightning.yaml"
    )


def test_a_family_given_for_a_directory_lists_files_of_other_formats(capsys, tmp_path):
    shutil.copy(KF_7B, tmp_path / "job.toml")
    (tmp_path / "job.json").write_text('{"model": {"dim": 4096}}')
    code, out, _ = run(capsys, "check", str(tmp_path), "--family", "kempnerforge", "--world-size", "12", "--isolated")
    assert code == 0
    assert out.splitlines()[-1].endswith(f"1 skipped, no known family: {tmp_path}/job.json")
    code, out, _ = run(capsys, "check", str(tmp_path / "job.json"), "--family", "kempnerforge", "--isolated")
    assert code == 2 and "error[wrong-format] kempnerforge reads TOML files, not JSON" in out


def test_every_file_of_a_model_folder_is_accounted_for(capsys, tmp_path):
    for preset in (CORPUS / "kempnerforge" / "model").glob("*.toml"):
        shutil.copy(preset, tmp_path / preset.name)
    (tmp_path / "headerless.toml").write_text(PRESET)
    (tmp_path / "lightning.yaml").write_text(LIGHTNING)
    code, out, _ = run(capsys, "check", str(tmp_path), "--isolated", "--world-size", "1")
    assert code == 1
    assert f"{tmp_path}/headerless.toml:2:1: error[" in out  # claimed: its keys are a family's section
    last = out.splitlines()[-1]
    assert last.endswith(f"in 3 files; world size 1; 1 skipped, no known family: {tmp_path}/lightning.yaml")


# -- the bundled examples -----------------------------------------------------------------------


def test_the_examples_pass_the_documented_ci_command(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run(capsys, "check", "examples/")
    assert code == 0, out
    assert out.splitlines()[-1] == "4 files checked, no problems; world sizes 1, 2, 4, 8, 12"
    code, out, _ = run(capsys, "check", "examples/axolotl_llama3_8b_lora.yaml", "--format", "json")
    assert code == 0 and json.loads(out)["world_sizes"] == {"examples/axolotl_llama3_8b_lora.yaml": [8]}
    code, out, _ = run(capsys, "show", "examples/axolotl_llama3_8b_lora.yaml")
    assert code == 0 and "examples/axolotl_llama3_8b_lora.yaml (axolotl@0.18.0)" in out
    code, out, _ = run(capsys, "check")
    assert code == 0, out


def test_a_command_line_size_is_checked_against_a_config_that_fixes_its_own(capsys, monkeypatch):
    monkeypatch.chdir(ROOT / "examples")
    code, out, _ = run(capsys, "check", "specforge_qwen3_8b_dflash.yaml", "--world-size", "8,16")
    assert code == 1, out  # the sizes typed are checked: the trainer's 1 × 4 topology cannot run at them
    errors = [line for line in out.splitlines() if "error[" in line]
    assert len(errors) == 1 and "world size 8 does not match the trainer topology" in errors[0]
    assert "(the same at world size 16)" in errors[0]
    code, out, _ = run(capsys, "check", "specforge_qwen3_8b_dflash.yaml", "--world-size", "4")
    assert code == 0 and out.splitlines()[-1] == "1 file checked, no problems; world size 4"


def test_a_size_given_for_the_file_that_disagrees_with_its_topology_is_one_error(capsys, tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(
        "# trainspec: world-size=8,16\n" + (ROOT / "examples" / "specforge_qwen3_8b_dflash.yaml").read_text()
    )
    code, out, _ = run(capsys, "check", str(path), "--isolated")
    assert code == 1
    errors = [line for line in out.splitlines() if "error[" in line]
    assert len(errors) == 1 and "world-size-matches-trainer-topology" in errors[0]
    assert "(the same at world size 16)" in errors[0]


# -- directives ---------------------------------------------------------------------------------


def test_a_directive_names_the_family_and_version(capsys, tmp_path):
    path = tmp_path / "job.toml"
    path.write_text("# trainspec: family=kempnerforge@089fbbd world-size=12\n" + KF_7B.read_text())
    code, out, _ = run(capsys, "check", str(path), "--format", "json", "--isolated")
    assert code == 0, out


def test_an_unreadable_directive_is_an_error_at_its_line(capsys, tmp_path):
    path = tmp_path / "job.toml"
    path.write_text(KF_7B.read_text() + "\n# trainspec: world-size=0\n# trainspec: colour=red\n")
    code, out, _ = run(capsys, "check", str(path), "--isolated")
    lines = len(KF_7B.read_text().splitlines()) + 2
    assert code == 1
    assert f"{path}:{lines}:14: error[invalid-directive] file directive: world-size must be at least 1" in out
    assert f"{path}:{lines + 1}:14: error[invalid-directive] file directive: unknown setting `colour`" in out


# -- streaming ----------------------------------------------------------------------------------


@pytest.mark.external  # a subprocess over many files
def test_the_first_results_print_before_the_run_ends(tmp_path):
    text = KF_7B.read_text()
    for n in range(1500):
        (tmp_path / f"{n:04d}.toml").write_text(text.replace("tp = 4", "tp = 3") if n == 0 else text)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "trainspec", "check", str(tmp_path), "--world-size", "12", "--jobs", "1"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        still_running = proc.poll() is None
        rest = proc.stdout.read()
    assert "0000.toml" in first and "error[" in first
    assert still_running, "the first file's diagnostics appeared only when the run ended"
    assert rest.splitlines()[-1].endswith("in 1500 files; world size 12")


# -- what a project configuration cannot do ------------------------------------------------------


def test_an_overlay_named_by_the_project_works_in_parallel_runs(capsys, tmp_path, monkeypatch):
    (tmp_path / "acme.json").write_text(
        json.dumps({"family": "kempnerforge@5666d0d", "name": "acme", "registries": {"optimizer.name": ["acme_adamw"]}})
    )
    (tmp_path / ".trainspec.toml").write_text('[[configs]]\npaths = ["runs/*.toml"]\noverlay = "acme.json"\n')
    (tmp_path / "runs").mkdir()
    text = (ROOT / "examples" / "tiny_kempnerforge.toml").read_text().replace('name = "adamw"', 'name = "acme_adamw"')
    assert "acme_adamw" in text
    for n in range(30):
        (tmp_path / "runs" / f"r{n:02d}.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", "--jobs", "2", "--world-size", "2")
    assert (code, err) == (0, ""), out + err
    assert out.splitlines()[-1] == "30 files checked, no problems; world size 2"


@pytest.mark.parametrize(
    ("settings", "line", "message"),
    [
        ('select = ["unknwn-key"]\n', 1, "`unknwn-key` matches no rule id"),
        ('[[configs]]\npaths = ["*.toml"]\nfamily = "kempnerforgee"\n', 3, "unknown family 'kempnerforgee'"),
        ('[[configs]]\npaths = ["*.toml"]\noverlay = "nope.json"\n', 3, "overlay: cannot read the overlay"),
        ('[[configs]]\npaths = ["../shared/*.toml"]\n', 2, "not absolute or `..`"),
        ('world-size = "8..4"\n', 1, "is empty (its end is below its start)"),
        ("world-size = 8.0\n", 1, "8.0 is not a world size: write 8"),
        ('set = ["=1"]\n', 1, "'=1' is not an override: write PATH=VALUE"),
        ('exclude = ["x"]\nignore = ["x"\n', 3, "the project configuration cannot be read"),
    ],
)
def test_an_unusable_setting_is_told_once_at_its_line(capsys, tmp_path, monkeypatch, settings, line, message):
    (tmp_path / ".trainspec.toml").write_text(settings)
    for n in range(3):
        shutil.copy(KF_7B, tmp_path / f"job{n}.toml")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", ".")
    assert code == 2 and out == ""
    [problem] = [e for e in err.splitlines() if ".trainspec.toml" in e]
    assert problem.startswith(f"  {tmp_path / '.trainspec.toml'}:{line}:") and message in problem, err


def test_a_project_configuration_is_judged_once_per_reading(tmp_path, monkeypatch):
    import trainspec.engine.runner
    from trainspec.read.project import find_project, forget_projects

    (tmp_path / ".trainspec.toml").write_text('select = ["unknwn-key"]\n')
    for n in range(3):
        shutil.copy(KF_7B, tmp_path / f"job{n}.toml")
    judged = []
    real = trainspec.engine.runner._verdict
    monkeypatch.setattr(trainspec.engine.runner, "_verdict", lambda project: judged.append(project) or real(project))
    options = trainspec.engine.runner.Options(use_project=True)
    forget_projects()
    for n in range(3):
        with pytest.raises(ProjectError, match="matches no rule id"):
            options.for_file(str(tmp_path / f"job{n}.toml"))
    assert len(judged) == 1
    (tmp_path / ".trainspec.toml").write_text("warnings-as-errors = true\n")
    forget_projects()  # as the language server does when a configuration changes
    assert options.for_file(str(tmp_path / "job0.toml")).warnings_as_errors
    assert len(judged) == 2 and judged[1] is find_project(str(tmp_path))


def test_another_tools_broken_pyproject_is_passed_over(capsys, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x\n')
    shutil.copy(KF_7B, tmp_path / "job.toml")
    code, out, _ = run(capsys, "check", str(tmp_path / "job.toml"), "--world-size", "12")
    assert code == 0, out


def test_a_directive_naming_an_unusable_family_is_an_error_at_the_directive(capsys, tmp_path):
    (tmp_path / "typo.toml").write_text("# trainspec: world-size=12 family=kempnerforgee\n" + KF_7B.read_text())
    (tmp_path / "yaml.toml").write_text("# trainspec: family=specforge\n" + KF_7B.read_text())
    code, out, _ = run(capsys, "check", str(tmp_path), "--isolated")
    assert code == 1
    assert f"{tmp_path}/typo.toml:1:28: error[invalid-directive] file directive: family=kempnerforgee: unknown" in out
    assert (
        f"{tmp_path}/yaml.toml:1:14: error[invalid-directive] file directive: family=specforge: specforge reads" in out
    )
    assert "skipped" not in out


def test_globs_with_brackets_and_folders_with_glob_characters(capsys, tmp_path, monkeypatch):
    root = tmp_path / "my[1]"
    (root / "configs").mkdir(parents=True)
    shutil.copy(KF_7B, root / "configs" / "]a.toml")
    (root / "configs" / "README.md").write_text("# not a config\n")
    (root / "configs" / "legacy").mkdir()
    (root / "configs" / "legacy" / "old.toml").write_text("[model]\ndim = 4100\n")
    (root / ".trainspec.toml").write_text(
        'exclude = ["configs/legacy/"]\n[[configs]]\npaths = ["configs/**"]\nworld-size = 12\n'
        '[[configs]]\npaths = ["other/[]a].toml"]\n'
    )
    monkeypatch.chdir(root)
    code, out, _ = run(capsys, "check")
    assert code == 0, out
    # README.md and the excluded folder left out
    assert out.splitlines()[-1] == "1 file checked, no problems; world size 12"


def test_junit_lists_skipped_files(capsys, tmp_path):
    shutil.copy(KF_7B, tmp_path / "job.toml")
    (tmp_path / "lightning.yaml").write_text(LIGHTNING)
    code, out, _ = run(capsys, "check", str(tmp_path), "--isolated", "--world-size", "12", "--format", "junit")
    assert code == 0
    assert 'tests="2" failures="0" errors="0" skipped="1"' in out
    assert f'name="{tmp_path}/lightning.yaml"' in out and "<skipped message=" in out
