"""The node-pair schedule on its own: which nodes meet in which round, and the plan the ranks agree on."""

from __future__ import annotations

import itertools
import math

import pytest

from topoaudit.bench.assemble import ranks_from_infos
from topoaudit.bench.groups import make_plan, parse_groups
from topoaudit.bench.node_pairs import (
    default_rounds,
    full_rounds,
    node_pair_sets,
    reference_rounds,
    round_robin_rounds,
    runs_with_next,
)
from topoaudit.model.bench import RankInfo


def _nodes(n: int) -> list[str]:
    return [f"node{k:02d}" for k in range(n)]


def _ranks(per_node: int, nodes: list[str]) -> tuple[RankInfo, ...]:
    return tuple(
        RankInfo(rank=k * per_node + i, local_rank=i, host=host, device="cpu")
        for k, host in enumerate(nodes)
        for i in range(per_node)
    )


@pytest.mark.parametrize("n", range(2, 34))
def test_each_round_pairs_disjoint_nodes_and_no_pair_repeats(n: int) -> None:
    rounds = round_robin_rounds(_nodes(n), full_rounds(n))
    seen: set[frozenset[str]] = set()
    for pairs in rounds:
        members = [node for pair in pairs for node in pair]
        assert len(members) == len(set(members)), f"a node twice in one round: {pairs}"
        assert len(pairs) == n // 2, "every node that can be paired is paired"
        for a, b in pairs:
            assert a != b and frozenset((a, b)) not in seen
            seen.add(frozenset((a, b)))
    assert len(seen) == n * (n - 1) // 2, "the full round-robin measures every pair of nodes"


@pytest.mark.parametrize("n", range(2, 34))
def test_log2_rounds_give_every_node_that_many_distinct_partners(n: int) -> None:
    rounds = round_robin_rounds(_nodes(n))
    assert len(rounds) == default_rounds(n) == min(max(1, math.ceil(math.log2(n))), full_rounds(n))
    partners: dict[str, set[str]] = {node: set() for node in _nodes(n)}
    for a, b in itertools.chain.from_iterable(rounds):
        partners[a].add(b)
        partners[b].add(a)
    least = len(rounds) if n % 2 == 0 else len(rounds) - 1  # odd N: one node sits out each round
    assert all(len(p) >= least for p in partners.values()), partners
    assert all(len(p) <= len(rounds) for p in partners.values())


def test_four_nodes_meet_two_partners_each_in_two_rounds() -> None:
    assert round_robin_rounds(["a", "b", "c", "d"]) == ((("a", "d"), ("b", "c")), (("a", "c"), ("b", "d")))


def test_reference_mode_pairs_every_node_with_the_first_one_round_each() -> None:
    assert reference_rounds(["r", "x", "y"]) == ((("r", "x"),), (("r", "y"),))
    assert reference_rounds(["r", "x", "y"], reference="y") == ((("y", "r"),), (("y", "x"),))
    with pytest.raises(ValueError, match="reference node 'z'"):
        reference_rounds(["r", "x"], reference="z")


def test_a_node_pair_group_holds_every_rank_of_both_nodes_and_rounds_run_at_once() -> None:
    ranks = _ranks(2, ["h0", "h1", "h2", "h3"])
    groups, notes = node_pair_sets(ranks)
    assert notes == []
    assert [(g.name, g.ranks, g.round_no) for g in groups] == [
        ("nodes h0+h3", (0, 1, 6, 7), 1),
        ("nodes h1+h2", (2, 3, 4, 5), 1),
        ("nodes h0+h2", (0, 1, 4, 5), 2),
        ("nodes h1+h3", (2, 3, 6, 7), 2),
    ]
    following = [*(g.round_no for g in groups[1:]), None]
    assert [runs_with_next(g.round_no, nxt) for g, nxt in zip(groups, following, strict=True)] == [
        True,
        False,
        True,
        False,
    ]
    reference, _ = node_pair_sets(ranks, "reference")
    assert [g.ranks for g in reference] == [(0, 1, 2, 3), (0, 1, 4, 5), (0, 1, 6, 7)]
    assert not any(runs_with_next(g.round_no, nxt.round_no) for g, nxt in itertools.pairwise(reference))


def test_the_plan_adds_node_pairs_on_request_and_says_why_when_there_is_one_node() -> None:
    assert parse_groups("all,nodepairs=ref") == ("all", "nodepairs=ref")
    with pytest.raises(ValueError, match="nodepairs"):
        parse_groups("nodepairs=bogus")
    plan = make_plan(parse_groups("nodepairs"), _ranks(1, ["a", "b", "c"]))
    assert [(g.kind, g.ranks, g.round_no, g.sweep) for g in plan.groups] == [
        ("nodepair", (1, 2), 1, False),
        ("nodepair", (0, 2), 2, False),
    ]  # odd N: one node sits out each round
    alone = make_plan(parse_groups("nodepairs"), _ranks(4, ["only"]))
    assert alone.groups == ()
    assert alone.notes == ("nodepairs: skipped, the ranks run on 1 node; pairs need two or more",)


def test_the_rounds_survive_the_plan_document_every_rank_reads() -> None:
    from dataclasses import asdict

    from topoaudit.bench.assemble import plan_from_document

    plan = make_plan(parse_groups("nodepairs"), _ranks(1, ["a", "b", "c", "d"]))
    doc = {"groups": [asdict(g) for g in plan.groups], "domains": [], "domain_basis": "", "notes": []}
    assert plan_from_document(doc).groups == plan.groups
    assert [g.round_no for g in plan.groups] == [1, 1, 2, 2]


def _infos(*machines: tuple[str, str]) -> list[dict[str, object]]:
    """Two ranks per machine, as each rank reports itself: (host name, kernel boot id)."""
    return [
        {"rank": 2 * k + i, "local_rank": i, "host": host, "boot_id": boot, "device": "cpu"}
        for k, (host, boot) in enumerate(machines)
        for i in range(2)
    ]


def test_machines_sharing_a_host_name_are_told_apart_by_their_boot_ids() -> None:
    """Containers started with one --hostname on two machines: without the boot id they would be one node of
    four ranks and the node-pair sweep would be skipped ("1 node") or pair the wrong ranks."""
    ranks, notes = ranks_from_infos(_infos(("trainer", "boot-a"), ("trainer", "boot-b"), ("other", "boot-c")))
    assert [r.host for r in ranks] == ["trainer#1", "trainer#1", "trainer#2", "trainer#2", "other", "other"]
    assert notes == (
        "2 machines report the host name 'trainer' (their kernels' boot ids differ): measured as trainer#1, "
        "trainer#2; give each node its own host name",
    )
    sets, skipped = node_pair_sets(ranks, "reference")  # rank 0's machine with each other one
    assert skipped == [] and {s.name for s in sets} == {"nodes trainer#1+trainer#2", "nodes trainer#1+other"}
    assert next(s for s in sets if s.name == "nodes trainer#1+trainer#2").ranks == (0, 1, 2, 3)


def test_one_machine_keeps_its_name_and_distinct_names_on_one_kernel_stay_distinct() -> None:
    """Network namespaces on one machine (the test hosts) share a boot id but not a name: two nodes, no note."""
    ranks, notes = ranks_from_infos(_infos(("host-a", "same-boot"), ("host-b", "same-boot")))
    assert [r.host for r in ranks] == ["host-a", "host-a", "host-b", "host-b"] and notes == ()


def test_a_repeated_local_rank_without_boot_ids_is_said_not_guessed() -> None:
    infos = [{**i, "boot_id": ""} for i in _infos(("trainer", ""), ("trainer", ""))]
    ranks, notes = ranks_from_infos(infos)
    assert {r.host for r in ranks} == {"trainer"}
    assert notes == (
        "host 'trainer' reports local rank 0 more than once: several machines may share this name, and without "
        "their boot ids they are measured as one node",
    )
