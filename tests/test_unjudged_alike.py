"""Values the compiled validator cannot judge (dates, times, NaN), explained without python-jsonschema
where nothing else reads them: the same findings as python-jsonschema's whole walk."""

from __future__ import annotations

import datetime
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .test_fast_validator import DOCS, FAMILIES, VALUES, _leaves, _replaced, explained, explained_by_compiled

ODD = st.sampled_from(
    [math.nan, -math.inf, datetime.date(2026, 1, 1), datetime.time(12, 30), datetime.datetime(2026, 1, 1, 7, 32)]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_unjudged_values_explained_alike(data: st.DataObject) -> None:
    family = data.draw(st.sampled_from(FAMILIES))
    doc: Any = DOCS[data.draw(st.sampled_from(sorted(DOCS)))]
    for value in data.draw(st.lists(st.one_of(ODD, ODD, VALUES), min_size=1, max_size=3)):
        doc = _replaced(doc, data.draw(st.sampled_from(_leaves(doc))), value)
    if isinstance(doc, dict):
        whole = explained(family.schema, family.validator, doc, targeted=False)
        fast = explained_by_compiled(family.schema, family.validator, doc)
        skip = {p for p in _leaves(doc) if isinstance(_get(doc, p), float) and not math.isfinite(_get(doc, p))}
        # the check drops schema findings at a non-finite number (it reports that number itself)
        assert [f for f in fast if f[0] not in skip] == [f for f in whole if f[0] not in skip]


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data
