"""Fidelity to each trainer's own loader, row by row.

One table per family covers every row of the references' "behaviours not to copy" tables
(KempnerForge §12 Q1-Q19, SpecForge §8 Q1-Q13) and the loader facts those rows rely on (KempnerForge
§2.1 TOML, §2.4 CLI overrides, §2.5 value conversion, §7 world size, §11 launch failures; SpecForge §6
overrides, §7 file formats, §4.6 world size). Each case gives the config, the loader's verdict according
to the reference and trainspec's expected verdict. The contract (README, "What an error means"):

- error: the loader refuses the config or the launch command (file plus overrides), or the job fails at
  launch or in its first step; trainspec may be stricter, and then the message says what the loader does;
- warning: the job starts, but a value is probably not what the author meant;
- trainspec is never more lenient than the loader: a case the loader refuses fails here unless trainspec
  reports an error.

A case marked `bug` is a known fidelity bug (trainspec more lenient than the loader): it keeps the
loader-faithful expectation and is `xfail(strict=True)` until trainspec is fixed. A case marked
`message_bug` has the right verdict but a message that does not (correctly) say what the loader does.
docs/loader-differences.md lists every intended difference with its reason; `test_every_difference_is_documented`
keeps it in step with this table.

The family versions are pinned to the ones the references describe (newer versions are ignored here).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import trainspec
from trainspec.cli import main

KF = "kempnerforge@089fbbd"
SF = "specforge@08eaeac"
DOC = Path(__file__).resolve().parent.parent / "docs" / "loader-differences.md"

# the loader's verdict, as the reference describes it
REFUSES = "refuses"  # the loader refuses the file or the launch command, or the job fails at launch / first step
STARTS = "starts"  # the job starts and does what the config says
SURPRISE = "starts-with-surprise"  # the job starts, but not as the author probably meant

# trainspec's expected verdict: the worst severity it reports ("none": notes at most; "usage": the
# world size itself is refused with ValueError, before any config is looked at)
SEVERITIES = ("error", "warning", "none", "usage")


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    loader: str
    severity: str
    rules: tuple[str, ...] = ()  # ids that must be reported at `severity` (notes for "none")
    phrase: str = ""  # text the first diagnostic of rules[0] must contain
    reason: str = ""  # why the loader decides so (reference section)
    overrides: tuple[str, ...] = ()
    cli: bool = False  # overrides are KempnerForge's `--a.b=v` arguments, through `trainspec check`
    world_size: int | None = None
    name: str = "job.toml"
    paths: tuple[str, ...] = ()  # config paths that must carry a diagnostic of rules[0]
    once: bool = False  # rules[0] is reported exactly once
    loader_says: str = ""  # for a stricter error: what the message must say about the loader (default: its name)
    bug: str = ""  # a known fidelity bug: xfail(strict) with this reason
    message_bug: str = ""  # the message does not say (correctly) what the loader does: xfail(strict)


@dataclass(frozen=True)
class Found:
    severity: str
    rule: str
    path: str
    message: str


def kf(id: str, text: str, loader: str, severity: str, *rules: str, **kw) -> Case:
    return Case(f"kf-{id}", text, loader, severity, rules, **kw)


def sf(id: str, text: str, loader: str, severity: str, *rules: str, **kw) -> Case:
    return Case(f"sf-{id}", text, loader, severity, rules, **{"name": "run.yaml", **kw})


# -- KempnerForge (reference kempnerforge.md, commit 089fbbd) ---------------------------------------------

VLM = (
    '[vision_encoder]\ntype = "random"\nfeature_dim = 64\nnum_tokens = 16\n'
    '[data]\nhf_dataset_name = "coco"\ntokenizer_path = "gpt2"\n'
)
VLM_256 = VLM.replace("num_tokens = 16", "num_tokens = 256")
DATASETS = '[[data.datasets]]\npath = "/a"\n[[data.datasets]]\npath = "/b"\n[[data.datasets]]\npath = "/c"\n'

KF_CASES = [
    kf("base-valid", "[model]\ndim = 4096\nn_heads = 32\nn_kv_heads = 8\n", STARTS, "none"),
    kf("base-vlm-valid", VLM + "[vlm]\n", STARTS, "none"),
    # Q1: absent n_kv_heads is KempnerForge's built-in 32 (revised row: copy it)
    kf(
        "Q1-absent-kv-heads",
        "[model]\ndim = 256\nn_heads = 4\n",
        REFUSES,
        "error",
        "model-kv-heads-divide-heads",
        phrase="model.n_kv_heads is 32 when it is not written",
        reason="the loader keeps its default config's n_kv_heads = 32, which does not divide 4 heads",
    ),
    kf(
        "Q1-absent-kv-heads-multiple-of-32",
        "[model]\ndim = 8192\nn_heads = 64\n",
        SURPRISE,
        "warning",
        "model-n-kv-heads-implicit",
        phrase="KempnerForge will use 32 kv heads",
        reason="64 query heads silently share 32 kv heads (grouped-query attention)",
    ),
    kf(
        "Q1-null-kv-heads-follows-n-heads",
        "[model]\ndim = 256\nn_heads = 4\nn_kv_heads = 4\n",
        STARTS,
        "none",
        overrides=("--model.n_kv_heads=None",),
        cli=True,
        reason="an explicit null (CLI None) means n_kv_heads = n_heads",
    ),
    kf(
        "Q1-null-cannot-repair-absent",
        "[model]\ndim = 256\nn_heads = 4\n",
        REFUSES,
        "error",
        "override-repairs-file",
        phrase="fails model-kv-heads-divide-heads",
        overrides=("--model.n_kv_heads=None",),
        cli=True,
        reason="the file alone (kv heads 32) is refused before the override is applied (§2.7 step 5)",
    ),
    # Q2: floats truncated into integer fields, integer text converted (§2.5)
    kf(
        "Q2-fraction-truncated-to-zero",
        "[train]\nbatch_size = 0.5\n",
        REFUSES,
        "error",
        "wrong-type",
        phrase="reads it as 0",
        reason="0.5 truncates to 0, which fails batch_size >= 1",
    ),
    kf(
        "Q2-fraction-truncated",
        "[train]\nbatch_size = 2.7\n",
        SURPRISE,
        "error",
        "wrong-type",
        phrase="reads it as 2",
        reason="2.7 silently becomes 2",
    ),
    kf(
        "Q2-integral-float",
        "[train]\nbatch_size = 4.0\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 4",
        reason="4.0 becomes 4",
    ),
    kf(
        "Q2-integer-text",
        '[train]\nbatch_size = "8"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 8",
        reason="integer text is parsed",
    ),
    kf(
        "Q2-decimal-text",
        '[train]\nbatch_size = "8.0"\n',
        REFUSES,
        "error",
        "wrong-type",
        reason="text with a decimal point is not integer text",
    ),
    kf(
        "Q2-negative-fraction-toward-zero",
        "[distributed]\ndp_shard = -1.5\n",
        SURPRISE,
        "error",
        "wrong-type",
        phrase="reads it as -1",
        reason="-1.5 truncates toward zero to -1 (auto sharding)",
    ),
    kf(
        "Q2-cli-float",
        "",
        SURPRISE,
        "error",
        "wrong-type",
        phrase="reads it as 2",
        overrides=("--train.batch_size=2.5",),
        cli=True,
        reason="the literal 2.5 truncates to 2",
    ),
    kf(
        "Q2-cli-quoted-integer-text",
        "",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 8",
        overrides=('--train.batch_size="8"',),
        cli=True,
        reason="the Python string '8' is integer text",
    ),
    kf(
        "Q2-cli-not-a-number",
        "",
        REFUSES,
        "error",
        "wrong-type",
        overrides=("--train.batch_size=abc",),
        cli=True,
        reason="'abc' is kept as text and is no integer text",
    ),
    # Q3: NaN and infinity pass one-sided bounds
    kf(
        "Q3-nan-passes-lower-bound",
        "[optimizer]\nlr = nan\n",
        SURPRISE,
        "error",
        "non-finite-number",
        reason="NaN > 0 is false, so the positivity check lets it through; training runs on NaN",
    ),
    kf(
        "Q3-inf-passes-lower-bound",
        "[optimizer]\nlr = inf\n",
        SURPRISE,
        "error",
        "non-finite-number",
        reason="+inf passes every lower bound",
    ),
    kf(
        "Q3-minus-inf-fails-lower-bound",
        "[optimizer]\nlr = -inf\n",
        REFUSES,
        "error",
        "non-finite-number",
        reason="-inf fails lr > 0",
    ),
    kf(
        "Q3-nan-in-two-sided-range",
        "[scheduler]\nmin_lr_ratio = nan\n",
        REFUSES,
        "error",
        "non-finite-number",
        reason="the two-sided ranges (min_lr_ratio, betas, muon_momentum) reject NaN",
    ),
    kf(
        "Q3-nan-in-integer-field",
        "[train]\nbatch_size = nan\n",
        REFUSES,
        "error",
        "non-finite-number",
        reason="NaN and infinity are errors in integer fields (§2.5)",
    ),
    kf(
        "Q3-nan-text-in-number-field",
        '[optimizer]\nlr = "nan"\n',
        SURPRISE,
        "error",
        "wrong-type",
        phrase="reads it as NaN",
        reason="number text includes the words for NaN (§2.5), which then passes lr > 0",
    ),
    kf(
        "Q3-cli-inf-text",
        "",
        SURPRISE,
        "error",
        "wrong-type",
        phrase="reads it as Infinity",
        overrides=("--train.grad_clip_norm=inf",),
        cli=True,
        reason="'inf' is no Python literal, stays text and converts to +inf, which passes > 0",
    ),
    # Q4: booleans from strings and numbers
    kf(
        "Q4-yes-text-in-file",
        '[train]\ncompile_model = "yes"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        reason="text in {true, 1, yes} is true",
    ),
    kf(
        "Q4-other-text-becomes-false",
        '[metrics]\nenable_wandb = "enabled"\n',
        SURPRISE,
        "error",
        "wrong-type",
        phrase="reads it as false",
        reason="any other text silently becomes false",
    ),
    kf(
        "Q4-number-as-boolean",
        "[model]\ntie_embeddings = 1\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        reason="numbers by truthiness",
    ),
    kf(
        "Q4-cli-false-text",
        "",
        STARTS,
        "none",
        overrides=("--train.compile_model=false",),
        cli=True,
        reason="'false' stays text and converts to false",
    ),
    kf(
        "Q4-cli-python-false",
        "",
        STARTS,
        "none",
        overrides=("--train.compile_model=False",),
        cli=True,
        reason="the Python literal False",
    ),
    kf(
        "Q4-cli-upper-case-true",
        "",
        STARTS,
        "none",
        overrides=("--train.compile_model=TRUE",),
        cli=True,
        reason="lower-cased 'true'",
    ),
    kf(
        "Q4-cli-mixed-case-true",
        "",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        overrides=("--train.compile_model=tRuE",),
        cli=True,
        reason="lower-cased 'true'; trainspec takes the YAML 1.2 spellings true, True, TRUE only",
    ),
    kf(
        "Q4-cli-yes",
        "",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        overrides=("--train.compile_model=yes",),
        cli=True,
        reason="'yes' is in the true set",
    ),
    kf(
        "Q4-cli-other-text-becomes-false",
        "",
        SURPRISE,
        "error",
        "wrong-type",
        phrase="reads it as false",
        overrides=("--metrics.enable_wandb=enabled",),
        cli=True,
        reason="'enabled' silently becomes false",
    ),
    kf(
        "Q4-cli-bare-flag-is-true",
        "",
        REFUSES,
        "error",
        "tied-embeddings-no-pp",
        overrides=("--model.tie_embeddings", "--distributed.pp=2"),
        cli=True,
        reason="a bare --a.b means true (§2.4), and tied embeddings cannot use pp > 1",
    ),
    kf(
        "Q4-cli-integer-as-boolean",
        "",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        overrides=("--model.tie_embeddings=1",),
        cli=True,
        reason="the literal 1 is truthy",
    ),
    kf(
        "Q4-cli-quoted-false",
        "",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as false",
        overrides=('--train.compile_model="false"',),
        cli=True,
        reason="the Python string 'false' converts to false",
    ),
    # Q5: booleans in integer fields
    kf(
        "Q5-true-in-integer-field",
        "[train]\nbatch_size = true\n",
        STARTS,
        "error",
        "wrong-type",
        reason="booleans are kept in integer fields; true acts as 1",
    ),
    kf(
        "Q5-false-in-integer-field",
        "[checkpoint]\nkeep_last_n = false\n",
        REFUSES,
        "error",
        "wrong-type",
        reason="false acts as 0, which fails keep_last_n >= 1",
    ),
    kf(
        "Q5-cli-true-in-integer-field",
        "",
        STARTS,
        "error",
        "wrong-type",
        overrides=("--train.batch_size=True",),
        cli=True,
        reason="the literal True acts as 1",
    ),
    kf(
        "Q5-cli-bare-integer-field",
        "",
        SURPRISE,
        "error",
        "wrong-type",
        overrides=("--train.seq_len",),
        cli=True,
        reason="a bare flag is true, which acts as seq_len 1",
    ),
    # Q6: string fields accept any type
    kf(
        "Q6-number-in-string-field",
        "[checkpoint]\ndir = 5\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="keeps it as it is",
        reason="string fields keep any value unchanged",
    ),
    kf(
        "Q6-date-in-string-field",
        "[metrics]\nwandb_project = 2024-01-01\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="keeps it as it is",
        reason="a TOML date is kept in a string field",
    ),
    kf(
        "Q6-cli-number-text-in-string-field",
        "",
        STARTS,
        "none",
        overrides=("--metrics.wandb_run_id=123",),
        cli=True,
        reason="KempnerForge keeps the integer 123; trainspec keeps the text '123' (the sane reading)",
    ),
    kf(
        "Q6-cli-plain-text",
        "",
        STARTS,
        "none",
        overrides=("--data.dataset_path=/data/run1",),
        cli=True,
        reason="text that is no literal is kept as a string (§2.4)",
    ),
    kf(
        "Q6-cli-split-at-first-equals",
        "",
        STARTS,
        "none",
        overrides=("--checkpoint.dir=a=b",),
        cli=True,
        reason="the argument splits at the first = (§2.4)",
    ),
    # Q7: a scalar for an array field is wrapped
    kf(
        "Q7-scalar-wrapped",
        '[checkpoint]\nexclude_from_loading = "output"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase='reads it as ["output"]',
        reason="the string becomes a one-element list",
    ),
    kf(
        "Q7-wrapped-then-refused",
        VLM + '[vlm]\narch = "mot"\nmot_modalities = "text"\n',
        REFUSES,
        "error",
        "wrong-type",
        reason='["text"] then lacks "image" and has fewer than 2 items',
    ),
    kf(
        "Q7-cli-scalar-wrapped",
        "",
        STARTS,
        "error",
        "wrong-type",
        phrase='reads it as ["output"]',
        overrides=("--checkpoint.exclude_from_loading=output",),
        cli=True,
        reason="the text becomes a one-element list",
    ),
    kf(
        "Q7-cli-bare-tuple",
        "",
        STARTS,
        "none",
        overrides=("--optimizer.betas=0.85,0.98",),
        cli=True,
        reason="the bare form 0.85,0.98 is a tuple literal (§2.4)",
    ),
    kf(
        "Q7-cli-parenthesised-tuple",
        "",
        STARTS,
        "none",
        overrides=("--optimizer.betas=(0.85,0.98)",),
        cli=True,
        reason="a tuple literal is a list",
    ),
    # Q8: non-table items in arrays of tables
    kf(
        "Q8-string-item-in-datasets",
        '[data]\ndatasets = ["web"]\n',
        REFUSES,
        "error",
        "wrong-type",
        paths=("data.datasets[0]",),
        reason="the unvalidated string item crashes the data loader with an internal error",
    ),
    kf(
        "Q8-string-item-in-freeze",
        VLM + '[vlm]\nfreeze = ["vision_encoder"]\n',
        STARTS,
        "error",
        "wrong-type",
        paths=("vlm.freeze[0]",),
        reason="string items of vlm.freeze are accepted as raw strings",
        message_bug="the type error does not say that KempnerForge keeps the raw string item",
    ),
    kf(
        "Q8-table-instead-of-array",
        '[data.datasets]\npath = "/a"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase='reads it as [{"path": "/a"}]',
        reason="a single table becomes a one-element array holding an unvalidated table",
    ),
    # Q9: missing required item keys (an internal constructor error upstream)
    kf(
        "Q9-freeze-spec-without-module",
        VLM + "[vlm]\n[[vlm.freeze]]\nfrozen = false\n",
        REFUSES,
        "error",
        "missing-key",
        paths=("vlm.freeze[0].module",),
        reason="the freeze spec constructor fails",
    ),
    kf(
        "Q9-freeze-stage-without-start-step",
        VLM + '[vlm]\n[[vlm.freeze_schedule]]\nspecs = [{module = "adapter"}]\n',
        REFUSES,
        "error",
        "missing-key",
        paths=("vlm.freeze_schedule[0].start_step",),
        reason="the freeze stage constructor fails",
    ),
    kf(
        "Q9-freeze-stage-without-specs",
        VLM + "[vlm]\n[[vlm.freeze_schedule]]\nstart_step = 5\n",
        REFUSES,
        "error",
        "missing-key",
        paths=("vlm.freeze_schedule[0].specs",),
        reason="the freeze stage constructor fails",
    ),
    kf(
        "Q9-cli-freeze-spec-without-module",
        VLM + "[vlm]\n",
        REFUSES,
        "error",
        "missing-key",
        paths=("vlm.freeze[0].module",),
        overrides=("--vlm.freeze=[{'frozen': False}]",),
        cli=True,
        reason="a list of dicts is validated item by item (§2.4)",
    ),
    # Q10: a scalar section, null for a non-optional field
    kf(
        "Q10-scalar-section",
        "model = 5\n",
        REFUSES,
        "error",
        "wrong-type",
        paths=("model",),
        reason="loads, then crashes with an internal attribute error",
    ),
    kf(
        "Q10-cli-null-for-required-field",
        "",
        REFUSES,
        "error",
        "wrong-type",
        phrase="got null",
        overrides=("--train.batch_size=None",),
        cli=True,
        reason="None crashes in the comparison with the bound",
    ),
    kf(
        "Q10-cli-none-removes-optional-section",
        VLM + "[vlm]\n",
        SURPRISE,
        "warning",
        "vlm-section-without-vlm",
        overrides=("--vlm=None",),
        cli=True,
        reason="--vlm=None removes the optional section (§2.4); the file's [vision_encoder] then has no effect",
    ),
    # Q11: betas
    kf(
        "Q11-three-betas",
        "[optimizer]\nbetas = [0.9, 0.95, 0.99]\n",
        STARTS,
        "error",
        "betas-range",
        reason="only the first two elements are checked and used",
        message_bug="betas-range does not say that KempnerForge ignores the third item",
    ),
    kf(
        "Q11-one-beta",
        "[optimizer]\nbetas = [0.9]\n",
        REFUSES,
        "error",
        "betas-range",
        reason="an index error",
    ),
    kf(
        "Q11-text-beta",
        '[optimizer]\nbetas = ["a", 0.9]\n',
        REFUSES,
        "error",
        "betas-range",
        paths=("optimizer.betas[0]",),
        reason="the comparison with the range crashes",
    ),
    kf(
        "Q11-beta-of-one",
        "[optimizer]\nbetas = [0.9, 1.0]\n",
        REFUSES,
        "error",
        "betas-range",
        reason="each beta must be below 1",
    ),
    # Q12: map values
    kf(
        "Q12-anneal-weight-text",
        '[data.anneal_weights]\nweb = "x"\n',
        STARTS,
        "error",
        "wrong-type",
        reason="anneal_weights values are not type-checked (and annealing is off)",
        message_bug="the type error does not say that KempnerForge accepts the value unchecked",
    ),
    kf(
        "Q12-module-pattern-text",
        VLM + '[vlm.module_patterns]\nvision_encoder = ["vision_encoder.*"]\nenc = "vision_encoder.*"\n',
        STARTS,
        "error",
        "wrong-type",
        loader_says="keeps it as it is",
        reason="module_patterns values are not type-checked; the unused alias is kept as text",
        message_bug='the message claims the loader wraps the text into a list ("reads it as [...]"), but '
        "KempnerForge does not convert map values (§12 Q12): it keeps the text",
    ),
    kf(
        "Q12-phase-weight-text",
        '[[data.phases]]\nstart_step = 0\n[data.phases.dataset_weights]\nweb = "x"\n',
        REFUSES,
        "error",
        "wrong-type",
        reason="dataset_weights values are compared with 0, which crashes on text",
    ),
    kf(
        "Q12-phase-weight-negative",
        "[[data.phases]]\nstart_step = 0\n[data.phases.dataset_weights]\nweb = -1\n",
        REFUSES,
        "error",
        "out-of-range",
        reason="dataset_weights values must be >= 0",
    ),
    # Q13: a CLI arch switch keeps the file's variant
    kf(
        "Q13-cli-arch-switch-rejects-new-keys",
        VLM + '[vlm]\narch = "joint_decoder"\n',
        REFUSES,
        "error",
        overrides=("--vlm.arch=cross_attention", "--vlm.cross_attention_n_heads=8"),
        cli=True,
        reason="the override only changes the string: the field set stays joint_decoder's, so "
        "cross_attention_n_heads is an unknown key",
    ),
    kf(
        "Q13-cli-arch-switch-keeps-old-budget",
        VLM_256 + '[vlm]\narch = "joint_decoder"\n',
        REFUSES,
        "error",
        overrides=("--vlm.arch=cross_attention", "--model.max_seq_len=600", "--train.seq_len=600"),
        cli=True,
        reason="KempnerForge still counts the 256 image tokens (joint_decoder behaviour): 256 + 512 > 600",
    ),
    kf(
        "Q13-cli-arch-switch-keeps-old-launch-budget",
        VLM_256 + '[vlm]\narch = "joint_decoder"\n[model]\nmax_seq_len = 768\n[train]\nseq_len = 600\n',
        REFUSES,
        "error",
        overrides=("--vlm.arch=cross_attention",),
        cli=True,
        reason="the file loads (its train.seq_len budget is a launch rule); at launch KempnerForge still counts "
        "the 256 image tokens of the joint_decoder variant: 256 + 512 > 600",
    ),
    kf(
        "Q13-cli-arch-switch-old-keys",
        VLM + '[vlm]\narch = "mot"\nmot_image_n_heads = 32\n',
        SURPRISE,
        "error",
        "vlm-arch-fields",
        overrides=("--vlm.arch=joint_decoder",),
        cli=True,
        reason="the MoT field set and behaviour stay, although the arch now reads joint_decoder",
        message_bug="the unknown-key error does not say that KempnerForge keeps the file's mot variant",
    ),
    # Q14: each layer is validated on its own
    kf(
        "Q14-override-cannot-repair-file",
        "[profiling]\nstart_step = 8\nend_step = 8\n",
        REFUSES,
        "error",
        "override-repairs-file",
        phrase="fails profiling-window",
        overrides=("--profiling.end_step=9",),
        cli=True,
        reason="the file is checked before the overrides apply (revised row)",
    ),
    kf(
        "Q14-override-repairs-launch-rule",
        "[train]\nseq_len = 4096\n",
        STARTS,
        "none",
        overrides=("--train.seq_len=2048",),
        cli=True,
        reason="§7 launch rules run on the merged config",
    ),
    kf(
        "Q14-override-repairs-world-size",
        "[distributed]\ndp_shard = 2\n",
        STARTS,
        "none",
        overrides=("--distributed.dp_shard=8",),
        cli=True,
        world_size=8,
        reason="world-size rules run at launch, on the merged config",
    ),
    kf(
        "Q14-override-breaks-valid-file",
        "",
        REFUSES,
        "error",
        "model-heads-divide-dim",
        overrides=("--model.dim=4100",),
        cli=True,
        reason="the merged layer is validated again",
    ),
    kf(
        "Q14-warning-once",
        VLM.replace('"random"', '"siglip2"\npath = "google/siglip2-base-patch16-224"') + "[vlm]\n",
        SURPRISE,
        "warning",
        "vlm-hf-encoder-override",
        once=True,
        overrides=("--train.seq_len=2048",),
        cli=True,
        reason="siglip2 reports its own dimensions; KempnerForge logs this warning once per layer (twice)",
    ),
    kf(
        "Q14-cli-key-creates-optional-section",
        "",
        REFUSES,
        "error",
        "vlm-needs-vision-encoder",
        overrides=("--vlm.max_text_len=64",),
        cli=True,
        reason="any vlm.* override creates [vlm], which needs [vision_encoder] (§2.2)",
    ),
    kf(
        "Q14-cli-map-replaced-whole",
        "[data.anneal_weights]\ncode = -0.5\n",
        STARTS,
        "none",
        overrides=("--data.anneal_weights={'web':0.7}",),
        cli=True,
        reason="a table for a map field replaces the whole map (§2.2), so the file's negative weight is gone",
    ),
    kf(
        "Q14-cli-repeated-key-last-wins",
        "",
        STARTS,
        "none",
        overrides=("--train.batch_size=0", "--train.batch_size=4"),
        cli=True,
        reason="for repeated keys the last one wins (§2.4)",
    ),
    # Q15: negative num_experts means dense; MoE-only checks are conditional
    kf(
        "Q15-negative-experts",
        "[model]\nnum_experts = -1\n",
        STARTS,
        "error",
        "out-of-range",
        reason="a negative count is treated as dense",
        message_bug="the bound error does not say that KempnerForge treats the value as a dense model",
    ),
    kf(
        "Q15-dense-skips-moe-checks",
        '[model]\nnum_experts = 0\nmoe_bias_schedule = "cosine"\n',
        STARTS,
        "none",
        reason="moe_bias_schedule is checked only for MoE models (kept for parity)",
    ),
    kf(
        "Q15-moe-checks-moe-fields",
        '[model]\nnum_experts = 4\nmoe_bias_schedule = "cosine"\n[train]\ncompile_model = false\n',
        REFUSES,
        "error",
        "moe-field-bounds",
        reason="an MoE model checks moe_bias_schedule",
    ),
    # Q16: numbers without bounds of their own
    kf(
        "Q16-max-seq-len-zero",
        "[model]\nmax_seq_len = 0\n",
        REFUSES,
        "error",
        "out-of-range",
        reason="no bound of its own, but seq_len >= 1 can never fit (seq-len-within-max)",
    ),
    kf(
        "Q16-norm-eps-zero",
        "[model]\nnorm_eps = 0.0\n",
        SURPRISE,
        "warning",
        "value-domain",
        phrase="KempnerForge accepts it",
        reason="unchecked; a zero epsilon divides by zero",
    ),
    kf(
        "Q16-negative-profiling-start",
        "[profiling]\nstart_step = -1\n",
        SURPRISE,
        "warning",
        "value-domain",
        reason="negative profiling steps are accepted (§3.10)",
    ),
    kf(
        "Q16-negative-freeze-stage-start",
        VLM + '[vlm]\n[[vlm.freeze_schedule]]\nstart_step = -10\nspecs = [{module = "adapter"}]\n',
        SURPRISE,
        "warning",
        "value-domain",
        paths=("vlm.freeze_schedule[0].start_step",),
        reason="freeze-stage start_step has no sign check",
    ),
    kf(
        "Q16-negative-anneal-weight",
        "[data.anneal_weights]\nweb = -0.5\n",
        SURPRISE,
        "warning",
        "value-domain",
        paths=("data.anneal_weights.web",),
        reason="anneal_weights values are unchecked",
    ),
    # Q17: message quality only
    kf(
        "Q17-unknown-key-names-item-index",
        DATASETS + "wieght = 2.0\n",
        REFUSES,
        "error",
        "unknown-key",
        phrase="data.datasets[2]",
        paths=("data.datasets[2].wieght",),
        reason="closed tables (§2.3); KempnerForge names the class DatasetSource, without the index",
    ),
    kf(
        "Q17-every-problem-at-once",
        DATASETS + "wieght = 2.0\n[train]\nbach_size = 3\n",
        REFUSES,
        "error",
        "unknown-key",
        paths=("data.datasets[2].wieght", "train.bach_size"),
        reason="KempnerForge reports only the first (train is checked before data)",
    ),
    kf(
        "Q17-unknown-key-names-arch",
        VLM + '[vlm]\narch = "mot"\ncross_attention_n_heads = 4\n',
        REFUSES,
        "error",
        "vlm-arch-fields",
        phrase='for arch = "mot"',
        reason="keys of another arch are unknown; KempnerForge names the arch's class",
    ),
    # Q18: [vision_encoder] / [adapter] without [vlm]
    kf(
        "Q18-encoder-without-vlm",
        '[vision_encoder]\ntype = "random"\n',
        SURPRISE,
        "warning",
        "vlm-section-without-vlm",
        reason="accepted and validated, but without effect",
    ),
    kf(
        "Q18-adapter-without-vlm",
        '[adapter]\ntype = "linear"\n',
        SURPRISE,
        "warning",
        "vlm-section-without-vlm",
        reason="accepted and validated, but without effect",
    ),
    kf(
        "Q18-invalid-encoder-without-vlm",
        '[vision_encoder]\ntype = "dino"\n',
        REFUSES,
        "error",
        "vision-encoder-type-registered",
        reason="the section is validated even without [vlm]",
    ),
    # Q19: world size
    kf(
        "Q19-no-world-size",
        "[distributed]\ndp_shard = 2\n",
        STARTS,
        "none",
        "world-size-unknown",
        reason="launched on the 2 ranks it implies; KempnerForge's W = 1 default applies only to a caller "
        "that passes no world size, never to a launch",
    ),
    kf(
        "Q19-world-size-mismatch",
        "[distributed]\ndp_shard = 2\n",
        REFUSES,
        "error",
        "world-size-product",
        world_size=1,
        reason="1·2·1·1·1·1 = 2 is not the world size 1",
    ),
    kf(
        "Q19-world-size-implied",
        "[distributed]\ndp_shard = 2\n",
        STARTS,
        "none",
        world_size=2,
        reason="the degrees multiply to the world size",
    ),
    kf(
        "Q19-auto-shard-indivisible",
        "[distributed]\ndp_shard = -1\ntp = 2\n",
        REFUSES,
        "error",
        "world-size-auto-shard-divisible",
        world_size=3,
        reason="3 is not divisible by tp = 2",
    ),
    kf(
        "Q19-world-size-zero",
        "[distributed]\ndp_shard = -1\n",
        STARTS,
        "usage",
        world_size=0,
        reason="a non-positive world size is not rejected when dp_shard = -1",
    ),
    # §2.5 value conversion of number and enum fields
    kf("conv-integer-into-number", "[optimizer]\nlr = 1\n", STARTS, "none", reason="an integer is the same float"),
    kf(
        "conv-number-text",
        '[optimizer]\nlr = "3e-4"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 0.0003",
        reason="number text is parsed",
    ),
    kf(
        "conv-boolean-into-number",
        "[optimizer]\nlr = true\n",
        SURPRISE,
        "error",
        "wrong-type",
        phrase="reads it as 1.0",
        reason="true becomes lr = 1.0",
    ),
    kf(
        "conv-enum-case-sensitive",
        '[train]\nmixed_precision = "BF16"\n',
        REFUSES,
        "error",
        "not-allowed-value",
        reason="enums match the value exactly, case-sensitively",
    ),
    kf(
        "conv-enum-member-name",
        '[distributed]\npp_schedule = "schedule_1f1b"\n',
        REFUSES,
        "error",
        "not-allowed-value",
        reason="enums match the value ('1f1b'), not a member name",
    ),
    # §2.4 CLI override parsing
    kf(
        "cli-none-on-optional",
        "",
        STARTS,
        "none",
        overrides=("--checkpoint.load_path=None",),
        cli=True,
        reason="None sets an optional field to null",
    ),
    kf(
        "cli-hex-and-underscores",
        "",
        STARTS,
        "none",
        overrides=("--train.batch_size=0x10", "--train.max_steps=1_000"),
        cli=True,
        reason="integers in hexadecimal and with _ separators",
    ),
    kf(
        "cli-list-of-dicts",
        "",
        STARTS,
        "none",
        overrides=("--data.datasets=[{'path':'/a','weight':2.0}]",),
        cli=True,
        reason="a list of dicts for an array of tables",
    ),
    kf(
        "cli-unknown-key",
        "",
        REFUSES,
        "error",
        "override-unknown-path",
        phrase="did you mean `model.dim`",
        overrides=("--model.dimm=4096",),
        cli=True,
        reason="overrides obey the unknown-key rule",
    ),
    kf(
        "cli-index-is-unknown-key",
        '[[data.datasets]]\npath = "/a"\n',
        REFUSES,
        "error",
        overrides=("--data.datasets[0].weight=2.0",),
        cli=True,
        reason="the key is split at '.', so `datasets[0]` is an unknown key of [data]",
    ),
    # §2.1 TOML and §2.3 closed tables
    kf(
        "toml-duplicate-key",
        "[model]\ndim = 1\ndim = 2\n",
        REFUSES,
        "error",
        "syntax-error",
        reason="TOML 1.0 forbids a key written twice",
    ),
    kf(
        "toml-table-twice",
        "[model]\ndim = 4096\n[model]\nn_layers = 2\n",
        REFUSES,
        "error",
        "syntax-error",
        reason="TOML 1.0 forbids a table declared twice",
    ),
    kf(
        "toml-unknown-top-level-key",
        "[modle]\ndim = 4096\n",
        REFUSES,
        "error",
        "unknown-key",
        reason="the top level is closed",
    ),
    kf(
        "toml-schema-key",
        '"$schema" = "https://example.com/job.schema.json"\n[model]\ndim = 4096\n',
        REFUSES,
        "error",
        reason="the top level is closed: `$schema` is an unknown top-level key",
    ),
    # §11 failures after launch
    kf(
        "launch-vlm-needs-hf-data",
        VLM.replace('hf_dataset_name = "coco"\n', "") + "[vlm]\n",
        REFUSES,
        "error",
        "vlm-needs-hf-data",
        reason="VLM data comes only from a Hugging Face dataset",
    ),
    kf(
        "launch-hf-text-needs-tokenizer",
        '[data]\nhf_dataset_name = "wikitext"\n',
        REFUSES,
        "error",
        "hf-data-needs-tokenizer",
        reason="raw Hugging Face text needs data.tokenizer_path",
    ),
    kf(
        "launch-packing-needs-tokenizer",
        '[data]\npack_sequences = true\ndataset_path = "/data/tok"\n',
        REFUSES,
        "error",
        "packing-needs-tokenizer",
        reason="packing pre-tokenized data needs the tokenizer",
    ),
    kf(
        "launch-mot-image-heads",
        VLM + '[vlm]\narch = "mot"\nmot_image_n_heads = 16\n',
        REFUSES,
        "error",
        "mot-image-heads-match",
        reason="MoT image heads must equal the text heads at build",
    ),
    kf(
        "launch-registry-name",
        '[optimizer]\nname = "adam"\n',
        REFUSES,
        "error",
        "registry-name-known",
        reason="the optimizer registry is looked up when the trainer builds it",
    ),
    kf(
        "launch-freeze-module-unknown",
        VLM + '[vlm]\n[[vlm.freeze]]\nmodule = "vision_tower"\n',
        REFUSES,
        "error",
        "vlm-freeze-module-alias",
        reason="a freeze module must be a module_patterns alias or a pattern that matches parameters; "
        "'vision_tower' is neither (no parameter is named exactly that), so the build fails",
    ),
]

# -- SpecForge (reference specforge.md, schema.py of 2026-07-21) -----------------------------------------

OFFLINE = "model:\n  target_model_path: m\ndata:\n  hidden_states_path: /feat\n"
ONLINE = OFFLINE.replace("hidden_states_path: /feat", "train_data_path: /d.jsonl")
MANAGED = ONLINE + (
    "deployment:\n"
    "  mode: disaggregated\n"
    "  disaggregated:\n"
    "    control_dir: /ctl\n"
    "    backend: mooncake\n"
    "    managed_local:\n"
    '      trainer_cuda_visible_devices: ["0"]\n'
    "      capture_servers:\n"
    "        - port: 30000\n"
    '          cuda_visible_devices: ["1"]\n'
)
DISAGGREGATED = "{control_dir: /c, backend: shared_dir, store_root: /s}"
OFFLINE_JSON = '{"model": {"target_model_path": "m"}, "data": {"hidden_states_path": "/f"}}\n'

SF_CASES = [
    sf("base-offline", OFFLINE, STARTS, "none"),
    sf("base-managed-online", MANAGED, STARTS, "none"),
    sf(
        "base-role-default-follows-mode",
        OFFLINE + "deployment:\n  mode: disaggregated\n  disaggregated: " + DISAGGREGATED + "\n",
        STARTS,
        "none",
        reason="without training.role a disaggregated run gets role auto (§3.1)",
    ),
    # Q1: sections of the wrong type
    sf(
        "Q1-section-integer",
        OFFLINE + "deployment: 5\n",
        REFUSES,
        "error",
        "wrong-type",
        phrase="must be a table/mapping, got integer 5",
        reason="a bare TypeError in the role-default step",
    ),
    sf(
        "Q1-section-list",
        OFFLINE + "training: [1]\n",
        REFUSES,
        "error",
        "wrong-type",
        phrase="must be a table/mapping",
        reason="a bare TypeError",
    ),
    sf(
        "Q1-section-text",
        OFFLINE + 'deployment: "abc"\n',
        REFUSES,
        "error",
        "wrong-type",
        reason="an unrelated message about sequence elements",
    ),
    sf(
        "Q1-override-section-scalar",
        OFFLINE,
        REFUSES,
        "error",
        "wrong-type",
        paths=("training",),
        overrides=("training=5",),
        reason="the string '5' for a section",
    ),
    # Q2: null sections
    sf(
        "Q2-null-training",
        OFFLINE + "training: null\n",
        STARTS,
        "error",
        "wrong-type",
        reason="training: null becomes {} plus the role",
        message_bug="the type error does not say that SpecForge reads a null training as {}",
    ),
    sf(
        "Q2-null-tracking",
        OFFLINE + "tracking: null\n",
        REFUSES,
        "error",
        "wrong-type",
        reason="the other non-nullable sections refuse null",
    ),
    sf(
        "Q2-null-disaggregated",
        OFFLINE + "deployment:\n  disaggregated: null\n",
        STARTS,
        "none",
        reason="deployment.disaggregated is nullable",
    ),
    sf(
        "Q2-null-role",
        OFFLINE + "training:\n  role: null\n",
        REFUSES,
        "error",
        "wrong-type",
        reason="an explicit role: null stays null and fails the enum (§3.1)",
    ),
    # Q3: pydantic's lax coercion
    sf(
        "Q3-true-as-integer",
        OFFLINE + "training:\n  batch_size: true\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 1",
        reason="true becomes 1",
    ),
    sf(
        "Q3-false-as-integer",
        OFFLINE + "training:\n  batch_size: false\n",
        REFUSES,
        "error",
        "wrong-type",
        reason="false becomes 0, which fails batch_size > 0",
    ),
    sf(
        "Q3-integer-text",
        OFFLINE + 'training:\n  batch_size: "3"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 3",
        reason="numeric text is converted",
    ),
    sf(
        "Q3-padded-integer-text",
        OFFLINE + 'training:\n  batch_size: " 7"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 7",
        reason="surrounding spaces are stripped",
    ),
    sf(
        "Q3-integral-float",
        OFFLINE + "training:\n  batch_size: 2.0\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 2",
        reason="an integral float is accepted (trainspec decided to refuse 2.0)",
    ),
    sf(
        "Q3-fractional-float",
        OFFLINE + "training:\n  batch_size: 2.5\n",
        REFUSES,
        "error",
        "wrong-type",
        reason="a fraction is no integer",
    ),
    sf(
        "Q3-word-in-integer-field",
        OFFLINE + 'training:\n  batch_size: "three"\n',
        REFUSES,
        "error",
        "wrong-type",
        reason="no integer text",
    ),
    sf(
        "Q3-number-text",
        OFFLINE + 'training:\n  learning_rate: "1e-3"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 0.001",
        reason="number fields accept numeric text",
    ),
    sf(
        "Q3-integer-as-boolean",
        OFFLINE + "profiling:\n  enabled: 1\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        reason="0 and 1 are booleans",
    ),
    sf(
        "Q3-two-as-boolean",
        OFFLINE + "profiling:\n  enabled: 2\n",
        REFUSES,
        "error",
        "wrong-type",
        reason="only 0 and 1 convert",
    ),
    sf(
        "Q3-quoted-on",
        OFFLINE + 'profiling:\n  enabled: "on"\n',
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        reason='"on" is a boolean text for pydantic',
    ),
    sf(
        "Q3-number-in-string-field",
        OFFLINE + "run_id: 5\n",
        REFUSES,
        "error",
        "wrong-type",
        reason="string fields reject numbers upstream too",
    ),
    sf(
        "Q3-text-items-in-integer-list",
        OFFLINE.replace("m\n", 'm\n  aux_hidden_state_layer_ids: ["1"]\n'),
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as 1",
        paths=("model.aux_hidden_state_layer_ids[0]",),
        reason='["1"] becomes [1]',
    ),
    # Q4: NaN and infinity
    sf(
        "Q4-nan-unbounded",
        OFFLINE + "training:\n  kl_scale: .nan\n",
        SURPRISE,
        "error",
        "non-finite-number",
        reason="unbounded number fields take NaN",
    ),
    sf(
        "Q4-inf-lower-bound-only",
        OFFLINE + "training:\n  max_grad_norm: .inf\n",
        SURPRISE,
        "error",
        "non-finite-number",
        reason="+inf passes a lower bound",
    ),
    sf(
        "Q4-json-nan",
        OFFLINE_JSON.replace("}}\n", '}, "training": {"kl_scale": NaN}}\n'),
        SURPRISE,
        "error",
        "non-finite-number",
        name="run.json",
        reason="Python's JSON reader accepts NaN",
    ),
    sf(
        "Q4-nan-lower-bound",
        OFFLINE + "training:\n  learning_rate: .nan\n",
        REFUSES,
        "error",
        "non-finite-number",
        reason="NaN fails the bounded fields",
    ),
    sf(
        "Q4-nan-range-rule",
        OFFLINE + "training:\n  dpace_alpha: .nan\n",
        REFUSES,
        "error",
        "non-finite-number",
        reason="NaN fails the range checks (rules 3-5)",
    ),
    sf(
        "Q4-inf-upper-bound",
        OFFLINE + "training:\n  warmup_ratio: .inf\n",
        REFUSES,
        "error",
        "non-finite-number",
        reason="+inf fails warmup_ratio <= 1",
    ),
    sf(
        "Q4-override-inf",
        OFFLINE,
        REFUSES,
        "error",
        "non-finite-number",
        overrides=("training.learning_rate=.inf",),
        reason="upstream stores the text '.inf', which is no float for pydantic",
    ),
    # Q5: URL-like fields are free strings in the seed
    sf(
        "Q5-free-url-text",
        OFFLINE + 'tracking:\n  mlflow_tracking_uri: "not a url"\n',
        STARTS,
        "none",
        reason="no URL check in the seed",
    ),
    sf(
        "Q5-server-urls-unchecked",
        ONLINE + "deployment:\n  mode: disaggregated\n  disaggregated:\n    control_dir: /ctl\n"
        '    backend: mooncake\n    server_urls: ["HTTP://h:0", " x"]\n',
        STARTS,
        "none",
        reason="server_urls items are not validated",
    ),
    # Q6: unreachable checks, by their nearest observable configs
    sf(
        "Q6-backend-only-sglang",
        OFFLINE.replace("m\n", "m\n  target_backend: hf\n"),
        REFUSES,
        "error",
        "not-allowed-value",
        reason="rule 37 cannot fire: target_backend admits only sglang",
    ),
    sf(
        "Q6-sp-without-usp",
        MANAGED + "training:\n  sp_ulysses_size: 2\n",
        REFUSES,
        "error",
        "training-sp-needs-usp",
        reason="the sp half of rule 60 cannot fire: rule 8 refuses sp > 1 without usp first",
    ),
    sf(
        "Q6-trainer-tp-offline",
        OFFLINE + "training:\n  tp_size: 2\n",
        REFUSES,
        "error",
        "offline-no-trainer-tp",
        reason="rule 62 cannot fire for a valid config: rules 59/60 force tp_size = 1",
    ),
    # Q7: first failure only upstream
    sf(
        "Q7-every-problem-at-once",
        OFFLINE + "training:\n  batch_size: 0\n  role: auto\n  tp_size: 2\nruntime:\n  in_flight_low_watermark: 300\n",
        REFUSES,
        "error",
        "out-of-range",
        "role-needs-disaggregated",
        "offline-no-trainer-tp",
        "runtime-in-flight-watermark-order",
        reason="upstream shows one problem per object and no cross-section problem while a section fails",
    ),
    # Q8: errors at the field, not the object
    sf(
        "Q8-error-at-the-field",
        MANAGED.replace("        - port: 30000\n", "        - port: 30000\n          tp_size: 3\n"),
        REFUSES,
        "error",
        "capture-tp-matches-devices",
        paths=("deployment.disaggregated.managed_local.capture_servers[0].tp_size",),
        reason="upstream attaches it to capture_servers.0",
    ),
    # Q9: legacy keys
    sf(
        "Q9-legacy-key-migrated",
        OFFLINE + "training:\n  deployment_mode: local_colocated\n",
        STARTS,
        "warning",
        "legacy-key-migrated",
        reason="migrated silently (§5)",
    ),
    sf(
        "Q9-legacy-conflict",
        OFFLINE + "training:\n  deployment_mode: disaggregated\ndeployment:\n  mode: local_colocated\n",
        REFUSES,
        "error",
        "legacy-deployment-mode-conflict",
        reason="the two keys disagree (§5)",
    ),
    sf(
        "Q9-legacy-metadata-db-name",
        OFFLINE + "training:\n  metadata_db_path: /x/other.db\n",
        REFUSES,
        "error",
        "legacy-metadata-db-path-name",
        reason="the file must be named consumer.sqlite (§5)",
    ),
    sf(
        "Q9-override-legacy-path",
        OFFLINE,
        REFUSES,
        "error",
        "override-unknown-path",
        overrides=("training.deployment_mode=local_colocated",),
        reason="overrides are validated without migration: a legacy key is unknown",
    ),
    # Q10: override edges (§6.2)
    sf(
        "Q10-null-on-integer-field",
        OFFLINE,
        REFUSES,
        "error",
        overrides=("model.mask_token_id=null",),
        reason="null is never parsed: the text 'null' fails the integer type",
    ),
    sf(
        "Q10-list-on-null-list-field",
        OFFLINE,
        REFUSES,
        "error",
        overrides=("model.aux_hidden_state_layer_ids=[1,2,3]",),
        reason="the current value is null, so the text is not parsed and fails the list type",
    ),
    sf(
        "Q10-path-through-null-section",
        OFFLINE,
        REFUSES,
        "error",
        overrides=(
            "deployment.mode=disaggregated",
            "deployment.disaggregated.control_dir=/c",
            "deployment.disaggregated.backend=shared_dir",
            "deployment.disaggregated.store_root=/s",
            "training.role=auto",
        ),
        reason="deployment.disaggregated is null in the dump, so deployment.disaggregated.* is an unknown path",
    ),
    sf(
        "Q10-section-value-on-null-section",
        OFFLINE,
        REFUSES,
        "error",
        overrides=("deployment.mode=disaggregated", f"deployment.disaggregated={DISAGGREGATED}", "training.role=auto"),
        reason="the current value is null, so the text stays a string and fails the section type",
    ),
    sf(
        "Q10-switch-to-disaggregated-keeps-role-all",
        OFFLINE,
        REFUSES,
        "error",
        overrides=(f"deployment={{mode: disaggregated, disaggregated: {DISAGGREGATED}}}",),
        reason="the dump holds the resolved role all, which rule 39 refuses for a disaggregated run",
    ),
    sf(
        "Q10-switch-to-disaggregated-with-role",
        OFFLINE,
        STARTS,
        "none",
        overrides=(f"deployment={{mode: disaggregated, disaggregated: {DISAGGREGATED}}}", "training.role=auto"),
        reason="the documented way to switch: replace deployment and set the role",
    ),
    sf(
        "Q10-list-index",
        MANAGED,
        REFUSES,
        "error",
        overrides=("deployment.disaggregated.managed_local.capture_servers[0].port=30001",),
        reason="paths have no list indices: `capture_servers[0]` is an unknown key",
    ),
    sf(
        "Q10-mapping-replaced-whole",
        OFFLINE + "runtime:\n  in_flight_low_watermark: 50\n  in_flight_high_watermark: 100\n",
        REFUSES,
        "error",
        "runtime-in-flight-watermark-order",
        overrides=("runtime={in_flight_high_watermark: 150}",),
        reason="{...} replaces the mapping: the low watermark falls back to 192 > 150",
    ),
    sf(
        "Q10-mapping-on-list-field",
        OFFLINE,
        REFUSES,
        "error",
        "wrong-type",
        overrides=("model.aux_hidden_state_layer_ids={a: 1}",),
        reason="a mapping fails the list type",
    ),
    sf(
        "Q10-scalar-on-list-field",
        OFFLINE,
        REFUSES,
        "error",
        "wrong-type",
        overrides=("model.aux_hidden_state_layer_ids=5",),
        reason="a scalar fails the list type",
    ),
    sf(
        "Q10-list-items-typed",
        OFFLINE.replace("m\n", "m\n  aux_hidden_state_layer_ids: [3]\n"),
        STARTS,
        "none",
        overrides=("model.aux_hidden_state_layer_ids=[1, 2]",),
        reason="the current value is a list, so the text is parsed as YAML",
    ),
    sf(
        "Q10-yes-override",
        OFFLINE,
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        overrides=("profiling.enabled=yes",),
        reason="the raw text 'yes' is coerced to true",
    ),
    sf(
        "Q10-padded-integer",
        OFFLINE,
        STARTS,
        "none",
        overrides=("training.batch_size= 7",),
        reason="' 7' is coerced to 7",
    ),
    sf(
        "Q10-empty-value-on-integer",
        OFFLINE,
        REFUSES,
        "error",
        "override-invalid-value",
        overrides=("training.batch_size=",),
        reason="'' fails the integer type",
    ),
    sf(
        "Q10-empty-value-counts-as-set",
        OFFLINE.replace("m\n", "m\n  draft_checkpoint_path: /ckpt\n"),
        REFUSES,
        "error",
        "warm-start-excludes-resume",
        overrides=("training.resume_from=",),
        reason="an empty value stores '', which counts as set for rule 40",
    ),
    sf("Q10-no-equals", OFFLINE, REFUSES, "error", "override-syntax", overrides=("run_id",), reason="no `=`"),
    sf(
        "Q10-spaces-around-path",
        OFFLINE,
        REFUSES,
        "error",
        "override-syntax",
        overrides=(" run_id=x",),
        reason="' run_id' is an unknown path",
    ),
    sf(
        "Q10-string-kept-raw",
        OFFLINE,
        STARTS,
        "none",
        overrides=("run_id=007",),
        reason="string fields keep the text",
    ),
    sf(
        "Q10-split-at-first-equals",
        OFFLINE,
        STARTS,
        "none",
        overrides=("run_id=a=b",),
        reason="the item splits at the first =",
    ),
    sf(
        "Q10-intermediate-states",
        OFFLINE,
        STARTS,
        "none",
        overrides=("training.batch_size=0", "training.batch_size=2"),
        reason="items apply in order; only the result is validated",
    ),
    sf(
        "Q10-override-cannot-repair-file",
        OFFLINE + "training:\n  batch_size: zero\n",
        REFUSES,
        "error",
        "override-repairs-file",
        overrides=("training.batch_size=2",),
        reason="the file is validated before the overrides apply (revised §6.3)",
    ),
    sf(
        "Q10-override-breaks-valid-file",
        OFFLINE,
        REFUSES,
        "error",
        "out-of-range",
        overrides=("training.batch_size=0",),
        reason="the result is validated again",
    ),
    sf(
        "Q10-override-repairs-world-size",
        OFFLINE + "training:\n  attention_backend: usp\n  sp_ulysses_size: 2\ndeployment:\n  trainer:\n"
        "    nproc_per_node: 3\n",
        STARTS,
        "none",
        overrides=("deployment.trainer.nproc_per_node=4",),
        reason="world-size rules run at launch, on the merged config",
    ),
    # Q11: file formats (§7)
    sf(
        "Q11-upper-case-extension",
        OFFLINE,
        REFUSES,
        "error",
        name="RUN.YAML",
        reason="the extension is matched case-sensitively: RUN.YAML is read as JSON and fails",
    ),
    sf(
        "Q11-other-extension-is-json",
        OFFLINE,
        REFUSES,
        "error",
        "syntax-error",
        phrase="read as JSON",
        name="run.txt",
        reason="anything but .yaml/.yml is JSON",
    ),
    sf(
        "Q11-other-extension-json-text",
        OFFLINE_JSON,
        STARTS,
        "none",
        name="run.txt",
        reason="JSON text in a .txt file is read as JSON",
    ),
    sf(
        "Q11-yaml-1-1-exponent",
        OFFLINE + "training:\n  learning_rate: 1e-4\n",
        STARTS,
        "none",
        reason="YAML 1.1 reads the text '1e-4', which pydantic converts to the same float",
    ),
    sf(
        "Q11-yaml-1-1-octal",
        OFFLINE.replace("/feat\n", "/feat\n  max_length: 017\n"),
        SURPRISE,
        "warning",
        "yaml-dialect",
        phrase="reads the integer 15",
        reason="017 is 15 for YAML 1.1, 17 for YAML 1.2 tools",
    ),
    sf(
        "Q11-yaml-1-1-underscore-integer",
        OFFLINE + "run_id: 2024_01_01\n",
        REFUSES,
        "error",
        "yaml-dialect-refused",
        reason="YAML 1.1 reads the integer 20240101, which a string field refuses",
    ),
    sf(
        "Q11-yaml-1-1-off",
        OFFLINE + "output_dir: off\n",
        REFUSES,
        "error",
        "yaml-dialect-refused",
        reason="YAML 1.1 reads false, which a string field refuses",
    ),
    sf(
        "Q11-yaml-1-1-date",
        OFFLINE + "run_id: 2024-01-01\n",
        REFUSES,
        "error",
        "yaml-dialect-refused",
        reason="YAML 1.1 reads a date, which a string field refuses",
    ),
    sf(
        "Q11-yaml-1-1-sexagesimal",
        OFFLINE + "training:\n  num_epochs: 1:30\n",
        SURPRISE,
        "warning",
        "yaml-dialect",
        phrase="reads the integer 90",
        reason="YAML 1.1 reads 1:30 as the base-60 integer 90; YAML 1.2 tools read text",
    ),
    sf(
        "Q11-yaml-1-1-underscored-digits",
        OFFLINE + "training:\n  num_epochs: 1_000\n",
        STARTS,
        "warning",
        "yaml-dialect",
        phrase="reads the integer 1000",
        reason="YAML 1.1 reads the integer 1000; YAML 1.2 tools read text",
    ),
    sf(
        "Q11-yaml-1-1-underscored-float",
        OFFLINE + "training:\n  learning_rate: 1_000.5\n",
        STARTS,
        "warning",
        "yaml-dialect",
        phrase="reads the float 1000.5",
        reason="YAML 1.1 reads the float 1000.5; YAML 1.2 tools read text",
    ),
    sf(
        "Q11-yaml-1-1-0o-text",
        OFFLINE + "run_id: 0o17\n",
        STARTS,
        "warning",
        "yaml-dialect",
        phrase='reads the text "0o17"',
        reason="YAML 1.1 reads the text '0o17'; YAML 1.2 tools read the octal integer 15",
    ),
    sf(
        "Q11-yaml-1-1-underscored-zero",
        OFFLINE + "training:\n  num_epochs: 0_0\n",
        REFUSES,
        "error",
        "out-of-range",
        reason="YAML 1.1 reads the integer 0, which num_epochs > 0 refuses",
    ),
    sf(
        "Q11-yaml-1-1-yes",
        OFFLINE + "profiling:\n  enabled: yes\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        reason="yes is a YAML 1.1 boolean; YAML 1.2 reads text",
    ),
    sf(
        "Q11-yaml-1-1-yes-overridden",
        OFFLINE + "profiling:\n  enabled: yes\n",
        STARTS,
        "error",
        "wrong-type",
        phrase="reads it as true",
        overrides=("profiling.enabled=false",),
        reason="PyYAML reads yes as true, so the file loads and the override then sets false: the stricter type "
        "error about the file stands, no override repairs a file the loader refuses",
    ),
    sf(
        "Q11-duplicate-key-yaml",
        OFFLINE + "training:\n  seed: 1\n  seed: 2\n",
        SURPRISE,
        "error",
        "duplicate-key",
        reason="the last value silently wins",
        message_bug="duplicate-key does not say that SpecForge silently keeps the last value",
    ),
    sf(
        "Q11-duplicate-key-json",
        OFFLINE_JSON.replace('"/f"}', '"/f", "hidden_states_path": "/g"}'),
        SURPRISE,
        "error",
        "duplicate-key",
        name="run.json",
        reason="the last value silently wins",
        message_bug="duplicate-key does not say that SpecForge silently keeps the last value",
    ),
    sf(
        "Q11-anchors-and-merge-keys",
        OFFLINE + "runtime: &rt\n  producer_lease: 4\ntracking:\n  <<: {report_to: wandb}\n  wandb_project: p\n",
        STARTS,
        "none",
        reason="anchors, aliases and merge keys work",
    ),
    sf("Q11-empty-file", "# nothing\n", REFUSES, "error", "not-a-mapping", reason="null is not a mapping"),
    sf("Q11-top-level-list", "- a\n- b\n", REFUSES, "error", "not-a-mapping", reason="a list is not a mapping"),
    sf(
        "Q11-schema-key-json",
        OFFLINE_JSON.replace("{", '{"$schema": "https://example.com/run.schema.json", ', 1),
        REFUSES,
        "error",
        name="run.json",
        reason="the root is closed, so `$schema` is an unknown key",
    ),
    sf(
        "Q11-schema-key-yaml",
        "$schema: https://example.com/run.schema.json\n" + OFFLINE,
        REFUSES,
        "error",
        reason="the root is closed, so `$schema` is an unknown key",
    ),
    # Q12: empty strings, rule by rule
    sf(
        "Q12-empty-string-is-set-rule-40",
        OFFLINE.replace("m\n", 'm\n  draft_checkpoint_path: ""\n') + 'training:\n  resume_from: ""\n',
        REFUSES,
        "error",
        "warm-start-excludes-resume",
        reason="'' counts as set for rule 40",
    ),
    sf(
        "Q12-empty-string-is-absent-rule-14",
        OFFLINE + 'deployment:\n  trainer:\n    nnodes: 2\n    master_addr: ""\n',
        REFUSES,
        "error",
        "trainer-master-addr-multinode",
        reason="'' counts as absent for rule 14",
    ),
    sf(
        "Q12-empty-string-is-set-rule-27",
        MANAGED.replace("    backend: mooncake\n", '    backend: mooncake\n    consumer_state_dir: ""\n'),
        REFUSES,
        "error",
        "disaggregated-consumer-state-dir-shape",
        reason="'' switches rule 27 on",
    ),
    sf(
        "Q12-empty-string-is-absent-rule-2",
        OFFLINE.replace("data:\n", 'data:\n  train_data_path: ""\n'),
        STARTS,
        "none",
        reason="'' counts as absent for rule 2: one source",
    ),
    # Q13: device tokens with inner whitespace
    sf(
        "Q13-inner-space-token",
        MANAGED.replace('["1"]', '["GPU 1"]'),
        STARTS,
        "none",
        reason="inner whitespace is accepted",
    ),
    sf(
        "Q13-leading-space-token",
        MANAGED.replace('["1"]', '[" 1"]'),
        REFUSES,
        "error",
        "capture-device-token-shape",
        reason="surrounding whitespace is refused",
    ),
    # §4.6 world size
    sf(
        "ws-topology",
        OFFLINE,
        REFUSES,
        "error",
        "world-size-matches-trainer-topology",
        world_size=3,
        reason="the launcher stops when WORLD_SIZE differs from nnodes × nproc_per_node",
    ),
    sf(
        "ws-divisible-by-sp",
        OFFLINE + "training:\n  attention_backend: usp\n  sp_ulysses_size: 2\ndeployment:\n  trainer:\n"
        "    nproc_per_node: 3\n",
        REFUSES,
        "error",
        "world-size-divisible-by-sp",
        reason="rule 63 at the planned world size 3",
    ),
    sf("ws-positive", OFFLINE, REFUSES, "usage", world_size=0, reason="rule 61: world size below 1"),
]

CASES = {KF: KF_CASES, SF: SF_CASES}


# -- running a case ----------------------------------------------------------------------------------------


BROKEN = frozenset({"unknown-family", "invalid-family-schema", "internal-error", "hook-failed"})
"""Ids that say trainspec itself failed (as does a rule that raised, "… please report it"): an error, but
never an answer to a case, since it says nothing about the config."""


def run_case(case: Case, family: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[Found]:
    """Every diagnostic trainspec reports for the case (notes included)."""
    file = tmp_path / case.name
    file.write_text(case.text, encoding="utf-8")
    if not case.cli:
        found = [
            Found(d.severity.value, d.rule, d.config_path, d.message)
            for d in trainspec.check(file, family=family, overrides=list(case.overrides), world_size=case.world_size)
        ]
    else:
        argv = ["check", str(file), "--family", family, "--format", "json", *case.overrides]
        if case.world_size is not None:
            argv += ["--world-size", str(case.world_size)]
        code = main(argv)
        found = [
            Found(d["severity"], d["rule"], d["config_path"], d["message"])
            for d in json.loads(capsys.readouterr().out)["diagnostics"]
        ]
        assert code == (1 if any(f.severity == "error" for f in found) else 0)
    broken = [f"{f.rule}: {f.message}" for f in found if f.rule in BROKEN or "please report it" in f.message]
    if broken:
        pytest.fail(f"trainspec could not check the case: {broken}", pytrace=False)
    return found


def params(cases: list[Case], *, message: bool = False) -> list:
    marks = []
    for case in cases:
        why = case.message_bug if message else case.bug
        mark = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        marks.append(pytest.param(case, id=case.id, marks=mark))
    return marks


def stricter(case: Case) -> bool:
    """trainspec refuses what the loader runs: the message must say what the loader does."""
    return case.loader != REFUSES and case.severity == "error"


def check_verdict(case: Case, family: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if case.severity == "usage":
        with pytest.raises(ValueError, match="world_size must be a whole number of at least 1"):
            run_case(case, family, tmp_path, capsys)
        return
    found = run_case(case, family, tmp_path, capsys)
    errors = [f for f in found if f.severity == "error"]
    shown = [f"{f.severity}[{f.rule}] {f.path}: {f.message}" for f in found]
    if case.loader == REFUSES:
        assert errors, f"trainspec accepts what {family}'s loader refuses ({case.reason}): {shown}"
    worst = "error" if errors else "warning" if any(f.severity == "warning" for f in found) else "none"
    assert worst == case.severity, shown
    level = "note" if case.severity == "none" else case.severity
    at_level = [f for f in found if f.severity == level]
    for rule in case.rules:
        assert rule in {f.rule for f in at_level}, shown
    if not case.rules:
        return
    mine = [f for f in at_level if f.rule == case.rules[0]]
    if case.phrase:
        assert case.phrase in mine[0].message, mine[0].message
    for path in case.paths:
        assert path in {f.path for f in mine}, shown
    if case.once:
        assert len(mine) == 1, shown


def check_message(case: Case, family: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = run_case(case, family, tmp_path, capsys)
    errors = [f for f in found if f.severity == "error" and (not case.rules or f.rule in case.rules)]
    says = case.loader_says or family.partition("@")[0]
    assert errors
    for error in errors:
        assert says.lower() in error.message.lower(), error.message
        assert error.message.count("'s loader") <= 1, f"the loader's reading is stated twice: {error.message}"


# -- the tests ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", params(KF_CASES))
def test_kempnerforge_verdict(case, tmp_path, capsys):
    check_verdict(case, KF, tmp_path, capsys)


@pytest.mark.parametrize("case", params(SF_CASES))
def test_specforge_verdict(case, tmp_path, capsys):
    check_verdict(case, SF, tmp_path, capsys)


@pytest.mark.parametrize("case", params([c for c in KF_CASES if stricter(c)], message=True))
def test_kempnerforge_stricter_error_says_what_the_loader_does(case, tmp_path, capsys):
    check_message(case, KF, tmp_path, capsys)


@pytest.mark.parametrize("case", params([c for c in SF_CASES if stricter(c)], message=True))
def test_specforge_stricter_error_says_what_the_loader_does(case, tmp_path, capsys):
    check_message(case, SF, tmp_path, capsys)


@pytest.mark.parametrize(("family", "prefix", "rows"), [(KF, "kf", 19), (SF, "sf", 13)])
def test_every_row_has_a_case(family, prefix, rows):
    ids = [c.id for c in CASES[family]]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    missing = [n for n in range(1, rows + 1) if not any(i.startswith(f"{prefix}-Q{n}-") for i in ids)]
    assert not missing, f"rows without a case: {missing}"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for cases in CASES.values() for c in cases])
def test_table_is_consistent(case):
    assert case.loader in (REFUSES, STARTS, SURPRISE) and case.severity in SEVERITIES
    assert case.reason or case.id.split("-")[1] == "base", "say why the loader decides so"
    if case.loader == REFUSES:
        assert case.severity in ("error", "usage"), "the loader refuses it: trainspec must too"
    if case.loader == SURPRISE:
        assert case.severity in ("warning", "error"), "a surprise needs at least a warning"
    if case.bug:
        assert case.loader == REFUSES, "a fidelity bug is trainspec accepting what the loader refuses"
    if case.message_bug:
        assert stricter(case), "only a stricter error must say what the loader does"
    if case.cli:
        assert case.id.startswith("kf-"), "KempnerForge's own CLI form"


def differences(cases: list[Case]) -> list[str]:
    """Cases where trainspec's verdict is not the loader's own: stricter, an added warning, or a known bug."""
    return [
        c.id
        for c in cases
        if c.bug or c.message_bug or stricter(c) or (c.loader == STARTS and c.severity in ("warning", "usage"))
    ]


def test_every_difference_is_documented():
    text = DOC.read_text(encoding="utf-8")
    assert "tests/test_fidelity.py" in text
    assert "never more lenient" in text
    named = set(re.findall(r"`((?:kf|sf)-[A-Za-z0-9.-]+)`", text))
    every = {c.id for cases in CASES.values() for c in cases}
    assert named <= every, f"the doc names cases that do not exist: {sorted(named - every)}"
    missing = [i for cases in CASES.values() for i in differences(cases) if i not in named]
    assert not missing, f"differences not listed in {DOC.name}: {missing}"
