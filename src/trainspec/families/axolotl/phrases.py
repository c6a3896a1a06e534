"""How Axolotl's rules name a value in a message."""

from __future__ import annotations

from typing import Any

from trainspec.report.wording import show


def named(name: str, value: Any) -> str:
    """`name = value` as the user wrote it, or `name is not set` (null and unwritten are the same upstream)."""
    return f"{name} is not set" if value is None else f"{name} = {show(value)}"
