"""kempnerforge@5666d0d: what it changes on 089fbbd, by id (schema/kempnerforge/versions.json names this).

Its schema changes are `schema/kempnerforge/5666d0d.patch.json`; here are its rules
(`rules_5666d0d`), examples, schema-id docs and hooks, folded onto 089fbbd's by
`trainspec.spec.versions.fold`, which refuses an id 089fbbd lacks or already has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainspec.spec.versions import Changes, Delta, by_id

from . import rules as base
from .defaults import resolve
from .rules_5666d0d import (
    dyn_window_range,
    max_seq_len_budget,
    moma_ac_full,
    moma_compile,
    moma_expert_ffn_multiplier,
    moma_experts_missing_modality,
    moma_experts_unknown_modality,
    moma_no_ep,
    moma_no_moe,
    pool_divisible_grid,
    pool_square_grid,
    train_seq_len_budget,
    video_frames_order,
    vlm_needs_hf_data,
)
from .rules_build import pool_heads_divide_width

if TYPE_CHECKING:
    from trainspec.spec.examples import Example

POOLING_DEFAULTS = {"pool_window": 2, "pool_heads": 16}


def resolve_5666d0d(config: dict[str, Any]) -> None:
    """As `resolve`; the default adapter of a VLM run also has 5666d0d's pooling fields."""
    defaulted = isinstance(config.get("vlm"), dict) and "adapter" not in config
    resolve(config)
    if defaulted:
        config["adapter"].update(POOLING_DEFAULTS)


SCHEMA_RULE_DOCS_CHANGED = {
    "adapter-type-registered": "`adapter.type` must name a registered adapter (mlp_2layer, linear, avgpool, "
    "attentional_pool).\n\nKempnerForge looks the name up in its adapter registry when it loads the config.",
    "vlm-arch-fields": "Which keys `[vlm]` takes depends on `vlm.arch`: a key of another architecture is "
    "unknown.\n\nThe common keys are arch, max_text_len, freeze, freeze_schedule and module_patterns; "
    "cross_attention adds cross_attention_*, mot adds mot_*, moma adds moma_*.",
    "vlm-arch-registered": "`vlm.arch` must name a registered VLM architecture (joint_decoder, cross_attention, mot, "
    "moma).",
}
"""089fbbd's docs of schema ids, with 5666d0d's names."""

SCHEMA_RULE_DOCS_ADDED = {
    "checkpoint-dyn-window-strategy-registered": "`checkpoint.dyn_ckpt_window.strategy` must name a registered "
    "window strategy (power2).\n\nKempnerForge looks the name up when it loads the config, whenever the window "
    "is set.",
    "video-dataset-type-registered": "`video.dataset_type` must name a registered video dataset style (webvid).\n\n"
    "KempnerForge looks the name up when it loads a config with a `[video]` section.",
    "video-sampling-policy-registered": "`video.sampling_policy` must name a registered frame sampling policy "
    "(uniform).\n\nKempnerForge looks the name up when it loads a config with a `[video]` section.",
    "video-needs-vlm": "A `[video]` section needs a `[vlm]` section.\n\nVideo runs use the VLM model path, which in "
    "turn needs `[vision_encoder]`.",
    "moma-modalities-shape": "`vlm.moma_modalities` lists at least two modalities, among them text and image, "
    "each once.\n\nKempnerForge checks the length, then text, then image, then duplicates.",
}
"""The docs of the schema ids 5666d0d adds."""


def examples() -> Delta[Example]:
    """The examples of its new and changed ids, imported when the version's examples are first read."""
    from .examples import CHANGED_5666D0D, EXAMPLES_5666D0D
    from .examples_build import EXAMPLES_5666D0D as BUILD_EXAMPLES_5666D0D

    return Delta(replace=CHANGED_5666D0D, add={**EXAMPLES_5666D0D, **BUILD_EXAMPLES_5666D0D})


CHANGES = Changes(
    rules=Delta(
        insert={  # new rules, each placed before a base rule in KempnerForge's order
            base.hf_encoder_override.id: by_id(
                dyn_window_range, moma_experts_missing_modality, moma_experts_unknown_modality
            ),
            base.max_seq_len_budget.id: by_id(video_frames_order, pool_square_grid, pool_divisible_grid),
            base.vlm_needs_hf_data.id: by_id(moma_no_moe, moma_no_ep, moma_compile, moma_ac_full),
        },
        replace=by_id(max_seq_len_budget, train_seq_len_budget, vlm_needs_hf_data),
        add=by_id(moma_expert_ffn_multiplier, pool_heads_divide_width),
    ),
    examples=examples,
    schema_rule_docs=Delta(replace=SCHEMA_RULE_DOCS_CHANGED, add=SCHEMA_RULE_DOCS_ADDED),
    hooks={"model": "trainspec.generated.kempnerforge_5666d0d:JobConfig", "resolve": resolve_5666d0d},
)
