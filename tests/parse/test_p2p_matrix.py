"""`nvidia-smi topo -p2p` and CUDA samples' p2pBandwidthLatencyTest: every real paste read, judged by the P2P rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from dev_pastes import dev_paste

from topoaudit.app.analyze import AnalyzeRequest, analyze_input
from topoaudit.app.common import GateRequest, MachineInput
from topoaudit.errors import InputError
from topoaudit.model.finding import Finding
from topoaudit.model.nccl_topo import Captures
from topoaudit.model.report import Report, report_to_dict
from topoaudit.parse.bare_matrix import bare_matrices
from topoaudit.parse.p2p_matrix import looks_like_p2p, parse_p2p
from topoaudit.render import render

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"
REAL = sorted(CAPTURES.glob("p2p-*-1.txt"))


def _analyze(name: str) -> Report:
    return analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES / name)))).report


def _p2p_finding(report: Report) -> Finding | None:
    return next((f for f in report.findings if f.code == "p2p-unavailable"), None)


def test_all_eight_real_files_are_kept() -> None:
    assert len(REAL) == 8


@pytest.mark.parametrize(
    ("name", "gpus", "statuses"),
    [
        ("p2p-h100-8gpu-ok-stas-1.txt", 8, {"ok"}),
        ("p2p-2x3090-nvlink-ok-clubrig-1.txt", 2, {"ok"}),
        ("p2p-2xl4-cns-stas-1.txt", 2, {"chipset-not-supported"}),
        ("p2p-2x5090-rw-gns-1.txt", 2, {"gpu-not-supported"}),
        ("p2p-2xrtx6000ada-puget-wrx90-p2pbwlat-1.txt", 2, {"ok"}),
        ("p2p-4xrtx6000ada-asus-esc8000a-p2pbwlat-1.txt", 4, {"ok"}),
        ("p2p-8x4090-p2pbwlat-p2p-disabled-stock-1.txt", 8, {"not-supported"}),
        ("p2p-9gpu-rtxpro6000-plus-8x5090-p2pbwlat-tabs-1.txt", 9, {"ok"}),
    ],
)
def test_every_real_paste_gives_each_pairs_status(name: str, gpus: int, statuses: set[str]) -> None:
    report = _analyze(name)
    assert len(report.machine.gpus) == gpus
    assert len(report.machine.p2p) == gpus * (gpus - 1) // 2
    assert {p.read for p in report.machine.p2p} == statuses


def test_ok_everywhere_says_nothing() -> None:
    assert _p2p_finding(_analyze("p2p-h100-8gpu-ok-stas-1.txt")) is None


def test_chipset_not_supported_alone_warns_and_asks_for_the_topology() -> None:
    found = _p2p_finding(_analyze("p2p-2xl4-cns-stas-1.txt"))
    assert found is not None and found.severity.value == "warn"
    assert "GPU0-GPU1 chipset-not-supported" in found.message and "nvidia-smi topo -m" in found.message


def test_gpu_not_supported_is_info_only_when_a_named_model_says_it_is_the_design() -> None:
    """GNS both ways: by design on a named GeForce card, a warning when nothing names the model (the threads' experts
    warn: every copy goes through host memory)."""
    found = _p2p_finding(_analyze("p2p-2x5090-rw-gns-1.txt"))
    assert found is not None and found.severity.value == "warn" and "through host memory" in found.message
    named = analyze_input(
        AnalyzeRequest(MachineInput(path=str(CAPTURES / "p2p-2x5090-rw-gns-1.txt")), GateRequest(gpu_model="RTX 5090"))
    ).report
    found = _p2p_finding(named)
    assert found is not None and found.severity.value == "info"


def test_stock_4090_driver_with_no_peer_access_warns_on_all_28_pairs() -> None:
    found = _p2p_finding(_analyze("p2p-8x4090-p2pbwlat-p2p-disabled-stock-1.txt"))
    assert found is not None and found.severity.value == "warn" and "28 GPU pair(s)" in found.message


def test_p2p_not_supported_between_nvlink_peers_fails_through_the_probe_rule() -> None:
    report = _analyze("topo-and-p2p-2x3090-nv4-ns-constructed.txt")
    assert report.source.kind == "topo-matrix"
    assert report.machine.link("GPU0", "GPU1").nvlinks == 4  # type: ignore[union-attr]
    found = _p2p_finding(report)
    assert found is not None and found.severity.value == "fail" and "over NVLink" in found.message
    assert report.gate.exit_code == 1


def test_consumer_pair_beside_its_topology_is_info_by_design() -> None:
    report = _analyze("topo-and-p2p-2x5090-phb-gns-constructed.txt")
    found = _p2p_finding(report)
    assert found is not None and found.severity.value == "info" and "PHB" in found.message
    assert not any("does not say which" in i.message for i in report.input_issues)  # `-p2p r` is named


def test_unnamed_capability_is_read_as_read_and_noted() -> None:
    report = _analyze("p2p-2xl4-cns-stas-1.txt")
    assert any("does not say which `-p2p` capability" in i.message for i in report.input_issues)


def test_write_matrix_fills_write() -> None:
    text = "$ nvidia-smi topo -p2p w\n        GPU0    GPU1\n GPU0   X       DR\n GPU1   DR      X\n"
    (status,) = parse_p2p(text, "w.txt").statuses
    assert status.write == "disabled-by-regkey" and not isinstance(status.read, str)


def test_bandwidth_latency_test_keeps_its_bandwidth_matrices_and_device_names() -> None:
    report = _analyze("p2p-2xrtx6000ada-puget-wrx90-p2pbwlat-1.txt")
    assert report.machine.gpus[0].name == "NVIDIA RTX 6000 Ada Generation"
    assert report.machine.gpus[1].pci_bus_id == "0000:c2:00.0"
    assert isinstance(report.captures, Captures)
    enabled = next(m for m in report.captures.bandwidth if m.test.startswith("Bidirectional P2P=Enabled"))
    assert enabled.tool == "p2pBandwidthLatencyTest"
    assert enabled.values_gbps[0][1] == 52.11
    assert not isinstance(enabled.values_gbps[0][0], float)  # a GPU's copy to itself is not a pair


def test_tabs_in_a_mixed_nine_gpu_box_are_read() -> None:
    report = _analyze("p2p-9gpu-rtxpro6000-plus-8x5090-p2pbwlat-tabs-1.txt")
    assert report.machine.gpus[0].name == "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
    assert isinstance(report.captures, Captures)
    first = report.captures.bandwidth[0]
    assert len(first.rows) == 9 and first.values_gbps[0][1] == 43.30


@pytest.mark.parametrize(
    ("damage", "note"),
    [
        (("     1  52.10 806.22", "     1  52.10"), "GPU 1's row has 1 values for 2 columns; row left out"),
        (("     1  52.10 806.22", "     1  1.2.3 806.22"), "GPU 1's row holds '1.2.3', not a figure; row left out"),
        (("     1  52.10 806.22", "     1  1e308 806.22"), "GPU 1's row holds 1e308, not a bandwidth; row left out"),
        (
            ("   D\\D     0      1\n     0 802.94", "   D\\D     0    -0.0\n     0 802.94"),
            "its header names no GPU columns",
        ),
    ],
)
def test_a_damaged_bandwidth_matrix_row_is_left_out_and_said(
    tmp_path: Path, damage: tuple[str, str], note: str
) -> None:
    """A row cut short, or a figure no copy reaches, used to crash the reader or the console (exit 5), or to end
    the matrix there without a word."""
    text = (CAPTURES / "p2p-2xrtx6000ada-puget-wrx90-p2pbwlat-1.txt").read_text(encoding="utf-8")
    before, after = damage
    assert text.count(before) == 1
    (tmp_path / "p2p.txt").write_text(text.replace(before, after), encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(tmp_path / "p2p.txt")))).report
    assert any(note in i.message and i.action == "recovered" for i in report.input_issues), report.input_issues
    assert report.gate.verdict != "pass"  # a matrix read around is an incomplete audit
    assert isinstance(report.captures, Captures)
    matrices = report.captures.bandwidth
    assert all(len(row) == len(m.columns) for m in matrices for row in m.values_gbps)
    damaged = next((m for m in matrices if m.test.startswith("Bidirectional P2P=Enabled")), None)
    assert (damaged is None) == ("header" in note)
    assert [len(m.rows) for m in matrices] == [2, 2, 2, 1] if damaged else [2, 2, 2]
    assert "Bidirectional P2P=Disabled" in render(report, "console")


def test_a_gpu_label_of_5000_digits_is_no_p2p_matrix(tmp_path: Path) -> None:
    """It used to crash the reader (exit 5). The matrix is named as what it looks like, read by nothing, and
    nothing is judged from it."""
    label = "GPU" + "9" * 5000
    (tmp_path / "p2p.txt").write_text(f"        GPU0    {label}\n GPU0     X       OK\n {label}     OK      X\n")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(tmp_path / "p2p.txt")))).report
    assert report.gate.verdict == "not judged" and not report.machine.gpus
    assert [i.message for i in report.input_issues] == [
        "lines 1-3 look like `nvidia-smi topo -p2p` output, but no reader could read it"
    ]


def _stopped_paste() -> str:
    """A real 4-card run cut where the thread's run hung: after the first bandwidth matrix's title."""
    whole = (CAPTURES / "p2p-4xrtx6000ada-asus-esc8000a-p2pbwlat-1.txt").read_text()
    title = "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)"
    return whole[: whole.index(title)] + title + "\n   D\\D     0      1      2      3\n"


def test_a_run_that_ends_on_a_matrix_title_hung_there(tmp_path: Path) -> None:
    paste = tmp_path / "p2p.txt"
    paste.write_text(_stopped_paste())
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    (hung,) = [f for f in report.findings if f.code == "bench-run-hung"]
    assert hung.severity.value == "fail" and report.gate.verdict == "fail"
    assert hung.message.startswith("p2pBandwidthLatencyTest printed 'Unidirectional P2P=Disabled Bandwidth Matrix")
    assert "(with peer access off, so staged through host memory) never finished" in hung.message
    (stopped,) = report_to_dict(report)["captures"]["copy_failures"]
    assert (stopped["kind"], stopped["testcase"]) == ("stopped", "Unidirectional P2P=Disabled Bandwidth")


def test_a_paste_cut_at_a_staged_latency_title_after_its_bandwidth_matrices_is_not_a_hang(tmp_path: Path) -> None:
    """Host-staged copies do not stall where the copies of the matrices above completed: a 4-card run cut at its
    P2P=Disabled latency title is most likely a paste cut there, as a window of a healthy 8x
    A100 run (nccl#841) that ends there reads the same. Before: FAIL, run hung."""
    whole = (CAPTURES / "p2p-4xrtx6000ada-asus-esc8000a-p2pbwlat-1.txt").read_text()
    title = "P2P=Disabled Latency Matrix (us)"
    paste = tmp_path / "p2p.txt"
    paste.write_text(whole[: whole.index(title)] + title + "\n   GPU     0      1      2      3\n")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    (cut,) = [f for f in report.findings if f.code == "bench-run-hung"]
    assert cut.severity.value == "info" and report.gate.verdict != "fail"
    assert "so the paste most likely stops there" in cut.message


@pytest.mark.parametrize("name", [p.name for p in sorted(CAPTURES.glob("p2p-*p2pbwlat*-1.txt"))])
def test_a_run_that_printed_every_matrix_did_not_stop(name: str) -> None:
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES / name)))).report
    assert "bench-run-hung" not in {f.code for f in report.findings}


# --- p2pBandwidthLatencyTest's latency matrices --------------------------------------------------------------------


def test_latency_matrices_are_read_per_gpu_pair_and_the_cpu_blocks_left_out() -> None:
    """Before: the latency part of the sample was skipped, and a paste of it alone refused or left unread."""
    parsed = parse_p2p((CAPTURES / "p2p-2xrtx6000ada-puget-wrx90-p2pbwlat-1.txt").read_text(), "p2p.txt")
    assert [m.test for m in parsed.latency] == ["P2P=Disabled Latency", "P2P=Enabled Latency (P2P Writes)"]
    disabled, enabled = parsed.latency
    assert (disabled.rows, disabled.columns) == (("GPU0", "GPU1"), ("GPU0", "GPU1"))
    assert [v for row in disabled.values_us for v in row if isinstance(v, float)] == [10.90, 10.46]  # not CPU's
    assert [v for row in enabled.values_us for v in row if isinstance(v, float)] == [1.12, 1.14]
    assert len(parsed.matrices) == 4  # the bandwidth matrices are read as before


def test_a_latency_matrix_pasted_alone_names_its_gpus() -> None:
    text = (
        "    P2P=Enabled Latency (P2P Writes) Matrix (us)\n"
        "      GPU     0      1      2\n"
        "        0   4.95 49206.88 49206.64\n"
        "        1 49206.62   2.08 49206.51\n"
        "        2 49206.70 49206.45   2.21\n"
    )
    parsed = parse_p2p(text, "latency.txt")
    assert [g.index for g in parsed.gpus] == [0, 1, 2] and parsed.statuses == ()
    (matrix,) = parsed.latency
    assert matrix.values_us[1][0] == 49206.62 and matrix.tool == "p2pBandwidthLatencyTest"


# --- a bandwidth matrix pasted without its title --------------------------------------------------------------------

UNTITLED = """\
   D\\D     0      1      2      3
     0     \u2014    112.3  112.3   84.0
     1   112.3    \u2014    112.3   76.6
     2   112.3  112.3    \u2014    {low}
     3    84.0   76.6   {low}    \u2014
"""


def test_a_matrix_without_its_title_and_with_dashes_on_its_diagonal_is_read_as_one_way_copies(tmp_path: Path) -> None:
    """A post's reformatted p2pBandwidthLatencyTest matrix (its ``D\\D`` header, an em dash for a GPU's copy to
    itself, no title line) used to be named and left unread: every GPU pair is read, and the report says what the
    missing title leaves unknown."""
    paste = tmp_path / "p2p.txt"
    paste.write_text(UNTITLED.format(low="84.1"), encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert isinstance(report.captures, Captures)
    (matrix,) = report.captures.bandwidth
    assert matrix.rows == ("GPU0", "GPU1", "GPU2", "GPU3") and matrix.values_gbps[1][2] == 112.3
    # 76 to 112 GB/s: a bidirectional test's copies staged through the host could reach that on PCIe 5.0
    assert (matrix.direction, matrix.peer_access) == ("unidirectional", None)
    assert any("without its title line" in i.message for i in report.input_issues), report.input_issues
    assert not [f for f in report.findings if f.severity.value in ("warn", "fail")]


def test_a_pair_far_below_the_others_in_a_matrix_without_its_title_warns(tmp_path: Path) -> None:
    paste = tmp_path / "p2p.txt"
    paste.write_text(UNTITLED.format(low="9.8"), encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    low = [f for f in report.findings if f.code == "p2p-copy-pair-low"]
    assert low and "GPU2" in low[0].message and "GPU3" in low[0].message, report.findings


def test_a_matrix_header_alone_without_its_title_is_not_judged_not_a_crash(tmp_path: Path) -> None:
    """Cut to its ``D\\D`` header line alone it used to crash the reader (exit 5) looking for the title it never
    had, then was refused (exit 4); it is recognised as the tool's output, holding nothing to judge: not judged, and
    the report says what the lines are."""
    paste = tmp_path / "p2p.txt"
    paste.write_text(UNTITLED.splitlines()[0] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="neither devices nor matrices"):
        parse_p2p(paste.read_text(), "p2p.txt")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert report.gate.verdict == "not judged" and report.gate.exit_code == 0
    assert any("neither devices nor matrices" in issue.message for issue in report.input_issues)


def test_a_paste_cut_on_the_connectivity_matrix_title_is_no_hang(tmp_path: Path) -> None:
    """The connectivity matrix is peer-access answers, printed at once: output that ends on its title was cut, not
    stuck in a copy (huggingface/transformers#9371's paste stops there)."""
    whole = (CAPTURES / "p2p-4xrtx6000ada-asus-esc8000a-p2pbwlat-1.txt").read_text()
    title = "P2P Connectivity Matrix"
    paste = tmp_path / "p2p.txt"
    paste.write_text(whole[: whole.index(title)] + title + "\n")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert "bench-run-hung" not in {f.code for f in report.findings}


def test_the_peer_access_lines_alone_name_the_pairs_without_peer_access(tmp_path: Path) -> None:
    """p2pBandwidthLatencyTest prints ``Device=a CAN|CANNOT Access Peer Device=b`` for every ordered pair before its
    matrices; pasted alone (NVIDIA/nccl#257's excerpt) they were refused as "neither devices nor matrices"."""
    lines = [
        f"Device={a} {'CAN' if (a < 2) == (b < 2) else 'CANNOT'} Access Peer Device={b}"
        for a in range(4)
        for b in range(4)
        if a != b
    ]
    parsed = parse_p2p("\n".join(lines) + "\n", "access.txt")
    assert [g.index for g in parsed.gpus] == [0, 1, 2, 3]
    unavailable = {(s.a, s.b) for s in parsed.statuses if s.read != "ok"}
    assert unavailable == {(0, 2), (0, 3), (1, 2), (1, 3)}
    paste = tmp_path / "access.txt"
    paste.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    (found,) = [f for f in report.findings if f.code == "p2p-unavailable"]
    assert "GPU0-GPU2" in found.message and "GPU0-GPU1" not in found.message


def test_a_latency_matrix_without_its_title_is_read_by_its_gpu_header(tmp_path: Path) -> None:
    """The latency matrices head their columns with ``GPU`` (the bandwidth ones with ``D\\D``): pasted without the
    title above (huggingface/transformers#20438's 49 ms copies), the microseconds still say a copy stalls."""
    text = (
        "   GPU     0      1      2\n"
        "     0   4.95 49206.88 49206.64\n"
        "     1 49206.62   2.08 49206.51\n"
        "     2 49206.70 49206.45   2.21\n"
    )
    parsed = parse_p2p(text, "latency.txt")
    (matrix,) = parsed.latency
    assert matrix.columns == ("GPU0", "GPU1", "GPU2") and any("without its title" in note for _, note in parsed.notes)
    paste = tmp_path / "latency.txt"
    paste.write_text(text, encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    (slow,) = [f for f in report.findings if f.code == "p2p-latency-high"]
    assert slow.severity.value == "fail" and "49,207 us" in slow.message


def test_matrix_rows_without_title_or_header_are_told_apart_by_each_gpus_own_cell(tmp_path: Path) -> None:
    """A window of p2pBandwidthLatencyTest's rows alone (no title, no ``D\\D`` or ``GPU`` header) used to be refused:
    a GPU's copy to itself is its row's largest figure in a bandwidth matrix and its smallest in a latency matrix,
    which other tables of numbers do not keep row after row."""
    latency = "     1 49206.62   2.08 49206.51\n     2 49206.70 49206.45   2.21\n"
    bandwidth = "     0 2573.14 742.21 744.11\n     1 744.49 2578.12 741.71\n     2 740.63 773.25 2569.51\n"
    assert [(m.first, m.last, m.measures, m.columns) for m in bare_matrices(latency.splitlines())] == [
        (0, 1, "latency", 3)
    ]
    assert [m.measures for m in bare_matrices(bandwidth.splitlines())] == ["bandwidth"]
    mixed = "     0 2573.14 742.21 744.11\n     1 49206.62   2.08 49206.51\n"  # one row each way: neither
    skipped = "     0 2573.14 742.21 744.11\n     2 740.63 773.25 2569.51\n"  # GPU1's row missing
    ragged = "     0 2573.14 742.21 744.11\n     1 744.49 2578.12\n"
    counts = "0 12 45\n1 8 30\n"  # row 0's own cell is its smallest, row 1's its largest
    headed = "   GPU     0      1      2\n" + latency  # a headed matrix: its reader's, not a bare one
    nvbandwidth = "     0     1     2\n0  0.00  276.07  276.36\n1  276.19  0.00  276.29\n"  # zeros: not measured
    for text in (mixed, skipped, ragged, counts, headed, nvbandwidth, nvbandwidth.split("\n", 1)[1]):
        assert bare_matrices(text.splitlines()) == (), text
    paste = tmp_path / "rows.txt"
    paste.write_text(latency, encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    (slow,) = [f for f in report.findings if f.code == "p2p-latency-high"]
    assert slow.severity.value == "fail" and report.gate.verdict == "fail"
    assert any("without its title or column header" in i.message for i in report.input_issues)
    paste.write_text(bandwidth, encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert isinstance(report.captures, Captures)
    (matrix,) = report.captures.bandwidth
    assert matrix.rows == ("GPU0", "GPU1", "GPU2") and matrix.values_gbps[1][2] == 741.71


def test_p2p_status_rows_without_their_header_are_read_by_where_each_x_stands() -> None:
    """`nvidia-smi topo -p2p r` rows copied without the header line used to be named and left unread (not judged):
    each row's X stands in its own GPU's column, which gives the columns as the header would."""
    rows = "GPU1\tCNS\tX\tOK\tCNS\nGPU2\tCNS\tOK\tX\tCNS\n"
    parsed = parse_p2p(rows, "rows.txt")
    assert [g.index for g in parsed.gpus] == [0, 1, 2, 3]
    assert {(st.a, st.b): st.read for st in parsed.statuses} == {
        (0, 1): "chipset-not-supported", (1, 2): "ok", (1, 3): "chipset-not-supported",
        (0, 2): "chipset-not-supported", (2, 3): "chipset-not-supported",
    }  # fmt: skip
    assert any("without their header line" in note for _, note in parsed.notes)
    assert looks_like_p2p(rows)
    damaged = "        GPU0    GPU" + "9" * 50 + "\n GPU0   X       OK\n GPU1   OK      X\n"  # a header refused
    assert not looks_like_p2p(damaged)  # its rows are that header's matrix, not bare ones
    for text in ("GPU1\tCNS\tOK\tX\nGPU2\tOK\tX\tCNS\n", "GPU0\tX\tNV12\nGPU1\tNV12\tX\n"):
        assert not looks_like_p2p(text), text  # an X out of its own column; topo -m's link codes


def test_a_latency_header_without_its_title_or_rows_is_no_crash() -> None:
    """Found by mixing pastes: the untitled latency header ending a paste was looked up as a title line
    (ValueError, exit 5); it is a paste with nothing to judge."""
    with pytest.raises(InputError, match="neither devices nor matrices"):
        parse_p2p("some text before\n   GPU     0      1\n", "cut.txt")


def test_tensorflow_s_peer_access_matrix_is_read_as_each_pair_s_peer_access() -> None:
    """TensorFlow 1.x's ``DMA:`` matrix (NVIDIA GPUs on two root complexes: Y within a pair, N across)."""
    text = dev_paste("tf-6340-peer-access-dma-matrix")
    assert looks_like_p2p(text)
    parsed = parse_p2p(text, "paste")
    assert parsed.tool == "TensorFlow peer access matrix"
    assert {(s.a, s.b): s.read for s in parsed.statuses} == {
        (0, 1): "ok", (0, 2): "not-supported", (0, 3): "not-supported",
        (1, 2): "not-supported", (1, 3): "not-supported", (2, 3): "ok",
    }  # fmt: skip


def test_tensorflow_2_s_edge_matrix_all_n_is_no_peer_access_anywhere() -> None:
    """The later form: a title, a line of column numbers, then one Y/N row per GPU, behind the log's prefix."""
    log = "2019-01-03 07:07:31.374026: I tensorflow/core/common_runtime/gpu/gpu_device.cc:{}] {}\n"
    text = log.format(971, "Device interconnect StreamExecutor with strength 1 edge matrix:")
    text += log.format(977, "     0 1 2 ")
    text += "".join(log.format(990, f"{g}:   N N N ") for g in range(3))
    parsed = parse_p2p(text, "paste")
    assert [(s.a, s.b, s.read) for s in parsed.statuses] == [
        (0, 1, "not-supported"), (0, 2, "not-supported"), (1, 2, "not-supported")
    ]  # fmt: skip
    assert parse_p2p(text.replace(" N N N", " Y Y Y"), "paste").statuses[0].read == "ok"


def test_a_second_header_under_one_title_keeps_each_matrix_s_rows_with_its_columns(tmp_path: Path) -> None:
    """A paste of two cut matrices: three rows of a 7-GPU pair matrix, then busGrind's host/device header for 8 GPUs
    whose own title was cut. Before, the rows above were read against the 8 columns below and the rules stopped on
    a row shorter than its header (exit 5). Each matrix keeps its rows with its own columns."""
    text = (
        "directional P2P=Disabled Bandwidth Matrix (GB/s)\n"
        "D\\D     0      1      2      3      4      5      6\n"
        "0 723.04  19.25  21.47  20.97  21.29  21.45   2.83\n"
        "1  18.39 922.88  20.83  21.36  21.49  21.42   2.84\n"
        "2  21.56  20.20 921.83  21.77  21.31  21.98   2.85\n"
        "   Dir\\D       0      1      2      3      4      5      6      7\n"
        "   D2H     56.83  57.12  57.14  57.15  55.37  55.47  55.49  53.53\n"
    )
    parsed = parse_p2p(text, "cut.txt")
    (matrix,) = parsed.matrices
    assert len(matrix.columns) == 7 and all(len(row) == 7 for row in matrix.values_gbps)
    paste = tmp_path / "cut.txt"
    paste.write_text(text)
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert report.gate.exit_code in (0, 1)


# A copy kernel's matrix on an IMEX GB200 tray (NVIDIA/gpu-driver-container#149): a title naming GB/s, a header of
# the GPUs' indices, a rule of dashes, 0.00 on the diagonal.
MEMCPY_KERNEL = dev_paste("gpu-driver-container-149-imex-memcpy-matrix")


def test_a_copy_benchmark_matrix_under_a_title_naming_its_unit_is_read() -> None:
    """Before: refused, nothing in it known."""
    assert looks_like_p2p(MEMCPY_KERNEL)
    parsed = parse_p2p(MEMCPY_KERNEL, "paste")
    (matrix,) = parsed.matrices
    assert matrix.tool == "GPU copy benchmark" and matrix.title == "Measured bandwidth in GB/s of size 512 MiB:"
    assert matrix.rows == tuple(f"GPU{i}" for i in range(8)) == matrix.columns
    assert matrix.values_gbps[0][1] == 376.80 and matrix.values_gbps[7][6] == 376.72
    assert not isinstance(matrix.values_gbps[3][3], float)  # its copy to itself is no pair
    assert matrix.peer_access is True  # 376 GB/s between every pair: no host staged them


def test_a_copy_benchmark_pair_below_its_siblings_fails_and_slow_copies_leave_peer_access_unknown(
    tmp_path: Path,
) -> None:
    slow = MEMCPY_KERNEL.replace("376.81 376.95", "376.81 176.95", 1)
    paste = tmp_path / "slow.txt"
    paste.write_text(slow, encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert [f.code for f in report.findings if f.severity == "fail"] == ["p2p-copy-pair-low"]
    staged = parse_p2p(MEMCPY_KERNEL.replace("376.80 376.81", "121.80 376.81", 1), "paste")
    assert staged.matrices[0].peer_access is None  # 121.8 GB/s both ways at once could have crossed a host


def test_nvbandwidth_s_titles_and_headers_are_not_taken_for_another_benchmark() -> None:
    nvb = (CAPTURES / "nvbandwidth-8xh100-gpu1-to-gpu0-162gbps-constructed.txt").read_text()
    assert not looks_like_p2p(nvb)


def test_a_copy_benchmark_cut_under_its_header_is_not_taken_for_a_hung_sample(tmp_path: Path) -> None:
    """Only p2pBandwidthLatencyTest's own titles say a copy started there; another benchmark's header alone is a cut."""
    paste = tmp_path / "cut.txt"
    paste.write_text("\n".join(MEMCPY_KERNEL.splitlines()[:5]) + "\n", encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert "bench-run-hung" not in {f.code for f in report.findings} and report.gate.verdict == "not judged"
