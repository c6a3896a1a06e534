"""Integers too long to write in decimal: refused where they enter, so nothing downstream chokes on them."""

from __future__ import annotations

import sys


def in_digit_limit(value: int) -> int:
    """`value`, or ValueError when it is too long to write in decimal.

    Python refuses to convert between text and integers of more than
    `sys.get_int_max_str_digits()` digits (reading decimal text raises; octal and
    hexadecimal do not), and every message, schema check and report writes values
    in decimal, so readers keep such integers out of the data.
    """
    str(value)  # raises ValueError past the limit
    return value


def too_many_digits() -> str:
    """Why an integer is refused (see `in_digit_limit`)."""
    limit = sys.get_int_max_str_digits()
    return (
        f"this integer has too many digits (more than {limit:,} in decimal, the most Python handles); "
        "no config value is this large"
    )
