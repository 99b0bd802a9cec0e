"""Every real capture in the test fixtures, with the verdict, NVLink domains and findings a careful engineer
reading it would give. Each row was decided from the capture itself (its matrix, its links, what its source
thread says about the box) and says what the audit must answer: a change of judgement on any real input fails
here and is reviewed. Rows with a model are the same capture audited with ``--gpu-model`` as its owner would
run it (a topo -m paste does not name the model).

Domains are the NVLink domains of 2+ GPUs, one string of GPU indices each; findings are ``code:severity``.
"""

# ruff: noqa: E501  (the table keeps one capture per line)

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_runner import Run

from topoaudit.model.report import AuditOptions, report_from_dict
from topoaudit.pipeline import analyze
from topoaudit.readers import load_path
from topoaudit.render import render

FIXTURES = Path(__file__).parents[1] / "fixtures"
TOPO = FIXTURES / "topo"
REAL_PREFIXES = ("topo-", "nvlink-", "p2p-", "nvbandwidth-", "ncclinfo-", "nccltest-", "ncclxml-")


@dataclass(frozen=True)
class Row:
    """One real capture, audited with ``args``, and what the audit must say about it."""

    path: str  # under tests/fixtures
    gpu_model: str | None
    verdict: str
    domains: str  # "01 23 45 67": NVLink domains of 2+ GPUs
    findings: str  # "code:severity ...", sorted or not
    args: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        extra = " ".join((*(("--gpu-model", self.gpu_model) if self.gpu_model else ()), *self.args))
        return Path(self.path).stem + (f" [{extra}]" if extra else "")


# fmt: off
TABLE = [
    Row("topo/topo-2gpu-nv2-stas-mlengineering-1.txt", None, "pass", "01", "model-unknown:info"),
    Row("topo/topo-2gpu-nv3-partial-bridge-tabs-slowtopo-1.txt", None, "warn", "01", "model-unknown:info nvlink-degraded:warn"),
    Row("topo/topo-2gpu-phb-stas-mlengineering-1.txt", None, "pass", "", "model-unknown:info nvlink-absent:info"),
    Row("topo/topo-2x3090-nv4-bridge-clubrig-1.txt", None, "pass", "01", "model-unknown:info"),
    Row("topo/topo-2x3090-nv4-bridge-clubrig-1.txt", "NVIDIA GeForce RTX 3090", "pass", "01", ""),
    Row("topo/topo-2x5090-phb-1.txt", None, "pass", "", "model-unknown:info nvlink-absent:info"),
    Row("topo/topo-2x5090-phb-1.txt", "NVIDIA GeForce RTX 5090", "pass", "", "nvlink-absent:info"),
    Row("topo/topo-2xl4-crossnuma-sys-tabs-p2p-works-1.txt", None, "pass", "", "model-unknown:info nvlink-absent:info"),
    Row("topo/topo-2xl4-crossnuma-sys-tabs-p2p-works-1.txt", "NVIDIA L4", "pass", "", "nvlink-absent:info"),
    Row("topo/topo-2xrtx6000ada-puget-wrx90-1.txt", None, "pass", "", "model-unknown:info nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-2xrtx6000ada-puget-wrx90-1.txt", "NVIDIA RTX 6000 Ada Generation", "pass", "", "nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-4gpu-nv4-alltoall-slingshot-reversednuma-1.txt", None, "pass", "0123", "model-unknown:info"),
    Row("topo/topo-4xa10-vm-all-sys-single-numa-1.txt", None, "pass", "", "model-unknown:info nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-4xa10-vm-all-sys-single-numa-1.txt", "NVIDIA A10", "pass", "", "nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt", None, "pass", "01 23", "model-unknown:info nvlink-split-domain:info"),
    Row("topo/topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt", "NVIDIA A100 80GB PCIe", "pass", "01 23", "nvlink-split-domain:info"),
    Row("topo/topo-4xa100sxm4-nv4-alltoall-2nic-nolegendheader-1.txt", None, "pass", "0123", "model-unknown:info"),
    Row("topo/topo-4xa100sxm4-nv4-alltoall-2nic-nolegendheader-1.txt", "NVIDIA A100-SXM4-40GB", "pass", "0123", ""),
    Row("topo/topo-4xh100-vm-halfnode-all-phb-8nic-1.txt", None, "pass", "0123", "model-unknown:info nic-not-local:info"),
    Row("topo/topo-4xh100-vm-halfnode-all-phb-8nic-1.txt", "NVIDIA H100 80GB HBM3", "pass", "0123", "nic-not-local:info"),
    Row("topo/topo-4xh100-vm-halfnode-all-phb-8nic-1.txt", "NVIDIA H100 80GB HBM3", "warn", "0123", "nic-not-local:warn", ("--nics", "8x400")),
    Row("topo/topo-4xh800sxm-nv8-trailingspaces-forum-1.txt", None, "pass", "0123", "model-unknown:info"),
    Row("topo/topo-4xh800sxm-nv8-trailingspaces-forum-1.txt", "NVIDIA H800", "pass", "0123", ""),
    Row("topo/topo-4xrtx6000ada-asus-esc8000a-e12-1.txt", None, "pass", "", "model-unknown:info nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-4xrtx6000ada-asus-esc8000a-e12-1.txt", "NVIDIA RTX 6000 Ada Generation", "pass", "", "nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-8gpu-nv18-8nic-collectenv-indented-header-tabs-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-8x4090-pcie-node-sys-noNIC-legendcut-1.txt", None, "warn", "", "model-unknown:info nvlink-absent:warn"),
    Row("topo/topo-8x4090-pcie-node-sys-noNIC-legendcut-1.txt", "NVIDIA GeForce RTX 4090", "pass", "", "nvlink-absent:info"),
    Row("topo/topo-8x4090-pcie-sys-nics-1.txt", None, "pass", "", "model-unknown:info nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-8x4090-pcie-sys-nics-1.txt", "NVIDIA GeForce RTX 4090", "pass", "", "nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-8x5090-pcie-dual-epyc-2nic-sglang-1.txt", None, "pass", "", "model-unknown:info nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-8x5090-pcie-dual-epyc-2nic-sglang-1.txt", "NVIDIA GeForce RTX 5090", "pass", "", "nic-not-local:info nvlink-absent:info"),
    Row("topo/topo-8xa100sxm4-80g-8nic-roce-deepep-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-8xa100sxm4-80g-8nic-roce-deepep-1.txt", "NVIDIA A100-SXM4-80GB", "pass", "01234567", ""),
    Row("topo/topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt", None, "pass", "01 23 45 67", "model-unknown:info nic-not-local:info nvlink-split-domain:info"),
    Row("topo/topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt", "NVIDIA H100 NVL", "pass", "01 23 45 67", "nic-not-local:info nvlink-split-domain:info"),
    Row("topo/topo-8xh20-3e-nv18-2nic-gpu0only-sglang-1.txt", None, "pass", "01234567", "model-unknown:info nic-not-local:info"),
    Row("topo/topo-8xh20-3e-nv18-2nic-gpu0only-sglang-1.txt", "NVIDIA H20", "pass", "01234567", "nic-not-local:info"),
    Row("topo/topo-8xl4-pcie-phb-sys-2socket-1.txt", None, "warn", "", "model-unknown:info nvlink-absent:warn"),
    Row("topo/topo-8xl4-pcie-phb-sys-2socket-1.txt", "NVIDIA L4", "pass", "", "nvlink-absent:info"),
    Row("topo/topo-a100-8gpu-17nic-single-numa-0-103-bond-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-a100-8gpu-18nic-oci-numa-nps4-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-a100-8gpu-4numa-3nic-fastdeploy-1.txt", None, "pass", "01234567", "model-unknown:info nic-not-local:info"),
    Row("topo/topo-a100-8gpu-4numa-3nic-fastdeploy-1.txt", None, "warn", "01234567", "model-unknown:info nic-not-local:warn", ("--nics", "3x200")),
    Row("topo/topo-a100-8gpu-stas-compressed-spaces-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-a100-8gpu-stas-compressed-spaces-1.txt", "NVIDIA A100-SXM4-80GB", "pass", "01234567", ""),
    Row("topo/topo-dgx-h100-talos-nicrows-truncated-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-dgx-h100-talos-nicrows-truncated-1.txt", "NVIDIA H100 80GB HBM3", "pass", "01234567", ""),
    Row("topo/topo-dgx1-v100-hybridcubemesh-oneflow-1.txt", None, "pass", "01234567", "model-unknown:info nic-not-local:info nvlink-partial-mesh:info"),
    Row("topo/topo-dgx1-v100-hybridcubemesh-oneflow-1.txt", "Tesla V100-SXM2-16GB", "pass", "01234567", "nic-not-local:info nvlink-partial-mesh:info"),
    Row("topo/topo-gb200-4gpu-hand-reformatted-compact-1.txt", None, "pass", "0123", "model-unknown:info"),
    Row("topo/topo-gb200-4gpu-hand-reformatted-compact-1.txt", "NVIDIA GB200", "pass", "0123", ""),
    Row("topo/topo-h100-8gpu-12nic-numaoff-2.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-h100-8gpu-12nic-numaoff-2.txt", "NVIDIA H100 80GB HBM3", "pass", "01234567", ""),
    Row("topo/topo-h100-8gpu-stas-compressed-spaces-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-h100-8gpu-stas-compressed-spaces-1.txt", "NVIDIA H100 80GB HBM3", "pass", "01234567", ""),
    Row("topo/topo-h100-8gpu-stas-ht-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-h100-8gpu-stas-ht-1.txt", "NVIDIA H100 80GB HBM3", "pass", "01234567", ""),
    Row("topo/topo-h800-8gpu-9nic-bond-nicnames-sglang-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-h800-8gpu-9nic-bond-nicnames-sglang-1.txt", "NVIDIA H800", "pass", "01234567", ""),
    # 4 NICs for 8 NVSwitch GPUs: those without a NIC beside them reach one through an NVLink peer (NCCL's PXN)
    Row("topo/topo-h800-8gpu-nv8-terminal-truncated-cols-1.txt", None, "pass", "01234567", "input-recovered:info model-unknown:info nic-not-local:info"),
    Row("topo/topo-h800-8gpu-nv8-terminal-truncated-cols-1.txt", "NVIDIA H800", "pass", "01234567", "input-recovered:info nic-not-local:info"),
    Row("topo/topo-hgx-h100-sxm-10nic-tabs-nicrows-truncated-1.txt", None, "pass", "01234567", "model-unknown:info"),
    Row("topo/topo-hgx-h100-sxm-10nic-tabs-nicrows-truncated-1.txt", "NVIDIA H100 80GB HBM3", "pass", "01234567", ""),
    Row("topo/topo-nonnvidia-metax-8gpu-marslink-ht-1.txt", None, "pass", "", "model-unknown:info"),
    Row("topo/topo-nv8-8gpu-4nic-driver525-centos-1.txt", None, "pass", "01234567", "model-unknown:info nic-not-local:info"),
    Row("topo/topo-v100-sxm2-8gpu-hybridcubemesh-modern-lmdeploy-1.txt", None, "pass", "01234567", "model-unknown:info nvlink-partial-mesh:info"),
    Row("topo/topo-v100-sxm2-8gpu-hybridcubemesh-modern-lmdeploy-1.txt", "Tesla V100-SXM2-32GB", "pass", "01234567", "nvlink-partial-mesh:info"),
    Row("probe/smi/topo-h200-vm-1gpu-ansi-device.txt", None, "not judged", "", "model-unknown:info"),
    Row("captures/nvlink-2x3090-status-14gbps-clubrig-1.txt", None, "pass", "", ""),
    Row("captures/nvlink-b200-gpu2-all-links-inactive-nvml-error-1.txt", None, "fail", "", "nvlink-link-down:fail"),
    Row("captures/nvlink-gb200-status-53gbps-elided-1.txt", None, "pass", "", ""),
    Row("captures/nvlink-h100-errors-elided-stas-1.txt", None, "pass", "", ""),
    Row("captures/nvlink-h100-status-elided-stas-1.txt", None, "pass", "", ""),
    Row("captures/nvlink-h800-capabilities-elided-1.txt", None, "not judged", "", ""),  # says no link state
    Row("captures/nvlink-h800-status-8links-elided-1.txt", None, "pass", "", ""),
    Row("captures/nvlink-v100-ndv2-gpu3-two-links-inactive-1.txt", None, "fail", "", "nvlink-link-down:fail"),
    Row("captures/p2p-2x3090-nvlink-ok-clubrig-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/p2p-2x5090-rw-gns-1.txt", None, "warn", "", "model-unknown:info p2p-unavailable:warn"),
    Row("captures/p2p-2xl4-cns-stas-1.txt", None, "warn", "", "model-unknown:info p2p-unavailable:warn"),
    Row("captures/p2p-2xrtx6000ada-puget-wrx90-p2pbwlat-1.txt", None, "pass", "", ""),
    Row("captures/p2p-4xrtx6000ada-asus-esc8000a-p2pbwlat-1.txt", None, "pass", "", ""),
    Row("captures/p2p-8x4090-p2pbwlat-p2p-disabled-stock-1.txt", None, "warn", "", "model-unknown:info p2p-unavailable:warn"),
    Row("captures/p2p-9gpu-rtxpro6000-plus-8x5090-p2pbwlat-tabs-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/p2p-h100-8gpu-ok-stas-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/nvbandwidth-7xb300-sxm6-dell-xe9780-one-gpu-missing-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/nvbandwidth-8gpu-d2d-ce-readme-example-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/nvbandwidth-8gpu-h2d-bidir-ce-readme-example-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/nvbandwidth-8gpu-h2d-ce-readme-example-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/nvbandwidth-8xh100-azure-ndh100v5-v0.4-1.txt", None, "pass", "", ""),
    Row("captures/nvbandwidth-8xh100-v0.10-multirun-separators-latency-1.txt", None, "pass", "", "model-unknown:info"),
    Row("rules/topo-4x2080ti-pix-one-switch-lmdeploy-1.txt", None, "warn", "", "model-unknown:info nvlink-absent:warn"),
    Row("rules/topo-8xp40-pix-pxb-two-switches-paddle-1.txt", None, "pass", "", "model-unknown:info nic-not-local:info nvlink-absent:info"),
    # NCCL logs, nccl-tests runs and NCCL topology files
    Row("nccl/ncclinfo-a100sxm4-2gpu-p2p-direct-read-24ch-container-1.txt", None, "pass", "", "model-unknown:info nccl-env-override:info"),
    Row("nccl/ncclinfo-a100sxm4-4gpu-init-trees-rings-container-1.txt", None, "pass", "", "bench-run-hung:info nccl-net-socket-fallback:info nccl-nvls-off:info"),  # its device lines name A100-SXM4-80GB; the excerpt ends in NCCL's setup
    Row("nccl/ncclinfo-hgx-a100-topo-system-tree-print-1.txt", None, "pass", "", "model-unknown:info nccl-net-socket-fallback:info"),
    Row("nccl/ncclinfo-ndh100v5-netib-roce-misnamed-nic-1.txt", None, "fail", "", "model-unknown:info run-failed:fail"),  # xml.h's WARN returns ncclInternalError: a NIC NCCL cannot place stops its init
    Row("nccl/ncclinfo-p4d-2node-libfabric-gdrdma-2channels-1.txt", None, "pass", "", "model-unknown:info"),
    Row("nccl/ncclinfo-p4d-sagemaker-netofi-topofile-leadingspace-1.txt", None, "not judged", "", "model-unknown:info"),
    Row("nccl/ncclinfo-p5en-h200-netofi-16nic-groups-1.txt", None, "not judged", "", "model-unknown:info"),
    Row("nccltests/nccltest-8x4090-p2p-disabled-stock-driver-1.txt", None, "pass", "", ""),
    Row("nccltests/nccltest-8x4090-p2p-unlocked-tinygrad-driver-1.txt", None, "pass", "", ""),
    Row("nccltests/nccltest-8x5090-p2p-patched-driver-nofooter-1.txt", None, "pass", "", ""),
    Row("nccltests/nccltest-a100-oci-bmgpu48-2node-10g-roce-1.txt", None, "pass", "", ""),
    Row("nccltests/nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt", None, "pass", "", ""),
    Row("nccltests/nccltest-a3mega-h100-2node-16gpu-1.txt", None, "pass", "", ""),
    Row("nccltests/nccltest-allgather-4xa100pcie-azure-nc96ads-1.txt", None, "pass", "", ""),
    Row("nccltests/nccltest-gb300-nvl-oci-4tray-16gpu-mnnvl-1.txt", None, "pass", "", "bench-sweep-dip:info"),
    Row("nccltests/nccltest-gh200-alps-2node-1gpu-each-slingshot-1.txt", None, "pass", "", ""),
    Row("nccltests/nccltest-rccl-mi355x-oci-8gpu-allreduce-trimmed-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/ncclxml-a100-nvswitch-dump-excerpt-1gpu-1nic-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/ncclxml-azure-ncv4-a100pcie-graph-file-1.txt", None, "not judged", "", "model-unknown:info"),
    Row("captures/ncclxml-azure-ncv4-a100pcie-selfloop-nvlink-topofile-1.txt", None, "warn", "", "nccl-topo-flattened:warn nic-not-local:info"),
    Row("captures/ncclxml-azure-nda100v4-static-topofile-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/ncclxml-azure-ndh100v5-static-topofile-1.txt", None, "pass", "", "model-unknown:info"),
    Row("captures/ncclxml-azure-ndv2-v100-static-topofile-1.txt", None, "pass", "", "model-unknown:info nic-not-local:info"),
    Row("captures/ncclxml-p4d24xl-static-topofile-awsofi-1.txt", None, "pass", "", ""),
    Row("captures/ncclxml-p5-48xl-static-topofile-awsofi-1.txt", None, "pass", "", "model-unknown:info"),
]
# fmt: on


B300_SHORT = Row(
    "captures/nvbandwidth-7xb300-sxm6-dell-xe9780-one-gpu-missing-1.txt", None, "fail", "",
    "expectation-not-met:fail model-unknown:info", ("--expect-gpus", "8"),
)  # fmt: skip
TABLE.append(B300_SHORT)
TABLE.append(
    Row(
        "captures/nvbandwidth-7xb300-sxm6-dell-xe9780-one-gpu-missing-1.txt",
        "NVIDIA B300 SXM6",
        "warn",
        "",
        "gpus-short-of-node:warn",
    )
)


def _judged(run: Run, row: Row) -> tuple[int, dict[str, Any]]:
    args = ["analyze", str(FIXTURES / row.path), "--format", "json", *row.args]
    if row.gpu_model:
        args += ["--gpu-model", row.gpu_model]
    code, out, _ = run(*args)
    return code, json.loads(out)


@pytest.mark.parametrize("row", TABLE, ids=lambda r: r.id if isinstance(r, Row) else None)
def test_each_real_capture_is_judged_as_a_careful_engineer_would(run: Run, row: Row) -> None:
    code, data = _judged(run, row)
    domains = " ".join("".join(map(str, d["gpus"])) for d in data["domains"] if len(d["gpus"]) > 1)
    findings = sorted({f"{f['code']}:{f['severity']}" for f in data["findings"]})
    assert (data["gate"]["verdict"], domains, findings) == (row.verdict, row.domains, sorted(row.findings.split()))
    assert code == (1 if row.verdict == "fail" else 0)


def _rows() -> list[Row]:
    return [r if isinstance(r, Row) else r.values[0] for r in TABLE]


def _real_captures() -> set[str]:
    """Every fixture a PROVENANCE.tsv names that is a capture from a real machine (not derived or constructed)."""
    names = set()
    for provenance in FIXTURES.rglob("PROVENANCE.tsv"):
        for line in provenance.read_text().splitlines()[1:]:
            name = line.split("\t", 1)[0].strip()
            if name.startswith(REAL_PREFIXES) and "constructed" not in name and "derived" not in name:
                names.add(name)
    return names


def test_the_table_covers_every_real_capture_in_the_fixtures() -> None:
    covered = {Path(r.path).name for r in _rows()}
    missing = sorted(_real_captures() - covered)
    assert not missing, f"real captures without a row: {missing}"


def test_every_row_names_a_fixture_that_exists() -> None:
    assert [r.path for r in _rows() if not (FIXTURES / r.path).is_file()] == []


@pytest.mark.parametrize("path", sorted(TOPO.glob("topo-*.txt")), ids=lambda p: p.stem)
def test_every_fixture_renders_in_every_format(path: Path) -> None:
    loaded = load_path(str(path))
    report = analyze(loaded.machine, source=loaded.source, input_issues=loaded.issues, options=AuditOptions(tp=2))
    for fmt in ("console", "json", "markdown"):
        assert render(report, fmt)
    assert report_from_dict(json.loads(render(report, "json"))) == report
    assert sum(d.size for d in report.domains) == len(report.machine.gpus)


def _codes(name: str, **options: object) -> dict[str, str]:
    loaded = load_path(str(TOPO / name))
    report = analyze(loaded.machine, source=loaded.source, input_issues=loaded.issues, options=AuditOptions(**options))  # type: ignore[arg-type]
    return {f.code: f.severity.value for f in report.findings}


def test_partial_bridge_nv3_is_flagged() -> None:
    assert _codes("topo-2gpu-nv3-partial-bridge-tabs-slowtopo-1.txt")["nvlink-degraded"] == "warn"


def test_vm_flattened_half_node_flags_nic_locality() -> None:
    assert "nic-not-local" in _codes("topo-4xh100-vm-halfnode-all-phb-8nic-1.txt")


def test_truncated_nic_rows_lose_no_gpu_fact_so_even_strict_passes() -> None:
    """The NIC rows cut short: every GPU's path to every NIC is in the GPU rows, and no rule reads a NIC-to-NIC cell,
    so the paste is an excerpt that says where it stops, not damage (a recovered GPU cell still exits 3 under
    --strict: test_topology_rules)."""
    loaded = load_path(str(TOPO / "topo-dgx-h100-talos-nicrows-truncated-1.txt"))
    report = analyze(
        loaded.machine, source=loaded.source, input_issues=loaded.issues, options=AuditOptions(strict=True)
    )
    assert [d.gpus for d in report.domains] == [tuple(range(8))]
    assert "input-recovered" not in {f.code for f in report.findings}
    assert report.input_issues[0].line == 15 and "truncated" in report.input_issues[0].message
    assert report.input_issues[0].action == "excerpt"
    assert report.gate.exit_code == 0 and not report.gate.incomplete


def test_pcie_4090_box_has_no_nvlink() -> None:
    assert _codes("topo-8x4090-pcie-sys-nics-1.txt", gpu_model="NVIDIA GeForce RTX 4090")["nvlink-absent"] == "info"


def test_a100_pcie_pairs_split_into_two_domains() -> None:
    codes = _codes("topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt", tp=4, gpu_model="NVIDIA A100 80GB PCIe")
    assert codes["nvlink-split-domain"] == "info" and codes["tp-group-crosses-domain"] == "fail"
