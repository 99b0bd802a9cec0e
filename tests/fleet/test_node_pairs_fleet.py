"""`topoaudit fleet` over a node-pair sweep: the node the sweep names is the one that fails and is drained, not
the node whose report carries the sweep (rank 0's). The sweep is a recorded four-host run with host C's link
shaped (tests/fixtures/node_pairs/PROVENANCE.tsv), placed in a real A100 node report of host A."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import Run
from fleet_nodes import node_report, write_report

SWEEP = Path(__file__).parents[1] / "fixtures" / "node_pairs" / "bench-nodepairs-4hosts-hostC-shaped.json"


def _write_sweeping_node(directory: Path) -> None:
    """host A's node report carrying the four-host node-pair sweep that rank 0 ran there."""
    report = node_report("hostA")
    report["bench"] = json.loads(SWEEP.read_text(encoding="utf-8"))["bench"]
    (directory / "hostA.json").write_text(json.dumps(report), encoding="utf-8")


def test_the_sweep_fails_and_drains_the_slow_node_not_the_node_that_ran_it(tmp_path: Path, run: Run) -> None:
    _write_sweeping_node(tmp_path)
    for host in ("hostB", "hostC", "hostD"):
        write_report(tmp_path, host)
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    assert code == 1
    fleet = json.loads(out)
    status = {n["host"]: (n["status"], n["codes"]) for n in fleet["nodes"]}
    assert status == {
        "hostA": ("pass", []),
        "hostB": ("pass", []),
        "hostC": ("fail", ["bench-node-slow"]),
        "hostD": ("pass", []),
    }
    assert [d["host"] for d in fleet["drain"]] == ["hostC"]
    assert [(f["code"], f["hosts"]) for f in fleet["findings"]] == [("bench-node-slow", ["hostC"])]


def test_a_slow_node_without_a_report_of_its_own_still_gets_a_failing_row(tmp_path: Path, run: Run) -> None:
    _write_sweeping_node(tmp_path)
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 1
    assert [line for line in out.splitlines() if " | " in line] == ["hostC | FAIL: bench-node-slow", "hostA | PASS"]
    assert 'scontrol update nodename=hostC state=drain reason="topoaudit: bench-node-slow Node hostC' in out
