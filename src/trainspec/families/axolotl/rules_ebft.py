"""The checks of Axolotl's EBFT (energy-based fine-tuning) settings, `rl: ebft` with its `ebft` section.

0.18.0's after-validators read the section as a mapping (`(self.ebft or {}).get("mode")`), but pydantic
has made it an `EBFTConfig` by then, so every `rl: ebft` config with a section stops the loader with
an AttributeError (`ebft-loader-fails`); 0.19.0 reads the model's attribute and drops that rule
(`version_0_19_0.py`), adding the strided-mode checks that 0.18.0 never reaches.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.rules import ABSENT, Rule, rule

from .phrases import named


@rule("ebft-section-required", "error", "rl", "ebft", raw=True)
def ebft_section_required(rl: Any, ebft: Any) -> Iterator[str]:
    """`rl: ebft` reads its mode and sampling settings from the `ebft` section.

    Mirrors `EBFTValidationMixin.check_ebft_config_required`."""
    if rl == "ebft" and not (ebft if ebft is not ABSENT else None):
        yield f'rl = "ebft" needs an ebft section with at least mode: structured or strided ({named("ebft", ebft)})'


@rule("ebft-loader-fails", "error", "rl", "ebft", raw=True)
def ebft_loader_fails(rl: Any, ebft: Any) -> Iterator[str]:
    """Axolotl 0.18.0 cannot load any `rl: ebft` config: its EBFT checks call `.get` on the parsed
    section (an `EBFTConfig`, not a mapping) and fail with an AttributeError. 0.19.0 fixes it.

    Mirrors `EBFTValidationMixin.check_ebft_gradient_checkpointing_reentrant`."""
    if rl == "ebft" and isinstance(ebft, dict) and ebft:
        yield (
            "rl = \"ebft\" stops Axolotl 0.18.0's loader (AttributeError: 'EBFTConfig' object has no attribute "
            "'get', in its EBFT checks); upgrade to axolotl 0.19.0, which fixes it"
        )


RULES: list[Rule] = [ebft_section_required, ebft_loader_fails]
