"""SpecForge's conditional default (reference §3.1), shared by the checker and the typed model."""

from __future__ import annotations

from typing import Any


def normalize(data: dict[str, Any]) -> None:
    """Without a written `training.role`, a disaggregated deployment runs with role "auto" (not "all").

    Runs after migration and overrides, before validation, so the default
    follows the final `deployment.mode`. A `training` or `deployment` that is
    not a mapping is left for the schema to report.
    """
    deployment = data.get("deployment")
    if not isinstance(deployment, dict) or deployment.get("mode") != "disaggregated":
        return
    training = data.setdefault("training", {})
    if isinstance(training, dict):
        training.setdefault("role", "auto")
