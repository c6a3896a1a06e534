"""What surrounds the config checks, written by a stranger: project configurations, overlays, paths.

Every message that quotes text a repository controls is run here with a payload that would forge a
GitHub annotation (a newline, then `::error`) and send escape sequences to the terminal; none may
reach stdout or stderr raw. Overlays and project paths stay inside the project. docs/guarantees.md
("Untrusted input") lists the promises these hold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainspec.cli import main
from trainspec.engine.runner import Options, check_file
from trainspec.read.globs import Glob, GlobSet
from trainspec.read.overlay import OverlayError, load_overlay
from trainspec.read.project import ProjectError, forget_projects, load_project
from trainspec.spec.escaping import terminal
from trainspec.spec.overrides import Override

SRC = str(Path(__file__).resolve().parent.parent / "src")
PAYLOAD = "x\n::error file=a,line=1::forged\x1b]0;title\x07\x1b[2J\u202e\u200b"
TOML_PAYLOAD = json.dumps(PAYLOAD)  # a TOML basic string reads JSON's escapes alike (\n, \u001b)
KF = "# trainspec: family=kempnerforge\n[distributed]\ndp_shard = 1\n"


def assert_safe(text: str, github: bool = False) -> None:
    """No raw control or invisible character but newline and tab, and no line a workflow runner would obey
    (with `github`: only the one command per diagnostic, each naming its file first)."""
    assert not [c for c in text if c not in "\n\t" and terminal(c) != c], text
    commands = [line for line in text.splitlines() if line.lstrip().startswith("::")]
    assert all(line.split(" ", 1)[1].startswith("file=") for line in commands) if github else not commands, text


def project(tmp: Path, text: str, name: str = ".trainspec.toml") -> list[str]:
    (tmp / name).write_text(text)
    (tmp / "kf.toml").write_text(KF)
    return ["check", "kf.toml"]


def overlay(tmp: Path, spec: dict[str, object]) -> list[str]:
    (tmp / "o.json").write_text(json.dumps(spec))
    return project(tmp, '[[configs]]\npaths = ["*.toml"]\noverlay = "o.json"\n')


CASES: dict[str, Callable[[Path], list[str]]] = {
    "unknown key in .trainspec.toml": lambda t: project(t, f"{TOML_PAYLOAD} = 1\n"),
    "unknown key in [tool.trainspec]": lambda t: project(
        t, f"[tool.trainspec]\n{TOML_PAYLOAD} = 1\n", "pyproject.toml"
    ),
    "unknown key in a [[configs]] entry": lambda t: project(
        t, f'[[configs]]\npaths = ["*.toml"]\n{TOML_PAYLOAD} = 1\n'
    ),
    "ignore id matching no rule": lambda t: project(t, f"ignore = [{TOML_PAYLOAD}]\n"),
    "select id matching no rule": lambda t: project(t, f"select = [{TOML_PAYLOAD}]\n"),
    "unknown family": lambda t: project(t, f"family = {TOML_PAYLOAD}\n"),
    "world size": lambda t: project(t, f"world-size = {TOML_PAYLOAD}\n"),
    "gpu": lambda t: project(t, f"gpu = {TOML_PAYLOAD}\n"),
    "gpu memory": lambda t: project(t, f"gpu-memory = {TOML_PAYLOAD}\n"),
    "set entry": lambda t: project(t, f"set = [{TOML_PAYLOAD}]\n"),
    "set path": lambda t: project(t, f"set = [{json.dumps('model.' + PAYLOAD + '=1')}]\n"),
    "absolute paths glob": lambda t: project(t, f"[[configs]]\npaths = [{json.dumps('/' + PAYLOAD)}]\n"),
    "missing overlay": lambda t: project(t, f'[[configs]]\npaths = ["*.toml"]\noverlay = {TOML_PAYLOAD}\n'),
    "overlay outside the project": lambda t: project(
        t, f'[[configs]]\npaths = ["*.toml"]\noverlay = {json.dumps("/" + PAYLOAD)}\n'
    ),
    "unknown keys in an overlay": lambda t: overlay(t, {"family": "kempnerforge", "name": "n", PAYLOAD: 1}),
    "unknown overlay family": lambda t: overlay(t, {"family": PAYLOAD, "name": "n"}),
    "overlay model": lambda t: overlay(t, {"family": "kempnerforge", "name": "n", "model": PAYLOAD}),
    "overlay patch": lambda t: overlay(
        t, {"family": "kempnerforge", "name": "n", "patch": [{"op": "remove", "path": "/" + PAYLOAD}]}
    ),
    "overlay on the command line": lambda t: [
        *overlay(t, {"family": "kempnerforge", "name": "n", PAYLOAD: 1}),
        "--overlay",
        "o.json",
    ],
    "broken project file in a hostile folder": lambda t: _nested(t),
    "family on the command line": lambda t: [*project(t, ""), "--family", PAYLOAD],
}


def _nested(tmp: Path) -> list[str]:
    folder = tmp / PAYLOAD.replace("/", "")
    folder.mkdir()
    (folder / ".trainspec.toml").write_text("[[configs]\n")
    (folder / "kf.toml").write_text(KF)
    return ["check", str(folder / "kf.toml")]


@pytest.mark.parametrize("case", CASES)
def test_no_message_prints_repository_text_raw(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    forget_projects()
    args = CASES[case](tmp_path)
    status = main(args)
    out, err = capsys.readouterr()
    assert status in (1, 2), (out, err)
    assert "Traceback" not in out + err
    assert_safe(out)
    assert_safe(err)
    assert "::error file=a" in (out + err).replace("\\n", "\n").replace("\n", ""), "the payload is shown, escaped"


INVISIBLE_KEYS = ("lr\u200b", "a\x85b", "c\x7fd", "e\u2028f", "g\u202eh", "i\U000e0041j", "k\ufeffl")


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif", "junit"])
def test_invisible_and_control_characters_are_escaped_in_every_format(fmt, tmp_path, capsys):
    quoted = ("".join(c if c.isalnum() else f"\\U{ord(c):08x}" for c in key) for key in INVISIBLE_KEYS)
    keys = "".join(f'"{key}" = {n}\n' for n, key in enumerate(quoted))
    (tmp_path / "kf.toml").write_text(f"# trainspec: family=kempnerforge\n[model]\n{keys}")
    main(["check", str(tmp_path / "kf.toml"), "--format", fmt, "--isolated"])
    out = capsys.readouterr().out
    assert_safe(out, github=fmt == "github")
    if fmt == "json":
        found = {d["config_path"] for d in json.loads(out)["diagnostics"] if d["rule"] == "unknown-key"}
        assert found == {f"model.{key}" for key in INVISIBLE_KEYS}, "the escapes read back as the keys"
    elif fmt == "sarif":
        assert "unknown key `lr\\u200b`" in json.loads(out)["runs"][0]["results"][0]["message"]["text"]
    else:
        assert "lr\\u200b" in out


# -- overlays: what a patched schema may ask of the validators ------------------------------------


def write_overlay(tmp: Path, patch: list[dict[str, object]]) -> Path:
    path = tmp / "o.json"
    path.write_text(json.dumps({"family": "kempnerforge", "name": "acme", "patch": patch}))
    return path


def add(value: object, key: str = "acme") -> dict[str, object]:
    return {"op": "add", "path": f"/properties/{key}", "value": value}


FAN_OUT = [
    *(
        {"op": "add", "path": f"/$defs/f{n}", "value": {"anyOf": [{"$ref": f"#/$defs/f{n + 1}"}] * 2}}
        for n in range(40)
    ),
    {"op": "add", "path": "/$defs/f40", "value": {"type": "string"}},
    add({"$ref": "#/$defs/f0"}),
]
REFUSED = {
    "look-ahead": ([add({"type": "string", "pattern": "(?=a)(a+)+$"})], "look-around or a back-reference"),
    "back-reference": ([add({"type": "object", "patternProperties": {"(a)\\1": {}}})], "back-reference"),
    "look-behind in propertyNames": (
        [add({"type": "object", "propertyNames": {"pattern": "(?<!a)b"}})],
        "look-around",
    ),
    "not a regex": ([add({"type": "string", "pattern": "(unclosed"})], "is not a regular expression"),
    "self reference": (
        [{"op": "add", "path": "/$defs/loop", "value": {"$ref": "#/$defs/loop"}}, add({"$ref": "#/$defs/loop"})],
        "refers back to itself",
    ),
    "reference loop through anyOf": (
        [
            {"op": "add", "path": "/$defs/a", "value": {"anyOf": [{"$ref": "#/$defs/b"}]}},
            {"op": "add", "path": "/$defs/b", "value": {"allOf": [{"$ref": "#/$defs/a"}]}},
            add({"$ref": "#/$defs/a"}),
        ],
        "refers back to itself",
    ),
    "2^40 fan-out": (FAN_OUT, "TRAINSPEC_MAX_SCHEMA_NODES"),
    "deep nesting": ([add(json.loads('{"not": ' * 300 + "{}" + "}" * 300))], "nests deeper than 200"),
    "the schema replaced by true": ([{"op": "replace", "path": "", "value": True}], "must stay a JSON object"),
    "unevaluatedProperties": ([add({"type": "object", "unevaluatedProperties": False})], "unevaluatedProperties"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_an_overlay_patch_that_could_hang_a_check_is_refused(case, tmp_path):
    patch, reason = REFUSED[case]
    with pytest.raises(OverlayError, match="the patched schema cannot be used") as caught:
        load_overlay(write_overlay(tmp_path, patch))
    assert reason in str(caught.value)


def test_recursion_through_a_part_of_the_value_is_allowed(tmp_path):
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}
    patch = [{"op": "add", "path": "/$defs/tree", "value": tree}, add({"$ref": "#/$defs/tree"})]
    assert load_overlay(write_overlay(tmp_path, patch)).version.endswith("+acme")


def test_patterns_are_matched_in_linear_time_by_both_validators(tmp_path, monkeypatch):
    """`(a+)+$` and `\\d+x` backtrack in Python's `re` (minutes on a long value): neither validator may
    match a pattern with it; both go through `schema_walk.search` (Rust's linear-time engine)."""
    import jsonschema._keywords
    import jsonschema._utils

    from trainspec.spec import schema_walk
    from trainspec.validate import fast

    class NoBacktracking:
        def __getattr__(self, name: str):
            raise AssertionError(f"re.{name} matched a schema pattern")

    for module in (jsonschema._keywords, jsonschema._utils, fast, schema_walk):
        monkeypatch.setattr(module, "re", NoBacktracking(), raising=False)
    patterns = {"nested": "^(a+)+$", "digits": "\\d+x"}
    patch = [add({"type": "object", "properties": {k: {"type": "string", "pattern": p} for k, p in patterns.items()}})]
    keys = {"type": "object", "patternProperties": {"^(b+)+$": {"type": "integer"}}, "additionalProperties": False}
    patch.append(add(keys, "keys"))
    family = load_overlay(write_overlay(tmp_path, patch))
    config = f'[acme]\nnested = "{"a" * 30_000}!"\ndigits = "{"1" * 30_000}"\n[keys]\n"{"b" * 30_000}!" = 1\nbb = "x"\n'
    (tmp_path / "kf.toml").write_text(config)
    result = check_file(str(tmp_path / "kf.toml"), Options(family=family.id, use_project=False))
    found = {d.config_path[:12] for d in result.diagnostics if d.config_path.startswith(("acme", "keys"))}
    assert found == {"acme.nested", "acme.digits", "keys.bbbbbbb", "keys.bb"}, result.diagnostics


# -- project-file scale and override paths ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("set = [{}]\n".format(", ".join(f'"model.x{n}=1"' for n in range(1001))), "`set` holds 1,001 items"),
        ("exclude = [{}]\n".format(", ".join(f'"d{n}/**"' for n in range(1001))), "`exclude` holds 1,001 items"),
        ('[[configs]]\npaths = ["*.toml"]\n' * 1001, "`configs` holds 1,001 items"),
        ("[[configs]]\npaths = [{}]\n".format(", ".join(f'"d{n}/*"' for n in range(1001))), "`paths` holds 1,001"),
        ('[[configs]]\npaths = ["a/*"]\nworld-size = "1..65536"\n' * 5, "327,680 world sizes"),
    ],
)
def test_a_project_configuration_past_its_budgets_is_refused_before_any_work(tmp_path, text, says):
    (tmp_path / ".trainspec.toml").write_text(text)
    with pytest.raises(ProjectError) as caught:
        load_project(tmp_path / ".trainspec.toml")
    message = caught.value.diagnostics[0].message
    assert says in message and ("TRAINSPEC_MAX_PROJECT_ENTRIES" in message or "PROJECT_WORLD_SIZES" in message)


def test_a_thousand_long_unknown_override_paths_are_each_explained(tmp_path):
    """Each unknown path is compared with every known one: difflib's cheap bounds first, so a thousand
    200-character paths cost about a second, not a minute."""
    (tmp_path / "kf.toml").write_text(KF)
    overrides = tuple(Override(n, f"model.{'x' * 200}{n}.y=1") for n in range(1000))
    result = check_file(str(tmp_path / "kf.toml"), Options(overrides=overrides, use_project=False))
    assert sum(d.rule == "override-unknown-path" for d in result.diagnostics) == 1000


@pytest.mark.parametrize("where", ["api", "project"])
def test_an_override_path_of_many_parts_is_refused_before_it_is_read(tmp_path, where):
    deep = ".".join(["model"] + ["a"] * 20_000) + "=1"
    (tmp_path / "kf.toml").write_text(KF)
    if where == "project":
        (tmp_path / ".trainspec.toml").write_text(f"set = [{json.dumps(deep)}]\n")
        options = Options(use_project=True)
    else:
        options = Options(overrides=(Override(1, deep),), use_project=False)
    forget_projects()
    found = [d.message for d in check_file(str(tmp_path / "kf.toml"), options).diagnostics]
    assert any("20,001 parts, over the limit of 100" in m and "TRAINSPEC_MAX_KEY_PARTS" in m for m in found), found


GLOBS = ["*.toml", "**/x.yaml", "a/**/b/*.json", "[a-c]?/[!x]*", "**", "a/**", "**/**/**/z", "[!-~]x", "é[é-ü]"]
GLOB_PATHS = ["a.toml", "x.yaml", "q/w/x.yaml", "a/b/c.json", "a/z/b/c.json", "b1/yz", "b1/xz", "a", "a/b", "q/z"]


def test_a_compiled_glob_set_matches_what_each_glob_matches():
    for pattern in GLOBS:
        glob = Glob(pattern)
        for path in [*GLOB_PATHS, "/x", "!x", "éö", "a\nb.toml", "a+b(c)/q.toml"]:
            assert GlobSet((glob,)).fullmatch(path) == glob.fullmatch(path), (pattern, path)
    every = GlobSet(tuple(map(Glob, GLOBS[:4])))
    assert [every.fullmatch(p) for p in GLOB_PATHS] == [
        any(Glob(g).fullmatch(p) for g in GLOBS[:4]) for p in GLOB_PATHS
    ]


# -- numbers past Python's digit limit ------------------------------------------------------------

DIGITS = "9" * 5000


def test_editor_init_refuses_a_settings_file_with_a_huge_number_and_leaves_it(tmp_path, monkeypatch, capsys):
    settings = tmp_path / ".vscode" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(f'{{"editor.rulers": [{DIGITS}]}}\n')
    before = settings.read_bytes()
    monkeypatch.chdir(tmp_path)
    assert main(["editor", "init", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "too many digits" in err and "nothing was written" in err and "internal error" not in err
    assert settings.read_bytes() == before


def test_a_limit_variable_of_thousands_of_digits_is_one_clear_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "kf.toml").write_text(KF)
    monkeypatch.setenv("TRAINSPEC_MAX_FILE_BYTES", DIGITS)
    assert main(["check", str(tmp_path / "kf.toml"), "--isolated"]) == 2
    err = capsys.readouterr().err
    assert "TRAINSPEC_MAX_FILE_BYTES=" in err and "whole number from 1 to 10^18" in err
    assert "internal error" not in err and len(err) < 300


@pytest.mark.parametrize("gpu", ["sm_", f"sm_{DIGITS}", f"{DIGITS}.0"])
def test_a_gpu_name_of_thousands_of_digits_is_an_unknown_gpu(tmp_path, gpu):
    (tmp_path / "kf.toml").write_text(f"# trainspec: family=kempnerforge gpu={gpu}\n[distributed]\ndp_shard = 1\n")
    found = check_file(str(tmp_path / "kf.toml"), Options(use_project=False)).diagnostics
    messages = [d.message for d in found if d.is_error]
    assert messages and all("unknown GPU" in m and "set_int_max_str_digits" not in m for m in messages), messages
    assert all(len(m) < 1000 for m in messages)


# -- code from the repository -------------------------------------------------------------------


@pytest.mark.external  # runs `python -m trainspec` in a subprocess
def test_python_m_trainspec_does_not_run_a_dist_info_folder_of_the_working_directory(tmp_path):
    dist = tmp_path / "evil-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[trainspec.families]\nevil = evilmod:FAMILIES\n")
    (tmp_path / "evilmod.py").write_text("import pathlib\npathlib.Path('RAN').write_text('x')\nFAMILIES = []\n")
    (tmp_path / "kf.toml").write_text(KF)
    env = {**os.environ, "PYTHONPATH": SRC}
    for args in (["check", "kf.toml"], ["rules"], ["--version"]):
        done = subprocess.run(
            [sys.executable, "-m", "trainspec", *args], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode in (0, 1), done.stderr
        assert not (tmp_path / "RAN").exists(), args
    done = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.path[0])"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.stdout.strip() in ("", str(tmp_path))  # the folder is on the path for a plain script


@pytest.mark.parametrize("project_file", [True, False])
def test_a_config_linked_to_a_file_outside_the_project_is_refused_unless_allowed(
    tmp_path, monkeypatch, capsys, project_file
):
    outside, repo = tmp_path / "outside", tmp_path / "repo"
    outside.mkdir()
    repo.mkdir()
    (outside / "secret.toml").write_text("[model]\nsecret_token_value = 1\n")
    (repo / "inner.toml").write_text(KF)
    (repo / "link.toml").symlink_to(outside / "secret.toml")
    (repo / "near.toml").symlink_to(repo / "inner.toml")
    if project_file:
        (repo / ".trainspec.toml").write_text('[[configs]]\npaths = ["*.toml"]\nfamily = "kempnerforge"\n')
    monkeypatch.chdir(repo)
    forget_projects()
    assert main(["check", "link.toml", "near.toml", "--family", "kempnerforge"]) == 2
    out = capsys.readouterr().out
    assert "link.toml: error[file-not-readable] is a symbolic link to a file outside" in out
    assert "secret_token_value" not in out and str(outside) not in out
    assert "near.toml" in out and "near.toml: error" not in out  # a link inside the project is read
    assert main(["check", "link.toml", "--family", "kempnerforge", "--allow-outside-links"]) == 1
    assert "secret_token_value" in capsys.readouterr().out


# -- smaller things ---------------------------------------------------------------------------------


def test_a_folder_named_trainspec_toml_is_refused_not_passed_over(tmp_path):
    (tmp_path / ".trainspec.toml").mkdir()
    (tmp_path / "kf.toml").write_text(KF)
    forget_projects()
    result = check_file(str(tmp_path / "kf.toml"), Options(use_project=True))
    assert [d.rule for d in result.diagnostics] == ["invalid-project-config"]
    assert "is a directory" in result.diagnostics[0].message


def test_an_int_subclass_reaches_the_rules_as_a_plain_int():
    import enum

    from trainspec.api import check_config

    class Degree(enum.IntEnum):
        THREE = 3

    class Loud(int):
        def __str__(self) -> str:
            raise RuntimeError("not plain data")

        __repr__ = __str__

    found = check_config({"distributed": {"dp_shard": Degree.THREE, "tp": Loud(1)}}, "kempnerforge", world_size=8)
    assert {d.rule for d in found} >= {"world-size-product"}
    assert not [d for d in found if d.rule in ("internal-error", "hook-failed") or "rule failed" in d.message]
    assert any("dp_shard" in d.message and " 3" in d.message for d in found)


def test_a_large_yaml_without_aliases_is_not_said_to_have_aliases(tmp_path):
    (tmp_path / "big.yaml").write_text("model:\n  k: [" + ", ".join(["1"] * 210_000) + "]\n")
    found = check_file(str(tmp_path / "big.yaml"), Options(family="specforge")).diagnostics
    assert "holds more values, over the limit of 50,000 values" in found[0].message and "alias" not in found[0].message
    laughs = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]\n" for a, b in zip("abcde", "bcdef", strict=True)
    )
    (tmp_path / "laughs.yaml").write_text(laughs)
    found = check_file(str(tmp_path / "laughs.yaml"), Options(family="specforge")).diagnostics
    assert "aliases repeating aliases" in found[0].message


YAML_PIECES = [*"[]{}:,?-*&!|>#'\" \n\ta1", "- ", ": ", "? ", "*a", "&a ", "\n- ", "---\n", "...\n", "!!str ", ":\n"]


def _value_events(text: str) -> int:
    import yaml

    from trainspec.read import yaml as reader

    found = 0
    try:
        for event in yaml.parse(text, Loader=reader._Loader):
            found += isinstance(event, reader._VALUE_EVENTS)
    except yaml.YAMLError:
        pass
    return found


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(YAML_PIECES), max_size=60).map("".join))
def test_a_yaml_text_holds_at_most_two_value_events_a_character(text):
    """The YAML reader counts a document's values before composing it only when the text is long enough to
    hold more than the limit: below `limit / 2` characters no document can."""
    assert _value_events(text) <= 2 * len(text) + 16


def test_the_densest_yaml_holds_fewer_value_events_than_characters():
    for unit in ("-\n", "- ", "[:,", "[?,", "[*a,", "[[", "{:,", "? \n", ":\n", "a:\n"):
        text = unit * 200
        assert _value_events(text) <= len(text), unit


def test_editor_init_escapes_the_schema_folder_it_names(tmp_path, capsys):
    hostile = "x\x1b]0;title\x07\ny"
    assert main(["editor", "init", "--root", str(tmp_path), "--schema-dir", hostile]) == 0
    out, err = capsys.readouterr()
    assert_safe(out)
    assert_safe(err)
    assert "x\\x1b]0;title\\x07\\ny" in out
