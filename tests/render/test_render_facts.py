"""What NCCL's XML dumps, nvbandwidth matrices, P2P status and the probe's host checks add to a report is
shown in every human format (console, Markdown, HTML), on real captures and the probe's scenario boxes:
the cell for a known pair reads its figure or code, the slowest PCIe hop is named, and a pasted
``nvidia-smi topo -m`` alone shows none of these sections."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest
from builders import machine

from topoaudit.model.machine import P2PStatus
from topoaudit.model.report import AuditOptions, Report, SourceInfo, report_from_dict
from topoaudit.pipeline import analyze
from topoaudit.readers import load_path
from topoaudit.render import RenderOptions, render
from topoaudit.render.cells import Cell, Table
from topoaudit.render.rows import view

sys.path.insert(0, str(Path(__file__).parents[1] / "probe"))
from fakebox import make_box
from fakenvml import Scenario
from test_scenarios import audit

FIXTURES = Path(__file__).parents[1] / "fixtures"
CAPTURES = FIXTURES / "captures"
SECTION_TITLES = ("NCCL's topology dump", "Measured copy bandwidth", "P2P status per GPU pair", "Host checks")
FORMATS = ("console", "markdown", "html")


def report_of(path: Path) -> Report:
    loaded = load_path(str(path))
    return analyze(
        loaded.machine,
        source=loaded.source,
        input_issues=loaded.issues,
        options=AuditOptions(),
        captures=loaded.captures,
    )


def table(report: Report, title: str) -> Table:
    tables = [t for section in view(report).facts for t in section.tables if t.title.startswith(title)]
    assert len(tables) == 1, [t.title for s in view(report).facts for t in s.tables]
    return tables[0]


def cell(t: Table, row: str, column: str) -> Cell:
    (found,) = (r for r in t.rows if r[0].text == row)
    return found[t.header.index(column)]


def text(report: Report, fmt: str, width: int = 120) -> str:
    return render(report, fmt, RenderOptions(width=width, color=False))


def test_a_pasted_matrix_alone_shows_none_of_these_sections() -> None:
    report = report_of(FIXTURES / "topo" / "topo-h100-8gpu-stas-ht-1.txt")
    assert view(report).facts == ()
    for fmt in FORMATS:
        page = text(report, fmt)
        assert not [t for t in SECTION_TITLES if t in page], fmt


def test_nvbandwidth_cell_for_the_slow_pair_reads_its_figure_coloured_like_its_link() -> None:
    report = report_of(CAPTURES / "topo-and-nvbandwidth-8xh100nvl-pair45-half-constructed.txt")
    grid = table(report, "nvbandwidth device_to_device_memcpy_read_ce")
    assert grid.matrix
    slow, healthy, pcie = cell(grid, "GPU4", "GPU5"), cell(grid, "GPU0", "GPU1"), cell(grid, "GPU0", "GPU4")
    assert (slow.text, healthy.text, pcie.text) == ("150.2", "300.3", "38.7")
    assert slow.tone == healthy.tone == "nvlink" and pcie.tone == "sys"  # NV12 pairs, a cross-socket pair
    assert cell(grid, "GPU4", "GPU4").text == "-"
    markdown = text(report, "markdown")
    assert re.search(r"^\| \*\*GPU4\*\* \| 38\.8 \| 38\.6 \| 38\.8 \| 38\.7 \| - \| 150\.2 \|", markdown, re.M)
    html = text(report, "html")
    assert '<td class="lv-nv" title="GPU4-GPU5: NV12">150.2</td>' in html


def test_host_to_gpu_matrix_names_the_narrow_gpu_row() -> None:
    report = report_of(CAPTURES / "nvbandwidth-8gpu-h2d-gpu7-x8-constructed.txt")
    grid = table(report, "nvbandwidth host_to_device")
    values = {c: cell(grid, grid.rows[0][0].text, c).text for c in grid.header[1:]}
    assert values["GPU7"] != values["GPU0"] and float(values["GPU7"]) < float(values["GPU0"]) / 1.5


def test_p2p_matrix_reads_the_status_code_and_explains_it() -> None:
    report = report_of(CAPTURES / "topo-and-p2p-2x5090-phb-gns-constructed.txt")
    grid = table(report, "P2P status per GPU pair")
    assert cell(grid, "GPU0", "GPU1").text == "GNS" and cell(grid, "GPU1", "GPU0").text == "GNS"
    assert any(n.startswith("GNS: this GPU model does not support P2P") for n in grid.notes)
    for fmt in FORMATS:
        assert "GNS: this GPU model does not support P2P" in text(report, fmt), fmt


def test_nccl_topology_dump_shows_c2c_links_and_nccls_nvlink_arithmetic() -> None:
    report = report_of(CAPTURES / "ncclxml-gb200-tray-4gpu-c2c-constructed.xml")
    gpus = table(report, "GPUs as NCCL saw them")
    assert cell(gpus, "GPU0", "Grace C2C").text == "10 links, 450 GB/s"
    assert cell(gpus, "GPU0", "NCCL's NVLink GB/s").text == "721.8 GB/s"
    assert cell(gpus, "GPU0", "NVLinks").text == "18 to a hidden target"
    assert any("18 NVLinks x 40.1 GB/s" in n for n in gpus.notes)
    for fmt in FORMATS:
        page = text(report, fmt, width=200)
        assert "10 links, 450 GB/s" in page and "18 NVLinks x 40.1 GB/s" in page, fmt


def test_nccl_topology_dump_counts_links_per_nvswitch_and_the_nics() -> None:
    report = report_of(CAPTURES / "ncclxml-8xh100-hgx-healthy-constructed.xml")
    gpus = table(report, "GPUs as NCCL saw them")
    assert cell(gpus, "GPU0", "NVLinks").text == "18 to 4 NVSwitches"
    assert "Grace C2C" not in gpus.header  # no GPU of an HGX box has one


def test_graph_dump_shows_channels_per_pattern() -> None:
    report = report_of(CAPTURES / "ncclxml-azure-ncv4-a100pcie-graph-file-1.txt")
    graphs = table(report, "Channels NCCL built per pattern")
    assert graphs.rows and all(row[1].text.isdigit() for row in graphs.rows)
    assert cell(graphs, "ring", "Channels").text == "2" and cell(graphs, "ring", "Path inside").text == "SYS"
    assert graphs.notes == ("From NCCL's graph dump (XML version 1).",)  # no figure, so no arithmetic promised


def test_wide_matrices_split_into_column_blocks_at_the_callers_width() -> None:
    report = report_of(CAPTURES / "topo-and-nvbandwidth-8xh100nvl-pair45-half-constructed.txt")
    page = text(report, "console", width=50)
    assert "block 1 of" in page and "(columns GPU0-" in page
    assert max(len(line) for line in page.splitlines()) <= 50


@pytest.fixture
def degraded_box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Report:
    """The HGX H100 scenario with its PCIe switch uplink trained down to Gen3 x16."""

    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["uplinks"] = {"sw0": [3, 16]}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, data, _ = audit(capsys, box.root)
    return report_from_dict(data)


def test_host_checks_name_the_slowest_pcie_hop(degraded_box: Report) -> None:
    facts = table(degraded_box, "Host checks")
    slowest = cell(facts, "Slowest PCIe hop", "What the probe read")
    assert slowest.text.endswith("8.0 GT/s x16 of 32.0 GT/s x16") and slowest.tone == "warn"
    assert cell(facts, "RDMA mlx5_0 port 1", "What the probe read").text == "ACTIVE LinkUp, 400 Gb/s InfiniBand"
    for fmt in FORMATS:
        assert slowest.text in text(degraded_box, fmt, width=200), fmt


def test_probe_p2p_matrix_reads_each_pairs_blocker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("p2p-acs", tmp_path, monkeypatch)
    _, data, _ = audit(capsys, box.root)
    report = report_from_dict(data)
    grid = table(report, "P2P status per GPU pair")
    assert cell(grid, "GPU0", "GPU1").text == "TNS" and cell(grid, "GPU0", "GPU4").text == "CNS"
    assert cell(grid, "GPU0", "GPU4").tone == "fail"
    gdr = cell(table(report, "Host checks"), "GPUDirect RDMA", "What the probe read")
    assert gdr.text.startswith("none: nvidia_peermem not loaded") and gdr.tone == "warn"


def test_p2p_on_a_box_too_big_for_a_matrix_counts_pairs_per_status() -> None:
    base = machine(72, lambda i, j: "NV18")
    blocked = {(0, 1), (2, 3)}
    pairs = tuple(
        P2PStatus(i, j, read="chipset-not-supported" if (i, j) in blocked else "ok")
        for i in range(72)
        for j in range(i + 1, 72)
    )
    report = analyze(dataclasses.replace(base, source="nvml", p2p=pairs), source=SourceInfo("test", "box"))
    summary = table(report, "P2P status per GPU pair (summary)")
    assert cell(summary, "CNS", "Pairs").text == "2" and cell(summary, "CNS", "Which").text == "GPU0-GPU1, GPU2-GPU3"
    assert cell(summary, "OK", "Pairs").text == str(72 * 71 // 2 - 2)
    assert len(text(report, "console").splitlines()) < 400


def test_p2p_bandwidth_latency_matrices_are_titled_once() -> None:
    report = report_of(CAPTURES / "p2p-4xrtx6000ada-asus-esc8000a-p2pbwlat-1.txt")
    grid = table(report, "p2pBandwidthLatencyTest: Bidirectional P2P=Enabled Bandwidth")
    assert grid.title.count("Bidirectional P2P=Enabled") == 1
    assert cell(grid, "GPU0", "GPU1").text == "52.1"
    p2p = table(report, "P2P status per GPU pair")
    assert cell(p2p, "GPU2", "GPU3").text == "OK" and not any("read/write" in n for n in p2p.notes)


def test_a_one_gpu_excerpt_shows_no_empty_topology_sections(tmp_path: Path) -> None:
    """One NCCL WARN line names one GPU: no one-row domain table, bottleneck or 1x1 link matrix, one note instead."""
    paste = tmp_path / "warn.txt"
    paste.write_text("gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error'\n")
    report = report_of(paste)
    assert len(report.machine.gpus) == 1
    for fmt in FORMATS:
        out = text(report, fmt)
        assert "One GPU in this report: no GPU-to-GPU links, NVLink domains or placements to show." in out
        assert "Link matrix" not in out and "Bottleneck" not in out
