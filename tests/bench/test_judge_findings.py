"""Each bench finding whole, as the report prints it (code, severity, message, evidence), at the boundaries that
decide it: wrong data, sizes skipped, islands, a sweep still rising, --expect-busbw, ranks crowded onto cores,
timeouts, failed ranks and a stopped run. No torch, no processes."""

from __future__ import annotations

import dataclasses

import pytest
from test_judge import _result, _row

from topoaudit.bench.judge import (
    interrupted_gate,
    judge_bench,
    ran_algorithm,
    still_rising,
    was_interrupted,
    with_expectations,
)
from topoaudit.catalog import find_gpu
from topoaudit.model.bench import BenchGroup, BenchResult, RankError, SkippedSize
from topoaudit.model.report import Gate
from topoaudit.model.values import Unsupported
from topoaudit.rules.codes import info

GIB = 1 << 30
HEALTHY = _result(360.0, expected=360.0)  # 8 ranks on one host, a ring at the links' figure: no finding


def _findings(result: BenchResult, **kw: object) -> list[tuple[str, str, str, dict[str, object]]]:
    return [(f.code, f.severity.value, f.message, f.evidence) for f in judge_bench(result, **kw)]


def _with(group: BenchGroup | None = None, **fields: object) -> BenchResult:
    """HEALTHY with its one group changed (or replaced) and these fields of the result."""
    fields.setdefault("groups", (group,) if group is not None else HEALTHY.groups)
    return dataclasses.replace(HEALTHY, **fields)


ALL = HEALTHY.groups[0]


def test_the_healthy_run_these_tests_change_has_no_finding() -> None:
    assert _findings(HEALTHY) == []


# --- wrong data -------------------------------------------------------------------------------------------
def test_wrong_data_names_the_first_six_sizes_and_keeps_every_count_in_the_evidence() -> None:
    rows = tuple(
        dataclasses.replace(_row(1 << (20 + k), 300.0), wrong=k % 2, inplace_wrong=k if k > 3 else 0) for k in range(9)
    )
    assert _findings(_with(dataclasses.replace(ALL, rows=rows))) == [
        (
            "bench-data-corruption",
            "fail",
            "all-reduce returned wrong data in group all (ranks 0,1,2,3,4,5,6,7): 2 MiB (1 wrong), 8 MiB (1 wrong), "
            "32 MiB (1 wrong), 128 MiB (1 wrong), 16 MiB (4 wrong), 32 MiB (5 wrong)",
            {
                "group": "all",
                "ranks": [0, 1, 2, 3, 4, 5, 6, 7],
                "wrong_by_size_bytes": {
                    "2097152": 1,
                    "8388608": 1,
                    "33554432": 5,
                    "134217728": 7,
                    "16777216": 4,
                    "67108864": 6,
                    "268435456": 8,
                },
            },
        )
    ]


@pytest.mark.parametrize("field", ["wrong", "inplace_wrong"])
def test_a_single_wrong_element_out_of_place_or_in_place_is_corruption(field: str) -> None:
    rows = (dataclasses.replace(_row(1 << 20, 300.0), **{field: 1}),)
    ((code, severity, message, _),) = _findings(_with(dataclasses.replace(ALL, rows=rows)))
    assert (code, severity) == ("bench-data-corruption", "fail") and message.endswith(": 1 MiB (1 wrong)")


# --- sizes skipped, islands ------------------------------------------------------------------------------
def test_sizes_skipped_in_any_group_are_named_once_smallest_first() -> None:
    one = dataclasses.replace(ALL, skipped_sizes=(SkippedSize(8 * GIB, "needs 8 GiB"),))
    two = dataclasses.replace(ALL, name="domain0", skipped_sizes=(SkippedSize(8 * GIB, "a"), SkippedSize(4 * GIB, "b")))
    assert _findings(_with(groups=(one, two))) == [
        (
            "bench-size-skipped",
            "info",
            "2 size(s) did not fit in free memory and were skipped: 4 GiB, 8 GiB",
            {"sizes_bytes": [4 * GIB, 8 * GIB]},
        )
    ]


def test_measured_islands_that_differ_from_the_domains_are_named_both_ways() -> None:
    split = _with(measured_islands=((0, 1), (2, 3, 4, 5, 6, 7)), expected_islands=((0, 1, 2, 3, 4, 5, 6, 7),))
    assert _findings(split) == [
        (
            "measured-topology-mismatch",
            "warn",
            "the pairwise matrix measures 2 island(s) {0,1} {2,3,4,5,6,7} but the topology says 1 domain(s) "
            "{0,1,2,3,4,5,6,7}",
            {"measured_islands": [[0, 1], [2, 3, 4, 5, 6, 7]], "expected_domains": [[0, 1, 2, 3, 4, 5, 6, 7]]},
        )
    ]
    same = ((0, 1, 2, 3), (4, 5, 6, 7))
    assert _findings(_with(measured_islands=same, expected_islands=((4, 5, 6, 7), (0, 1, 2, 3)))) == []
    assert _findings(_with(measured_islands=same)) == []  # no domains to compare with: nothing to say


# --- a sweep still rising ---------------------------------------------------------------------------------
def _sweep(*points: tuple[int, float]) -> BenchGroup:
    return dataclasses.replace(ALL, rows=tuple(_row(s, b) for s, b in points), plateau_busbw_gbps=points[-1][1])


@pytest.mark.parametrize(
    ("points", "rising"),
    [
        (((GIB, 100.0), (4 * GIB, 106.0)), (4 * GIB, 106.0, GIB, 100.0)),  # exactly 4x apart: neighbours
        (((GIB, 100.0), (8 * GIB, 106.0)), None),  # 8x apart: the curve between is not known
        (((GIB, 100.0), (2 * GIB, 105.0)), None),  # exactly +5%: on the plateau
        (((GIB, 100.0), (2 * GIB, 105.1)), (2 * GIB, 105.1, GIB, 100.0)),
        (((1 << 20, 100.0), (2 << 20, 120.0)), (2 << 20, 120.0, 1 << 20, 100.0)),  # 1 MiB counts
        ((((1 << 20) - 4, 50.0), (1 << 20, 120.0)), None),  # below 1 MiB does not
        (((GIB, 0.0), (2 * GIB, 120.0)), None),  # nothing measured before: no rise to name
        (((GIB, 0.5), (2 * GIB, 1.0)), (2 * GIB, 1.0, GIB, 0.5)),  # a slow link still rises
        (((2 * GIB, 120.0), (GIB, 100.0)), (2 * GIB, 120.0, GIB, 100.0)),  # rows in any order
    ],
)
def test_a_sweep_is_still_rising_when_its_largest_size_gains_over_5_percent_on_a_neighbour(
    points: tuple[tuple[int, float], ...], rising: tuple[int, float, int, float] | None
) -> None:
    assert still_rising(_sweep(*points)) == rising


def test_a_rising_sweep_below_its_figure_and_the_user_s_gate_is_named_once_not_judged_low() -> None:
    rising = _sweep((GIB // 4, 50.0), (GIB, 100.0), (4 * GIB, 120.0))
    assert _findings(_with(rising), expect_busbw_gbps=300.0) == [
        (
            "bench-sizes-too-small",
            "warn",
            "group all is still rising at its largest size (1 GiB 100 -> 4 GiB 120 GB/s busbw, +20%): the plateau "
            "was not reached, so 33% of the 360 GB/s the topology predicts (18 NVLink4 links) is not a verdict on the "
            "links",
            {
                "group": "all",
                "largest_size_bytes": 4 * GIB,
                "largest_busbw_gbps": 120.0,
                "previous_size_bytes": GIB,
                "previous_busbw_gbps": 100.0,
                "rising_above": 1.05,
            },
        )
    ]


def test_two_groups_still_rising_are_each_named() -> None:
    rising = _sweep((GIB, 100.0), (2 * GIB, 120.0))
    both = _with(groups=(rising, dataclasses.replace(rising, name="domain0")))
    found = [(code, evidence["group"]) for code, _, _, evidence in _findings(both, expect_busbw_gbps=300.0)]
    assert found == [("bench-sizes-too-small", "all"), ("bench-sizes-too-small", "domain0")]


def test_a_sweep_still_rising_against_the_user_s_gate_alone_says_so() -> None:
    rising = dataclasses.replace(_sweep((GIB, 300.0), (2 * GIB, 350.0)), expected_busbw_gbps=350.0)
    ((code, _, message, _),) = _findings(_with(rising), expect_busbw_gbps=400.0)
    assert code == "bench-sizes-too-small"
    assert message.endswith("so the --expect-busbw 400 GB/s is not a verdict on the links")


# --- --expect-busbw ---------------------------------------------------------------------------------------
def test_a_plateau_below_the_user_s_gate_fails_and_one_at_it_passes() -> None:
    assert _findings(HEALTHY, expect_busbw_gbps=360.0) == []
    assert _findings(HEALTHY, expect_busbw_gbps=360.5) == [
        (
            "bench-below-expected",
            "fail",
            "group all plateaus at 360 GB/s busbw, below the --expect-busbw 360.5 GB/s",
            {"group": "all", "measured_busbw_gbps": 360.0, "expected_busbw_gbps": 360.5, "basis": "--expect-busbw"},
        )
    ]


def test_the_user_s_gate_holds_the_group_all_or_else_the_first_group() -> None:
    slow = dataclasses.replace(ALL, name="domain0", plateau_busbw_gbps=300.0)  # within its links' band
    fast = dataclasses.replace(ALL, name="all")
    assert _findings(_with(groups=(slow, fast)), expect_busbw_gbps=330.0) == []
    ((code, _, message, _),) = _findings(_with(groups=(slow,)), expect_busbw_gbps=330.0)
    assert code == "bench-below-expected" and message.startswith("group domain0 plateaus at 300 GB/s")


INCOMPLETE = (
    "bench-incomplete",
    "warn",
    "--expect-busbw 400 cannot be checked: no large-message plateau was measured",
    {"expected_busbw_gbps": 400.0},
)


def test_a_gate_with_no_plateau_to_check_says_it_cannot_be_checked() -> None:
    unmeasured = dataclasses.replace(ALL, plateau_busbw_gbps=Unsupported("bench", "no size of 1 MiB or more"))
    assert _findings(_with(unmeasured), expect_busbw_gbps=400.0) == [INCOMPLETE]
    assert _findings(_with(groups=(), status="partial"), expect_busbw_gbps=400.0) == [INCOMPLETE]
    assert _findings(_with(groups=()), expect_busbw_gbps=400.0) == []


# --- ranks crowded onto cores ---------------------------------------------------------------------------
def test_ranks_are_counted_on_rank_0_s_host_against_its_cores() -> None:
    two_hosts = _result(360.0, expected=360.0, hosts=("a", "b"), environment={"cpu_cores": "3"})
    reordered = dataclasses.replace(two_hosts, ranks=two_hosts.ranks[4:] + two_hosts.ranks[:4])
    assert _findings(reordered) == [
        (
            "bench-oversubscribed",
            "warn",
            "4 ranks ran on 3 CPU core(s) of a: they took turns on the cores, so the figures measure the scheduler, "
            "not the links",
            {"host": "a", "ranks": 4, "cpu_cores": 3},
        )
    ]
    assert _findings(dataclasses.replace(two_hosts, environment={"cpu_cores": "4"})) == []
    assert _findings(dataclasses.replace(two_hosts, environment={"cpu_cores": "3 (cgroup)"})) == []
    a, b = two_hosts.ranks[:4], two_hosts.ranks[4:]
    no_rank_0 = dataclasses.replace(two_hosts, ranks=(b[0], a[1], a[2], a[3], *b[1:]))  # the first listed is b's
    assert [(c, e["host"]) for c, _, _, e in _findings(no_rank_0)] == [("bench-oversubscribed", "b")]


# --- timeouts, failed ranks, a stopped run ------------------------------------------------------------------
def test_the_first_timeout_is_the_finding_and_hides_the_ranks_it_killed() -> None:
    errors = (
        RankError(3, "timeout", "watchdog after 30 s", "all", GIB),
        RankError(5, "timeout", "second"),
        RankError(1, "died", "exit 17"),
    )
    assert _findings(_with(errors=errors)) == [
        (
            "bench-timeout",
            "fail",
            "a collective did not finish in group all at 1 GiB (rank 3): watchdog after 30 s",
            {"group": "all", "size_bytes": GIB, "rank": 3},
        )
    ]
    ((_, _, message, _),) = _findings(_with(errors=(RankError(3, "timeout", "no group named"),)))
    assert message == "a collective did not finish (rank 3): no group named"


@pytest.mark.parametrize(("failed", "more"), [(1, ""), (2, " (+1 more)"), (3, " (+2 more)")])
def test_a_failed_rank_is_named_with_how_many_more_failed(failed: int, more: str) -> None:
    errors = (
        RankError(1, "died", "exit 17", "all", 4 << 20),
        RankError(2, "exception", "boom"),
        RankError(4, "died", "x"),
    )
    assert _findings(_with(errors=errors[:failed])) == [
        (
            "bench-rank-failed",
            "fail",
            f"rank 1 died in group all at 4 MiB: exit 17{more}",
            {"errors": [{"rank": e.rank, "kind": e.kind, "message": e.message} for e in errors[:failed]]},
        )
    ]
    ((_, _, message, _),) = _findings(_with(errors=(RankError(2, "exception", "boom"),)))
    assert message == "rank 2 exception: boom"


def test_a_stop_keeps_the_rows_measured_and_the_gate_says_why_it_exits_130() -> None:
    stopped = _with(errors=(RankError(-1, "interrupted", "SIGINT received"),), status="partial")
    assert was_interrupted(stopped) and not was_interrupted(HEALTHY) and not was_interrupted("a report")
    assert _findings(stopped) == [
        (
            "bench-incomplete",
            "warn",
            "the bench was stopped before it finished (SIGINT received); 2 measured row(s) are kept",
            {"rows": 2, "stop": "SIGINT received"},
        )
    ]
    gate = interrupted_gate(Gate("fail", 1, "a finding at fail", False), stopped)
    assert gate == Gate(
        "fail", 130, "the bench was stopped (SIGINT received) after 2 measured row(s); a finding at fail", True
    )


def test_a_run_that_ended_early_is_incomplete_unless_its_own_text_is_judged() -> None:
    assert _findings(_with(source="topoaudit")) == []  # finished: nothing to say
    assert _findings(_with(status="partial", source="topoaudit")) == [
        ("bench-incomplete", "warn", "the bench stopped early (partial)", {})
    ]
    assert _findings(_with(status="partial")) == []  # a pasted nccl-tests run: judged from what it printed
    said = _findings(_with(groups=(), status="partial", source="topoaudit"), expect_busbw_gbps=400.0)
    assert said == [INCOMPLETE]  # one incomplete finding, not two


# --- worst first, and where the ranks ran --------------------------------------------------------------------
def test_findings_are_worst_first() -> None:
    mixed = _with(
        groups=(dataclasses.replace(ALL, skipped_sizes=(SkippedSize(8 * GIB, "x"),)),),
        errors=(RankError(1, "died", "exit 17"),),
        environment={"NCCL_ALGO": "Ring", "cpu_cores": "2"},
    )
    assert [(c, s) for c, s, _, _ in _findings(mixed)] == [
        ("bench-rank-failed", "fail"),
        ("bench-oversubscribed", "warn"),
        ("bench-size-skipped", "info"),
    ]


@pytest.mark.parametrize(
    ("hosts", "n", "where"),
    [
        (("a", "b"), 8, "a ranks 0-3, b ranks 4-7"),
        (("a", "b"), 6, "a ranks 0-2, b ranks 3-5"),
        (tuple("abcd"), 8, "a ranks 0,1, b ranks 2,3, c ranks 4,5, d ranks 6,7"),
        (tuple("abcdef"), 12, "a ranks 0,1, b ranks 2,3, c ranks 4,5, d ranks 6,7 and 2 more host(s)"),
    ],
)
def test_a_low_group_across_hosts_names_the_ranks_of_each_host(hosts: tuple[str, ...], n: int, where: str) -> None:
    ((code, severity, message, evidence),) = _findings(_result(100.0, expected=360.0, hosts=hosts, n=n))
    assert (code, severity) == ("bench-below-expected", "fail")
    assert message == (
        f"group all ({where}) plateaus at 100 GB/s busbw, 28% of the 360 GB/s the topology predicts (18 NVLink4 links)"
    )
    per_host = n // len(hosts)
    assert evidence["ranks_by_host"] == {h: list(range(k * per_host, (k + 1) * per_host)) for k, h in enumerate(hosts)}


def test_a_low_group_names_its_figure_and_the_bands_it_was_held_to() -> None:
    ((_, _, _, evidence),) = _findings(_result(100.0, expected=360.0))
    assert evidence == {
        "group": "all",
        "measured_busbw_gbps": 100.0,
        "expected_busbw_gbps": 360.0,
        "ratio": 0.278,
        "warn_below": 0.75,
        "fail_below": 0.5,
        "basis": "links",
        "expected_basis": "18 NVLink4 links",
    }


# --- which algorithm ran, and the oracle's figure beside the group ------------------------------------------
def test_the_algorithm_is_read_from_what_the_input_shows_nccl_ran() -> None:
    shown = {"nccl_algorithm": "nvls", "nccl_algorithm_evidence": "TUNING line at 16 GiB", "NCCL_ALGO": "Ring"}
    assert ran_algorithm(_with(environment=shown)) == ("nvls", "TUNING line at 16 GiB")
    assert ran_algorithm(HEALTHY) == ("ring", "NCCL_ALGO=Ring in the ranks' environment")
    assert ran_algorithm(_with(environment={"nccl_algorithm": "tree"})) == ("tree", "")
    assert ran_algorithm(_with(environment={})) == (
        "",
        "the input does not say which algorithm NCCL ran (NCCL_DEBUG_SUBSYS=TUNING or NCCL_ALGO would)",
    )


@pytest.mark.parametrize(
    ("kw", "spec", "why"),
    [
        ({}, None, "the GPU model is unknown (pass --gpu-model)"),
        ({"backend": "gloo"}, "H200", "no all-reduce figure for an all_reduce run of 8 rank(s) on gloo"),
        (
            {"name": "NVIDIA H100 NVL", "n": 2},
            "H100 NVL",
            "which of the NVIDIA H100 NVL cards share a bridge is not in the input",
        ),
    ],
)
def test_a_group_without_a_figure_carries_why_and_the_others_keep_theirs(
    kw: dict[str, object], spec: str | None, why: str
) -> None:
    result = _result(100.0, **kw)  # type: ignore[arg-type]
    second = dataclasses.replace(result.groups[0], name="again")
    judged = with_expectations(dataclasses.replace(result, groups=(*result.groups, second)), spec and find_gpu(spec))
    assert [g.expected_busbw_gbps for g in judged.groups] == [Unsupported("oracle", why)] * 2
    assert judged.notes == ()


def test_a_group_held_to_the_oracle_carries_its_figure_ratio_and_a_note_naming_the_source() -> None:
    result = _result(100.0)
    second = dataclasses.replace(result.groups[0], name="again", plateau_busbw_gbps=200.0)
    judged = with_expectations(dataclasses.replace(result, groups=(*result.groups, second)), find_gpu("H200"))
    assert [(g.name, g.expected_busbw_gbps, g.ratio) for g in judged.groups] == [
        ("all", 367.61, 0.272),
        ("again", 367.61, 0.544),
    ]
    assert all(
        g.expected_basis.startswith("oracle: figure for 8x NVIDIA H200 SXM (catalog entry H200-SXM)")
        for g in judged.groups
    )
    assert [n.split(":")[0] for n in judged.notes] == ["expected busbw of group all", "expected busbw of group again"]
    assert with_expectations(judged, find_gpu("H200")).notes == judged.notes  # a note is not repeated


def test_a_finding_carries_the_remedy_its_code_declares() -> None:
    (found,) = judge_bench(_with(errors=(RankError(1, "died", "exit 17"),)))
    assert found.remedy == info("bench-rank-failed").remedy and found.remedy.startswith("Read the rank's error")


@pytest.mark.parametrize(("expected", "judged"), [(0.0, False), (1.0, True)])
def test_a_group_is_judged_against_any_figure_above_zero(expected: float, judged: bool) -> None:
    slow = dataclasses.replace(ALL, plateau_busbw_gbps=0.1, expected_busbw_gbps=expected)
    assert [c for c, _, _, _ in _findings(_with(slow))] == (["bench-below-expected"] if judged else [])


@pytest.mark.parametrize("name", [Unsupported("bench", "the ranks printed no device name"), ""])
def test_ranks_that_name_no_gpu_model_get_no_catalog_figure(name: object) -> None:
    assert _findings(_result(45.0, name=name)) == []  # type: ignore[arg-type]
