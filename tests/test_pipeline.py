"""The engine's own layers, one at a time: pipeline, checker, runner, detection, overrides, validation."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest

import trainspec
from trainspec import ConfigError, Family, Severity, TrainspecError, rule
from trainspec.engine.checker import check_document
from trainspec.engine.pipeline import check_path
from trainspec.engine.runner import Options, check_file, check_files, report_file
from trainspec.families import all_families, get_family
from trainspec.read.detect import detect
from trainspec.read.files import parse
from trainspec.spec.diagnostics import Diagnostic
from trainspec.spec.document import ReadError
from trainspec.spec.overrides import Override, apply_overrides
from trainspec.validate.explain import findings

from .conftest import CORPUS

KF = get_family("kempnerforge")
SF = get_family("specforge")
TINY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "model": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "width": {"type": "integer", "minimum": 1, "default": 64, "description": "Width."},
                "heads": {"type": "integer", "minimum": 1, "default": 4, "description": "Heads."},
                "name": {"type": "string", "default": "m", "description": "Name."},
            },
            "default": {},
        }
    },
}


@rule("heads-divide-width", "error", "model.width", "model.heads")
def heads_divide_width(width: int, heads: int):
    """Each head gets width / heads channels."""
    if width % heads:
        yield f"model.width = {width} is not divisible by model.heads = {heads}"


@rule("width-fits-world", "error", "model.width")
def width_fits_world(width: int, world_size: int):
    """The width is split evenly over the ranks."""
    if width % world_size:
        yield f"model.width = {width} does not split over {world_size} ranks"


@pytest.fixture
def tiny(tmp_path: Path) -> Family:
    schema = tmp_path / "tiny.schema.json"
    schema.write_text(json.dumps(TINY_SCHEMA))
    module = tmp_path / "tiny_models.py"
    module.write_text(
        "from pydantic import BaseModel, ConfigDict\n"
        "class Model(BaseModel):\n"
        "    model_config = ConfigDict(extra='forbid')\n"
        "    width: int = 64\n    heads: int = 4\n    name: int = 0\n"  # `name` disagrees with the schema on purpose
        "class Tiny(BaseModel):\n    model: Model = Model()\n"
    )
    sys.path.insert(0, str(tmp_path))
    yield Family(
        name="tiny",
        schema_file=schema,
        model="tiny_models:Tiny",
        rules=[heads_divide_width, width_fits_world],
        formats=frozenset({"yaml"}),
    )
    sys.path.remove(str(tmp_path))
    sys.modules.pop("tiny_models", None)


def test_every_exception_trainspec_raises_shares_one_base():
    from trainspec.editor.schema import NotEditorSafe
    from trainspec.editor.workspace import EditorError
    from trainspec.families import UnknownFamily
    from trainspec.spec.schema import SchemaError
    from trainspec.write.migrate import MigrateError

    for cls in (ConfigError, UnknownFamily, ReadError, SchemaError, NotEditorSafe, EditorError, MigrateError):
        assert issubclass(cls, TrainspecError), cls
    with pytest.raises(TrainspecError):
        get_family("no-such-family")


def test_world_size_rules_run_once_per_size_everything_else_once(tiny, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model:\n  width: 6\n  heads: 4\n")
    calls = []
    original = tiny.schema.fill_defaults
    tiny.schema.fill_defaults = lambda data: calls.append(1) or original(data)  # type: ignore[method-assign]
    found = check_path(path, family=tiny, world_size=[1, 2, 4, 5]).diagnostics
    assert len(calls) == 1
    assert [(d.rule, d.world_size) for d in found] == [
        ("heads-divide-width", None),
        ("world-size-checked", 1),
        ("world-size-checked", 2),
        ("width-fits-world", 4),
        ("width-fits-world", 5),
    ]
    assert found[3].message == "at world size 4: model.width = 6 does not split over 4 ranks"


def test_without_a_world_size_world_size_rules_are_skipped_with_a_note(tiny, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model:\n  width: 8\n")
    (note,) = check_path(path, family=tiny).diagnostics
    assert note.rule == "world-size-unknown" and "width-fits-world" in note.message


def test_an_unexpected_exception_is_an_internal_error_and_the_run_goes_on(tiny, tmp_path, monkeypatch):
    good, bad = tmp_path / "a.yaml", tmp_path / "b.yaml"
    good.write_text("model:\n  width: 6\n")
    bad.write_text("model:\n  width: 8\n")
    original = tiny.schema.fill_defaults

    def explode(data):
        if data["model"]["width"] == 8:
            raise KeyError("boom")
        return original(data)

    monkeypatch.setattr(tiny.schema, "fill_defaults", explode)
    first, second = (check_path(p, family=tiny, world_size=2) for p in (good, bad))
    assert [d.rule for d in first.diagnostics] == ["heads-divide-width"]
    (failure,) = second.diagnostics
    assert failure.rule == "internal-error" and failure.file == str(bad)
    assert "KeyError" in failure.message and "bug in trainspec" in failure.message


def test_a_failing_family_hook_is_reported_and_the_check_goes_on(tmp_path):
    def normalize(data):
        raise RuntimeError("plug-in bug")

    family = Family(
        name="hooked",
        schema_file=KF.schema_file,
        model=KF.model,
        rules=KF.rules,
        formats=frozenset({"toml"}),
        normalize=normalize,
    )
    path = tmp_path / "job.toml"
    path.write_text("[model]\ndim = 4100\n")
    rules = [d.rule for d in check_path(path, family=family).diagnostics]
    assert "hook-failed" in rules and "model-heads-divide-dim" in rules
    (failed,) = [d for d in check_path(path, family=family).diagnostics if d.rule == "hook-failed"]
    assert "normalize hook of family hooked" in failed.message and "RuntimeError: plug-in bug" in failed.message


def test_load_reports_a_model_that_refuses_what_the_schema_accepts(tiny, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model:\n  width: 8\n  name: wide\n")
    with pytest.raises(ConfigError) as caught:
        trainspec.load(path, family=tiny, world_size=2)
    (d,) = caught.value.diagnostics
    assert (d.rule, d.config_path) == ("model-mismatch", "model.name")


def test_load_issues_warnings_and_returns_the_model_class_asked_for():
    from trainspec.generated.kempnerforge import JobConfig

    path = CORPUS / "kempnerforge" / "train" / "7b_12gpu_tp4.toml"
    with pytest.warns(trainspec.ConfigWarning) if _has_warning(path) else _no_warning():
        config = trainspec.load(path, model=JobConfig, world_size=12)
    assert type(config) is JobConfig
    with pytest.raises(TypeError, match="no registered family builds"):
        trainspec.load(path, model=int)  # type: ignore[type-var]


def _has_warning(path: Path) -> bool:
    return any(d.severity is Severity.WARNING for d in trainspec.check(path, world_size=12))


class _no_warning:
    def __enter__(self) -> None:
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", trainspec.ConfigWarning)

    def __exit__(self, *exc: object) -> None:
        self._catch.__exit__(*exc)


def test_a_load_warning_is_a_config_warning_carrying_its_diagnostic(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text("[model]\nnum_experts = 4\n\n[train]\ncompile_model = true\n")
    with pytest.warns(trainspec.ConfigWarning) as caught:
        trainspec.load(path)
    assert [w.message.diagnostic.rule for w in caught] == ["moe-compile"]  # type: ignore[union-attr]


def test_overrides_repairing_the_file_are_found_without_reading_it_again(tmp_path, monkeypatch):
    path = tmp_path / "job.toml"
    path.write_text("[model]\ndim = 4100\n")
    reads = []
    import trainspec.engine.pipeline as pipeline

    original = pipeline.read_text
    monkeypatch.setattr(pipeline, "read_text", lambda p: reads.append(p) or original(p))
    found = check_path(path, overrides=["model.dim=4096"]).diagnostics
    assert reads == [str(path)]
    assert [d.rule for d in found if d.severity is not Severity.NOTE] == ["override-repairs-file"]


def test_a_result_crosses_processes_without_its_config_and_with_its_family_by_name(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text("[model]\ndim = 4100\n")
    result = report_file(str(path), Options())
    assert result.config is None and result.document is None
    assert result.lines == {2: "dim = 4100"}
    copy = pickle.loads(pickle.dumps(result))
    assert copy.family is KF and copy.diagnostics == result.diagnostics


def test_the_process_that_checked_a_file_keeps_its_document_and_config(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text("[model]\ndim = 4100\n")
    result = check_file(str(path), Options(world_sizes=(8,)))
    assert result.document is not None and result.document.text == "[model]\ndim = 4100\n"
    assert result.config is not None and result.config["model"]["dim"] == 4100
    assert result.world_size == 8 and result.family is KF
    assert result.diagnostics == report_file(str(path), Options(world_sizes=(8,))).diagnostics


def test_many_files_in_a_pool_give_what_one_process_gives(tmp_path):
    files = []
    for n in range(30):
        path = tmp_path / f"job{n:02}.toml"
        path.write_text(f"[model]\ndim = {4096 + n}\n")
        files.append(str(path))
    serial = check_files(files, Options(), jobs=1)
    pooled = check_files(files, Options(), jobs=2)
    assert [r.diagnostics for r in serial] == [r.diagnostics for r in pooled]
    assert sum(not r.ok for r in serial) == 29


def test_select_ignore_and_warnings_as_errors_apply_per_file(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text("[model]\ndim = 4100\nnum_experts = 4\n\n[train]\ncompile_model = true\n")
    everything = {d.rule for d in check_file(str(path), Options()).diagnostics}
    assert {"model-heads-divide-dim", "moe-compile"} <= everything
    only = check_file(str(path), Options(select=("moe",), warnings_as_errors=True)).diagnostics
    assert [(d.rule, d.severity) for d in only] == [("moe-compile", Severity.ERROR)]
    ignored = check_file(str(path), Options(ignore=("model-heads",))).diagnostics
    assert "model-heads-divide-dim" not in {d.rule for d in ignored}


def test_detection_by_directive_then_by_shape():
    families = all_families()
    named = parse("x.yaml", "# yaml-language-server: $schema=../specforge.schema.json\nfoo: 1\n")
    assert detect(named, families)[0] is SF
    toml = parse("x.toml", "[model]\ndim = 1\n")
    assert detect(toml, families)[0] is KF
    unknown = parse("x.yaml", "seed_everything: 1\n")
    family, why = detect(unknown, families)
    assert family is None and why


def test_overrides_are_typed_by_the_schema_and_numbered(tmp_path):
    doc = parse("job.toml", "[model]\ndim = 4096\n")
    found = apply_overrides(
        doc,
        [Override(1, "model.n_heads=16"), Override(2, "optimizer.betas=[0.8, 0.9]"), Override(3, "x.y=1")],
        KF.schema,
    )
    assert doc.data["model"]["n_heads"] == 16 and doc.data["optimizer"]["betas"] == [0.8, 0.9]
    assert [(d.rule, d.origin) for d in found] == [("override-unknown-path", "override #3 (--set x.y=1)")]


def test_validation_findings_name_paths_and_rules():
    data = {"model": {"dim": "wide", "n_head": 3}, "train": {"seq_len": 0}}
    found = {(f.path, f.rule) for f in findings(KF.schema, KF.validator, data)}
    assert (("model", "dim"), "wrong-type") in found
    assert (("model", "n_head"), "unknown-key") in found
    assert any(path == ("train", "seq_len") for path, _ in found)


def test_check_document_reports_every_stage_at_once():
    doc = parse("job.toml", "[model]\ndim = 4100\nn_head = 3\n\n[train]\nseq_len = 0\n")
    rules = {d.rule for d in check_document(doc, KF, (), (8,)).diagnostics}
    assert {"unknown-key", "model-heads-divide-dim"} <= rules and len(rules) >= 3


def test_diagnostics_read_as_one_line_wherever_they_have_no_line():
    d = Diagnostic(
        "job.toml", None, None, (), "world-size-unknown", Severity.NOTE, "m", origin="override #1 (--set a=1)"
    )
    assert d.one_line() == "job.toml: override #1 (--set a=1): note[world-size-unknown] m"
    bare = Diagnostic("job.toml", None, None, (), "x", Severity.ERROR, "m")
    assert str(ConfigError([bare])).splitlines()[1] == "job.toml: error[x] m"
