"""Examples of the EBFT rules (`rules_ebft.py`), each checked against Axolotl 0.18.0's own loader."""

from __future__ import annotations

from trainspec.rules.examples import Example

from .examples_data_training import run

EBFT = "ebft:\n  mode: structured\n"

EXAMPLES: dict[str, Example] = {
    "ebft-section-required": Example(run("rl: ebft\n"), run("rl: dpo\n"), fmt="yaml"),
    "ebft-loader-fails": Example(run("rl: ebft\n" + EBFT), run(EBFT), fmt="yaml"),
}
