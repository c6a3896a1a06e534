"""Project overlays: extend a family version without forking it.

A team whose trainer registers its own optimizers, losses or routers, or
adds keys and sections, writes an overlay file (JSON):

    {
      "family": "kempnerforge@5666d0d",
      "name": "acme",
      "patch": [{"op": "add", "path": "/properties/acme", "value": {"type": "object"}}],
      "registries": {"optimizer.name": ["acme_adamw"]},
      "model": "acme_models:JobConfig"
    }

`patch` is a JSON Patch (RFC 6902) against the family version's canonical
schema, so the checks and the editor schema (`trainspec schema --overlay`)
both see the new keys and values; `registries` adds names to the family's
registry rules; `model` (optional) names the typed model `load` builds, for
instance one generated from the overlaid schema with
`tools/generate_models.py --schema` (the family's own model refuses keys it
does not know). The model must come from an installed package (an entry point
of the `trainspec.models` group): an overlay lives in a repository, and
trainspec imports no module a repository names. The overlay is the family version `<family>@<version>+<name>`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from trainspec.entry_points import entry_points
from trainspec.errors import TrainspecError
from trainspec.families import Family, every_version, get_family, register
from trainspec.read.files import ReadError, read_text

MODELS_GROUP = "trainspec.models"
"""The entry-point group of installed packages that offer a typed model for an overlay."""
FIELDS = frozenset({"family", "name", "patch", "registries", "model", "description"})


class OverlayError(TrainspecError):
    """An overlay file that cannot be used (a usage problem: exit status 2)."""


def load_overlay(path: str | Path) -> Family:
    """The family version an overlay file describes, registered so that every process can find it by id."""
    try:
        spec = json.loads(read_text(str(path)))
    except (ReadError, json.JSONDecodeError) as exc:
        raise OverlayError(f"cannot read the overlay {path}: {exc}") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("family"), str) or not isinstance(spec.get("name"), str):
        raise OverlayError(f'{path}: an overlay is a JSON object with "family" and "name" (text)')
    unknown = sorted(set(spec) - FIELDS)
    if unknown:
        raise OverlayError(f"{path}: unknown overlay keys {', '.join(unknown)}; known: {', '.join(sorted(FIELDS))}")
    base = get_family(spec["family"])
    patch = spec.get("patch", [])
    registries = spec.get("registries", {})
    if not isinstance(patch, list) or not all(isinstance(op, dict) for op in patch):
        raise OverlayError(f'{path}: "patch" must be a list of JSON Patch operations')
    if not isinstance(registries, dict) or not all(_names(v) for v in registries.values()):
        raise OverlayError(f'{path}: "registries" maps config paths to lists of names')
    merged = {p: tuple(base.registries.get(p, ())) + tuple(names) for p, names in registries.items()}
    family = replace(
        base,
        version=f"{base.version}+{spec['name']}" if base.version else spec["name"],
        description=str(spec.get("description", base.description)),
        schema_patch=(*base.schema_patch, *patch),
        registries={**base.registries, **merged},
        model=_installed_model(spec.get("model", base.model), path),
        extends=base.id,
    )
    try:
        family.schema  # noqa: B018 (a cached property: applying the patch here reports a bad one now)
    except Exception as exc:
        raise OverlayError(f"{path}: the patch does not apply to {base.id}: {exc}") from None
    register(family)
    return family


def _installed_model(value: Any, path: str | Path) -> str:
    """`module:Name` of the model `load` builds, only if an installed package offers it: a family's own
    model, or an entry point of the `trainspec.models` group (by its name or its value). An overlay is
    repository data, and a module it names could be a file of that repository: it is never imported."""
    offered = {e.name: e.value for e in entry_points(MODELS_GROUP)}
    known = {*offered.values(), *(f.model for f in every_version().values())}
    if isinstance(value, str) and (value in known or value in offered):
        return offered.get(value, value)
    raise OverlayError(
        f'{path}: "model" {value!r} is not a model an installed package offers; trainspec never imports a module '
        f"an overlay names: publish the model as an entry point of the `{MODELS_GROUP}` group "
        f'(`acme = acme_models:JobConfig`) and name it here ("acme"), or leave `model` out'
    )


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
