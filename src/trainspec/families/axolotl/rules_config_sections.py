"""The checks of the config sections Axolotl's input class is mixed from.

Adapters (`utils/schemas/peft.py`), datasets (`datasets.py`, `utils.py`), FSDP
(`fsdp.py`), integrations, the model and its output, and training (`integrations.py`,
`model.py`, `training.py`). Most read the keys of one section, which users write flat
at the top level.

Said by the schema, so not repeated here: the enums of `image_resize_algorithm`
(`multimodal.py`) and of the QAT/PTQ dtypes (`quantization.py`), and `learning_rate`
being a number. Fills that change no verdict are not mirrored: `lora_dropout` set to
0 with an adapter, `loraplus_lr_embedding` and `learning_rate` read from text, a chat
dataset's template defaulting to the tokenizer's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainspec.spec.rules import Rule, Violation, rule
from trainspec.spec.wording import show

BUILT_IN_ADAPTERS = ("lora", "qlora", "llama-adapter")
PLUGIN_ADAPTERS = {"axolotl.integrations.mora.MoraPlugin": "mora"}
"""The adapters Axolotl's own plugins register, by the plugin's name in `plugins`."""
OWN_PLUGINS = "axolotl.integrations."
NOT_SFT = ("dpo", "ipo", "simpo", "kto")
"""With these `rl` methods a dataset is read as a preference dataset, not a supervised one."""
RESERVED_PROCESSOR_KWARGS = {"revision": "revision_of_model", "trust_remote_code": "trust_remote_code"}
MESSAGE_FIELDS = {"message_field_role": "role", "message_field_content": "content"}


# -- adapters ---------------------------------------------------------------------------


@rule("quantized-load-needs-adapter", "error", "adapter", "inference", "load_in_8bit", "load_in_4bit")
def quantized_load_needs_adapter(adapter: Any, inference: Any, in_8bit: Any, in_4bit: Any) -> Iterator[Violation]:
    """A model loaded in 8 or 4 bits cannot be trained in full: it needs an adapter.

    Mirrors `LoraConfig.validate_adapter`."""
    if not adapter and not inference and (in_8bit or in_4bit):
        key = "load_in_8bit" if in_8bit else "load_in_4bit"
        yield Violation(
            f"{key} = true needs an adapter to train (adapter: lora or qlora); "
            "to fine-tune the full model, turn load_in_8bit and load_in_4bit off",
            at=(key,),
        )


@rule("adapter-known", "error", "adapter", "plugins")
def adapter_known(adapter: Any, plugins: Any, *, registries: Mapping[str, tuple[str, ...]]) -> Iterator[str]:
    """An adapter is built in (lora, qlora, llama-adapter) or registered by a plugin listed in `plugins`.

    A plugin from outside Axolotl may register any name, so with one listed the name is not checked.

    Mirrors `LoraConfig.validate_adapter`."""
    if not isinstance(adapter, str) or not adapter or adapter in BUILT_IN_ADAPTERS:
        return
    listed = [p for p in plugins or [] if isinstance(p, str)]
    if adapter in registries.get("adapter", ()) or any(not p.startswith(OWN_PLUGINS) for p in listed):
        return
    if any(PLUGIN_ADAPTERS.get(p) == adapter for p in listed):
        return
    providers = [p for p, name in PLUGIN_ADAPTERS.items() if name == adapter]
    fix = f"add {providers[0]} to plugins" if providers else f"use one of {', '.join(BUILT_IN_ADAPTERS)}"
    yield f"adapter = {show(adapter)} is not built in and no plugin in plugins registers it; {fix}"


@rule("qlora-quantization", "error", "adapter", "merge_lora", "load_in_8bit", "gptq", "load_in_4bit")
def qlora_quantization(adapter: Any, merge: Any, in_8bit: Any, gptq: Any, in_4bit: Any) -> Iterator[Violation]:
    """QLoRA trains on a 4-bit base (not 8-bit, not GPTQ), and merges into an unquantized one.

    Mirrors `LoraConfig.validate_qlora`."""
    if adapter != "qlora":
        return
    if merge:
        for key, value in (("load_in_8bit", in_8bit), ("gptq", gptq), ("load_in_4bit", in_4bit)):
            if value:
                yield Violation(
                    f"merge_lora = true cannot merge a qlora adapter into a model loaded with {key} = true; "
                    f"turn {key} off for the merge",
                    at=(key,),
                )
        return
    for key, value in (("load_in_8bit", in_8bit), ("gptq", gptq)):
        if value:
            yield Violation(f'adapter = "qlora" cannot load the model with {key} = true; turn it off', at=(key,))
    if not in_4bit:
        yield Violation('adapter = "qlora" needs load_in_4bit: true', at=("adapter",), related=(("load_in_4bit",),))


@rule("lora-target-parameters-dropout", "error", "lora_target_parameters", "lora_dropout")
def lora_target_parameters_dropout(parameters: Any, dropout: Any) -> Iterator[Violation]:
    """PEFT's wrapper for targeted parameters has no dropout, so `lora_dropout` must be 0 with them.

    Mirrors `LoraConfig.validate_lora_target_parameters_dropout`."""
    if parameters and dropout and dropout != 0.0:
        yield Violation(
            f"lora_dropout = {show(dropout)} must be 0 when lora_target_parameters is set; set lora_dropout: 0",
            at=("lora_dropout",),
        )


# -- datasets -----------------------------------------------------------------------------


def _legacy_fields(ds: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """The legacy message fields a dataset sets: (field, the property it maps, its value).

    A null one counts as left out, as in a resolved config's dump (Axolotl's own dumps leave
    nulls out). The loader itself takes a written null as set: beside a mapping of the same
    property it refuses the file, comparing the mapping with the text 'None'; trainspec does not.
    """
    for legacy, prop in MESSAGE_FIELDS.items():
        if ds.get(legacy) is not None:
            yield legacy, prop, ds[legacy]


def _supervised(datasets: Any, rl: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """The datasets the loader reads as supervised (SFT) datasets, with their indexes."""
    if rl in NOT_SFT or not isinstance(datasets, list):
        return
    for i, ds in enumerate(datasets):
        if isinstance(ds, dict) and ds.get("type") != "_synthetic":
            yield i, ds


@rule("chat-template-jinja-needed", "error", "datasets", "rl", raw=True)
def chat_template_jinja_needed(datasets: Any, rl: Any) -> Iterator[Violation]:
    """A dataset with `chat_template: jinja` brings its template in `chat_template_jinja`.

    Mirrors `SFTDataset.check_chat_template_config`."""
    for i, ds in _supervised(datasets, rl):
        if ds.get("chat_template") == "jinja" and not ds.get("chat_template_jinja"):
            yield Violation(
                f'datasets[{i}].chat_template = "jinja" needs datasets[{i}].chat_template_jinja (the template text)',
                at=("datasets", i, "chat_template"),
                related=(),
            )


@rule("message-field-conflict", "error", "datasets", "rl", raw=True)
def message_field_conflict(datasets: Any, rl: Any) -> Iterator[Violation]:
    """A legacy message field and `message_property_mappings` must not map the same property differently.

    Mirrors `SFTDataset.handle_legacy_message_fields`."""
    for i, ds in _supervised(datasets, rl):
        mappings = ds.get("message_property_mappings")
        for legacy, prop, value in _legacy_fields(ds):
            if isinstance(mappings, dict) and prop in mappings and mappings[prop] != value:
                yield Violation(
                    f"datasets[{i}].{legacy} = {show(value)} conflicts with "
                    f"datasets[{i}].message_property_mappings.{prop} = {show(mappings[prop])}; keep only the mapping",
                    at=("datasets", i, legacy),
                    related=(("datasets", i, "message_property_mappings", prop),),
                )


@rule("legacy-message-field", "warning", "datasets", "rl", raw=True)
def legacy_message_field(datasets: Any, rl: Any) -> Iterator[Violation]:
    """`message_field_role` and `message_field_content` are deprecated for `message_property_mappings`.

    Mirrors `SFTDataset.handle_legacy_message_fields`."""
    for i, ds in _supervised(datasets, rl):
        for legacy, prop, value in _legacy_fields(ds):
            yield Violation(
                f"datasets[{i}].{legacy} is deprecated; write message_property_mappings: {{{prop}: {value}}} instead",
                at=("datasets", i, legacy),
                related=(),
            )


# -- FSDP -----------------------------------------------------------------------------------


def _fsdp_option(fsdp_config: dict[str, Any], key: str) -> Any:
    """An FSDP option as the loader reads it: the `fsdp_`-prefixed spelling is the same key."""
    return fsdp_config.get(key, fsdp_config.get(f"fsdp_{key}"))


@rule("fsdp-size-based-wrap-needs-min-params", "error", "fsdp_config", raw=True)
def fsdp_size_based_wrap_needs_min_params(fsdp_config: Any) -> Iterator[Violation]:
    """Size-based wrapping wraps modules above a parameter count, which `min_num_params` gives.

    Read as written: the loader strips the `fsdp_` prefix before it checks, so either
    spelling counts.

    Mirrors `FSDPConfig.validate_size_based_wrap`."""
    if not isinstance(fsdp_config, dict):
        return
    policy = _fsdp_option(fsdp_config, "auto_wrap_policy")
    if policy == "SIZE_BASED_WRAP" and _fsdp_option(fsdp_config, "min_num_params") is None:
        yield Violation(
            'fsdp_config.auto_wrap_policy = "SIZE_BASED_WRAP" needs fsdp_config.min_num_params '
            "(the parameter count above which a module is wrapped)",
        )


# -- integrations, model, multimodal, training ---------------------------------------------


@rule("wandb-run-id-without-name", "warning", "wandb_run_id", "wandb_name")
def wandb_run_id_without_name(run_id: Any, name: Any) -> Iterator[str]:
    """`wandb_run_id` is the run's id; without `wandb_name` it becomes the name as well.

    Mirrors `WandbConfig.check_wandb_run`."""
    if run_id and not name:
        yield (
            f"wandb_run_id = {show(run_id)} sets the run's id and, without wandb_name, its name too; "
            "to name the run, set wandb_name"
        )


@rule("trust-remote-code", "warning", "trust_remote_code")
def trust_remote_code(trust: Any) -> Iterator[str]:
    """`trust_remote_code` runs code from the model's repository on the training machine.

    Mirrors `ModelInputConfig.hint_trust_remote_code`."""
    if trust:
        yield "trust_remote_code = true runs the model repository's own code; review that code first"


@rule("processor-kwargs-reserved", "error", "processor_kwargs")
def processor_kwargs_reserved(kwargs: Any) -> Iterator[str]:
    """The processor's revision and remote-code switch come from the top-level keys, not `processor_kwargs`.

    Mirrors `ModelInputConfig.reject_reserved_processor_kwargs`."""
    if not isinstance(kwargs, dict):
        return
    for key in sorted(set(kwargs) & set(RESERVED_PROCESSOR_KWARGS)):
        yield f"processor_kwargs.{key} is reserved; set the top-level {RESERVED_PROCESSOR_KWARGS[key]} instead"


@rule("save-safetensors-false", "error", "save_safetensors")
def save_safetensors_false(save: Any) -> Iterator[str]:
    """Transformers 5 always saves safetensors, so `save_safetensors: false` cannot be honoured.

    Mirrors `ModelOutputConfig.validate_save_safetensors`."""
    if save is False:
        yield "save_safetensors = false is not supported (Transformers 5 always saves safetensors); remove it"


@rule("batch-size-set", "warning", "batch_size")
def batch_size_set(batch_size: Any) -> Iterator[str]:
    """`batch_size` is discouraged: the loader derives it from the per-GPU batch and accumulation.

    Mirrors `HyperparametersConfig.hint_batch_size_set`."""
    if batch_size:
        yield (
            f"batch_size = {show(batch_size)} is not recommended; set gradient_accumulation_steps instead "
            "(batch_size / micro_batch_size / number of GPUs)"
        )


RULES: list[Rule] = [
    quantized_load_needs_adapter,
    adapter_known,
    qlora_quantization,
    lora_target_parameters_dropout,
    chat_template_jinja_needed,
    message_field_conflict,
    legacy_message_field,
    fsdp_size_based_wrap_needs_min_params,
    wandb_run_id_without_name,
    trust_remote_code,
    processor_kwargs_reserved,
    save_safetensors_false,
    batch_size_set,
]
