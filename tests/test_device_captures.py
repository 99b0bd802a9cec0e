"""What the real H200 device answered (tests/fixtures/h200-device, see PROVENANCE.tsv), read back here:
the same verdict from the saved snapshot as from the live audit, and the real topo -m with its ANSI header."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topoaudit.loaders import load_path
from topoaudit.model.report import AuditOptions
from topoaudit.model.values import Unsupported
from topoaudit.parse.topo_matrix import parse_topo_matrix
from topoaudit.pipeline import analyze

DEVICE = Path(__file__).parent / "fixtures" / "h200-device"


def test_real_topo_m_with_ansi_underlined_header() -> None:
    text = (DEVICE / "nvidiasmi_topo_m.txt").read_text()
    assert "\x1b[4m" in text  # what nvidia-smi really prints, even into a file
    parsed = parse_topo_matrix(text)
    (gpu,) = parsed.machine.gpus
    assert gpu.index == 0 and gpu.cpu_affinity == tuple(range(16)) and gpu.numa_nodes == (0,)
    assert parsed.issues == ()


def test_snapshot_from_the_device_reproduces_the_live_verdict() -> None:
    live = json.loads((DEVICE / "audit-h200.json").read_text())
    loaded = load_path(str(DEVICE / "snapshot-h200.json"))
    report = analyze(loaded.machine, source=loaded.source, input_issues=loaded.issues)
    assert report.gate.verdict == live["verdict"] == "pass"
    assert report.gate.exit_code == live["gate"]["exit_code"] == 0
    assert sorted(f.code for f in report.findings) == sorted(f["code"] for f in live["findings"])
    # A lone GPU whose NVLink is NOT_SUPPORTED has nothing to link to: judged, not skipped, so --strict passes.
    assert report.skipped == () and live["skipped"] == []
    assert analyze(loaded.machine, source=loaded.source, options=AuditOptions(strict=True)).gate.exit_code == 0
    (gpu,) = report.machine.gpus
    assert gpu.name == "NVIDIA H200" and gpu.pci_bus_id == "0000:00:06.0"
    # NVLink is not exposed in this VM: an absent value with NVML's reason, never an empty list or 0
    assert isinstance(gpu.nvlink_ports, Unsupported) and gpu.nvlink_ports.reason == "NOT_SUPPORTED"
    assert report.catalog_entry == "H200-SXM"


@pytest.mark.parametrize("name", ["nvidiasmi_nvlink_s.txt", "nvidiasmi_nvlink_e.txt"])
def test_nvlink_commands_print_nothing_on_this_vm(name: str) -> None:
    assert (DEVICE / name).read_text() == ""


def test_one_rank_nccl_sweep_on_the_device_reports_latency_not_bandwidth() -> None:
    report = json.loads((DEVICE / "audit-bench-h200.json").read_text())
    bench = report["bench"]
    assert bench["backend"] == "nccl" and bench["world_size"] == 1 and bench["status"] == "complete"
    (group,) = bench["groups"]
    plateau = group["plateau_busbw_gbps"]
    assert plateau["status"] == "unsupported" and "one rank" in plateau["reason"]
    assert all(row["wrong"] == 0 for row in group["rows"]) and group["rows"][-1]["size_bytes"] == 64 << 20
    assert 0 < group["latency_p50_us"] < 10  # CUDA events around a batch of queued calls: NCCL returns at once
    assert report["verdict"] == "pass"
