"""The language server while a file is edited beside other servers, in process: what it leaves to a schema
server (`schema_servers.py`), the diagnostics it keeps while the buffer does not parse (`carry.py`), and
string values written in the file's own quoting (`quoting.py`). `test_lsp_server.py` drives each through
a real client."""

from __future__ import annotations

import pytest

from trainspec.editor.lsp.analysis import Analysis, Settings
from trainspec.editor.lsp.carry import carried
from trainspec.editor.lsp.quoting import written
from trainspec.editor.lsp.schema_servers import Left, associations, left, names
from trainspec.editor.lsp.text import Source
from trainspec.families import get_family
from trainspec.read.files import parse
from trainspec.spec.diagnostics import Diagnostic, Related, Severity

from .test_lsp import fixes

KF_JOB = "[model]\ndim = 4096\nn_heads = 32\nn_kv_heads = 8\n\n[distributed]\ntp = 3\n\n[train]\nseq_lenn = 2048\n"


# -- schema servers ----------------------------------------------------------------------------------------


def test_the_settings_name_the_schema_servers_and_what_ties_files_to_schemas():
    raw = {
        "trainspec": {"schemaServers": ["yaml", 3], "rulesOnly": None},
        "yaml": {"schemas": {"./s/axolotl.schema.json": ["ft/*.yml", 1], "x.json": "a.yaml"}},
        "json": {"schemas": [{"fileMatch": ["*.specforge.json"], "url": "./s/specforge.schema.json"}, "junk"]},
        "evenBetterToml.schema.associations": {".*/configs/.*\\.toml$": "file:///s/kempnerforge.schema.json"},
    }
    s = Settings.from_client(raw)
    assert s.rules_only is None and s.schema_servers == {"yaml"}
    assert s.associations == (
        ("glob", "ft/*.yml", "./s/axolotl.schema.json"),
        ("glob", "a.yaml", "x.json"),
        ("glob", "*.specforge.json", "./s/specforge.schema.json"),
        ("regex", ".*/configs/.*\\.toml$", "file:///s/kempnerforge.schema.json"),
    )
    later = Settings.from_client({"trainspec": {"worldSize": 8}}, s)  # a change that does not name them
    assert later.schema_servers == {"yaml"} and later.associations == ()
    assert Settings.from_client({"trainspec": {"schemaServers": []}}, s).schema_servers == frozenset()
    assert Settings.from_client({"rulesOnly": False}).rules_only is False
    assert associations({"yaml": {"schemas": "not a mapping"}}) == ()


@pytest.mark.parametrize(
    ("reference", "named"),
    [
        ("./.trainspec/schemas/kempnerforge.schema.json", True),
        ("file:///repo/.trainspec/schemas/kempnerforge@089fbbd.schema.json", True),
        ("https://example.org/kempnerforge.schema.json?v=2#x", True),
        ("./schemas/specforge.schema.json", False),
        ("kempnerforge.json", False),
    ],
)
def test_a_schema_reference_names_a_family_by_the_file_trainspec_writes(reference, named):
    assert names(reference, get_family("kempnerforge")) is named


@pytest.mark.parametrize(
    ("rules_only", "servers", "tied", "expected"),
    [
        (True, (), "", Left.SCHEMA),
        (False, ("toml",), "#:schema kempnerforge.schema.json\n", Left.NOTHING),
        (None, (), "#:schema kempnerforge.schema.json\n", Left.NOTHING),  # no schema server: say everything
        (None, ("yaml",), "#:schema kempnerforge.schema.json\n", Left.NOTHING),  # one for another format
        (None, ("toml",), "", Left.PARSER),  # taplo, with no schema for the file
        (None, ("toml",), "#:schema kempnerforge.schema.json\n", Left.SCHEMA),
        (None, ("toml",), "#:schema other.schema.json\n", Left.PARSER),  # another schema's problems are others
    ],
)
def test_what_is_left_to_a_schema_server(rules_only, servers, tied, expected):
    doc = parse("/w/job.toml", tied + KF_JOB)
    assert left(rules_only, frozenset(servers), (), "/w/job.toml", doc, get_family("kempnerforge")) is expected


@pytest.mark.parametrize(
    ("association", "file", "expected"),
    [
        (("glob", "configs/*.toml", "./kempnerforge.schema.json"), "/w/configs/job.toml", Left.SCHEMA),
        (("glob", "**/configs/*.toml", "./kempnerforge.schema.json"), "/w/a/configs/job.toml", Left.SCHEMA),
        (("glob", "./configs/*.toml", "./kempnerforge.schema.json"), "/w/configs/job.toml", Left.SCHEMA),
        (("glob", "configs/*.toml", "./kempnerforge.schema.json"), "/w/other/job.toml", Left.PARSER),
        (("glob", "!configs/*.toml", "./kempnerforge.schema.json"), "/w/configs/job.toml", Left.PARSER),
        (("glob", "configs/*.toml", "./specforge.schema.json"), "/w/configs/job.toml", Left.PARSER),
        (("regex", ".*/configs/.*\\.toml$", "kempnerforge.schema.json"), "/w/configs/job.toml", Left.SCHEMA),
        (("regex", "([", "kempnerforge.schema.json"), "/w/configs/job.toml", Left.PARSER),
    ],
)
def test_a_file_the_editor_settings_tie_to_the_schema(association, file, expected):
    doc = parse(file, KF_JOB)
    assert left(None, frozenset({"toml"}), (association,), file, doc, get_family("kempnerforge")) is expected


def test_beside_a_schema_server_the_parser_problems_go_and_the_schema_ones_stay_for_a_file_it_has_no_schema_for():
    settings = Settings(schema_servers=frozenset({"toml"}))
    duplicated = KF_JOB.replace("dim = 4096\n", "dim = 4096\ndim = 4096\n")
    shown = {d.rule for d in Analysis("/w/job.toml", KF_JOB, settings, "utf-16").diagnostics}
    assert {"unknown-key", "tp-divides-heads"} <= shown
    broken = {d.rule for d in Analysis("/w/job.toml", duplicated, settings, "utf-16").diagnostics}
    assert "syntax-error" not in broken  # TOML refuses a duplicate key outright: taplo reports it


# -- the last good diagnostics -----------------------------------------------------------------------------


def diagnostic(line: int, *related: int, rule: str = "some-rule") -> Diagnostic:
    return Diagnostic(
        "f.toml",
        line,
        1,
        ("a",),
        rule,
        Severity.ERROR,
        "m",
        related=tuple(Related(("b",), r, 1) for r in related),
        end_line=line,
        end_column=3,
    )


def test_diagnostics_move_with_the_lines_added_above_them_and_leave_the_lines_changed():
    then = "a\nb\nc\nd\ne\n"
    found = [diagnostic(1), diagnostic(2, 5), diagnostic(4, 1, 3), diagnostic(5), diagnostic(2, rule="syntax-error")]
    now = "a\nb\nNEW\nc\nD\ne\n"  # a line typed after b, and d changed
    moved = carried(found, then, now)
    assert [(d.line, d.end_line, [r.line for r in d.related]) for d in moved] == [
        (1, 1, []),
        (2, 2, [6]),
        (6, 6, []),
    ]  # c and d are one changed stretch: the diagnostic on d is gone, so is the related place on c
    assert all(d.rule != "syntax-error" for d in moved)


def test_a_line_typed_at_the_end_of_another_leaves_that_one_alone():
    then = "a\nb\nc\n"
    moved = carried([diagnostic(2), diagnostic(3)], then, "a\nb\nnew\nc\n")
    assert [d.line for d in moved] == [2, 4]


def test_a_file_level_diagnostic_stays():
    d = Diagnostic("f.toml", None, None, (), "world-size-unknown", Severity.NOTE, "m")
    assert carried([d], "a\n", "b\n") == [d]


def test_the_last_good_diagnostics_are_kept_across_versions_that_do_not_parse():
    file = "/w/job.toml"
    good = Analysis(file, KF_JOB, Settings(), "utf-16")
    half = KF_JOB.replace("[train]\n", "[train]\nmax_st\n")
    broken = Analysis(file, half, Settings(), "utf-16", good)
    more = Analysis(file, half.replace("max_st", "max_ste"), Settings(), "utf-16", broken)
    for analysis in (broken, more):
        rules = {d.rule: d.line for d in analysis.diagnostics}
        assert rules["syntax-error"] == 10 and rules["tp-divides-heads"] == 7 and rules["unknown-key"] == 11
    settings_changed = Analysis(file, half, Settings(world_sizes=(8,)), "utf-16", good)
    assert {d.rule for d in settings_changed.diagnostics} == {"syntax-error"}  # other settings: nothing kept
    assert Analysis(file, half, Settings(), "utf-16").diagnostics == broken.reported  # and nothing before


# -- quoting -----------------------------------------------------------------------------------------------

SF_RUN = "model:\n  target_model_path: Qwen/Qwen3-8B\ndata:\n  train_data_path: {path}\ntraining:\n  {line}\n"


@pytest.mark.parametrize(
    ("path", "line", "fixed"),
    [
        ("train.jsonl", "attention_backend: flex_attentio", "attention_backend: flex_attention"),
        ("train.jsonl", 'attention_backend: "flex_attentio"', 'attention_backend: "flex_attention"'),
        ("train.jsonl", "attention_backend: 'flex_attentio'", "attention_backend: 'flex_attention'"),
        ('"train.jsonl"', "attention_backend: flex_attentio", "attention_backend: flex_attention"),  # its own
        ("'train.jsonl'", "attention_backend: 'flex_attentio'  # x", "attention_backend: 'flex_attention'  # x"),
    ],
)
def test_the_yaml_enum_fix_follows_the_quoting_of_the_value_it_replaces(path, line, fixed):
    text = SF_RUN.format(path=path, line=line)
    offered = fixes(Analysis("/w/run.yaml", text, Settings(), "utf-16"))
    (new,) = [t for title, t in offered.items() if title.startswith("Set training.attention_backend")]
    assert new == SF_RUN.format(path=path, line=fixed)


@pytest.mark.parametrize(
    ("others", "expected"),
    [
        ("  a: 'x'\n  b: 'y'\n  c: \"z\"\n", "'on'"),  # single quotes are the file's
        ('  a: "x"\n  b: y\n', '"on"'),
        ("  a: x\n  b: y\n", '"on"'),  # no quoted string: double quotes
    ],
)
def test_a_value_plain_yaml_reads_otherwise_takes_the_quotes_the_file_uses_most(others, expected):
    text = f"top:\n{others}  value: off_\n"
    doc = parse("/w/x.yaml", text)
    assert written(Source(text), doc, ("top", "value"), "on") == expected
    assert written(Source(text), doc, ("top", "value"), "sdpa") == "sdpa"
    assert written(Source(text), doc, ("top", "value"), "it's") == "it's"  # plain YAML reads it so
    assert written(Source(text), doc, ("top", "missing"), 3) == "3"


def test_a_value_written_where_there_was_none_follows_the_file():
    quoted = 'a: "x"\nb: "y"\nc: z\n'
    plain = "a: x\nb: y\nc: 'z'\n"
    assert written(Source(quoted), parse("/w/x.yaml", quoted), ("d",), "w") == '"w"'
    assert written(Source(plain), parse("/w/x.yaml", plain), ("d",), "w") == "w"
    assert written(Source(plain), parse("/w/x.yaml", plain), ("d",), "on") == "'on'"


def test_a_toml_literal_string_stays_one():
    text = "[model]\nnorm_type = 'rmsnrm'\nname = \"x\"\n"
    doc = parse("/w/job.toml", text)
    assert written(Source(text), doc, ("model", "norm_type"), "rmsnorm") == "'rmsnorm'"
    assert written(Source(text), doc, ("model", "norm_type"), "it's") == '"it\'s"'
    assert written(Source(text), doc, ("model", "name"), "y") == '"y"'
