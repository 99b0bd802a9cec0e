"""Fleet Markdown escapes what the fleet's inputs say as the node report's Markdown does: a host name from an
expected-nodes list cannot open HTML in a ticket or a wiki page."""

from __future__ import annotations

import shutil
from pathlib import Path

import topoaudit.examples
from topoaudit.app import fleet as app
from topoaudit.render.fleet_formats import render_fleet

MATRIX = Path(topoaudit.examples.__file__).parent / "hgx-h100.txt"  # a real 8-GPU `topo -m` capture


def test_a_hostile_expected_host_name_is_escaped_in_the_fleet_findings(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    shutil.copy(MATRIX, reports / "gpu01.topo.txt")
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("gpu01\n<script>alert(1)<|gpu_9\n", encoding="utf-8")
    report = app.fleet(app.FleetRequest(paths=(str(reports),), expect_nodes=str(hosts)))
    finding = next(line for line in render_fleet(report, "markdown").splitlines() if "fleet-node-missing" in line)
    assert "<script>" not in finding
    assert "&lt;script&gt;alert(1)&lt;\\|gpu\\_9 was expected" in finding


def test_terminal_escapes_from_a_node_never_reach_the_fleet_console(tmp_path: Path) -> None:
    import dataclasses

    reports = tmp_path / "reports"
    reports.mkdir()
    shutil.copy(MATRIX, reports / "gpu01.topo.txt")
    report = app.fleet(app.FleetRequest(paths=(str(reports),)))
    node = dataclasses.replace(report.nodes[0], host="gpu01\x1b]0;owned\x07\x1b[2J")
    console = render_fleet(dataclasses.replace(report, nodes=(node, *report.nodes[1:])), "console")
    assert "\x1b" not in console and "\x07" not in console
    assert "gpu01\ufffd]0;owned\ufffd\ufffd[2J | PASS" in console
