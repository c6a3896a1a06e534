"""For each SpecForge rule and schema id: a config that breaks it, and the fix.

`trainspec explain` and docs/reference/specforge.md show these; a test runs
each one and checks that the bad config triggers its rule and the fix is clean.

Every example is a whole run config built from one of four small runs: an
offline local run (precomputed hidden states), an offline disaggregated run,
an online disaggregated run with external capture servers, and an online run
whose capture stack `managed_local` starts. The fix is the bad config with one
piece of text replaced, so each example shows exactly what changes.
"""

from __future__ import annotations

from trainspec.spec.codes import (
    DUPLICATE_KEY,
    LOADER_FORMAT,
    NOT_A_MAPPING,
    OVERRIDE_REFUSED_BY_LOADER,
    UNSUPPORTED_YAML,
    WORLD_SIZE_DERIVED,
    YAML_DIALECT,
    YAML_DIALECT_REFUSED,
)
from trainspec.spec.errors import InvalidValue
from trainspec.spec.examples import Example, Run

TARGET = "model:\n  target_model_path: Qwen/Qwen3-8B\n"
FEATURES = "  hidden_states_path: ./cache/hidden_states/qwen3-8b-sharegpt\n"
CONVERSATIONS = "  train_data_path: ./cache/dataset/sharegpt_train.jsonl\n"
CONTROL = "    control_dir: outputs/qwen3-8b-eagle3/control\n"
EVAL = "  eval_hidden_states_path: ./cache/hidden_states/qwen3-8b-sharegpt-eval\n"
USP = "  attention_backend: usp\n"
GIB = 1024**3


def _section(name: str, body: str) -> str:
    return f"{name}:\n{body}" if body else ""


def offline(*, model: str = "", data: str = "", training: str = "", rest: str = "") -> str:
    """A local run on precomputed hidden states; `rest` holds any further top-level sections."""
    return TARGET + model + "data:\n" + FEATURES + data + _section("training", training) + rest


def offline_disaggregated(
    *, training: str = "", disaggregated: str = "", backend: str = "mooncake", rest: str = ""
) -> str:
    """Precomputed hidden states served to the trainer by a separate producer process."""
    return (
        TARGET
        + "data:\n"
        + FEATURES
        + _section("training", training)
        + rest
        + "deployment:\n  mode: disaggregated\n  disaggregated:\n"
        + CONTROL
        + f"    backend: {backend}\n"
        + disaggregated
    )


def online(
    *,
    model: str = "",
    data: str = "",
    training: str = "",
    trainer: str = "    nproc_per_node: 4\n",
    disaggregated: str = "",
    backend: str = "mooncake",
) -> str:
    """Conversations whose target hidden states external SGLang capture servers compute during training."""
    return (
        TARGET
        + model
        + "data:\n"
        + CONVERSATIONS
        + data
        + _section("training", training)
        + "deployment:\n  mode: disaggregated\n"
        + _section("  trainer", trainer)
        + "  disaggregated:\n"
        + CONTROL
        + f"    backend: {backend}\n"
        + disaggregated
        + "    server_urls:\n      - http://10.0.0.2:30000\n"
    )


def managed(
    *,
    model: str = "",
    data: str = CONVERSATIONS,
    training: str = "",
    trainer: str = "",
    disaggregated: str = "",
    stack: str = "",
    servers: str = "",
) -> str:
    """An online run on one node: `managed_local` starts Mooncake and a tp-2 capture server beside the trainer."""
    return (
        TARGET
        + model
        + "data:\n"
        + data
        + _section("training", training)
        + "deployment:\n  mode: disaggregated\n  trainer:\n"
        + (trainer or "    nproc_per_node: 2\n")
        + "  disaggregated:\n"
        + CONTROL
        + "    backend: mooncake\n"
        + disaggregated
        + '    managed_local:\n      trainer_cuda_visible_devices: ["0", "1"]\n'
        + stack
        + '      capture_servers:\n        - port: 30000\n          cuda_visible_devices: ["2", "3"]\n'
        + "          tp_size: 2\n"
        + servers
    )


def _fix(bad: str, old: str, new: str, world_size: int | None = None) -> Example:
    """The example whose fix replaces the one occurrence of `old` in `bad` by `new`."""
    if bad.count(old) != 1:
        raise InvalidValue(f"{old!r} occurs {bad.count(old)} times in the example, not once")
    return Example(bad, bad.replace(old, new), fmt="yaml", run=Run(world_sizes=(world_size,) if world_size else ()))


def _drop(bad: str, lines: str) -> Example:
    """The example whose fix deletes `lines` from `bad`."""
    return _fix(bad, lines, "")


SHARED_DIR_UNDER_MANAGED = (
    "backend: shared_dir  # trainspec: ignore[disaggregated-shared-dir-needs-store-root, "
    "online-disaggregated-needs-mooncake]"
)
"""The backend `managed-needs-mooncake-backend` refuses under managed_local: shared_dir, the only other one,
also breaks two rules at the same key (it needs a shared directory, and the online run managed_local
serves needs Mooncake), so the example suppresses those two."""


def second_server(port: int, devices: str) -> str:
    """A second tp-2 capture server for `managed`."""
    return f"        - port: {port}\n          cuda_visible_devices: [{devices}]\n          tp_size: 2\n"


EXAMPLES: dict[str, Example] = {
    # -- data, training and runtime sections
    "data-exactly-one-source": _drop(offline(data=CONVERSATIONS), CONVERSATIONS),
    "training-down-sample-ratio-min-range": _fix(
        offline(training="  strategy: peagle\n  down_sample_ratio: 0.3\n  down_sample_ratio_min: 0.5\n"),
        "down_sample_ratio_min: 0.5",
        "down_sample_ratio_min: 0.2",
    ),
    "training-usp-batch-size-1": _fix(
        offline(
            training=USP + "  sp_ulysses_size: 4\n  batch_size: 2\n",
            rest="deployment:\n  trainer:\n    nproc_per_node: 4\n",
        ),
        "batch_size: 2",
        "batch_size: 1",
    ),
    "training-usp-needs-sp": _fix(
        offline(training=USP, rest="deployment:\n  trainer:\n    nproc_per_node: 4\n"),
        USP,
        USP + "  sp_ulysses_size: 4\n",
    ),
    "training-sp-needs-usp": _fix(
        offline(
            training="  attention_backend: flex_attention\n  sp_ulysses_size: 4\n",
            rest="deployment:\n  trainer:\n    nproc_per_node: 4\n",
        ),
        "attention_backend: flex_attention",
        "attention_backend: usp",
    ),
    "runtime-in-flight-watermark-order": _fix(
        offline(rest="runtime:\n  in_flight_high_watermark: 256\n  in_flight_low_watermark: 300\n"),
        "in_flight_low_watermark: 300",
        "in_flight_low_watermark: 192",
    ),
    "runtime-resident-low-needs-high": _fix(
        offline(rest=f"runtime:\n  resident_low_watermark_bytes: {8 * GIB}\n"),
        "runtime:\n",
        f"runtime:\n  resident_high_watermark_bytes: {16 * GIB}\n",
    ),
    "runtime-resident-watermark-order": _fix(
        offline(
            rest=f"runtime:\n  resident_high_watermark_bytes: {8 * GIB}\n  resident_low_watermark_bytes: {16 * GIB}\n"
        ),
        f"resident_low_watermark_bytes: {16 * GIB}",
        f"resident_low_watermark_bytes: {4 * GIB}",
    ),
    "runtime-store-covers-resident-high": _fix(
        offline(
            rest=f"runtime:\n  resident_high_watermark_bytes: {16 * GIB}\n"
            f"  feature_store_max_resident_bytes: {8 * GIB}\n"
        ),
        f"feature_store_max_resident_bytes: {8 * GIB}",
        f"feature_store_max_resident_bytes: {32 * GIB}",
    ),
    "eval-source-and-interval-together": _fix(offline(data=EVAL), EVAL, EVAL + "training:\n  eval_interval: 500\n"),
    "eval-data-path-unsupported": _fix(
        offline(data="  eval_data_path: ./cache/dataset/sharegpt_eval.jsonl\n"),
        "  eval_data_path: ./cache/dataset/sharegpt_eval.jsonl\n",
        EVAL + "training:\n  eval_interval: 500\n",
    ),
    "compact-teacher-chunk-needs-compact-teacher": _fix(
        offline(training="  compact_teacher_chunk_size: 4096\n"),
        "  compact_teacher_chunk_size",
        "  compact_teacher: true\n  compact_teacher_chunk_size",
    ),
    "training-dpace-alpha-range": _fix(
        offline(training="  strategy: dflash\n  loss_type: dpace\n  dpace_alpha: 1.5\n"),
        "dpace_alpha: 1.5",
        "dpace_alpha: 0.5",
    ),
    "training-down-sample-ratio-range": _fix(
        offline(training="  strategy: peagle\n  down_sample_ratio: 0\n"),
        "down_sample_ratio: 0\n",
        "down_sample_ratio: 0.5\n",
    ),
    "model-input-modality-shape": _fix(
        offline(model='  input_modality: "text "\n'), 'input_modality: "text "', "input_modality: text"
    ),
    "warm-start-excludes-resume": _drop(
        offline(
            model="  draft_checkpoint_path: outputs/qwen3-8b-eagle3-stage1/checkpoints/step_20000\n",
            training="  resume_from: outputs/qwen3-8b-eagle3/checkpoints/step_4000\n",
        ),
        "  draft_checkpoint_path: outputs/qwen3-8b-eagle3-stage1/checkpoints/step_20000\n",
    ),
    "offline-no-trainer-tp": _fix(offline(training="  tp_size: 2\n"), "tp_size: 2", "tp_size: 1"),
    # -- trainer topology
    "trainer-node-rank-below-nnodes": _fix(
        offline(
            rest="deployment:\n  trainer:\n    nnodes: 2\n    nproc_per_node: 8\n    node_rank: 2\n"
            "    master_addr: 10.0.0.1\n"
        ),
        "node_rank: 2",
        "node_rank: 1",
    ),
    "trainer-master-addr-multinode": _fix(
        offline(rest="deployment:\n  trainer:\n    nnodes: 2\n    nproc_per_node: 8\n"),
        "    nproc_per_node: 8\n",
        "    nproc_per_node: 8\n    master_addr: 10.0.0.1\n",
    ),
    "world-size-matches-trainer-topology": _fix(
        offline(rest="deployment:\n  trainer:\n    nnodes: 1\n    nproc_per_node: 4\n"),
        "nproc_per_node: 4",
        "nproc_per_node: 8",
        8,
    ),
    "world-size-divisible-by-sp": _fix(
        offline(training=USP + "  sp_ulysses_size: 4\n", rest="deployment:\n  trainer:\n    nproc_per_node: 6\n"),
        "sp_ulysses_size: 4",
        "sp_ulysses_size: 2",
        6,
    ),
    # -- deployment mode and roles
    "online-needs-disaggregated": _fix(
        TARGET + "data:\n" + CONVERSATIONS + "deployment:\n  mode: local_colocated\n", CONVERSATIONS, FEATURES
    ),
    "deployment-disaggregated-required": _fix(
        offline(rest="deployment:\n  mode: disaggregated\n"),
        "  mode: disaggregated\n",
        "  mode: disaggregated\n  disaggregated:\n" + CONTROL + "    backend: mooncake\n",
    ),
    "deployment-disaggregated-needs-mode": _fix(
        offline_disaggregated().replace("mode: disaggregated", "mode: local_colocated"),
        "mode: local_colocated",
        "mode: disaggregated",
    ),
    "role-needs-disaggregated": _fix(offline(training="  role: consumer\n"), "role: consumer", "role: all"),
    "disaggregated-needs-role": _fix(offline_disaggregated(training="  role: all\n"), "role: all", "role: auto"),
    "producer-no-profiling": _fix(
        offline_disaggregated(training="  role: producer\n", rest="profiling:\n  enabled: true\n"),
        "enabled: true",
        "enabled: false",
    ),
    "producer-no-resume": _drop(
        offline_disaggregated(training="  role: producer\n  resume_from: outputs/qwen3-8b-eagle3/checkpoints\n"),
        "  resume_from: outputs/qwen3-8b-eagle3/checkpoints\n",
    ),
    # -- disaggregated section
    "disaggregated-control-dir-nonempty": _fix(
        offline_disaggregated().replace(CONTROL, '    control_dir: ""\n'),
        'control_dir: ""',
        "control_dir: outputs/qwen3-8b-eagle3/control",
    ),
    "disaggregated-shared-dir-needs-store-root": _fix(
        offline_disaggregated(backend="shared_dir"),
        "    backend: shared_dir\n",
        "    backend: shared_dir\n    store_root: /shared/specforge/qwen3-8b-eagle3/features\n",
    ),
    "consumer-state-dir-online-only": _drop(
        offline_disaggregated(disaggregated="    consumer_state_dir: /local/scratch/specforge-consumer\n"),
        "    consumer_state_dir: /local/scratch/specforge-consumer\n",
    ),
    "disaggregated-consumer-state-dir-shape": _fix(
        online(disaggregated='    consumer_state_dir: ""\n'),
        'consumer_state_dir: ""',
        "consumer_state_dir: /local/scratch/specforge-consumer",
    ),
    # -- online runs
    "online-disaggregated-needs-mooncake": _fix(
        online(backend="shared_dir", disaggregated="    store_root: /shared/specforge/qwen3-8b-eagle3/features\n"),
        "    backend: shared_dir\n    store_root: /shared/specforge/qwen3-8b-eagle3/features\n",
        "    backend: mooncake\n",
    ),
    "online-disaggregated-pure-dp": _fix(online(training="  tp_size: 2\n"), "tp_size: 2", "tp_size: 1"),
    "eval-source-needs-offline": _fix(
        online(data=EVAL, training="  eval_interval: 500\n"), EVAL + "training:\n  eval_interval: 500\n", ""
    ),
    "usp-needs-offline": _fix(
        online(training=USP + "  sp_ulysses_size: 4\n"),
        USP + "  sp_ulysses_size: 4\n",
        "  attention_backend: flex_attention\n",
    ),
    "multinode-online-needs-consumer-state-dir": _fix(
        online(trainer="    nnodes: 2\n    nproc_per_node: 8\n    master_addr: 10.0.0.1\n"),
        CONTROL,
        CONTROL + "    consumer_state_dir: /local/scratch/specforge-consumer\n",
    ),
    # -- managed_local: the capture stack started on this node
    "managed-online-only": _fix(managed(data=FEATURES), FEATURES, CONVERSATIONS),
    "managed-single-node": _fix(
        managed(trainer="    nnodes: 2\n    nproc_per_node: 2\n    master_addr: 10.0.0.1\n"),
        "    nnodes: 2\n    nproc_per_node: 2\n    master_addr: 10.0.0.1\n",
        "    nproc_per_node: 2\n",
    ),
    "managed-role-auto": _fix(managed(training="  role: consumer\n"), "role: consumer", "role: auto"),
    "managed-no-resume": _drop(
        managed(training="  resume_from: outputs/qwen3-8b-eagle3/checkpoints\n"),
        "training:\n  resume_from: outputs/qwen3-8b-eagle3/checkpoints\n",
    ),
    "managed-needs-mooncake-backend": _fix(
        managed().replace("backend: mooncake", SHARED_DIR_UNDER_MANAGED), SHARED_DIR_UNDER_MANAGED, "backend: mooncake"
    ),
    "managed-no-store-root": _drop(
        managed(disaggregated="    store_root: /shared/specforge/features\n"),
        "    store_root: /shared/specforge/features\n",
    ),
    "managed-no-server-urls": _drop(
        managed(disaggregated="    server_urls:\n      - http://127.0.0.1:30000\n"),
        "    server_urls:\n      - http://127.0.0.1:30000\n",
    ),
    "managed-no-mooncake-endpoints": _fix(
        managed(disaggregated="    mooncake_protocol: rdma\n    mooncake_rdma_devices: mlx5_0\n"),
        "    mooncake_protocol: rdma\n    mooncake_rdma_devices: mlx5_0\n    managed_local:\n",
        "    managed_local:\n      mooncake:\n        protocol: rdma\n        rdma_devices: mlx5_0\n",
    ),
    "managed-no-producer-segment-size": _fix(
        managed(disaggregated=f"    producer_segment_size: {32 * GIB}\n"),
        f"    producer_segment_size: {32 * GIB}\n    managed_local:\n",
        f"    managed_local:\n      mooncake:\n        global_segment_size_bytes: {32 * GIB}\n",
    ),
    "managed-context-headroom": _fix(
        managed(model="  sglang_context_length: 4096\n", data=CONVERSATIONS + "  max_length: 4096\n"),
        "sglang_context_length: 4096",
        "sglang_context_length: 4103",
    ),
    "managed-no-sglang-dp": _fix(
        managed(model="  sglang_enable_dp_attention: true\n"),
        "sglang_enable_dp_attention: true",
        "sglang_enable_dp_attention: false",
    ),
    "managed-ep-divides-tp": _fix(managed(model="  sglang_ep_size: 4\n"), "sglang_ep_size: 4", "sglang_ep_size: 2"),
    "managed-trainer-devices-match-nproc": _fix(
        managed(trainer="    nproc_per_node: 4\n"), "nproc_per_node: 4", "nproc_per_node: 2"
    ),
    "managed-trainer-devices-unique": _fix(managed().replace('["0", "1"]', '["0", "0"]'), '["0", "0"]', '["0", "1"]'),
    "managed-trainer-device-token-shape": _fix(managed().replace('["0", "1"]', '["0,1"]'), '["0,1"]', '["0", "1"]'),
    "managed-devices-disjoint": _fix(managed().replace('["2", "3"]', '["1", "2"]'), '["1", "2"]', '["2", "3"]'),
    "mooncake-ports-distinct": _fix(
        managed(stack="      mooncake:\n        rpc_port: 35551\n        metadata_port: 35551\n"),
        "metadata_port: 35551",
        "metadata_port: 35880",
    ),
    "mooncake-local-hostname-shape": _fix(
        managed(stack='      mooncake:\n        local_hostname: "10.0.0.1 "\n'),
        'local_hostname: "10.0.0.1 "',
        "local_hostname: 10.0.0.1",
    ),
    "managed-ports-disjoint": _fix(managed().replace("port: 30000", "port: 35551"), "port: 35551", "port: 30000"),
    "capture-tp-matches-devices": _fix(managed().replace("tp_size: 2", "tp_size: 4"), "tp_size: 4", "tp_size: 2"),
    "capture-devices-unique": _fix(managed().replace('["2", "3"]', '["2", "2"]'), '["2", "2"]', '["2", "3"]'),
    "capture-device-token-shape": _fix(managed().replace('["2", "3"]', '["2,3"]'), '["2,3"]', '["2", "3"]'),
    "managed-capture-ports-unique": _fix(
        managed(servers=second_server(30000, '"4", "5"')),
        second_server(30000, '"4", "5"'),
        second_server(30001, '"4", "5"'),
    ),
    "managed-capture-devices-unshared": _fix(
        managed(servers=second_server(30001, '"3", "4"')), '["3", "4"]', '["4", "5"]'
    ),
}

# the engine's own id that only a family stating its own world size shows
_TOPOLOGY = offline(rest="deployment:\n  trainer:\n    nnodes: 1\n    nproc_per_node: 8\n")
EXAMPLES[WORLD_SIZE_DERIVED.id] = Example(_TOPOLOGY, _TOPOLOGY, "yaml", fixed_run=Run(world_sizes=(8,)))

# the engine's ids for YAML that SpecForge's loader (YAML 1.1) reads differently
EXAMPLES[YAML_DIALECT.id] = _fix(offline(training="  num_epochs: 010\n"), "num_epochs: 010", "num_epochs: 10")
EXAMPLES[YAML_DIALECT_REFUSED.id] = _fix(
    offline(rest="run_id: 2024_01_01\n"), "run_id: 2024_01_01", 'run_id: "2024_01_01"'
)

EXAMPLES[OVERRIDE_REFUSED_BY_LOADER.id] = Example(
    offline(),
    offline(model="  aux_hidden_state_layer_ids: [1, 2, 3]\n"),
    "yaml",
    run=Run(overrides=("model.aux_hidden_state_layer_ids=[1,2,3]",)),
    fixed_run=Run(),
)
# the engine's ids for YAML the reader refuses
EXAMPLES[DUPLICATE_KEY.id] = _fix(offline(training="  num_epochs: 1\n  num_epochs: 2\n"), "  num_epochs: 1\n", "")
EXAMPLES[UNSUPPORTED_YAML.id] = _fix(offline(training="  num_epochs: !!python/int 2\n"), "!!python/int ", "")
# a list says nothing of its family, and more than one family reads YAML: the family is named
EXAMPLES[NOT_A_MAPPING.id] = Example("- model\n- data\n", offline(), "yaml", run=Run(family="specforge"))

EXAMPLES[LOADER_FORMAT.id] = Example(offline(), offline(), "yaml", filename="RUN.YAML")

# the legacy migration's ids
_STATE = "    consumer_state_dir: outputs/qwen3-8b-eagle3/state\n"
_LOCAL_WITHOUT_DISAGGREGATED = "deployment:\n  mode: local_colocated\n  disaggregated: null\n"
"""A local run that writes its (absent) disaggregated section as null: a legacy key bound there cannot move."""
EXAMPLES.update(
    {
        "legacy-key-migrated": Example(
            offline_disaggregated(training="  deployment_mode: disaggregated\n"), offline_disaggregated(), "yaml"
        ),
        "legacy-deployment-mode-conflict": Example(
            offline_disaggregated(training="  deployment_mode: local_colocated\n"), offline_disaggregated(), "yaml"
        ),
        "legacy-server-urls-conflict": Example(
            online(training="  server_urls:\n    - http://10.0.0.9:30000\n"), online(), "yaml"
        ),
        "legacy-metadata-db-path-name": Example(
            offline_disaggregated(training="  metadata_db_path: outputs/qwen3-8b-eagle3/state/consumer.db\n"),
            offline_disaggregated(),
            "yaml",
        ),
        "legacy-metadata-db-path-conflict": Example(
            online(training="  metadata_db_path: outputs/old/consumer.sqlite\n", disaggregated=_STATE),
            online(disaggregated=_STATE),
            "yaml",
        ),
        "legacy-key-not-migrated": _drop(
            offline(training="  server_urls:\n    - http://10.0.0.9:30000\n", rest=_LOCAL_WITHOUT_DISAGGREGATED),
            "training:\n  server_urls:\n    - http://10.0.0.9:30000\n",
        ),
    }
)

# -- SpecForge 0.2.0: the examples of the inbox relay's rules (reference §9.2), which it adds
_INBOX = "    inbox_server_url: http://10.0.0.1:18080\n"
_TWO_NODES = "    nnodes: 2\n    nproc_per_node: 4\n    master_addr: 10.0.0.1\n"
EXAMPLES_INBOX_RELAY: dict[str, Example] = {
    "inbox-server-url-origin": _fix(
        online(trainer=_TWO_NODES, disaggregated=_STATE + _INBOX.replace("http://", "https://")),
        "https://10.0.0.1:18080",
        "http://10.0.0.1:18080",
    ),
    "inbox-server-url-online-only": _drop(
        offline_disaggregated(disaggregated=_INBOX).replace(
            "  mode: disaggregated\n", "  mode: disaggregated\n  trainer:\n" + _TWO_NODES
        ),
        _INBOX,
    ),
    "inbox-server-url-multinode": _fix(online(disaggregated=_STATE + _INBOX), "    nproc_per_node: 4\n", _TWO_NODES),
}
