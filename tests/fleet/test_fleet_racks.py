"""NVL racks assembled from trays' fabric records: constructed tray snapshots (the real H200 snapshot with
four GB200 GPU records per tray and their fabric registration set here)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest
from cli_runner import Run
from fleet_nodes import SNAPSHOT

from topoaudit.probe.snapshot import SNAPSHOT_SCHEMA_VERSION, GpuRecord

RACK_A = "5b1a2c3d-0000-4000-8000-00000000000a"
RACK_B = "5b1a2c3d-0000-4000-8000-00000000000b"
SENTINEL_CLIQUE = 32766  # every Blackwell tray reports it: only (cluster UUID, clique id) tells racks apart


def write_tray(
    directory: Path,
    host: str,
    cluster: str,
    status: str = "SUCCESS",
    state: str = "completed",
    health: tuple[int, str] | None = None,
    clique: int = SENTINEL_CLIQUE,
) -> None:
    data = copy.deepcopy(SNAPSHOT)
    data["os"]["hostname"] = host
    data["system"]["gpu_count"] = 4
    template = data["gpus"][0]
    data["gpus"] = []
    for k in range(4):
        gpu = copy.deepcopy(template)
        gpu.update(
            index=k,
            name="NVIDIA GB200",
            uuid=f"GPU-{host}-{k}",
            serial=f"{host}-{k}",
            pci_bus_id=f"0000:0{k}:00.0",
            fabric_state=state,
            fabric_status=status,
            fabric_cluster_uuid=cluster,
            fabric_clique_id=clique,
        )
        if health is not None:  # recorded from the snapshot schema that has fabric health on
            data["schema_version"] = SNAPSHOT_SCHEMA_VERSION
            gpu.update(fabric_health_mask=health[0], fabric_health_summary=health[1])
        data["gpus"].append(gpu)
    data["pairs"] = []
    (directory / f"{host}.snapshot.json").write_text(json.dumps(data), encoding="utf-8")


def test_trays_assemble_into_racks_by_cluster_and_clique(tmp_path: Path, run: Run) -> None:
    for k in range(18):
        write_tray(tmp_path, f"rack-a-tray{k:02d}", RACK_A)
    for k in range(17):  # one tray of rack B never reported
        write_tray(tmp_path, f"rack-b-tray{k:02d}", RACK_B, status="SUCCESS" if k != 5 else "INSUFFICIENT_RESOURCES")
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    report = json.loads(out)
    racks = {r["cluster_uuid"]: r for r in report["racks"]}
    assert racks[RACK_A]["gpus"] == 72 and racks[RACK_A]["odd_trays"] == []
    assert racks[RACK_B]["gpus"] == 68 and racks[RACK_B]["odd_trays"] == ["rack-b-tray05"]
    codes = [(f["code"], f["hosts"]) for f in report["findings"]]
    assert ("fleet-tray-mismatch", ["rack-b-tray05"]) in codes
    incomplete = [f for f in report["findings"] if f["code"] == "fleet-rack-incomplete"]
    assert len(incomplete) == 1 and "68 GPUs in 17 trays, expected 72" in incomplete[0]["message"]
    assert code == 1
    assert "rack-b-tray05" in [d["host"] for d in report["drain"]]


def test_a_36_gpu_rack_is_complete_when_the_rack_is_sold_as_36(tmp_path: Path, run: Run) -> None:
    for k in range(9):
        write_tray(tmp_path, f"nvl36-tray{k}", RACK_A)
    _, out, _ = run("fleet", str(tmp_path), "--rack-gpus", "36")
    assert f"{RACK_A} clique {SENTINEL_CLIQUE}: 36/36 GPUs in 9 trays" in out
    assert "fleet-rack-incomplete" not in out


def test_trays_of_clique_0_assemble_into_a_rack(tmp_path: Path, run: Run) -> None:
    """Clique id 0 is a clique like any other once the tray names a cluster (only -1 means none)."""
    for k in range(3):
        write_tray(tmp_path, f"tray{k}", RACK_A, clique=0)
    code, out, _ = run("fleet", str(tmp_path), "--rack-gpus", "12")
    assert f"{RACK_A} clique 0: 12/12 GPUs in 3 trays" in out
    assert "fabric-attached GPUs in no rack" not in out and code == 0


def test_a_tray_whose_registration_names_no_cluster_is_named(tmp_path: Path, run: Run) -> None:
    for k in range(3):
        write_tray(tmp_path, f"tray{k}", RACK_A)
    write_tray(tmp_path, "tray9", "00000000-0000-0000-0000-000000000000", status="INSUFFICIENT_RESOURCES")
    _, out, _ = run("fleet", str(tmp_path), "--rack-gpus", "12")
    assert "tray9: fabric-attached GPUs in no rack" in out
    assert "tray9 | FAIL: " in out and "fleet-tray-mismatch" in out.split("tray9 | FAIL: ", 1)[1].splitlines()[0]


@pytest.mark.skipif(
    "fabric_health_mask" not in {f.name for f in dataclasses.fields(GpuRecord)},
    reason="this snapshot schema records no fabric health",
)
def test_a_tray_whose_fabric_health_differs_from_its_rack_is_named(tmp_path: Path, run: Run) -> None:
    for k in range(3):
        write_tray(tmp_path, f"tray{k}", RACK_A, health=(0, "healthy"))
    write_tray(tmp_path, "tray3", RACK_A, health=(0xAA, "unhealthy"))  # 4 of 8 NVL paths down (NVIDIA/nccl#2186)
    _, out, _ = run("fleet", str(tmp_path), "--rack-gpus", "16", "--format", "json")
    report = json.loads(out)
    assert report["racks"][0]["odd_trays"] == ["tray3"]
    mismatch = [f for f in report["findings"] if f["code"] == "fleet-tray-mismatch"]
    assert [f["hosts"] for f in mismatch] == [["tray3"]]
    assert "health unhealthy mask 0xaa" in mismatch[0]["message"] and "healthy mask 0x0" in mismatch[0]["message"]
