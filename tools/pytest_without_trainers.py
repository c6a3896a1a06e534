"""Run pytest as if torch and the trainers' loaders (Axolotl, SpecForge) were not installed.

`python tools/pytest_without_trainers.py -m "not external"` shows the fast loop needs none of them: an
import of one fails as it would where it is absent.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

ABSENT = ("torch", "axolotl", "specforge", "transformers", "deepspeed", "vllm")


class _Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if name.partition(".")[0] in ABSENT:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


if __name__ == "__main__":
    sys.meta_path.insert(0, _Absent())
    import pytest

    sys.exit(pytest.main(sys.argv[1:]))
