"""Behaviours of the fleet pinned at their edges: the outlier rule's boundaries, the sizes a bench row must
have to be compared, a hostile host name in every table of every format, the terminal's width, the HTML's
group headings and plurals."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_runner import Run
from fleet_nodes import REPORT, write_report, write_snapshot

from topoaudit.app import fleet as app
from topoaudit.fleet.assemble import assemble
from topoaudit.fleet.outliers import outliers_of
from topoaudit.fleet.summary import Figure, Fingerprint, NodeSummary, figures
from topoaudit.model.fleet import FleetOptions, FleetReport
from topoaudit.model.report import report_from_dict
from topoaudit.render.fleet_formats import render_fleet

OPTIONS = FleetOptions()
H100 = Fingerprint("NVIDIA H100 80GB HBM3", 8, (8,), 8, (400.0,), "550.54.15")


def _fleet(values: dict[str, float], unit: str = "GB/s") -> FleetReport:
    nodes = [
        NodeSummary(host, f"{host}.json", node_verdict="pass", fingerprint=H100, figures=(Figure("busbw", unit, v),))
        for host, v in values.items()
    ]
    return assemble(nodes, OPTIONS, "test")


# --- the outlier rule at its boundaries -----------------------------------------------------------------


def test_exactly_three_nodes_reporting_a_figure_are_enough_for_the_rule() -> None:
    three = outliers_of("NIC mlx5_0 rate", "Gb/s", "g", ["a", "b", "c"], [400.0, 400.0, 200.0], OPTIONS)[1]
    two = outliers_of("NIC mlx5_0 rate", "Gb/s", "g", ["a", "b"], [400.0, 200.0], OPTIONS)[1]
    assert [o.host for o in three] == ["c"] and two == []


def test_a_figure_at_exactly_0_9x_the_median_warns_and_just_below_it_fails() -> None:
    at = _fleet({"n1": 100.0, "n2": 100.0, "n3": 100.0, "n4": 100.0, "slow": 90.0})
    below = _fleet({"n1": 100.0, "n2": 100.0, "n3": 100.0, "n4": 100.0, "slow": 89.9})
    (warned,) = [f for f in at.findings if f.code == "fleet-figure-outlier"]
    (failed,) = [f for f in below.findings if f.code == "fleet-figure-outlier"]
    assert warned.evidence["ratio"] == 0.9 and warned.severity.value == "warn"
    assert failed.severity.value == "fail"
    assert {n.host: n.status for n in at.nodes}["slow"] == "pass" and at.drain == ()
    assert [d.host for d in below.drain] == ["slow"]


def test_a_latency_at_exactly_1_over_0_9_of_the_median_warns() -> None:
    at = _fleet({"n1": 9.0, "n2": 9.0, "n3": 9.0, "n4": 9.0, "slow": 10.0}, unit="us")  # 9 / 10 = 0.9 exactly
    (finding,) = [f for f in at.findings if f.code == "fleet-figure-outlier"]
    assert finding.severity.value == "warn"


def test_a_bench_row_of_exactly_1_mib_is_compared_and_a_smaller_one_is_not() -> None:
    report = report_from_dict(json.loads(json.dumps(REPORT)))
    sizes = {row.size_bytes for group in report.bench.groups for row in group.rows}  # type: ignore[union-attr]
    assert 1 << 20 in sizes and (1 << 19) in sizes  # the real sweep has both
    names = {f.name for f in figures(report)}
    assert "busbw all @ 1 MiB" in names
    assert "busbw all @ 512 KiB" not in names


# --- a hostile host name in every table of every format --------------------------------------------------

HOSTILE = "gpu9<img src=x onerror=alert(1)>|**x**`$(id)`"


@pytest.fixture
def hostile(tmp_path: Path) -> FleetReport:
    for k in range(4):
        write_report(tmp_path, f"gpu{k + 1:02d}", busbw_scale=1.0 + 0.002 * k)
    path = write_report(tmp_path, "hostile", busbw_scale=0.7)  # an outlier: in the outlier table and drained
    data = json.loads(path.read_text())
    data["host"]["hostname"] = HOSTILE
    path.write_text(json.dumps(data))
    return app.fleet(app.FleetRequest(paths=(str(tmp_path),)))


def test_the_hostile_host_is_everywhere_a_host_is(hostile: FleetReport) -> None:
    assert {o.host for o in hostile.outliers} == {HOSTILE} and [d.host for d in hostile.drain] == [HOSTILE]


def test_html_escapes_the_host_in_every_table(hostile: FleetReport) -> None:
    page = render_fleet(hostile, "html")
    assert "<img" not in page and "onerror=alert(1)>" not in page
    escaped = "gpu9&lt;img src=x onerror=alert(1)&gt;|**x**`$(id)`"
    tables = re.findall(r"<table.*?</table>", page, re.S)
    assert len(tables) == 2  # the nodes and the outliers
    assert all(f'<td class="host">{escaped}</td>' in t for t in tables)


def test_markdown_escapes_the_host_in_every_table_and_no_block_can_be_closed(hostile: FleetReport) -> None:
    text = render_fleet(hostile, "markdown")
    fences = re.findall(r"^(`{3,})$", text, re.M)
    inside = False
    outside: list[str] = []
    for line in text.splitlines():
        if re.fullmatch(r"`{3,}", line):
            inside = not inside
            continue
        if not inside:
            outside.append(line)
    assert fences and all(len(f) > 1 + max(len(r) for r in re.findall(r"`+", HOSTILE)) for f in fences)
    prose = "\n".join(outside)
    assert "<img" not in prose
    for row in [line for line in outside if line.startswith("| ")]:  # every table row keeps its columns
        header = [line for line in outside if line.startswith("| ") and line.count("|") >= 4]
        assert len(re.findall(r"(?<!\\)\|", row)) in {len(re.findall(r"(?<!\\)\|", h)) for h in header}
    outlier_rows = [line for line in outside if "onerror" in line and line.startswith("| ")]
    assert len(outlier_rows) == len(hostile.outliers)  # the outlier table: one row per figure of the host
    assert all(row.startswith("| gpu9&lt;img src=x onerror=alert(1)&gt;\\|\\*\\*x\\*\\*\\`") for row in outlier_rows)


def test_console_and_junit_show_the_host_as_text(hostile: FleetReport) -> None:
    console = render_fleet(hostile, "console")
    assert f"{HOSTILE} | FAIL: fleet-figure-outlier" in console.splitlines()
    assert f"  {HOSTILE}: busbw all @ " in console  # the outlier table
    assert "nodename='gpu9<img src=x onerror=alert(1)>|**x**`$(id)`' state=drain" in console  # one shell word
    root = ET.fromstring(render_fleet(hostile, "junit"))
    assert HOSTILE in [case.get("name") for case in root.iter("testcase")]
    data = json.loads(render_fleet(hostile, "json"))
    assert HOSTILE in [n["host"] for n in data["nodes"]] and data["outliers"][0]["host"] == HOSTILE


def test_a_hostile_finding_message_cannot_break_out_of_the_drain_command() -> None:
    from topoaudit.fleet.drain import reason_line

    reason = reason_line('nvlink-degraded "$(reboot)" `id`')
    assert '"' not in reason and "$" not in reason and "`" not in reason


# --- the terminal's width, the HTML headings, plurals ------------------------------------------------------


def test_the_console_wraps_at_the_width_without_breaking_a_word(hostile: FleetReport) -> None:
    from topoaudit.render import RenderOptions

    text = render_fleet(hostile, "console", RenderOptions(width=60))
    words = set(render_fleet(hostile, "console", RenderOptions(width=10_000)).split())
    for line in text.splitlines():
        if line.lstrip().startswith("scontrol ") or " | " in line:
            continue  # each drain command and host line stays whole, for a shell and for grep
        assert len(line) <= 60 or " " not in line.strip(), line
    assert set(text.split()) == words  # every word whole: only the line breaks moved


def test_the_fleet_reads_the_terminal_width(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in range(3):
        write_report(tmp_path, f"gpu{k + 1:02d}")
    monkeypatch.setenv("COLUMNS", "72")
    _, out, _ = run("fleet", str(tmp_path))
    assert max(len(line) for line in out.splitlines() if not line.lstrip().startswith("scontrol")) <= 72


def test_html_names_each_group_once_and_charts_only_groups_with_peers(tmp_path: Path) -> None:
    for k in range(3):
        write_report(tmp_path, f"gpu{k + 1:02d}", busbw_scale=1.0 + 0.002 * k)
    lone = write_report(tmp_path, "lone")
    data = json.loads(lone.read_text())
    data["host"]["driver_version"] = "999.1"
    lone.write_text(json.dumps(data))
    report = app.fleet(app.FleetRequest(paths=(str(tmp_path),)))
    page = render_fleet(report, "html")
    for group in report.groups:
        assert len(re.findall(rf"<h3>[^<]*{re.escape(group.label)}</h3>", page)) == 1
        assert not re.search(rf"<text[^>]*>[^<]*{re.escape(group.label)}</text>", page)  # not again in the chart
    assert page.count('class="plot fleet-group"') == 1
    assert "<h3>1 node: " in page and "1 nodes" not in page


def test_counts_say_1_node_and_1_nic(tmp_path: Path, run: Run) -> None:
    path = write_snapshot(tmp_path, "snapshot-hgx-h100", "hgx01")
    data = json.loads(path.read_text())
    data["nics"] = data["nics"][:1]  # one NIC left in the box
    path.write_text(json.dumps(data))
    _, out, _ = run("fleet", str(tmp_path))
    assert "1 node (1 pass) in 1 hardware group; 0 to drain" in out
    assert "Drain list (0 nodes)" in out and "1 nodes" not in out and "the 1 node passes" in out
    assert "; 1 NIC @ 400 Gb/s;" in out and "1 NICs" not in out


def test_a_hostile_tray_name_is_escaped_in_the_rack_tables(tmp_path: Path) -> None:
    for k in range(3):
        write_snapshot(tmp_path, "snapshot-gb200-tray", f"tray{k}")
    path = write_snapshot(tmp_path, "snapshot-gb200-tray", "odd")
    data = json.loads(path.read_text())
    data["os"]["hostname"] = HOSTILE
    for gpu in data["gpus"]:
        gpu["fabric_status"] = "INSUFFICIENT_RESOURCES"  # it differs from its rack: named in the rack table
    path.write_text(json.dumps(data))
    report = app.fleet(app.FleetRequest(paths=(str(tmp_path),), rack_gpus=16))
    assert report.racks[0].odd_trays == (HOSTILE,)
    page = render_fleet(report, "html")
    racks = page.split('<h2 id="racks">', 1)[1].split("</table>", 1)[0]
    assert "gpu9&lt;img src=x onerror=alert(1)&gt;" in racks and "<img" not in page
    text = render_fleet(report, "markdown")
    (row,) = [line for line in text.splitlines() if line.startswith("| 5b1a2c3d")]
    assert len(re.findall(r"(?<!\\)\|", row)) == 6 and "&lt;img" in row and "<img" not in row
    assert f"trays that differ: {HOSTILE}" in " ".join(render_fleet(report, "console").split())
