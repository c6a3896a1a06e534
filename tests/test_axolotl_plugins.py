"""Axolotl's plugin settings: typed by the schema and checked by rules only when `plugins:` lists the plugin,
as the loader merges a plugin's settings model into its config model only then.

The tests marked `external` run Axolotl 0.18.0's own loader (tests/axolotl_loader.py): each plugin rule's
example gets the loader's verdict, and for every plugin the release ships, mutations of its settings
(wrong types, values out of range, the settings its validators read, alone and two validators at once) go
through both; trainspec must never accept what the loader refuses, and where it is stricter each error
falls under a documented row of docs/loader-differences.md (`CLASSES` of the differential test).
"""

from __future__ import annotations

import copy
import itertools
import json
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

import trainspec
from trainspec.cli import main
from trainspec.editor.lsp.analysis import Analysis, Settings
from trainspec.editor.lsp.completion import complete
from trainspec.editor.lsp.hover import hover
from trainspec.editor.lsp.text import Source
from trainspec.families import get_family
from trainspec.families.axolotl.examples_plugins import EXAMPLES
from trainspec.families.axolotl.plugins import PLUGINS, listed, names, usual
from trainspec.families.axolotl.rules_plugins import RULES as PLUGIN_RULES
from trainspec.families.axolotl.rules_plugins_kernels import RULES as KERNEL_RULES
from trainspec.spec.diagnostics import Severity

from .conftest import REPORTS, ROOT
from .differential import WRONG, YAML_1_1, Judge, render, set_raw

VERSION = "axolotl@0.18.0"
RULES = {r.id: r for r in [*PLUGIN_RULES, *KERNEL_RULES]}
HEAD = """\
base_model: HuggingFaceTB/SmolLM2-135M
datasets:
  - path: mhenrichsen/alpaca_2k_test
    type: alpaca
micro_batch_size: 1
gradient_accumulation_steps: 1
learning_rate: 0.0002
num_epochs: 1
bf16: true
"""
LIGER = HEAD + "plugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_rms_norm: maybe\n"


@cache
def schema() -> dict[str, Any]:
    return get_family(VERSION).schema.root


def conditions() -> dict[str, list[str]]:
    """Settings model -> the plugin names its `allOf` condition lists."""
    out = {}
    for entry in schema()["allOf"]:
        if "plugins" not in entry["if"].get("properties", {}):
            continue  # a condition on another key (the `rl` that picks the dataset model)
        model = entry["then"]["$ref"].rsplit("/", 1)[1]
        out[model] = entry["if"]["properties"]["plugins"]["contains"]["enum"]
    return out


def errors(path: Path) -> list[Any]:
    found = trainspec.check(path, family=VERSION, world_size=8, gpu="h100")
    return [d for d in found if d.severity is Severity.ERROR]


# -- the schema and the rules, without the loader ----------------------------------------------------------


def test_the_plugin_table_names_what_the_schema_conditions_on():
    listed_names = sorted(sorted(n) for n in conditions().values())
    assert listed_names == sorted(sorted(names(p)) for p in PLUGINS)
    assert len(conditions()) == 15


def test_a_plugin_is_listed_by_any_of_its_names():
    assert listed(["axolotl.integrations.liger.LigerPlugin"], "liger")
    assert listed(["liger.plugin.LigerPlugin"], "liger")
    assert not listed(["axolotl.integrations.liger.LigerPluginX"], "liger")
    assert not listed("axolotl.integrations.liger.LigerPlugin", "liger")  # text, not a list
    assert usual("kernels") == "axolotl.integrations.kernels.KernelsPlugin"


def test_a_wrong_plugin_setting_is_reported_at_its_line(write, capsys):
    path = write("config.yaml", LIGER)
    assert main(["check", "--family", VERSION, str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:12:17: error[wrong-type] `liger_rms_norm` must be a boolean" in out


@pytest.mark.parametrize(
    ("setting", "line"),
    [("cut_cross_entropy: 2\n", "cut_cross_entropy"), ("expert_parallel_size: 2.5\n", "expert_parallel_size")],
)
def test_each_plugin_types_its_own_settings(write, setting, line):
    plugin = {"cut_cross_entropy": "cut_cross_entropy", "expert_parallel_size": "expert_parallel"}[line]
    path = write("config.yaml", HEAD + f"plugins:\n  - {usual(plugin)}\n" + setting)
    (found,) = errors(path)
    assert (found.rule, found.path, found.line) == ("wrong-type", (line,), 12)


def test_without_the_plugin_its_settings_are_not_read(write):
    path = write("config.yaml", HEAD + "liger_rms_norm: maybe\ncut_cross_entropy: 2\nexpert_parallel_size: 0\n")
    assert errors(path) == []
    other = write("other.yaml", LIGER.replace("axolotl.integrations.liger.LigerPlugin", "my_plugins.LigerPlugin"))
    assert errors(other) == []


def test_a_plugins_defaults_are_filled_only_by_its_loader():
    """A default under the plugin's condition is not filled in (the condition may not hold); the rules read an
    absent setting as the validator reads it."""
    filled = get_family(VERSION).schema.fill_defaults({"plugins": [usual("swanlab")]})
    assert "use_swanlab" not in filled and "cut_cross_entropy" not in filled
    assert filled["tiled_mlp_use_original_mlp"] is True  # an unconditional default still is


def test_the_swanlab_plugin_alone_needs_a_project(write):
    path = write("config.yaml", HEAD + f"plugins:\n  - {usual('swanlab')}\n")
    assert [d.rule for d in errors(path)] == ["swanlab-needs-project"]


def _completed(text: str) -> dict[str, Any]:
    """What trainspec's completion offers at the end of `text` (its last line being typed), the config of the
    lines before it known, as the language server knows the last config of a buffer that parsed."""
    lines = text.splitlines()
    config = yaml.safe_load("\n".join(lines[:-1]))
    found = complete(get_family(VERSION), Source(text), "yaml", len(lines) - 1, len(lines[-1]), config)
    return {i.label: i for i in found}


def test_plugin_keys_are_completed_and_documented_when_the_plugin_is_listed():
    items = _completed(LIGER.replace("liger_rms_norm: maybe\n", "liger_rm"))
    assert "liger_rms_norm" in items
    doc = items["liger_rms_norm"].documentation
    assert doc is not None and "tensor_parallel_size" in doc.value
    assert "expert_parallel_size" not in items  # another plugin's setting, that plugin not listed
    assert "liger_rms_norm" not in _completed(HEAD + "liger_rm")
    assert "learning_rate" in _completed(HEAD + "lear")


def test_hover_on_a_plugin_key_gives_its_type_condition_and_meaning():
    text = LIGER.replace("maybe", "true")
    analysis = Analysis("config.yaml", text, Settings(), "utf-16")
    line = text.splitlines().index("liger_rms_norm: true")
    shown = hover(analysis, line, 2)
    assert shown is not None
    said = shown.contents.value  # type: ignore[union-attr]
    assert "`boolean or null`" in said and 'when plugins lists "axolotl.integrations.liger.LigerPlugin"' in said
    assert "Liger's fused RMSNorm kernel" in said
    assert "`liger-rms-norm-tensor-parallel`" in said


def test_every_plugin_rule_reads_the_plugin_list():
    assert all(r.paths[0] == "plugins" for r in RULES.values())


# -- the loader as the oracle ------------------------------------------------------------------------------


@pytest.mark.external
@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_each_example_gets_the_loaders_verdict(write, rule_id):
    from .axolotl_loader import load

    example, severity = EXAMPLES[rule_id], RULES[rule_id].severity
    bad, good = load(write("bad.yaml", example.bad)), load(write("good.yaml", example.good))
    assert not good.refused, good.refused
    if severity is Severity.ERROR:
        assert bad.refused
    else:
        assert not bad.refused and set(bad.warnings) - set(good.warnings), bad.warnings


@pytest.mark.external
def test_the_loader_ignores_a_plugins_settings_without_it(write):
    from .axolotl_loader import load

    assert load(write("config.yaml", HEAD + "liger_rms_norm: maybe\ncut_cross_entropy: 2\n")).accepted
    assert load(write("listed.yaml", LIGER)).refused.startswith("liger_rms_norm: Input should be a valid boolean")


def _tool(name: str) -> Any:
    import importlib.util
    import sys

    sys.path.insert(0, str(ROOT / "tools"))  # the tools import each other by name, as when run beside them
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "tools"))


CURATED = {
    ("MoraArgs", "mora", "mora_type"): "the normaliser `MoraConfig.normalize_mora_type` reads 1 and 6 too",
}
"""Where the schema says more than the settings model's fields, and why."""


def _without_descriptions(node: Any, where: tuple[str, ...] = ()) -> Any:
    if isinstance(node, dict):
        if where in CURATED:
            return "(curated)"
        return {
            k: _without_descriptions(v, (*where, k) if k not in ("properties",) else where)
            for k, v in node.items()
            if k != "description"
        }
    if isinstance(node, list):
        return [_without_descriptions(v, where) for v in node]
    return node


@pytest.mark.external
def test_the_schema_holds_the_drafted_plugin_settings():
    """Redrafting (`tools/draft_schema.py --plugins`) would change nothing but what `CURATED` lists: the
    settings of every plugin the release ships, and the names the loader finds each by."""
    tool = _tool("plugin_settings")
    from .axolotl_loader import require

    require()
    plugins = tool.discover("axolotl", "axolotl/integrations")
    drafted = {p.model: tool.settings_schema("axolotl", p) for p in plugins}
    redone = tool.merge(copy.deepcopy(schema()), drafted, plugins)
    assert redone["allOf"] == schema()["allOf"]
    for model in drafted:
        assert _without_descriptions(redone["$defs"][model], (model,)) == _without_descriptions(
            schema()["$defs"][model], (model,)
        ), model


# -- differential: the plugins' settings, mutated --------------------------------------------------------

OUT_OF_RANGE = [-1, 0, 0.5, 1.5, 10**12, "fp8", "NVFP4", "none", "cloud", " "]
VALUES = [*WRONG, *OUT_OF_RANGE]
PER_FIELD = 5
"""Values tried per setting, drawn (seeded) from `VALUES`."""


def _settings(model: str) -> list[tuple[str, ...]]:
    """The paths of a settings model's keys, a nested section's keys too."""
    props = schema()["$defs"][model]["properties"]
    paths = []
    for name, spec in props.items():
        paths.append((name,))
        paths += [(name, sub) for sub in spec.get("properties", {})]
    return paths


def _set(config: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = config
    for part in path[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[path[-1]] = value


def _model_of(plugin: str) -> str:
    return next(m for m, listed_names in conditions().items() if usual(plugin) in listed_names)


def plugin_cases(plugin: str) -> list[tuple[str, str]]:
    """(what was done, config text) for one plugin."""
    rng = random.Random(f"{plugin}-0")
    base = yaml.safe_load(HEAD + f"plugins:\n  - {usual(plugin)}\n")
    cases = [("the plugin alone", yaml.safe_dump(base, sort_keys=False))]
    for path in _settings(_model_of(plugin)):
        for value in rng.sample(VALUES, PER_FIELD):
            config = copy.deepcopy(base)
            _set(config, path, copy.deepcopy(value))
            cases.append((f"{'.'.join(path)} = {value!r}", yaml.safe_dump(config, sort_keys=False)))
        scalar = rng.choice(YAML_1_1)  # read otherwise by the loader's YAML 1.1
        config, raw = copy.deepcopy(base), {}
        set_raw(config, raw, path, scalar)
        cases.append((f"{'.'.join(path)} = {scalar} (raw YAML)", render(config, raw)))
    examples = [(rid, e) for rid, e in EXAMPLES.items() if usual(plugin) in e.bad]
    for rid, example in examples:
        cases += [(f"{rid}: its example", example.bad), (f"{rid}: its fix", example.good)]
    for (one, a), (two, b) in itertools.pairwise(examples):  # two validators at once
        merged = {**yaml.safe_load(a.bad), **yaml.safe_load(b.bad)}
        cases.append((f"{one} and {two}", yaml.safe_dump(merged, sort_keys=False)))
    return cases


@pytest.mark.external
@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_trainspec_and_the_loader_agree_on_the_plugins_settings(tmp_path, plugin):
    from .axolotl_loader import load, require
    from .test_axolotl_differential import CLASSES

    require()
    judge = Judge("Axolotl 0.18.0", CLASSES)
    for n, (what, text) in enumerate(plugin_cases(plugin)):
        path = tmp_path / f"case{n}.yaml"
        path.write_text(text, encoding="utf-8")
        found, verdict = errors(path), load(path)

        def shown(what: str = what, text: str = text, found: list[Any] = found, refused: str = verdict.refused) -> str:
            ours = "; ".join(f"{d.rule}: {d.message}" for d in found) or "no error"
            return f"{plugin}: {what}\n  trainspec: {ours}\n  loader: {refused or 'accepts'}\n---\n{text}"

        judge(found, bool(verdict.refused), shown)
    REPORTS.append(f"Axolotl plugin {plugin}: {judge.counts['cases']} cases; {judge.summary()}")
    judge.finish()
    assert judge.counts["more lenient"] == 0
    assert judge.counts["cases"] >= 1 + PER_FIELD


def test_the_cases_cover_every_setting_and_example():
    for plugin in PLUGINS:
        cases = [what for what, _ in plugin_cases(plugin)]
        for path in _settings(_model_of(plugin)):
            assert any(what.startswith(".".join(path) + " = ") for what in cases), (plugin, path)
    covered = {what.split(":")[0] for plugin in PLUGINS for what, _ in plugin_cases(plugin)}
    assert set(RULES) <= covered
    assert json.dumps(sorted(covered))  # plain text, for the report


# -- the editor schema under yaml-language-server ----------------------------------------------------------


@pytest.fixture(scope="module")
def yaml_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import shutil

    from .lsp_client import LspClient
    from .test_editor_lsp import YAML_SERVER

    node = shutil.which("node")
    if node is None or not YAML_SERVER.exists():
        pytest.fail(f"needs Node.js and yaml-language-server: run `npm ci` in {ROOT}", pytrace=False)
    folder = tmp_path_factory.mktemp("yls-plugins")
    client = LspClient([node, str(YAML_SERVER), "--stdio"], folder, {"yaml": {"schemaStore": {"enable": False}}})
    yield client, folder
    client.shutdown()


EDITOR_SCHEMA = ROOT / "editors" / "schemas" / "axolotl.schema.json"


@pytest.mark.external
def test_yaml_language_server_completes_documents_and_checks_a_listed_plugins_keys(yaml_server: Any) -> None:
    from .lsp_client import markup_text

    client, folder = yaml_server
    modeline = f"# yaml-language-server: $schema={EDITOR_SCHEMA.as_uri()}\n"
    listed_text = modeline + HEAD + "plugins:\n  - axolotl.integrations.liger.LigerPlugin\n\n"
    uri = (folder / "listed.yml").as_uri()
    client.check(uri, "yaml", listed_text)
    offered = {
        i["label"]: markup_text(i.get("documentation"))
        for i in client.completion(uri, len(listed_text.splitlines()), 0)
    }
    assert "liger_rms_norm" in offered and "Liger's fused RMSNorm kernel" in offered["liger_rms_norm"]
    assert "expert_parallel_size" not in offered  # another plugin's key, that plugin not listed

    wrong = modeline + LIGER
    found = client.check((folder / "wrong.yml").as_uri(), "yaml", wrong)
    assert [d["range"]["start"]["line"] for d in found] == [wrong.splitlines().index("liger_rms_norm: maybe")]
    hover = client.hover((folder / "wrong.yml").as_uri(), wrong.splitlines().index("liger_rms_norm: maybe"), 2)
    assert hover is not None and "Liger's fused RMSNorm kernel" in markup_text(hover["contents"])

    unlisted = modeline + HEAD + "liger_rms_norm: maybe\n"
    assert client.check((folder / "unlisted.yml").as_uri(), "yaml", unlisted) == []
