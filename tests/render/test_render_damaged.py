"""Saved reports damaged in the ways users and attackers damage them render in every format: GPU indexes that
are not 0..N-1, a bus id with extra colons, bench figures that are NaN, infinite, near the float limit or
negative. What a picture cannot place is left out and said so; the JSON report stays JSON."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import pytest
import report_samples as rs

from topoaudit.model.report import Report, report_from_dict
from topoaudit.render import FORMATS, render
from topoaudit.render.prometheus import dcgm_bus_id


def _saved(report: Report) -> dict:  # type: ignore[type-arg]
    return json.loads(render(report, "json"))


@pytest.fixture(scope="module")
def renumbered() -> Report:
    """The GPU list edited to indexes 100, -1 and a duplicate; the domains still name 0..7."""
    data = _saved(rs.report_of(rs.split_machine()))
    for gpu, index in zip(data["gpus"], (100, -1, 3, 3, 4, 5, 6, 7), strict=True):
        gpu["index"] = index
    return report_from_dict(data)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_gpu_indexes_that_are_not_0_to_n_render_in_every_format(renumbered: Report, fmt: str) -> None:
    assert render(renumbered, fmt)


def test_the_picture_marks_a_gpu_the_domains_name_but_the_gpu_list_lacks(renumbered: Report) -> None:
    page = render(renumbered, "html")
    assert page.count("not listed") == 3  # GPU0, GPU1 and GPU2: the list holds 100, -1 and 3 twice instead
    assert "GPU0 · not among the report&#x27;s GPUs" in page or "GPU0 · not among the report's GPUs" in page


@pytest.mark.parametrize("bus", ["0000:18:00:00:00.0", "18", "", "GPU-1", "zz:zz:zz.z"])
def test_a_bus_id_that_is_not_one_renders_as_prometheus_as_given(bus: str) -> None:
    report = rs.report_of(rs.split_machine(with_ids=True))
    gpus = (dataclasses.replace(report.machine.gpus[0], pci_bus_id=bus), *report.machine.gpus[1:])
    report = dataclasses.replace(report, machine=dataclasses.replace(report.machine, gpus=gpus))
    text = render(report, "prometheus")
    assert f'pci_bus_id="{bus}"' in text
    assert 'pci_bus_id="00000000:19:00.0"' in text  # the others keep dcgm-exporter's spelling


def test_short_bus_and_device_numbers_are_padded_as_nvml_writes_them() -> None:
    assert dcgm_bus_id("3b:0.0") == "00000000:3B:00.0"


def _bench_with(busbw: float) -> Report:
    report = rs.report_of(rs.split_machine(), bench=rs.bench_result())
    bench = report.bench
    group = bench.groups[0]  # type: ignore[union-attr]
    rows = tuple(dataclasses.replace(r, busbw_gbps=busbw, algbw_gbps=busbw) for r in group.rows[:3]) + group.rows[3:]
    group = dataclasses.replace(group, rows=rows, plateau_busbw_gbps=busbw)
    pairs = (dataclasses.replace(bench.pairs[0], busbw_gbps=busbw), *bench.pairs[1:])  # type: ignore[union-attr]
    bench = dataclasses.replace(bench, groups=(group, *bench.groups[1:]), pairs=pairs)  # type: ignore[arg-type]
    return dataclasses.replace(report, bench=bench)


@pytest.mark.parametrize("busbw", [math.nan, math.inf, -math.inf, 1e308, -5.0])
def test_impossible_bench_figures_render_as_html_and_the_plots_say_what_they_left_out(busbw: float) -> None:
    report = report_from_dict(_saved(_bench_with(busbw)))  # saved and read back, as `report` reads it
    page = render(report, "html")
    if busbw == 1e308:  # a figure near the float limit is drawn: the axis grows to it
        assert "row(s) not drawn" not in page
    else:
        assert "3 row(s) not drawn: no size, or a bus bandwidth that is negative or not a number" in page
        assert "1 pair(s) grey: a bus bandwidth that is negative or not a number" in page
    for fmt in FORMATS:
        assert render(report, fmt)


@pytest.mark.parametrize("busbw", [math.nan, math.inf, -math.inf])
def test_the_json_report_never_writes_bare_nan_or_infinity(busbw: float) -> None:
    text = render(_bench_with(busbw), "json")
    assert not re.search(r"\b(NaN|Infinity)\b", text)
    data = json.loads(text)
    assert data["bench"]["groups"][0]["rows"][0]["busbw_gbps"]["status"] == "failed"


def test_gpu_indexes_at_the_64_bit_limits_render_without_spanning_them() -> None:
    data = _saved(rs.report_of(rs.split_machine()))
    data["bottlenecks"][0]["gpus"][0] = -(2**63)  # a run from -2**63 to 7 is not spelled out, nor built
    data["domains"][0]["gpus"][0] = 2**63 - 1
    report = report_from_dict(data)
    for fmt in FORMATS:
        assert render(report, fmt)
