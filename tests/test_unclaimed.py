"""A file a walk, a glob or a hook finds that looks like a family's config but that no family claims is an
`unclaimed-config` warning in every output format, never a silent skip; files that look like no config
(a workflow, a docker-compose file) are listed as skipped in the summary line."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from trainspec.cli import main
from trainspec.spec.codes import UNCLAIMED_CONFIG

NO_BASE_MODEL = textwrap.dedent(
    """\
    datasets:
      - path: mhenrichsen/alpaca_2k_test
        type: alpaca
    micro_batch_size: 2
    gradient_accumulation_steps: 1
    num_epochs: 1
    learning_rate: 0.0002
    output_dir: ./out
    """
)
"""An Axolotl config without its required `base_model`: detection cannot attribute it."""
WORKFLOW = "name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest\n"
COMPOSE = "services:\n  web:\n    image: nginx\nvolumes:\n  data: {}\n"
HINT = 'pass --family axolotl, or give it `family = "axolotl"` in a `[[configs]]` entry of the project configuration'


def run(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "sft.yaml").write_text(NO_BASE_MODEL)
    (configs / "ci.yml").write_text(WORKFLOW)
    (configs / "docker-compose.yml").write_text(COMPOSE)
    return configs


def test_a_config_no_family_claims_is_a_warning_at_the_file(capsys, folder):
    code, out = run(capsys, "check", "configs", "--isolated")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("configs/sft.yaml:1:1: warning[unclaimed-config] not checked, no family claims this")
    assert "it lacks the required `base_model`" in lines[0] and lines[0].endswith(HINT)
    assert lines[-1] == (
        "0 error(s), 1 warning(s) in 1 file; 2 skipped, no known family: configs/ci.yml, configs/docker-compose.yml"
    )


def test_warnings_as_errors_fails_the_run_on_it(capsys, folder):
    code, out = run(capsys, "check", "configs", "--isolated", "--warnings-as-errors")
    assert code == 1
    assert "configs/sft.yaml:1:1: error[unclaimed-config]" in out
    (folder.parent / ".trainspec.toml").write_text("warnings-as-errors = true\n")
    code, out = run(capsys, "check", "configs")
    assert code == 1 and "error[unclaimed-config]" in out


def test_ignoring_it_lists_the_file_as_skipped_not_as_clean(capsys, folder):
    code, out = run(capsys, "check", "configs", "--isolated", "--ignore", UNCLAIMED_CONFIG.id)
    assert code == 0
    assert out.splitlines()[-1].startswith("0 files checked, no problems; 3 skipped, no known family: configs/ci.yml")
    assert "configs/sft.yaml" in out


def test_every_format_reports_it(capsys, folder):
    code, out = run(capsys, "check", "configs", "--isolated", "--format", "json")
    report = json.loads(out)
    [d] = report["diagnostics"]
    assert (d["file"], d["line"], d["column"], d["rule"], d["severity"]) == (
        "configs/sft.yaml",
        1,
        1,
        UNCLAIMED_CONFIG.id,
        "warning",
    )
    assert [s["file"] for s in report["skipped"]] == ["configs/ci.yml", "configs/docker-compose.yml"]
    assert report["summary"]["warnings"] == 1 and code == 0

    code, out = run(capsys, "check", "configs", "--isolated", "--format", "github")
    assert out.startswith("::warning file=configs/sft.yaml,line=1,col=1,title=trainspec [unclaimed-config]::")

    code, out = run(capsys, "check", "configs", "--isolated", "--format", "sarif")
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["ruleId"] == UNCLAIMED_CONFIG.id and result["level"] == "warning"
    region = result["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == "configs/sft.yaml" and region["region"]["startLine"] == 1

    code, out = run(capsys, "check", "configs", "--isolated", "--format", "junit")
    cases = {c.get("name"): c for c in ET.fromstring(out).iter("testcase")}
    assert "warning[unclaimed-config]" in (cases["configs/sft.yaml"].findtext("system-out") or "")
    assert cases["configs/ci.yml"].find("skipped") is not None


def test_a_named_file_stays_an_error_and_a_hook_warns(capsys, folder):
    code, out = run(capsys, "check", "configs/sft.yaml", "--isolated")
    assert code == 2 and "configs/sft.yaml:1:1: error[unknown-family]" in out
    code, out = run(capsys, "check", "configs/sft.yaml", "configs/ci.yml", "--isolated", "--skip-unknown")
    assert code == 0
    assert "configs/sft.yaml:1:1: warning[unclaimed-config]" in out
    assert out.splitlines()[-1].endswith("1 skipped, no known family: configs/ci.yml")


def test_the_project_globs_warn_too(capsys, folder):
    (folder.parent / ".trainspec.toml").write_text('[[configs]]\npaths = ["configs/*.yaml"]\n')
    code, out = run(capsys, "check")
    assert code == 0 and "configs/sft.yaml:1:1: warning[unclaimed-config]" in out


def test_the_hints_project_entry_checks_the_file(capsys, folder):
    (folder.parent / ".trainspec.toml").write_text('[[configs]]\npaths = ["configs/*.yaml"]\nfamily = "axolotl"\n')
    code, out = run(capsys, "check")
    assert code == 1 and "unclaimed-config" not in out and "`base_model`" in out  # the hint's fix: checked


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("partial.yaml", "learning_rate: 0.1\nnum_epochs: 3\noutput_dir: out\nmy_tool_option: 1\n"),
        ("kf.json", '{"model": {"dim": 4096}, "train": {"batch_size": 8}}'),  # a family's keys, another format
    ],
)
def test_files_whose_keys_are_partly_a_familys_warn(capsys, tmp_path, name, text):
    (tmp_path / name).write_text(text)
    code, out = run(capsys, "check", str(tmp_path), "--isolated")
    assert code == 0 and f"{tmp_path}/{name}:1:1: warning[unclaimed-config]" in out


@pytest.mark.parametrize(
    "text",
    [
        "lora_r: 8\n",  # one key: too little to be a config
        "adapter: lora\n",  # one key of a family of another format
        "lora_r: 8\nfoo: 1\nbar: 2\nbaz: 3\nqux: 4\n",  # one key in five
        "",  # empty
    ],
)
def test_files_that_look_like_no_config_are_listed_as_skipped(capsys, tmp_path, text):
    (tmp_path / "other.yaml").write_text(text)
    code, out = run(capsys, "check", str(tmp_path), "--isolated")
    assert code == 0 and "unclaimed-config" not in out
    assert out.splitlines()[-1] == f"0 files checked, no problems; 1 skipped, no known family: {tmp_path}/other.yaml"


def test_the_message_is_escaped(capsys, tmp_path):
    text = 'learning_rate: 0.1\nnum_epochs: 3\noutput_dir: out\n"evil\\x1b[2J\\nkey": 1\nother: 2\n'
    (tmp_path / "x.yaml").write_text(text)
    for fmt in ("text", "github"):
        _, out = run(capsys, "check", str(tmp_path), "--isolated", "--format", fmt)
        assert "unclaimed-config" in out and "evil\\x1b[2J" in out  # the key, shown and escaped
        assert "\x1b" not in out and "\nkey" not in out
