"""The verdict follows what each family's own loader reads: YAML 1.1 scalars, value conversions."""

from __future__ import annotations

import pytest

import trainspec
from trainspec import Severity

SF = "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\n"
KF = "[model]\ndim = 4096\n"

CASES = [
    # (id, family, file, text, rule or None, severity, line, phrase)
    (
        "sf-underscored-date",
        "specforge",
        "r.yaml",
        SF + "run_id: 2024_01_01\n",
        "yaml-dialect-refused",
        "error",
        5,
        "reads as the integer 20240101 by specforge's loader",
    ),
    ("sf-off", "specforge", "r.yaml", SF + "output_dir: off\n", "yaml-dialect-refused", "error", 5, "reads as false"),
    (
        "sf-date",
        "specforge",
        "r.yaml",
        SF + "run_id: 2024-01-01\n",
        "yaml-dialect-refused",
        "error",
        5,
        "the date 2024-01-01",
    ),
    (
        "sf-leading-zero",
        "specforge",
        "r.yaml",
        SF + "training:\n  num_epochs: 017\n",
        "yaml-dialect",
        "warning",
        6,
        "reads the integer 15",
    ),
    (
        "sf-0o-octal",
        "specforge",
        "r.yaml",
        SF + "training:\n  num_epochs: 0o17\n",
        "yaml-dialect-refused",
        "error",
        6,
        'the text "0o17"',
    ),
    (
        "sf-sexagesimal",
        "specforge",
        "r.yaml",
        SF + "training:\n  seed: 1:30\n",
        "yaml-dialect",
        "warning",
        6,
        "the integer 90",
    ),
    (
        "sf-underscored-integer",
        "specforge",
        "r.yaml",
        SF + "training:\n  num_epochs: 1_000\n",
        "yaml-dialect",
        "warning",
        6,
        '"1_000" for YAML 1.2 tools, which this field refuses',
    ),
    (
        "sf-underscored-float",
        "specforge",
        "r.yaml",
        SF + "training:\n  kl_scale: 1_000.5\n",
        "yaml-dialect",
        "warning",
        6,
        "reads the float 1000.5, the value trainspec checks; write 1000.5",
    ),
    (
        "sf-0o-text",
        "specforge",
        "r.yaml",
        SF + "run_id: 0o17\n",
        "yaml-dialect",
        "warning",
        5,
        "`run_id` = 15 for YAML 1.2 tools, which this field refuses, but specforge's loader (YAML 1.1) reads the text",
    ),
    ("sf-exponent", "specforge", "r.yaml", SF + "training:\n  learning_rate: 1e-4\n", None, "", 0, ""),
    (
        "sf-numeric-text",
        "specforge",
        "r.yaml",
        SF + 'training:\n  num_epochs: "3"\n',
        "wrong-type",
        "error",
        6,
        "specforge's loader itself reads it as 3",
    ),
    (
        "kf-float-in-int",
        "kempnerforge",
        "j.toml",
        KF + "[train]\nbatch_size = 8.0\n",
        "wrong-type",
        "error",
        4,
        "kempnerforge's loader itself reads it as 8",
    ),
    (
        "kf-int-text",
        "kempnerforge",
        "j.toml",
        KF + '[train]\nbatch_size = "8"\n',
        "wrong-type",
        "error",
        4,
        "kempnerforge's loader itself reads it as 8",
    ),
    (
        "kf-bool-text",
        "kempnerforge",
        "j.toml",
        KF + '[train]\ncompile_model = "true"\n',
        "wrong-type",
        "error",
        4,
        "kempnerforge's loader itself reads it as true",
    ),
    (
        "kf-junk-in-int",
        "kempnerforge",
        "j.toml",
        KF + '[train]\nbatch_size = "eight"\n',
        "wrong-type",
        "error",
        4,
        None,
    ),
]


@pytest.mark.parametrize(
    ("family", "name", "text", "rule", "severity", "line", "phrase"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_reading_gets_the_loaders_verdict(tmp_path, family, name, text, rule, severity, line, phrase):
    path = tmp_path / name
    path.write_text(text)
    found = [d for d in trainspec.check(path, family=family, world_size=1) if d.severity is not Severity.NOTE]
    if rule is None:
        assert found == []
        return
    (d,) = found
    assert (d.rule, d.severity.value, d.line) == (rule, severity, line)
    if phrase is None:
        assert "loader itself" not in d.message  # the loader refuses it too: nothing to add
    else:
        assert phrase in d.message


def test_yes_for_a_boolean_stays_an_error_that_says_what_the_loader_reads(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("model:\n  target_model_path: m\n  trust_remote_code: yes\ndata:\n  hidden_states_path: h\n")
    (d,) = [d for d in trainspec.check(path) if d.severity is not Severity.NOTE]
    assert d.rule == "wrong-type" and d.message.endswith("(specforge's loader reads it as true)")


def test_the_loaders_reading_is_what_the_schema_and_the_rules_check(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(SF + "training:\n  num_epochs: 0_0\n  attention_backend: usp\n  sp_ulysses_size: 1_0\n")
    found = {(d.rule, d.severity.value) for d in trainspec.check(path) if d.severity is not Severity.NOTE}
    assert ("out-of-range", "error") in found  # 0_0 is the integer 0 to the loader, which num_epochs > 0 refuses
    assert ("yaml-dialect", "warning") in found
    assert any(rule.startswith("world-size") for rule, _ in found)  # sp 10 does not divide the world size 1


def test_a_reading_the_loader_refuses_is_not_repaired_by_an_override(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("model:\n  target_model_path: yes\ndata:\n  hidden_states_path: h\n")
    found = trainspec.check(path, overrides=['model={"target_model_path": "m"}'])
    (d,) = [d for d in found if d.severity is Severity.ERROR]
    assert d.rule == "override-repairs-file" and "yaml-dialect-refused" in d.message


AXOLOTL = (
    "base_model: m\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\ndatasets:\n  - path: d\n    type: alpaca\n"
)


@pytest.mark.parametrize(
    ("line", "key"), [("bf16: yes\n", "bf16"), ("gradient_checkpointing: on\n", "gradient_checkpointing")]
)
def test_a_yaml_1_1_boolean_in_a_union_with_an_enum_says_what_the_loader_reads(write, line, key):
    """`true | false | "auto"`: the loader reads `yes` as true, which the union's boolean branch takes, though
    true is in none of its enums; the error says so."""
    path = write("run.yml", AXOLOTL + line)
    (d,) = [d for d in trainspec.check(path, family="axolotl") if d.config_path == key]
    assert d.rule == "not-allowed-value" and d.message.endswith("(axolotl's loader reads it as true)")
