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
    assert report.skipped == ()
    assert analyze(loaded.machine, source=loaded.source, options=AuditOptions(strict=True)).gate.exit_code == 0
    (gpu,) = report.machine.gpus
    assert gpu.name == "NVIDIA H200" and gpu.pci_bus_id == "0000:00:06.0"
    # NVLink is not exposed in this VM: an absent value with NVML's reason, never an empty list or 0
    assert isinstance(gpu.nvlink_ports, Unsupported) and gpu.nvlink_ports.reason == "NOT_SUPPORTED"
    assert report.catalog_entry == "H200-SXM"


@pytest.mark.parametrize("name", ["nvidiasmi_nvlink_s.txt", "nvidiasmi_nvlink_e.txt"])
def test_nvlink_commands_print_nothing_on_this_vm(name: str) -> None:
    assert (DEVICE / name).read_text() == ""
