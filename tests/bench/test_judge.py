"""The bench judge as a pure function: ratio bands at their boundaries, the catalog's expectation for a box
whose model the bench names, oversubscribed CPU ranks, a stopped run. No torch, no processes.

The runs here are rings (``NCCL_ALGO=Ring``) unless a test says otherwise: on an 8x H200 box NCCL's own choice
is NVLS, which has its own figure (tests/oracle)."""

from __future__ import annotations

import dataclasses

import pytest
from builders import machine, nvswitch8

from topoaudit.bench.expect import const
from topoaudit.bench.judge import interrupted_gate, judge_bench, with_expectations
from topoaudit.catalog import find_gpu
from topoaudit.exitcodes import ExitCode
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow, RankError, RankInfo
from topoaudit.model.report import Gate, SourceInfo
from topoaudit.pipeline import analyze


def _row(size: int, busbw: float) -> BenchRow:
    return BenchRow(size, size // 4, "float32", 1.0, busbw / 1.75, busbw, 0)


def _result(
    plateau: float,
    expected: float | None = None,
    *,
    name: str = "NVIDIA H200",
    hosts: tuple[str, ...] = ("h",),
    n: int = 8,
    backend: str = "nccl",
    errors: tuple[RankError, ...] = (),
    environment: dict[str, str] | None = None,
) -> BenchResult:
    environment = {"NCCL_ALGO": "Ring"} if environment is None else environment
    ranks = tuple(
        RankInfo(r, r % (n // len(hosts)), hosts[r * len(hosts) // n], f"cuda:{r}", name=name) for r in range(n)
    )
    group = BenchGroup(
        "all",
        "all",
        tuple(range(n)),
        tuple(f"h:cuda{r}" for r in range(n)),
        (_row(1 << 20, plateau / 2), _row(1 << 30, plateau)),
        plateau_busbw_gbps=plateau,
        plateau_size_bytes=1 << 30,
        **({"expected_busbw_gbps": expected, "expected_basis": "18 NVLink4 links"} if expected else {}),
    )
    return BenchResult(
        "nccl-tests", "all_reduce", backend, n, hosts, ranks, (group,), "complete",
        errors=errors, environment=environment,
    )  # fmt: skip


def _below(result: BenchResult, **kw: object) -> list[tuple[str, float]]:
    return [
        (f.severity.value, f.evidence["ratio"]) for f in judge_bench(result, **kw) if f.code == "bench-below-expected"
    ]


# --- ratio bands against the link model, at their boundaries --------------------------------------------
@pytest.mark.parametrize(
    ("measured", "verdict"),
    [
        (36.0, "fail"),  # 10% of what the links carry: far below the model is a failure by default
        (179.9, "fail"),  # just below half
        (180.0, "warn"),  # exactly half: not below it
        (269.9, "warn"),  # just below three quarters
        (270.0, None),  # exactly three quarters: healthy
        (360.0, None),
        (500.0, None),  # above the ring model (NVLS): a note, never a finding
    ],
)
def test_ratio_bands_at_their_boundaries(measured: float, verdict: str | None) -> None:
    assert const("fail_below_ratio") == 0.5 and const("warn_below_ratio") == 0.75
    found = _below(_result(measured, expected=360.0))
    assert [v for v, _ in found] == ([verdict] if verdict else [])


def test_a_ratio_that_rounds_to_the_band_edge_is_still_below_it() -> None:
    (found,) = _below(_result(179.98, expected=360.0))  # 0.49994: rounds to 0.5 but is below half
    assert found == ("fail", 0.5)


def test_a_tenth_of_the_nvlink_model_fails_the_gate_by_default() -> None:
    box = machine(8, nvswitch8, name="NVIDIA H200")
    report = analyze(box, source=SourceInfo("bench", "live"), bench=_result(36.0, expected=360.0))
    below = [f for f in report.findings if f.code == "bench-below-expected"]
    assert [f.severity.value for f in below] == ["fail"] and "10% of the 360 GB/s" in below[0].message
    assert report.gate.exit_code == ExitCode.FINDINGS


# --- the catalog's expectation where no link model exists (an imported nccl-tests log) ------------------
def test_a_slow_8x_h200_without_a_link_model_is_judged_against_the_catalog_entry() -> None:
    (finding,) = [f for f in judge_bench(_result(45.0)) if f.code == "bench-below-expected"]
    assert finding.severity.value == "fail"
    assert finding.evidence["catalog_entry"] == "H200-SXM" and finding.evidence["expected_busbw_gbps"] == 367.61
    assert "367.61 GB/s ring figure for 8x NVIDIA H200 SXM (measured)" in finding.message
    assert "catalog entry H200-SXM" in str(finding.evidence["expected_basis"])


def test_an_unstated_algorithm_on_an_nvls_box_is_held_to_nvls_even_with_a_link_model() -> None:
    """The links model a ring; NCCL picks NVLS on 8x H200, so a run at the ring's speed did not engage it."""
    (finding,) = judge_bench(_result(360.0, expected=360.0, environment={}))
    assert finding.code == "bench-below-expected" and finding.severity.value == "warn"
    assert finding.evidence["expected_busbw_gbps"] == 482.26 and "NVLS did not engage" in finding.message


def test_catalog_bands_apply_from_the_ring_figure_down() -> None:
    assert _below(_result(367.61 * 0.86)) == []  # within the spread of healthy rings (tolerance 0.85)
    assert [v for v, _ in _below(_result(367.61 * 0.84))] == ["warn"]
    assert [v for v, _ in _below(_result(367.61 * 0.49))] == ["fail"]


def test_the_audits_catalog_entry_wins_over_the_name_the_ranks_print() -> None:
    a100 = find_gpu("A100-SXM4-40GB")
    assert a100 is not None and a100.band(8) is not None
    found = judge_bench(_result(45.0, name="NVIDIA H200"), spec=a100)
    (below,) = [f for f in found if f.code == "bench-below-expected"]
    assert below.evidence["catalog_entry"] == a100.key


def test_across_hosts_the_reference_network_is_assumed_and_warns_at_most() -> None:
    (found,) = [f for f in judge_bench(_result(45.0, hosts=("a", "b"))) if f.code == "bench-below-expected"]
    assert found.severity.value == "warn" and found.evidence["oracle_warn_at_most"] is True
    assert "2 nodes x 4x NVIDIA H200 SXM" in found.message and "HGX H200 reference node" in found.message


def test_no_catalog_expectation_on_cpu_or_for_an_unknown_model() -> None:
    assert _below(_result(45.0, backend="gloo")) == []
    assert _below(_result(45.0, name="NVIDIA Imaginary X1")) == []
    mixed = _result(45.0)
    mixed = dataclasses.replace(
        mixed, ranks=(dataclasses.replace(mixed.ranks[0], name="NVIDIA H100"), *mixed.ranks[1:])
    )
    assert _below(mixed) == []  # ranks naming two models: no one entry to judge against


def test_a_pair_of_bridged_cards_is_not_held_to_the_bridged_pair_figure_without_links() -> None:
    """Two H100 NVL of an 8-card box may share a bridge (208 GB/s) or only PCIe: without links, no guess."""
    nvl = find_gpu("NVIDIA H100 NVL")
    assert nvl is not None and nvl.band(2) is not None and not nvl.one_domain
    assert _below(_result(45.0, name="NVIDIA H100 NVL", n=2)) == []


def test_a_full_72_rank_nvl72_run_is_one_nvlink_domain_held_to_the_full_rack_figure() -> None:
    """72 GB200 ranks on 18 trays of 4: one NVLink domain, so the rack's own measured figure, not the network's."""
    trays = tuple(f"tray{k:02d}" for k in range(18))
    slow = _result(350.0, name="NVIDIA GB200", hosts=trays, n=72, environment={})
    (found,) = [f for f in judge_bench(slow) if f.code == "bench-below-expected"]
    assert found.severity.value == "fail" and found.evidence["expected_busbw_gbps"] == 840.0
    assert "350 GB/s busbw, 42% of the 840 GB/s default figure for 72x NVIDIA GB200" in found.message
    assert "full rack, 72 GPUs" in str(found.evidence["expected_basis"])
    # NCCL's choice was assumed: a run at 55% of it is at 55% of the ring's figure too, so it warns
    (half,) = judge_bench(_result(400.0, name="NVIDIA GB200", hosts=trays, n=72, environment={}))
    assert half.severity.value == "warn"
    healthy = with_expectations(
        _result(835.0, name="NVIDIA GB200", hosts=trays, n=72, environment={}), find_gpu("GB200")
    )
    (group,) = healthy.groups
    assert group.expected_busbw_gbps == 840.0 and group.ratio == 0.994
    assert group.expected_basis.startswith("oracle: figure for 72x NVIDIA GB200")
    assert [f.code for f in judge_bench(healthy)] == []


# --- oversubscribed CPU ranks ---------------------------------------------------------------------------
def test_more_ranks_than_cores_is_a_warning_naming_both_counts() -> None:
    crowded = _result(45.0, n=4, backend="gloo", environment={"cpu_cores": "2"})
    (found,) = [f for f in judge_bench(crowded) if f.code == "bench-oversubscribed"]
    assert found.severity.value == "warn" and found.evidence == {"host": "h", "ranks": 4, "cpu_cores": 2}
    fits = _result(45.0, n=2, backend="gloo", environment={"cpu_cores": "2"})
    assert "bench-oversubscribed" not in {f.code for f in judge_bench(fits)}


# --- a stopped run --------------------------------------------------------------------------------------
def test_a_stopped_run_is_incomplete_not_a_failed_rank_and_its_gate_exits_130() -> None:
    stopped = _result(360.0, expected=360.0, errors=(RankError(-1, "interrupted", "SIGTERM received"),))
    codes = {f.code: f.severity.value for f in judge_bench(stopped)}
    assert codes == {"bench-incomplete": "warn"}
    gate = interrupted_gate(Gate("pass", 0, "no finding at or above 'fail'", False), stopped)
    assert gate.exit_code == ExitCode.INTERRUPTED == 130 and gate.incomplete
    assert "SIGTERM" in gate.reason and "2 measured row(s)" in gate.reason
    finished = _result(360.0, expected=360.0)
    same = Gate("pass", 0, "ok", False)
    assert interrupted_gate(same, finished) is same


def test_a_real_failure_next_to_a_stop_is_still_reported() -> None:
    errors = (RankError(1, "died", "rank 1 ended with exit code 17"), RankError(-1, "interrupted", "SIGTERM received"))
    codes = {f.code for f in judge_bench(_result(360.0, expected=360.0, errors=errors))}
    assert codes == {"bench-rank-failed", "bench-incomplete"}
