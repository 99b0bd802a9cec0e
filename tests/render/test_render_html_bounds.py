"""A report listing more than any box has (120,000 NICs in a 16 MB file) renders as HTML in a second: the page
lists the first 256 and says what it left out; the verdict, findings and JSON report are untouched."""

from __future__ import annotations

import dataclasses
import re
import time

import pytest
import report_samples as rs

from topoaudit.model.machine import Link, Nic, PathLevel
from topoaudit.model.nccl_topo import Captures, NcclNet, NcclTopology
from topoaudit.model.report import InputIssue, Report
from topoaudit.render import render
from topoaudit.render.html import MAX_LISTED

NICS = 120_000


@pytest.fixture(scope="module")
def crowded() -> Report:
    report = rs.report_of(rs.split_machine(), tp=8)
    nics = tuple(Nic(f"NIC{k}", device=f"mlx5_{k}") for k in range(NICS))
    links = report.machine.links + tuple(Link("GPU0", f"NIC{k}", "SYS", PathLevel.SYS) for k in range(NICS))
    machine = dataclasses.replace(report.machine, nics=nics, links=links)
    return dataclasses.replace(report, machine=machine)


def test_120000_nics_render_as_html_quickly_and_the_page_says_what_it_left_out(crowded: Report) -> None:
    started = time.perf_counter()
    page = render(crowded, "html")
    assert time.perf_counter() - started < 5  # 34 s before the page was bounded
    banner = re.search(r'<p class="banner" id="left-out"><strong>Shortened\.</strong> (.*?)</p>', page)
    assert banner is not None
    assert banner.group(1) == (
        "This page lists part of the report: it leaves out 119,744 of its 120,000 NICs and their links. "
        "The JSON report holds them all."
    )
    nic_table = page[page.index('<h2 id="nics">') :]
    nic_table = nic_table[: nic_table.index("</table>")]
    assert nic_table.count("<tr>") == MAX_LISTED + 1  # the header and the first 256 NICs
    assert "NIC255" in nic_table and "NIC256<" not in nic_table
    assert '<span class="verdict v-fail">FAIL</span>' in page  # the verdict is the report's


def test_input_issues_nvswitches_and_nccl_nics_past_the_bound_are_left_out_and_named() -> None:
    report = rs.report_of(rs.split_machine())
    issues = tuple(InputIssue(k, "ignored", f"line {k} is not a row") for k in range(1, 301))
    switches = tuple(f"0000:{k:02x}:00.0" for k in range(300))
    nets = tuple(NcclNet(f"NIC{k}", f"mlx5_{k}", f"0000:{k:04x}:00.0", 400000, 50.0, True) for k in range(300))
    report = dataclasses.replace(
        report,
        input_issues=issues,
        machine=dataclasses.replace(report.machine, nvswitches=switches),
        captures=Captures(NcclTopology("topology", "1", "nccl", nets=nets)),
    )
    page = render(report, "html")
    assert (
        "it leaves out 44 of its 300 NVSwitches; 44 of its 300 input issues; 44 of the 300 NICs in NCCL&#39;s "
        "topology." in page
    )
    assert "line 256 is not a row" in page and "line 257 is not a row" not in page


def test_a_report_within_the_bound_is_listed_whole() -> None:
    report = rs.report_of(rs.split_machine())
    nics = tuple(Nic(f"NIC{k}", device=f"mlx5_{k}") for k in range(MAX_LISTED))
    page = render(dataclasses.replace(report, machine=dataclasses.replace(report.machine, nics=nics)), "html")
    assert 'id="left-out"' not in page and f"mlx5_{MAX_LISTED - 1}" in page
