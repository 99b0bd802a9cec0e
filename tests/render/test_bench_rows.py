"""The ranks of a bench group as a table cell: a run as a range, anything else listed, never a crash."""

from __future__ import annotations

import pytest

from topoaudit.render.bench_rows import ranks_text


@pytest.mark.parametrize(
    ("ranks", "text"),
    [
        ((0, 1, 2, 3), "0-3"),
        ((0, 2, 5), "0,2,5"),
        ((0, 1), "0,1"),
        ((3, 2, 1), "3,2,1"),
        ((0, 1, 1, 3), "0,1,1,3"),
        # a damaged saved report: one rank at -2**63 made the range as long as the span and crashed every render
        ((-(2**63), 0, 1), f"{-(2**63)},0,1"),
    ],
)
def test_ranks_read_as_a_range_only_when_they_are_one(ranks: tuple[int, ...], text: str) -> None:
    assert ranks_text(ranks) == text
