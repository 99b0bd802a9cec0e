"""A fleet judged by several processes is the fleet judged by one: same nodes, order, outliers, drain list."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from topoaudit.app import fleet as app
from topoaudit.render import RenderOptions
from topoaudit.render.fleet_formats import render_fleet

REPORT = Path(__file__).parents[1] / "fixtures" / "fleet" / "report-a100-8gpu-nccltests.json"


def _write_fleet(directory: Path, nodes: int) -> None:
    """The real A100 node report, one per host; every 25th node's busbw at 0.7x, one report damaged."""
    base = json.loads(REPORT.read_text(encoding="utf-8"))
    for k in range(nodes):
        data = copy.deepcopy(base)
        host = f"gpu{k:03d}"
        data["host"]["hostname"] = host
        for gpu in data["gpus"]:
            gpu["uuid"] = f"GPU-{host}-{gpu['index']}"
        scale = 0.7 if k % 25 == 24 else 1.0 + (k % 7) / 700
        for group in data["bench"]["groups"]:
            for row in group["rows"]:
                row["busbw_gbps"] *= scale
        (directory / f"{host}.json").write_text(json.dumps(data), encoding="utf-8")
    damaged = json.loads((directory / "gpu010.json").read_text(encoding="utf-8"))
    damaged["gpus"][0]["index"] = "zero"
    (directory / "gpu010.json").write_text(json.dumps(damaged), encoding="utf-8")


def _json(report: object) -> dict[str, object]:
    data: dict[str, object] = json.loads(render_fleet(report, "json", RenderOptions(color=False)))  # type: ignore[arg-type]
    data.pop("generated_at")
    return data


def test_two_processes_give_the_fleet_one_process_gives_over_many_chunks(tmp_path: Path) -> None:
    _write_fleet(tmp_path, 150)  # several chunks of nodes per worker, handed back out of order
    one = app.fleet(app.FleetRequest(paths=(str(tmp_path),), jobs=1))
    two = app.fleet(app.FleetRequest(paths=(str(tmp_path),), jobs=2))
    assert _json(one) == _json(two)
    assert [n.host for n in two.nodes if n.status == "fail"] == [f"gpu{k:03d}" for k in range(24, 150, 25)]
    assert [n.host for n in two.nodes if n.status == "error"] == ["gpu010"]
    assert len(two.nodes) == 150 and len(two.drain) == 6


def test_a_damaged_saved_report_names_the_field_that_does_not_read(tmp_path: Path) -> None:
    _write_fleet(tmp_path, 12)
    report = app.fleet(app.FleetRequest(paths=(str(tmp_path),), jobs=2))
    (node,) = [n for n in report.nodes if n.host == "gpu010"]
    assert node.status == "error" and "$.machine.gpus[0].index" in node.reason and "'zero'" in node.reason
