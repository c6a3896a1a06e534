"""Examples of the ids Axolotl's retired and renamed keys and aliased values report (`migrations.py`,
`aliases.py`)."""

from __future__ import annotations

from trainspec.spec.examples import Example

from .aliases import ALIAS
from .migrations import DEPRECATED, REMOVED, RENAMED, RENAMED_CONFLICT, RENAMED_IGNORED

BASE = (
    "base_model: NousResearch/Llama-3.2-1B\n"
    "learning_rate: 0.0002\n"
    "micro_batch_size: 2\n"
    "gradient_accumulation_steps: 1\n"
    "datasets:\n"
    "  - path: teknium/GPT4-LLM-Cleaned\n"
    "    type: alpaca\n"
)


def _yaml(bad: str, good: str) -> Example:
    return Example(BASE + bad, BASE + good, "yaml")


EXAMPLES = {
    REMOVED: _yaml("max_packed_sequence_len: 2048\n", "sample_packing: true\nattn_implementation: flash_attention_2\n"),
    DEPRECATED: _yaml("eval_max_new_tokens: 128\n", "generation_max_new_tokens: 128\n"),
    RENAMED: _yaml("noisy_embedding_alpha: 5\n", "neftune_noise_alpha: 5\n"),
    RENAMED_CONFLICT: _yaml("noisy_embedding_alpha: 5\nneftune_noise_alpha: 5\n", "neftune_noise_alpha: 5\n"),
    RENAMED_IGNORED: _yaml("dataset_processes: 4\ndataset_num_proc: 8\n", "dataset_num_proc: 8\n"),
    ALIAS: _yaml("qat:\n  weight_dtype: fp8\n", "qat:\n  weight_dtype: float8_e4m3fn\n"),
}
