"""nccl-tests / rccl-tests output as a user pastes it: every fixture in tests/fixtures/nccltests."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from topoaudit.bench.judge import judge_bench
from topoaudit.cli import main
from topoaudit.parse.nccl_tests import NcclTestsParseError, looks_like_nccl_tests, parse_nccl_tests

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccltests"
ALL = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".txt", ".json"))

# file -> (ranks, hosts, rows, peak busbw, peak size)
EXPECTED = {
    "nccltest-8x4090-p2p-disabled-stock-driver-1.txt": (8, 1, 25, 15.04, 33554432),
    "nccltest-8x4090-p2p-unlocked-tinygrad-driver-1.txt": (8, 1, 25, 20.64, 134217728),
    "nccltest-8x5090-p2p-patched-driver-nofooter-1.txt": (8, 1, 25, 45.70, 33554432),
    "nccltest-a100-oci-bmgpu48-2node-10g-roce-1.txt": (16, 2, 1, 222.88, 10737418240),
    "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt": (8, 1, 28, 235.14, 8589934592),
    "nccltest-a3mega-h100-2node-16gpu-1.txt": (16, 2, 31, 338.82, 8589934592),
    "nccltest-allgather-4xa100pcie-azure-nc96ads-1.txt": (4, 1, 1, 25.86, 33554432),
    "nccltest-gb300-nvl-oci-4tray-16gpu-mnnvl-1.txt": (16, 4, 11, 701.33, 8589934592),
    "nccltest-gh200-alps-2node-1gpu-each-slingshot-1.txt": (2, 2, 8, 22.86, 134217728),
    "nccltest-rccl-mi355x-oci-8gpu-allreduce-trimmed-1.txt": (8, 1, 2, 406.76, 8589934592),
    "derived-gh200-mpi-noise-in-table.txt": (2, 2, 8, 22.86, 134217728),
    "derived-gh200-collapsed-trimmed-nofooter.txt": (2, 2, 8, 22.86, 134217728),
    "derived-gh200-wrong-elements.txt": (2, 2, 8, 22.86, 134217728),
    "derived-gh200-json-J.json": (2, 2, 8, 22.86, 134217728),
    "derived-4090-old-format-error-column.txt": (8, 1, 25, 15.04, 33554432),
    "derived-8xh200-slow-busbw-scaled.txt": (8, 1, 28, 45.0, 8589934592),
    "derived-8xh200-nvls-tuning-340.txt": (8, 1, 28, 340.0, 8589934592),
    "derived-8xh200-ring-env-340.txt": (8, 1, 28, 340.0, 8589934592),
}


def test_every_fixture_is_expected_and_has_provenance() -> None:
    with open(FIXTURES / "PROVENANCE.tsv", encoding="utf-8") as fh:
        listed = {row["file"] for row in csv.DictReader(fh, delimiter="\t")}
    assert {p.name for p in ALL} == set(EXPECTED) == listed


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_fixture_gives_ranks_hosts_rows_and_peak(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert looks_like_nccl_tests(text)
    parsed = parse_nccl_tests(text, path.name)
    result = parsed.result
    ranks, hosts, rows, peak, at = EXPECTED[path.name]
    group = result.groups[0]
    assert (result.world_size, len(result.hosts), len(group.rows)) == (ranks, hosts, rows)
    assert group.peak_busbw_gbps == pytest.approx(peak) and group.peak_size_bytes == at
    assert [r.size_bytes for r in group.rows] == sorted(r.size_bytes for r in group.rows)
    assert all(r.time_us > 0 for r in group.rows)


def test_rccl_flavour_and_trimmed_rows_keep_the_avg_as_reported_but_never_as_the_gate() -> None:
    parsed = parse_nccl_tests((FIXTURES / "nccltest-rccl-mi355x-oci-8gpu-allreduce-trimmed-1.txt").read_text())
    assert parsed.flavour == "rccl-tests" and parsed.result.backend == "rccl"
    assert parsed.result.avg_busbw_gbps == pytest.approx(273.886)
    assert parsed.result.groups[0].plateau_busbw_gbps == pytest.approx(406.76)


def test_devices_hosts_and_bus_ids_are_read_in_both_notations() -> None:
    gb300 = parse_nccl_tests((FIXTURES / "nccltest-gb300-nvl-oci-4tray-16gpu-mnnvl-1.txt").read_text()).result
    assert gb300.ranks[1].pci_bus_id == "0009:06:00.0" and gb300.ranks[1].name == "NVIDIA GB300"
    assert gb300.ranks[4].host == "instance20260506003159" and gb300.ranks[4].local_rank == 0
    old = parse_nccl_tests((FIXTURES / "nccltest-8x4090-p2p-disabled-stock-driver-1.txt").read_text()).result
    assert "0x25" in str(old.ranks[1].pci_bus_id)  # only the bus number is printed: kept as the reason


def test_wrong_elements_are_counted_and_become_a_corruption_finding() -> None:
    result = parse_nccl_tests((FIXTURES / "derived-gh200-wrong-elements.txt").read_text()).result
    rows = result.groups[0].rows
    assert [r.wrong for r in rows if r.wrong] == [4096, 4096] and result.out_of_bounds == 16384
    codes = [f.code for f in judge_bench(result)]
    assert codes == ["bench-data-corruption"]


def test_mpi_noise_is_ignored_with_its_line_and_trimmed_rows_are_recovered() -> None:
    noisy = parse_nccl_tests((FIXTURES / "derived-gh200-mpi-noise-in-table.txt").read_text())
    assert [i.action for i in noisy.issues] == ["ignored"] * 3
    trimmed = parse_nccl_tests((FIXTURES / "derived-gh200-collapsed-trimmed-nofooter.txt").read_text())
    assert sum(i.action == "recovered" for i in trimmed.issues) == 3
    assert "footer" in str(trimmed.result.avg_busbw_gbps) and trimmed.result.status == "partial"
    last = trimmed.result.groups[0].rows[-1]
    assert last.busbw_gbps == 22.86 and "in-place" in str(last.inplace_busbw_gbps)


def test_old_format_error_column_and_json_match_the_text() -> None:
    old = parse_nccl_tests((FIXTURES / "derived-4090-old-format-error-column.txt").read_text()).result
    assert all(r.wrong == 0 for r in old.groups[0].rows) and old.world_size == 8
    text = parse_nccl_tests((FIXTURES / "nccltest-gh200-alps-2node-1gpu-each-slingshot-1.txt").read_text())
    js = parse_nccl_tests((FIXTURES / "derived-gh200-json-J.json").read_text())
    assert js.format == "json"
    assert [r.busbw_gbps for r in js.result.groups[0].rows] == [r.busbw_gbps for r in text.result.groups[0].rows]
    assert js.result.hosts == text.result.hosts and js.result.avg_busbw_gbps == pytest.approx(14.9966)


def test_text_without_any_row_is_refused() -> None:
    with pytest.raises(NcclTestsParseError):
        parse_nccl_tests("# nThread 1 nGpus 8\n# Using devices\n")


def test_analyze_reports_an_imported_nccl_tests_run(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt"
    with pytest.raises(SystemExit):
        main(["analyze", str(path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"]["kind"] == "nccl-tests"
    bench = doc["bench"]
    assert bench["source"] == "nccl-tests" and bench["world_size"] == 8
    assert bench["groups"][0]["peak_busbw_gbps"] == 235.14 and len(bench["groups"][0]["rows"]) == 28
    with pytest.raises(SystemExit):
        main(["analyze", str(path)])
    out = capsys.readouterr().out
    assert "all_reduce bench, imported from nccl-tests" in out and "235.14" in out


def test_a_slow_8x_h200_log_fails_against_the_catalog_entry_it_names(capsys: pytest.CaptureFixture[str]) -> None:
    """8x NVIDIA H200 plateauing at 45 GB/s busbw (a real run, scaled): the log carries no link matrix, but it
    names the model and count, so the catalog's figure for 8x H200 SXM is the expectation: NVLS, NCCL's own
    choice there, and it is below half of the ring's figure too."""
    path = FIXTURES / "derived-8xh200-slow-busbw-scaled.txt"
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert stop.value.code == 1 == doc["gate"]["exit_code"] and doc["gate"]["verdict"] == "fail"
    (below,) = [f for f in doc["findings"] if f["code"] == "bench-below-expected"]
    assert below["severity"] == "fail"
    assert below["evidence"]["catalog_entry"] == "H200-SXM" and below["evidence"]["expected_busbw_gbps"] == 482.26
    assert "8x NVIDIA H200 SXM" in below["message"] and "482.26 GB/s nvls figure" in below["message"]


def test_a_healthy_8x_a100_log_passes_against_its_catalog_entry(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt"
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert stop.value.code == 0 and not [f for f in doc["findings"] if f["code"].startswith("bench-")]
