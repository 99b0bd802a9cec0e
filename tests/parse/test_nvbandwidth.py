"""nvbandwidth output, v0.4 to v0.10: every real run read, and a pair far below its siblings found."""

from __future__ import annotations

from pathlib import Path

import pytest

from topoaudit.app.analyze import AnalyzeRequest, analyze_input
from topoaudit.app.common import MachineInput
from topoaudit.model.nccl_topo import BandwidthMatrix, Captures
from topoaudit.model.report import Report
from topoaudit.render.junit import not_judged as capture_judgement

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"
REAL = sorted(CAPTURES.glob("nvbandwidth-*-1.txt"))


def _analyze(name: str) -> Report:
    return analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES / name)))).report


def _matrices(report: Report) -> dict[str, BandwidthMatrix]:
    assert isinstance(report.captures, Captures)
    return {m.test: m for m in report.captures.bandwidth}


def test_all_six_real_files_are_kept() -> None:
    assert len(REAL) == 6


D2D_READ = "device_to_device_memcpy_read_ce"
B300 = "nvbandwidth-7xb300-sxm6-dell-xe9780-one-gpu-missing-1.txt"
RUNS = [
    ("nvbandwidth-8gpu-d2d-ce-readme-example-1.txt", 8, "device_to_device_memcpy_write_ce", (0, 1), 276.07),
    ("nvbandwidth-8gpu-h2d-ce-readme-example-1.txt", 8, "host_to_device_memcpy_ce", (0, 7), 25.97),
    ("nvbandwidth-8gpu-h2d-bidir-ce-readme-example-1.txt", 8, "host_to_device_bidirectional_memcpy_ce", (0, 0), 18.56),
    ("nvbandwidth-8xh100-azure-ndh100v5-v0.4-1.txt", 8, D2D_READ, (1, 0), 370.90),
    (B300, 7, "device_to_device_bidirectional_memcpy_read_ce_total", (0, 1), 1521.22),
    ("nvbandwidth-8xh100-v0.10-multirun-separators-latency-1.txt", 8, D2D_READ, (0, 1), 395.08),
]


@pytest.mark.parametrize(("name", "gpus", "test", "cell", "value"), RUNS)
def test_every_real_run_is_read(name: str, gpus: int, test: str, cell: tuple[int, int], value: float) -> None:
    report = _analyze(name)
    assert report.source.kind == "nvbandwidth"
    assert len(report.machine.gpus) == gpus
    matrix = _matrices(report)[test]
    assert matrix.values_gbps[cell[0]][cell[1]] == value
    assert "nvbandwidth-pair-low" not in {f.code for f in report.findings}  # every real run is uniform


def test_diagonal_na_and_zero_are_not_pairs() -> None:
    for name in ("nvbandwidth-8gpu-d2d-ce-readme-example-1.txt", "nvbandwidth-8xh100-azure-ndh100v5-v0.4-1.txt"):
        (matrix,) = _matrices(_analyze(name)).values()
        assert not any(isinstance(matrix.values_gbps[i][i], float) for i in range(8))


def test_host_rows_are_cpus() -> None:
    matrix = _matrices(_analyze("nvbandwidth-8gpu-h2d-ce-readme-example-1.txt"))["host_to_device_memcpy_ce"]
    assert matrix.rows == ("CPU0",) and matrix.columns[0] == "GPU0"


def test_v04_device_list_names_the_gpus() -> None:
    assert {g.name for g in _analyze("nvbandwidth-8xh100-azure-ndh100v5-v0.4-1.txt").machine.gpus} == {
        "NVIDIA H100 80GB HBM3"
    }


def test_b300_bidirectional_sub_matrices_and_version() -> None:
    report = _analyze("nvbandwidth-7xb300-sxm6-dell-xe9780-one-gpu-missing-1.txt")
    tests = set(_matrices(report))
    assert {
        "device_to_device_bidirectional_memcpy_read_ce_read1",
        "device_to_device_bidirectional_memcpy_write_ce_total",
    } <= tests
    assert "v0.10.0" in report.source.description


def test_latency_matrix_is_noted_not_read_as_bandwidth() -> None:
    report = _analyze("nvbandwidth-8xh100-v0.10-multirun-separators-latency-1.txt")
    assert not any("latency" in t for t in _matrices(report))
    assert any("latency matrix (ns)" in i.message for i in report.input_issues)
    assert {"device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce"} <= set(_matrices(report))


def test_one_pair_at_162_of_371_fails_naming_the_pair() -> None:
    report = _analyze("nvbandwidth-8xh100-gpu1-to-gpu0-162gbps-constructed.txt")
    found = next(f for f in report.findings if f.code == "nvbandwidth-pair-low")
    assert found.severity.value == "fail"
    assert "GPU1->GPU0 162.45 GB/s (median 370.90)" in found.message
    assert found.evidence["pairs"] == [
        {"from": "GPU1", "to": "GPU0", "gbps": 162.45, "median_gbps": 370.9, "path": "unknown"}
    ]
    assert report.gate.exit_code == 1


def test_one_gpu_slow_from_the_host_is_named() -> None:
    report = _analyze("nvbandwidth-8gpu-h2d-gpu7-x8-constructed.txt")
    found = next(f for f in report.findings if f.code == "nvbandwidth-pair-low")
    assert "CPU0->GPU7 13.04 GB/s (median 25.98)" in found.message
    assert found.evidence["pairs"][0]["path"] == "host"


def test_beside_topo_m_pairs_are_compared_on_their_own_path() -> None:
    """NV12 pairs at 300, same-socket pairs at 52 and cross-socket pairs at 38.5 GB/s: each path is uniform."""
    report = _analyze("topo-and-nvbandwidth-8xh100nvl-healthy-constructed.txt")
    assert report.source.kind == "topo-matrix" and "nvbandwidth" in report.source.description
    assert report.machine.link("GPU0", "GPU1").nvlinks == 12  # type: ignore[union-attr]
    assert "nvbandwidth-pair-low" not in {f.code for f in report.findings}
    assert _matrices(report)[D2D_READ].values_gbps[0][4] == 38.68


def test_beside_topo_m_a_slow_nvlink_pair_is_named_with_its_path() -> None:
    report = _analyze("topo-and-nvbandwidth-8xh100nvl-pair45-half-constructed.txt")
    found = next(f for f in report.findings if f.code == "nvbandwidth-pair-low")
    assert "GPU5->GPU4 150.13 GB/s (median 300.26 over NVLink)" in found.message
    assert {p["path"] for p in found.evidence["pairs"]} == {"NVLINK"}


BELOW_LINKS = "nvbandwidth-below-links"


def test_real_h100_copies_beside_their_nv18_links_are_not_flagged() -> None:
    """Two real captures pasted together (HGX H100 `topo -m`, an H100 nvbandwidth run): 371 of 450 GB/s."""
    report = _analyze("topo-and-nvbandwidth-8xh100-healthy-constructed.txt")
    assert report.machine.link("GPU0", "GPU1").nvlinks == 18  # type: ignore[union-attr]
    assert BELOW_LINKS not in {f.code for f in report.findings}
    assert capture_judgement(BELOW_LINKS, report) == ""  # judged (JUnit: a passed case), and found healthy


def test_a_box_slow_on_every_pair_fails_against_its_links_though_no_pair_is_below_its_siblings() -> None:
    report = _analyze("topo-and-nvbandwidth-8xh100-all-pairs-slow-constructed.txt")
    codes = {f.code for f in report.findings}
    assert "nvbandwidth-pair-low" not in codes  # every pair alike: the sibling comparison sees nothing
    found = next(f for f in report.findings if f.code == BELOW_LINKS)
    assert found.severity.value == "fail" and report.gate.exit_code == 1
    assert len(found.evidence["pairs"]) == 56
    assert found.evidence["per_link_gbps"] == 25.0 and found.evidence["per_link_basis"] == "catalog entry H100-SXM"
    assert "56 GPU pair(s) copy at under 70% of what their NVLinks carry" in found.message
    assert "GPU0->GPU6 159.72 GB/s over NV18 (35%)" in found.message  # the slowest pair first
    slowest = found.evidence["pairs"][0]
    assert slowest == {
        "from": "GPU0", "to": "GPU6", "gbps": 159.72, "nvlinks": 18, "links_gbps": 450.0, "ratio": 0.355,
    }  # fmt: skip


def test_without_the_gpu_model_the_slowest_catalogued_link_rate_is_the_yardstick(tmp_path: Path) -> None:
    """Device lines removed: the model is unknown, so each link is held only to the slowest NVLink in the
    catalog (RTX 3090's 14.06 GB/s): 160 of 18 x 14.06 = 253 GB/s is a warning, not a failure."""
    text = (CAPTURES / "topo-and-nvbandwidth-8xh100-all-pairs-slow-constructed.txt").read_text(encoding="utf-8")
    anonymous = tmp_path / "run.txt"
    anonymous.write_text("".join(line for line in text.splitlines(True) if not line.startswith("Device ")))
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(anonymous)))).report
    found = next(f for f in report.findings if f.code == BELOW_LINKS)
    assert found.severity.value == "warn"
    assert found.evidence["per_link_gbps"] == 14.0625 and "model is unknown" in found.evidence["per_link_basis"]


@pytest.mark.parametrize("name", [path.name for path in REAL])
def test_nvbandwidth_alone_is_not_judged_against_links_and_says_why(name: str) -> None:
    """Without `topo -m` the pairs' links are unknown: no finding, and JUnit's skipped case says what to paste."""
    report = _analyze(name)
    assert BELOW_LINKS not in {f.code for f in report.findings}
    why = capture_judgement(BELOW_LINKS, report)
    has_copies = any(t.startswith("device_to_device_memcpy_") for t in _matrices(report))
    assert why == (
        "judged against the NVLinks of `nvidia-smi topo -m` pasted before nvbandwidth's output; none was"
        if has_copies
        else "judged from nvbandwidth's device_to_device_memcpy tests; this report has none"
    )


def test_invented_nvl_figures_at_full_link_rate_pass_and_a_half_rate_pair_is_a_warning() -> None:
    healthy = _analyze("topo-and-nvbandwidth-8xh100nvl-healthy-constructed.txt")
    assert BELOW_LINKS not in {f.code for f in healthy.findings}
    half = _analyze("topo-and-nvbandwidth-8xh100nvl-pair45-half-constructed.txt")
    # No device list: NV12 is held to 12 x 14.06 = 168.75 GB/s, and 150 GB/s is 89% of it.
    assert BELOW_LINKS not in {f.code for f in half.findings}


def _two_gpus_from_the_host(tmp_path: Path, gpu0: float, gpu1: float) -> Report:
    paste = tmp_path / "h2d.txt"
    paste.write_text(
        "Running host_to_device_memcpy_ce.\n"
        "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
        "          0         1\n"
        f"0      {gpu0:.2f}     {gpu1:.2f}\n"
    )
    return analyze_input(AnalyzeRequest(MachineInput(path=str(paste)))).report


def test_two_gpus_far_apart_from_the_host_warn_without_saying_which_is_off(tmp_path: Path) -> None:
    """nvbandwidth README's example (6.20 and 12.36 GB/s): half the other GPU's rate is a PCIe link trained narrow or
    slow on one of them; with two figures only, it warns (never fails) and names both."""
    report = _two_gpus_from_the_host(tmp_path, 6.20, 12.36)
    (found,) = [f for f in report.findings if f.code == "nvbandwidth-pair-low"]
    assert found.severity.value == "warn"
    assert "CPU0->GPU0 6.20 GB/s against the other GPU's 12.36 (one of the two PCIe links is off)" in found.message
    assert found.evidence["pairs"][0]["path"] == "host"
    far = _two_gpus_from_the_host(tmp_path, 3.0, 24.0)  # an eighth: still a warning, only a third GPU would tell
    assert [f.severity.value for f in far.findings if f.code == "nvbandwidth-pair-low"] == ["warn"]


def test_two_gpus_near_each_other_from_the_host_are_no_finding(tmp_path: Path) -> None:
    report = _two_gpus_from_the_host(tmp_path, 20.1, 24.6)  # a far socket's host memory: about 20% apart
    assert "nvbandwidth-pair-low" not in {f.code for f in report.findings}
