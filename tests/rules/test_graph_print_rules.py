"""NCCL's topology print (NCCL_DEBUG_SUBSYS=GRAPH), judged against itself: a VM's emulated bridges, and a ring over
PCIe between GPUs the print shows on NVLink."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runner import Run

REAL = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"  # the corpus's dev part

VM_BRIDGES = """\
=== System : maxBw 0.2 totalBw 240.0 ===
CPU/0-0 (1/1/1)
+ PCI[0.2] - PCI/0-65000 (104c823200000000)
              + PCI[0.2] - GPU/0-67000 (0)
                            + NVL[240.0] - NVS/0-0
+ PCI[0.2] - PCI/0-85000 (104c823200000000)
              + PCI[0.2] - GPU/0-87000 (1)
                            + NVL[240.0] - NVS/0-0
==========================================
"""
RING_OVER_PCI = """\
=== System : maxBw 24.0 totalBw 240.0 ===
CPU/0 (1/1/2)
+ PCI[24.0] - PCI/2000 (10b5879610b58796)
        + PCI[24.0] - GPU/4000 (0)
               + NVL[240.0] - NVS/0
        + PCI[24.0] - GPU/5000 (1)
               + NVL[240.0] - NVS/0
==========================================
Pattern 4, crossNic 0, nChannels 2, bw 24.000000/24.000000, type PIX/PIX, sameChannels 1
 0 : GPU/0 GPU/1
 1 : GPU/0 GPU/1
"""


def judged(run: Run, tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    paste = tmp_path / "graph.txt"
    paste.write_text(text, encoding="utf-8")
    code, out, err = run("analyze", str(paste), "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def codes(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["code"]: f for f in report["findings"]}


def test_a_vms_emulated_bridges_between_the_cpu_and_every_switch_are_a_flattened_view(run: Run, tmp_path: Path) -> None:
    """Before: PASS."""
    code, report = judged(run, tmp_path, VM_BRIDGES)
    found = codes(report)["nccl-topo-flattened"]
    assert code == 0 and report["verdict"] == "warn" and found["severity"] == "warn"
    assert "all 2 PCIe switch(es)" in found["message"] and "CPU/0-0 - PCI/0-65000 (line 3)" in found["message"]
    assert report["source"]["kind"] == "nccl-graph"


def test_a_ring_over_pcie_between_gpus_the_print_shows_on_nvlink_fails(run: Run, tmp_path: Path) -> None:
    code, report = judged(run, tmp_path, RING_OVER_PCI)
    found = codes(report)["nccl-graph-below-topology"]
    assert code == 1 and found["severity"] == "fail"
    assert "ring over PIX between GPU/4000, GPU/5000 (line 9)" in found["message"]
    on_nvlink = RING_OVER_PCI.replace("type PIX/PIX", "type NVL/PIX")
    _, report = judged(run, tmp_path, on_nvlink)
    assert "nccl-graph-below-topology" not in codes(report)


def test_real_prints_of_healthy_boxes_pass(run: Run, tmp_path: Path) -> None:
    """Eight Hopper GPUs behind four PCIe switches, NVLinked to the NVSwitches (NVIDIA/nccl#1197): before, refused.
    Two L4s on two sockets, their ring over SYS (no NVLink to use) and a NIC NCCL gives 0.2 GB/s (NVIDIA/nccl#1358):
    neither a VM's bridges nor a ring below the topology."""
    for paste in ("nccl-1197-hopper-graph-nvs-4pcisw", "nccl-1358-l4-crossnuma-graph-sys"):
        code, report = judged(run, tmp_path, (REAL / f"{paste}.txt").read_text(encoding="utf-8"))
        assert code == 0 and report["verdict"] == "pass", paste
        serious = {c for c, f in codes(report).items() if f["severity"] != "info"}
        assert not {"nccl-topo-flattened", "nccl-graph-below-topology"} & serious, paste


def test_a_print_of_paths_alone_judges_nothing(run: Run, tmp_path: Path) -> None:
    """ray-project/ray#40850: the paths from each GPU to socket NICs (`NET/2 :GPU/31000 (3/1.250000/PHB)`) and a NIC
    line, without the CPU's switches or a searched graph: no rule of the print has anything to hold, so no PASS."""
    code, report = judged(run, tmp_path, (REAL / "ray-40850-3090-3060-nccl-topology-socket.txt").read_text())
    assert code == 0 and report["verdict"] == "not judged"
    assert not any("topology print" in covered for covered in report["gate"]["judged"])
