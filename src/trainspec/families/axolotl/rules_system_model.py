"""Axolotl rules for the machine, chat templates, pretraining, model quirks and parallelism.

They mirror the system, chat-template, pretraining, model-compatibility and complex
validators of Axolotl's config (`axolotl/utils/schemas/validation.py`). Where telling an
unwritten key from a written `null` changes the verdict, a rule reads the values as written
(`raw=True`): an unwritten `bf16` is "auto", which the loader counts as on, while `bf16: null`
is off; `mode="before"` validators see only the key they name, not its alias.

The loader's rewrites that change a verdict are applied here before checking:
`gradient_checkpointing: offload` (or `offload_disk`) turns checkpointing on and sets
`activation_offloading` to true (or "disk"), overriding what the file says; the deprecated
attention flags (`flash_attention: true`, ...) and `gemma4_hybrid_attn_impl` fill an unset
`attn_implementation`; and `fsdp_config` keys lose their deprecated `fsdp_` prefix.

Not mirrored: the Ascend NPU checks (`SystemValidationMixin.check_npu_config`) and the
`ring_flash_attn` import probe, which depend on the machine the job runs on, and the notes the
context-parallel validator logs on every such run (loss curves, SSM hybrid models read from
the model's hub config).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.spec.rules import ABSENT, Rule, Violation, rule
from trainspec.spec.wording import show

from .attention import FLASH_LIBRARY, LEGACY_ATTENTION_FLAGS, attention
from .phrases import named

OFFLOAD_ALIASES = {"offload": True, "offload_disk": "disk"}
"""`gradient_checkpointing` values the loader rewrites: checkpointing on, plus this offloading."""


MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::matmul", "aten::bmm")
KERNELS_PLUGIN = "axolotl.integrations.kernels.KernelsPlugin"


def checkpointing(gradient_checkpointing: Any) -> bool:
    """Whether checkpointing is on once the loader has rewritten the offload aliases."""
    return bool(gradient_checkpointing)


def offloading(gradient_checkpointing: Any, activation_offloading: Any) -> Any:
    """`activation_offloading` as the loader sees it after rewriting the offload aliases."""
    if isinstance(gradient_checkpointing, str) and gradient_checkpointing in OFFLOAD_ALIASES:
        return OFFLOAD_ALIASES[gradient_checkpointing]
    return activation_offloading


def offloading_named(gradient_checkpointing: Any, activation_offloading: Any) -> str:
    """The offloading setting in words, saying where the loader took it from."""
    value = offloading(gradient_checkpointing, activation_offloading)
    if isinstance(gradient_checkpointing, str) and gradient_checkpointing in OFFLOAD_ALIASES:
        return f"activation_offloading = {show(value)} (set by gradient_checkpointing = {show(gradient_checkpointing)})"
    return f"activation_offloading = {show(value)}"


# -- SystemValidationMixin ------------------------------------------------------------------


@rule("max-memory-with-gpu-memory-limit", "error", "max_memory", "gpu_memory_limit")
def max_memory_with_gpu_memory_limit(max_memory: Any, limit: Any) -> Iterator[str]:
    """`max_memory` and `gpu_memory_limit` both cap the GPU memory the model loads into; set one.

    Mirrors `SystemValidationMixin.check_mem_mismatch`."""
    if max_memory is not None and limit is not None:
        yield (
            f"max_memory = {show(max_memory)} and gpu_memory_limit = {show(limit)} are mutually exclusive; "
            "remove one of them"
        )


@rule("deepspeed-with-fsdp", "error", "deepspeed", "fsdp")
def deepspeed_with_fsdp(deepspeed: Any, fsdp: Any) -> Iterator[str]:
    """DeepSpeed and FSDP both shard the model; a run uses one of them.

    Mirrors `SystemValidationMixin.check_fsdp_deepspeed`."""
    if deepspeed and fsdp:
        yield (
            f"deepspeed = {show(deepspeed)} and fsdp = {show(fsdp)} cannot be used together; "
            "remove deepspeed, or remove fsdp (FSDP is configured with fsdp_config)"
        )


@rule("quantization-config-with-bnb", "error", "model_quantization_config", "load_in_8bit", "load_in_4bit")
def quantization_config_with_bnb(quantization: Any, in_8bit: Any, in_4bit: Any) -> Iterator[str]:
    """A model quantization config and bitsandbytes loading both quantize the weights; pick one.

    Mirrors `SystemValidationMixin.check_model_quantization_config_vs_bnb`."""
    if quantization and (in_8bit or in_4bit):
        flag = "load_in_8bit" if in_8bit else "load_in_4bit"
        yield (
            f"model_quantization_config = {show(quantization)} cannot be combined with {flag} = true; "
            f"remove {flag} or model_quantization_config"
        )


# -- ChatTemplateValidationMixin ------------------------------------------------------------


@rule("chat-template-jinja-needs-template", "error", "chat_template", "chat_template_jinja")
def chat_template_jinja_needs_template(template: Any, jinja: Any) -> Iterator[str]:
    """`chat_template: jinja` takes its template from `chat_template_jinja`, which must be given.

    Mirrors `ChatTemplateValidationMixin.check_chat_template_config`."""
    if template == "jinja" and not jinja:
        yield (
            'chat_template = "jinja" needs chat_template_jinja (the Jinja template, or a path to it); '
            "set chat_template_jinja, or choose a named chat_template"
        )


# -- PretrainingValidationMixin -------------------------------------------------------------


@rule("pretraining-needs-max-steps", "error", "pretraining_dataset", "max_steps")
def pretraining_needs_max_steps(pretraining: Any, max_steps: Any) -> Iterator[str]:
    """A streamed pretraining dataset has no length, so the schedule needs `max_steps`.

    Mirrors `PretrainingValidationMixin.check_pretraining_w_max_steps`."""
    if pretraining and not max_steps:
        yield (
            f"pretraining_dataset is set but {named('max_steps', max_steps)}: the trainer cannot infer the "
            "length of an iterable dataset to schedule the learning rate; set max_steps"
        )


@rule("pretraining-group-by-length", "warning", "pretraining_dataset", "group_by_length")
def pretraining_group_by_length(pretraining: Any, group_by_length: Any) -> Iterator[str]:
    """Grouping by length sorts the whole dataset, which downloads a streamed one completely.

    Mirrors `PretrainingValidationMixin.check_pretraining_w_group_by_length`."""
    if pretraining and group_by_length:
        yield (
            "group_by_length = true with pretraining_dataset downloads the whole streamed dataset to sort it; "
            "you probably want group_by_length: false"
        )


@rule("pretraining-no-val-set-size", "error", "pretraining_dataset", "val_set_size")
def pretraining_no_val_set_size(pretraining: Any, val_set_size: Any) -> Iterator[str]:
    """A streamed pretraining dataset cannot be split; evaluation data comes from `test_datasets`.

    Mirrors `PretrainingValidationMixin.check_pretraining_w_val_set_size`."""
    if pretraining and val_set_size:
        yield (
            f"val_set_size = {show(val_set_size)} is not supported with pretraining_dataset; "
            "remove val_set_size and give evaluation data in test_datasets"
        )


@rule("streaming-no-val-set-size", "error", "streaming", "val_set_size")
def streaming_no_val_set_size(streaming: Any, val_set_size: Any) -> Iterator[str]:
    """A streamed dataset cannot be split; evaluation data comes from `test_datasets`.

    Mirrors `PretrainingValidationMixin.check_streaming_w_val_set_size`."""
    if streaming and val_set_size:
        yield (
            f"val_set_size = {show(val_set_size)} is not supported with streaming = true; "
            "remove val_set_size and give evaluation data in test_datasets"
        )


@rule("streaming-needs-max-steps", "error", "streaming", "max_steps")
def streaming_needs_max_steps(streaming: Any, max_steps: Any) -> Iterator[str]:
    """A streamed dataset has no length, so the schedule needs `max_steps`.

    Mirrors `PretrainingValidationMixin.check_streaming_w_max_steps`."""
    if streaming and not max_steps:
        yield (
            f"streaming = true but {named('max_steps', max_steps)}: the trainer cannot infer the length of a "
            "streamed dataset; set max_steps"
        )


@rule("streaming-packing-one-dataset", "error", "streaming", "sample_packing", "datasets")
def streaming_packing_one_dataset(streaming: Any, packing: Any, datasets: Any) -> Iterator[str]:
    """Sample packing of streamed data reads one dataset; several are not supported yet.

    Mirrors `PretrainingValidationMixin.check_streaming_w_multiple_datasets`."""
    if streaming and packing and isinstance(datasets, list) and len(datasets) > 1:
        yield (
            f"sample_packing = true with streaming = true supports one dataset, and datasets lists "
            f"{len(datasets)}; keep one dataset, or turn off sample_packing or streaming"
        )


# -- ModelCompatibilityValidationMixin ------------------------------------------------------


def _names(base_model: Any, part: str) -> bool:
    return isinstance(base_model, str) and part in base_model.lower()


@rule("falcon-no-fsdp", "error", "base_model", "fsdp")
def falcon_no_fsdp(base_model: Any, fsdp: Any) -> Iterator[str]:
    """Axolotl refuses FSDP for a base model whose name contains "falcon".

    Mirrors `ModelCompatibilityValidationMixin.check_falcon_fsdp`."""
    if _names(base_model, "falcon") and fsdp:
        yield f"fsdp = {show(fsdp)} is not supported for falcon models (base_model = {show(base_model)}); remove fsdp"


@rule("mpt-no-gradient-checkpointing", "error", "base_model", "gradient_checkpointing")
def mpt_no_gradient_checkpointing(base_model: Any, gc: Any) -> Iterator[str]:
    """Axolotl refuses gradient checkpointing for a base model whose name contains "mpt".

    The loader matches the text "mpt" anywhere in the name, case-insensitively.

    Mirrors `ModelCompatibilityValidationMixin.check_mpt_checkpointing`."""
    if _names(base_model, "mpt") and checkpointing(gc):
        yield (
            f"gradient_checkpointing = {show(gc)} is not supported for MPT models (base_model = "
            f'{show(base_model)} contains "mpt"); set gradient_checkpointing: false'
        )


@rule("nemotron-h-checkpointing-needs-packing", "error", "base_model", "gradient_checkpointing", "sample_packing")
def nemotron_h_checkpointing_needs_packing(base_model: Any, gc: Any, packing: Any) -> Iterator[str]:
    """Nemotron-H supports gradient checkpointing only through Axolotl's sample-packing patch.

    Mirrors `ModelCompatibilityValidationMixin.check_nemotron_h_gradient_checkpointing`."""
    if _names(base_model, "nemotron-h") and checkpointing(gc) and not packing:
        yield (
            f"gradient_checkpointing = {show(gc)} for a Nemotron-H model (base_model = {show(base_model)}) "
            "needs sample_packing: true; set sample_packing: true or turn gradient_checkpointing off"
        )


@rule("gradient-checkpointing-offload-deprecated", "warning", "gradient_checkpointing")
def gradient_checkpointing_offload_deprecated(gc: Any) -> Iterator[str]:
    """`gradient_checkpointing: offload` and `offload_disk` are deprecated spellings of activation offloading.

    The loader turns them into `gradient_checkpointing: true` plus `activation_offloading: true` (or
    "disk"), replacing any `activation_offloading` the file sets.

    Mirrors `ModelCompatibilityValidationMixin.check_gradient_checkpointing_w_offload`."""
    if isinstance(gc, str) and gc in OFFLOAD_ALIASES:
        yield (
            f"gradient_checkpointing = {show(gc)} is deprecated; write gradient_checkpointing: true and "
            f"activation_offloading: {show(OFFLOAD_ALIASES[gc])} (or legacy, for the previous implementation)"
        )


@rule(
    "activation-offloading-needs-gradient-checkpointing",
    "error",
    "activation_offloading",
    "gradient_checkpointing",
)
def activation_offloading_needs_gc(offload: Any, gc: Any) -> Iterator[str]:
    """Activation offloading works through gradient checkpointing.

    Mirrors `ModelCompatibilityValidationMixin.check_activation_offloading_wo_gc`."""
    if offloading(gc, offload) and not checkpointing(gc):
        yield (
            f"activation_offloading = {show(offload)} requires gradient checkpointing, but "
            f"gradient_checkpointing = {show(gc)}; set gradient_checkpointing: true or remove activation_offloading"
        )


def _selective(value: Any) -> bool:
    """Whether selective checkpointing is on: `true`, or a section (even an empty one)."""
    return value is True or isinstance(value, dict)


@rule(
    "selective-checkpointing-needs-gradient-checkpointing", "error", "selective_checkpointing", "gradient_checkpointing"
)
def selective_needs_gc(selective: Any, gc: Any) -> Iterator[str]:
    """Selective checkpointing chooses what gradient checkpointing saves, so it needs checkpointing on.

    Mirrors `ModelCompatibilityValidationMixin.check_selective_checkpointing`."""
    if _selective(selective) and not checkpointing(gc):
        yield (
            f"selective_checkpointing requires gradient checkpointing, but gradient_checkpointing = {show(gc)}; "
            "set gradient_checkpointing: true"
        )


@rule(
    "selective-checkpointing-non-reentrant",
    "error",
    "selective_checkpointing",
    "gradient_checkpointing_kwargs.use_reentrant",
)
def selective_non_reentrant(selective: Any, reentrant: Any) -> Iterator[str]:
    """Selective checkpointing works on non-reentrant checkpointing only.

    Mirrors `ModelCompatibilityValidationMixin.check_selective_checkpointing`."""
    if _selective(selective) and reentrant:
        yield (
            f"selective_checkpointing requires non-reentrant checkpointing, but "
            f"gradient_checkpointing_kwargs.use_reentrant = {show(reentrant)}; set it to false"
        )


@rule(
    "selective-checkpointing-offloading",
    "error",
    "selective_checkpointing",
    "activation_offloading",
    "gradient_checkpointing",
)
def selective_offloading(selective: Any, offload: Any, gc: Any) -> Iterator[str]:
    """Selective checkpointing combines only with hidden-state offloading: the other offloaders bypass it.

    Mirrors `ModelCompatibilityValidationMixin.check_selective_checkpointing`."""
    value = offloading(gc, offload)
    if _selective(selective) and value and value != "hidden_states":
        yield (
            f"selective_checkpointing works only with activation_offloading: hidden_states or false, but "
            f"{offloading_named(gc, offload)}; change activation_offloading or remove selective_checkpointing"
        )


@rule("selective-checkpointing-adapter-matmul", "error", "selective_checkpointing", "adapter")
def selective_adapter_matmul(selective: Any, adapter: Any) -> Iterator[Violation]:
    """With a LoRA adapter, saved matmul outputs are changed in place, so they cannot be kept.

    PEFT adds the adapter's delta into the base layer's output in place; an entry of
    `selective_checkpointing.save` that names part of a matmul op would keep a tensor that changes.

    Mirrors `ModelCompatibilityValidationMixin.check_selective_checkpointing`."""
    if not (_selective(selective) and adapter):
        return
    save = selective.get("save", ["attention"]) if isinstance(selective, dict) else ["attention"]
    bad = [s for s in save or [] if isinstance(s, str) and s != "attention" and any(s in op for op in MATMUL_OPS)]
    if bad:
        yield Violation(
            f"selective_checkpointing.save = {show(save)} names matmul ops ({', '.join(map(show, bad))}), which "
            f"cannot be saved when training with adapter = {show(adapter)}; use save: [attention] or train "
            "without an adapter",
            at=("selective_checkpointing", "save"),
        )


@rule("selective-checkpointing-torch-compile", "warning", "selective_checkpointing", "torch_compile")
def selective_torch_compile(selective: Any, compile_: Any) -> Iterator[str]:
    """Selective checkpointing targets the eager checkpointing path; under torch.compile it is untested.

    Mirrors `ModelCompatibilityValidationMixin.check_selective_checkpointing`."""
    if _selective(selective) and compile_:
        yield (
            f"selective_checkpointing with torch_compile = {show(compile_)} is untested in Axolotl; "
            "check the memory and loss of a short run, or turn torch_compile off"
        )


@rule(
    "hidden-states-offloading-reentrant-unfrozen",
    "error",
    "activation_offloading",
    "gradient_checkpointing",
    "gradient_checkpointing_kwargs.use_reentrant",
    "unfrozen_parameters",
)
def hidden_states_reentrant_unfrozen(offload: Any, gc: Any, reentrant: Any, unfrozen: Any) -> Iterator[Violation]:
    """Hidden-state offloading with reentrant checkpointing cannot train a partially frozen model.

    Mirrors `ModelCompatibilityValidationMixin.check_hidden_states_offloading`."""
    if offloading(gc, offload) == "hidden_states" and reentrant and unfrozen:
        yield Violation(
            f'activation_offloading = "hidden_states" with gradient_checkpointing_kwargs.use_reentrant = '
            f"{show(reentrant)} cannot train a partially frozen model (unfrozen_parameters = {show(unfrozen)}); "
            "set use_reentrant: false",
            at=("gradient_checkpointing_kwargs", "use_reentrant"),
        )


@rule("hidden-states-offloading-with-adapter", "warning", "activation_offloading", "gradient_checkpointing", "adapter")
def hidden_states_with_adapter(offload: Any, gc: Any, adapter: Any) -> Iterator[str]:
    """With a LoRA adapter, plain activation offloading is often faster than hidden-state offloading.

    Hidden-state offloading recomputes the layers; `activation_offloading: true` avoids the
    recompute and offloads the adapter's smaller activations.

    Mirrors `ModelCompatibilityValidationMixin.check_hidden_states_offloading`."""
    if offloading(gc, offload) == "hidden_states" and adapter:
        yield (
            f'activation_offloading = "hidden_states" with adapter = {show(adapter)} recomputes activations; '
            "activation_offloading: true can be faster with an adapter"
        )


def _amp(fp16: Any, bf16: Any) -> str:
    """The AMP setting that is on, in words ("" when none); an unwritten bf16 is "auto", which counts."""
    if fp16:
        return f"fp16 = {show(fp16)}"
    if bf16 is ABSENT:
        return 'bf16 = "auto" (the default)'
    return f"bf16 = {show(bf16)}" if bf16 else ""


@rule("better-transformer-no-amp", "error", "flash_optimum", "fp16", "bf16", raw=True)
def better_transformer_no_amp(flash_optimum: Any, fp16: Any, bf16: Any) -> Iterator[str]:
    """BetterTransformer (`flash_optimum`) does not run under automatic mixed precision.

    `bf16` defaults to "auto", which counts as on: turning BetterTransformer on needs
    `bf16: false` written out (load the model in half precision with `bfloat16` or `float16` instead).

    Mirrors `ModelCompatibilityValidationMixin.check_better_transformers`."""
    if flash_optimum is True and (amp := _amp(fp16, bf16)):
        yield (
            f"flash_optimum = true (BetterTransformer) does not support mixed precision, but {amp}; "
            "set fp16: false and bf16: false, and load the model in half precision with bfloat16: true"
        )


@rule("better-transformer-with-adapter", "warning", "flash_optimum", "adapter")
def better_transformer_with_adapter(flash_optimum: Any, adapter: Any) -> Iterator[str]:
    """BetterTransformer probably does not work with PEFT adapters.

    Mirrors `ModelCompatibilityValidationMixin.check_better_transformers`."""
    if flash_optimum is True and adapter:
        yield f"flash_optimum = true (BetterTransformer) probably does not work with adapter = {show(adapter)}"


@rule("better-transformer-half-precision", "warning", "flash_optimum", "bfloat16", "float16")
def better_transformer_half_precision(flash_optimum: Any, bfloat16: Any, float16: Any) -> Iterator[str]:
    """BetterTransformer wants the model loaded in half precision.

    Mirrors `ModelCompatibilityValidationMixin.check_better_transformers`."""
    if flash_optimum is True and bfloat16 is not True and float16 is not True:
        yield (
            "flash_optimum = true (BetterTransformer) wants the model in half precision; "
            "set bfloat16: true or float16: true"
        )


@rule("gptq-no-revision-of-model", "error", "gptq", "revision_of_model", raw=True)
def gptq_no_revision(gptq: Any, revision: Any) -> Iterator[str]:
    """A GPTQ model cannot be loaded from a branch by revision.

    Mirrors `ModelCompatibilityValidationMixin.check_gptq_w_revision`."""
    if gptq and revision:
        yield (
            f"revision_of_model = {show(revision)} is not supported with gptq = true; download that branch "
            "of the model, point base_model at its path and remove revision_of_model"
        )


@rule("mxfp4-no-cpu-ram-efficient-loading", "error", "model_quantization_config", "fsdp_config", raw=True)
def mxfp4_no_cpu_ram_efficient_loading(quantization: Any, fsdp_config: Any) -> Iterator[Violation]:
    """FSDP's CPU-RAM-efficient loading cannot load an MXFP4-quantized model.

    The loader strips the deprecated `fsdp_` prefix of `fsdp_config` keys first (the later of two
    spellings wins), so `fsdp_cpu_ram_efficient_loading` counts too.

    Mirrors `ModelCompatibilityValidationMixin.check_gpt_oss_fsdp_loading`."""
    if quantization != "Mxfp4Config" or not isinstance(fsdp_config, dict):
        return
    written = {str(k).removeprefix("fsdp_"): (k, v) for k, v in fsdp_config.items()}
    key, value = written.get("cpu_ram_efficient_loading", ("", None))
    if value is True:
        yield Violation(
            f'fsdp_config.{key} = true is not supported with model_quantization_config = "Mxfp4Config"; '
            f"set fsdp_config.{key}: false",
            at=("fsdp_config", key),
        )


# -- ComplexValidationMixin -----------------------------------------------------------------


@rule("neftune-noise-alpha-positive", "error", "neftune_noise_alpha")
def neftune_noise_alpha_positive(alpha: Any) -> Iterator[str]:
    """NEFTune scales its embedding noise by `neftune_noise_alpha`, which must be above 0.

    Mirrors `ComplexValidationMixin.validate_neftune_noise_alpha`."""
    if isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and alpha <= 0:
        yield f"neftune_noise_alpha = {show(alpha)} must be > 0 (the paper uses 5); remove it to train without NEFTune"


@rule("simpo-no-warmup-ratio", "error", "rl", "warmup_ratio")
def simpo_no_warmup_ratio(rl: Any, warmup_ratio: Any) -> Iterator[str]:
    """The SimPO trainer takes its warmup in steps.

    Mirrors `ComplexValidationMixin.check_simpo_warmup`."""
    if rl == "simpo" and warmup_ratio:
        yield f'warmup_ratio = {show(warmup_ratio)} is not supported with rl = "simpo"; use warmup_steps instead'


@rule("relora-needs-jagged-restart-steps", "error", "relora", "jagged_restart_steps")
def relora_needs_restart_steps(relora: Any, steps: Any) -> Iterator[str]:
    """ReLoRA merges and restarts its adapter every `jagged_restart_steps` steps.

    Mirrors `ComplexValidationMixin.check_relora`."""
    if relora and not steps:
        yield (
            "relora = true needs jagged_restart_steps (how often to restart the adapter), but "
            f"{named('jagged_restart_steps', steps)}; set it"
        )


@rule("relora-needs-lora-adapter", "error", "relora", "adapter", "plugins")
def relora_needs_lora_adapter(relora: Any, adapter: Any, plugins: Any) -> Iterator[str]:
    """ReLoRA restarts a LoRA adapter: `adapter` must be lora or qlora.

    A plugin may declare that its own adapter supports ReLoRA; trainspec cannot ask it, so with
    plugins listed it still reports an adapter other than lora or qlora, saying so.

    Mirrors `ComplexValidationMixin.check_relora`."""
    if not relora or adapter in ("lora", "qlora"):
        return
    hint = " (unless one of the plugins declares ReLoRA support for it)" if adapter and plugins else ""
    yield f"relora = true restarts a LoRA adapter, but {named('adapter', adapter)}{hint}; set adapter: lora or qlora"


RELORA_CONFLICTS = {
    "fsdp": ("FSDP", "remove fsdp"),
    "fsdp_config": ("FSDP", "remove fsdp_config"),
    "deepspeed": ("DeepSpeed", "remove deepspeed"),
    "lr_scheduler": ("the one_cycle scheduler", "choose another lr_scheduler, such as cosine"),
    "flash_attn_fuse_mlp": ("fused MLP modules", "set flash_attn_fuse_mlp: false"),
}
"""What ReLoRA refuses, by key: what it is, and the fix."""


def _relora_conflict(key: str, value: Any) -> bool:
    if key == "lr_scheduler":
        return value == "one_cycle"
    return value is not None if key == "fsdp_config" else bool(value)


@rule("relora-incompatible", "error", "relora", *RELORA_CONFLICTS)
def relora_incompatible(relora: Any, *values: Any) -> Iterator[Violation]:
    """ReLoRA's restarts do not work with FSDP, DeepSpeed, the one_cycle scheduler or fused MLP modules.

    An `fsdp_config` section counts as FSDP even when it is empty.

    Mirrors `ComplexValidationMixin.check_relora`."""
    if not relora:
        return
    for (key, (what, fix)), value in zip(RELORA_CONFLICTS.items(), values, strict=True):
        if _relora_conflict(key, value):
            yield Violation(f"relora = true is not supported with {what} ({key} = {show(value)}); {fix}", at=(key,))


@rule("early-stopping-needs-steps", "error", "early_stopping_patience", "save_steps", "eval_steps")
def early_stopping_needs_steps(patience: Any, save_steps: Any, eval_steps: Any) -> Iterator[str]:
    """Early stopping keeps the best checkpoint, so it needs saves and evaluations on a step schedule.

    Mirrors `ComplexValidationMixin.check_early_stopping`."""
    if patience and (not save_steps or not eval_steps):
        yield (
            f"early_stopping_patience = {show(patience)} needs save_steps and eval_steps, but "
            f"{named('save_steps', save_steps)} and {named('eval_steps', eval_steps)}; set both, with eval_steps "
            "dividing save_steps"
        )


@rule("early-stopping-eval-divides-save", "error", "early_stopping_patience", "save_steps", "eval_steps")
def early_stopping_eval_divides_save(patience: Any, save_steps: Any, eval_steps: Any) -> Iterator[str]:
    """Early stopping needs an evaluation at every save: `eval_steps` must divide `save_steps`.

    Mirrors `ComplexValidationMixin.check_early_stopping`."""
    if patience and save_steps and eval_steps and save_steps % eval_steps != 0:
        yield (
            f"early_stopping_patience = {show(patience)} needs eval_steps to divide save_steps, but "
            f"save_steps = {show(save_steps)} and eval_steps = {show(eval_steps)}; make save_steps a multiple "
            "of eval_steps"
        )


CP_PATHS = ("context_parallel_size", "use_glm_dsa_kernels", "plugins")
"""What decides whether the context-parallel checks apply; the family's migration has already copied
the deprecated `sequence_parallel_degree` into an unset `context_parallel_size`, as the loader does."""


def context_parallel(size: Any, use_dsa: Any, plugins: Any) -> bool:
    """Whether the generic context-parallel checks apply: a size above 1, without GLM's DSA kernels
    (which bring their own context-parallel attention; the flag exists only with the kernels plugin
    loaded, without it the loader drops the key)."""
    dsa = bool(use_dsa) and isinstance(plugins, list) and KERNELS_PLUGIN in plugins
    return isinstance(size, int) and size > 1 and not dsa


@rule(
    "context-parallel-needs-flash-attention",
    "error",
    *CP_PATHS,
    "attn_implementation",
    "gemma4_hybrid_attn_impl",
    *LEGACY_ATTENTION_FLAGS,
)
def context_parallel_needs_flash(
    size: Any, use_dsa: Any, plugins: Any, implementation: Any, gemma4: Any, *legacy: Any
) -> Iterator[str]:
    """Context parallelism runs ring attention on the flash-attention library.

    Mirrors `ComplexValidationMixin.check_context_parallel_size`."""
    if not context_parallel(size, use_dsa, plugins):
        return
    resolved = attention(implementation, gemma4, *legacy)
    if resolved not in FLASH_LIBRARY:
        yield (
            f"context_parallel_size = {size} needs flash attention, but {named('attn_implementation', resolved)}; "
            "set attn_implementation: flash_attention_2 (or flash_attention_3)"
        )


@rule("context-parallel-packing-micro-batch-1", "error", *CP_PATHS, "sample_packing", "micro_batch_size")
def context_parallel_packing_micro_batch(
    size: Any, use_dsa: Any, plugins: Any, packing: Any, micro_batch_size: Any
) -> Iterator[Violation]:
    """Ring attention over packed samples (ring-flash-attn's varlen path) takes one sample per micro batch.

    Mirrors `ComplexValidationMixin.check_context_parallel_size`."""
    if not context_parallel(size, use_dsa, plugins):
        return
    if packing and isinstance(micro_batch_size, int) and micro_batch_size > 1:
        yield Violation(
            f"micro_batch_size = {micro_batch_size} must be 1 with sample_packing = true and "
            f"context_parallel_size = {size} (a ring-flash-attn requirement); set micro_batch_size: 1 and raise "
            "gradient_accumulation_steps instead",
            at=("micro_batch_size",),
        )


RULES: list[Rule] = [
    max_memory_with_gpu_memory_limit,
    deepspeed_with_fsdp,
    quantization_config_with_bnb,
    chat_template_jinja_needs_template,
    pretraining_needs_max_steps,
    pretraining_group_by_length,
    pretraining_no_val_set_size,
    streaming_no_val_set_size,
    streaming_needs_max_steps,
    streaming_packing_one_dataset,
    falcon_no_fsdp,
    mpt_no_gradient_checkpointing,
    nemotron_h_checkpointing_needs_packing,
    gradient_checkpointing_offload_deprecated,
    activation_offloading_needs_gc,
    selective_needs_gc,
    selective_non_reentrant,
    selective_offloading,
    selective_adapter_matmul,
    selective_torch_compile,
    hidden_states_reentrant_unfrozen,
    hidden_states_with_adapter,
    better_transformer_no_amp,
    better_transformer_with_adapter,
    better_transformer_half_precision,
    gptq_no_revision,
    mxfp4_no_cpu_ram_efficient_loading,
    neftune_noise_alpha_positive,
    simpo_no_warmup_ratio,
    relora_needs_restart_steps,
    relora_needs_lora_adapter,
    relora_incompatible,
    early_stopping_needs_steps,
    early_stopping_eval_divides_save,
    context_parallel_needs_flash,
    context_parallel_packing_micro_batch,
]
