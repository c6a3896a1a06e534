"""SpecForge a6b6b02 and the 0.2.0 release (reference §9): the five new fields, the rules N1-N3, and every
version on the corpus.

A case's config marks the line the diagnostic must point at with a trailing `# <`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

import trainspec
from trainspec.families import get_family
from trainspec.families.specforge import FAMILIES
from trainspec.families.specforge.model import RunConfigA6b6b02
from trainspec.families.specforge.rules import RULES
from trainspec.read.files import read
from trainspec.spec.paths import parse_path

from .conftest import CORPUS

FAMILY, FAMILY_0_2_0, FAMILY_A6B6B02 = FAMILIES
NEW = "specforge@a6b6b02"
RELEASE = "specforge@0.2.0"
BASE = "specforge@08eaeac"
N_IDS = ("inbox-server-url-origin", "inbox-server-url-online-only", "inbox-server-url-multinode")

SEED_CORPUS = sorted((CORPUS / "specforge").glob("*.yaml"))
NEW_CORPUS = sorted((CORPUS / "specforge-a6b6b02").glob("*.yaml"))
NEW_KEYS = {
    "inkling-dspark-disaggregated.yaml": ["model.sglang_disable_radix_cache"],
    "kimi-k3-dspark-disaggregated.yaml": [
        "training.lr_scheduler",
        "training.prompt_seed",
        "runtime.producer_concurrency",
    ],
}

# An online run on two trainer nodes with external capture servers: clean, and the relay may be set.
MULTINODE = """\
model:
  target_model_path: m
data:
  train_data_path: /d.jsonl
deployment:
  mode: disaggregated
  trainer:
    nnodes: {nnodes}
    nproc_per_node: 4
    master_addr: 10.0.0.1
  disaggregated:
    control_dir: /ctl
    backend: mooncake
    consumer_state_dir: /state
{dis}    server_urls: [http://10.0.0.2:30000]
"""

OFFLINE_DISAGGREGATED = """\
model:
  target_model_path: m
data:
  hidden_states_path: /feat
deployment:
  mode: disaggregated
  trainer:
    nnodes: 2
    nproc_per_node: 4
    master_addr: 10.0.0.1
  disaggregated:
    control_dir: /ctl
    backend: mooncake
{dis}"""

MANAGED = """\
model:
  target_model_path: m
data:
  train_data_path: /d.jsonl
deployment:
  mode: disaggregated
  trainer:
{trainer}    nproc_per_node: 1
  disaggregated:
    control_dir: /ctl
    backend: mooncake
{dis}    managed_local:
      trainer_cuda_visible_devices: ["0"]
      capture_servers:
        - port: 30000
          cuda_visible_devices: ["1"]
"""


def fill(template: str, **slots: str) -> str:
    return template.format_map(defaultdict(str, {"nnodes": "2", **slots}))


def inbox(url: str, mark: bool = True) -> str:
    return f"    inbox_server_url: {json.dumps(url)}{'  # <' if mark else ''}\n"


def marked_line(text: str) -> int:
    lines = [n for n, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("# <")]
    assert len(lines) == 1, "a case marks exactly one line"
    return lines[0]


def problems(path: Path, family: str = NEW, world_size: int | None = None) -> list[trainspec.Diagnostic]:
    return [d for d in trainspec.check(path, family=family, world_size=world_size) if d.severity.value != "note"]


def stated_world_size(path: Path) -> int:
    trainer = read(str(path)).data.get("deployment", {}).get("trainer", {})
    return int(trainer.get("nnodes", 1) * trainer.get("nproc_per_node", 1))


# -- the versions ---------------------------------------------------------------------------------


def test_plain_name_selects_a6b6b02_with_its_own_rules_and_examples():
    assert get_family("specforge") is FAMILY_A6B6B02
    assert get_family(BASE) is FAMILY
    assert FAMILY_A6B6B02.rules[: len(RULES)] == RULES
    assert [r.id for r in FAMILY_A6B6B02.rules[len(RULES) :]] == list(N_IDS)
    assert FAMILY.rules == RULES
    assert all(r.severity is trainspec.Severity.ERROR for r in FAMILY_A6B6B02.rules)
    assert set(FAMILY_A6B6B02.examples) == set(FAMILY.examples) | set(N_IDS)
    assert not set(N_IDS) & set(FAMILY.examples)


def test_the_0_2_0_release_is_selected_by_name_and_by_commit_and_has_a6b6b02s_rules():
    assert get_family(RELEASE) is FAMILY_0_2_0 is get_family("specforge@abd0346")
    assert (FAMILY_0_2_0.commit, FAMILY_0_2_0.released) == ("abd0346", "2026-08-07")
    assert FAMILY_0_2_0.rules == FAMILY_A6B6B02.rules
    assert FAMILY_0_2_0.examples == FAMILY_A6B6B02.examples
    schema, newer = (json.loads(f.schema_file.read_text(encoding="utf-8")) for f in (FAMILY_0_2_0, FAMILY_A6B6B02))
    assert schema["$defs"] == newer["$defs"] and schema["properties"] == newer["properties"]
    assert schema["$id"] == "urn:trainspec:schema:specforge@0.2.0"


def test_the_new_fields_stand_where_upstream_declares_them():
    """§9.1: each field right after its upstream neighbour, with its type, default, enum and bounds."""
    schema = json.loads(FAMILY_A6B6B02.schema_file.read_text(encoding="utf-8"))["$defs"]
    base = json.loads(FAMILY.schema_file.read_text(encoding="utf-8"))["$defs"]
    expected = {
        ("ModelConfig", "sglang_mem_fraction_static", "sglang_disable_radix_cache"): {
            "type": "boolean",
            "default": True,
        },
        ("RuntimeConfig", "producer_lease", "producer_concurrency"): {
            "type": "integer",
            "exclusiveMinimum": 0,
            "default": 1,
        },
        ("DisaggregatedDeploymentConfig", "consumer_state_dir", "inbox_server_url"): {
            "type": ["string", "null"],
            "default": None,
        },
        ("TrainingConfig", "learning_rate", "lr_scheduler"): {
            "type": "string",
            "enum": ["cosine", "constant"],
            "default": "cosine",
        },
        ("TrainingConfig", "seed", "prompt_seed"): {"type": ["integer", "null"], "default": None},
    }
    for (section, after, name), keywords in expected.items():
        keys = list(schema[section]["properties"])
        assert keys.index(name) == keys.index(after) + 1, (section, name)
        field = schema[section]["properties"][name]
        assert {k: field.get(k) for k in ("type", "default", "enum", "exclusiveMinimum")} == {
            "type": None,
            "default": None,
            "enum": None,
            "exclusiveMinimum": None,
            **keywords,
        }
        assert field["description"] and field["markdownDescription"]
        assert name not in base[section]["properties"]
    counts = {s: len(schema[s]["properties"]) for s in ("ModelConfig", "RuntimeConfig", "TrainingConfig")}
    assert counts == {"ModelConfig": 41, "RuntimeConfig": 7, "TrainingConfig": 45}
    assert len(schema["DisaggregatedDeploymentConfig"]["properties"]) == 19
    # nothing else changed: every base field, in the base order
    for section, definition in base.items():
        keys = [k for k in schema[section]["properties"] if k in definition["properties"]]
        assert keys == list(definition["properties"]), section
        assert all(schema[section]["properties"][k] == v for k, v in definition["properties"].items()), section


def test_the_typed_model_fills_the_new_defaults():
    path = CORPUS / "specforge" / "qwen3-8b-dspark-disaggregated.yaml"
    config = trainspec.load(path, model=RunConfigA6b6b02, family=NEW)
    assert config.model.sglang_disable_radix_cache is True
    assert config.training.lr_scheduler == "cosine"
    assert config.training.prompt_seed is None
    assert config.runtime.producer_concurrency == 1
    assert config.deployment.disaggregated.inbox_server_url is None


@pytest.mark.parametrize(
    ("line", "rule_id"),
    [
        ("model:\n  target_model_path: m\n  sglang_disable_radix_cache: 1  # <\n", "wrong-type"),
        ("training:\n  lr_scheduler: linear  # <\n", "not-allowed-value"),
        ("training:\n  prompt_seed: 1.5  # <\n", "wrong-type"),
        ("runtime:\n  producer_concurrency: 0  # <\n", "out-of-range"),
    ],
)
def test_the_new_fields_refuse_what_their_schema_refuses(write, line, rule_id):
    head = "model:\n  target_model_path: m\n" if not line.startswith("model:") else ""
    text = head + line + "data:\n  hidden_states_path: /feat\n"
    found = problems(write("run.yaml", text))
    assert [(d.rule, d.severity, d.line) for d in found] == [(rule_id, trainspec.Severity.ERROR, marked_line(text))]


def test_prompt_seed_takes_any_integer(write):
    text = "model:\n  target_model_path: m\ndata:\n  hidden_states_path: /feat\ntraining:\n  prompt_seed: -3\n"
    assert problems(write("run.yaml", text)) == []


# -- the corpus -----------------------------------------------------------------------------------


@pytest.mark.parametrize("family", [NEW, RELEASE, BASE])
@pytest.mark.parametrize("path", SEED_CORPUS, ids=[p.name for p in SEED_CORPUS])
def test_seed_corpus_clean_under_every_version(path, family):
    assert problems(path, family, stated_world_size(path)) == []
    assert problems(path, family) == []  # and with the world size the config states


@pytest.mark.parametrize("path", NEW_CORPUS, ids=[p.name for p in NEW_CORPUS])
def test_new_corpus_clean_under_a6b6b02_and_0_2_0(path):
    assert problems(path, NEW, stated_world_size(path)) == []
    assert problems(path, NEW) == []
    assert problems(path, RELEASE) == []
    assert problems(path, "specforge") == []  # the plain name selects a6b6b02


@pytest.mark.parametrize("path", NEW_CORPUS, ids=[p.name for p in NEW_CORPUS])
def test_new_corpus_refused_under_08eaeac_for_each_new_key(path):
    found = problems(path, BASE)
    assert {d.rule for d in found} == {"unknown-key"}, found
    document = read(str(path))
    keys = NEW_KEYS[path.name]
    lines = [pos.line for key in keys if (pos := document.where(parse_path(key))) is not None]
    assert sorted(d.line for d in found) == sorted(lines)
    assert all(any(key in d.message for d in found) for key in keys)


def test_new_corpus_holds_both_upstream_examples():
    assert [p.name for p in NEW_CORPUS] == sorted(NEW_KEYS)
    data = {p.name: read(str(p)).data for p in NEW_CORPUS}
    assert data["inkling-dspark-disaggregated.yaml"]["model"]["sglang_disable_radix_cache"] is False
    kimi = data["kimi-k3-dspark-disaggregated.yaml"]
    assert (kimi["training"]["lr_scheduler"], kimi["training"]["prompt_seed"]) == ("constant", 1)
    assert kimi["runtime"]["producer_concurrency"] == 1


# -- N1: the relay's URL is a bare HTTP origin ----------------------------------------------------

ACCEPTED = [
    "http://h:8000",
    "http://h:8000/",
    "HTTP://h:1",
    "Http://h:65535",
    "http://10.0.0.1:18080",
    "http://[::1]:8000",
    "http://node-0.cluster.local:8000",
]

# (url, the wrong part the message names)
REFUSED = [
    ("https://h:1", 'scheme is "https"'),
    ("ftp://h:1", 'scheme is "ftp"'),
    ("h:8000", "does not start with http://"),
    ("10.0.0.1:8000", "does not start with http://"),
    ("", "does not start with http://"),
    ("http:h:1", 'not followed by "//"'),
    ("http://h", "no port"),
    ("http://h:", "no port"),
    ("http://[::1]", "no port"),
    ("http://:8000", "no host"),
    ("http://u:p@h:1", "user or password"),
    ("http://u@h:1", "user or password"),
    ("http://h:1/x", 'path "/x"'),
    ("http://h:1/x/", 'path "/x/"'),
    ("http://h:1/;p", "path parameters"),
    ("http://h:1?q", 'query "?q"'),
    ("http://h:1/?q=1", 'query "?q=1"'),
    ("http://h:1#f", 'fragment "#f"'),
    ("http://h:0", 'port "0" is not a number from 1 to 65535'),
    ("http://h:65536", 'port "65536" is not a number from 1 to 65535'),
    ("http://h:-1", 'port "-1"'),
    ("http://h:+80", 'port "+80"'),
    ("http://h:http", 'port "http"'),
    ("http://h :1", "whitespace"),
    (" http://h:1", "whitespace"),
    ("http://h:1\t", "whitespace"),
    ("http://h:1\u00a0", "whitespace"),
    ("http://a:b:1", 'host "a:b" contains a colon'),
    ("http://[::1:8000", "no closing bracket"),
]


@pytest.mark.parametrize("url", ACCEPTED)
def test_origin_accepted(write, url):
    assert problems(write("run.yaml", fill(MULTINODE, dis=inbox(url, mark=False)))) == []


@pytest.mark.parametrize(("url", "part"), REFUSED, ids=[repr(u) for u, _ in REFUSED])
def test_origin_refused(write, url, part):
    text = fill(MULTINODE, dis=inbox(url))
    found = problems(write("run.yaml", text))
    assert [d.rule for d in found] == ["inbox-server-url-origin"], [d.message for d in found]
    (hit,) = found
    assert hit.severity is trainspec.Severity.ERROR
    assert hit.line == marked_line(text)
    assert f"deployment.disaggregated.inbox_server_url = {json.dumps(url)} is not a bare HTTP origin" in hit.message
    assert part in hit.message


def test_origin_names_every_wrong_part_in_one_message(write):
    found = problems(write("run.yaml", fill(MULTINODE, dis=inbox("http://u@h:1/x?q#f"))))
    assert [d.rule for d in found] == ["inbox-server-url-origin"]
    for part in ("user or password", 'path "/x"', 'query "?q"', 'fragment "#f"'):
        assert part in found[0].message


def test_a_relay_url_of_the_wrong_type_is_a_schema_error_not_n1(write):
    text = fill(MULTINODE, dis="    inbox_server_url: 8000  # <\n")
    found = problems(write("run.yaml", text))
    assert [(d.rule, d.line) for d in found] == [("wrong-type", marked_line(text))]


# -- N2 and N3 ------------------------------------------------------------------------------------

# (case name, rule id, config, other rules that must fire with it, what the message names)
CASES = [
    (
        "offline",
        "inbox-server-url-online-only",
        fill(OFFLINE_DISAGGREGATED, dis=inbox("http://h:8000")),
        (),
        ('inbox_server_url = "http://h:8000"', 'data.hidden_states_path = "/feat"'),
    ),
    (
        "offline-bad-origin-too",
        "inbox-server-url-online-only",
        fill(OFFLINE_DISAGGREGATED, dis=inbox("https://h:8000")),
        ("inbox-server-url-origin",),
        ('inbox_server_url = "https://h:8000"', 'data.hidden_states_path = "/feat"'),
    ),
    (
        "one-node",
        "inbox-server-url-multinode",
        fill(MULTINODE, nnodes="1", dis=inbox("http://h:8000")),
        (),
        ('inbox_server_url = "http://h:8000"', "deployment.trainer.nnodes = 1"),
    ),
    (
        "nnodes-unwritten",
        "inbox-server-url-multinode",
        fill(MULTINODE, dis=inbox("http://h:8000"))
        .replace("    nnodes: 2\n", "")
        .replace("    master_addr: 10.0.0.1\n", ""),
        (),
        ("deployment.trainer.nnodes = 1",),
    ),
    (
        "managed-one-node",
        "inbox-server-url-multinode",
        fill(MANAGED, dis=inbox("http://h:8000")),
        (),
        ("deployment.trainer.nnodes = 1",),
    ),
    (
        "offline-one-node",
        "inbox-server-url-multinode",
        fill(OFFLINE_DISAGGREGATED, dis=inbox("http://h:8000"))
        .replace("    nnodes: 2\n", "    nnodes: 1\n")
        .replace("    nproc_per_node: 4\n", "    nproc_per_node: 1\n"),
        ("inbox-server-url-online-only",),
        ("deployment.trainer.nnodes = 1",),
    ),
]


@pytest.mark.parametrize(("name", "rule_id", "text", "also", "names"), CASES, ids=[c[0] for c in CASES])
def test_rule_fires(write, name, rule_id, text, also, names):
    found = problems(write("run.yaml", text))
    assert sorted(d.rule for d in found) == sorted([rule_id, *also]), [d.message for d in found]
    hit = next(d for d in found if d.rule == rule_id)
    assert hit.severity is trainspec.Severity.ERROR
    assert hit.line == marked_line(text), hit
    assert all(n in hit.message for n in names), hit.message


def test_n3_and_managed_single_node_exclude_each_other(write):
    """With managed_local, a relay URL fails N3 on one node and managed-single-node on two; never both."""
    one = problems(write("one.yaml", fill(MANAGED, dis=inbox("http://h:8000", mark=False))))
    two = problems(
        write(
            "two.yaml",
            fill(MANAGED, trainer="    nnodes: 2\n    master_addr: 10.0.0.1\n", dis=inbox("http://h:8000", mark=False)),
        )
    )
    assert [d.rule for d in one] == ["inbox-server-url-multinode"]
    assert [d.rule for d in two] == ["managed-single-node"]


@pytest.mark.parametrize(
    "text",
    [
        fill(MULTINODE, dis=inbox("http://h:8000", mark=False)),
        fill(MULTINODE, nnodes="3", dis=inbox("http://h:8000", mark=False)),
        fill(MULTINODE),  # no relay
        fill(OFFLINE_DISAGGREGATED),
        fill(MANAGED),
    ],
    ids=["two-nodes", "three-nodes", "no-relay", "offline-no-relay", "managed-no-relay"],
)
def test_clean_without_the_n_rules(write, text):
    assert problems(write("run.yaml", text)) == []


def test_the_base_version_has_neither_the_field_nor_its_rules(write):
    text = fill(MULTINODE, dis=inbox("https://h:1"))
    found = problems(write("run.yaml", text), BASE)
    assert [(d.rule, d.line) for d in found] == [("unknown-key", marked_line(text))]
    assert {r.id for r in get_family(BASE).rules}.isdisjoint(N_IDS)
