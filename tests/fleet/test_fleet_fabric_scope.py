"""Which fabric-attached nodes make racks: HGX/DGX baseboards (NVSwitches on the node, all-zero cluster UUID,
clique 0 when healthy) are judged as nodes, never as trays in no rack; NVL72 trays are assembled into racks
and one whose registration failed is named, with the evidence for each decision stated. Snapshots are the
probe's own (tests/fixtures/fleet/PROVENANCE.tsv), varied per node by host name, GPU UUIDs and serials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import Run
from fleet_nodes import write_snapshot

ZERO_UUID = "00000000-0000-0000-0000-000000000000"
RACK = "5b1a2c3d-0000-4000-8000-00000000000a"


def _hgx_fleet(directory: Path) -> None:
    for k in range(1, 7):
        write_snapshot(directory, "snapshot-hgx-h100", f"hgx-a{k:02d}")
    write_snapshot(directory, "snapshot-hgx-h100-links-down", "hgx-a07")
    write_snapshot(directory, "snapshot-hgx-h100-fm-not-started", "hgx-a08")
    for k in range(1, 5):
        write_snapshot(directory, "snapshot-hgx-h200", f"hgx-b{k:02d}")
    write_snapshot(directory, "snapshot-hgx-h200", "hgx-b05", uuid_of="hgx-b04")  # a copied identity


def test_the_snapshots_carry_what_hopper_hgx_reports(tmp_path: Path) -> None:
    _hgx_fleet(tmp_path)
    healthy = json.loads((tmp_path / "hgx-a01.snapshot.json").read_text())
    for gpu in healthy["gpus"]:
        assert (gpu["fabric_state"], gpu["fabric_status"]) == ("completed", "SUCCESS")
        assert (gpu["fabric_cluster_uuid"], gpu["fabric_clique_id"]) == (ZERO_UUID, 0)
        assert {link["remote_device_type"] for link in gpu["nvlinks"]} == {"switch"}
        assert len(gpu["nvlinks"]) == 18 and not any(n["remote_pci_bus_id"].startswith("ff") for n in gpu["nvlinks"])


def test_a_healthy_hgx_fleet_fails_and_drains_only_its_faulty_nodes(tmp_path: Path, run: Run) -> None:
    _hgx_fleet(tmp_path)
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    report = json.loads(out)
    status = {n["host"]: n["status"] for n in report["nodes"]}
    assert sorted(h for h, s in status.items() if s != "pass") == ["hgx-a07", "hgx-a08", "hgx-b04", "hgx-b05"]
    assert sorted(d["host"] for d in report["drain"]) == ["hgx-a07", "hgx-a08"]  # duplicates: audited again
    codes = {n["host"]: n["codes"] for n in report["nodes"]}
    assert "nvlink-link-down" in codes["hgx-a07"] and "fabric-not-ready" in codes["hgx-a08"]
    assert codes["hgx-b04"] == codes["hgx-b05"] == ["fleet-duplicate-identity"]
    assert "fleet-tray-mismatch" not in out and report["racks"] == []
    assert code == 1
    # the evidence for not assembling racks is in the report, per GPU model
    scopes = {s["gpu_model"]: s for s in report["in_node_fabrics"]}
    assert len(scopes["NVIDIA H100 80GB HBM3"]["hosts"]) == 8 and len(scopes["NVIDIA H200"]["hosts"]) == 5
    evidence = " ".join(scopes["NVIDIA H200"]["evidence"])
    assert "the catalog lists NVIDIA H200 SXM with its NVLink domain on its 8-GPU NVSwitch baseboard" in evidence
    assert "NVSwitches at PCI addresses of the node" in evidence
    assert "no other node of NVIDIA H200 in this fleet registers a cluster" in evidence


def test_the_console_says_why_no_rack_was_assembled(tmp_path: Path, run: Run) -> None:
    for k in range(3):
        write_snapshot(tmp_path, "snapshot-hgx-h100", f"hgx{k}")
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 0 and "fabric-attached GPUs in no rack" not in out
    words = " ".join(out.split())
    assert "NVLink domains inside the node (fabric-attached, no rack assembled): 3 nodes of NVIDIA H100 80GB HBM3:" in (
        words
    )


def _tray(directory: Path, host: str, **fabric: Any) -> None:
    def edit(gpu: dict[str, Any]) -> None:
        gpu.update({f"fabric_{k}": v for k, v in fabric.items()})

    write_snapshot(directory, "snapshot-gb200-tray", host, edit=edit)


def test_an_nvl72_tray_whose_registration_failed_is_named_with_the_evidence(tmp_path: Path, run: Run) -> None:
    for k in range(17):
        _tray(tmp_path, f"nvl-tray{k:02d}")
    _tray(tmp_path, "nvl-tray17", cluster_uuid=ZERO_UUID, clique_id=0)  # state completed, status SUCCESS
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    report = json.loads(out)
    assert [(r["cluster_uuid"], r["gpus"], len(r["trays"])) for r in report["racks"]] == [(RACK, 68, 17)]
    named = [f for f in report["findings"] if f["code"] == "fleet-tray-mismatch"]
    assert [f["hosts"] for f in named] == [["nvl-tray17"]]
    because = named[0]["evidence"]["spans_nodes_because"]
    assert because == [
        "the catalog lists NVIDIA GB200 as a tray of 4 GPUs in a 72-GPU NVLink rack",
        "72 NVLinks end on NVSwitches outside the node (PCI address ffffffff:ff:ff.0)",
        "17 other trays of NVIDIA GB200 in this fleet register a cluster",
    ]
    assert "nvl-tray17" in [d["host"] for d in report["drain"]] and code == 1
    assert report["gate"]["reason"] == "1 of 18 nodes fail; 1 rack finding at or above --fail-on fail"
    assert report["in_node_fabrics"] == []


def test_links_to_switches_outside_the_node_make_a_rack_tray_of_a_model_the_catalog_does_not_know(
    tmp_path: Path, run: Run
) -> None:
    _tray(tmp_path, "tray0", cluster_uuid=ZERO_UUID, clique_id=0)
    for path in tmp_path.iterdir():  # a model name no catalog entry matches
        path.write_text(path.read_text().replace("NVIDIA GB200", "NVIDIA Future Part"))
    _, out, _ = run("fleet", str(tmp_path), "--format", "json")
    named = [f for f in json.loads(out)["findings"] if f["code"] == "fleet-tray-mismatch"]
    assert named[0]["evidence"]["spans_nodes_because"] == [
        "72 NVLinks end on NVSwitches outside the node (PCI address ffffffff:ff:ff.0)"
    ]


def test_other_trays_of_the_model_registering_a_cluster_is_evidence_enough(tmp_path: Path, run: Run) -> None:
    # H100 trays of an NVLink Switch system: the catalog calls H100 a baseboard part, the fleet shows racks
    for k in range(3):
        write_snapshot(tmp_path, "snapshot-hgx-h100", f"h100-{k}")
        data = json.loads((tmp_path / f"h100-{k}.snapshot.json").read_text())
        for gpu in data["gpus"]:
            gpu["fabric_cluster_uuid"], gpu["fabric_clique_id"] = RACK, 1
        (tmp_path / f"h100-{k}.snapshot.json").write_text(json.dumps(data))
    write_snapshot(tmp_path, "snapshot-hgx-h100", "h100-9")
    _, out, _ = run("fleet", str(tmp_path), "--format", "json", "--rack-gpus", "32")
    named = [f for f in json.loads(out)["findings"] if f["code"] == "fleet-tray-mismatch"]
    assert [f["hosts"] for f in named] == [["h100-9"]]
    assert named[0]["evidence"]["spans_nodes_because"] == [
        "3 other trays of NVIDIA H100 80GB HBM3 in this fleet register a cluster"
    ]


def test_exactly_half_the_trays_of_a_baseboard_model_registering_a_cluster_is_most(tmp_path: Path, run: Run) -> None:
    """2 of 4 H100 nodes in a cluster: the other 2 are trays of the NVLink Switch system that fit no rack."""
    for k in range(4):
        write_snapshot(tmp_path, "snapshot-hgx-h100", f"h100-{k}")
    for k in range(2):
        path = tmp_path / f"h100-{k}.snapshot.json"
        data = json.loads(path.read_text())
        for gpu in data["gpus"]:
            gpu["fabric_cluster_uuid"], gpu["fabric_clique_id"] = RACK, 1
        path.write_text(json.dumps(data))
    code, out, _ = run("fleet", str(tmp_path), "--format", "json", "--rack-gpus", "16")
    report = json.loads(out)
    assert [(r["cluster_uuid"], r["gpus"]) for r in report["racks"]] == [(RACK, 16)]
    named = [f for f in report["findings"] if f["code"] == "fleet-tray-mismatch"]
    assert [f["hosts"] for f in named] == [["h100-2"], ["h100-3"]]
    assert named[0]["message"].endswith(
        "its NVLink domain spans nodes: 2 other trays of NVIDIA H100 80GB HBM3 in this fleet register a cluster"
    )
    assert report["in_node_fabrics"] == []
    assert sorted(d["host"] for d in report["drain"]) == ["h100-2", "h100-3"] and code == 1


@pytest.mark.parametrize("clique", [1, 0])
def test_one_hgx_node_registering_a_cluster_of_its_own_fails_no_healthy_node(
    tmp_path: Path, run: Run, clique: int
) -> None:
    for k in range(5):
        write_snapshot(tmp_path, "snapshot-hgx-h100", f"h100-{k}")
    odd = tmp_path / "h100-0.snapshot.json"
    data = json.loads(odd.read_text())
    for gpu in data["gpus"]:
        gpu["fabric_cluster_uuid"], gpu["fabric_clique_id"] = RACK, clique
    odd.write_text(json.dumps(data))
    code, out, _ = run("fleet", str(tmp_path), "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["racks"] == [] and report["drain"] == []
    assert not [f for f in report["findings"] if f["code"] in ("fleet-tray-mismatch", "fleet-rack-incomplete")]
    evidence = {h: s["evidence"] for s in report["in_node_fabrics"] for h in s["hosts"]}
    assert "no other node of this fleet registers its cluster" in evidence["h100-0"]
    assert "only 1 of 5 nodes of NVIDIA H100 80GB HBM3 in this fleet registers a cluster" in evidence["h100-1"]
