"""Axolotl's own plugins, by the names `plugins:` may list them under.

The loader imports each listed name as `module.Class`, and a name that does not import as written
is tried again under `axolotl.integrations.`; so the module that defines a plugin, the package that
re-exports it, and both without that prefix all name it. When one is listed, the loader adds the
plugin's settings model to its config model: the schema types those settings under the same
condition (`tools/draft_schema.py --plugins` wrote both), and the rules of `rules_plugins*.py` run.
"""

from __future__ import annotations

from typing import Any

PREFIX = "axolotl.integrations."
PLUGINS: dict[str, tuple[str, ...]] = {
    "cut_cross_entropy": ("cut_cross_entropy.CutCrossEntropyPlugin",),
    "densemixer": ("densemixer.DenseMixerPlugin", "densemixer.plugin.DenseMixerPlugin"),
    "diffusion": ("diffusion.DiffusionPlugin", "diffusion.plugin.DiffusionPlugin"),
    "expert_parallel": ("expert_parallel.ExpertParallelPlugin", "expert_parallel.plugin.ExpertParallelPlugin"),
    "grokfast": ("grokfast.GrokfastPlugin",),
    "hatchery": ("hatchery.HatcheryPlugin", "hatchery.plugin.HatcheryPlugin"),
    "kd": ("kd.KDPlugin",),
    "kernels": ("kernels.KernelsPlugin", "kernels.plugin.KernelsPlugin"),
    "liger": ("liger.LigerPlugin", "liger.plugin.LigerPlugin"),
    "llm_compressor": ("llm_compressor.LLMCompressorPlugin", "llm_compressor.plugin.LLMCompressorPlugin"),
    "lm_eval": ("lm_eval.LMEvalPlugin",),
    "mora": ("mora.MoraPlugin", "mora.plugin.MoraPlugin"),
    "nemo_gym": ("nemo_gym.NemoGymPlugin", "nemo_gym.plugin.NemoGymPlugin"),
    "spectrum": ("spectrum.SpectrumPlugin",),
    "swanlab": ("swanlab.SwanLabPlugin", "swanlab.plugins.SwanLabPlugin"),
}
"""Plugin package -> the names under it that load the plugin, without the `axolotl.integrations.` prefix."""


def names(plugin: str) -> tuple[str, ...]:
    """Every name `plugins:` may list the plugin by, the usual one first."""
    short = PLUGINS[plugin]
    return (*(PREFIX + n for n in short), *short)


def listed(plugins: Any, plugin: str) -> bool:
    """Whether `plugins` (as written or filled) lists the plugin under one of its names."""
    if not isinstance(plugins, list):
        return False
    known = names(plugin)
    return any(isinstance(p, str) and p in known for p in plugins)


def usual(plugin: str) -> str:
    """The name a message suggests."""
    return PREFIX + PLUGINS[plugin][0]
