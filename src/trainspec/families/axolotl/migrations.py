"""Axolotl's retired and renamed keys, as its loader treats them before it validates anything else.

Retired keys (`DeprecatedParameters`' validators, `check_deprecated_unsloth_fields`): set to a
value the loader refuses, they are errors that say what replaced them; the ones it only logs
about are warnings. Renamed keys (`check_neftune`, `check_multipack_buffer_size`,
`default_dataset_num_proc`, `check_eval_strategy`, `check_context_parallel_size`): the loader
moves or copies the value to the new name unless the new one is set, and trainspec does the
same before checking, so rules read the value where the loader puts it; a warning says where it
went. Where both are set, the loader refuses two of them and ignores the old key in the others.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from trainspec.spec.diagnostics import Diagnostic, Severity
from trainspec.spec.document import Document
from trainspec.spec.family import Notice
from trainspec.spec.wording import show

REMOVED = "removed-key"
DEPRECATED = "deprecated-key"
RENAMED = "renamed-key"
RENAMED_CONFLICT = "renamed-key-conflict"
RENAMED_IGNORED = "renamed-key-ignored"


def _truthy(value: Any) -> bool:
    return bool(value)


def _given(value: Any) -> bool:
    return value is not None


@dataclass(frozen=True)
class Retired:
    """A key the loader refuses (`severity` error) or warns about when `applies` to its value."""

    key: str
    applies: Callable[[Any], bool]
    instead: str
    severity: Severity = Severity.ERROR


_TRL = "it was removed with TRL 0.29; remove the key"
_UNSLOTH = "use `lora_mlp_kernel`, `lora_qkv_kernel` and `lora_o_kernel` instead"
RETIRED = (
    Retired("max_packed_sequence_len", _truthy, "pack samples with `sample_packing: true` up to `sequence_len`"),
    Retired("rope_scaling", _truthy, "write it under `model_config` (`model_config: {rope_scaling: ...}`)"),
    Retired("dpo_use_logits_to_keep", _given, _TRL),
    Retired("dpo_generate_during_eval", _given, _TRL),
    Retired("dpo_norm_loss", _given, _TRL),
    Retired("rpo_alpha", _given, "TRL 0.29 needs several DPO loss types for it, which Axolotl does not support yet"),
    Retired("s2_attention", _truthy, "shifted sparse attention was removed; remove the key"),
    Retired("flash_attn_rms_norm", _truthy, "remove the key"),
    *(
        Retired(f"unsloth_{name}", _truthy, _UNSLOTH)
        for name in ("cross_entropy_loss", "lora_mlp", "lora_qkv", "lora_o", "rms_norm", "rope")
    ),
    Retired(
        "dpo_beta",
        _given,
        "write `rl_beta` (Axolotl copies `dpo_beta` there when `rl_beta` is unset, and ignores it otherwise)",
        Severity.WARNING,
    ),
    Retired(
        "eval_table_size",
        _given,
        "use `generate_samples: true` with `num_generation_samples`",
        Severity.WARNING,
    ),
    Retired("eval_max_new_tokens", _given, "use `generation_max_new_tokens`", Severity.WARNING),
)


@dataclass(frozen=True)
class Renamed:
    """An old key whose value the loader moves (or, with `keeps_old`, copies) to `new` when `applies` to it
    and `new` is unset (falsy); with both set it refuses the config (`conflict`) or ignores the old key."""

    old: str
    new: str
    applies: Callable[[Any], bool]
    conflict: bool = False
    keeps_old: bool = False


RENAMES = (
    Renamed("noisy_embedding_alpha", "neftune_noise_alpha", _truthy, conflict=True),
    Renamed("pretrain_multipack_buffer_size", "streaming_multipack_buffer_size", _truthy, conflict=True),
    Renamed("dataset_processes", "dataset_num_proc", _given),
    Renamed("evaluation_strategy", "eval_strategy", _given, keeps_old=True),
    Renamed("sequence_parallel_degree", "context_parallel_size", _truthy, keeps_old=True),
)
LEGACY_KEYS = {r.old: r.new for r in RENAMES}
"""Old key -> new key, for editors (offered as deprecated, naming the new place)."""


def migrate_keys(doc: Document) -> list[Diagnostic]:
    """The family's Migration: report retired keys, and move renamed ones where the loader moves them."""
    data = doc.data
    if not isinstance(data, MutableMapping):
        return []
    out = [_at(doc, (r.key,), r.severity, *_retired(r, data[r.key])) for r in RETIRED if _set(data, r.key, r.applies)]
    for r in RENAMES:
        if not _set(data, r.old, r.applies):
            continue
        value, new = data[r.old], data.get(r.new)
        if not (new if r.applies is _truthy else new is not None):
            out.append(_at(doc, (r.old,), Severity.WARNING, RENAMED, _moved(r, value)))
            data[r.new] = value
            span = doc.positions.get((r.old,))
            if not r.keeps_old:
                del data[r.old]
                doc.move((r.old,), (r.new,))
            else:
                if span is not None:
                    doc.positions.setdefault((r.new,), span)
                # the copy is read as the loader reads the original (YAML 1.1), so its errors say so too
                older = {(r.new, *p[1:]): v for p, v in doc.yaml_1_1.items() if p[:1] == (r.old,)}
                doc.yaml_1_1 = {**doc.yaml_1_1, **older}
        elif r.conflict:
            message = (
                f"`{r.old}` is the old name of `{r.new}`, and both are set ({show(value)} and {show(new)}); "
                f"Axolotl refuses the config: remove `{r.old}`"
            )
            out.append(_at(doc, (r.old,), Severity.ERROR, RENAMED_CONFLICT, message))
        else:
            message = (
                f"`{r.old}` is the old name of `{r.new}`, which is set too ({show(new)}); Axolotl ignores "
                f"`{r.old}` = {show(value)}: remove it"
            )
            out.append(_at(doc, (r.old,), Severity.WARNING, RENAMED_IGNORED, message))
    return out


def _set(data: MutableMapping[str, Any], key: str, applies: Callable[[Any], bool]) -> bool:
    return key in data and applies(data[key])


def _retired(r: Retired, value: Any) -> tuple[str, str]:
    if r.severity is Severity.ERROR:
        return REMOVED, f"`{r.key}` = {show(value)} is no longer supported, and Axolotl refuses the config: {r.instead}"
    return DEPRECATED, f"`{r.key}` = {show(value)} is deprecated (Axolotl warns when it loads the config): {r.instead}"


def _moved(r: Renamed, value: Any) -> str:
    how = "copies" if r.keeps_old else "moves"
    return f"`{r.old}` is the old name of `{r.new}`: Axolotl {how} {show(value)} there; write `{r.new}` instead"


def _at(doc: Document, path: tuple[str, ...], severity: Severity, rule: str, message: str) -> Diagnostic:
    pos = doc.where(path)
    return Diagnostic(doc.file, pos.line if pos else None, pos.column if pos else None, path, rule, severity, message)


_RETIRED_ERRORS = tuple(r.key for r in RETIRED if r.severity is Severity.ERROR)
_RETIRED_WARNINGS = tuple(r.key for r in RETIRED if r.severity is Severity.WARNING)
NOTICES = {
    REMOVED: Notice(
        Severity.ERROR,
        _RETIRED_ERRORS,
        "A key Axolotl no longer supports is set.\n\n"
        "Axolotl 0.18.0 refuses a config that sets it (most need a true or non-empty value; the removed\n"
        "DPO settings any value). The message says what replaced it, or to remove it.",
    ),
    DEPRECATED: Notice(
        Severity.WARNING,
        _RETIRED_WARNINGS,
        "A deprecated key is set.\n\nAxolotl loads the config and logs a warning; the message names the\n"
        "setting that replaced it.",
    ),
    RENAMED: Notice(
        Severity.WARNING,
        tuple(LEGACY_KEYS),
        "A key is written under its old name.\n\n"
        "Axolotl moves (or copies) the value to the new name before validating, and trainspec checks\n"
        "it there too. Write the new name.",
    ),
    RENAMED_CONFLICT: Notice(
        Severity.ERROR,
        tuple(r.old for r in RENAMES if r.conflict),
        "A key is written under its old and its new name.\n\nAxolotl refuses the config; remove the old name.",
    ),
    RENAMED_IGNORED: Notice(
        Severity.WARNING,
        tuple(r.old for r in RENAMES if not r.conflict),
        "A key is written under its old and its new name.\n\nAxolotl uses the new one and ignores the old one;\n"
        "remove the old name.",
    ),
}
"""The ids this migration reports, for the rule catalogue (`trainspec rules`, `explain`)."""
