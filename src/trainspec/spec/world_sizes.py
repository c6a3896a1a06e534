"""World-size lists as people write them: `8`, `8,16,64`, `1..64`, and mixes (`8,16..18`).

The command line, the project configuration and file directives all take this syntax.
"""

from __future__ import annotations

import itertools

from trainspec.spec.errors import InvalidValue

MAX_WORLD_SIZES = 65536
"""More sizes than any cluster has ranks to try: a typo such as `1..1000000000` is refused, not enumerated."""


def parse_world_size(text: str) -> int:
    """A whole number of at least 1; ValueError with a sentence otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise InvalidValue(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise InvalidValue(f"must be at least 1, got {value}")
    return value


def parse_world_sizes(text: str) -> tuple[int, ...]:
    """The sizes `text` lists, in order, without repeats; ranges include both ends."""
    sizes: list[int] = []
    for part in text.split(","):
        first, dots, last = part.strip().partition("..")
        low = parse_world_size(first.strip())
        high = parse_world_size(last.strip()) if dots else low
        if high < low:
            raise InvalidValue(f"the range {part.strip()!r} is empty (its end is below its start)")
        if high - low >= MAX_WORLD_SIZES or len(sizes) + high - low >= MAX_WORLD_SIZES:
            raise InvalidValue(f"at most {MAX_WORLD_SIZES} world sizes at once")
        sizes.extend(range(low, high + 1))
    return tuple(dict.fromkeys(sizes))


LISTED = 12
"""Runs of sizes `sizes_text` writes out before it summarises the rest: a line stays readable at 1..65536."""


def sizes_text(sizes: tuple[int, ...] | list[int], limit: int = LISTED) -> str:
    """Sizes as a person reads them back, in the syntax `--world-size` takes: runs of three or more as ranges
    (`1..11, 13, 24..35`), in order.

    Past `limit` runs the middle is left out (`...`) and the count is given, so a long list stays one line.
    """
    ordered = sorted(set(sizes))
    step = ordered[1] - ordered[0] if len(ordered) > limit else 0
    if step > 1 and ordered[0] % step == 0 and all(b - a == step for a, b in itertools.pairwise(ordered)):
        return f"every multiple of {step} from {ordered[0]} to {ordered[-1]} ({len(ordered):,} sizes)"
    runs: list[tuple[int, int]] = []
    for size in ordered:
        if runs and size == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], size)
        else:
            runs.append((size, size))
    words = [str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}..{b}" for a, b in runs]
    if len(words) > limit:
        keep = limit // 2
        words = [*words[:keep], "...", *words[-keep:]]
        return ", ".join(words) + f" ({len(ordered):,} sizes)"
    return ", ".join(words)
