"""Every fleet format renders from the one fleet report: JSON round-trips, JUnit has a case per node,
the HTML page lists nodes worst first with a picture per hardware group, Markdown has the host lines."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fleet_nodes import write_report, write_topo

from topoaudit.app import fleet as app
from topoaudit.errors import InputError
from topoaudit.model.fleet import FleetReport, fleet_from_dict
from topoaudit.render.fleet_formats import render_fleet


@pytest.fixture
def fleet(tmp_path: Path) -> FleetReport:
    for k in range(4):
        write_report(tmp_path, f"gpu{k + 1:02d}", busbw_scale=1.0 + 0.002 * k)
    write_report(tmp_path, "gpu05", busbw_scale=0.7)
    write_topo(tmp_path, "h100-a")
    return app.fleet(app.FleetRequest(paths=(str(tmp_path),)))


def test_json_round_trips_and_names_its_kind_and_schema(fleet: FleetReport) -> None:
    data = json.loads(render_fleet(fleet, "json"))
    assert data["kind"] == "topoaudit-fleet" and data["schema_version"] == 1 and data["verdict"] == "fail"
    assert fleet_from_dict(data) == fleet


def test_a_node_report_or_a_newer_fleet_schema_is_refused(fleet: FleetReport) -> None:
    data = json.loads(render_fleet(fleet, "json"))
    with pytest.raises(InputError, match="not a topoaudit fleet report"):
        fleet_from_dict({"schema_version": 1, "gate": {}})
    with pytest.raises(InputError, match="newer than this topoaudit understands"):
        fleet_from_dict({**data, "schema_version": 99})


def test_junit_has_one_case_per_node_and_fails_the_slow_one(fleet: FleetReport) -> None:
    root = ET.fromstring(render_fleet(fleet, "junit"))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "h100-a", "gate"}
    assert cases["gpu05"].find("failure") is not None and cases["gpu01"].find("failure") is None
    assert cases["gate"].find("failure") is not None
    assert root.get("failures") == "2"


def test_html_lists_nodes_worst_first_and_draws_each_group(fleet: FleetReport) -> None:
    page = render_fleet(fleet, "html")
    rows = page.split('<table class="nodes">', 1)[1].split("</table>", 1)[0]
    hosts = [cell.split("</td>", 1)[0] for cell in rows.split('<td class="host">')[1:]]
    assert hosts[0] == "gpu05" and set(hosts) == {"gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "h100-a"}
    assert page.count('class="plot fleet-group"') == 1  # the A100 nodes; the lone H100 node has no peers
    assert "One node: no other node of this hardware to compare it with." in page
    assert "<script" not in page and "scontrol update nodename=gpu05 state=drain" in page


def test_markdown_keeps_the_host_lines_people_grep(fleet: FleetReport) -> None:
    text = render_fleet(fleet, "markdown")
    assert "gpu05 | FAIL: fleet-figure-outlier" in text.splitlines()
    assert "gpu01 | PASS" in text.splitlines()


def test_fleet_imports_neither_torch_nor_pynvml(tmp_path: Path) -> None:
    write_report(tmp_path, "gpu01")
    probe = (
        "import sys\n"
        "from topoaudit.app import fleet as app\n"
        "from topoaudit.render.fleet_formats import FLEET_FORMATS, render_fleet\n"
        f"report = app.fleet(app.FleetRequest(paths=({str(tmp_path)!r},)))\n"
        "for fmt in FLEET_FORMATS: render_fleet(report, fmt)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'pynvml'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)
