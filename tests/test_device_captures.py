"""What the real H200 device answered (tests/fixtures/h200-device, see PROVENANCE.tsv), read by today's code:
each capture goes through the current parser, loader, judge and renderers, and must give what the device
run gave -- a stored file is never only compared with itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from topoaudit.parse.topo_matrix import parse_topo_matrix
from topoaudit.probe.crosscheck import link_states as parse_nvlink_status

DEVICE = Path(__file__).parent / "fixtures" / "h200-device"


def _topoaudit(*args: str) -> tuple[int, Any]:
    """Run the current command line; its exit code and JSON document."""
    proc = subprocess.run(
        [sys.executable, "-m", "topoaudit", *args, "--format", "json"], capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.startswith("{"), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_real_topo_m_with_ansi_underlined_header() -> None:
    text = (DEVICE / "nvidiasmi_topo_m.txt").read_text()
    assert "\x1b[4m" in text  # what nvidia-smi really prints, even into a file
    parsed = parse_topo_matrix(text)
    (gpu,) = parsed.machine.gpus
    assert gpu.index == 0 and gpu.cpu_affinity == tuple(range(16)) and gpu.numa_nodes == (0,)
    assert parsed.issues == ()
    code, report = _topoaudit("analyze", str(DEVICE / "nvidiasmi_topo_m.txt"))
    # one GPU, no NIC: nothing between GPUs to judge, and the verdict says so rather than PASS
    assert code == 0 and report["verdict"] == "not judged" and report["input_issues"] == []
    assert [g["index"] for g in report["gpus"]] == [0]


def test_snapshot_from_the_device_reproduces_the_live_verdict() -> None:
    live = json.loads((DEVICE / "audit-h200.json").read_text())
    code, report = _topoaudit("analyze", str(DEVICE / "snapshot-h200.json"))
    assert code == live["gate"]["exit_code"] == 0
    assert report["verdict"] == live["verdict"] == "pass"
    assert sorted(f["code"] for f in report["findings"]) == sorted(f["code"] for f in live["findings"])
    # A lone GPU whose NVLink is NOT_SUPPORTED has nothing to link to: judged, not skipped, so --strict passes.
    assert report["skipped"] == [] and live["skipped"] == []
    assert _topoaudit("analyze", str(DEVICE / "snapshot-h200.json"), "--strict")[0] == 0
    (gpu,) = report["gpus"]
    assert gpu["name"] == "NVIDIA H200" and gpu["pci_bus_id"] == "0000:00:06.0"
    # NVLink is not exposed in this VM: an absent value with NVML's reason, never an empty list or 0
    assert gpu["nvlink_ports"]["status"] == "unsupported" and gpu["nvlink_ports"]["reason"] == "NOT_SUPPORTED"
    assert report["catalog_entry"] == "H200-SXM"


@pytest.mark.parametrize("name", ["nvidiasmi_nvlink_s.txt", "nvidiasmi_nvlink_e.txt"])
def test_nvlink_commands_print_nothing_on_this_vm_and_claim_no_links(name: str) -> None:
    text = (DEVICE / name).read_text()
    assert text == ""
    assert parse_nvlink_status(text) == {}  # no output is no link state, not "every link down"


def test_one_rank_nccl_sweep_on_the_device_reports_latency_not_bandwidth() -> None:
    code, report = _topoaudit("report", str(DEVICE / "audit-bench-h200.json"))
    assert code == 0 and report["verdict"] == "pass"
    bench = report["bench"]
    assert bench["backend"] == "nccl" and bench["world_size"] == 1 and bench["status"] == "complete"
    (group,) = bench["groups"]
    plateau = group["plateau_busbw_gbps"]
    assert plateau["status"] == "unsupported" and "one rank" in plateau["reason"]
    assert all(row["wrong"] == 0 for row in group["rows"]) and group["rows"][-1]["size_bytes"] == 64 << 20
    assert 0 < group["latency_p50_us"] < 10  # CUDA events around a batch of queued calls: NCCL returns at once


def test_the_bench_report_from_the_device_re_renders_in_every_format(tmp_path: Path) -> None:
    for fmt, marker in (("markdown", "## all-reduce bench"), ("html", "<!doctype html>"), ("junit", "<testsuites")):
        out = tmp_path / f"bench.{fmt}"
        proc = subprocess.run(
            [sys.executable, "-m", "topoaudit", "report", str(DEVICE / "bench-nccl-ws1.json"), "--format", fmt,
             "-o", str(out)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert marker in out.read_text().lower(), fmt
