"""A ``topo -m`` pasted in part: what its rows show is judged, the pairs no cell describes are unknown, never a
missing NVLink, and the report says what the paste covered."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import machine
from rulecheck import audit

from topoaudit.model.finding import Severity
from topoaudit.model.network import parse_nics
from topoaudit.model.report import Report
from topoaudit.model.topology import UNKNOWN_PAIR

TOPO = Path(__file__).parents[1] / "fixtures" / "topo"


def cut(name: str, rows: int) -> str:
    """A real capture cut after its first ``rows`` GPU rows: what a paste that stops early holds."""
    lines = (TOPO / name).read_text(encoding="utf-8").split("\n")
    header = next(i for i, line in enumerate(lines) if "GPU0" in line and "GPU1" in line)
    return "\n".join(lines[: header + 1 + rows]) + "\n"


def without_header(name: str) -> str:
    lines = (TOPO / name).read_text(encoding="utf-8").split("\n")
    return "\n".join(line for line in lines if not ("GPU0" in line and "GPU1" in line and "X" not in line)) + "\n"


def codes(report: Report) -> dict[str, Severity]:
    return {f.code: f.severity for f in report.findings}


def dgx2(rows: int) -> str:
    """16 V100 behind NVSwitches (NV6 between every pair), cut after ``rows`` rows (NVIDIA/nccl-tests#78)."""
    cols = [f"GPU{i}" for i in range(16)]
    out = ["        " + "".join(f"{c:<8}" for c in cols) + "CPU Affinity"]
    for r in range(rows):
        cells = "".join(f"{'X' if r == c else 'NV6':<8}" for c in range(16))
        out.append(f"GPU{r:<5}" + cells + ("0-23,48-71" if r < 8 else "24-47,72-95"))
    return "\n".join(out) + "\n"


def test_a_healthy_matrix_pasted_without_its_header_passes() -> None:
    report = audit(without_header("topo-h100-8gpu-stas-ht-1.txt"), tp=8)
    assert report.gate.verdict == "pass" and "input-recovered" not in codes(report)
    assert [d.gpus for d in report.domains] == [tuple(range(8))]
    (issue,) = report.input_issues
    assert issue.action == "excerpt" and issue.message.startswith("no header line: the columns are named")


def test_a_dgx2_cut_after_five_rows_is_judged_for_the_rows_present() -> None:
    report = audit(dgx2(5), tp=8)
    assert [(d.gpus, d.build, d.unknown_pairs) for d in report.domains] == [(tuple(range(16)), "nvswitch", 55)]
    assert not {"nvlink-degraded", "nvlink-partial-mesh", "tp-group-crosses-domain"} & set(codes(report))
    cut_at = next(i for i in report.input_issues if "rows for 5 of 16 GPUs" in i.message)
    assert cut_at.line == 6 and "55 GPU pair(s) among them have no cell" in cut_at.message
    assert report.source.description == "an excerpt: rows for 5 of 16 GPUs; 55 GPU pair(s) unknown"
    assert report.machine.link("GPU5", "GPU6").code == UNKNOWN_PAIR  # type: ignore[union-attr]


def test_a_matrix_cut_before_its_last_rows_passes_on_what_it_shows_and_says_how_much() -> None:
    """A cut matrix is an excerpt, not damage: rows that are sound pass (before: WARN, "the input was damaged"), the
    gate says how many pairs it judged, and --strict still exits 3 on the pairs it could not."""
    report = audit(dgx2(5))
    assert report.gate.verdict == "pass" and "input-recovered" not in codes(report)
    assert "the links of 65 of the 120 pairs of 16 GPUs" in report.gate.judged[0]
    (cut_at,) = [i for i in report.input_issues if "rows for 5 of 16 GPUs" in i.message]
    assert cut_at.action == "partial"
    assert audit(dgx2(5), strict=True).gate.exit_code == 3
    assert audit(dgx2(16), strict=True).gate.exit_code == 0


def test_tp_over_pairs_the_paste_does_not_show_is_not_judged_nor_called_no_nvlink() -> None:
    report = audit(dgx2(5), tp=8)
    (tp8,) = [p for p in report.placements if p.tp == 8]
    assert not tp8.fits and tp8.unknown_pairs == 55
    assert "does not describe 55 of its GPU pairs" in tp8.alternatives[0]
    assert not any("no NVLink" in a or "cannot join" in a for p in report.placements for a in p.alternatives)
    (skipped,) = [s for s in report.skipped if s.rule == "tp-group-crosses-domain"]
    assert "does not describe 55 GPU pair(s)" in skipped.reason


def test_a_cube_mesh_cut_in_half_names_its_known_gaps_and_not_the_unknown_ones() -> None:
    """DGX-1's hybrid cube-mesh cut after GPU3: 0-5 is SYS in the paste, 4-5 is in no row."""
    report = audit(cut("topo-dgx1-v100-hybridcubemesh-oneflow-1.txt", 4), gpu_model="NVIDIA V100 SXM2")
    (mesh,) = [f for f in report.findings if f.code == "nvlink-partial-mesh"]
    assert mesh.severity == Severity.INFO  # by design for the model
    assert [4, 5] not in mesh.evidence["pairs_without_nvlink"] and [0, 5] in mesh.evidence["pairs_without_nvlink"]
    assert "6 more pair(s) are not in the paste" in mesh.message
    assert "nvlink-degraded" not in codes(report)  # GPUs 4-7: their links to each other are not shown


def test_gpus_whose_peers_are_not_shown_are_not_called_unlinked() -> None:
    """Two bridged A100 PCIe pairs cut after GPU0's row: GPUs 2 and 3 may well be bridged to each other."""
    report = audit(cut("topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt", 1), gpu_model="NVIDIA A100 80GB PCIe")
    assert "nvlink-degraded" not in codes(report)
    assert [d.gpus for d in report.domains if d.size > 1] == [(0, 1)]


def test_two_domains_with_an_unknown_pair_between_them_are_not_called_split() -> None:
    """GPU0-GPU2 and GPU1-GPU3 bridged, the paste cut after GPU1's row: GPU2-GPU3 is in no row."""

    def cell(i: int, j: int) -> str:
        return "NV4" if (i, j) in ((0, 2), (1, 3)) else "?" if (i, j) == (2, 3) else "SYS"

    report = audit(machine(4, cell))
    assert [d.gpus for d in report.domains] == [(0, 2), (1, 3)]
    assert "nvlink-split-domain" not in codes(report)
    (skipped,) = [s for s in report.skipped if s.rule == "nvlink-split-domain"]
    assert "does not describe 1 GPU pair(s) between the NVLink domains" in skipped.reason
    known = audit(machine(4, lambda i, j: "SYS" if (i, j) == (2, 3) else cell(i, j)))
    assert codes(known)["nvlink-split-domain"] == Severity.WARN


@pytest.mark.parametrize("rows", [2, 3])
def test_pcie_box_cut_short_has_no_nvlink_in_the_pairs_it_shows(rows: int) -> None:
    report = audit(cut("topo-8x4090-pcie-sys-nics-1.txt", rows))
    (absent,) = [f for f in report.findings if f.code == "nvlink-absent"]
    assert "pair(s) unknown" in absent.message and "unknown path" not in absent.message


def test_two_nics_far_from_the_rows_of_an_eight_gpu_box_are_front_end_nics() -> None:
    """Two rows of an eight-GPU matrix with two NICs, both at SYS (NVIDIA/k8s-device-plugin#1193, NVLink pairs):
    two NICs for eight GPUs are no GPUDirect RDMA design, counted against the box's GPUs rather than the rows
    shown (before: a warning that the two GPUs shown have no NIC near them)."""
    header = "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n"
    rows = (
        "GPU0\t X \tNV4\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t12-15,44-47\t3\n"
        "GPU1\tNV4\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t8-11,40-43\t2\n"
    )
    report = audit(header + rows)
    assert codes(report)["nic-not-local"] == Severity.INFO
    nic = next(f for f in report.findings if f.code == "nic-not-local")
    assert "likely front-end or storage NICs" in nic.message and "2 of the 8 GPUs" in nic.message


def test_a_grace_tray_reaches_its_nics_through_the_cpu_by_design() -> None:
    """Every GPU with a GPU NUMA ID of its own is memory-coherent with a Grace CPU: NICs at SYS are its design.

    The first three rows of a 4-GPU GB200 tray's matrix (sgl-project/sglang#11208, cut where the post was cut).
    """
    header = (
        "        GPU0    GPU1    GPU2    GPU3    NIC0    NIC1    NIC2    NIC3    NIC4    NIC5    CPU Affinity    "
        "NUMA Affinity   GPU NUMA ID\n"
    )
    rows = (
        "GPU0     X      NV18    NV18    NV18    SYS     SYS     SYS     SYS     SYS     SYS     0-71    "
        "0,3-9,11-17             2\n"
        "GPU1    NV18     X      NV18    NV18    SYS     SYS     SYS     SYS     SYS     SYS     0-71    "
        "0,3-9,11-17             10\n"
        "GPU2    NV18    NV18     X      NV18    SYS     SYS     SYS     SYS     SYS     SYS     72-143  "
        "1,19-25,27-33           18\n"
    )
    report = audit(header + rows)
    assert codes(report)["nic-not-local"] == Severity.INFO
    assert "Grace superchip" in next(f.message for f in report.findings if f.code == "nic-not-local")
    x86 = header + rows.replace("             2\n", "             N/A\n")  # one GPU without: no Grace tray
    assert codes(audit(x86, nics=parse_nics("4x400")))["nic-not-local"] == Severity.WARN  # judged for runs across nodes


def test_one_dgx1_row_of_nv1_and_nv2_is_six_links_not_a_degraded_pair() -> None:
    """GPU0's row of a DGX-1 V100 (openucx/ucx#6327): NV1 to two peers and NV2 to two more is its six links by
    design; a mesh's widths are judged by each GPU's total, and no other GPU's total is shown."""
    row = {(0, 1): "NV1", (0, 2): "NV1", (0, 3): "NV2", (0, 4): "NV2"}
    report = audit(machine(8, lambda i, j: row.get((i, j), "SYS") if i == 0 else "?"))
    assert "nvlink-degraded" not in codes(report)
    assert report.gate.verdict == "pass"


def test_a_whole_mesh_is_still_compared_pair_by_pair() -> None:
    """Four GPUs linked pair by pair at NV4, one pair at NV3; or two pairs at NV3, which leaves every GPU 11 links."""
    report = audit(machine(4, lambda i, j: "NV3" if (i, j) == (0, 1) else "NV4"))
    (degraded,) = [f for f in report.findings if f.code == "nvlink-degraded"]
    assert degraded.evidence["pairs"] == [{"gpus": [0, 1], "nvlinks": 3}]
    both = audit(machine(4, lambda i, j: "NV3" if (i, j) in ((0, 1), (2, 3)) else "NV4"))  # every total 11
    (degraded,) = [f for f in both.findings if f.code == "nvlink-degraded"]
    assert degraded.evidence["pairs"] == [{"gpus": [0, 1], "nvlinks": 3}, {"gpus": [2, 3], "nvlinks": 3}]


def test_one_dgx1_row_shows_the_cube_mesh_class_from_the_gpu_whose_peers_it_shows() -> None:
    row = {(0, 1): "NV1", (0, 2): "NV1", (0, 3): "NV2", (0, 4): "NV2"}
    report = audit(machine(8, lambda i, j: row.get((i, j), "SYS") if i == 0 else "?"))
    assert report.identified.hardware_class == "hybrid-cube-mesh"
    assert "6 links on 1 of 8 GPUs whose peers are all shown" in report.identified.class_evidence
    lost = {**row, (0, 4): "NV1"}  # five links: the row alone cannot say which class it is
    assert audit(machine(8, lambda i, j: lost.get((i, j), "SYS") if i == 0 else "?")).identified.hardware_class == ""
