"""The typed SpecForge config: the generated model plus the values SpecForge derives (reference §3)."""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import model_validator

from ...generated.specforge import RunConfig as GeneratedRunConfig
from .normalize import normalize


class RunConfig(GeneratedRunConfig):
    """A SpecForge run config with its derived data mode and effective process role."""

    @model_validator(mode="before")
    @classmethod
    def _conditional_role(cls, data: Any) -> Any:
        """Apply the role default of §3.1 when the model is built straight from a mapping, too."""
        if isinstance(data, dict):
            data = copy.deepcopy(data)
            normalize(data)
        return data

    @property
    def mode(self) -> Literal["online", "offline"]:
        """ "offline" when the run reads precomputed hidden states, else "online" (not a config key)."""
        return "offline" if self.data.hidden_states_path else "online"

    @property
    def role(self) -> str:
        """The process role in effect: `training.role`, which defaults to "auto" on a disaggregated deployment."""
        return self.training.role
