"""Properties of the saved-report reader and of every renderer, over damaged reports.

A saved report is an attachment from someone else, damaged or edited by hand. Whatever one field holds -- an
index of -1 or 2**63, a NaN figure, a bus id with extra colons, a list emptied or doubled, a value of another
kind -- the reader either gives a report or refuses with InputError (exit 4), and a report it gives renders in
every format of ``topoaudit.formats`` without an exception, each format a property of its own; the JSON report
it renders is strict JSON.

Each damaged report is a real one with one to three of its fields replaced. The fields are drawn evenly over
the report's shapes (``gpus[*].index``, ``bench.groups[*].rows[*].busbw_gbps`` ...), not over its thousands
of leaves, most of which are CPU numbers.
"""

from __future__ import annotations

import copy
import json
import math
from functools import cache
from typing import Any

import pytest
import report_samples as rs
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_render_hostile import full_report

from topoaudit.errors import InputError
from topoaudit.formats import REPORT_FORMATS
from topoaudit.model.report import report_from_dict, report_to_dict
from topoaudit.render import render

Path = tuple[str | int, ...]

ODD_INTS = (-1, 0, 1, 7, 100, 2**31, 2**63 - 1, -(2**63), 2**64)
ODD_FLOATS = (math.nan, math.inf, -math.inf, 1e308, -1e308, -5.0, 0.0, 5e-324)
ODD_STRINGS = (
    "", "0000:18:00:00:00.0", "18:00", "\x1b[2J\x1b]0;owned\x07", "GPU-1", "GPU", "NV999", "NV-2", "PIX", "-1",
    "nan", "x" * 3000, "\u202e\u2028", "mlx5_0:1", "0x", "fail", "pass", "<b>",
)  # fmt: skip
FAILED = {"status": "failed", "source": "test", "reason": "damaged"}
# fields the renderers compute with (positions, keys, scales), drawn half the time
HOT = {
    "index", "gpus", "a", "b", "pci_bus_id", "busbw_gbps", "algbw_gbps", "size_bytes", "rows", "pairs", "nvlinks",
    "label", "code", "level", "numa_nodes", "cpu_affinity", "rank", "ranks", "nics", "links", "domains", "groups",
    "plateau_busbw_gbps", "expected_busbw_gbps", "ratio", "time_us", "values_gbps", "exit_code", "tp", "id",
}  # fmt: skip


@cache
def bases() -> tuple[dict[str, Any], ...]:
    """Real reports as saved JSON: every section present, a bench with pairs, and a plain 8-GPU box."""
    reports = (full_report(), rs.report_of(rs.split_machine(), bench=rs.bench_result()), rs.example_report("hgx-h100"))
    return tuple(json.loads(render(r, "json")) for r in reports)


@cache
def shapes(k: int) -> tuple[Path, ...]:
    """One concrete path per shape of base ``k`` (list positions folded together), containers included."""
    found: dict[tuple[str, ...], Path] = {}

    def walk(value: Any, path: Path) -> None:
        if path:
            found.setdefault(tuple("*" if isinstance(p, int) else p for p in path), path)
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, key))
        elif isinstance(value, list):
            for n, item in enumerate(value[:3]):  # the first few items stand for the rest
                walk(item, (*path, n))

    walk(bases()[k], ())
    return tuple(found.values())


@cache
def hot_shapes(k: int) -> tuple[Path, ...]:
    return tuple(p for p in shapes(k) if p[-1] in HOT or (isinstance(p[-1], int) and p[-2] in HOT))


def _replacement(value: Any) -> st.SearchStrategy[Any]:
    """Damage of the value's own kind mostly, sometimes a value of another kind."""
    other = st.sampled_from([None, True, "x", 3, 2.5, [], {}, FAILED])
    if isinstance(value, bool):
        return st.one_of(st.booleans(), other)
    if isinstance(value, int):
        return st.one_of(st.sampled_from(ODD_INTS), st.integers(), other)
    if isinstance(value, float):
        return st.one_of(st.sampled_from(ODD_FLOATS), st.floats(), other)
    if isinstance(value, str):
        return st.one_of(st.sampled_from(ODD_STRINGS), st.text(max_size=30), other)
    if isinstance(value, list):
        twice, firsts = value + value, value[:1]
        return st.one_of(st.sampled_from([[], twice, firsts, list(reversed(value))]), other)
    if isinstance(value, dict):
        dropped = [{k: v for k, v in value.items() if k != key} for key in value]
        return st.one_of(st.sampled_from(dropped or [{}]), st.just(FAILED), other)
    return other


Damage = tuple[int, tuple[tuple[Path, Any], ...]]  # a base, and the fields replaced in it


@st.composite
def damages(draw: st.DrawFn) -> Damage:
    """A base and one to three (field, value) replacements; shown as such when a case fails, not as 50 kB."""
    k = draw(st.integers(0, len(bases()) - 1))
    doc = copy.deepcopy(bases()[k])
    done: list[tuple[Path, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(hot_shapes(k)) | st.sampled_from(shapes(k)))
        parent = _parent(doc, path)
        if parent is None:  # an earlier damage changed the way
            continue
        value = draw(_replacement(parent[path[-1]]))
        parent[path[-1]] = value
        done.append((path, value))
    return k, tuple(done)


def _parent(doc: Any, path: Path) -> Any:
    for step in path[:-1]:
        try:
            doc = doc[step]
        except (KeyError, IndexError, TypeError):
            return None
    if not isinstance(doc, (dict, list)):  # an earlier damage made it a string or a number: nothing to assign into
        return None
    try:
        doc[path[-1]]
    except (KeyError, IndexError, TypeError):
        return None
    return doc


def damaged(damage: Damage) -> dict[str, Any]:
    """The base report with the damage done."""
    k, done = damage
    doc = copy.deepcopy(bases()[k])
    for path, value in done:
        _parent(doc, path)[path[-1]] = copy.deepcopy(value)
    return doc


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"bare {constant} in the JSON report")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("fmt", [f.name for f in REPORT_FORMATS])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(damage=damages())
@example(damage=(0, ((("captures", "bandwidth", 0, "values_gbps", 0), []),)))  # a copy-bandwidth row emptied
def test_a_damaged_report_is_read_or_refused_and_what_is_read_renders_in_each_format(fmt: str, damage: Damage) -> None:
    try:
        report = report_from_dict(damaged(damage))
    except InputError:
        return
    text = render(report, fmt)
    if fmt == "json":
        assert report_from_dict(_strict_json(text)) is not None  # it reads back, and it is JSON


@pytest.mark.parametrize("k", [0, 1, 2])
def test_the_undamaged_bases_read_back_as_they_were_written(k: int) -> None:
    assert report_to_dict(report_from_dict(bases()[k])) == bases()[k]
