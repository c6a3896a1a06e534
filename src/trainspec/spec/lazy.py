"""A mapping built when it is first read: what a family declares for its documentation and no check reads.

`Family.examples` is one: the modules that hold a family's examples (and the version deltas
folded into them, `versions.fold`) are imported only by `trainspec explain`, the reference docs,
the language server's hovers and the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LazyMapping(Mapping[K, V]):
    """The mapping `build` returns, called at the first read. Whatever `build` raises (a version's delta
    naming an id its base lacks) is raised at that read, and at each read after it."""

    __slots__ = ("_build", "_built")

    def __init__(self, build: Callable[[], Mapping[K, V]]) -> None:
        self._build = build
        self._built: dict[K, V] | None = None

    def _items(self) -> dict[K, V]:
        if self._built is None:
            self._built = dict(self._build())
        return self._built

    def __getitem__(self, key: K) -> V:
        return self._items()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __contains__(self, key: object) -> bool:
        return key in self._items()

    def __repr__(self) -> str:
        return f"LazyMapping({self._built!r})" if self._built is not None else "LazyMapping(<not read yet>)"
