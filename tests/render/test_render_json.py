"""The JSON report is written exactly as ``json.dumps(indent=2)`` would write it, only faster."""

from __future__ import annotations

import json
from typing import Any

import report_samples as rs
from hypothesis import given, settings
from hypothesis import strategies as st

from topoaudit.model.report import report_from_dict, report_to_dict
from topoaudit.render import render
from topoaudit.render.json import dumps

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12)
    | st.sampled_from([",\n  ", '"}, {"', '},\n      {"', "é"]),
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)


flat_objects = st.lists(st.dictionaries(st.text(max_size=4), scalars, min_size=1, max_size=4), max_size=5)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_same_bytes_as_json_dumps(document: Any) -> None:
    assert dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=3), flat_objects, max_size=3))
def test_arrays_of_flat_objects_same_bytes(document: Any) -> None:
    """Arrays of objects of plain values (the links) take the fast path, strings with braces and all."""
    assert dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


def test_reports_write_and_read_back() -> None:
    for report in (rs.identity_report(), rs.hostile_report()):
        text = render(report, "json")
        assert text == json.dumps(report_to_dict(report), indent=2, ensure_ascii=False) + "\n"
        assert report_from_dict(json.loads(text)) == report
