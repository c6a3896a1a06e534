"""Differential test: Axolotl's example configs, and mutations of them, through trainspec and through
each release's own validation path (tests/axolotl_loader.py), with trainspec at the matching version:
`axolotl@0.18.0` against Axolotl 0.18.0, `axolotl@0.19.0` against 0.19.0 (its oracle runs in its own
environment). Both run as a subprocess serving many configs (`Served`), beside trainspec's checks.

Each of the 210 example configs (0.18.0's; none of them changed their verdict in 0.19.0) runs as it
is at eight H100s; then hypothesis draws `TRAINSPEC_AXOLOTL_CASES` cases per release (300 in CI), each
at one of `TARGETS` (a GPU and a world size: the oracle gets what that machine would report) and each
an example config with one to three mutations: a key dropped, a boolean flipped, a value of the wrong
type, a YAML 1.1 scalar written raw, an enum field set to a value it does not list (or one it does),
a number field set out of its range, `rl` set to each RL mode of the release's own enum, or one of
`COMBINATIONS`, the settings the loader's cross-field validators check. Seeded: the same cases every
run (another sequence: TRAINSPEC_DIFFERENTIAL_SEED). The verdicts (an error, or none) must agree,
except:

- trainspec must never accept what the loader refuses: such a case fails the test, unless it is in
  `KNOWN_LENIENT` (open bugs: validators no rule mirrors yet; the list empties as rules land);
- where trainspec is stricter, each error must fall under one of `CLASSES`, a row of
  docs/loader-differences.md.

The counts (agree, stricter by class, more lenient) and the time are printed at the end of the run.
docs/axolotl-corpus.md lists each example config's verdicts; `test_corpus_table` keeps it true
(`TRAINSPEC_UPDATE_CORPUS_TABLE=1` rewrites it).
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import trainspec
from trainspec.families import get_family
from trainspec.families.axolotl.attention import LEGACY_ATTENTION_FLAGS
from trainspec.spec.diagnostics import Diagnostic, Severity

from .axolotl_loader import GPU, RELEASE, RELEASES, WORLD_SIZE, Served, Verdict, load, target
from .conftest import AXOLOTL_EXAMPLES, REPORTS, ROOT
from .differential import WRONG, YAML_1_1, Classes, Judge, remove_path, render, seeded, set_path, set_raw, undocumented

pytestmark = pytest.mark.external  # the loader imports torch and transformers

VERSION = f"axolotl@{RELEASE}"
"""The version the corpus table is for."""
TARGETS = [("h100", 8), ("a100", 4), ("l40s", 2), ("t4", 1)]
"""The GPUs and world sizes the mutations run at: Hopper, Ampere, Ada (no fp8 for the loader) and Turing
(sm_75: no bf16, no tf32)."""
DEFAULT_CASES = 300
CASES = int(os.environ.get("TRAINSPEC_AXOLOTL_CASES", str(DEFAULT_CASES)))
SEED = int(os.environ.get("TRAINSPEC_DIFFERENTIAL_SEED", "0"))
DOC = ROOT / "docs" / "loader-differences.md"
TABLE = ROOT / "docs" / "axolotl-corpus.md"
EXAMPLES_DIR = AXOLOTL_EXAMPLES  # Axolotl 0.18.0's example configs, carried by the repository
EXAMPLES = sorted(p for p in EXAMPLES_DIR.rglob("*") if p.suffix in (".yml", ".yaml"))

KNOWN_LENIENT: dict[str, dict[str, str]] = {
    # release -> {the loader's message (a part of it) -> the validator that refuses with it}; none open
    "0.18.0": {},
    "0.19.0": {},
}
"""The loader's refusals trainspec does not report yet: each an open bug, a validator no rule mirrors yet.
A case where trainspec accepts what the loader refuses with one of these messages is counted, not failed.
Remove a validator's entries when its rule lands; a lenient case with another message fails the test,
and so does an entry no case reaches any more."""
PLUGIN_SETTINGS = "a plugin's own setting, which the schema does not describe yet"
"""The one known gap that is not a message: a refusal at a top-level key that the version's schema lacks,
in a config that registers plugins (the plugin's arguments model brings the key: `liger_rms_norm`, ...).
It empties by itself as the plugins' settings enter the schema."""

LEGACY_FLAGS = (*((flag,) for flag in LEGACY_ATTENTION_FLAGS), ("use_kernels",))
"""The deprecated attention flags, which the loader reads by truthiness and removes before validation, and
`use_kernels`, which 0.18.0's kernels plugin replaces by true whatever it is (A7)."""
EMPTY_VALUES = (("fsdp_version",), ("learning_rate",))
"""Fields where the loader takes an empty value (`""`, `[]`, `{}`) that the schema's type refuses (A6)."""
EMPTY_TAKEN = ("'s loader takes it as not written", "'s loader keeps the empty text")
FLAG_TAKEN = ("'s loader takes any value here", "'s loader replaces any value but true by true")
"""What the errors of A6 and A7 say the loader does (`trainspec.families.axolotl.takes`)."""

CLASSES: Classes = {
    # class -> (the row of docs/loader-differences.md, which of trainspec's errors belong to it)
    "YAML 1.1 scalars": ("A1 file format", lambda d: "'s loader reads it as" in d.message or "yaml-dialect" in d.rule),
    "duplicate keys": ("A1 file format", lambda d: "duplicate-key" in (d.rule, d.message.split(":")[0])),
    "lax coercion": ("A2 lax coercion", lambda d: "'s loader itself reads it as" in d.message),
    "non-finite numbers": ("A3 NaN and infinity", lambda d: "non-finite-number" in d.rule + d.message),
    "the device mesh": ("A4 the device mesh", lambda d: d.rule == "mesh-fits-world-size"),
    "bf16 on a GPU without it": ("A5 bf16 on a GPU without it", lambda d: d.rule == "bf16-unsupported-gpu"),
    "empty values": (
        "A6 empty values",
        lambda d: d.rule == "wrong-type" and d.path in EMPTY_VALUES and any(w in d.message for w in EMPTY_TAKEN),
    ),
    "legacy attention flags": (
        "A7 legacy attention flags",
        lambda d: d.rule == "wrong-type" and d.path in LEGACY_FLAGS and any(w in d.message for w in FLAG_TAKEN),
    ),
}
"""Each way trainspec may be stricter than the loader, with the documented row it falls under."""

COMBINATIONS: list[dict[str, Any]] = [
    # settings the loader's cross-field validators (utils/schemas/validation.py, config.py) look at together
    {"gradient_accumulation_steps": 4, "batch_size": 32},
    {"warmup_steps": 10, "warmup_ratio": 0.1},
    {"save_steps": 100, "save_strategy": "epoch"},
    {"saves_per_epoch": 2, "save_steps": 100},
    {"eval_steps": 50, "eval_strategy": "epoch"},
    {"val_set_size": 0, "eval_steps": 50},
    {"evals_per_epoch": 2, "eval_steps": 50},
    {"evals_per_epoch": 2, "eval_strategy": "epoch"},
    {"do_bench_eval": True, "evals_per_epoch": None, "eval_steps": None},
    {"noisy_embedding_alpha": 5, "neftune_noise_alpha": 5},
    {"do_causal_lm_eval": True, "eval_sample_packing": True},
    {"peft_layers_pattern": ["layers"], "peft_layers_to_transform": None},
    {"adapter": "lora", "flash_attn_fuse_mlp": True},
    {"adapter": "lora", "load_in_8bit": True, "lora_mlp_kernel": True},
    {"lora_qkv_kernel": True, "trust_remote_code": True},
    {"sample_packing": True, "rl": "dpo"},
    {"rl": "kto", "remove_unused_columns": True},
    {"optimizer": "muon", "deepspeed": "deepspeed_configs/zero3.json"},
    {"optimizer": "q_galore_adamw8bit", "adapter": "lora"},
    {"sample_packing": True, "micro_batch_size": 2, "context_parallel_size": 2, "flash_attention": True},
    {"context_parallel_size": 3, "flash_attention": True},
    {"context_parallel_size": 2, "flash_attention": False, "sdpa_attention": True},
    {"tensor_parallel_size": 16},
    {"fp8": True},
    {"bf16": True, "fp16": True},
    {"early_stopping_patience": 3, "save_steps": None, "eval_steps": None},
    {"save_strategy": "best", "metric_for_best_model": None},
    {"relora": True},
    {"fsdp_version": 1, "fsdp_config": {"cpu_offload_pin_memory": False}},
    {"deepspeed": "deepspeed_configs/zero3.json", "fsdp_config": {"fsdp_version": 2}},
    {"load_in_4bit": True, "adapter": None},
    {"adapter": "qlora", "load_in_4bit": False},
    {"scaling_softmax": True},
    {"test_datasets": [{"path": "x", "type": "alpaca", "split": "train"}], "val_set_size": 0.1},
    {"micro_batch_size": 0},
    {"torch_compile": False, "torch_compile_options": {"mode": "max-autotune"}},
    {"activation_offloading": True, "gradient_checkpointing": False},
    {"rl": "dpo", "dpo_loss_type": ["sigmoid"], "dpo_loss_weights": [1.0, 2.0]},
    {"adapter": "lora", "unfrozen_parameters": ["^lm_head"], "peft_layers_to_transform": [1]},
    {"datasets": None, "pretraining_dataset": None},
    {"max_packed_sequence_len": 2048},
    {"tokens": {"pad_token": "<pad>"}},
    {"output_dir": None},
    # what 0.19.0 adds or changes
    {"micro_batch_size": None, "gradient_accumulation_steps": None, "batch_size": None},
    {"micro_batch_size": None, "gradient_accumulation_steps": None, "batch_size": 16},
    {"fp8_config": {"recipe": "rowwise"}},
    {"fp8": True, "fp8_config": {"recipe": "rowwise_with_gw_hp"}, "fp8_enable_fsdp_float8_all_gather": True},
    {"fp8": True, "fp8_config": {"recipe": "tensorwise", "scale": 1}},
    {"ple_cpu_offload": True},
    {"ple_cpu_offload": True, "adapter": "qlora", "load_in_4bit": True},
    {"ple_cpu_offload": True, "adapter": "lora", "load_in_8bit": True, "deepspeed": "deepspeed_configs/zero2.json"},
    {"optimizer": "polora"},
    {"optimizer": "polora", "adapter": "lora", "weight_decay": 0.01},
    {"optimizer": "polora", "adapter": "lora", "lora_modules_to_save": ["lm_head"]},
    {"optimizer": "polora", "adapter": "qlora", "fsdp_config": {"reshard_after_forward": True}},
    {"optimizer": "adamc"},
    {"rl": "dpo", "dpo_use_liger_kernel": True, "dpo_loss_type": ["ipo"]},
    {"rl": "ipo", "dpo_use_liger_kernel": True},
    {"rl": "dpo", "dpo_use_liger_kernel": True, "dpo_loss_type": ["sigmoid", "hinge"]},
    {"load_in_4bit": True, "adapter": "qlora", "fsdp_version": 2, "fsdp_config": {"cpu_ram_efficient_loading": True}},
    {"qat": {"weight_dtype": "ternary", "activation_dtype": "float8_e4m3fn"}},
    {"qat": {"weight_dtype": "ternary"}},
    {"attn_implementation": "flash_attention_4"},
    {"attn_implementation": "flash_attention_torch"},
    {"attn_implementation": "flash_attention_3", "context_parallel_size": 2},
    {"attn_implementation": "kernels-community/flash-attn3", "context_parallel_size": 2},
    {"attn_implementation": "sdpa", "sample_packing": True, "bf16": True},
    {"base_model": "nvidia/Nemotron-H-8B-Base-8K", "gradient_checkpointing": True, "sample_packing": False},
    {"rl": "ebft", "ebft": None},
    {"rl": "ebft", "ebft": {"mode": "strided"}, "torch_compile": True},
    {"rl": "grpo", "trl": {"scale_rewards": "batch"}},
    {"rl": "grpo", "trl": {"entropy_coef": 0.01, "log_multimodal": True}},
    {"batch_flattening": True, "sample_packing": False, "attn_implementation": "flash_attention_4"},
    {"batch_flattening": True, "sample_packing": False, "attn_implementation": "kernels-community/flash-attn2@v2"},
    {"sample_packing": True, "attn_implementation": "flash_attention_torch"},
    {"context_parallel_size": 2, "attn_implementation": "kernels-community/flash-attn2:flash_attn_varlen"},
]
OUT_OF_RANGE = [-1, 0, -0.5, 0.5, 10**12, 1e-12]


RL_SETTINGS: dict[str, dict[str, Any]] = {
    # what an RL mode is usually written with, so its own validators run rather than only the dataset checks
    "grpo": {"trl": {"num_generations": 4}},
    "gdpo": {"trl": {"num_generations": 4}},
    "ebft": {"ebft": {"mode": "strided"}},
    "kto": {"remove_unused_columns": False},
}


# -- a case ------------------------------------------------------------------------------------------------


@dataclass
class Case:
    config: Any
    raw: dict[str, str]  # marker -> raw YAML scalar written in its place
    steps: list[str]
    gpu: str = GPU
    world_size: int = WORLD_SIZE

    def text(self) -> str:
        return render(self.config, self.raw)

    def describe(self) -> str:
        return f"{self.gpu} x {self.world_size}: " + "; ".join(self.steps)


@cache
def example_config(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _paths(node: Any, here: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key path in the config (a list's first item as "0")."""
    found: list[tuple[str, ...]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((*here, str(key)))
            found.extend(_paths(value, (*here, str(key))))
    elif isinstance(node, list) and node:
        found.extend(_paths(node[0], (*here, "0")))
    return found


def _value_at(config: Any, path: tuple[str, ...]) -> Any:
    node = config
    for part in path:
        node = node[0] if isinstance(node, list) else node.get(part) if isinstance(node, dict) else None
    return node


@st.composite
def cases(draw: st.DrawFn, fields: dict[str, Any]) -> Case:
    """A mutated example config at a target, with the enum and number fields of the release (`fields`)."""
    example = draw(st.sampled_from(EXAMPLES))
    config = copy.deepcopy(example_config(example))
    raw: dict[str, str] = {}
    steps = [str(example.relative_to(EXAMPLES_DIR))]
    enums, numbers = fields["enums"], fields["numbers"]
    gpu, world_size = draw(st.sampled_from(TARGETS))
    kinds = ["drop", "flip", "wrong", "yaml11", "enum", "range", "rl", "combination", "combination"]
    for _ in range(draw(st.sampled_from([1, 1, 2, 2, 3]))):
        kind = draw(st.sampled_from(kinds))
        paths = _paths(config) or [("base_model",)]
        path = draw(st.sampled_from(paths))
        where = ".".join(path)
        if kind == "drop" and remove_path(config, path):
            steps.append(f"removed {where}")
        elif kind == "flip":
            booleans = [p for p in paths if isinstance(_value_at(config, p), bool)]
            if booleans:
                path = draw(st.sampled_from(booleans))
                set_path(config, path, not _value_at(config, path))
                steps.append(f"{'.'.join(path)} flipped to {_value_at(config, path)}")
        elif kind == "wrong":
            value = draw(st.sampled_from(WRONG))
            if set_path(config, path, value):
                steps.append(f"{where} = {value!r}")
        elif kind == "yaml11":
            scalar = draw(st.sampled_from(YAML_1_1))
            if set_raw(config, raw, path, scalar):
                steps.append(f"{where}: {scalar} (raw YAML)")
        elif kind == "enum":
            name = draw(st.sampled_from(sorted(enums)))
            value = draw(st.sampled_from([*enums[name], "bogus", name.upper()]))
            set_path(config, (name,), value)
            steps.append(f"{name} = {value!r}")
        elif kind == "range":
            name = draw(st.sampled_from(numbers))
            value = draw(st.sampled_from(OUT_OF_RANGE))
            set_path(config, (name,), value)
            steps.append(f"{name} = {value!r}")
        elif kind == "rl":
            mode = draw(st.sampled_from([*enums["rl"], None]))
            set_path(config, ("rl",), mode)
            settings = RL_SETTINGS.get(mode, {}) if draw(st.booleans()) else {}
            for key, value in settings.items():
                set_path(config, (key,), copy.deepcopy(value))
            steps.append(f"rl = {mode!r}" + "".join(f", {k} = {v!r}" for k, v in settings.items()))
        elif kind == "combination":
            combination = draw(st.sampled_from(COMBINATIONS))
            for key, value in combination.items():
                set_path(config, (key,), copy.deepcopy(value))
            steps.append(", ".join(f"{k} = {v!r}" for k, v in combination.items()))
    return Case(config, raw, steps, gpu, world_size)


# -- the two verdicts ----------------------------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    errors: list[Diagnostic] | None  # None: not checked (the family is not registered)
    loader: Verdict

    def shown(self) -> str:
        errors = "; ".join(f"{d.rule}: {d.message}" for d in self.errors or ()) or "no error"
        loader = self.loader.refused or "accepts"
        return f"{self.case.describe()}\n  trainspec: {errors}\n  loader: {loader}\n---\n{self.case.text()}"


def run(case: Case, directory: Path) -> Outcome:
    """One case through trainspec at `VERSION` and through that release's loader in this process."""
    path = directory / "config.yaml"
    path.write_text(case.text(), encoding="utf-8")
    found = trainspec.check(path, family=VERSION, world_size=case.world_size, gpu=case.gpu)
    errors = [d for d in found if d.severity is Severity.ERROR]
    return Outcome(case, errors, load(path, target(case.gpu, case.world_size)))


def run_all(served: Served, version: str, cases: list[Case], directory: Path) -> list[Outcome]:
    """Each case through trainspec (here) and the loader (its subprocess) at the case's target, side by side."""
    release = version.split("@")[1]
    with ThreadPoolExecutor(1) as pool:
        verdicts = pool.submit(served.verdicts, [(c.text(), target(c.gpu, c.world_size, release)) for c in cases])
        errors = []
        for i, case in enumerate(cases):
            path = directory / f"case{i}.yaml"
            path.write_text(case.text(), encoding="utf-8")
            found = trainspec.check(path, family=version, world_size=case.world_size, gpu=case.gpu)
            errors.append([d for d in found if d.severity is Severity.ERROR])
        return [Outcome(c, e, v) for c, e, v in zip(cases, errors, verdicts.result(), strict=True)]


def corpus_cases() -> list[Case]:
    """Each example config, unchanged, at the corpus table's target."""
    return [Case(copy.deepcopy(example_config(p)), {}, [str(p.relative_to(EXAMPLES_DIR))]) for p in EXAMPLES]


RL_BASE = "llama-3/qlora-1b.yml"
"""The example each RL mode is set on, so every mode's validators run whatever the random draw picks."""


def rl_mode_cases(modes: list[str]) -> list[Case]:
    """One case per RL mode of the release, with and without what the mode is usually written with."""
    base = example_config(EXAMPLES_DIR / RL_BASE)
    found = []
    for mode in modes:
        for settings in ({}, RL_SETTINGS.get(mode)) if mode in RL_SETTINGS else ({},):
            config = copy.deepcopy(base)
            config["rl"] = mode
            config.update(copy.deepcopy(settings or {}))
            found.append(
                Case(
                    config,
                    {},
                    [RL_BASE, f"rl = {mode!r}" + "".join(f", {k} = {v!r}" for k, v in (settings or {}).items())],
                )
            )
    return found


@pytest.fixture(scope="module", params=sorted(RELEASES))
def oracle(request: pytest.FixtureRequest) -> Iterator[Served]:
    """The release's own loader in a subprocess (tools/setup-dev.sh installs both)."""
    try:
        served = Served(request.param)
    except FileNotFoundError as exc:
        pytest.fail(str(exc))
    yield served
    served.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Outcome, ...]:
    served = Served(RELEASE)
    try:
        return tuple(run_all(served, VERSION, corpus_cases(), tmp_path_factory.mktemp("axolotl-corpus")))
    finally:
        served.close()


@cache
def schema_keys(version: str) -> frozenset[str]:
    return frozenset(get_family(version).schema.root.get("properties", {}))


def judged(judge: Judge, outcome: Outcome, lenient: dict[str, str], version: str) -> None:
    """Judge a case; a refusal is known by the part of the loader's message that `lenient` lists, or as
    `PLUGIN_SETTINGS`."""
    assert outcome.errors is not None
    refused = outcome.loader.refused
    assert not refused.startswith("ORACLE-ERROR"), f"the oracle itself failed: {refused}\n{outcome.shown()}"
    known = next((part for part in lenient if part in refused), refused)
    field = refused.split(":", 1)[0].split(".", 1)[0]
    plugins = isinstance(outcome.case.config, dict) and outcome.case.config.get("plugins")
    if plugins and field.isidentifier() and field not in schema_keys(version):
        known = PLUGIN_SETTINGS
    judge(outcome.errors, bool(refused), outcome.shown, known)


# -- the tests -------------------------------------------------------------------------------------------------


def test_the_corpus_is_the_release():
    assert len(EXAMPLES) == 210, f"{EXAMPLES_DIR}: {len(EXAMPLES)} example configs, expected axolotl 0.18.0's 210"


def test_every_class_is_a_documented_row():
    text = DOC.read_text(encoding="utf-8")
    assert not undocumented(CLASSES, text), f"{undocumented(CLASSES, text)} in {DOC.name}"
    assert "TRAINSPEC_AXOLOTL_CASES" in text


def test_the_cases_reach_every_rl_mode_of_the_release(oracle):
    """`rl` takes each value of the release's own RLType in the cases the agreement test runs, so every RL
    mode's validators run."""
    modes = oracle.fields()["enums"]["rl"]
    assert {"dpo", "ipo", "kto", "orpo", "simpo", "grpo", "gdpo", "ebft"} <= set(modes)
    assert {c.config["rl"] for c in rl_mode_cases(modes)} == set(modes)


def test_trainspec_and_axolotl_agree(tmp_path, oracle):
    release = oracle.release.name
    version = f"axolotl@{release}"
    lenient = KNOWN_LENIENT[release]
    judge = Judge(f"Axolotl {release}", CLASSES, [*lenient, PLUGIN_SETTINGS])
    drawn: list[Case] = []

    @seeded(SEED, CASES)
    @given(cases(oracle.fields()))
    def collect(case: Case) -> None:
        drawn.append(case)

    started = time.perf_counter()
    collect()
    for outcome in run_all(
        oracle, version, [*corpus_cases(), *rl_mode_cases(oracle.fields()["enums"]["rl"]), *drawn], tmp_path
    ):
        judged(judge, outcome, lenient, version)
    took = time.perf_counter() - started
    targets = ", ".join(f"{gpu} x {size}" for gpu, size in TARGETS)
    REPORTS.append(
        f"Axolotl {release} differential ({version} at {targets}; seed {SEED}): {judge.counts['cases']} cases "
        f"(the corpus, each RL mode and {len(drawn)} mutations) in {took:.0f} s; a stricter case counts once per "
        "class of its errors; " + judge.summary()
    )
    judge.finish()
    assert judge.counts["cases"] >= CASES
    if CASES == DEFAULT_CASES and SEED == 0:  # the cases the list was made from
        stale = sorted(set(lenient) - judge.seen_lenient)
        assert not stale, f"no case is more lenient with these any more, remove them from KNOWN_LENIENT: {stale}"


# -- the corpus table ------------------------------------------------------------------------------------------


WRITTEN_FOR = {
    # example configs whose parallel degrees make a mesh for another world size than the table's
    "distributed-parallel/llama-3_1-8b-hsdp-tp.yaml": 16,  # dp_replicate 2 × dp_shard 4 × tp 2
    "gpt-oss/gpt-oss-120b-fft-fsdp2-offload.yaml": 16,  # dp_shard_size 16, "requires 2x8xH100 nodes"
}
"""Config -> the world size it is written for, where that is not the table's; checked clean there."""


def corpus_table(outcomes: tuple[Outcome, ...]) -> str:
    """docs/axolotl-corpus.md: each example config's verdict, from the loader and from trainspec."""
    clean = sum(1 for o in outcomes if o.loader.accepted)
    lines = [
        "# Axolotl 0.18.0's example configs, checked",
        "",
        f"The {len(outcomes)} example configs of Axolotl {RELEASE} (upstream tag v{RELEASE}), each checked at one",
        f"target, {WORLD_SIZE} × {GPU.upper()} (`trainspec check --family {VERSION} --gpu {GPU} --world-size "
        f"{WORLD_SIZE}`), and",
        "run through the release's own loader at the same target (`validate_config` with the capabilities",
        "that machine reports; tests/axolotl_loader.py). "
        f"{clean} load; {len(outcomes) - clean} are refused, each for the reason the loader gives.",
        "`tests/test_axolotl_differential.py` keeps this page true (`TRAINSPEC_UPDATE_CORPUS_TABLE=1` rewrites it).",
        "",
        "| config | Axolotl 0.18.0 | trainspec |",
        "|---|---|---|",
    ]
    for o in outcomes:
        loader = f"refused: {o.loader.refused}".replace("|", "\\|") if o.loader.refused else "loads"
        ours = "not checked" if o.errors is None else ", ".join(sorted({f"`{d.rule}`" for d in o.errors})) or "clean"
        if o.case.steps[0] in WRITTEN_FOR:
            ours += f" (clean at {WRITTEN_FOR[o.case.steps[0]]} × {GPU.upper()}, the size it is written for)"
        lines.append(f"| `{o.case.steps[0]}` | {loader} | {ours} |")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("name", "world_size"), sorted(WRITTEN_FOR.items()))
def test_a_config_written_for_another_world_size_is_clean_there(name, world_size):
    path = EXAMPLES_DIR / name
    at_8 = trainspec.check(path, family=VERSION, gpu=GPU, world_size=WORLD_SIZE)
    assert [d.rule for d in at_8 if d.severity == Severity.ERROR] == ["mesh-fits-world-size"]
    there = trainspec.check(path, family=VERSION, gpu=GPU, world_size=world_size)
    assert not [d for d in there if d.severity == Severity.ERROR]


def test_corpus_table(corpus):
    expected = corpus_table(corpus)
    if os.environ.get("TRAINSPEC_UPDATE_CORPUS_TABLE"):
        TABLE.write_text(expected, encoding="utf-8")
    assert TABLE.read_text(encoding="utf-8") == expected, (
        f"{TABLE.name} is stale: TRAINSPEC_UPDATE_CORPUS_TABLE=1 pytest {Path(__file__).name} -k table"
    )
