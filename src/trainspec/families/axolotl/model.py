"""The typed Axolotl config: the generated model, taking fields by name as well as by alias.

pydantic reserves `model_config`, so the generated model names that key's field `model_config_`
(alias `model_config`); taking fields by name too, as Axolotl's own class does
(`populate_by_name`), lets a dumped config load again.
"""

from __future__ import annotations

from pydantic import ConfigDict

from trainspec.generated.axolotl import AxolotlConfig as GeneratedAxolotlConfig
from trainspec.generated.axolotl_0_19_0 import AxolotlConfig as GeneratedAxolotlConfig019


class AxolotlConfig(GeneratedAxolotlConfig):
    """An Axolotl 0.18.0 config."""

    model_config = ConfigDict(populate_by_name=True)


class AxolotlConfig019(GeneratedAxolotlConfig019):
    """An Axolotl 0.19.0 config."""

    model_config = ConfigDict(populate_by_name=True)
