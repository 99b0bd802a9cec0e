"""Formulas as nccl-tests defines them, the expectation model, islands, group plans and bench findings.

Pure: no torch, no processes."""

from __future__ import annotations

import dataclasses

import pytest
from builders import machine, nvswitch8, pairs, pcie, split_4_4

from topoaudit import units
from topoaudit.bench import formulas
from topoaudit.bench.assemble import assemble
from topoaudit.bench.expect import CONSTANTS, expected_busbw, judge_ratio, pcie_raw_gbps
from topoaudit.bench.groups import make_plan, map_gpus, parse_groups
from topoaudit.bench.judge import judge_bench
from topoaudit.catalog import PCIE_RAW_GBPS_X16
from topoaudit.model import busbw
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow, RankError, RankInfo, SkippedSize
from topoaudit.model.machine import Gpu, PcieLink
from topoaudit.rules.codes import CODES
from topoaudit.units import normalize_bus_id


# --- formulas ------------------------------------------------------------------------------------------
def test_busbw_is_algbw_times_2_n_minus_1_over_n_with_gb_1e9() -> None:
    # 1 GiB in 10 ms on 8 ranks: algbw 107.37 GB/s (10^9), busbw x 1.75
    assert busbw.algbw_gbps(1 << 30, 10_000) == pytest.approx(107.374, rel=1e-4)
    assert busbw.busbw_gbps(1 << 30, 10_000, 8) == pytest.approx(107.374 * 1.75, rel=1e-4)
    assert busbw.busbw_factor(2) == 1.0
    assert busbw.busbw_factor(8, "all_gather") == pytest.approx(7 / 8)
    assert busbw.busbw_factor(1) == 0.0  # one rank moves nothing over a link


def test_nccl_tests_fixture_row_reproduces_its_own_busbw() -> None:
    # a3mega 16 ranks, 8 GiB: time 47535 us, algbw 180.71, busbw 338.82
    assert busbw.algbw_gbps(8589934592, 47535) == pytest.approx(180.71, abs=0.01)
    assert busbw.busbw_gbps(8589934592, 47535, 16) == pytest.approx(338.82, abs=0.02)


def test_sizes_parse_with_binary_suffixes_and_sweep_by_factor() -> None:
    assert units.parse_size("16M") == 16 << 20
    assert units.parse_size("4GiB") == 4 << 30
    assert units.parse_size("8") == 8
    with pytest.raises(ValueError):
        units.parse_size("lots")
    assert formulas.size_sweep(8, 64) == (8, 16, 32, 64)
    assert formulas.size_sweep(1, 8) == (4, 8)  # at least one float32 element
    assert units.format_size(16 << 20) == "16 MiB"


def test_plateau_is_the_large_sizes_not_a_mean_and_latency_percentiles_are_nearest_rank() -> None:
    rows = [(8, 0.0), (1 << 20, 10.0), (1 << 24, 100.0), (1 << 26, 200.0), (1 << 28, 190.0)]
    assert busbw.plateau(rows) == (1 << 26, 200.0)
    assert busbw.plateau([(8, 0.0), (4096, 1.0)]) is None
    assert formulas.percentile([1, 2, 3, 4, 100], 99) == 100
    assert formulas.percentile([5, 1, 3], 50) == 3


def test_calls_per_trial_never_lets_repeated_sums_overflow_float32() -> None:
    for n in (2, 8, 72, 1024):
        k = formulas.calls_per_trial(1e-6, n, target_s=1.0, max_calls=1000)
        assert (13 + n) * float(n) ** k < 3.4e38
    assert formulas.calls_per_trial(1.0, 8, target_s=0.02) == 1  # huge messages: one call per trial


# --- expectation model ---------------------------------------------------------------------------------
def test_nvswitch_h200_expects_18_links_at_25_gbps_times_ring_efficiency() -> None:
    m = machine(8, nvswitch8, name="NVIDIA H200")
    exp = expected_busbw(m, tuple(range(8)))
    assert exp.busbw_gbps == pytest.approx(18 * 25 * 0.80)
    assert "18 NVLink4" in exp.basis
    # measured ring 367.61 (ml-engineering) is healthy against it; NVLS 482 is above the ring model
    assert judge_ratio(367.61 / 360) == "ok"
    assert judge_ratio(482.26 / 360) == "nvls"


def test_split_box_crossing_expects_host_staged_pcie_and_a_domain_expects_its_links() -> None:
    gpus = tuple(Gpu(index=i, name="NVIDIA H200 NVL", pcie=PcieLink(gen_max=5, width_current=16)) for i in range(8))
    m = dataclasses.replace(machine(8, split_4_4, name="NVIDIA H200 NVL"), gpus=gpus)
    inside = expected_busbw(m, (0, 1, 2, 3))
    across = expected_busbw(m, (0, 4))
    assert inside.busbw_gbps == pytest.approx(18 * 25 * 0.8)  # 3 peers x NV6
    assert across.busbw_gbps == pytest.approx(63.0 * 0.45, rel=0.01)
    assert "SYS" in across.basis


def test_pcie_box_without_generation_has_no_expectation_and_says_why() -> None:
    m = machine(8, pcie)
    assert "PCIe generation" in str(expected_busbw(m, (0, 1)).busbw_gbps)
    assert "single GPU" in str(expected_busbw(m, (0,)).busbw_gbps)


def test_every_constant_names_its_provenance() -> None:
    assert all(c.provenance and c.unit for c in CONSTANTS.values())


def test_pcie_lane_rates_give_the_catalog_x16_figures() -> None:
    """A x16 link per generation is the figure the catalog (and its public source) quotes: Gen6 121 GB/s."""
    for generation, x16 in PCIE_RAW_GBPS_X16.items():
        assert pcie_raw_gbps(generation, 16) == pytest.approx(x16, rel=0.002), generation


# --- groups --------------------------------------------------------------------------------------------
def _ranks(n: int, host: str = "h", device: str = "cuda") -> tuple[RankInfo, ...]:
    return tuple(
        RankInfo(rank=i, local_rank=i, host=host, device=f"{device}:{i}" if device == "cuda" else "cpu")
        for i in range(n)
    )


def test_plan_builds_all_domains_cross_pairs_and_tp_from_the_nvlink_domains() -> None:
    m = machine(8, split_4_4, name="NVIDIA H200 NVL")
    plan = make_plan(parse_groups("all,domains,cross,pairs,tp=4"), _ranks(8), m)
    kinds = [g.kind for g in plan.groups]
    assert plan.domains == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert [g.ranks for g in plan.groups if g.kind == "domain"] == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert [g.ranks for g in plan.groups if g.kind == "cross"] == [(0, 4)]
    assert kinds.count("pair") == 28 and all(not g.sweep for g in plan.groups if g.kind == "pair")
    assert [g.ranks for g in plan.groups if g.kind == "tp"] == [(0, 1, 2, 3), (4, 5, 6, 7)]


def test_tp_that_cannot_stay_on_nvlink_is_measured_across_and_said_so() -> None:
    plan = make_plan(("tp=4",), _ranks(8), machine(8, pairs, name="NVIDIA H100 NVL"))
    assert [g.ranks for g in plan.groups] == [(0, 1, 2, 3)]
    assert any("no placement" in n for n in plan.notes)


def test_ranks_join_gpus_by_bus_id_not_by_index() -> None:
    m = dataclasses.replace(
        machine(2, nvswitch8), gpus=(Gpu(index=0, pci_bus_id="0000:18:00.0"), Gpu(index=1, pci_bus_id="0000:2a:00.0"))
    )
    ranks = (
        RankInfo(0, 0, "h", "cuda:0", pci_bus_id="0000:2a:00.0"),
        RankInfo(1, 1, "h", "cuda:1", pci_bus_id="00000000:18:00.0"),
    )
    assert map_gpus(ranks, m) == {0: 1, 1: 0}
    assert normalize_bus_id("00000000:07:00.0") == "0000:07:00.0"


def test_bad_group_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown group"):
        parse_groups("all,everything")
    with pytest.raises(ValueError):
        parse_groups("tp=1")


# --- assemble + findings (one test per bench code) -----------------------------------------------------
def _rec(group: str, ranks: list[int], size: int, us: float, wrong: int = 0) -> dict[str, object]:
    return {"group": group, "kind": "x", "ranks": ranks, "size": size, "count": size // 4,
            "trial_us": [us, us * 1.1, us * 0.9], "calls": 30, "wrong": wrong, "timed_s": 3 * us * 1e-5}  # fmt: skip


def _split_result(cross_us: float, wrong: int = 0, errors: list[RankError] | None = None) -> BenchResult:
    m = machine(8, split_4_4, name="NVIDIA H200")
    ranks = _ranks(8)
    plan = make_plan(("all", "pairs"), ranks, m)
    recs = []
    for g in plan.groups:
        if g.kind == "all":
            recs += [_rec("all", list(g.ranks), 8, 20.0), _rec("all", list(g.ranks), 1 << 28, 5000.0, wrong)]
        else:
            same = g.ranks[0] // 4 == g.ranks[1] // 4
            recs.append(_rec(g.name, list(g.ranks), 1 << 28, 1000.0 if same else cross_us))
    return assemble(backend="nccl", world=8, ranks=ranks, plan=plan, records=recs,
                    skipped=[SkippedSize(8 << 30, "needs 16 GiB")], errors=errors or [], machine=m,
                    environment={}, wall_s=1.0)  # fmt: skip


def test_assemble_computes_rows_plateau_latency_expectation_and_islands() -> None:
    result = _split_result(cross_us=20000.0)
    all_ = result.group("all")
    assert all_ is not None
    row = all_.rows[-1]
    assert row.time_us == 5000.0 and row.busbw_gbps == pytest.approx(row.algbw_gbps * 1.75)
    assert all_.plateau_size_bytes == 1 << 28 and all_.latency_p50_us == 20.0
    assert isinstance(all_.expected_busbw_gbps, float)
    assert result.measured_islands == ((0, 1, 2, 3), (4, 5, 6, 7)) == result.expected_islands


def test_code_measured_topology_mismatch_when_islands_differ_from_domains() -> None:
    codes = {f.code for f in judge_bench(_split_result(cross_us=1000.0))}
    assert "measured-topology-mismatch" in codes  # every pair equally fast: one island, two domains


def test_code_bench_below_expected_from_the_model_and_from_expect_busbw() -> None:
    found = judge_bench(_split_result(cross_us=20000.0), expect_busbw_gbps=400)
    below = [f for f in found if f.code == "bench-below-expected"]
    assert below and any(f.evidence.get("basis") == "--expect-busbw" and f.severity.value == "fail" for f in below)


def test_code_bench_data_corruption_names_the_group() -> None:
    found = [f for f in judge_bench(_split_result(20000.0, wrong=3)) if f.code == "bench-data-corruption"]
    assert found and found[0].evidence["group"] == "all" and "256 MiB" in found[0].message


def test_code_bench_timeout_names_group_and_size() -> None:
    err = RankError(0, "timeout", "collective did not finish within 5 s", "all", 1 << 20)
    found = [f for f in judge_bench(_split_result(20000.0, errors=[err])) if f.code == "bench-timeout"]
    assert found and "group all at 1 MiB" in found[0].message


def test_code_bench_rank_failed_and_bench_incomplete() -> None:
    err = RankError(3, "died", "rank 3 ended with exit code 17", "", 0)
    assert "bench-rank-failed" in {f.code for f in judge_bench(_split_result(20000.0, errors=[err]))}
    empty = BenchResult("topoaudit", "all_reduce", "nccl", 2, ("h",), (), (), "partial")
    assert {f.code for f in judge_bench(empty)} == {"bench-incomplete"}


def test_code_bench_size_skipped_lists_the_sizes() -> None:
    found = [f for f in judge_bench(_split_result(20000.0)) if f.code == "bench-size-skipped"]
    assert found and found[0].evidence["sizes_bytes"] == [8 << 30]


def test_every_bench_code_is_registered() -> None:
    for code in ("bench-data-corruption", "bench-below-expected", "measured-topology-mismatch", "bench-timeout",
                 "bench-rank-failed", "bench-incomplete", "bench-size-skipped"):  # fmt: skip
        assert code in CODES


def test_bench_result_round_trips_through_the_report_codec() -> None:
    from topoaudit.model.codec import decode, encode

    result = _split_result(20000.0)
    again = decode(BenchResult, encode(result))
    assert again == result
    assert isinstance(again.groups[0], BenchGroup) and isinstance(again.groups[0].rows[0], BenchRow)
