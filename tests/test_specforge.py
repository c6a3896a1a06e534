"""SpecForge family: the corpus is clean, every rule fires on its own (id, severity, line), the typed model.

A case's config marks the line the diagnostic must point at with a trailing `# <`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

import trainspec
from trainspec.api import check_path
from trainspec.families import get_family
from trainspec.families.specforge.rules import RULES
from trainspec.read.files import read

from .conftest import CORPUS

SPECFORGE = sorted((CORPUS / "specforge").glob("*.yaml"))

OFFLINE = """\
model:
  target_model_path: m
{model}data:
  hidden_states_path: /feat
{data}{rest}"""

OFFLINE_DISAGGREGATED = """\
model:
  target_model_path: m
data:
  hidden_states_path: /feat
{rest}deployment:
  mode: disaggregated
  disaggregated:
    control_dir: /ctl
    backend: mooncake
{dis}"""

ONLINE = """\
model:
  target_model_path: m
{model}data:
  train_data_path: /d.jsonl
{data}{rest}deployment:
  mode: disaggregated
{trainer}  disaggregated:
    control_dir: /ctl
    backend: mooncake
{dis}"""

MANAGED = """\
model:
  target_model_path: m
{model}data:
  train_data_path: /d.jsonl
{rest}deployment:
  mode: disaggregated
  trainer:
    nproc_per_node: 1
{trainer}  disaggregated:
    control_dir: /ctl
    backend: mooncake
{dis}    managed_local:
      trainer_cuda_visible_devices: ["0"]  {tmark}
{ml}      capture_servers:
        - port: 30000
          cuda_visible_devices: ["1"]
{cs}"""


def fill(template: str, **slots: str) -> str:
    return template.format_map(defaultdict(str, slots))


# (case name, rule id, config, world size, other rules that must fire with it)
CASES = [
    (
        "no-source",
        "data-exactly-one-source",
        "model:\n  target_model_path: m\ndata:  # <\n  max_length: 10\n",
        None,
        (),
    ),
    (
        "two-sources",
        "data-exactly-one-source",
        "model:\n  target_model_path: m\ndata:\n  train_data_path: /a  # <\n  hidden_states_path: /b\n",
        None,
        (),
    ),
    (
        "ratio-min",
        "training-down-sample-ratio-min-range",
        fill(OFFLINE, rest="training:\n  down_sample_ratio: 0.3\n  down_sample_ratio_min: 0.5  # <\n"),
        None,
        (),
    ),
    (
        "usp-batch",
        "training-usp-batch-size-1",
        fill(
            OFFLINE,
            rest="training:\n  attention_backend: usp\n  sp_ulysses_size: 2\n  batch_size: 2  # <\n"
            "deployment:\n  trainer:\n    nproc_per_node: 2\n",
        ),
        None,
        (),
    ),
    ("usp-sp", "training-usp-needs-sp", fill(OFFLINE, rest="training:\n  attention_backend: usp  # <\n"), None, ()),
    (
        "sp-usp",
        "training-sp-needs-usp",
        fill(OFFLINE, rest="training:\n  sp_ring_size: 2  # <\ndeployment:\n  trainer:\n    nproc_per_node: 2\n"),
        None,
        (),
    ),
    (
        "in-flight",
        "runtime-in-flight-watermark-order",
        fill(OFFLINE, rest="runtime:\n  in_flight_low_watermark: 300  # <\n"),
        None,
        (),
    ),
    (
        "resident-high",
        "runtime-resident-low-needs-high",
        fill(OFFLINE, rest="runtime:\n  resident_low_watermark_bytes: 5  # <\n"),
        None,
        (),
    ),
    (
        "resident-order",
        "runtime-resident-watermark-order",
        fill(OFFLINE, rest="runtime:\n  resident_high_watermark_bytes: 10\n  resident_low_watermark_bytes: 20  # <\n"),
        None,
        (),
    ),
    (
        "store",
        "runtime-store-covers-resident-high",
        fill(
            OFFLINE, rest="runtime:\n  resident_high_watermark_bytes: 10\n  feature_store_max_resident_bytes: 5  # <\n"
        ),
        None,
        (),
    ),
    (
        "node-rank",
        "trainer-node-rank-below-nnodes",
        fill(OFFLINE, rest="deployment:\n  trainer:\n    node_rank: 1  # <\n"),
        None,
        (),
    ),
    (
        "master-addr",
        "trainer-master-addr-multinode",
        fill(OFFLINE, rest='deployment:\n  trainer:\n    nnodes: 2\n    master_addr: ""  # <\n'),
        None,
        (),
    ),
    (
        "mooncake-ports",
        "mooncake-ports-distinct",
        fill(MANAGED, ml="      mooncake:\n        metadata_port: 35551  # <\n"),
        None,
        (),
    ),
    ("capture-tp", "capture-tp-matches-devices", fill(MANAGED, cs="          tp_size: 2  # <\n"), None, ()),
    (
        "capture-ports",
        "managed-capture-ports-unique",
        fill(MANAGED, cs='        - port: 30000  # <\n          cuda_visible_devices: ["2"]\n'),
        None,
        (),
    ),
    (
        "ports-disjoint",
        "managed-ports-disjoint",
        fill(MANAGED, cs='        - port: 35880  # <\n          cuda_visible_devices: ["2"]\n'),
        None,
        (),
    ),
    (
        "devices-unshared",
        "managed-capture-devices-unshared",
        fill(MANAGED, cs='        - port: 30001\n          cuda_visible_devices: ["1"]  # <\n'),
        None,
        (),
    ),
    (
        "devices-disjoint",
        "managed-devices-disjoint",
        fill(MANAGED, cs='        - port: 30001\n          cuda_visible_devices: ["0"]\n', tmark="# <"),
        None,
        (),
    ),
    (
        "store-root",
        "disaggregated-shared-dir-needs-store-root",
        fill(OFFLINE_DISAGGREGATED, dis='    store_root: ""  # <\n').replace(
            "backend: mooncake", "backend: shared_dir"
        ),
        None,
        (),
    ),
    (
        "managed-mooncake",
        "managed-needs-mooncake-backend",
        fill(MANAGED, dis="    store_root: /s\n").replace("backend: mooncake", "backend: shared_dir  # <"),
        None,
        ("managed-no-store-root", "online-disaggregated-needs-mooncake"),
    ),
    ("managed-store-root", "managed-no-store-root", fill(MANAGED, dis="    store_root: /s  # <\n"), None, ()),
    ("managed-urls", "managed-no-server-urls", fill(MANAGED, dis="    server_urls: [http://h:1]  # <\n"), None, ()),
    (
        "managed-endpoints",
        "managed-no-mooncake-endpoints",
        fill(MANAGED, dis="    mooncake_protocol: tcp  # <\n    mooncake_rdma_devices: mlx5_0\n"),
        None,
        (),
    ),
    (
        "managed-segment",
        "managed-no-producer-segment-size",
        fill(MANAGED, dis="    producer_segment_size: 64  # <\n"),
        None,
        (),
    ),
    (
        "online-local",
        "online-needs-disaggregated",
        "model:\n  target_model_path: m\ndata:\n  prompts_path: /p.jsonl\ndeployment:\n  mode: local_colocated  # <\n",
        None,
        (),
    ),
    ("role-local", "role-needs-disaggregated", fill(OFFLINE, rest="training:\n  role: auto  # <\n"), None, ()),
    (
        "role-all",
        "disaggregated-needs-role",
        fill(OFFLINE_DISAGGREGATED, rest="training:\n  role: all  # <\n"),
        None,
        (),
    ),
    (
        "warm-resume",
        "warm-start-excludes-resume",
        fill(OFFLINE, model='  draft_checkpoint_path: ""  # <\n', rest='training:\n  resume_from: ""\n'),
        None,
        (),
    ),
    (
        "producer-profile",
        "producer-no-profiling",
        fill(OFFLINE_DISAGGREGATED, rest="training:\n  role: producer\nprofiling:\n  enabled: true  # <\n"),
        None,
        (),
    ),
    (
        "eval-no-interval",
        "eval-source-and-interval-together",
        fill(OFFLINE, data="  eval_hidden_states_path: /e  # <\n"),
        None,
        (),
    ),
    (
        "interval-no-eval",
        "eval-source-and-interval-together",
        fill(OFFLINE, rest="training:\n  eval_interval: 100  # <\n"),
        None,
        (),
    ),
    (
        "eval-online",
        "eval-source-needs-offline",
        fill(ONLINE, data="  eval_hidden_states_path: /e  # <\n", rest="training:\n  eval_interval: 10\n"),
        None,
        (),
    ),
    (
        "chunk",
        "compact-teacher-chunk-needs-compact-teacher",
        fill(OFFLINE, rest="training:\n  compact_teacher_chunk_size: 4  # <\n"),
        None,
        (),
    ),
    (
        "online-shared-dir",
        "online-disaggregated-needs-mooncake",
        fill(ONLINE, dis="    store_root: /s\n").replace("backend: mooncake", "backend: shared_dir  # <"),
        None,
        (),
    ),
    (
        "state-dir-offline",
        "consumer-state-dir-online-only",
        fill(OFFLINE_DISAGGREGATED, dis="    consumer_state_dir: /state  # <\n"),
        None,
        (),
    ),
    (
        "multinode-state-dir",
        "multinode-online-needs-consumer-state-dir",
        fill(ONLINE, trainer="  trainer:\n    nnodes: 2  # <\n    master_addr: h\n"),
        None,
        (),
    ),
    (
        "managed-offline",
        "managed-online-only",
        fill(MANAGED)
        .replace("train_data_path: /d.jsonl", "hidden_states_path: /feat")
        .replace("    managed_local:", "    managed_local:  # <"),
        None,
        (),
    ),
    (
        "managed-nodes",
        "managed-single-node",
        fill(MANAGED, trainer="    nnodes: 2  # <\n    master_addr: h\n").replace(
            "  trainer:\n    nproc_per_node: 1\n", "  trainer:\n"
        ),
        None,
        (),
    ),
    ("managed-role", "managed-role-auto", fill(MANAGED, rest="training:\n  role: consumer  # <\n"), None, ()),
    ("managed-resume", "managed-no-resume", fill(MANAGED, rest="training:\n  resume_from: /ckpt  # <\n"), None, ()),
    (
        "managed-context",
        "managed-context-headroom",
        fill(MANAGED, model="  sglang_context_length: 2054  # <\n"),
        None,
        (),
    ),
    ("managed-dp", "managed-no-sglang-dp", fill(MANAGED, model="  sglang_enable_dp_lm_head: true  # <\n"), None, ()),
    (
        "managed-nproc",
        "managed-trainer-devices-match-nproc",
        fill(MANAGED, tmark="# <").replace("nproc_per_node: 1", "nproc_per_node: 2"),
        None,
        (),
    ),
    (
        "managed-ep",
        "managed-ep-divides-tp",
        fill(MANAGED, model="  sglang_ep_size: 2  # <\n", cs="          tp_size: 1\n"),
        None,
        (),
    ),
    (
        "producer-resume",
        "producer-no-resume",
        fill(OFFLINE_DISAGGREGATED, rest="training:\n  role: producer\n  resume_from: /ckpt  # <\n"),
        None,
        (),
    ),
    (
        "usp-online",
        "usp-needs-offline",
        fill(
            ONLINE,
            rest="training:\n  attention_backend: usp  # <\n  sp_ulysses_size: 2\n",
            trainer="  trainer:\n    nproc_per_node: 2\n",
        ),
        None,
        (),
    ),
    ("offline-tp", "offline-no-trainer-tp", fill(OFFLINE, rest="training:\n  tp_size: 2  # <\n"), None, ()),
    ("online-tp", "online-disaggregated-pure-dp", fill(ONLINE, rest="training:\n  tp_size: 2  # <\n"), None, ()),
    (
        "sp-world",
        "world-size-divisible-by-sp",
        fill(
            OFFLINE,
            rest="training:\n  attention_backend: usp\n  sp_ulysses_size: 2  # <\n"
            "deployment:\n  trainer:\n    nproc_per_node: 3\n",
        ),
        None,
        (),
    ),
    (
        "topology",
        "world-size-matches-trainer-topology",
        fill(OFFLINE, rest="deployment:\n  trainer:\n    nnodes: 1  # <\n    nproc_per_node: 2\n"),
        4,
        (),
    ),
    (
        "producer-ranks",
        "world-size-matches-trainer-topology",
        fill(OFFLINE_DISAGGREGATED, rest="training:\n  role: producer  # <\n"),
        2,
        (),
    ),
]

# Rules the schema carries (`x-trainspec-rule`): reported with their id and at the field too.
SCHEMA_CASES = [
    ("model-input-modality-shape", fill(OFFLINE, model='  input_modality: "two words"  # <\n')),
    ("training-dpace-alpha-range", fill(OFFLINE, rest="training:\n  dpace_alpha: 1.5  # <\n")),
    ("training-down-sample-ratio-range", fill(OFFLINE, rest="training:\n  down_sample_ratio: 0  # <\n")),
    ("training-down-sample-ratio-min-range", fill(OFFLINE, rest="training:\n  down_sample_ratio_min: 0  # <\n")),
    ("eval-data-path-unsupported", fill(OFFLINE, data="  eval_data_path: /e  # <\n")),
    ("mooncake-local-hostname-shape", fill(MANAGED, ml='      mooncake:\n        local_hostname: " h"  # <\n')),
    (
        "capture-device-token-shape",
        fill(MANAGED).replace('cuda_visible_devices: ["1"]', 'cuda_visible_devices: ["1,2"]  # <'),
    ),
    (
        "capture-devices-unique",
        fill(MANAGED, cs="          tp_size: 2\n").replace(
            'cuda_visible_devices: ["1"]', 'cuda_visible_devices: ["1", "1"]  # <'
        ),
    ),
    ("managed-trainer-device-token-shape", fill(MANAGED).replace('["0"]  ', '[""]  # <')),
    (
        "managed-trainer-devices-unique",
        fill(MANAGED, trainer="    nproc_per_node: 2\n")
        .replace('["0"]  ', '["0", "0"]  # <')
        .replace("  trainer:\n    nproc_per_node: 1\n", "  trainer:\n"),
    ),
    (
        "disaggregated-control-dir-nonempty",
        fill(OFFLINE_DISAGGREGATED).replace("control_dir: /ctl", 'control_dir: ""  # <'),
    ),
    ("disaggregated-consumer-state-dir-shape", fill(ONLINE, dis='    consumer_state_dir: "/s "  # <\n')),
    ("deployment-disaggregated-required", fill(OFFLINE, rest="deployment:\n  mode: disaggregated  # <\n")),
    (
        "deployment-disaggregated-needs-mode",
        fill(
            OFFLINE,
            rest="deployment:\n  mode: local_colocated  # <\n  disaggregated:\n    control_dir: /c\n"
            "    backend: mooncake\n",
        ),
    ),
]


def marked_line(text: str) -> int:
    lines = [n for n, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("# <")]
    assert len(lines) == 1, "a case marks exactly one line"
    return lines[0]


def problems(path: Path, world_size: int | None = None) -> list[trainspec.Diagnostic]:
    return [d for d in trainspec.check(path, family="specforge", world_size=world_size) if d.severity.value != "note"]


@pytest.mark.parametrize("path", SPECFORGE, ids=[p.name for p in SPECFORGE])
def test_corpus_clean_at_its_world_size(path):
    data = read(str(path)).data
    trainer = data.get("deployment", {}).get("trainer", {})
    world_size = trainer.get("nnodes", 1) * trainer.get("nproc_per_node", 1)
    assert problems(path, world_size) == []
    assert problems(path) == []  # and with the world size the config states


def test_corpus_size():
    assert len(SPECFORGE) == 42


@pytest.mark.parametrize(("name", "rule_id", "text", "world_size", "also"), CASES, ids=[c[0] for c in CASES])
def test_rule_fires_alone(write, name, rule_id, text, world_size, also):
    found = problems(write("run.yaml", text), world_size)
    assert sorted(d.rule for d in found) == sorted([rule_id, *also]), [d.message for d in found]
    hit = next(d for d in found if d.rule == rule_id)
    assert hit.severity is trainspec.Severity.ERROR
    assert hit.line == marked_line(text), hit


def test_every_rule_has_a_case():
    family = get_family("specforge@08eaeac")  # a6b6b02 adds N1-N3: tests/test_specforge_a6b6b02.py
    assert {r.id for r in family.rules} == {c[1] for c in CASES}
    assert all(r.severity is trainspec.Severity.ERROR for r in family.rules)


@pytest.mark.parametrize("template", [OFFLINE, OFFLINE_DISAGGREGATED, ONLINE, MANAGED])
def test_case_templates_are_clean(write, template):
    """Each case changes a clean template, so what fires is the case's own change."""
    assert problems(write("base.yaml", fill(template))) == []


@pytest.mark.parametrize(("rule_id", "text"), SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_schema_carried_rule(write, rule_id, text):
    found = problems(write("run.yaml", text))
    assert [d.rule for d in found] == [rule_id], [d.message for d in found]
    assert found[0].severity is trainspec.Severity.ERROR
    assert found[0].line == marked_line(text)


def test_schema_rules_are_not_repeated_in_the_rules_module():
    family = get_family("specforge")
    annotated: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            if "x-trainspec-rule" in node:
                annotated.add(node["x-trainspec-rule"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(family.schema.root)
    assert {c[0] for c in SCHEMA_CASES} <= annotated
    # rule 5 is split: its lower bound is a schema keyword, its upper bound (another field) a rule
    assert annotated & {r.id for r in RULES} == {"training-down-sample-ratio-min-range"}


@pytest.mark.parametrize(
    "rule_id", ["online-needs-sglang-backend", "world-size-divisible-by-tp", "world-size-positive"]
)
def test_rules_that_cannot_fire_are_not_rules(rule_id):
    assert get_family("specforge").rule(rule_id) is None


def test_messages_name_fields_and_values(write):
    text = fill(
        MANAGED,
        model="  sglang_context_length: 100\n  sglang_enable_dp_attention: true\n  sglang_enable_dp_lm_head: true\n",
        dis='    mooncake_metadata_server: ""\n    mooncake_master_server_addr: h:1\n    mooncake_protocol: tcp\n',
    )
    found = {d.rule: d.message for d in problems(write("run.yaml", text))}
    assert "model.sglang_context_length = 100" in found["managed-context-headroom"]
    assert "at least 2055" in found["managed-context-headroom"]
    assert (
        "model.sglang_enable_dp_attention = true and model.sglang_enable_dp_lm_head = true"
        in found["managed-no-sglang-dp"]
    )
    endpoints = found["managed-no-mooncake-endpoints"]
    assert 'mooncake_master_server_addr = "h:1", deployment.disaggregated.mooncake_protocol = "tcp"' in endpoints
    assert "mooncake_metadata_server" not in endpoints  # "" counts as unset here


def test_several_rules_at_once(write):
    """Upstream stops at the first failing check; trainspec reports every one, each at its own line."""
    text = fill(
        OFFLINE,
        rest="training:\n  role: auto\n  tp_size: 2\n  compact_teacher_chunk_size: 8\n"
        "runtime:\n  in_flight_low_watermark: 300\ndeployment:\n  trainer:\n    node_rank: 3\n",
    )
    found = problems(write("run.yaml", text))
    assert [(d.rule, d.line) for d in found] == [
        ("role-needs-disaggregated", 6),
        ("offline-no-trainer-tp", 7),
        ("compact-teacher-chunk-needs-compact-teacher", 8),
        ("runtime-in-flight-watermark-order", 10),
        ("trainer-node-rank-below-nnodes", 13),
    ]


def test_rule_on_a_value_from_an_override_says_so(write):
    path = write("run.yaml", fill(OFFLINE))
    [found] = problems_with(path, ["training.tp_size=2"])
    assert found.rule == "offline-no-trainer-tp" and found.line is None
    assert found.origin == "override #1 (--set training.tp_size=2)"


def problems_with(path: Path, overrides: list[str]) -> list[trainspec.Diagnostic]:
    return [d for d in trainspec.check(path, family="specforge", overrides=overrides) if d.severity.value != "note"]


def test_mode_rules_wait_for_a_defined_data_source(write):
    """With no source, rule 2 is the problem; rules about the online/offline mode stay quiet."""
    text = "model:\n  target_model_path: m\ndata: {}\ntraining:\n  tp_size: 2\n  attention_backend: usp\n"
    assert [d.rule for d in problems(write("run.yaml", text))] == ["data-exactly-one-source", "training-usp-needs-sp"]


def test_whitespace_follows_python_like_upstream(write):
    r"""U+001C and U+0085 are whitespace to Python (rejected, as upstream); U+FEFF is not (accepted)."""
    for char, bad in (("\\x1c", True), ("\\x85", True), ("\\ufeff", False)):
        text = fill(OFFLINE, model=f'  input_modality: "a{char}b"\n')
        assert [d.rule for d in problems(write("run.yaml", text))] == (["model-input-modality-shape"] if bad else [])


def test_cuda_tokens_may_hold_inner_spaces(write):
    text = fill(MANAGED).replace('["1"]', '["GPU 1"]')
    assert problems(write("run.yaml", text)) == []


# -- world size ---------------------------------------------------------------------------------


def test_world_size_derived_from_the_trainer_topology(write):
    path = write(
        "run.yaml",
        fill(OFFLINE, rest="deployment:\n  trainer:\n    nnodes: 2\n    nproc_per_node: 4\n    master_addr: h\n"),
    )
    result = check_path(path, family="specforge")
    assert result.world_size == 8
    [note] = [d for d in result.diagnostics if d.rule == "world-size-derived"]
    assert note.message == "world size 8 from deployment.trainer.nnodes × nproc_per_node = 2 × 4"
    assert check_path(path, family="specforge", world_size=8).diagnostics == []


def test_a_config_that_states_no_topology_takes_the_given_world_size(write):
    """The trainer defaults (1 × 1) are no statement: `--world-size 8` applies, and the launcher's topology check
    says what the file needs to run on 8 (a written topology, however small, keeps its own size)."""
    path = write("run.yaml", fill(OFFLINE))
    result = check_path(path, family="specforge", world_size=8, fallback_sizes=True)
    assert result.world_size == 8 and not any(d.rule == "world-size-derived" for d in result.diagnostics)
    [found] = [d for d in result.diagnostics if d.is_error]
    assert found.rule == "world-size-matches-trainer-topology" and "= 1 × 1 = 1" in found.message
    for topology in ("nnodes: 1\n    nproc_per_node: 1\n", "nproc_per_node: 2\n"):
        stated = write("stated.yaml", fill(OFFLINE, rest="deployment:\n  trainer:\n    " + topology))
        assert check_path(stated, family="specforge", world_size=8, fallback_sizes=True).world_size != 8
    assert check_path(path, family="specforge", world_size=8).world_size == 8  # the API's world size too


def test_world_size_rules_run_without_the_flag(write):
    text = fill(
        OFFLINE,
        rest="training:\n  attention_backend: usp\n  sp_ulysses_size: 4\n"
        "deployment:\n  trainer:\n    nproc_per_node: 2\n",
    )
    [found] = problems(write("run.yaml", text))
    assert found.rule == "world-size-divisible-by-sp"
    assert "world size 2" in found.message and "4 × 1 = 4" in found.message


def test_producer_runs_as_one_process(write):
    path = write(
        "run.yaml",
        fill(OFFLINE_DISAGGREGATED, rest="training:\n  role: producer\n").replace(
            "deployment:\n", "deployment:\n  trainer:\n    nproc_per_node: 8\n"
        ),
    )
    assert check_path(path, family="specforge").world_size == 1
    assert problems(path) == [] and problems(path, 1) == []
    [found] = problems(path, 8)
    assert found.rule == "world-size-matches-trainer-topology" and "single process" in found.message


# -- conditional role and derived mode ------------------------------------------------------------


def test_load_returns_mode_and_default_role():
    online = trainspec.load(CORPUS / "specforge" / "qwen3-8b-dflash-disaggregated.yaml")
    assert type(online).__name__.startswith("RunConfig") and online.mode == "online"
    assert online.training.role == "auto" and online.role == "auto"
    offline = trainspec.load(CORPUS / "specforge" / "qwen3-8b-eagle3-offline.yaml")
    assert offline.mode == "offline" and offline.role == "all"
    assert "mode" not in offline.model_dump() and "mode" not in offline.model_dump()["data"]


@pytest.mark.parametrize(
    ("extra", "role"),
    [
        ("", "auto"),  # training absent: the conditional default still applies
        ("training:\n  role: consumer\n", "consumer"),  # explicit role kept
        ("training:\n  batch_size: 1\n", "auto"),
    ],
)
def test_role_default_follows_deployment_mode(write, extra, role):
    assert trainspec.load(write("run.yaml", fill(OFFLINE_DISAGGREGATED, rest=extra))).training.role == role


def test_explicit_wrong_or_null_role_is_not_replaced(write):
    found = problems(write("run.yaml", fill(OFFLINE_DISAGGREGATED, rest="training:\n  role: null\n")))
    assert "wrong-type" in {d.rule for d in found} and {d.line for d in found} == {6}
    found = problems(write("run.yaml", fill(OFFLINE_DISAGGREGATED, rest="training:\n  role: all\n")))
    assert [d.rule for d in found] == ["disaggregated-needs-role"]


@pytest.mark.parametrize("null", ["null", "~", "NULL"])
def test_null_by_override_says_specforge_keeps_it_as_text_and_what_to_write(write, null):
    """SpecForge's overrides never read null (reference §6.2): the error says so, and where null can be written."""
    path = write("run.yaml", fill(OFFLINE))
    (found,) = [d for d in trainspec.check(path, overrides=[f"training.max_steps={null}"]) if d.is_error]
    assert found.rule == "override-refused-by-loader"
    assert found.message == (
        f'`training.max_steps`: SpecForge keeps an override\'s value as text, so `{null}` is the string "{null}", '
        "not null, and the field refuses it; SpecForge's overrides cannot set null: write `max_steps: null` in the "
        "file instead"
    )


def test_switching_a_local_run_to_disaggregated_by_override_takes_the_whole_section_and_the_role(write):
    """SpecForge applies overrides to the loaded config: a path into the null section is unknown there, and the
    resolved role `all` stays; the documented switch replaces `deployment` and sets the role."""
    path = write("run.yaml", fill(OFFLINE))
    with pytest.raises(trainspec.ConfigError, match="override-refused-by-loader"):
        trainspec.load(
            path,
            overrides=[
                "deployment.mode=disaggregated",
                "deployment.disaggregated.control_dir=/c",
                "deployment.disaggregated.backend=mooncake",
            ],
        )
    section = "deployment={mode: disaggregated, disaggregated: {control_dir: /c, backend: mooncake}}"
    config = trainspec.load(path, overrides=[section, "training.role=auto"])
    assert config.role == "auto" and config.deployment.disaggregated.control_dir == "/c"


def test_model_applies_the_role_default_to_a_plain_mapping():
    cls = get_family("specforge").model_class()
    data = {
        "model": {"target_model_path": "m"},
        "data": {"hidden_states_path": "/f"},
        "deployment": {"mode": "disaggregated", "disaggregated": {"control_dir": "/c", "backend": "mooncake"}},
    }
    before = json.dumps(data)
    config = cls.model_validate(data)
    assert config.role == "auto" and config.mode == "offline"
    assert json.dumps(data) == before  # the caller's mapping is not touched
    data["deployment"] = {}
    assert cls.model_validate(data).role == "all"


# -- the world size the launcher runs at, and overrides over YAML 1.1 readings ---------------------

USP = (
    "training:\n  attention_backend: usp\n  batch_size: 1\n  sp_ulysses_size: {sp}\n"
    "deployment:\n  trainer:\n    nproc_per_node: 4\n"
)


@pytest.mark.parametrize(
    ("world_size", "sp", "rules"),
    [
        (6, 3, {"world-size-matches-trainer-topology"}),  # 6 is divisible by 3: only the topology disagrees
        (6, 4, {"world-size-matches-trainer-topology", "world-size-divisible-by-sp"}),
        (4, 3, {"world-size-divisible-by-sp"}),
        (4, 4, set()),
    ],
)
def test_sequence_parallel_divisibility_is_judged_at_the_world_size_given(write, world_size, sp, rules):
    """§4.6: inside torchrun the launcher takes WORLD_SIZE from outside: rule 63 runs at that size, and the
    topology check says it disagrees; the topology's own size (4) is not the one the job runs at."""
    path = write("run.yaml", fill(OFFLINE, rest=USP.format(sp=sp)))
    found = problems(path, world_size)
    assert {d.rule for d in found} == rules
    for d in found:
        assert f"world size {world_size}" in d.message


@pytest.mark.parametrize("word", ["yes", "on"])
def test_a_yaml_1_1_boolean_an_override_replaces_is_not_a_file_the_loader_refuses(write, word):
    """PyYAML reads `yes` as true, so SpecForge loads the file and then applies the override: trainspec's
    stricter type error about the file stands, but no "override repairs a broken file" (the loader refuses
    nothing)."""
    path = write("run.yaml", fill(OFFLINE, rest=f"training:\n  compact_teacher: {word}\n"))
    [alone] = problems(path)
    assert alone.rule == "wrong-type" and "reads it as true" in alone.message
    found = problems_with(path, ["training.compact_teacher=false"])
    assert [d.rule for d in found] == ["wrong-type"] and found[0].message == alone.message
    refused = write("maybe.yaml", fill(OFFLINE, rest="training:\n  compact_teacher: maybe\n"))
    assert [d.rule for d in problems_with(refused, ["training.compact_teacher=false"])] == ["override-repairs-file"]
