"""`trainspec lsp` driven over stdio as an editor drives it: which buffers it speaks about, hover on
diagnostics, completion of values and snippets, the outline, inlay hints and the jumps between the
keys a rule reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from .lsp_client import markup_text
from .test_lsp_server import KF_JOB, SF_RUN, by_code, client, rng, start  # noqa: F401 (client: a fixture)

pytestmark = pytest.mark.external  # launches the server process

WORKFLOW = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"
KUBERNETES = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: trainer\nspec:\n  containers: []\n"
PYPROJECT = '[project]\nname = "job"\nversion = "0.1"\n'


@pytest.mark.parametrize(
    ("name", "language", "text"),
    [
        ("pyproject.toml", "toml", PYPROJECT),
        (".github/workflows/ci.yml", "yaml", WORKFLOW),
        ("deploy/pod.yaml", "yaml", KUBERNETES),
        ("package.json", "json", '{"name": "x", "version": "1.0.0"}'),
    ],
)
def test_a_file_that_is_no_config_gets_nothing(client, tmp_path, name, language, text):
    uri = (tmp_path / name).as_uri()
    assert client.check(uri, language, text) == []
    assert client.hover(uri, 0, 1) is None
    assert client.code_actions(uri, rng(0, 0, 1), []) == []


def test_a_file_a_directive_or_a_project_glob_names_is_told_its_family_is_unknown(tmp_path):
    (tmp_path / ".trainspec.toml").write_text('[[configs]]\npaths = ["configs/**/*.yaml"]\n')
    client = start(tmp_path)
    uri = (tmp_path / "pod.yaml").as_uri()
    (hint,) = client.check(uri, "yaml", "# trainspec: world-size=8\n" + KUBERNETES)
    assert hint["code"] == "unknown-family"

    uri = (tmp_path / "configs" / "pod.yaml").as_uri()
    (hint,) = client.check(uri, "yaml", KUBERNETES)
    assert hint["code"] == "unknown-family"
    uri = (tmp_path / "deploy" / "pod.yaml").as_uri()
    assert client.check(uri, "yaml", KUBERNETES) == []
    client.shutdown()
