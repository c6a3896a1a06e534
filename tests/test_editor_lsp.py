"""The editor schemas, proven with the real language servers over LSP.

yaml-language-server serves YAML and JSON; taplo (the @taplo/lsp build the
VS Code extension Even Better TOML runs, behind editors/taplo-lsp-stdio.mjs)
serves TOML. The workspace is set up by `trainspec editor init`, and the
servers get exactly the settings it writes, so the association is proven too.

To cover a new family or format, add a row to CASES.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.cli import main as trainspec_main

from .lsp_client import LspClient, markup_text

pytestmark = pytest.mark.external  # drives the real yaml-language-server and taplo (Node)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
NODE_MODULES = ROOT / "node_modules"
YAML_SERVER = NODE_MODULES / "yaml-language-server" / "bin" / "yaml-language-server"
TAPLO_HOST = ROOT / "editors" / "taplo-lsp-stdio.mjs"
TAPLO_CLI = NODE_MODULES / "@taplo" / "cli" / "dist" / "cli.js"
SNIPPET_KINDS = (9, 15)  # yaml-language-server marks defaultSnippets as Module (9)
HOVERS_ARRAY_VALUES = {"yaml": True, "taplo": False}
"""Measured: taplo answers no hover on a key whose value is an array (nor inside [[arrays]])."""


@dataclass(frozen=True)
class Case:
    """One family in one format, and what to type to provoke each diagnostic.

    `problems` maps a kind of mistake to (document, the line and column that the
    diagnostic must cover, a word its message must contain).
    """

    family: str
    fmt: str
    server: str
    path: str
    clean: Path
    problems: dict[str, tuple[str, tuple[int, int], str]]

    @property
    def id(self) -> str:
        return f"{self.family}-{self.fmt}"


SF_BASE = {"model": {"target_model_path": "Qwen/Qwen3-8B"}, "data": {"train_data_path": "train.jsonl"}}
SF_CLEAN = CORPUS / "specforge" / "qwen3.6-27b-dflash-multiserver-disaggregated.yaml"

CASES = [
    Case(
        "kempnerforge",
        "toml",
        "taplo",
        "configs/train/job.toml",
        CORPUS / "kempnerforge" / "train" / "vlm_7b_mot.toml",
        {
            # taplo puts an unknown key's diagnostic on its table's header
            "unknown key": ("[model]\ndim = 4096\nbogus = 1\n", (0, 1), "bogus"),
            "wrong type": ('[train]\nseq_len = "long"\n', (1, 0), "integer"),
            "out of range": ("[model]\nn_layers = 0\n", (1, 0), "minimum"),
            "missing conditional requirement": ('[vlm]\narch = "mot"\n', (0, 1), "vision_encoder"),
        },
    ),
    Case(
        "specforge",
        "yaml",
        "yaml",
        "examples/configs/run.yaml",
        SF_CLEAN,
        {
            "unknown key": (yaml.safe_dump({**SF_BASE, "training": {"bogus": 1}}, sort_keys=False), (5, 2), "bogus"),
            "wrong type": (
                yaml.safe_dump({**SF_BASE, "training": {"num_epochs": "six"}}, sort_keys=False),
                (5, 14),
                "integer",
            ),
            "out of range": (
                yaml.safe_dump({**SF_BASE, "training": {"warmup_ratio": 2}}, sort_keys=False),
                (5, 16),
                "maximum",
            ),
            "missing conditional requirement": (
                yaml.safe_dump({**SF_BASE, "deployment": {"mode": "disaggregated"}}, sort_keys=False),
                (4, 0),
                "disaggregated",
            ),
        },
    ),
    Case(
        "specforge",
        "json",
        "yaml",
        "run.specforge.json",
        SF_CLEAN,
        {
            "unknown key": (json.dumps({**SF_BASE, "training": {"bogus": 1}}, indent=2), (8, 4), "bogus"),
            "wrong type": (json.dumps({**SF_BASE, "training": {"num_epochs": "six"}}, indent=2), (8, 18), "integer"),
            "out of range": (json.dumps({**SF_BASE, "training": {"warmup_ratio": 2}}, indent=2), (8, 20), "maximum"),
            "missing conditional requirement": (
                json.dumps({**SF_BASE, "deployment": {"mode": "disaggregated"}}, indent=2),
                (7, 2),
                "disaggregated",
            ),
        },
    ),
]
LANGUAGE = {"toml": "toml", "yaml": "yaml", "json": "json"}


# -- the schema, walked the way an editor sees it --------------------------------------------------


def editor_schema(family: str) -> dict[str, Any]:
    return json.loads((ROOT / "editors" / "schemas" / f"{family}.schema.json").read_text(encoding="utf-8"))


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref`, also the `allOf: [{"$ref": ...}]` the editor form writes."""
    while True:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        elif "properties" not in node and "enum" not in node and len(node.get("allOf", [])) == 1:
            node = node["allOf"][0]
        else:
            return node


def object_keys(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The keys an object allows, with their schemas; a union's variants all count."""
    node = resolve(schema, node)
    keys = {k: v for k, v in node.get("properties", {}).items() if not v.get("deprecated")}
    for variant in node.get("oneOf", []) + node.get("anyOf", []):
        for name, sub in object_keys(schema, variant).items():
            keys.setdefault(name, sub)
    return keys


def sections(schema: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """Top-level keys holding objects, with the keys each one allows."""
    out = {}
    for name, node in schema["properties"].items():
        keys = object_keys(schema, node)
        if keys:
            out[name] = keys
    return out


def enums(
    schema: dict[str, Any], node: dict[str, Any], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], list[Any]]]:
    """Every enum reachable through objects (not arrays), with its path."""
    for name, sub in object_keys(schema, node).items():
        sub = resolve(schema, sub)
        if "enum" in sub:
            yield (*path, name), sub["enum"]
        else:
            yield from enums(schema, sub, (*path, name))


def plain(text: str) -> str:
    """Text with markdown marks and escapes removed, for comparing documentation."""
    return re.sub(r"\s+", " ", re.sub(r"[`*\\]", "", text)).strip()


def documents(description: str, documentation: str) -> bool:
    return plain(description)[:60] in plain(documentation)


# -- documents with a cursor -------------------------------------------------------------------------


def nested(path: tuple[str, ...], leaf: Any) -> dict[str, Any]:
    out: Any = leaf
    for key in reversed(path):
        out = {key: out}
    return dict(out)


def cursor_doc(fmt: str, path: tuple[str, ...], value: bool) -> tuple[str, int, int]:
    """A document opening `path` (as a table/mapping to type keys in, or as a key awaiting its
    value), and the position to complete at."""
    if fmt == "toml":
        table, key = (path, None) if not value else (path[:-1], path[-1])
        text = f"[{'.'.join(table)}]\n" + (f"{key} = " if key else "")
        return text + "\n", 1, len(f"{key} = ") if key else 0
    depth = len(path) - (0 if not value else 1)
    if fmt == "yaml":
        lines = [f"{'  ' * i}{k}:" for i, k in enumerate(path)]
        if value:
            lines[-1] += " "
            return "\n".join(lines) + "\n", len(path) - 1, len(lines[-1])
        return "\n".join(lines) + "\n" + "  " * depth + "\n", len(path), 2 * depth
    marker = "__cursor__"
    text = json.dumps(nested(path, marker if value else {marker: 0}), indent=2)
    line_no, line = next((i, ln) for i, ln in enumerate(text.splitlines()) if marker in ln)
    col = line.index(f'"{marker}"')
    text = text.replace(f'"{marker}": 0', "").replace(f'"{marker}"', "")
    return text, line_no, col


# -- servers and workspace --------------------------------------------------------------------------


def _require_node_packages() -> str:
    node = shutil.which("node")
    missing = [p for p in (YAML_SERVER, TAPLO_CLI, NODE_MODULES / "@taplo" / "lsp") if not p.exists()]
    if node is None or missing:
        pytest.fail(
            "the editor tests need Node.js and the language servers pinned in package.json: "
            f"run `npm ci` in {ROOT} (missing: {'node' if node is None else ', '.join(map(str, missing))})",
            pytrace=False,
        )
    return node


def nested_settings(flat: dict[str, Any]) -> dict[str, Any]:
    """VS Code's dotted setting names as the nested sections servers ask for."""
    out: dict[str, Any] = {}
    for name, value in flat.items():
        node = out
        *parents, last = name.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    assert trainspec_main(["editor", "init", "--root", str(root)]) == 0
    return root


@pytest.fixture(scope="module")
def servers(workspace: Path) -> Iterator[dict[str, LspClient]]:
    node = _require_node_packages()
    settings = nested_settings(json.loads((workspace / ".vscode" / "settings.json").read_text()))
    # Tests never reach the network: no SchemaStore catalog for yaml-language-server, and taplo's
    # host refuses HTTP (taplo fetches its default catalog whatever the settings say).
    settings["yaml"]["schemaStore"] = {"enable": False}
    started = {
        "yaml": LspClient([node, str(YAML_SERVER), "--stdio"], workspace, settings),
        "taplo": LspClient([node, str(TAPLO_HOST), "--offline"], workspace, settings),
    }
    yield started
    for client in started.values():
        client.shutdown()


def text_of(case: Case, source: Path) -> str:
    if case.fmt == "json":
        return json.dumps(yaml.safe_load(source.read_text(encoding="utf-8")), indent=2)
    return source.read_text(encoding="utf-8")


def uri(workspace: Path, case: Case, stem: str | None = None) -> str:
    """The URI of the case's file, or of a sibling named `stem` that the same globs match."""
    path = Path(case.path)
    if stem is not None:
        path = path.with_name(stem + "".join(path.suffixes))
    return (workspace / path).as_uri()


def key_name(label: str) -> str:
    return label.strip('"')


# -- tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_clean_corpus_file_has_no_diagnostics(case: Case, servers: dict[str, LspClient], workspace: Path) -> None:
    client = servers[case.server]
    assert client.check(uri(workspace, case), LANGUAGE[case.fmt], text_of(case, case.clean)) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_completion_in_each_section_offers_every_key_with_documentation(
    case: Case, servers: dict[str, LspClient], workspace: Path
) -> None:
    client = servers[case.server]
    schema = editor_schema(case.family)
    doc_uri = uri(workspace, case, "complete")
    for section, keys in sections(schema).items():
        text, line, col = cursor_doc(case.fmt, (section,), value=False)
        client.check(doc_uri, LANGUAGE[case.fmt], text)  # answers once the server has read the text
        items = [i for i in client.completion(doc_uri, line, col) if i.get("kind") not in SNIPPET_KINDS]
        offered: dict[str, list[str]] = {}
        for item in items:
            offered.setdefault(key_name(item["label"]), []).append(markup_text(item.get("documentation")))
        assert set(keys) <= set(offered), f"[{section}] lacks {sorted(set(keys) - set(offered))}"
        undocumented = [k for k, sub in keys.items() if not any(documents(sub["description"], d) for d in offered[k])]
        assert not undocumented, f"[{section}] offers these keys without their description: {undocumented}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_enum_completion_offers_exactly_the_allowed_values(
    case: Case, servers: dict[str, LspClient], workspace: Path
) -> None:
    client = servers[case.server]
    schema = editor_schema(case.family)
    doc_uri = uri(workspace, case, "enum")
    found = list(enums(schema, schema))
    assert found
    for path, allowed in found:
        text, line, col = cursor_doc(case.fmt, path, value=True)
        client.check(doc_uri, LANGUAGE[case.fmt], text)
        labels = {
            key_name(i["label"])
            for i in client.completion(doc_uri, line, col)
            if i.get("kind") not in SNIPPET_KINDS and i["label"] != "Default value"
        }
        assert labels == {"null" if v is None else str(v) for v in allowed}, ".".join(path)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hover_on_a_key_shows_its_description(case: Case, servers: dict[str, LspClient], workspace: Path) -> None:
    client = servers[case.server]
    schema = editor_schema(case.family)
    text = text_of(case, case.clean)
    client.check(uri(workspace, case), LANGUAGE[case.fmt], text)
    hovered = 0
    for (section, key), (line, col) in key_positions(case.fmt, text).items():
        sub = object_keys(schema, schema["properties"][section]).get(key)
        if sub is None or (resolve(schema, sub).get("type") == "array" and not HOVERS_ARRAY_VALUES[case.server]):
            continue
        hover = client.hover(uri(workspace, case), line, col + 1)
        assert hover is not None, f"no hover on {section}.{key}"
        # A key whose schema is a reference may show the referenced definition's description.
        shown = markup_text(hover["contents"])
        described = [sub["description"], resolve(schema, sub).get("description", "")]
        assert any(d and documents(d, shown) for d in described), f"{section}.{key}: {hover}"
        hovered += 1
    assert hovered >= 10


def key_positions(fmt: str, text: str) -> dict[tuple[str, str], tuple[int, int]]:
    """Where each second-level key of a document is written (tables, block mappings, indented JSON)."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    section = None
    patterns = {
        "toml": (r"^\[([a-z_]+)\]\s*$", r"^()([a-z_]+)\s*="),
        "yaml": (r"^([a-z_]+):", r"^(  )([a-z_]+):"),
        "json": (r'^  "([a-z_]+)": \{', r'^(    )"([a-z_]+)":'),
    }[fmt]
    for n, line in enumerate(text.splitlines()):
        if m := re.match(patterns[0], line):
            section = m.group(1)
        elif section and (m := re.match(patterns[1], line)):
            out[(section, m.group(2))] = (n, len(m.group(1)) + (1 if fmt == "json" else 0))
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@pytest.mark.parametrize("kind", ["unknown key", "wrong type", "out of range", "missing conditional requirement"])
def test_mistake_gives_a_diagnostic_at_its_place(
    case: Case, kind: str, servers: dict[str, LspClient], workspace: Path
) -> None:
    client = servers[case.server]
    text, (line, col), word = case.problems[kind]
    diagnostics = client.check(uri(workspace, case, "mistake"), LANGUAGE[case.fmt], text)
    assert diagnostics, f"no diagnostic for {kind} in:\n{text}"

    def covers(d: dict[str, Any]) -> bool:
        start, end = d["range"]["start"], d["range"]["end"]
        return (start["line"], start["character"]) <= (line, col) <= (end["line"], end["character"])

    assert any(word in d["message"] and covers(d) for d in diagnostics), (text, diagnostics)


@pytest.mark.parametrize("case", [c for c in CASES if c.family == "specforge"], ids=lambda c: c.id)
def test_a_legacy_key_is_flagged_deprecated_naming_its_new_place(
    case: Case, servers: dict[str, LspClient], workspace: Path
) -> None:
    client = servers[case.server]
    data = {
        "model": {"target_model_path": "m"},
        "data": {"hidden_states_path": "h"},
        "training": {"deployment_mode": "local_colocated"},
    }
    text = (
        json.dumps(data, indent=2)
        if case.fmt == "json"
        else (
            "model:\n  target_model_path: m\ndata:\n  hidden_states_path: h\n"
            "training:\n  deployment_mode: local_colocated\n"
        )
    )
    diagnostics = client.check(uri(workspace, case, "legacy"), LANGUAGE[case.fmt], text)
    assert any("moved to `deployment.mode`" in d["message"] for d in diagnostics), diagnostics


def test_specforge_deployment_snippet_is_offered(servers: dict[str, LspClient], workspace: Path) -> None:
    case = CASES[1]
    text, line, col = cursor_doc("yaml", ("deployment",), value=False)
    doc_uri = uri(workspace, case, "snippet")
    servers["yaml"].check(doc_uri, "yaml", text)
    labels = [i["label"] for i in servers["yaml"].completion(doc_uri, line, col) if i.get("kind") in SNIPPET_KINDS]
    assert labels == ["Disaggregated deployment (managed local capture stack)"]


@pytest.mark.parametrize(
    "name, text, bad",
    [
        ("notes/job.toml", "[model]\nn_layers = 0\n", "taplo"),
        (
            "notes/run.yaml",
            "model:\n  target_model_path: x\ndata:\n  train_data_path: a\ntraining:\n  warmup_ratio: 2\n",
            "yaml",
        ),
    ],
    ids=["toml-directive", "yaml-modeline"],
)
def test_annotated_file_outside_the_globs_gets_its_schema(
    name: str, text: str, bad: str, servers: dict[str, LspClient], workspace: Path
) -> None:
    path = workspace / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    family = "kempnerforge" if name.endswith(".toml") else "specforge"
    assert trainspec_main(["editor", "annotate", "--root", str(workspace), "--family", family, str(path)]) == 0
    diagnostics = servers[bad].check(path.as_uri(), LANGUAGE[path.suffix.lstrip(".")], path.read_text())
    assert [d["range"]["start"]["line"] for d in diagnostics] == [2 if bad == "taplo" else 6]


def test_taplo_lint_accepts_every_kempnerforge_corpus_file() -> None:
    """The server checks open documents only; `taplo lint` checks the whole corpus in one go."""
    node = _require_node_packages()
    files = sorted(str(p) for p in (CORPUS / "kempnerforge").rglob("*.toml"))
    schema = (ROOT / "editors" / "schemas" / "kempnerforge.schema.json").as_uri()
    proc = subprocess.run(
        [node, str(TAPLO_CLI), "lint", "--no-auto-config", "--schema", schema, *files],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
