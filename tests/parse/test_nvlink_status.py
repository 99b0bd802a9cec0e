"""`nvidia-smi nvlink -s/-e/-c` pastes: every real one read, and judged by the probe's own link rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from topoaudit.app.analyze import AnalyzeRequest, analyze_input
from topoaudit.app.common import MachineInput
from topoaudit.model.report import Report
from topoaudit.parse.nvlink_status import parse_nvlink_status

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"
REAL = sorted(CAPTURES.glob("nvlink-*-1.txt"))


def _analyze(name: str) -> Report:
    return analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES / name)))).report


def _codes(report: Report) -> dict[str, str]:
    return {f.code: f.severity.value for f in report.findings}


def test_all_eight_real_files_are_kept() -> None:
    assert len(REAL) == 8


@pytest.mark.parametrize(
    ("name", "gpus", "ports", "active"),
    [
        ("nvlink-2x3090-status-14gbps-clubrig-1.txt", [0, 1], 4, 4),
        ("nvlink-gb200-status-53gbps-elided-1.txt", [0, 1], 18, 18),
        ("nvlink-h100-status-elided-stas-1.txt", [0], 2, 2),  # links 1-16 elided with [...]
        ("nvlink-h800-status-8links-elided-1.txt", [0, 1, 7], 8, 8),
        ("nvlink-v100-ndv2-gpu3-two-links-inactive-1.txt", [3], 6, 4),
    ],
)
def test_status_pastes_give_each_gpus_ports(name: str, gpus: list[int], ports: int, active: int) -> None:
    report = _analyze(name)
    assert report.source.kind == "nvidia-smi-nvlink"
    assert [g.index for g in report.machine.gpus] == gpus
    first = report.machine.gpus[0].nvlink_ports
    assert isinstance(first, tuple) and len(first) == ports
    assert sum(p.state == "active" for p in first) == active


def test_degraded_v100_fails_naming_gpu3_links_3_and_5() -> None:
    report = _analyze("nvlink-v100-ndv2-gpu3-two-links-inactive-1.txt")
    down = next(f for f in report.findings if f.code == "nvlink-link-down")
    assert down.severity.value == "fail" and "GPU3: 4/6 active, down: 3,5" in down.message
    assert report.gate.exit_code == 1


def test_b200_with_all_links_inactive_fails() -> None:
    report = _analyze("nvlink-b200-gpu2-all-links-inactive-nvml-error-1.txt")
    assert _codes(report)["nvlink-link-down"] == "fail"
    assert report.machine.gpus[0].label == "GPU2"


def test_a_card_whose_links_are_all_inactive_is_named_without_link_numbers() -> None:
    """NVML prints one sentence, no link numbers, for a card with every link inactive (here: an unbridged card)."""
    paste = CAPTURES.parent / "real" / "pastes" / "siboehm-bench-3xa6000-nvlink-s-gpu2-inactive.txt"
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    down = next(f for f in report.findings if f.code == "nvlink-link-down" and "active, down" in f.message)
    assert "GPU2: 0/4 active, down: every link (NVML numbers none)." in down.message


def test_h100_nvl_twelve_active_of_eighteen_is_by_design() -> None:
    report = _analyze("nvlink-2xh100nvl-12-active-6-inactive-constructed.txt")
    assert "nvlink-link-down" not in _codes(report)
    ports = report.machine.gpus[0].nvlink_ports
    assert isinstance(ports, tuple) and sum(p.state == "inactive" for p in ports) == 6


def test_error_counters_are_read_and_zero_passes() -> None:
    report = _analyze("nvlink-h100-errors-elided-stas-1.txt")
    ports = report.machine.gpus[0].nvlink_ports
    assert isinstance(ports, tuple) and [p.link for p in ports] == [0, 1, 17]
    assert {(p.replay_errors, p.recovery_errors, p.crc_flit_errors) for p in ports} == {(0, 0, 0)}
    assert "nvlink-errors" not in _codes(report)


def test_non_zero_error_counter_is_a_finding() -> None:
    text = (CAPTURES / "nvlink-h100-errors-elided-stas-1.txt").read_text()
    text = text.replace("Link 17: CRC Errors: 0", "Link 17: CRC Errors: 42")
    parsed = parse_nvlink_status(text, "errors.txt")
    ports = parsed.machine.gpus[0].nvlink_ports
    assert isinstance(ports, tuple) and ports[-1].crc_flit_errors == 42


def test_capabilities_say_nothing_about_link_state() -> None:
    report = _analyze("nvlink-h800-capabilities-elided-1.txt")
    assert "nvlink-link-down" not in _codes(report)
    assert "nvlink-link-down" in {s.rule for s in report.skipped}


def test_throughput_counters_judge_nothing_and_are_no_pass(tmp_path: Path) -> None:
    """`nvidia-smi nvlink -gt d` counts bytes moved; it says nothing of a link's state, so nothing was judged."""
    paste = tmp_path / "throughput.txt"
    paste.write_text(
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-x)\n"
        "         Link 0: Data Tx: 123456 KiB\n"
        "         Link 0: Data Rx: 123456 KiB\n"
        "         Link 1: Data Tx: 0 KiB\n"
    )
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert not isinstance(report.machine.gpus[0].nvlink_ports, tuple)
    assert report.gate.verdict == "not judged"


def test_elided_lines_are_noted() -> None:
    report = _analyze("nvlink-h800-status-8links-elided-1.txt")
    assert any("leaves lines out" in i.message for i in report.input_issues)


def test_beside_topo_m_the_ports_join_the_matrix_and_name_the_model() -> None:
    report = _analyze("topo-and-nvlink-8xh100nvl-by-design-constructed.txt")
    assert report.source.kind == "topo-matrix" and "nvlink" in report.source.description
    assert report.gpu_model == "NVIDIA H100 NVL"
    assert report.machine.link("GPU0", "GPU1").nvlinks == 12  # type: ignore[union-attr]
    assert [d.size for d in report.domains] == [2, 2, 2, 2]
    codes = _codes(report)
    assert "nvlink-link-down" not in codes
    assert codes["nvlink-split-domain"] == "info"  # bridged pairs, by design for the model the paste names


def test_beside_topo_m_a_gpu_with_two_links_down_fails() -> None:
    report = _analyze("topo-and-nvlink-8xh100nvl-gpu3-two-down-constructed.txt")
    down = next(f for f in report.findings if f.code == "nvlink-link-down")
    assert down.severity.value == "fail" and "GPU3: 10/12 active" in down.message
    assert report.gate.exit_code == 1


def test_link_speeds_are_kept_per_port() -> None:
    report = _analyze("nvlink-2x3090-status-14gbps-clubrig-1.txt")
    assert report.extras["nvlink_speeds_gbps"]["GPU1"] == {f"link{i}": 14.062 for i in range(4)}


def test_remote_device_lines_name_the_far_end() -> None:
    text = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-1111-2222-3333-444444444444)\n"
        "         Link 0: Remote Device 00000000:06:00.0: Link 57\n"
        "         Link 1: Remote Device FFFFFFFF:FF:FF.0: Link 3\n"
    )
    ports = parse_nvlink_status(text, "r.txt").machine.gpus[0].nvlink_ports
    assert isinstance(ports, tuple) and [p.remote_pci_bus_id for p in ports] == ["0000:06:00.0", "ffffffff:ff:ff.0"]


@pytest.mark.parametrize(
    ("name", "before", "after", "says"),
    [
        ("nvlink-2x3090-status-14gbps-clubrig-1.txt", "Link 1: 14.062 GB/s", "Link 1: -14.062 GB/s",
         "GPU0 link 1: '-14.062 GB/s' is no link speed; the link is not judged"),
        ("nvlink-2x3090-status-14gbps-clubrig-1.txt", "Link 1: 14.062 GB/s", "Link 1: nan GB/s",
         "GPU0 link 1: 'nan GB/s' is no link speed; the link is not judged"),
        ("nvlink-2x3090-status-14gbps-clubrig-1.txt", "Link 1: 14.062 GB/s", "Link 1: 1e308 GB/s",
         "GPU0 link 1: '1e308 GB/s' is no link speed; the link is not judged"),
        ("nvlink-2x3090-status-14gbps-clubrig-1.txt", "Link 1: 14.062 GB/s", "Link " + "9" * 5000 + ": 14.062 GB/s",
         "'Link 999999999999' names no NVLink port of GPU0; line left out"),
        ("nvlink-h100-errors-elided-stas-1.txt", "Link 0: CRC Errors: 0", "Link 0: CRC Errors: " + "9" * 5000,
         "GPU0 link 0: 'CRC Errors: " + "9" * 28 + "' is no error count; it is not judged"),
    ],
)  # fmt: skip
def test_a_figure_no_link_gives_is_read_around_and_the_audit_is_not_a_pass(
    tmp_path: Path, name: str, before: str, after: str, says: str
) -> None:
    """A 5,000-digit link or count used to crash the reader (exit 5); -14, nan or 1e308 GB/s passed unsaid."""
    text = (CAPTURES / name).read_text(encoding="utf-8")
    assert before in text
    (tmp_path / "nvlink.txt").write_text(text.replace(before, after, 1), encoding="utf-8")
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(tmp_path / "nvlink.txt")))).report
    assert ("recovered", says) in [(i.action, i.message) for i in report.input_issues]
    assert report.gate.verdict != "pass" and "input-recovered" in _codes(report)


def _status(gpu: int, active: set[int]) -> str:
    head = f"GPU {gpu}: Tesla V100-SXM2-16GB (UUID: GPU-388a149d-072d-881b-469c-a3e3c7c4dc1{gpu})\n"
    return head + "".join(f"\t Link {k}: {'25.781 GB/s' if k in active else '<inactive>'}\n" for k in range(6))


def test_two_v100s_with_the_same_few_links_are_a_smaller_board_not_a_broken_mesh(tmp_path: Path) -> None:
    """An HPC centre's two-GPU V100 SXM2 node (RWTH CLAIX's help page): two links active on each GPU, the other four
    not wired. The model's six are its eight-GPU cube mesh's: the same count on every GPU shown warns instead of
    failing; a GPU below its sibling still fails."""
    paste = tmp_path / "nvlink.txt"
    paste.write_text(_status(0, {0, 2}) + _status(1, {1, 2}))
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    down = next(f for f in report.findings if f.code == "nvlink-link-down")
    assert down.severity.value == "warn" and "as a smaller board wires them" in down.message
    paste.write_text(_status(0, set(range(6))) + _status(1, {0, 1, 2, 3}))
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report
    assert _codes(report)["nvlink-link-down"] == "fail"
