"""Naming the bad node from node-pair figures, on fixed numbers: a node slow with every partner is the node,
a single slow pair is the link, noise and uniform slowness name nobody; and the findings a bench report gets."""

from __future__ import annotations

import pytest

from topoaudit.fleet.node_pairs import NodePairFigure, attribute, judge_node_pairs, pair_figures
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow, RankInfo


def _figures(table: dict[tuple[str, str], float]) -> list[NodePairFigure]:
    return [NodePairFigure(a, b, gbps) for (a, b), gbps in table.items()]


# four nodes, two round-robin rounds: a-d, b-c, then a-c, b-d
HEALTHY = {("a", "d"): 22.0, ("b", "c"): 23.5, ("a", "c"): 21.0, ("b", "d"): 24.0}


def test_noise_between_healthy_pairs_names_nobody() -> None:
    verdict = attribute(_figures(HEALTHY))
    assert verdict is not None and verdict.slow_nodes == () and verdict.slow_links == ()


def test_a_node_slow_with_both_its_partners_is_the_bad_node() -> None:
    figures = {**HEALTHY, ("b", "c"): 2.4, ("a", "c"): 2.5}
    verdict = attribute(_figures(figures))
    assert verdict is not None
    assert [(n.host, n.partners) for n in verdict.slow_nodes] == [("c", ("b", "a"))]
    assert verdict.slow_links == ()
    assert verdict.typical_gbps == pytest.approx(23.0)  # the faster half: 22 and 24


def test_a_single_slow_pair_names_the_link_not_a_node() -> None:
    verdict = attribute(_figures({**HEALTHY, ("a", "c"): 3.0}))
    assert verdict is not None and verdict.slow_nodes == ()
    assert [(link.a, link.b) for link in verdict.slow_links] == [("a", "c")]


def test_a_pair_seen_once_with_no_other_evidence_stays_a_link() -> None:
    # one round of disjoint pairs: c and d met nobody else, so the slow pair cannot say which of them it is
    verdict = attribute(_figures({("a", "b"): 20.0, ("c", "d"): 2.0}))
    assert verdict is not None and verdict.slow_nodes == ()
    assert [(link.a, link.b) for link in verdict.slow_links] == [("c", "d")]


def test_reference_mode_names_the_node_whose_only_pair_is_slow() -> None:
    # the reference r is fast with x and y, so the slow (r, z) points at z
    verdict = attribute(_figures({("r", "x"): 20.0, ("r", "y"): 21.0, ("r", "z"): 1.0}))
    assert verdict is not None and [n.host for n in verdict.slow_nodes] == ["z"] and verdict.slow_links == ()


def test_every_pair_slow_alike_names_nobody_and_one_pair_is_not_enough() -> None:
    verdict = attribute(_figures({("r", "x"): 2.0, ("r", "y"): 2.1, ("r", "z"): 1.9}))
    assert verdict is not None and verdict.slow_nodes == () and verdict.slow_links == ()
    assert attribute(_figures({("a", "b"): 1.0})) is None


def _group(name: str, ranks: tuple[int, ...], min_us: float, size: int = 16 << 20) -> BenchGroup:
    row = BenchRow(size, size // 4, "float32", min_us * 1.2, 0.0, 0.0, 0, min_us=min_us, calls=5)
    return BenchGroup(name, "nodepair", ranks, tuple(f"h{r}:cpu" for r in ranks), (row,))


def test_a_bench_result_with_a_slow_node_gets_a_failing_finding_naming_it() -> None:
    hosts = ["hA", "hB", "hC", "hD"]
    ranks = tuple(RankInfo(k, 0, host, "cpu") for k, host in enumerate(hosts))
    fast, slow = 16e3, 700e3  # us for 16 MiB: ~1 GB/s vs ~0.024 GB/s
    groups = (
        _group("nodes hA+hD", (0, 3), fast),
        _group("nodes hB+hC", (1, 2), slow),
        _group("nodes hA+hC", (0, 2), slow),
        _group("nodes hB+hD", (1, 3), fast),
    )
    result = BenchResult("topoaudit", "all_reduce", "gloo", 4, tuple(hosts), ranks, groups, "complete")
    figures = pair_figures(result)
    assert [(f.a, f.b) for f in figures] == [("hA", "hD"), ("hB", "hC"), ("hA", "hC"), ("hB", "hD")]
    assert figures[0].busbw_gbps == pytest.approx((16 << 20) / 16e3 / 1e3)  # n = 2: busbw = algbw
    findings = judge_node_pairs(result)
    assert [(f.code, str(f.severity), f.evidence["host"]) for f in findings] == [("bench-node-slow", "fail", "hC")]
    assert "hC is slow with every partner (hB, hA)" in findings[0].message
    assert judge_node_pairs(BenchResult("topoaudit", "all_reduce", "gloo", 4, (), ranks, groups[:1], "complete")) == ()


def test_a_pair_slow_between_nodes_fast_with_others_is_the_link_between_them() -> None:
    hosts = ["hA", "hB", "hC", "hD"]
    ranks = tuple(RankInfo(k, 0, host, "cpu") for k, host in enumerate(hosts))
    fast, slow = 16e3, 700e3
    groups = (
        _group("nodes hA+hD", (0, 3), fast),
        _group("nodes hB+hC", (1, 2), slow),  # hB is fast with hD, hC with hA: the path between them is slow
        _group("nodes hA+hC", (0, 2), fast),
        _group("nodes hB+hD", (1, 3), fast),
    )
    findings = judge_node_pairs(
        BenchResult("topoaudit", "all_reduce", "gloo", 4, tuple(hosts), ranks, groups, "complete")
    )
    assert [(f.code, str(f.severity)) for f in findings] == [("bench-node-link-slow", "warn")]
    assert "hB" in findings[0].message and "hC" in findings[0].message


def test_findings_move_to_the_nodes_they_name_and_a_slow_link_only_warns() -> None:
    from topoaudit.fleet.node_pairs import fleet_findings, unreported_nodes
    from topoaudit.model.finding import Finding, Severity

    link = Finding("bench-node-link-slow", Severity.WARN, "slow pair", {"hosts": ["hB", "hC"]})
    node = Finding("bench-node-slow", Severity.FAIL, "slow node", {"host": "hD", "partners": ["hA", "hB"]})
    other = Finding("bench-timeout", Severity.FAIL, "hung", {})
    moved = fleet_findings([link, node, other])
    assert [(f.code, f.hosts) for f in moved] == [("bench-node-link-slow", ("hB", "hC")), ("bench-node-slow", ("hD",))]
    rows = unreported_nodes(moved, {"hA", "hB"}, Severity.FAIL)
    assert [(r.host, r.status, r.codes, r.warnings) for r in rows] == [
        ("hC", "pass", (), ("bench-node-link-slow",)),
        ("hD", "fail", ("bench-node-slow",), ()),
    ]
