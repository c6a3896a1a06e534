"""SpecForge rules: what its run config checks beyond single fields (reference §4).

Ids and numbers follow the reference. Single-field constraints (rules 1, 3, 4,
the lower bound of 5, 16-18, 20, 21, 26, 27, 42) and the two deployment
conditionals (34, 35) live in the schema, which names them with
`x-trainspec-rule`; they are not repeated here. Rules that cannot fire on a
config passing the other checks (37, the sp half of 60, 62) are not
implemented; their numbers stay reserved. Rule 61 (world size >= 1) is the
`--world-size` argument check.

Upstream stops at the first failing check; these rules run independently and
report every problem. A rule that needs the derived data mode (online or
offline, §3.2) stays quiet while rule 2 fails, since the mode is then not
defined and the real problem is already reported.

Whitespace (rules 1, 16, 17, 20, 27; §4.6). Upstream tests whitespace with
Python's notion of it. These checks are the schema's `pattern` keywords, and
trainspec's validator of record (python-jsonschema) evaluates `pattern` with
Python's `re`, whose `\\s` is exactly that notion. So trainspec agrees with
upstream on every code point, and no rule here re-checks those fields. Editors
evaluate the same patterns with ECMAScript regexes and differ on a few code
points: they accept U+001C-U+001F and U+0085 (trainspec rejects them, as
upstream) and reject U+FEFF (trainspec accepts it, as upstream).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.spec.paths import Path, format_path
from trainspec.spec.rules import Violation, passing_divisors, rule
from trainspec.spec.wording import show

DIS_AT: Path = ("deployment", "disaggregated")
ML_AT: Path = (*DIS_AT, "managed_local")
MC_AT: Path = (*ML_AT, "mooncake")
CS_AT: Path = (*ML_AT, "capture_servers")
DIS, ML, MC, CS = map(format_path, (DIS_AT, ML_AT, MC_AT, CS_AT))
SOURCE_PATHS: tuple[Path, ...] = (("data", "train_data_path"), ("data", "prompts_path"), ("data", "hidden_states_path"))
SOURCES = tuple(map(format_path, SOURCE_PATHS))
MOONCAKE_PORTS = ("rpc_port", "metadata_port", "metrics_port")
ENDPOINTS = (
    "mooncake_metadata_server",
    "mooncake_master_server_addr",
    "mooncake_local_hostname",
    "mooncake_protocol",
    "mooncake_rdma_devices",
)
CONTEXT_HEADROOM = 7
"""SGLang keeps one slot for the generated token and five internal ones beyond the prompt."""


def data_mode(train: str, prompts: str, hidden: str) -> str | None:
    """ "offline" or "online" when exactly one source is filled, else None."""
    filled = [bool(train), bool(prompts), bool(hidden)]
    if sum(filled) != 1:
        return None
    return "offline" if hidden else "online"


def online_source(train: str, prompts: str) -> str:
    """The filled online source, as `path = value`."""
    return f"{format_path(online_path(train))} = {show(train or prompts)}"


def online_path(train: str) -> Path:
    """The path of the filled online source (`online_source` names it)."""
    return SOURCE_PATHS[0] if train else SOURCE_PATHS[1]


HIDDEN = SOURCE_PATHS[2]


def _items(values: list[Any] | None) -> list[dict[str, Any]]:
    return [v for v in values or [] if isinstance(v, dict)]


# -- §4.4: section checks ------------------------------------------------------------------


@rule("data-exactly-one-source", "error", *SOURCES)
def exactly_one_source(train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """A run reads exactly one data source; an empty string counts as unset."""
    filled = [(p, v) for p, v in zip(SOURCE_PATHS, (train, prompts, hidden), strict=True) if v]
    if len(filled) == 1:
        return
    choices = (
        "set exactly one of data.train_data_path (raw conversations, online), data.prompts_path "
        "(pre-tokenized prompts, online) or data.hidden_states_path (precomputed hidden states, offline)"
    )
    if not filled:
        yield Violation(f"no data source is set; {choices}", at=("data",))
    else:
        named = " and ".join(f"{format_path(p)} = {show(v)}" for p, v in filled)
        yield Violation(f"{len(filled)} data sources are set ({named}); {choices}", at=filled[0][0])


@rule("training-down-sample-ratio-min-range", "error", "training.down_sample_ratio_min", "training.down_sample_ratio")
def down_sample_ratio_min_range(ratio_min: float, ratio: float) -> Iterator[str]:
    """The lower end of the down-sampling range cannot exceed its upper end."""
    if ratio_min > ratio:
        yield (
            f"training.down_sample_ratio_min = {show(ratio_min)} must not exceed "
            f"training.down_sample_ratio = {show(ratio)}"
        )


@rule("training-usp-batch-size-1", "error", "training.batch_size", "training.attention_backend")
def usp_batch_size_1(batch_size: int, backend: str) -> Iterator[str]:
    """The usp attention backend splits one sequence across ranks, so it trains one sample per step."""
    if backend == "usp" and batch_size != 1:
        yield f'training.batch_size = {batch_size} but training.attention_backend = "usp" needs batch_size 1'


@rule(
    "training-usp-needs-sp", "error", "training.attention_backend", "training.sp_ulysses_size", "training.sp_ring_size"
)
def usp_needs_sp(backend: str, ulysses: int, ring: int) -> Iterator[str]:
    """usp is sequence parallelism; without an sp degree above 1 there is nothing to split."""
    if backend == "usp" and ulysses * ring <= 1:
        yield (
            f'training.attention_backend = "usp" needs sequence parallelism, but training.sp_ulysses_size = '
            f"{ulysses} and training.sp_ring_size = {ring}; their product must exceed 1"
        )


@rule(
    "training-sp-needs-usp", "error", "training.sp_ulysses_size", "training.sp_ring_size", "training.attention_backend"
)
def sp_needs_usp(ulysses: int, ring: int, backend: str) -> Iterator[Violation]:
    """Only the usp attention backend implements sequence parallelism."""
    if backend != "usp" and ulysses * ring != 1:
        at = ("training", "sp_ulysses_size" if ulysses != 1 else "sp_ring_size")
        yield Violation(
            f"training.sp_ulysses_size = {ulysses} and training.sp_ring_size = {ring} ask for sequence "
            f'parallelism, which needs training.attention_backend = "usp" (it is {show(backend)})',
            at=at,
        )


@rule(
    "runtime-in-flight-watermark-order", "error", "runtime.in_flight_low_watermark", "runtime.in_flight_high_watermark"
)
def in_flight_watermark_order(low: int, high: int) -> Iterator[str]:
    """Back-pressure resumes below the low watermark, so it must not be above the high one."""
    if low > high:
        yield (f"runtime.in_flight_low_watermark = {low} is above runtime.in_flight_high_watermark = {high}")


@rule(
    "runtime-resident-low-needs-high",
    "error",
    "runtime.resident_low_watermark_bytes",
    "runtime.resident_high_watermark_bytes",
)
def resident_low_needs_high(low: int | None, high: int | None) -> Iterator[str]:
    """A low resident watermark only makes sense under a high one."""
    if low is not None and high is None:
        yield (
            f"runtime.resident_low_watermark_bytes = {low} is set but "
            "runtime.resident_high_watermark_bytes is not; set the high watermark too"
        )


@rule(
    "runtime-resident-watermark-order",
    "error",
    "runtime.resident_low_watermark_bytes",
    "runtime.resident_high_watermark_bytes",
)
def resident_watermark_order(low: int | None, high: int | None) -> Iterator[str]:
    """The resident low watermark must not be above the high one."""
    if low is not None and high is not None and low > high:
        yield (f"runtime.resident_low_watermark_bytes = {low} is above runtime.resident_high_watermark_bytes = {high}")


@rule(
    "runtime-store-covers-resident-high",
    "error",
    "runtime.feature_store_max_resident_bytes",
    "runtime.resident_high_watermark_bytes",
)
def store_covers_resident_high(store: int | None, high: int | None) -> Iterator[str]:
    """The feature store must be able to hold what the high watermark lets in."""
    if store is not None and high is not None and store < high:
        yield (
            f"runtime.feature_store_max_resident_bytes = {store} is below "
            f"runtime.resident_high_watermark_bytes = {high}"
        )


@rule("trainer-node-rank-below-nnodes", "error", "deployment.trainer.node_rank", "deployment.trainer.nnodes")
def node_rank_below_nnodes(node_rank: int | None, nnodes: int) -> Iterator[str]:
    """Node ranks count from 0, so a node's rank is below the node count."""
    if node_rank is not None and node_rank >= nnodes:
        yield (
            f"deployment.trainer.node_rank = {node_rank} must be below deployment.trainer.nnodes = {nnodes} "
            f"(ranks are 0..{nnodes - 1})"
        )


@rule("trainer-master-addr-multinode", "error", "deployment.trainer.master_addr", "deployment.trainer.nnodes")
def master_addr_multinode(master_addr: str | None, nnodes: int) -> Iterator[str]:
    """Several trainer nodes must agree on a rendezvous host."""
    if nnodes > 1 and not master_addr:
        yield (
            f"deployment.trainer.nnodes = {nnodes} needs deployment.trainer.master_addr, the host every node "
            f"meets at (it is {show(master_addr)})"
        )


@rule("mooncake-ports-distinct", "error", *(f"{MC}.{p}" for p in MOONCAKE_PORTS))
def mooncake_ports_distinct(rpc: int | None, metadata: int | None, metrics: int | None) -> Iterator[Violation]:
    """The managed Mooncake master opens three listeners, which need three ports."""
    fields: dict[int | None, list[str]] = {}
    for name, port in zip(MOONCAKE_PORTS, (rpc, metadata, metrics), strict=True):
        fields.setdefault(port, []).append(name)
    for port, names in fields.items():
        if port is not None and len(names) > 1:  # all None: no managed_local section
            yield Violation(
                f"{' and '.join(f'{MC}.{n}' for n in names)} use the same port {port}; "
                "the three Mooncake ports must differ",
                at=(*MC_AT, names[-1]),
                related=tuple((*MC_AT, n) for n in names),
            )


@rule("capture-tp-matches-devices", "error", CS)
def capture_tp_matches_devices(servers: list[dict[str, Any]] | None) -> Iterator[Violation]:
    """A capture server runs one tensor-parallel rank per visible device."""
    for i, server in enumerate(_items(servers)):
        devices, tp = server.get("cuda_visible_devices") or [], server.get("tp_size", 1)
        if len(devices) != tp:
            yield Violation(
                f"{CS}[{i}].tp_size = {tp} but {CS}[{i}].cuda_visible_devices lists {len(devices)} "
                f"device{'s' if len(devices) != 1 else ''}; they must match",
                at=(*CS_AT, i, "tp_size"),
            )


@rule("managed-capture-ports-unique", "error", CS)
def capture_ports_unique(servers: list[dict[str, Any]] | None) -> Iterator[Violation]:
    """Each managed capture server listens on its own port."""
    owner: dict[int, int] = {}
    for k, server in enumerate(_items(servers)):
        port = server.get("port")
        if port in owner:
            yield Violation(
                f"{CS}[{k}].port = {port} is also the port of capture server {owner[port]} "
                f"({CS}[{owner[port]}].port); each server needs its own port",
                at=(*CS_AT, k, "port"),
            )
        elif isinstance(port, int):
            owner[port] = k


@rule("managed-ports-disjoint", "error", *(f"{MC}.{p}" for p in MOONCAKE_PORTS), CS)
def ports_disjoint(
    rpc: int | None, metadata: int | None, metrics: int | None, servers: list[dict[str, Any]] | None
) -> Iterator[Violation]:
    """The managed Mooncake master and capture servers share one host, so their ports must not overlap."""
    mooncake = {port: name for name, port in zip(MOONCAKE_PORTS, (rpc, metadata, metrics), strict=True)}
    clashes = sorted(
        (port, i) for i, s in enumerate(_items(servers)) if isinstance(port := s.get("port"), int) and port in mooncake
    )
    overlapping = ", ".join(str(p) for p in sorted({p for p, _ in clashes}))
    for port, i in clashes:
        yield Violation(
            f"{CS}[{i}].port = {port} is also {MC}.{mooncake[port]}; Mooncake and capture-server ports "
            f"must not overlap (overlapping: {overlapping})",
            at=(*CS_AT, i, "port"),
            related=((*MC_AT, mooncake[port]), CS_AT),
        )


@rule("managed-capture-devices-unshared", "error", CS)
def capture_devices_unshared(servers: list[dict[str, Any]] | None) -> Iterator[Violation]:
    """Two capture servers cannot share a GPU."""
    owner: dict[str, int] = {}
    for k, server in enumerate(_items(servers)):
        for token in server.get("cuda_visible_devices") or []:
            first = owner.setdefault(token, k)
            if first != k:
                yield Violation(
                    f"device {show(token)} is used by capture servers {first} and {k} "
                    f"({CS}[{first}].cuda_visible_devices and {CS}[{k}].cuda_visible_devices)",
                    at=(*CS_AT, k, "cuda_visible_devices"),
                )


@rule("managed-devices-disjoint", "error", f"{ML}.trainer_cuda_visible_devices", CS)
def devices_disjoint(trainer: list[str] | None, servers: list[dict[str, Any]] | None) -> Iterator[str]:
    """The trainer and the capture servers need separate GPUs."""
    mine = set(trainer or [])
    for i, server in enumerate(_items(servers)):
        shared = sorted(mine & set(server.get("cuda_visible_devices") or []))
        if shared:
            yield (
                f"{ML}.trainer_cuda_visible_devices shares {', '.join(show(t) for t in shared)} with capture "
                f"server {i} ({CS}[{i}].cuda_visible_devices); trainer and capture servers need separate devices"
            )


@rule("disaggregated-shared-dir-needs-store-root", "error", f"{DIS}.store_root", f"{DIS}.backend")
def shared_dir_needs_store_root(store_root: str | None, backend: str | None) -> Iterator[str]:
    """The shared_dir backend exchanges features through a directory."""
    if backend == "shared_dir" and not store_root:
        yield (
            f'{DIS}.backend = "shared_dir" needs {DIS}.store_root, the shared directory, but it is '
            f"{'empty' if store_root == '' else 'not set'}"
        )


@rule("managed-needs-mooncake-backend", "error", f"{DIS}.backend", ML)
def managed_needs_mooncake(backend: str | None, managed: Any) -> Iterator[str]:
    """The managed local stack starts a Mooncake master, so it only works with the mooncake backend."""
    if managed is not None and backend != "mooncake":
        yield f'{ML} runs a Mooncake store, so {DIS}.backend must be "mooncake", not {show(backend)}'


@rule("managed-no-store-root", "error", f"{DIS}.store_root", ML)
def managed_no_store_root(store_root: str | None, managed: Any) -> Iterator[str]:
    """With managed_local there is no shared directory to point at."""
    if managed is not None and store_root:
        yield f"{DIS}.store_root = {show(store_root)} cannot be used with {ML}; remove it"


@rule("managed-no-server-urls", "error", f"{DIS}.server_urls", ML)
def managed_no_server_urls(urls: list[str] | None, managed: Any) -> Iterator[str]:
    """managed_local starts the capture servers itself and derives their URLs."""
    if managed is not None and urls:
        yield (
            f"{DIS}.server_urls = {show(urls)} cannot be used with {ML}, which derives the URLs of the capture "
            "servers it starts; remove server_urls"
        )


@rule("managed-no-mooncake-endpoints", "error", *(f"{DIS}.{e}" for e in ENDPOINTS), ML)
def managed_no_mooncake_endpoints(*values: Any) -> Iterator[Violation]:
    """managed_local configures its own Mooncake endpoints; an empty string counts as unset."""
    *endpoints, managed = values
    filled = [((*DIS_AT, e), v) for e, v in zip(ENDPOINTS, endpoints, strict=True) if v]
    if managed is not None and filled:
        named = ", ".join(f"{format_path(p)} = {show(v)}" for p, v in filled)
        yield Violation(
            f"{named} cannot be used with {ML}, which configures its own Mooncake endpoints "
            f"(set them under {MC} instead)",
            at=filled[0][0],
            related=(*(p for p, _ in filled), ML_AT),
        )


@rule("managed-no-producer-segment-size", "error", f"{DIS}.producer_segment_size", ML)
def managed_no_producer_segment_size(size: int | None, managed: Any) -> Iterator[str]:
    """managed_local sizes Mooncake segments itself."""
    if managed is not None and size is not None:
        yield (
            f"{DIS}.producer_segment_size = {size} cannot be used with {ML}; use {MC}.global_segment_size_bytes instead"
        )


# -- §4.5: cross-section checks ---------------------------------------------------------------


@rule("online-needs-disaggregated", "error", "deployment.mode", *SOURCES)
def online_needs_disaggregated(dmode: str, train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """Online data is captured from a live target by separate servers, which only a disaggregated run has."""
    if data_mode(train, prompts, hidden) == "online" and dmode != "disaggregated":
        yield Violation(
            f"{online_source(train, prompts)} is an online source, which captures hidden states from capture "
            f'servers and needs deployment.mode = "disaggregated" (it is {show(dmode)}); for a local run '
            "use precomputed data.hidden_states_path",
            related=(("deployment", "mode"), online_path(train), HIDDEN),
        )


@rule("role-needs-disaggregated", "error", "training.role", "deployment.mode")
def role_needs_disaggregated(role: str, dmode: str) -> Iterator[str]:
    """Roles other than `all` split the work between processes of a disaggregated run."""
    if role != "all" and dmode != "disaggregated":
        yield (
            f'training.role = {show(role)} needs deployment.mode = "disaggregated" (it is {show(dmode)}); '
            'a local run uses role "all"'
        )


@rule("disaggregated-needs-role", "error", "training.role", "deployment.mode")
def disaggregated_needs_role(role: str, dmode: str) -> Iterator[str]:
    """A disaggregated run needs a role that says which side a process plays."""
    if dmode == "disaggregated" and role == "all":
        yield (
            'training.role = "all" cannot be used with deployment.mode = "disaggregated"; use "auto", '
            '"producer" or "consumer" (or leave training.role out for "auto")'
        )


@rule("warm-start-excludes-resume", "error", "model.draft_checkpoint_path", "training.resume_from")
def warm_start_excludes_resume(checkpoint: str | None, resume: str | None) -> Iterator[str]:
    """A warm start and a resume both decide where the draft weights come from; "" counts as set."""
    if checkpoint is not None and resume is not None:
        yield (
            f"model.draft_checkpoint_path = {show(checkpoint)} and training.resume_from = {show(resume)} "
            "cannot both be set: the first loads draft weights only, the second restores the whole training "
            "state (weights, optimizer, scheduler, counters); keep one"
        )


@rule("producer-no-profiling", "error", "profiling.enabled", "training.role")
def producer_no_profiling(enabled: bool, role: str) -> Iterator[str]:
    """The profiler traces training steps, which a producer does not run."""
    if role == "producer" and enabled:
        yield 'profiling.enabled = true cannot be used with training.role = "producer", which runs no training steps'


@rule("eval-source-and-interval-together", "error", "data.eval_hidden_states_path", "training.eval_interval")
def eval_source_and_interval(eval_path: str, interval: int) -> Iterator[Violation]:
    """Evaluation needs both its features and an interval; either alone is a mistake."""
    if eval_path and interval <= 0:
        yield Violation(
            f"data.eval_hidden_states_path = {show(eval_path)} is set but training.eval_interval = "
            f"{interval}; set an interval above 0 to evaluate",
            at=("data", "eval_hidden_states_path"),
        )
    elif not eval_path and interval > 0:
        yield Violation(
            f"training.eval_interval = {interval} but data.eval_hidden_states_path is "
            f"{show(eval_path)}; set the evaluation features or an interval of 0",
            at=("training", "eval_interval"),
        )


@rule("eval-source-needs-offline", "error", "data.eval_hidden_states_path", *SOURCES)
def eval_source_needs_offline(eval_path: str, train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """Evaluation reads precomputed features, which only offline runs use."""
    if eval_path and data_mode(train, prompts, hidden) == "online":
        yield Violation(
            f"data.eval_hidden_states_path = {show(eval_path)} needs an offline run, but "
            f"{online_source(train, prompts)} is an online source",
            related=(("data", "eval_hidden_states_path"), online_path(train)),
        )


@rule(
    "compact-teacher-chunk-needs-compact-teacher",
    "error",
    "training.compact_teacher_chunk_size",
    "training.compact_teacher",
)
def chunk_needs_compact_teacher(chunk: int | None, compact: bool) -> Iterator[str]:
    """The chunk size tunes the compact teacher and does nothing without it."""
    if not compact and chunk is not None:
        yield (
            f"training.compact_teacher_chunk_size = {chunk} needs training.compact_teacher = true "
            f"(it is {show(compact)})"
        )


@rule("online-disaggregated-needs-mooncake", "error", f"{DIS}.backend", "deployment.mode", *SOURCES)
def online_needs_mooncake(
    backend: str | None, dmode: str, train: str, prompts: str, hidden: str
) -> Iterator[Violation]:
    """Online capture streams features through Mooncake."""
    if data_mode(train, prompts, hidden) == "online" and dmode == "disaggregated" and backend != "mooncake":
        yield Violation(
            f"{DIS}.backend = {show(backend)} but {online_source(train, prompts)} is an online source, "
            'which streams features through the "mooncake" backend',
            related=((*DIS_AT, "backend"), online_path(train)),
        )


@rule("consumer-state-dir-online-only", "error", f"{DIS}.consumer_state_dir", *SOURCES)
def consumer_state_dir_online_only(state_dir: str | None, train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """The consumer state database tracks online capture; offline runs have none.

    Its other half (a local deployment) cannot fire here: a `disaggregated`
    section under a local mode already fails deployment-disaggregated-needs-mode.
    """
    if state_dir is not None and data_mode(train, prompts, hidden) == "offline":
        yield Violation(
            f"{DIS}.consumer_state_dir = {show(state_dir)} is only for online runs, but "
            f"data.hidden_states_path = {show(hidden)} makes this run offline; remove it",
            related=((*DIS_AT, "consumer_state_dir"), HIDDEN),
        )


@rule(
    "multinode-online-needs-consumer-state-dir",
    "error",
    f"{DIS}.consumer_state_dir",
    "deployment.trainer.nnodes",
    "deployment.mode",
    ML,
    *SOURCES,
)
def multinode_needs_state_dir(
    state_dir: str | None, nnodes: int, dmode: str, managed: Any, train: str, prompts: str, hidden: str
) -> Iterator[Violation]:
    """Each trainer node keeps the online consumer's SQLite database (WAL mode) on a local disk."""
    if (
        data_mode(train, prompts, hidden) == "online"
        and dmode == "disaggregated"
        and managed is None
        and nnodes > 1
        and state_dir is None
    ):
        yield Violation(
            f"deployment.trainer.nnodes = {nnodes} with online capture needs {DIS}.consumer_state_dir: each "
            "trainer node keeps the consumer's SQLite database (WAL mode) in its own node-local directory",
            related=((*DIS_AT, "consumer_state_dir"), ("deployment", "trainer", "nnodes"), ("deployment", "mode")),
        )


@rule("managed-online-only", "error", ML, *SOURCES)
def managed_online_only(managed: Any, train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """managed_local starts capture servers, which only online runs use."""
    if managed is not None and data_mode(train, prompts, hidden) == "offline":
        yield Violation(
            f"{ML} starts capture servers for online data, but data.hidden_states_path = {show(hidden)} "
            "makes this run offline; remove managed_local or use an online source",
            related=(ML_AT, HIDDEN),
        )


@rule("managed-single-node", "error", "deployment.trainer.nnodes", ML)
def managed_single_node(nnodes: int, managed: Any) -> Iterator[str]:
    """managed_local runs the whole stack on one host."""
    if managed is not None and nnodes != 1:
        yield f"deployment.trainer.nnodes = {nnodes} but {ML} runs everything on one node; it needs nnodes = 1"


@rule("managed-role-auto", "error", "training.role", ML)
def managed_role_auto(role: str, managed: Any) -> Iterator[str]:
    """managed_local launches both sides itself, so the process role is decided for it."""
    if managed is not None and role != "auto":
        yield f'training.role = {show(role)} cannot be used with {ML}, which needs "auto" (or no role)'


@rule("managed-no-resume", "error", "training.resume_from", ML)
def managed_no_resume(resume: str | None, managed: Any) -> Iterator[str]:
    """The managed stack cannot resume a run; "" counts as set."""
    if managed is not None and resume is not None:
        yield f"training.resume_from = {show(resume)} cannot be used with {ML}, which always starts fresh"


@rule("managed-context-headroom", "error", "model.sglang_context_length", "data.max_length", ML)
def managed_context_headroom(context: int | None, max_length: int, managed: Any) -> Iterator[Violation]:
    """A capture server's context must hold a full-length prompt plus SGLang's reserved slots."""
    need = max_length + CONTEXT_HEADROOM
    if managed is not None and context is not None and context < need:
        yield Violation(
            f"model.sglang_context_length = {context} is too small for data.max_length = {max_length}: the "
            f"capture servers need at least {show(need)} (max_length + {CONTEXT_HEADROOM} reserved slots)",
            related=(("model", "sglang_context_length"), ("data", "max_length")),
        )


@rule("managed-no-sglang-dp", "error", "model.sglang_enable_dp_attention", "model.sglang_enable_dp_lm_head", ML)
def managed_no_sglang_dp(dp_attention: bool, dp_lm_head: bool, managed: Any) -> Iterator[Violation]:
    """Managed capture servers run plain tensor parallelism, without SGLang's data-parallel options."""
    on = [k for k, v in (("sglang_enable_dp_attention", dp_attention), ("sglang_enable_dp_lm_head", dp_lm_head)) if v]
    if managed is not None and on:
        named = " and ".join(f"model.{k} = true" for k in on)
        yield Violation(
            f"{named} cannot be used with {ML}", at=("model", on[0]), related=(*(("model", k) for k in on), ML_AT)
        )


@rule(
    "managed-trainer-devices-match-nproc",
    "error",
    f"{ML}.trainer_cuda_visible_devices",
    "deployment.trainer.nproc_per_node",
)
def trainer_devices_match_nproc(devices: list[str] | None, nproc: int) -> Iterator[str]:
    """managed_local starts one trainer process per listed device."""
    if devices is not None and len(devices) != nproc:
        yield (
            f"{ML}.trainer_cuda_visible_devices lists {len(devices)} device{'s' if len(devices) != 1 else ''} "
            f"but deployment.trainer.nproc_per_node = {nproc}; they must match"
        )


@rule("managed-ep-divides-tp", "error", "model.sglang_ep_size", CS)
def ep_divides_tp(ep: int, servers: list[dict[str, Any]] | None) -> Iterator[Violation]:
    """Expert parallelism on a capture server splits its tensor-parallel group."""
    bad = [(i, s.get("tp_size", 1)) for i, s in enumerate(_items(servers)) if s.get("tp_size", 1) % ep]
    if bad:
        sizes = ", ".join(str(t) for t in sorted({t for _, t in bad}))
        where = ", ".join(f"{i} (tp_size {t})" for i, t in bad)
        yield Violation(
            f"model.sglang_ep_size = {ep} must divide the tp_size of every capture server; it does not divide "
            f"tp_size {sizes} (capture servers {where})",
            related=(),
        )


@rule("producer-no-resume", "error", "training.resume_from", "training.role")
def producer_no_resume(resume: str | None, role: str) -> Iterator[str]:
    """A producer holds no training state to resume; "" counts as set."""
    if role == "producer" and resume is not None:
        yield f'training.resume_from = {show(resume)} cannot be used with training.role = "producer"'


@rule("usp-needs-offline", "error", "training.attention_backend", *SOURCES)
def usp_needs_offline(backend: str, train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """Sequence-parallel training is only supported on precomputed features."""
    if backend == "usp" and data_mode(train, prompts, hidden) == "online":
        yield Violation(
            f'training.attention_backend = "usp" needs an offline run (data.hidden_states_path), but '
            f"{online_source(train, prompts)} is an online source",
            related=(("training", "attention_backend"), online_path(train), HIDDEN),
        )


@rule("offline-no-trainer-tp", "error", "training.tp_size", *SOURCES)
def offline_no_trainer_tp(tp: int, train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """The draft trainer does not shard the draft with tensor parallelism."""
    if tp != 1 and data_mode(train, prompts, hidden) == "offline":
        yield Violation(
            f"training.tp_size = {tp} must be 1 for an offline run (data.hidden_states_path is set)",
            related=(("training", "tp_size"), HIDDEN),
        )


@rule("online-disaggregated-pure-dp", "error", "training.tp_size", "deployment.mode", *SOURCES)
def online_pure_dp(tp: int, dmode: str, train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """Online disaggregated trainers are pure data parallel; target TP belongs on the capture servers."""
    if tp != 1 and dmode == "disaggregated" and data_mode(train, prompts, hidden) == "online":
        yield Violation(
            f"training.tp_size = {tp} must be 1 for an online disaggregated run: the trainer is pure data "
            "parallel, and tensor parallelism for the target belongs on the capture servers",
            related=(),
        )


# -- §4.6: world size -----------------------------------------------------------------------------


@rule("world-size-divisible-by-sp", "error", "training.sp_ulysses_size", "training.sp_ring_size")
def divisible_by_sp(ulysses: int, ring: int, *, world_size: int) -> Iterator[str]:
    """Sequence-parallel groups tile the ranks, so their size must divide the world size."""
    sp = ulysses * ring
    if world_size % sp:
        yield (
            f"world size {world_size} is not divisible by the sequence-parallel size training.sp_ulysses_size "
            f"× training.sp_ring_size = {ulysses} × {ring} = {show(sp)}; sequence-parallel sizes that pass: "
            f"{passing_divisors(world_size)}"
        )


@rule(
    "world-size-matches-trainer-topology",
    "error",
    "deployment.trainer.nnodes",
    "deployment.trainer.nproc_per_node",
    "training.role",
)
def matches_trainer_topology(nnodes: int, nproc: int, role: str, *, world_size: int) -> Iterator[Violation]:
    """SpecForge's launcher refuses a world size other than the trainer topology; a producer is one process."""
    if role == "producer":
        if world_size != 1:
            said = 'training.role = "producer" runs as a single process, not as a multi-rank job'
            yield Violation(f"world size {world_size}: {said}", related=(("training", "role"),))
    elif world_size != nnodes * nproc:
        yield Violation(
            f"world size {world_size} does not match the trainer topology deployment.trainer.nnodes × "
            f"nproc_per_node = {nnodes} × {nproc} = {show(nnodes * nproc)}",
            related=(("deployment", "trainer", "nnodes"), ("deployment", "trainer", "nproc_per_node")),
        )


RULES = (
    exactly_one_source,
    down_sample_ratio_min_range,
    usp_batch_size_1,
    usp_needs_sp,
    sp_needs_usp,
    in_flight_watermark_order,
    resident_low_needs_high,
    resident_watermark_order,
    store_covers_resident_high,
    node_rank_below_nnodes,
    master_addr_multinode,
    mooncake_ports_distinct,
    capture_tp_matches_devices,
    capture_ports_unique,
    ports_disjoint,
    capture_devices_unshared,
    devices_disjoint,
    shared_dir_needs_store_root,
    managed_needs_mooncake,
    managed_no_store_root,
    managed_no_server_urls,
    managed_no_mooncake_endpoints,
    managed_no_producer_segment_size,
    online_needs_disaggregated,
    role_needs_disaggregated,
    disaggregated_needs_role,
    warm_start_excludes_resume,
    producer_no_profiling,
    eval_source_and_interval,
    eval_source_needs_offline,
    chunk_needs_compact_teacher,
    online_needs_mooncake,
    consumer_state_dir_online_only,
    multinode_needs_state_dir,
    managed_online_only,
    managed_single_node,
    managed_role_auto,
    managed_no_resume,
    managed_context_headroom,
    managed_no_sglang_dp,
    trainer_devices_match_nproc,
    ep_divides_tp,
    producer_no_resume,
    usp_needs_offline,
    offline_no_trainer_tp,
    online_pure_dp,
    divisible_by_sp,
    matches_trainer_topology,
)
