"""Where trainspec's data lives: inside the installed package, or in the source checkout.

The wheel carries the canonical schemas as `trainspec/schemas/` and the
generated models as modules of `trainspec.generated` (see pyproject.toml).
Run from a source checkout (an editable install, or tests against `src/`),
the same data is read from the repository's top-level `schema/` and
`generated/` folders, so there is one copy of each and nothing to sync.
What trainspec keeps between runs lives in the user's cache folder (`cache_dir`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

_PACKAGE = Path(__file__).resolve().parent.parent
_CHECKOUT = _PACKAGE.parent.parent


def _package() -> Traversable | Path:
    """trainspec's package folder: the folder of this file, which is what `importlib.resources.files`
    gives for a package on disk; asked of it only otherwise (a zip), as importing it takes ~10 ms."""
    if os.path.isfile(__file__):
        return _PACKAGE
    from importlib.resources import files

    return files("trainspec")


def schema_dir() -> Traversable | Path:
    """The folder holding the built-in families' canonical schemas."""
    packaged = _package() / "schemas"
    return packaged if packaged.is_dir() else _CHECKOUT / "schema"


def generated_source_dir() -> Path | None:
    """The checkout's `generated/` folder, when trainspec runs from a source checkout (no packaged models)."""
    packaged = _PACKAGE / "generated"
    if any(module.name != "__init__.py" for module in packaged.glob("*.py")):
        return None
    folder = _CHECKOUT / "generated"
    return folder if folder.is_dir() else None


CACHE_DIR_VARIABLE = "TRAINSPEC_CACHE_DIR"


def cache_dir() -> Path | None:
    """trainspec's folder in the user's cache: `TRAINSPEC_CACHE_DIR`, else `$XDG_CACHE_HOME/trainspec`, else
    `~/.cache/trainspec` (`%LOCALAPPDATA%\\trainspec` on Windows); None when there is none (no home folder).
    What is kept there only saves work: anything found there that is unreadable, malformed or not the
    user's own is ignored, and deleting the folder loses nothing."""
    given = os.environ.get(CACHE_DIR_VARIABLE, "")
    if given:
        return Path(os.path.abspath(os.path.expanduser(given)))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):  # a relative one is to be ignored (the XDG Base Directory specification)
        return Path(xdg) / "trainspec"
    if sys.platform == "win32" and os.path.isabs(os.environ.get("LOCALAPPDATA", "")):
        return Path(os.environ["LOCALAPPDATA"]) / "trainspec"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "trainspec" if os.path.isabs(home) else None
