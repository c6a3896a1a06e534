"""How Axolotl's rules name a value in a message."""

from __future__ import annotations

from typing import Any

from trainspec.spec.wording import show

RELEASE = "0.18.0"
"""The release the family follows, as a message about its loader names it."""
FIXED_IN = "0.19.0"
"""The next release, where a message says it no longer fails on a config 0.18.0 cannot load."""


def named(name: str, value: Any) -> str:
    """`name = value` as the user wrote it, or `name is not set` (null and unwritten are the same upstream)."""
    return f"{name} is not set" if value is None else f"{name} = {show(value)}"
