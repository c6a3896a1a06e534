"""The `trainspec check` command: output shape, exit codes, file-level errors, overrides."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from trainspec.cli import main

from .conftest import CORPUS, FAILS_WHEN_BUILT, corpus_world_size

KF_TRAIN = sorted((CORPUS / "kempnerforge" / "train").glob("*.toml"))
KF_MODEL = sorted((CORPUS / "kempnerforge" / "model").glob("*.toml"))
PINNED = {"13b_24gpu_validation", "29b_32gpu_tp4_pp2", "70b_32gpu_tp4", "7b_12gpu_tp4", "moe_24gpu", "moe_8gpu_stress"}


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("path", KF_TRAIN + KF_MODEL, ids=lambda p: p.name)
def test_corpus_is_clean_at_its_world_size(capsys, path):
    size = corpus_world_size(path)
    code, out, _ = run(capsys, "check", str(path), "--world-size", str(size))
    if path.name in FAILS_WHEN_BUILT:
        assert code == 1 and f"error[{FAILS_WHEN_BUILT[path.name]}]" in out and "1 error(s)" in out, out
        return
    assert code == 0, out
    assert out.strip().endswith(f"no problems; world size {size}"), out


@pytest.mark.parametrize("path", KF_TRAIN, ids=lambda p: p.name)
def test_pinned_dp_shard_fails_world_size_rule_at_one(capsys, path):
    code, out, _ = run(capsys, "check", str(path), "--world-size", "1", "--format", "json")
    rules = {d["rule"] for d in json.loads(out)["diagnostics"] if d["severity"] == "error"}
    if path.stem in PINNED:
        built = {FAILS_WHEN_BUILT[path.name]} if path.name in FAILS_WHEN_BUILT else set()
        assert code == 1 and rules == {"world-size-product", *built}
    else:
        assert code == 0 and not rules


def test_text_lines_are_sorted_and_summarised(capsys, write):
    path = write("job.toml", "[train]\nseq_len = 4096\nbatch_size = 0\n[model]\ndimm = 1\n")
    code, out, _ = run(capsys, "check", str(path))
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == f"{path}:2:1: error[seq-len-within-max] train.seq_len = 4096 exceeds model.max_seq_len = 2048"
    assert lines[1].startswith(f"{path}:3:14: error[out-of-range] `train.batch_size` = 0 must be >= 1")
    assert lines[2].startswith(f"{path}:5:1: error[unknown-key] unknown key `dimm` in model; did you mean `dim`?")
    assert lines[-1] == "3 error(s), 0 warning(s) in 1 file; no world size, world-size rules not checked"


def test_json_format_has_every_field(capsys, write):
    path = write("job.toml", "[model]\nn_heads = 0\n")
    code, out, _ = run(capsys, "check", str(path), "--format", "json")
    doc = json.loads(out)
    (d,) = [d for d in doc["diagnostics"] if d["severity"] != "note"]
    assert code == 1
    assert d == {
        **d,
        "file": str(path),
        "line": 2,
        "column": 11,
        "config_path": "model.n_heads",
        "rule": "out-of-range",
        "severity": "error",
    }
    assert doc["summary"]["errors"] == 1


def test_unknown_key_in_the_wrong_section_names_the_right_one(capsys, write):
    path = write("job.toml", "dim = 4096\n[train]\nlr = 0.1\n")
    _, out, _ = run(capsys, "check", str(path), "--family", "kempnerforge")
    assert "unknown key `dim` in the top level; did you mean `model.dim`?" in out
    assert "unknown key `lr` in train; did you mean `optimizer.lr`?" in out


@pytest.mark.parametrize(
    ("name", "text", "code", "rule", "line"),
    [
        ("bad.toml", "[model]\ndim = = 3\n", 1, "syntax-error", 2),
        ("bad.yaml", "model:\n  dim: [1\n", 1, "syntax-error", 2),  # the line of the unclosed `[`
        ("bad.json", '{"model": {"dim": 1,}}', 1, "syntax-error", 1),
        (
            "dup.yaml",
            "model:\n  target_model_path: a\n  target_model_path: b\ndata:\n  train_data_path: d\n",
            1,
            "duplicate-key",
            3,
        ),
        (
            "dup.json",
            '{"model": {"target_model_path": "a", "target_model_path": "b"}, "data": {"train_data_path": "d"}}',
            1,
            "duplicate-key",
            1,
        ),
        ("list.yaml", "- model\n- train\n", 1, "not-a-mapping", 1),
        ("section.toml", "model = 5\n", 1, "wrong-type", 1),
        ("empty.yaml", "", 1, "not-a-mapping", 1),
    ],
)
def test_file_level_errors_are_located_never_tracebacks(capsys, write, name, text, code, rule, line):
    path = write(name, text)
    family = "kempnerforge" if name.endswith(".toml") else "specforge"  # the family that reads the format
    got, out, err = run(capsys, "check", str(path), "--family", family)
    assert got == code and "Traceback" not in out + err
    first = out.splitlines()[0]
    assert f"error[{rule}]" in first and first.startswith(f"{path}:{line}:"), first


def test_missing_file_and_unknown_family_are_usage_errors(capsys, tmp_path):
    code, out, _ = run(capsys, "check", str(tmp_path / "nope.toml"))
    assert code == 2 and "error[file-not-found]" in out
    code, _, err = run(capsys, "check", "--family", "nope", str(tmp_path / "x.toml"))
    assert code == 2 and "unknown family 'nope'" in err and "kempnerforge" in err


def test_bad_world_size_is_a_usage_error(capsys, write):
    path = write("job.toml", "")
    with pytest.raises(SystemExit) as exc:
        main(["check", str(path), "--world-size", "0"])
    assert exc.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err


def test_warnings_alone_exit_zero(capsys, write):
    path = write("job.toml", "[model]\nnum_experts = 4\n")
    code, out, _ = run(capsys, "check", str(path))
    assert code == 0 and "warning[moe-compile]" in out


def test_overrides_are_checked_and_located(capsys, write):
    path = write("job.toml", "[train]\nseq_len = 1024\n")
    code, out, _ = run(capsys, "check", str(path), "--set", "train.seq_len=8192", "--set", "optimizer.betas=[0.9,1.5]")
    assert code == 1
    assert f"{path}: override #1 (--set train.seq_len=8192): error[seq-len-within-max]" in out
    assert "override #2 (--set optimizer.betas=[0.9,1.5]): error[betas-range]" in out


def test_override_repairs_a_file_and_kempnerforge_style_works(capsys, write):
    path = write("job.toml", "[train]\nseq_len = 4096\n")
    assert run(capsys, "check", str(path))[0] == 1
    assert run(capsys, "check", str(path), "--model.max_seq_len=4096")[0] == 0
    code, _out, _ = run(capsys, "check", str(path), "--set", "model.max_seq_len=4096", "--train.compile_model")
    assert code == 0


def test_override_unknown_path_names_the_closest(capsys, write):
    path = write("job.toml", "")
    code, out, _ = run(capsys, "check", str(path), "--set", "model.n_head=8")
    assert code == 1
    assert "error[override-unknown-path] `model.n_head` is not a config path; did you mean `model.n_heads`?" in out


def test_override_values_typed_by_schema(capsys, write):
    path = write("job.toml", "")
    code, out, _ = run(
        capsys,
        "check",
        str(path),
        "--set",
        "optimizer.lr=3e-4",
        "--set",
        "data.tokenizer_path=007",
        "--set",
        "checkpoint.load_path=null",
        "--set",
        "train.compile_model=true",
    )
    assert code == 0, out


def test_override_null_removes_an_optional_section(capsys, write):
    path = write("job.toml", '[vlm]\narch = "mot"\n')
    assert run(capsys, "check", str(path))[0] == 1  # vlm needs vision_encoder
    code, out, _ = run(capsys, "check", str(path), "--vlm=None")
    assert code == 1  # the merged config is fine, but KempnerForge checks the file first
    assert "error[override-repairs-file]" in out and "error[vlm-needs-vision-encoder]" not in out


def test_override_into_absent_optional_section_creates_it(capsys, write):
    path = write("job.toml", "")
    code, out, _ = run(capsys, "check", str(path), "--set", "vlm.max_text_len=64")
    assert code == 1 and "error[vlm-needs-vision-encoder]" in out


def test_family_is_detected_from_modeline_and_shape(capsys, write):
    toml = write("job.toml", "#:schema ./kempnerforge.schema.json\n[model]\ndim = 64\nn_heads = 4\nn_kv_heads = 4\n")
    assert run(capsys, "check", str(toml))[0] == 0
    yaml = write("run.yaml", "model:\n  target_model_path: x\ndata:\n  train_data_path: d.jsonl\n")
    code, out, _ = run(capsys, "check", str(yaml), "--format", "json")
    assert json.loads(out)["diagnostics"] == [] or code in (0, 1)
    assert "unknown-family" not in out


@pytest.mark.external
def test_module_entry_point_runs(tmp_path):
    path = CORPUS / "kempnerforge" / "train" / "7b.toml"
    proc = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", str(path), "--world-size", "4"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and "no problems" in proc.stdout


def test_messages_say_why_a_conditional_constraint_applies(capsys, write):
    path = write(
        "job.toml",
        "[model]\nnum_experts = 4\nmoe_top_k = 0\n[train]\ncompile_model = false\n[distributed]\ndp_shard = 0\n",
    )
    _, out, _ = run(capsys, "check", str(path))
    assert "`model.moe_top_k` = 0 must be >= 1 (this applies when `model.num_experts` >= 1)" in out
    assert "`distributed.dp_shard` = 0 is not valid: must be -1 (auto: every rank left after" in out


def test_an_exact_key_of_another_section_beats_a_near_miss(capsys, write):
    path = write("job.toml", "[model]\nbatch_size = 3\n")
    _, out, _ = run(capsys, "check", str(path), "--family", "kempnerforge")
    assert "unknown key `batch_size` in model; did you mean `train.batch_size`?" in out


def test_switching_a_union_variant_by_override_is_judged_alike_in_any_order(capsys, write):
    path = write(
        "job.toml",
        '[vision_encoder]\ntype = "random"\nnum_tokens = 16\n[data]\nhf_dataset_name = "c"\n'
        'tokenizer_path = "gpt2"\n[vlm]\narch = "joint_decoder"\n',
    )
    key, arch = "vlm.cross_attention_every_n_layers=2", "vlm.arch=cross_attention"
    # the merged config is a valid cross_attention [vlm]; KempnerForge keeps the file's joint_decoder variant
    for order in ((key, arch), (arch, key)):
        code, out, _ = run(capsys, "check", str(path), "--set", order[0], "--set", order[1])
        assert code == 1 and out.count("error[") == 1
        assert "error[override-refused-by-loader] kempnerforge applies the overrides to the config it loaded" in out
        assert "cross_attention_every_n_layers" in out
    code, out, _ = run(capsys, "check", str(path), "--set", key)
    assert code == 1 and 'unknown key `cross_attention_every_n_layers` in vlm (for arch = "joint_decoder")' in out


def test_problems_caused_by_an_override_name_it(capsys, write):
    path = write("job.toml", "[model]\ndim = 4096\n")
    _, out, _ = run(capsys, "check", str(path), "--set", "vlm.arch=mot")
    assert f"{path}: override #1 (--set vlm.arch=mot): error[vlm-needs-vision-encoder]" in out


def test_kempnerforge_style_values_are_python_literals(capsys, write):
    path = write("job.toml", "")
    code, out, _ = run(
        capsys,
        "check",
        str(path),
        "--optimizer.betas=0.85,0.98",
        "--model.max_seq_len=4_096",
        "--checkpoint.load_path=None",
        "--data.tokenizer_path=1e3",
        "--train.compile_model",
        "--format",
        "json",
    )
    assert code == 0, out
    import trainspec

    config = trainspec.load(path, overrides=[])
    assert config.optimizer.betas == [0.9, 0.95]  # the file itself is untouched
    code, out, _ = run(capsys, "check", str(path), "--optimizer.betas=(0.85,1.5)")
    assert code == 1 and "override #1 (--optimizer.betas=(0.85,1.5)): error[betas-range]" in out


def test_ids_reported_by_migrations_can_be_selected_and_explained(capsys, write):
    path = write(
        "run.yaml",
        "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\n"
        "training:\n  deployment_mode: local_colocated\n",
    )
    code, out, _ = run(capsys, "check", str(path), "--ignore", "legacy-key-migrated")
    assert code == 0 and "legacy-key-migrated" not in out
    code, out, _ = run(capsys, "explain", "legacy-key-migrated")
    assert code == 0 and "trainspec migrate" in out


def test_an_override_that_repairs_a_file_is_an_error_since_kempnerforge_checks_the_file_first(capsys, write):
    broken = write("job.toml", "[model]\ndim = 4100\n")
    code, out, _ = run(capsys, "check", str(broken), "--set", "model.dim=4096")
    assert code == 1
    assert (
        f"{broken}:2:1: error[override-repairs-file] without the overrides this file fails "
        "model-heads-divide-dim" in out
    )
    assert "refuses the launch: fix the file itself" in out
    launch = write("launch.toml", "[train]\nseq_len = 4096\n")  # a launch-time rule sees the merged config
    code, out, _ = run(capsys, "check", str(launch), "--set", "model.max_seq_len=4096")
    assert code == 0 and "override-repairs-file" not in out


def test_world_size_ranges_check_every_size_and_refuse_nonsense(capsys, write):
    path = write("job.toml", "[distributed]\ndp_shard = 4\n")
    code = main(["check", str(path), "--world-size", "3..5,8", "--format", "json"])
    found = json.loads(capsys.readouterr().out)["diagnostics"]
    assert code == 1
    assert sorted({d["world_size"] for d in found}) == [3, 4, 5, 8]
    assert [d["world_size"] for d in found if d["rule"] == "world-size-checked"] == [4]
    for bad in ("5..3", "1..1000000000", "0..4"):
        with pytest.raises(SystemExit) as exit_:
            main(["check", str(path), "--world-size", bad])
        assert exit_.value.code == 2
    assert "at most 65536 world sizes" in capsys.readouterr().err


def test_an_override_that_repairs_a_specforge_file_is_an_error_too(capsys, write):
    broken = write(
        "run.yaml", "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\ntraining:\n  num_epochs: 0\n"
    )
    code, out, _ = run(capsys, "check", str(broken), "--set", "training.num_epochs=2")
    assert code == 1
    assert f"{broken}:6:15: error[override-repairs-file] without the overrides this file fails" in out
    assert "specforge validates the file before it applies command-line overrides" in out
    code, out, _ = run(capsys, "check", str(broken), "--set", "training.num_epochs=0")
    assert code == 1 and "override-repairs-file" not in out  # still broken merged: reported once, as itself


def test_version_lists_every_family_version_and_what_it_follows(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    out = capsys.readouterr().out.splitlines()
    assert exit_.value.code == 0 and out[0].startswith("trainspec ")
    assert "  kempnerforge@089fbbd: follows KempnerForge 089fbbd (2026-05-12)" in out


def test_a_bug_inside_a_command_is_one_line_not_a_traceback(capsys, monkeypatch, write):
    import trainspec.cli.rules as rules_command

    monkeypatch.setattr(rules_command, "run", lambda *a: 1 / 0)
    assert main(["rules"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trainspec: internal error (ZeroDivisionError: division by zero); this is a bug")
    assert "Traceback" not in err


def test_a_config_piped_on_standard_input_is_checked_as_the_named_file(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"[model]\ndim = 4100\n")))
    code, out, _ = run(capsys, "check", "-", "--stdin-filename", "configs/job.toml", "--world-size", "1")
    assert code == 1
    assert out.startswith("configs/job.toml:2:1: error[model-heads-divide-dim] model.dim = 4100")
    monkeypatch.setattr(
        "sys.stdin", io.TextIOWrapper(io.BytesIO(b"model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\n"))
    )
    assert run(capsys, "check", "-", "--stdin-filename", "run.yaml")[0] == 0
    code, _, err = run(capsys, "check", "-", "other.toml")
    assert code == 2 and "cannot be mixed with other paths" in err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'a: 1\nb: "\xff"\n')))
    code, _, err = run(capsys, "check", "-", "--stdin-filename", "x.yaml")
    assert code == 2 and "standard input is not UTF-8 text (byte 10 is invalid)" in err
    code, _, err = run(capsys, "check", "-")
    assert code == 2 and "`-` needs --stdin-filename PATH" in err


def test_a_dangling_symbolic_link_says_so(capsys, tmp_path):
    (tmp_path / "job.toml").symlink_to(tmp_path / "gone.toml")
    code, out, _ = run(capsys, "check", str(tmp_path / "job.toml"))
    assert code == 2 and f"a symbolic link to {tmp_path / 'gone.toml'}, which does not exist" in out
