"""The validators of Axolotl 0.18.0 and 0.19.0 that no rule mirrors, each with why: reviewed, and kept honest
by a test. 0.19.0's table is 0.18.0's with the entries `CHANGED_0_19_0` replaces, adds or drops (`reviewed`).

`tests/test_axolotl_inventory.py` enumerates every pydantic validator of each release (its config classes
and its plugins' settings models) with a hash of its source, and fails unless each is mirrored by a rule
or notice of the family at that release ("Mirrors `Class.method`.") or listed here at its current hash;
an entry whose validator is gone, changed or now mirrored fails too. A reason starts with one of
`REASONS` and says what the validator does, so a reader can tell why trainspec need not repeat it.
"""

from __future__ import annotations

REASONS = (
    "only fills a default",
    "probes the launching machine",
    "normalises a value the schema already types",
    "deprecated key, handled by the migration",
    "does nothing",
    "never reached",
)
"""How a reason starts: what makes the validator need no rule of its own."""

UNMIRRORED: dict[str, tuple[str, str]] = {
    "AxolotlConfigWCapabilities.check_adopt_torch_version": (
        "9f69ec095876",
        (
            "probes the launching machine (refuses an ADOPT optimizer under torch < 2.5.1; every torch Axolotl "
            "0.18.0 installs with, 2.11.0 to 2.12.1, passes)"
        ),
    ),
    "AxolotlConfigWCapabilities.check_auto_enable_lora_kernels": (
        "d922df634c66",
        (
            "only fills a default (turns on the four `lora_*_kernel` for a LoRA or QLoRA adapter that sets none "
            "of them, outside RL, 8-bit LoRA, remote code and FSDP1 on several GPUs, and logs at warning level "
            "that it did; nothing in the config is wrong, and every such config would warn)"
        ),
    ),
    "AxolotlConfigWCapabilities.check_flex_torch_version": (
        "acbe1833bd63",
        (
            "probes the launching machine (refuses flex_attention under torch < 2.6.0; every torch Axolotl 0.18.0"
            " installs with, 2.11.0 to 2.12.1, passes)"
        ),
    ),
    "AxolotlConfigWCapabilities.check_fsdp_torch_version": (
        "b71b424f9b6f",
        (
            "probes the launching machine (refuses FSDP2 under torch < 2.7.0; every torch Axolotl 0.18.0 installs"
            " with, 2.11.0 to 2.12.1, passes)"
        ),
    ),
    "AxolotlConfigWCapabilities.check_min_torch_version": (
        "6b5bd95722d4",
        (
            "probes the launching machine (warns under torch < 2.6.0; every torch Axolotl 0.18.0 installs with, "
            "2.11.0 to 2.12.1, passes)"
        ),
    ),
    "AxolotlConfigWCapabilities.check_tf32": (
        "b874defbe5f6",
        ("only fills a default (`tf32: auto` becomes whether the GPU has TF32)"),
    ),
    "AxolotlConfigWCapabilities.check_torch_compile_auto": (
        "67bbb7d10176",
        (
            "only fills a default (`torch_compile: auto` becomes true from torch 2.5.1 on; it warns and drops "
            "`torch_compile_options` only under an older torch, and every torch Axolotl 0.18.0 installs with, "
            "2.11.0 to 2.12.1, passes)"
        ),
    ),
    "AxolotlConfigWCapabilities.default_dataloader_opts": (
        "3628d6ddf3f6",
        (
            "only fills a default (`dataloader_num_workers` from the GPU count, `dataloader_pin_memory`, "
            "`dataloader_prefetch_factor`, when none of the three is set)"
        ),
    ),
    "AxolotlConfigWCapabilities.default_dataset_num_proc": (
        "c84ce42be358",
        (
            "deprecated key, handled by the migration `renamed-key` (`dataset_processes`, with `renamed-key-"
            "ignored` when both are set); otherwise it only fills a default (`dataset_num_proc` from the CPU "
            "count)"
        ),
    ),
    "ComplexValidationMixin.check_rl_beta": (
        "d9e6b84e8d17",
        (
            "only fills a default (`rl_beta` from `dpo_beta` when unset; the deprecated key warns through the "
            "migration `deprecated-key`)"
        ),
    ),
    "ComplexValidationMixin.check_tensor_parallel_size": (
        "d14c1a61babf",
        ("only fills a default (`tensor_parallel_size` 1 when unset or 0)"),
    ),
    "ComplexValidationMixin.validate_ring_attn_func": (
        "66fae15dffa0",
        (
            "only fills a default (`ring_attn_func` from `sample_packing` when `context_parallel_size` > 1; the "
            "schema types the value)"
        ),
    ),
    "DatasetValidationMixin.check_deprecated_unsloth_fields": (
        "7e77c2e1d250",
        ("deprecated key, handled by the migration `removed-key` (the `unsloth_*` keys, refused when true)"),
    ),
    "DatasetValidationMixin.check_mm_prepare": (
        "8b465fffbf6a",
        ("only fills a default (`remove_unused_columns: false` with `skip_prepare_dataset`)"),
    ),
    "DatasetValidationMixin.set_default_seed": (
        "3dc926cd3141",
        ("only fills a default (`seed` 42)"),
    ),
    "DeprecatedParameters.validate_dpo_beta": (
        "c45042f5e5bb",
        ("deprecated key, handled by the migration `deprecated-key` (`dpo_beta`, any value, a warning)"),
    ),
    "DeprecatedParameters.validate_dpo_generate_during_eval": (
        "a3a727ca2f45",
        ("deprecated key, handled by the migration `removed-key` (`dpo_generate_during_eval`, any value, refused)"),
    ),
    "DeprecatedParameters.validate_dpo_norm_loss": (
        "603d435e7855",
        ("deprecated key, handled by the migration `removed-key` (`dpo_norm_loss`, any value, refused)"),
    ),
    "DeprecatedParameters.validate_dpo_use_logits_to_keep": (
        "edb48b46b705",
        ("deprecated key, handled by the migration `removed-key` (`dpo_use_logits_to_keep`, any value, refused)"),
    ),
    "DeprecatedParameters.validate_eval_max_new_tokens": (
        "29657ac74afa",
        ("deprecated key, handled by the migration `deprecated-key` (`eval_max_new_tokens`, any value, a warning)"),
    ),
    "DeprecatedParameters.validate_eval_table_size": (
        "61415bf64c3d",
        ("deprecated key, handled by the migration `deprecated-key` (`eval_table_size`, any value, a warning)"),
    ),
    "DeprecatedParameters.validate_evaluation_strategy": (
        "e4fa4561c517",
        (
            "deprecated key, handled by the migration `renamed-key` (`evaluation_strategy`, any value, a warning;"
            " `renamed-key-ignored` beside `eval_strategy`)"
        ),
    ),
    "DeprecatedParameters.validate_flash_attn_rms_norm": (
        "5bfdf7fa6132",
        ("deprecated key, handled by the migration `removed-key` (`flash_attn_rms_norm`, refused when true)"),
    ),
    "DeprecatedParameters.validate_max_packed_sequence_len": (
        "cb37d5544aa5",
        (
            "deprecated key, handled by the migration `removed-key` (`max_packed_sequence_len`, refused when set "
            "to a non-zero value)"
        ),
    ),
    "DeprecatedParameters.validate_noisy_embedding_alpha": (
        "0e2c9fab4d38",
        ("deprecated key, handled by the migration `renamed-key` (`noisy_embedding_alpha`, a warning when non-zero)"),
    ),
    "DeprecatedParameters.validate_rope_scaling": (
        "4bdbbaf7f2cc",
        ("deprecated key, handled by the migration `removed-key` (`rope_scaling`, refused when non-empty)"),
    ),
    "DeprecatedParameters.validate_rpo_alpha": (
        "af123c1376a4",
        ("deprecated key, handled by the migration `removed-key` (`rpo_alpha`, any value, refused)"),
    ),
    "DeprecatedParameters.validate_s2_attention": (
        "a89b3b3f74eb",
        ("deprecated key, handled by the migration `removed-key` (`s2_attention`, refused when true)"),
    ),
    "EBFTValidationMixin.check_ebft_activation_offloading": (
        "890670269f47",
        (
            "never reached in 0.18.0 (every config it refuses, `rl: ebft` with a strided `ebft` section, fails "
            "first in `EBFTValidationMixin.check_ebft_gradient_checkpointing_reentrant`: the rule `ebft-"
            "unloadable`)"
        ),
    ),
    "EBFTValidationMixin.check_ebft_strided_dataset_split": (
        "da4f57858694",
        (
            "does nothing on the loader's path (`validate_config` turns each entry of `datasets` into its dataset"
            " model first, which drops `train_on_split`, so the check never sees a mapping)"
        ),
    ),
    "HyperparametersConfig.convert_learning_rate": (
        "62fdcc46796b",
        (
            "normalises a value the schema already types (`learning_rate` written as text becomes a number; the "
            "schema asks for the number and its type error says how the loader reads the text)"
        ),
    ),
    "LoRAValidationMixin.check_lora_kernels_dora": (
        "53ce5ee81afb",
        ("does nothing in 0.18.0 (returns the config unchanged: DoRA works with the LoRA kernels)"),
    ),
    "LoraConfig.convert_loraplus_lr_embedding": (
        "4d91b73c634b",
        (
            "normalises a value the schema already types (`loraplus_lr_embedding` written as text becomes a "
            "number; the schema asks for the number and its type error says how the loader reads the text)"
        ),
    ),
    "LoraConfig.validate_lora_dropout": (
        "0979bce9bc17",
        ("only fills a default (`lora_dropout` 0.0 with an adapter)"),
    ),
    "MultiModalConfig.convert_image_resize_algorithm": (
        "ad6bca2e36f8",
        (
            "normalises a value the schema already types (`image_resize_algorithm`: bilinear, bicubic or lanczos "
            "in any letter case, other names refused as the schema refuses them; the migration `loader-alias` "
            "lowercases the name, with a warning)"
        ),
    ),
    "OptimizationValidationMixin.check_fsdp_version_in_fsdp_config": (
        "75bb58533fe9",
        (
            "only fills a default (copies the FSDP version between `fsdp_version` and `fsdp_config`, 1 when "
            "neither says; the rules read the version as it settles it)"
        ),
    ),
    "PTQConfig.validate_dtype": (
        "fc928db4dd29",
        (
            "normalises a value the schema already types (`quantization.weight_dtype`, "
            "`quantization.activation_dtype`: the aliases fp8 and float8 become float8_e4m3fn, which the "
            "migration `loader-alias` writes with a warning; other values are refused as the schema refuses them)"
        ),
    ),
    "PretrainingValidationMixin.check_pretraining_split_batches_accelerate": (
        "7112c3d50fd3",
        (
            "only fills a default (`accelerator_config.split_batches` and `dispatch_batches` false with "
            "`pretraining_dataset`)"
        ),
    ),
    "QATConfig.validate_dtype": (
        "fc928db4dd29",
        (
            "normalises a value the schema already types (`qat.weight_dtype`, `qat.activation_dtype`: the aliases"
            " fp8 and float8 become float8_e4m3fn, which the migration `loader-alias` writes with a warning; "
            "other values are refused as the schema refuses them)"
        ),
    ),
    "SystemValidationMixin.check_npu_config": (
        "46b1f6f9849e",
        (
            "probes the launching machine (refuses flash attention, sdpa, bitsandbytes optimizers, 8- and 4-bit "
            "loading and tf32 only when an Ascend NPU is present)"
        ),
    ),
    "TrainingValidationMixin.check_eval_strategy": (
        "db69b8970989",
        ("deprecated key, handled by the migration `renamed-key` (`evaluation_strategy` copied to `eval_strategy`)"),
    ),
    "TrainingValidationMixin.check_mistral_common_import": (
        "467519da3286",
        (
            "probes the launching machine (refuses `tokenizer_use_mistral_common` when the mistral-common package"
            " is not installed)"
        ),
    ),
    "TrainingValidationMixin.check_multipack_buffer_size": (
        "3b1bb8a017a6",
        (
            "deprecated key, handled by the migration `renamed-key` (`pretrain_multipack_buffer_size`; `renamed-"
            "key-conflict` refuses it beside `streaming_multipack_buffer_size` as the loader does)"
        ),
    ),
    "TrainingValidationMixin.check_neftune": (
        "3182bc137596",
        (
            "deprecated key, handled by the migration `renamed-key` (`noisy_embedding_alpha`; `renamed-key-"
            "conflict` refuses it beside `neftune_noise_alpha` as the loader does)"
        ),
    ),
    "TrainingValidationMixin.set_reward_model_defaults": (
        "ddc287e1cf51",
        ("only fills a default (`num_labels` and `model_type` for `reward_model` and `process_reward_model`)"),
    ),
}
"""Validators of the config classes no rule mirrors: `Class.method` -> (the hash of its source when it was
reviewed, why no rule mirrors it)."""

# -- plugin settings models (`axolotl.integrations.*.args`) ---------------------------------------------

PLUGIN_SETTINGS: dict[str, tuple[str, str]] = {
    "MoraConfig.normalize_mora_type": (
        "9d9f2618caed",
        (
            "normalises a value the schema already types (`mora_type` 1 and 6 become `sharing` and `rope`; the "
            "schema takes all four spellings)"
        ),
    ),
}
"""Validators of the plugins' settings models no rule mirrors: `Class.method` -> (hash, reason)."""


# -- what Axolotl 0.19.0's review changes ------------------------------------------------------------------

CHANGED_0_19_0: dict[str, tuple[str, str] | None] = {
    "AxolotlConfigWCapabilities.check_auto_enable_lora_kernels": (
        "c7295f3cab73",
        (
            "only fills a default (as in 0.18.0; 0.19.0 reads the model's lora-kernel support through "
            "`resolve_model_support`: turns on the four `lora_*_kernel` for a LoRA or QLoRA adapter that sets none "
            "of them, and logs at warning level that it did)"
        ),
    ),
    "EBFTValidationMixin.check_ebft_activation_offloading": None,  # reached in 0.19.0, and mirrored
    "EBFTValidationMixin.check_ebft_gradient_checkpointing_reentrant": (
        "55e25a3efce8",
        (
            "only fills a default (0.19.0 reads the `ebft` section as a model, so it no longer fails: a strided "
            "EBFT run on flex_attention with gradient checkpointing gets `gradient_checkpointing_kwargs.use_reentrant"
            ": true`, with a warning; nothing in the config is refused)"
        ),
    ),
    "SystemValidationMixin.check_flash_attn_available": (
        "0953e3c963d6",
        (
            "probes the launching machine (refuses flash_attention_2 or flash_attention_3 where CUDA is present "
            "but neither the flash-attn package nor a kernels-hub build for its torch is; a machine without CUDA "
            "passes)"
        ),
    ),
    "SystemValidationMixin.check_npu_config": (
        "fe6aee828aba",
        (
            "probes the launching machine (as in 0.18.0, with flash_attention_4 and flash_attention_torch among the "
            "attention backends it refuses, only when an Ascend NPU is present)"
        ),
    ),
}
"""Axolotl 0.19.0's validators where its review differs from 0.18.0's tables: `Class.method` -> (hash, reason),
or None where the 0.18.0 entry does not apply (a rule of axolotl@0.19.0 mirrors the validator, or it is gone)."""


TORCH_RANGES = {"0.18.0": "2.11.0 to 2.12.1", "0.19.0": "2.11.0 to 2.13.0"}
"""The torch versions each release installs with (its `torch>=...,<=...` requirement), which the reasons of the
validators that probe the machine's torch quote."""


def _torch_range(reason: str, release: str) -> str:
    """A reason written for 0.18.0, with the torch versions of `release`."""
    return reason.replace(
        f"Axolotl 0.18.0 installs with, {TORCH_RANGES['0.18.0']}",
        f"Axolotl {release} installs with, {TORCH_RANGES[release]}",
    )


def reviewed(release: str) -> dict[str, tuple[str, str]]:
    """The reviewed table of a release: 0.18.0's (`UNMIRRORED` and `PLUGIN_SETTINGS`), with 0.19.0's changes
    (and its torch versions in the reasons that quote them)."""
    table = {
        name: (digest, _torch_range(reason, release))
        for name, (digest, reason) in {**UNMIRRORED, **PLUGIN_SETTINGS}.items()
    }
    if release == "0.19.0":
        for name, entry in CHANGED_0_19_0.items():
            if entry is None:
                table.pop(name, None)
            else:
                table[name] = entry
    return table
