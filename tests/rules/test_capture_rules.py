"""Findings from what only NCCL's XML dump or a measured matrix says, through the same path as ``analyze FILE``."""

from __future__ import annotations

from pathlib import Path

import pytest
from parse.dev_pastes import dev_paste

from topoaudit.app.analyze import AnalyzeRequest, analyze_input
from topoaudit.app.common import GateRequest, MachineInput
from topoaudit.model.finding import Finding
from topoaudit.model.report import Report

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"


def _analyze(name: str, **gate: object) -> Report:
    return analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES / name)), GateRequest(**gate))).report  # type: ignore[arg-type]


def _finding(report: Report, code: str) -> Finding:
    found = [f for f in report.findings if f.code == code]
    assert found, [f.code for f in report.findings]
    return found[0]


def test_gpu_with_seventeen_links_on_hgx_h100_fails_and_names_the_gpu() -> None:
    report = _analyze("ncclxml-8xh100-hgx-gpu5-17links-constructed.xml")
    low = _finding(report, "nccl-topo-nvlinks-low")
    assert low.severity.value == "fail"
    assert "GPU5 17" in low.message and "18" in low.message
    assert low.evidence["nvlinks"]["GPU5"] == 17 and low.evidence["nvlinks"]["GPU0"] == 18
    assert "0000:07:00.0 x4" in low.evidence["targets"]["GPU5"]
    assert report.gate.exit_code == 1


def test_unknown_model_is_judged_against_its_siblings(tmp_path: Path) -> None:
    text = (CAPTURES / "ncclxml-8xh100-hgx-gpu5-17links-constructed.xml").read_text().replace('device="0x2330"', "")
    path = tmp_path / "unknown-model.xml"
    path.write_text(text)
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report
    low = _finding(report, "nccl-topo-nvlinks-low")
    assert low.severity.value == "warn" and "siblings have 18" in low.message


def test_healthy_hgx_h100_has_no_capture_finding() -> None:
    report = _analyze("ncclxml-8xh100-hgx-healthy-constructed.xml")
    assert not {f.code for f in report.findings} & {"nccl-topo-nvlinks-low", "nccl-topo-flattened"}


def test_flattened_vm_view_is_named_with_its_signs_and_the_topo_file_remedy() -> None:
    flat = _finding(_analyze("ncclxml-vm-flattened-2xa100-constructed.xml"), "nccl-topo-flattened")
    assert flat.severity.value == "warn"
    assert 'numaid="-1"' in flat.message and 'link_width="0"' in flat.message
    assert "invisible" in flat.message  # the NVSwitch sentinel target, listed beside the other signs
    assert "NCCL_TOPO_FILE" in flat.remedy


def test_real_azure_ncv4_file_with_blank_links_is_flattened() -> None:
    flat = _finding(_analyze("ncclxml-azure-ncv4-a100pcie-selfloop-nvlink-topofile-1.txt"), "nccl-topo-flattened")
    assert "4 of 4 GPUs" in flat.message and "numaid" not in flat.message


def test_a_flattened_vm_view_without_nvlink_names_the_peer_access_it_loses(tmp_path: Path) -> None:
    """NVIDIA/nccl#1329: four A800s straight under a CPU of numaid -1 and no NVLink: NCCL's default P2P level (PXB)
    stops short of that path, so the GPUs exchange through host memory; with NVLink in the view it is not said."""
    gpus = "".join(
        f'    <pci busid="0000:00:0{9 + i:x}.0" class="0x030200" vendor="0x10de" device="0x20f5" link_speed="" '
        f'link_width="0">\n      <gpu dev="{i}" sm="80" rank="{i}" gdr="1"/>\n    </pci>\n'
        for i in range(4)
    )
    path = tmp_path / "vm.xml"
    path.write_text(
        f'<system version="1">\n  <cpu numaid="-1" arch="x86_64" vendor="GenuineIntel">\n{gpus}  </cpu>\n</system>\n'
    )
    flat = _finding(analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report, "nccl-topo-flattened")
    assert "no NVLink between its GPUs" in flat.message and flat.evidence["causes"] == ["p2p-unsupported"]
    with_nvlink = _finding(_analyze("ncclxml-vm-flattened-2xa100-constructed.xml"), "nccl-topo-flattened")
    assert "causes" not in with_nvlink.evidence


def test_bare_metal_dump_is_not_flattened() -> None:
    report = _analyze("ncclxml-a100-nvswitch-dump-excerpt-1gpu-1nic-1.txt")
    assert "nccl-topo-flattened" not in {f.code for f in report.findings}


def test_a_gb10_on_its_c2c_link_is_bare_metal_though_its_cpu_has_no_numa_node(tmp_path: Path) -> None:
    """NVIDIA/nccl#2202: a DGX Spark (GB10) dump: one Arm CPU of numaid -1 (no NUMA node on a one-socket host) and a
    GPU on a C2C link to it. Nothing there is a VM's flattening; a Wi-Fi and a Tailscale interface are its NICs."""
    path = tmp_path / "gb10.xml"
    path.write_text(dev_paste("nccl-pr2202-gb10-topo-xml-c2c"))
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report
    assert "nccl-topo-flattened" not in {f.code for f in report.findings}
    assert report.gate.verdict == "pass"


def _junit_skips(report: Report) -> dict[str, str]:
    import xml.etree.ElementTree as ET

    from topoaudit.render import render

    suite = ET.fromstring(render(report, "junit")).find("testsuite")
    assert suite is not None
    return {
        str(tc.get("name")): str(skip.get("message"))
        for tc in suite.iter("testcase")
        if (skip := tc.find("skipped")) is not None
    }


def test_junit_marks_capture_codes_judged_only_where_the_capture_is() -> None:
    dump = _junit_skips(_analyze("ncclxml-8xh100-hgx-healthy-constructed.xml"))
    assert "nccl-topo-nvlinks-low" not in dump and "nccl-topo-flattened" not in dump
    assert "nvbandwidth" in dump["nvbandwidth-pair-low"]
    topo = _junit_skips(
        analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES.parent / "topo" / "topo-2x5090-phb-1.txt")))).report
    )
    assert "NCCL topology dump" in topo["nccl-topo-nvlinks-low"]


def test_junit_counts_link_states_from_a_pasted_nvlink_status_as_judged() -> None:
    skips = _junit_skips(_analyze("nvlink-2xh100nvl-12-active-6-inactive-constructed.txt"))
    assert "nvlink-link-down" not in skips  # judged from the paste: 12 of 18 by design, a pass
    assert "fabric-not-ready" in skips or "pcie-link-degraded" in skips  # what the paste cannot tell stays skipped


def test_junit_counts_pasted_p2p_as_judged() -> None:
    skips = _junit_skips(_analyze("p2p-h100-8gpu-ok-stas-1.txt"))
    assert "p2p-unavailable" not in skips


EVERY_CAPTURE = sorted(
    p
    for p in CAPTURES.iterdir()
    if p.is_file() and p.name != "PROVENANCE.tsv" and not p.name.startswith("billion-laughs")
)  # provider/ holds the providers' topology files, with their own PROVENANCE.tsv


def test_every_capture_fixture_has_provenance() -> None:
    listed = {line.split("\t")[0] for line in (CAPTURES / "PROVENANCE.tsv").read_text().splitlines()[1:]}
    assert {p.name for p in CAPTURES.iterdir() if p.is_file() and p.name != "PROVENANCE.tsv"} <= listed


@pytest.mark.parametrize("path", EVERY_CAPTURE, ids=lambda p: p.stem)
def test_every_capture_renders_in_every_format_and_round_trips(path: Path) -> None:
    import json

    from topoaudit.model.report import report_from_dict
    from topoaudit.render import render

    report = analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report
    for fmt in ("console", "markdown", "html", "junit"):
        assert render(report, fmt)
    assert report_from_dict(json.loads(render(report, "json"))) == report


# --- nvbandwidth tests that printed no matrix ------------------------------------------------------------


def _paste(tmp_path: Path, paste_id: str, **gate: object) -> Report:
    path = tmp_path / f"{paste_id}.txt"
    path.write_text(dev_paste(paste_id))
    return analyze_input(AnalyzeRequest(MachineInput(path=str(path)), GateRequest(**gate))).report  # type: ignore[arg-type]


def test_a_copy_whose_pattern_check_failed_is_wrong_data_naming_its_test(tmp_path: Path) -> None:
    """v0.7 on 8x A100: the pattern check, then ``ASSERT in expression h_errorFlag == 0`` (NVIDIA/nvbandwidth#34)."""
    report = _paste(tmp_path, "nvbw-34-pattern-assert-8xa100")
    bad = _finding(report, "nvbandwidth-data-corruption")
    assert report.gate.verdict == "fail" and report.gate.exit_code == 1
    assert bad.message == (
        "A GPU copy returned wrong data in device_to_device_memcpy_read_ce: nvbandwidth's pattern check failed, "
        "line 18: 'Invalid value when checking the pattern at 0x70a640000000' (offset 11136)."
    )
    assert bad.evidence["tests"] == ["device_to_device_memcpy_read_ce"]
    assert report.machine.gpus[0].name == "NVIDIA A100-SXM4-80GB"  # v0.6+: the bus id is not part of the name
    assert report.machine.gpus[0].pci_bus_id == "0000:34:00.0"


def test_the_pattern_check_of_v0_4_aborting_the_run(tmp_path: Path) -> None:
    bad = _finding(_paste(tmp_path, "nvbw-19-l40s-one-to-all-read-sm-pattern"), "nvbandwidth-data-corruption")
    assert "in one_to_all_read_sm" in bad.message and "(offset 58496/66306048)" in bad.message


def test_a_gpu_to_gpu_test_waived_on_two_gpus_means_no_pair_has_p2p(tmp_path: Path) -> None:
    """nvbandwidth waives a peer test only when cuDeviceCanAccessPeer is false for every pair (2x RTX 2080 Ti)."""
    report = _paste(tmp_path, "nvbw-13-2x2080ti-write-ce-waived")
    p2p = _finding(report, "p2p-unavailable")
    assert report.gate.verdict == "warn"
    assert p2p.message.startswith(
        "nvbandwidth waived device_to_device_memcpy_write_ce on 2 GPUs (line 15): it waives a GPU-to-GPU test only "
        "when no GPU can reach any other by peer access, so no pair of these GPUs has P2P"
    )


def test_a_peer_test_waived_on_one_gpu_is_by_design(tmp_path: Path) -> None:
    text = dev_paste("nvbw-13-2x2080ti-write-ce-waived").replace("Device 1: NVIDIA GeForce RTX 2080 Ti\n", "")
    path = tmp_path / "one.txt"
    path.write_text(text)
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report
    assert "p2p-unavailable" not in {f.code for f in report.findings}


def test_a_cuda_error_in_a_test_is_a_failed_test(tmp_path: Path) -> None:
    text = dev_paste("nvbw-34-pattern-assert-8xa100").split("Running")[0] + (
        "Running device_to_device_memcpy_write_ce.\n"
        "[CUDA_ERROR_PEER_ACCESS_UNSUPPORTED] peer access is not supported between these two devices in expression "
        "cuCtxEnablePeerAccess(peerCtx, 0) in void enablePeerAcess() : /src/nvbandwidth/memcpy.cpp:90\n"
    )
    path = tmp_path / "cuda.txt"
    path.write_text(text)
    failed = _finding(analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report, "nvbandwidth-test-failed")
    assert failed.message.startswith(
        "nvbandwidth's test device_to_device_memcpy_write_ce failed (CUDA error 217): line 18: '[CUDA_ERROR_PEER"
    )


# --- copy latency between GPUs (p2pBandwidthLatencyTest) ---------------------------------------------------------


def _analyze_text(text: str, tmp_path: Path) -> Report:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    return analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report


def test_copies_that_take_milliseconds_between_every_pair_fail(tmp_path: Path) -> None:
    """Before: not judged. 49 ms P2P writes between every pair of an 8-GPU box whose peer path was broken
    (huggingface/transformers#20438), against ~2 us on the diagonal."""
    report = _analyze_text(dev_paste("transformers-20438-p2p-latency-49ms"), tmp_path)
    (slow,) = [f for f in report.findings if f.code == "p2p-latency-high"]
    assert report.gate.verdict == "fail" and slow.severity.value == "fail"
    assert slow.message.startswith("28 GPU pair(s) take up to 49,207 us per copy in P2P=Enabled Latency (P2P Writes)")
    assert "only with peer access on" in slow.message


@pytest.mark.parametrize(
    "name",
    [
        "p2p-8x4090-p2pbwlat-p2p-disabled-stock-1.txt",  # 11-20 us: staged through host memory, by design
        "p2p-2xrtx6000ada-puget-wrx90-p2pbwlat-1.txt",  # ~1 us P2P, ~11 us without
        "p2p-4xrtx6000ada-asus-esc8000a-p2pbwlat-1.txt",
    ],
)
def test_healthy_copy_latencies_are_judged_and_pass(name: str) -> None:
    report = _analyze(name)
    assert "p2p-latency-high" not in {f.code for f in report.findings}
    assert any("copy latency of" in judged for judged in report.gate.judged)


def test_a_copy_latency_between_the_thresholds_warns(tmp_path: Path) -> None:
    text = "P2P=Disabled Latency Matrix (us)\n   GPU     0      1\n     0   1.39 250.00\n     1  10.46   1.45\n"
    report = _analyze_text(text, tmp_path)
    (slow,) = [f for f in report.findings if f.code == "p2p-latency-high"]
    assert slow.severity.value == "warn" and "GPU0->GPU1 250 us" in slow.message
    assert "only with peer access on" not in slow.message


# --- copy bandwidth between GPUs (p2pBandwidthLatencyTest) --------------------------------------------------------

_TITLE = "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n"
_H100_BIDIRECTIONAL = (
    _TITLE
    + "   D\\D     0      1      2      3\n"
    + "".join(f"     {a} " + " ".join("2573.14" if a == b else "742.21" for b in range(4)) + "\n" for a in range(4))
)


def test_a_copy_matrix_pasted_alone_is_judged_pair_against_pair(tmp_path: Path) -> None:
    """Before: "no reader could read it". Uniform copies between every pair (8x H100, NVIDIA/nccl#1264) pass, and
    the verdict says what it compared."""
    report = _analyze_text(_H100_BIDIRECTIONAL, tmp_path)
    assert report.gate.verdict == "pass"
    assert "the copy bandwidth of 6 GPU pairs against each other (p2pBandwidthLatencyTest)" in report.gate.judged


def test_a_pair_far_below_its_siblings_is_named(tmp_path: Path) -> None:
    lines = _H100_BIDIRECTIONAL.splitlines()
    lines[3] = "     1 742.21 2573.14 301.00 742.21"  # GPU1 -> GPU2 lost most of its links
    report = _analyze_text("\n".join(lines) + "\n", tmp_path)
    (low,) = [f for f in report.findings if f.code == "p2p-copy-pair-low"]
    assert low.severity.value == "fail" and "GPU1->GPU2 301.00 GB/s (median 742.21)" in low.message


def test_copies_with_peer_access_off_judge_nothing_and_one_pair_only_its_pcie_floor(tmp_path: Path) -> None:
    """Staged through the host, copies say nothing of the links; one pair has no sibling to compare with, so it is
    judged against the floor any GPU pair clears (a PCIe 3.0 x8 link) and nothing more."""
    disabled = _H100_BIDIRECTIONAL.replace("P2P=Enabled", "P2P=Disabled")
    assert _analyze_text(disabled, tmp_path).gate.verdict == "not judged"
    pair = _TITLE + "   D\\D     0      1\n     0 900.1  243.6\n     1 243.7 901.0\n"
    gate = _analyze_text(pair, tmp_path).gate
    assert gate.verdict == "pass" and gate.judged == ("the peer copies of 1 GPU pair against PCIe's floor",)


def test_one_gpu_slow_in_every_host_staged_copy_is_named_as_its_pcie_link(tmp_path: Path) -> None:
    """tinygrad/open-gpu-kernel-modules#16: with peer access off every pair with GPU2 copies at an eighth of the
    others, and the paste cut the title's "Bi": GPU2's own PCIe link is the slow part, whichever pair is read."""
    rows = ["     0  900.00  21.00   2.80   21.10", "     1  21.20  900.00   2.82   21.30",
            "     2   2.81    2.83  300.00   2.80", "     3  21.40  21.00    2.79  900.00"]  # fmt: skip
    text = "directional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1      2      3\n" + "\n".join(rows)
    report = _analyze_text(text + "\n", tmp_path)
    (low,) = [f for f in report.findings if f.code == "p2p-copy-pair-low"]
    assert low.severity.value == "fail" and low.evidence["gpu"] == "GPU2"
    assert "Every slow pair includes GPU2, and these copies go through host memory (peer access off)" in low.message


_STAGED_AND_PEER = (
    "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n     0 1528.91  42.47\n"
    "     1  42.54 1553.23\nUnidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1\n"
    "     0 1519.99  {a}\n     1  {b} 1547.03\n"
)


def test_peer_copies_slower_than_copies_staged_through_the_host_warn(tmp_path: Path) -> None:
    """aikitoria/open-gpu-kernel-modules#9, 2x RTX 5090: with peer access on, writes ran at 12.19 and 2.01 GB/s where
    the same copies staged through host memory ran at 42.5 GB/s (BAR1 could not be assigned): peer access is on but
    broken. Peer copies faster than the staged ones are the healthy case, and say what was compared."""
    report = _analyze_text(_STAGED_AND_PEER.format(a="12.19", b=" 2.01"), tmp_path)
    (slow,) = [f for f in report.findings if f.code == "p2p-slower-than-staged"]
    assert slow.severity.value == "warn" and report.gate.verdict == "warn"
    assert slow.evidence["peer_median_gbps"] == 7.1 and slow.evidence["staged_median_gbps"] == 42.5
    healthy = _analyze_text(_STAGED_AND_PEER.format(a="52.19", b="52.01"), tmp_path)
    assert not [f for f in healthy.findings if f.code == "p2p-slower-than-staged"]
    assert "peer copies against host-staged copies (unidirectional, p2pBandwidthLatencyTest)" in healthy.gate.judged
    assert healthy.gate.verdict == "pass"


def test_busgrind_s_host_device_matrix_names_the_gpus_whose_link_collapses(tmp_path: Path) -> None:
    """NVIDIA/cuda-samples#357: busGrind's host/device matrix on eight GPUs, both directions at once collapsing to
    7 GB/s on GPU 6 where its siblings reach 100: their PCIe links, compared GPU by GPU."""
    report = _analyze_text(dev_paste("cuda-samples-357-busgrind-bidir-collapse"), tmp_path)
    low = _finding(report, "p2p-copy-pair-low")
    assert low.severity.value == "fail" and low.message.startswith("Host/Device BiDir (memory=Pinned): 3 pair(s)")
    assert [p["from"] for p in low.evidence["pairs"]] == ["GPU6", "GPU7", "GPU5"]
    ends_on_its_rows = dev_paste("cuda-samples-357-busgrind-bidir-collapse").rstrip("*\n")  # no banner after it
    cut = _analyze_text(ends_on_its_rows + "\n", tmp_path)
    assert "bench-run-hung" not in {f.code for f in cut.findings}  # its rows were printed: no copy hung
    assert _finding(cut, "p2p-copy-pair-low").severity.value == "fail"


def test_peer_copies_below_a_pcie3_x8_link_warn_whatever_the_model(tmp_path: Path) -> None:
    """A Level1Techs thread: two RTX 3070 Ti on an X399 board copy at 3.3 GB/s with peer access on (busGrind): less
    than any PCIe 3.0 x8 link carries, though there is no sibling pair to compare with. At 12 GB/s it holds."""
    text = dev_paste("l1t-185531-x399-3070ti-busgrind-3gbs")
    slow = _finding(_analyze_text(text, tmp_path), "p2p-copy-below-pcie")
    assert slow.severity.value == "warn" and "GPU0->GPU1 3.32 GB/s" in slow.message
    assert "below 5 GB/s (unidirectional)" in slow.message
    healthy = _analyze_text(text.replace("3.32", "12.31").replace("4.88", "24.40").replace("4.98", "24.52"), tmp_path)
    assert "p2p-copy-below-pcie" not in {f.code for f in healthy.findings}
    assert healthy.gate.verdict == "pass"
    assert any("against PCIe's floor" in j for j in healthy.gate.judged)
