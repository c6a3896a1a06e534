"""SpecForge legacy keys (reference §5): migration while checking, and `trainspec migrate` on files."""

from __future__ import annotations

import difflib
import json
import os
import textwrap

import pytest
from ruamel.yaml import YAML

import trainspec
from trainspec.api import check_path
from trainspec.cli import main
from trainspec.families import every_version, get_family
from trainspec.families.specforge.migrations import migrate_mapping
from trainspec.spec.family import Family

HEAD = "model:\n  target_model_path: m\ndata:\n  train_data_path: /d.jsonl\n"
DIS = "    control_dir: /ctl\n    backend: mooncake\n"


def diagnostics(path, **kwargs) -> list[trainspec.Diagnostic]:
    return [d for d in trainspec.check(path, family="specforge", **kwargs) if d.severity.value != "note"]


def by_rule(found: list[trainspec.Diagnostic]) -> dict[str, list[trainspec.Diagnostic]]:
    out: dict[str, list[trainspec.Diagnostic]] = {}
    for d in found:
        out.setdefault(d.rule, []).append(d)
    return out


# -- while checking ------------------------------------------------------------------------------


def test_deployment_mode_moves(write):
    path = write(
        "run.yaml", HEAD + "training:\n  deployment_mode: disaggregated\ndeployment:\n  disaggregated:\n" + DIS
    )
    [warning] = diagnostics(path)
    assert (warning.rule, warning.severity, warning.line, warning.column) == (
        "legacy-key-migrated",
        trainspec.Severity.WARNING,
        6,
        3,
    )
    assert "training.deployment_mode" in warning.message and "deployment.mode" in warning.message
    config = trainspec.load(path)
    assert config.deployment.mode == "disaggregated" and config.role == "auto"  # role follows the migrated mode


def test_server_urls_move_and_imply_disaggregated(write):
    path = write(
        "run.yaml", HEAD + "training:\n  server_urls:\n    - http://h:30000\ndeployment:\n  disaggregated:\n" + DIS
    )
    [warning] = diagnostics(path)
    assert warning.rule == "legacy-key-migrated" and warning.line == 6
    assert "deployment.disaggregated.server_urls" in warning.message
    assert 'deployment.mode = "disaggregated"' in warning.message
    config = trainspec.load(path)
    assert config.deployment.disaggregated.server_urls == ["http://h:30000"]
    assert config.deployment.mode == "disaggregated"


def test_empty_server_urls_move_but_imply_nothing(write):
    path = write("run.yaml", HEAD + "training:\n  server_urls: []\n")
    found = by_rule(diagnostics(path))
    assert found["legacy-key-migrated"][0].line == 6
    # the empty list still creates deployment.disaggregated, which a local mode rejects (upstream does the same)
    assert "deployment-disaggregated-needs-mode" in found


@pytest.mark.parametrize(("db", "state_dir"), [("/mnt/state/consumer.sqlite", "/mnt/state"), ("consumer.sqlite", ".")])
def test_metadata_db_path_becomes_its_directory(write, db, state_dir):
    path = write("run.yaml", HEAD + f"training:\n  metadata_db_path: {db}\ndeployment:\n  disaggregated:\n" + DIS)
    [warning] = diagnostics(path)
    assert warning.rule == "legacy-key-migrated" and warning.line == 6
    assert "deployment.disaggregated.consumer_state_dir" in warning.message
    config = trainspec.load(path)
    assert config.deployment.disaggregated.consumer_state_dir == state_dir
    assert config.deployment.mode == "disaggregated"


def test_later_diagnostics_on_a_moved_value_point_at_the_legacy_key(write):
    path = write("run.yaml", HEAD + "training:\n  batch_size: 1\n  deployment_mode: colocated\n")
    found = by_rule(diagnostics(path))
    assert found["not-allowed-value"][0].line == 7
    assert found["not-allowed-value"][0].config_path == "deployment.mode"
    offline = HEAD.replace("train_data_path: /d.jsonl", "hidden_states_path: /f")
    path = write(
        "run.yaml", offline + "training:\n  metadata_db_path: /s/consumer.sqlite\ndeployment:\n  disaggregated:\n" + DIS
    )
    found = by_rule(diagnostics(path))
    assert found["consumer-state-dir-online-only"][0].line == 6  # the consumer_state_dir the legacy key made


def test_sections_the_migration_creates_point_at_the_legacy_key(write):
    path = write("run.yaml", HEAD + "training:\n  server_urls: [http://h:1]\n")
    found = by_rule(diagnostics(path))
    assert {d.line for d in found["missing-key"]} == {6}  # control_dir and backend of the created section


def test_null_legacy_keys_are_dropped_with_a_warning(write):
    path = write(
        "run.yaml",
        HEAD + "training:\n  deployment_mode: null\n  server_urls: null\n"
        "deployment:\n  mode: disaggregated\n  disaggregated:\n" + DIS,
    )
    found = diagnostics(path)
    assert [(d.rule, d.line) for d in found] == [("legacy-key-migrated", 6), ("legacy-key-migrated", 7)]
    assert all("nothing to move" in d.message for d in found)


def test_empty_metadata_db_path_creates_the_section(write):
    path = write("run.yaml", HEAD + 'training:\n  metadata_db_path: ""\n')
    found = by_rule(diagnostics(path))
    assert found["legacy-key-migrated"][0].line == 6
    assert {"missing-key", "deployment-disaggregated-needs-mode"} <= set(found)


@pytest.mark.parametrize(
    ("legacy", "canonical", "rule", "names"),
    [
        (
            "deployment_mode: local_colocated",
            "mode: disaggregated\n  disaggregated:\n" + DIS,
            "legacy-deployment-mode-conflict",
            ['training.deployment_mode = "local_colocated"', 'deployment.mode = "disaggregated"'],
        ),
        (
            "server_urls: [http://a:1]",
            "mode: disaggregated\n  disaggregated:\n    server_urls: [http://b:1]\n" + DIS,
            "legacy-server-urls-conflict",
            ['training.server_urls = ["http://a:1"]', 'deployment.disaggregated.server_urls = ["http://b:1"]'],
        ),
        (
            "metadata_db_path: /a/consumer.sqlite",
            "mode: disaggregated\n  disaggregated:\n    consumer_state_dir: /b\n" + DIS,
            "legacy-metadata-db-path-conflict",
            [
                'training.metadata_db_path = "/a/consumer.sqlite"',
                '"/a"',
                'deployment.disaggregated.consumer_state_dir = "/b"',
            ],
        ),
        (
            "metadata_db_path: /a/state.db",
            "mode: disaggregated\n  disaggregated:\n" + DIS,
            "legacy-metadata-db-path-name",
            [
                'training.metadata_db_path = "/a/state.db"',
                "consumer.sqlite",
                "deployment.disaggregated.consumer_state_dir",
            ],
        ),
        (
            "metadata_db_path: /a/consumer.sqlite/",
            "mode: disaggregated\n  disaggregated:\n" + DIS,
            "legacy-metadata-db-path-name",
            ['"/a/consumer.sqlite/"'],
        ),
    ],
)
def test_conflicts_are_errors_at_the_legacy_key_and_keep_the_canonical_value(write, legacy, canonical, rule, names):
    path = write(
        "run.yaml",
        HEAD + f"training:\n  batch_size: 2\n  {legacy}\ndeployment:\n  {canonical}  trainer:\n    node_rank: 4\n",
    )
    found = by_rule(diagnostics(path))
    [error] = found.pop(rule)
    assert error.severity is trainspec.Severity.ERROR and error.line == 7
    for name in names:
        assert name in error.message
    # validation went on with the canonical value: the rest of the file is still checked
    assert set(found) == {"trainer-node-rank-below-nnodes"}


def test_legacy_keys_with_deployment_not_a_mapping(write):
    path = write("run.yaml", HEAD + "training:\n  server_urls: [http://a:1]\ndeployment: 5\n")
    found = by_rule(diagnostics(path))
    assert found["legacy-key-not-migrated"][0].line == 6
    assert found["wrong-type"][0].line == 7


def test_a_legacy_path_is_not_an_override_target(write):
    path = write("run.yaml", HEAD.replace("train_data_path: /d.jsonl", "hidden_states_path: /f"))
    [found] = diagnostics(path, overrides=["training.deployment_mode=disaggregated"])
    assert found.rule == "override-unknown-path" and "`deployment.mode`" in found.message


def test_legacy_keys_in_json(write):
    path = write(
        "run.json",
        json.dumps(
            {
                "model": {"target_model_path": "m"},
                "data": {"train_data_path": "/d"},
                "training": {"deployment_mode": "disaggregated"},
                "deployment": {"disaggregated": {"control_dir": "/c", "backend": "mooncake"}},
            },
            indent=2,
        ),
    )
    [warning] = diagnostics(path)
    assert warning.rule == "legacy-key-migrated" and warning.line == 9


def test_migration_runs_on_round_trip_yaml_trees():
    """The same code migrates ruamel.yaml's CommentedMap (what `trainspec migrate` edits) and plain dicts."""
    tree = YAML(typ="rt").load("training:\n  server_urls: [http://a:1]  # old\n  lr: 1\n")
    steps = migrate_mapping(tree)
    assert [s.rule for s in steps] == ["legacy-key-migrated"]
    assert type(tree["deployment"]) is type(tree) and tree["deployment"]["disaggregated"]["server_urls"] == [
        "http://a:1"
    ]
    assert list(tree["training"]) == ["lr"]


# -- trainspec migrate -------------------------------------------------------------------------------

LEGACY_FILE = """\
# SpecForge run, written before the deployment section existed
model:
  target_model_path: Qwen/Qwen3-8B  # the target
  draft_model_config: "configs/qwen3-8b-eagle3.json"
data:
  train_data_path: ./cache/dataset/sharegpt_train.jsonl
  max_length: 4096
training:
  # optimisation
  batch_size: 1
  learning_rate: 1e-4
  deployment_mode: disaggregated  # moved by trainspec migrate
  server_urls:
    - http://127.0.0.1:30000
  metadata_db_path: outputs/state/consumer.sqlite
  # how often to save, in steps
  save_interval: 1000
run_id: "007"
deployment:
  trainer:
    nproc_per_node: 8
  disaggregated:
    control_dir: outputs/control
    backend: mooncake

# where checkpoints go
output_dir: ./outputs/run
"""

LEGACY_LINES = {12, 13, 14, 15}


def run_cli(*args: str, capsys) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_migrate_rewrites_legacy_keys_and_keeps_everything_else(write, capsys):
    path = write("run.yaml", LEGACY_FILE)
    code, out, err = run_cli("migrate", str(path), capsys=capsys)
    assert code == 0 and "migrated 3 legacy keys" in out
    assert err.count("legacy-key-migrated") == 3
    new = path.read_text()
    old_lines, new_lines = LEGACY_FILE.splitlines(keepends=True), new.splitlines(keepends=True)
    removed, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes():
        if tag in ("delete", "replace"):
            removed.extend(range(i1 + 1, i2 + 1))
        if tag in ("insert", "replace"):
            added.extend(new_lines[j1:j2])
    assert set(removed) == LEGACY_LINES  # every other line is kept byte for byte, in order
    # new keys go at the end of their section
    assert added == [
        "    server_urls:\n",
        "      - http://127.0.0.1:30000\n",
        "    consumer_state_dir: outputs/state\n",
        "  mode: disaggregated\n",
    ]
    assert "# how often to save, in steps\n  save_interval: 1000\n" in new  # the comment after a moved key stays
    assert new.endswith("\n# where checkpoints go\noutput_dir: ./outputs/run\n")
    assert diagnostics(path, world_size=8) == []  # the result validates clean
    code, out, _ = run_cli("migrate", str(path), capsys=capsys)
    assert (code, out.strip()) == (0, f"{path}: nothing to migrate") and path.read_text() == new


def test_the_legacy_keys_count_as_the_familys_for_detection(write, capsys):
    """Migrate exists for such files: a short config whose legacy keys are a third of its keys is specforge's."""
    training = "training:\n  deployment_mode: disaggregated\n  server_urls: [http://a:1]\n"
    path = write("legacy.yaml", HEAD + training + "  metadata_db_path: /s/consumer.sqlite\n  num_epochs: 6\n")
    code, out, err = run_cli("migrate", str(path), capsys=capsys)
    assert code == 0 and "migrated 3 legacy keys" in out and "unknown-family" not in err
    assert "  mode: disaggregated\n" in path.read_text()


def test_migrate_diff_writes_nothing(write, capsys):
    path = write("run.yaml", LEGACY_FILE)
    before = os.stat(path)
    code, out, _ = run_cli("migrate", str(path), "--diff", capsys=capsys)
    assert code == 0
    assert out.startswith(f"--- a/{path}\n+++ b/{path}\n")
    assert "-  deployment_mode: disaggregated  # moved by trainspec migrate\n" in out
    assert "+    consumer_state_dir: outputs/state\n" in out
    assert path.read_text() == LEGACY_FILE and os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert [p.name for p in path.parent.iterdir()] == ["run.yaml"]  # no temporary file left behind


def test_migrate_appends_to_a_section_before_its_closing_comments(write, capsys):
    text = (
        HEAD
        + "training:\n  deployment_mode: disaggregated\ndeployment:\n  disaggregated:\n"
        + DIS
        + "  # end of deployment\nrun_id: x\n"
    )
    path = write("run.yaml", text)
    assert run_cli("migrate", str(path), capsys=capsys)[0] == 0
    assert path.read_text().endswith("    backend: mooncake\n  mode: disaggregated\n  # end of deployment\nrun_id: x\n")


@pytest.mark.parametrize(
    ("training", "after"),
    [
        # the legacy key was the first of its section: the comment stays before the next key
        (
            "training:\n  deployment_mode: disaggregated\n  # about the seed\n  seed: 3\n",
            "training:\n  # about the seed\n  seed: 3\n",
        ),
        # the legacy key was all its section held: the comment stays before the next section
        ("training:\n  deployment_mode: disaggregated\n# tracking follows\n", "training: {}\n# tracking follows\n"),
    ],
)
def test_migrate_keeps_comments_around_a_lone_legacy_key(write, capsys, training, after):
    path = write("run.yaml", HEAD + training + "tracking:\n  report_to: none\n")
    assert run_cli("migrate", str(path), capsys=capsys)[0] == 0
    assert path.read_text() == HEAD + after + "tracking:\n  report_to: none\ndeployment:\n  mode: disaggregated\n"


def test_migrate_refuses_conflicts_and_writes_nothing(write, capsys):
    text = LEGACY_FILE.replace("  trainer:\n", "  mode: local_colocated\n  trainer:\n")
    path = write("run.yaml", text)
    code, _, err = run_cli("migrate", str(path), capsys=capsys)
    assert code == 1 and "legacy-deployment-mode-conflict" in err and "nothing was written" in err
    assert path.read_text() == text


def test_migrate_with_nothing_to_do_leaves_the_file_alone(write, capsys):
    text = HEAD + "# a comment\ndeployment:\n    mode: disaggregated\n    disaggregated:\n      control_dir: /c\n"
    path = write("run.yaml", text)
    assert run_cli("migrate", str(path), capsys=capsys)[:2] == (0, f"{path}: nothing to migrate\n")
    assert path.read_text() == text


def test_migrate_rewrites_json_with_two_spaces(write, capsys):
    data = {
        "model": {"target_model_path": "m"},
        "data": {"train_data_path": "/d"},
        "training": {"learning_rate": 0.001, "server_urls": ["http://a:1"]},
    }
    path = write("run.json", json.dumps(data))
    assert run_cli("migrate", str(path), capsys=capsys)[0] == 0
    expected = {
        "model": {"target_model_path": "m"},
        "data": {"train_data_path": "/d"},
        "training": {"learning_rate": 0.001},
        "deployment": {"mode": "disaggregated", "disaggregated": {"server_urls": ["http://a:1"]}},
    }
    assert path.read_text() == json.dumps(expected, indent=2) + "\n"


def test_migrate_usage_errors(tmp_path, write, capsys):
    assert run_cli("migrate", str(tmp_path / "missing.yaml"), capsys=capsys)[0] == 2
    path = write("run.yaml", LEGACY_FILE)
    assert run_cli("migrate", str(path), "--family", "nope", capsys=capsys)[0] == 2
    assert path.read_text() == LEGACY_FILE
    with pytest.raises(SystemExit) as exc:
        main(["migrate"])
    assert exc.value.code == 2


def test_migrate_keeps_the_file_mode(write, capsys):
    path = write("run.yaml", LEGACY_FILE)
    path.chmod(0o640)
    assert run_cli("migrate", str(path), capsys=capsys)[0] == 0
    assert path.stat().st_mode & 0o777 == 0o640


def test_migrate_is_generic_over_families(write, capsys, monkeypatch):
    """Any family with migrations works: the command runs the family's own migrations."""

    def rename(doc):
        training = doc.data.get("training", {})
        if "lr" in training:
            training["learning_rate"] = training.pop("lr")
            return [
                trainspec.Diagnostic(
                    doc.file,
                    3,
                    3,
                    ("training", "lr"),
                    "legacy-key-migrated",
                    trainspec.Severity.WARNING,
                    "training.lr is now training.learning_rate",
                )
            ]
        return []

    base = get_family("specforge")
    monkeypatch.setitem(
        every_version(),
        "toyforge",
        Family(name="toyforge", schema_file=base.schema_file, model=base.model, migrations=(rename,)),
    )
    path = write(
        "run.yaml",
        textwrap.dedent("""\
        model: {target_model_path: m}  # flow style kept
        training:
          lr: 0.5  # renamed
          seed: 1
        """),
    )
    assert run_cli("migrate", str(path), "--family", "toyforge", capsys=capsys)[0] == 0
    # an end-of-line comment goes with its line; the moved value lands at the end of its section
    assert (
        path.read_text() == "model: {target_model_path: m}  # flow style kept\ntraining:\n  seed: 1\n"
        "  learning_rate: 0.5\n"
    )


def test_migrated_file_checks_like_the_legacy_one(write, capsys):
    """Checking the legacy file and checking its migrated form find the same config."""
    legacy = write("legacy.yaml", LEGACY_FILE)
    migrated = write("migrated.yaml", LEGACY_FILE)
    run_cli("migrate", str(migrated), capsys=capsys)
    assert check_path(legacy, family="specforge").config == check_path(migrated, family="specforge").config


def test_migrate_keeps_untouched_lines_byte_for_byte_even_when_oddly_spaced(tmp_path):
    from trainspec.cli import main

    original = (
        "model:\r\n  target_model_path: x   \r\ndata:\r\n  train_data_path: y\r\ntraining:\r\n"
        '  server_urls: ["http://a:1"]\r\n  batch_size:    2     # keep me\r\n  learning_rate: !!float 1\r\n'
    )
    path = tmp_path / "odd.yaml"
    path.write_bytes(original.encode())
    assert main(["migrate", str(path)]) == 0
    migrated = path.read_bytes().decode()
    kept = [line for line in original.splitlines(keepends=True) if "server_urls" not in line]
    assert all(line in migrated for line in kept)
    assert migrated.count("\r\n") == len(migrated.splitlines())
    assert "deployment:\r\n  mode: disaggregated\r\n" in migrated


def test_migrate_refuses_yaml_tags_before_any_rewriting(tmp_path, capsys):
    """The file is read by the plain-data reader first: a tagged object never reaches the round-trip loader."""
    text = HEAD + "training:\n  deployment_mode: !!python/object/apply:os.system ['touch pwned']\n"
    path = tmp_path / "run.yaml"
    path.write_text(text)
    code, _, err = run_cli("migrate", str(path), capsys=capsys)
    assert code == 1 and "unsupported-yaml" in err and "not migrated" in err
    assert path.read_text() == text and sorted(p.name for p in tmp_path.iterdir()) == ["run.yaml"]
