"""Where trainspec's data lives: inside the installed package, or in the source checkout.

The wheel carries the canonical schemas as `trainspec/schemas/` and the
generated models as modules of `trainspec.generated` (see pyproject.toml).
Run from a source checkout (an editable install, or tests against `src/`),
the same data is read from the repository's top-level `schema/` and
`generated/` folders, so there is one copy of each and nothing to sync.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent.parent


def schema_dir() -> Traversable | Path:
    """The folder holding the built-in families' canonical schemas."""
    packaged = files("trainspec") / "schemas"
    return packaged if packaged.is_dir() else _CHECKOUT / "schema"


def generated_source_dir() -> Path | None:
    """The checkout's `generated/` folder, when trainspec runs from a source checkout (no packaged models)."""
    packaged = Path(__file__).parent / "generated"
    if any(module.name != "__init__.py" for module in packaged.glob("*.py")):
        return None
    folder = _CHECKOUT / "generated"
    return folder if folder.is_dir() else None
