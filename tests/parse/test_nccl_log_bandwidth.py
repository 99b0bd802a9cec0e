"""NCCL's bandwidth arithmetic reproduced (topoaudit.model.nccl_bandwidth) and used to explain the link
figures NCCL prints in its GRAPH output."""

from __future__ import annotations

from pathlib import Path

import pytest

from topoaudit.model.nccl import NcclView
from topoaudit.model.nccl_bandwidth import explain, net_gbps, nvlink_gbps, pci_gbps
from topoaudit.pipeline import analyze
from topoaudit.readers import load_text
from topoaudit.render.rows import view

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl"


@pytest.mark.parametrize(
    ("speed_gts", "width", "gbps"),
    [(32.0, 16, 48.0), (16.0, 16, 24.0), (8.0, 16, 12.0), (32.0, 8, 24.0), (64.0, 16, 96.0), (None, 0, 12.0)],
)
def test_pcie_is_width_times_per_lane_over_80(speed_gts: float | None, width: int, gbps: float) -> None:
    assert pci_gbps(speed_gts, width) == gbps


def test_nvlink_is_count_times_the_generations_per_link_figure() -> None:
    assert nvlink_gbps(90, 18) == 370.8  # H100
    assert nvlink_gbps(80, 12) == 240.0  # A100
    assert nvlink_gbps(86, 4) == 48.0  # RTX A6000 bridge
    assert nvlink_gbps(100, 18) == 721.8  # B200
    assert nvlink_gbps(50, 4) is None


def test_network_is_speed_over_8000() -> None:
    assert net_gbps(400000) == 50.0
    assert net_gbps(100000) == 12.5
    assert net_gbps(0) == 1.25  # unknown speed counts as 10 Gb/s


def test_explanations_name_the_inputs() -> None:
    assert explain("PCI", 48.0) == "PCIe Gen5 x16 (16 lanes x 240/80) or Gen6 x8 (8 lanes x 480/80) = 48.0 GB/s"
    assert explain("NVL", 370.8) == "18 NVLinks x 20.6 GB/s (sm90) = 370.8 GB/s"
    assert explain("NVL", 240.0) == "12 NVLinks x 20.0 GB/s (sm70/sm80) = 240.0 GB/s"
    assert explain("NET", 50.0) == "a 400 Gb/s port: speed 400000 Mb/s / 8000"
    assert explain("SYS", 5000.0) == ""
    assert explain("PCI", 13.3) == ""


def test_graph_print_of_a_real_log_is_explained_in_the_report() -> None:
    name = "ncclinfo-hgx-a100-topo-system-tree-print-1.txt"
    loaded = load_text((FIXTURES / name).read_text(encoding="utf-8"), name)
    assert isinstance(loaded.nccl, NcclView)
    links = {(s.kind, s.gbps): (s.count, s.first.line) for s in loaded.nccl.system_links}
    assert links == {("SYS", 5000.0): (1, 12), ("PCI", 24.0): (4, 13)}
    report = analyze(loaded.machine, source=loaded.source, nccl=loaded.nccl)
    section = view(report).nccl
    assert section is not None
    facts = {row[0].text: row[1].text for row in section.facts.rows}
    assert facts["NCCL's PCI figure"] == (
        "24 GB/s: PCIe Gen4 x16 (16 lanes x 120/80) or Gen5 x8 (8 lanes x 240/80) = 24.0 GB/s (4x, first line 13)"
    )
    assert facts["NCCL's SYS figure"] == "5000 GB/s (1x, first line 12)"


@pytest.mark.parametrize("figure", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("kind", ["PCI", "NVL", "NET"])
def test_a_figure_that_is_no_number_is_explained_by_nothing(kind: str, figure: float) -> None:
    """A saved report edited to hold infinity rendered as a crash; no constant of NCCL's gives it."""
    assert explain(kind, figure) == ""
