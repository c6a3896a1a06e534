"""`trainspec schema` and `trainspec editor init|annotate`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trainspec.api import check_path
from trainspec.cli import main
from trainspec.editor import jsonc
from trainspec.editor.workspace import glob_regex

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def test_schema_prints_the_editor_file(capsys: pytest.CaptureFixture[str]) -> None:
    for family in ("kempnerforge", "specforge"):
        assert main(["schema", family]) == 0
        assert capsys.readouterr().out == (ROOT / "editors" / "schemas" / f"{family}.schema.json").read_text()


def test_schema_of_an_unknown_family_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "nope"]) == 2
    assert "unknown family" in capsys.readouterr().err


def settings_of(root: Path) -> dict:
    """The settings as VS Code reads them (JSON with comments)."""
    tree = jsonc.parse((root / ".vscode" / "settings.json").read_text())
    assert tree is not None and isinstance(tree.value, dict)
    return tree.value


def test_init_writes_schemas_and_associations(tmp_path: Path) -> None:
    assert main(["editor", "init", "--root", str(tmp_path)]) == 0
    settings = settings_of(tmp_path)
    schemas = tmp_path / ".trainspec" / "schemas"
    editor_file = ROOT / "editors" / "schemas" / "kempnerforge.schema.json"
    assert (schemas / "kempnerforge.schema.json").read_text() == editor_file.read_text()
    assert settings["yaml.schemas"]["./.trainspec/schemas/specforge.schema.json"] == [
        "**/examples/configs/*.yaml",
        "**/*.specforge.yaml",
        "**/*.specforge.yml",
        "**/*.specforge.json",
    ]
    json_entry = {"fileMatch": ["**/*.specforge.json"], "url": "./.trainspec/schemas/specforge.schema.json"}
    assert json_entry in settings["json.schemas"]
    toml = settings["evenBetterToml.schema.associations"]
    assert toml[r".*/configs/train/[^/]*\.toml$"] == (schemas / "kempnerforge.schema.json").resolve().as_uri()


def test_init_keeps_existing_settings_and_is_idempotent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vscode = tmp_path / ".vscode"
    vscode.mkdir()
    (vscode / "settings.json").write_text(
        '{\n  // my editor\n  "editor.tabSize": 2, /* block */\n  "url": "http://x//y",\n'
        '  "yaml.schemas": {"other.json": "a.yaml"},\n}\n'
    )
    assert main(["editor", "init", "--root", str(tmp_path), "--family", "specforge", "runs/*.yaml", "runs/*.json"]) == 0
    first = settings_of(tmp_path)
    assert first["editor.tabSize"] == 2 and first["url"] == "http://x//y"
    assert first["yaml.schemas"]["other.json"] == "a.yaml"
    assert first["yaml.schemas"]["./.trainspec/schemas/specforge.schema.json"] == ["runs/*.yaml", "runs/*.json"]
    assert "evenBetterToml.schema.associations" not in first
    assert "// my editor" in (vscode / "settings.json").read_text()  # comments are kept
    assert main(["editor", "init", "--root", str(tmp_path), "--family", "specforge", "runs/*.yaml", "runs/*.json"]) == 0
    assert settings_of(tmp_path) == first


@pytest.mark.parametrize(
    "argv, message",
    [
        (["editor", "init", "configs/*.toml"], "--family"),
        (["editor", "init", "--family", "specforge", "configs/*.cfg"], "file format"),
        (["editor", "init", "--family", "nope"], "unknown family"),
    ],
)
def test_init_usage_errors(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--root", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "glob, matches, misses",
    [
        (
            "**/configs/train/*.toml",
            ["file:///w/configs/train/a.toml", "file:///w/x/configs/train/a.toml"],
            ["file:///w/configs/train/sub/a.toml", "file:///w/configs/train/a.yaml"],
        ),
        ("runs/**/*.toml", ["file:///w/runs/a.toml", "file:///w/runs/x/y/a.toml"], ["file:///w/other/a.toml"]),
        ("*.kempnerforge.toml", ["file:///w/a.kempnerforge.toml"], ["file:///w/akempnerforge.toml"]),
    ],
)
def test_glob_regex_matches_like_the_glob(glob: str, matches: list[str], misses: list[str]) -> None:
    pattern = re.compile(glob_regex(glob))
    assert all(pattern.match(u) for u in matches)
    assert not any(pattern.match(u) for u in misses)


def test_jsonc_keeps_strings() -> None:
    tree = jsonc.parse('{"a": "// not a comment", /* c */ "b": [1,],}')
    assert tree is not None and tree.value == {"a": "// not a comment", "b": [1]}


def test_annotate_toml_keeps_comments_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "configs" / "job.toml"
    path.parent.mkdir()
    original = (CORPUS / "kempnerforge" / "train" / "vlm_7b_mot.toml").read_text()
    path.write_text("#:schema ./old.json\n" + original)
    assert main(["editor", "annotate", "--root", str(tmp_path), str(path)]) == 0
    once = path.read_text()
    assert once == "#:schema ../.trainspec/schemas/kempnerforge.schema.json\n" + original
    assert main(["editor", "annotate", "--root", str(tmp_path), str(path)]) == 0
    assert path.read_text() == once
    result = check_path(path, world_size=4)
    assert result.family is not None and result.family.name == "kempnerforge" and result.ok


def test_annotate_yaml_replaces_an_old_modeline(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    body = (CORPUS / "specforge" / "phi4-eagle3-online.yaml").read_text()
    path.write_text("# my notes\n# yaml-language-server: $schema=https://example.org/old.json\n" + body)
    assert main(["editor", "annotate", "--root", str(tmp_path), str(path)]) == 0
    modeline = "# yaml-language-server: $schema=./.trainspec/schemas/specforge.schema.json\n"
    assert path.read_text() == modeline + "# my notes\n" + body
    assert (tmp_path / ".trainspec" / "schemas" / "specforge.schema.json").is_file()


def test_annotate_keeps_windows_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_bytes(b"model:\r\n  target_model_path: x\r\ndata:\r\n  train_data_path: a\r\n")
    assert main(["editor", "annotate", "--root", str(tmp_path), str(path)]) == 0
    modeline = b"# yaml-language-server: $schema=./.trainspec/schemas/specforge.schema.json"
    assert path.read_bytes().startswith(modeline + b"\r\nmodel:\r\n")


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("run.json", "{}", "JSON has no comments"),
        ("notes.txt", "x", "not a TOML or YAML file"),
        ("other.yaml", "zzz: 1\n", "pass --family"),
        ("missing.toml", None, "no such file"),
    ],
)
def test_annotate_usage_errors(
    name: str, text: str | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    assert main(["editor", "annotate", "--root", str(tmp_path), str(path)]) == 2
    assert message in capsys.readouterr().err


def test_annotate_keeps_a_byte_order_mark_first_and_goes_on_after_a_bad_file(tmp_path, capsys):
    from trainspec.cli import main

    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf[model]\ndim = 64\nn_heads = 4\nn_kv_heads = 4\n")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"model:\n  target_model_path: \xff\n")
    good = tmp_path / "good.toml"
    good.write_text("[model]\ndim = 64\nn_heads = 4\nn_kv_heads = 4\n")
    code = main(
        ["editor", "annotate", "--root", str(tmp_path), str(latin), str(bom), str(good), "--family", "kempnerforge"]
    )
    err = capsys.readouterr().err
    assert code == 2 and f"{latin}: not UTF-8 text" in err and "Traceback" not in err
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf#:schema ")
    assert good.read_text().startswith("#:schema ")
    assert main(["check", str(bom)]) == 0


def test_init_refuses_settings_of_the_wrong_shape_without_a_traceback(tmp_path, capsys):
    from trainspec.cli import main

    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text('{"yaml.schemas": ["a"]}')
    assert main(["editor", "init", "--root", str(tmp_path)]) == 2
    assert "`yaml.schemas` in .vscode/settings.json is not an object" in capsys.readouterr().err


@pytest.mark.parametrize("inside", [True, False])
def test_init_takes_an_absolute_schema_dir(inside: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In the workspace the settings name the schema by a `./` path, outside it by its file URI."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    schema_dir = (workspace if inside else tmp_path) / "editor-schemas"
    argv = ["editor", "init", "--root", str(workspace), "--family", "specforge", "--schema-dir", str(schema_dir)]
    assert main(argv) == 0
    schema = schema_dir / "specforge.schema.json"
    assert schema.is_file()
    ref = "./editor-schemas/specforge.schema.json" if inside else schema.as_uri()
    assert ref in settings_of(workspace)["yaml.schemas"]
    shown = "editor-schemas/specforge.schema.json" if inside else str(schema)
    assert capsys.readouterr().out == f"wrote {shown}\nwrote .vscode/settings.json\n"


def test_annotate_writes_the_schemas_once_at_the_repository_root(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "configs" / "runs"
    deep.mkdir(parents=True)
    path = deep / "run.yaml"
    path.write_text((CORPUS / "specforge" / "phi4-eagle3-online.yaml").read_text())
    monkeypatch.chdir(deep)
    assert main(["editor", "annotate", "run.yaml"]) == 0
    assert path.read_text().startswith(
        "# yaml-language-server: $schema=../../.trainspec/schemas/specforge.schema.json\n"
    )
    assert (tmp_path / ".trainspec" / "schemas" / "specforge.schema.json").is_file()
    assert not (deep / ".trainspec").exists()


def test_an_existing_trainspec_folder_marks_the_workspace(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / ".git").mkdir()
    project = tmp_path / "team"
    (project / ".trainspec").mkdir(parents=True)
    path = project / "job.toml"
    path.write_text((CORPUS / "kempnerforge" / "train" / "debug.toml").read_text())
    monkeypatch.chdir(tmp_path)
    assert main(["editor", "annotate", str(path)]) == 0
    assert path.read_text().startswith("#:schema ./.trainspec/schemas/kempnerforge.schema.json\n")


def test_annotate_outside_a_repository_keeps_one_copy_in_the_working_directory(tmp_path, monkeypatch, capsys):
    """Without a repository, the schemas go where the user works, not into a `.trainspec/` beside each file."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    for folder in (work / "a", work / "b", elsewhere):
        folder.mkdir(parents=True)
    debug = (CORPUS / "kempnerforge" / "train" / "debug.toml").read_text()
    for path in (work / "a" / "x.toml", work / "b" / "y.toml", elsewhere / "z.toml"):
        path.write_text(debug)
    monkeypatch.chdir(work)
    assert main(["editor", "annotate", "a/x.toml", "b/y.toml", str(elsewhere / "z.toml")]) == 2
    assert (work / "a" / "x.toml").read_text().startswith("#:schema ../.trainspec/schemas/kempnerforge.schema.json\n")
    assert (work / "b" / "y.toml").read_text().startswith("#:schema ../.trainspec/schemas/kempnerforge.schema.json\n")
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob(".trainspec")] == ["work/.trainspec"]
    err = capsys.readouterr().err
    assert f"{elsewhere / 'z.toml'}: no workspace holds it" in err and "give --root FOLDER" in err
    assert (elsewhere / "z.toml").read_text() == debug
