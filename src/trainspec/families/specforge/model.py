"""The typed SpecForge config: the generated model plus the values SpecForge derives (reference §3)."""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import model_validator

from trainspec.generated.specforge import RunConfig as GeneratedRunConfig
from trainspec.generated.specforge_0_2_0 import RunConfig as GeneratedRunConfig020
from trainspec.generated.specforge_a6b6b02 import RunConfig as GeneratedRunConfigA6b6b02

from .normalize import normalize


class _Derived:
    """The role default and derived values, the same for every SpecForge version."""

    data: Any
    training: Any

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


class RunConfig(_Derived, GeneratedRunConfig):
    """A SpecForge run config (08eaeac) with its derived data mode and effective process role."""


class RunConfig020(_Derived, GeneratedRunConfig020):
    """A SpecForge run config (the 0.2.0 release) with its derived data mode and effective process role."""


class RunConfigA6b6b02(_Derived, GeneratedRunConfigA6b6b02):
    """A SpecForge run config (a6b6b02) with its derived data mode and effective process role."""
