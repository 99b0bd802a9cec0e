"""A report listing more than any box has (120,000 NICs in a 16 MB file) renders on the console and as Markdown in
a fraction of a second, as the HTML does: each table of the shared row model lists the first rows, says what it
left out, and the report opens with the sentence naming it all; the JSON report keeps everything."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest
import report_samples as rs

from topoaudit.model.machine import Gpu, Link, Nic, PathLevel
from topoaudit.model.nccl_topo import Captures, NcclGpu, NcclTopology
from topoaudit.model.report import InputIssue, Report
from topoaudit.model.values import Unsupported
from topoaudit.render import render
from topoaudit.render.cells import MAX_GPUS_LISTED, MAX_LISTED
from topoaudit.render.rows import view

NICS = 120_000
BANNER = (
    "This view lists part of the report: it leaves out 119,744 of its 120,000 NICs. The JSON report holds them all."
)


@pytest.fixture(scope="module")
def crowded() -> Report:
    report = rs.report_of(rs.split_machine(), tp=8)
    nics = tuple(Nic(f"NIC{k}", device=f"mlx5_{k}") for k in range(NICS))
    links = report.machine.links + tuple(Link("GPU0", f"NIC{k}", "SYS", PathLevel.SYS) for k in range(NICS))
    return dataclasses.replace(report, machine=dataclasses.replace(report.machine, nics=nics, links=links))


def test_the_row_model_lists_the_first_nics_and_says_how_many_it_left_out(crowded: Report) -> None:
    v = view(crowded)
    assert v.nics is not None and len(v.nics.rows) == MAX_LISTED
    assert v.nics.notes == ("Listed in part: 119,744 of its 120,000 NICs are left out (report.json holds them all).",)
    assert v.left_out == ("119,744 of its 120,000 NICs",)


@pytest.mark.parametrize("fmt", ["console", "markdown"])
def test_120000_nics_render_quickly_and_the_report_opens_with_what_it_left_out(crowded: Report, fmt: str) -> None:
    started = time.perf_counter()
    text = render(crowded, fmt)
    assert time.perf_counter() - started < 2  # 5-7 s through the command line before the row model was bounded
    assert " ".join(BANNER.split()) in " ".join(text.replace("│", " ").split())  # the console wraps it in its panel
    assert "FAIL" in text  # the verdict is the report's
    if fmt == "markdown":
        assert f"> **Shortened.** {BANNER}" in text
        assert "| NIC255 |" in text.replace("**", "") and "NIC256 " not in text.replace("**", "")


def test_the_json_report_keeps_every_nic(crowded: Report) -> None:
    assert len(json.loads(render(crowded, "json"))["nics"]) == NICS


def test_gpus_input_issues_and_ncclss_gpus_past_their_bounds_are_left_out_and_named() -> None:
    report = rs.report_of(rs.split_machine())
    gpus = tuple(Gpu(index=i, name="NVIDIA H100", numa_nodes=(0,)) for i in range(MAX_GPUS_LISTED + 6))
    issues = tuple(InputIssue(k, "ignored", f"line {k} is not a row") for k in range(1, 301))
    dumped = tuple(
        NcclGpu(i, f"0000:{i % 256:02x}:00.0", 90, i, True, 0, "", 0, 0.0, (), Unsupported("t", "none"), "sm90")
        for i in range(MAX_GPUS_LISTED + 1)
    )
    report = dataclasses.replace(
        report,
        machine=dataclasses.replace(report.machine, gpus=gpus),
        input_issues=issues,
        captures=Captures(NcclTopology("topology", "1", "nccl", gpus=dumped)),
    )
    v = view(report)
    assert v.left_out == (
        "6 of its 1,030 GPUs",
        "44 of its 300 input issues",
        "1 of its 1,025 GPUs in NCCL's topology",
    )
    assert v.gpus is not None and len(v.gpus.rows) == MAX_GPUS_LISTED
    assert v.input_issues[-1] == "input line 256 (ignored): line 256 is not a row."
    nccl_gpus = v.facts[0].tables[0]
    assert len(nccl_gpus.rows) == MAX_GPUS_LISTED and nccl_gpus.notes[0].startswith("Listed in part: 1 of its 1,025")
    page = render(report, "html")
    assert (
        "This page lists part of the report: it leaves out 44 of its 300 input issues; 6 of its 1,030 GPUs; "
        "1 of its 1,025 GPUs in NCCL&#39;s topology. The JSON report holds them all." in page
    )


def test_a_report_within_the_bounds_says_nothing_of_it() -> None:
    v = view(rs.report_of(rs.split_machine()))
    assert v.left_out == () and all(not t.notes for t in (v.gpus, v.nics, v.domains) if t is not None)
    assert "Shortened" not in render(rs.report_of(rs.split_machine()), "markdown")
