"""`trainspec migrate` writes a file only when the rewrite is what it says: otherwise it refuses, and writes nothing.

Each test reproduces a finding of the audit: a legacy key reached through a
YAML merge key was "migrated" into the wrong mapping (or ended in an internal
error), a lone-CR file came back with mixed line endings, and a file with
keys its family does not know was written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trainspec.cli import main
from trainspec.read.text_lines import line_ending

HEAD = "model:\n  target_model_path: m\ndata:\n  train_data_path: /d.jsonl\n"


def migrate(path: Path, capsys) -> tuple[int, str]:
    code = main(["migrate", "--family", "specforge", str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "internal error" not in err
    return code, out + err


@pytest.mark.parametrize(
    "text",
    [
        # the legacy key comes from an anchor merged into `training`
        "base: &d\n  deployment_mode: disaggregated\n" + HEAD + "training:\n  <<: *d\n  num_epochs: 1\n",
        # `training` is merged into another mapping, which the move would change too
        HEAD + "training: &t\n  deployment_mode: disaggregated\n  num_epochs: 1\nother:\n  <<: *t\n",
    ],
)
def test_a_legacy_key_shared_through_a_merge_key_is_refused(tmp_path, capsys, text):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    code, said = migrate(path, capsys)
    assert code == 1
    assert "`training.deployment_mode` sits in a mapping shared through a YAML merge key" in said
    assert path.read_text() == text and [p.name for p in tmp_path.iterdir()] == ["run.yaml"]


@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n"])
def test_migrate_keeps_the_files_own_line_ending(tmp_path, capsys, ending):
    text = (HEAD + "training:\n  deployment_mode: local_colocated\n  num_epochs: 1\n").replace("\n", ending)
    path = tmp_path / "run.yaml"
    path.write_bytes(text.encode())
    assert migrate(path, capsys)[0] == 0
    written = path.read_bytes().decode()
    assert "deployment:" in written
    assert written.count(ending) == len(written.splitlines()) and line_ending(written) == ending
    if ending != "\r\n":
        assert ("\n" if ending == "\r" else "\r") not in written


def test_a_file_with_keys_its_family_does_not_know_is_not_written(tmp_path, capsys):
    text = HEAD + "training:\n  deployment_mode: local_colocated\n  num_epochz: 1\n"
    path = tmp_path / "run.yaml"
    path.write_text(text)
    code, said = migrate(path, capsys)
    assert code == 1
    assert "unknown-key" in said and "num_epochz" in said and "not migrated" in said
    assert path.read_text() == text and [p.name for p in tmp_path.iterdir()] == ["run.yaml"]


def test_line_ending_is_that_of_the_first_line():
    assert [line_ending(t) for t in ("a\rb\n", "a\r\nb\n", "a\nb\r", "a")] == ["\r", "\r\n", "\n", "\n"]
