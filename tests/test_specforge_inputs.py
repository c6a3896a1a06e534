"""SpecForge inputs: the upstream quirks not to copy (reference §8), file formats (§7), overrides (§6.3)."""

from __future__ import annotations

import pytest

import trainspec
from trainspec.api import check_path

OFFLINE = "model:\n  target_model_path: m\ndata:\n  hidden_states_path: /feat\n"
MANAGED = (
    OFFLINE.replace("hidden_states_path: /feat", "train_data_path: /d.jsonl")
    + """\
deployment:
  mode: disaggregated
  disaggregated:
    control_dir: /ctl
    backend: mooncake
    managed_local:
      trainer_cuda_visible_devices: ["0"]
      capture_servers:
        - port: 30000
          cuda_visible_devices: ["1"]
"""
)


def problems(path, **kwargs) -> list[trainspec.Diagnostic]:
    return [d for d in trainspec.check(path, family="specforge", **kwargs) if d.severity.value != "note"]


def only(path, **kwargs) -> trainspec.Diagnostic:
    found = problems(path, **kwargs)
    assert len(found) == 1, [d.message for d in found]
    return found[0]


# -- §8 --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("deployment: 5\n", "`deployment` must be a table/mapping, got integer 5"),
        ("training: [1]\n", "`training` must be a table/mapping, got list [1]"),
        ('deployment: "abc"\n', '`deployment` must be a table/mapping, got string "abc"'),
    ],
)
def test_q1_a_section_of_the_wrong_type_is_a_located_type_error(write, extra, message):
    found = only(write("run.yaml", OFFLINE + extra))
    assert (found.rule, found.line, found.message) == ("wrong-type", 5, message)


def test_q1_an_override_of_a_section_with_a_scalar(write):
    found = only(write("run.yaml", OFFLINE), overrides=["training=5"])
    assert found.rule == "wrong-type" and found.origin == "override #1 (--set training=5)"


@pytest.mark.parametrize("section", ["training", "tracking", "profiling", "runtime", "deployment"])
def test_q2_null_sections_are_rejected_alike(write, section):
    found = only(write("run.yaml", OFFLINE + f"{section}: null\n"))
    assert found.rule == "wrong-type" and found.config_path == section


def test_q2_nullable_sections_stay_nullable(write):
    text = OFFLINE + "deployment:\n  disaggregated: null\n"
    assert problems(write("run.yaml", text)) == []
    online = MANAGED[: MANAGED.index("    managed_local:")] + "    managed_local: null\n"
    assert problems(write("run.yaml", online)) == []


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ("training:\n  batch_size: true\n", "training.batch_size"),  # no booleans as numbers
        ('training:\n  batch_size: "3"\n', "training.batch_size"),  # no strings as numbers
        ('training:\n  batch_size: " 7"\n', "training.batch_size"),
        ("training:\n  batch_size: 2.0\n", "training.batch_size"),  # decided: an integer field rejects 2.0
        ('training:\n  learning_rate: "1e-3"\n', "training.learning_rate"),
        ("profiling:\n  enabled: 1\n", "profiling.enabled"),  # no 0/1 as booleans
        ('profiling:\n  enabled: "true"\n', "profiling.enabled"),
        ("run_id: 5\n", "run_id"),  # strings reject numbers, as upstream
    ],
)
def test_q3_strict_types(write, extra, path):
    found = only(write("run.yaml", OFFLINE + extra))
    assert (found.rule, found.config_path) == ("wrong-type", path)


def test_q3_integer_list_items_are_strict(write):
    text = OFFLINE.replace("  target_model_path: m\n", '  target_model_path: m\n  aux_hidden_state_layer_ids: ["1"]\n')
    found = only(write("run.yaml", text))
    assert (found.rule, found.config_path, found.line) == ("wrong-type", "model.aux_hidden_state_layer_ids[0]", 3)


@pytest.mark.parametrize(
    ("extra", "path", "shown"),
    [
        ("training:\n  kl_scale: .nan\n", "training.kl_scale", "NaN"),  # unbounded: upstream accepts it
        ("training:\n  loss_decay_gamma: -.inf\n", "training.loss_decay_gamma", "-Infinity"),
        ("training:\n  max_grad_norm: .inf\n", "training.max_grad_norm", "Infinity"),  # only a lower bound upstream
        ("training:\n  dspark_ce_loss_alpha: .NaN\n", "training.dspark_ce_loss_alpha", "NaN"),
    ],
)
def test_q4_non_finite_numbers_are_rejected(write, extra, path, shown):
    found = only(write("run.yaml", OFFLINE + extra))
    assert (found.rule, found.config_path, found.line) == ("non-finite-number", path, 6)
    assert f"`{path}` = {shown}" in found.message


def test_q4_non_finite_numbers_in_json(write):
    text = (
        '{"model": {"target_model_path": "m"}, "data": {"hidden_states_path": "/f"},\n'
        ' "training": {"kl_scale": NaN, "kl_decay": Infinity}}\n'
    )
    found = problems(write("run.json", text))
    assert [(d.rule, d.config_path, d.line) for d in found] == [
        ("non-finite-number", "training.kl_scale", 2),
        ("non-finite-number", "training.kl_decay", 2),
    ]


@pytest.mark.parametrize(
    "extra",
    [
        'deployment:\n  disaggregated: null\n  trainer:\n    master_addr: "HTTP://h"\n',
        'tracking:\n  mlflow_tracking_uri: "not a url"\n',
        'training:\n  resume_from: "file:// odd"\n',
    ],
)
def test_q5_url_like_fields_stay_free_strings(write, extra):
    assert problems(write("run.yaml", OFFLINE + extra)) == []


def test_q5_server_urls_are_free_strings(write):
    text = MANAGED.replace(
        '    managed_local:\n      trainer_cuda_visible_devices: ["0"]\n      capture_servers:\n'
        '        - port: 30000\n          cuda_visible_devices: ["1"]\n',
        '    server_urls: ["HTTP://h:0", " x"]\n    mooncake_local_hostname: ""\n',
    )
    assert problems(write("run.yaml", text)) == []


def test_q7_every_problem_at_once(write):
    """Upstream shows one problem per object and no cross-section problem while a section fails."""
    text = (
        OFFLINE + "training:\n  batch_size: 0\n  role: auto\n  tp_size: 2\nruntime:\n  in_flight_low_watermark: 300\n"
    )
    found = problems(write("run.yaml", text))
    assert [(d.rule, d.line) for d in found] == [
        ("out-of-range", 6),
        ("role-needs-disaggregated", 7),
        ("offline-no-trainer-tp", 8),
        ("runtime-in-flight-watermark-order", 10),
    ]


def test_q8_errors_point_at_the_field_not_the_object(write):
    text = MANAGED.replace("        - port: 30000\n", "        - port: 30000\n          tp_size: 3\n")
    found = only(write("run.yaml", text))
    assert (found.rule, found.config_path, found.line, found.column) == (
        "capture-tp-matches-devices",
        "deployment.disaggregated.managed_local.capture_servers[0].tp_size",
        14,
        11,
    )
    assert [r.config_path for r in found.related] == ["deployment.disaggregated.managed_local.capture_servers"]


def test_q9_each_migrated_key_warns(write):
    text = OFFLINE + "training:\n  deployment_mode: local_colocated\n  server_urls: null\n"
    assert [(d.rule, d.severity.value, d.line) for d in problems(write("run.yaml", text))] == [
        ("legacy-key-migrated", "warning", 6),
        ("legacy-key-migrated", "warning", 7),
    ]


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        # "" counts as set for rule 40 ...
        (
            OFFLINE.replace("m\n", 'm\n  draft_checkpoint_path: ""\n') + 'training:\n  resume_from: ""\n',
            "warm-start-excludes-resume",
        ),
        # ... and as absent for rule 14
        (OFFLINE + 'deployment:\n  trainer:\n    nnodes: 2\n    master_addr: ""\n', "trainer-master-addr-multinode"),
    ],
)
def test_q12_empty_strings_keep_each_rules_reading(write, text, rule):
    assert [d.rule for d in problems(write("run.yaml", text))] == [rule]


def test_q13_device_tokens_with_inner_spaces_are_accepted(write):
    assert problems(write("run.yaml", MANAGED.replace('["1"]', '["GPU 1"]'))) == []


# -- §7: file formats ----------------------------------------------------------------------------------


def test_yaml_1_2_numbers(write):
    config = trainspec.load(write("run.yaml", OFFLINE + "training:\n  learning_rate: 1e-4\n  warmup_ratio: 1.0e-2\n"))
    assert config.training.learning_rate == 0.0001 and config.training.warmup_ratio == 0.01
    assert (
        trainspec.load(write("run.yaml", OFFLINE.replace("/feat\n", "/feat\n  max_length: 017\n"))).data.max_length
        == 17
    )  # YAML 1.2: decimal, not octal


@pytest.mark.parametrize("word", ["yes", "no", "on", "off"])
def test_yaml_1_1_booleans_fail_with_a_hint(write, word):
    found = only(write("run.yaml", OFFLINE + f"profiling:\n  enabled: {word}\n"))
    assert found.rule == "wrong-type" and found.line == 6
    assert "write true or false" in found.message
    loader = "true" if word in ("yes", "on") else "false"
    assert found.message.endswith(f"(specforge's loader reads it as {loader})")  # stricter than the loader, and says so


def test_duplicate_keys_are_reported(write):
    found = only(write("run.yaml", OFFLINE + "training:\n  seed: 1\n  seed: 2\n"))
    assert (found.rule, found.line) == ("duplicate-key", 7) and "line 6" in found.message
    text = '{"model": {"target_model_path": "m"}, "data": {"hidden_states_path": "/f", "hidden_states_path": "/g"}}'
    assert only(write("run.json", text)).rule == "duplicate-key"


def test_a_date_is_refused_as_specforge_reads_it_a_quoted_one_is_text(write):
    found = only(write("run.yaml", OFFLINE + "run_id: 2026-07-21\n"))
    assert (found.rule, found.severity.value) == ("yaml-dialect-refused", "error")
    assert "reads as the date 2026-07-21 by specforge's loader" in found.message
    assert trainspec.load(write("quoted.yaml", OFFLINE + 'run_id: "2026-07-21"\n')).run_id == "2026-07-21"


def test_extensions(write):
    (upper,) = problems(write("RUN.YAML", OFFLINE))  # read as YAML, but SpecForge reads it as JSON and fails
    assert (upper.rule, upper.line) == ("loader-format", 1) and "as JSON" in upper.message
    found = only(write("run.txt", OFFLINE))
    assert found.rule == "syntax-error" and "read as JSON" in found.message


def test_empty_file_is_not_a_mapping(write):
    assert only(write("run.yaml", "# nothing\n")).rule == "not-a-mapping"


def test_anchors_and_merge_keys_work(write):
    text = OFFLINE + "runtime: &rt\n  producer_lease: 4\ntracking:\n  <<: {report_to: wandb}\n  wandb_project: p\n"
    assert trainspec.load(write("run.yaml", text)).tracking.report_to == "wandb"


def test_a_top_level_mode_key_is_unknown(write):
    found = only(write("run.yaml", OFFLINE + "mode: offline\n"))
    assert (found.rule, found.line) == ("unknown-key", 5)


# -- §6.3: overrides, checked against the engine's --set ---------------------------------------------


def config_with(path, *overrides: str) -> dict:
    """The merged config trainspec's `--set` makes (what SpecForge's own overrides would refuse is reported
    apart, as override-refused-by-loader: tests/test_fidelity.py)."""
    result = check_path(path, family="specforge", overrides=list(overrides))
    found = [d for d in result.diagnostics if d.severity.value != "note" and d.rule != "override-refused-by-loader"]
    assert found == []
    assert result.config is not None
    return result.config


def test_null_on_a_nullable_field(write):
    path = write("run.yaml", OFFLINE.replace("m\n", "m\n  draft_model_config: d.json\n  mask_token_id: 5\n"))
    config = config_with(path, "model.draft_model_config=null", "model.mask_token_id=null")
    assert config["model"]["draft_model_config"] is None and config["model"]["mask_token_id"] is None


def test_quoted_null_stores_the_text(write):
    config = config_with(write("run.yaml", OFFLINE), 'model.draft_model_config="null"')
    assert config["model"]["draft_model_config"] == "null"


def test_null_on_a_non_nullable_field_is_a_type_error(write):
    found = only(write("run.yaml", OFFLINE), overrides=["training.batch_size=null"])
    assert found.rule == "wrong-type" and found.origin == "override #1 (--set training.batch_size=null)"


def test_string_fields_keep_the_raw_text(write):
    config = config_with(write("run.yaml", OFFLINE), "run_id=007", "output_dir=a=b", "training.strategy=1e3")
    assert (config["run_id"], config["output_dir"], config["training"]["strategy"]) == ("007", "a=b", "1e3")


def test_values_typed_by_the_schema(write):
    config = config_with(
        write("run.yaml", OFFLINE),
        "training.learning_rate=3e-4",
        "training.batch_size=4",
        "profiling.enabled=true",
        "training.role=all",
        "training.lk_loss_type=alpha",
    )
    assert config["training"]["learning_rate"] == 0.0003 and config["training"]["batch_size"] == 4
    assert config["profiling"]["enabled"] is True and config["training"]["lk_loss_type"] == "alpha"


@pytest.mark.parametrize(
    ("override", "rule"),
    [
        ("profiling.enabled=yes", "wrong-type"),  # only true/false for booleans
        ("training.learning_rate=.inf", "non-finite-number"),  # finite numbers only
        ("training.role=boss", "not-allowed-value"),  # enums compare the text
        ("training.batch_size=", "override-invalid-value"),  # an empty value is an error outside string fields
        ("run_id", "override-syntax"),  # no `=`
    ],
)
def test_bad_override_values(write, override, rule):
    found = only(write("run.yaml", OFFLINE), overrides=[override])
    assert found.rule == rule and found.origin == f"override #1 (--set {override})"


def test_empty_value_on_a_string_field(write):
    assert config_with(write("run.yaml", OFFLINE), "run_id=")["run_id"] == ""


def test_unknown_path_names_the_closest_one(write):
    found = only(write("run.yaml", OFFLINE), overrides=["training.learning_rat=1"])
    assert found.rule == "override-unknown-path"
    assert "`training.learning_rat`" in found.message and "`training.learning_rate`" in found.message


@pytest.mark.parametrize("override", [" run_id=x", "run_id =x"])
def test_whitespace_around_the_path_is_an_error_with_a_hint(write, override):
    found = only(write("run.yaml", OFFLINE), overrides=[override])
    assert found.rule == "override-syntax" and "`run_id`" in found.message


def test_index_into_an_existing_array(write):
    path = write("run.yaml", MANAGED)
    config = config_with(path, "deployment.disaggregated.managed_local.capture_servers[0].port=30001")
    assert config["deployment"]["disaggregated"]["managed_local"]["capture_servers"][0]["port"] == 30001
    found = only(path, overrides=["deployment.disaggregated.managed_local.capture_servers[1].port=30001"])
    assert found.rule == "override-unknown-path" and "index 1 is out of range (the list has 1 item)" in found.message


def test_structured_values_replace_whatever_the_current_value(write):
    config = config_with(
        write("run.yaml", OFFLINE), "model.aux_hidden_state_layer_ids=[1, 2, 3]", "runtime={producer_lease: 3}"
    )
    assert config["model"]["aux_hidden_state_layer_ids"] == [1, 2, 3]  # current value null
    assert config["runtime"]["producer_lease"] == 3 and config["runtime"]["in_flight_high_watermark"] == 256
    found = only(write("run.yaml", OFFLINE), overrides=["model.aux_hidden_state_layer_ids={a: 1}"])
    assert found.rule == "wrong-type"


def test_a_known_path_into_an_absent_or_null_section_creates_it(write):
    for text in (OFFLINE, OFFLINE + "deployment:\n  disaggregated: null\n"):
        config = config_with(
            write("run.yaml", text),
            "deployment.mode=disaggregated",
            "deployment.disaggregated.control_dir=/c",
            "deployment.disaggregated.backend=mooncake",
        )
        assert config["deployment"]["disaggregated"]["control_dir"] == "/c"
        assert config["training"]["role"] == "auto"


def test_an_override_cannot_fix_the_file_since_specforge_validates_the_file_first(write):
    path = write("run.yaml", OFFLINE + "training:\n  batch_size: zero\n")
    assert only(path).rule == "wrong-type"
    result = check_path(path, family="specforge", overrides=["training.batch_size=2"])
    assert result.config is not None and result.config["training"]["batch_size"] == 2  # merged, as checked
    (refused,) = [d for d in result.diagnostics if d.is_error]
    assert refused.rule == "override-repairs-file" and (refused.line, refused.config_path) == (6, "training.batch_size")


def test_override_problems_come_with_the_file_problems(write):
    path = write("run.yaml", OFFLINE + "training:\n  tp_size: 2\n")
    found = problems(path, overrides=["nope=1", "training.batch_size=x"])
    assert {(d.rule, d.origin) for d in found} == {
        ("override-unknown-path", "override #1 (--set nope=1)"),
        ("wrong-type", "override #2 (--set training.batch_size=x)"),
        ("offline-no-trainer-tp", None),
    }


def test_a_top_level_key_written_in_a_section_says_where_it_belongs(write):
    found = only(write("run.yaml", OFFLINE + "training:\n  run_id: x\n"))
    assert found.rule == "unknown-key"
    assert found.message.endswith("it belongs at the top level (`run_id`), not in training")
