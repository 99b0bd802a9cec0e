"""A saved report or snapshot is an attachment from someone else: whatever its JSON holds, reading it ends in a
report or in one sentence (exit 4), never a traceback, and writing one never produces text that is not JSON."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import report_samples as rs

from topoaudit.errors import InputError
from topoaudit.model.report import report_from_dict, report_from_json
from topoaudit.probe.snapshot import snapshot_from_json
from topoaudit.render import FORMATS, render

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture(scope="module")
def saved() -> str:
    return render(rs.report_of(rs.split_machine()), "json")


def _with(text: str, key: str, raw: str) -> str:
    """The report text with a raw JSON value (not valid Python data) added at the top level."""
    return text.rstrip().removesuffix("}") + f', "{key}": {raw}}}'


def test_an_integer_of_5000_digits_is_bad_input_not_a_crash(saved: str) -> None:
    text = saved.replace('"exit_code": 1', '"exit_code": ' + "9" * 5000, 1)
    with pytest.raises(InputError, match=r"^r\.json: the JSON holds an integer thousands of digits long"):
        report_from_json(text, "r.json")


def test_json_nested_3000_levels_is_bad_input_not_a_crash(saved: str) -> None:
    with pytest.raises(InputError, match=r"^r\.json: the JSON is nested more than a thousand levels deep"):
        report_from_json(_with(saved, "extras_x", "[" * 3000 + "]" * 3000), "r.json")


def test_free_form_values_nested_past_the_bound_are_refused_before_a_renderer_recurses(saved: str) -> None:
    data = json.loads(saved)
    deep: object = "x"
    for _ in range(900):  # json.loads takes it; the JSON and HTML writers recurse once a level
        deep = [deep]
    data["extras"] = {"note": deep}
    with pytest.raises(InputError, match=r"the report is damaged: \$\.extras\.note: nested more than 64 levels"):
        report_from_dict(data)


def test_an_integer_beyond_64_bits_in_a_typed_field_is_named_briefly(saved: str) -> None:
    data = json.loads(saved)
    data["gpus"][0]["index"] = 10**4000
    with pytest.raises(InputError) as refused:
        report_from_dict(data)
    assert "$.machine.gpus[0].index" in str(refused.value) and "an integer of 4001 digits" in str(refused.value)
    assert len(str(refused.value)) < 300


def test_snapshots_are_read_with_the_same_bounds() -> None:
    head = '{"kind": "topoaudit-snapshot", "schema_version": 2, "gpus": '
    with pytest.raises(InputError, match=r"^s\.json: the JSON holds an integer thousands of digits long"):
        snapshot_from_json(head + "1" * 5000 + "}", "s.json")
    with pytest.raises(InputError, match=r"^s\.json: the JSON is nested more than a thousand levels deep"):
        snapshot_from_json(head + "[" * 3000 + "]" * 3000 + "}", "s.json")
    with pytest.raises(InputError, match=r"^s\.json: not JSON \(line 1: "):
        snapshot_from_json(head, "s.json")


def test_a_nan_figure_is_written_as_a_failed_value_and_read_back_as_not_a_number() -> None:
    report = rs.report_of(rs.split_machine(), bench=rs.bench_result())
    group = report.bench.groups[0]  # type: ignore[union-attr]
    rows = (dataclasses.replace(group.rows[0], busbw_gbps=math.nan, algbw_gbps=math.inf), *group.rows[1:])
    group = dataclasses.replace(group, rows=rows, plateau_busbw_gbps=-math.inf)
    bench = dataclasses.replace(report.bench, groups=(group, *report.bench.groups[1:]))  # type: ignore[arg-type]
    report = dataclasses.replace(report, bench=bench, extras={"ratio": math.nan})
    text = render(report, "json")

    def refuse(constant: str) -> None:
        raise AssertionError(f"bare {constant} in the JSON report")

    data = json.loads(text, parse_constant=refuse)  # strict JSON: NaN and Infinity are not JSON
    row = data["bench"]["groups"][0]["rows"][0]
    assert row["busbw_gbps"] == {"status": "failed", "source": "json", "reason": "not a finite number (nan)"}
    assert row["algbw_gbps"]["reason"] == "not a finite number (inf)"
    assert data["bench"]["groups"][0]["plateau_busbw_gbps"]["reason"] == "not a finite number (-inf)"
    assert data["extras"]["ratio"]["status"] == "failed"
    back = report_from_json(text, "r.json")
    assert math.isnan(back.bench.groups[0].rows[0].busbw_gbps)  # type: ignore[union-attr]
    assert render(back, "json") == text


def test_a_measured_count_beyond_64_bits_is_named_like_any_integer_field() -> None:
    """A 400-digit #wrong count used to load and then crash the Prometheus renderer (exit 5)."""
    data = json.loads(render(rs.report_of(rs.split_machine(), bench=rs.bench_result()), "json"))
    data["bench"]["groups"][0]["rows"][0]["wrong"] = 10**400
    with pytest.raises(InputError) as refused:
        report_from_dict(data)
    assert "$.bench.groups[0].rows[0].wrong" in str(refused.value) and "an integer of 401 digits" in str(refused.value)


def test_a_figure_of_400_digits_reads_as_beyond_any_float_and_renders_in_every_format() -> None:
    """An integer in a float field too large for a float used to end in OverflowError (exit 5)."""
    data = json.loads(render(rs.report_of(rs.split_machine(), bench=rs.bench_result()), "json"))
    data["bench"]["groups"][0]["rows"][0]["busbw_gbps"] = 10**400
    data["bench"]["groups"][0]["expected_busbw_gbps"] = -(10**400)
    report = report_from_dict(data)
    group = report.bench.groups[0]  # type: ignore[union-attr]
    assert (group.rows[0].busbw_gbps, group.expected_busbw_gbps) == (math.inf, -math.inf)
    for fmt in FORMATS:
        assert render(report, fmt)
