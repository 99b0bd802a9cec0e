"""Node-pair sweeps across hosts: which pairs of nodes are measured together, in which rounds. Pure; no torch.

A slow multi-node all-reduce is as slow as its worst node or link. Measuring nodes two at a time isolates it:

- ``reference``: every node paired with one reference node (the node of rank 0), one pair per round
  (N-1 rounds). Trusts the reference: when it is itself the bad node, every pair is slow alike.
- ``round-robin`` (the default): rounds of disjoint pairs, all pairs of a round measured at once, from the
  circle method of a round-robin tournament, so no pair repeats across rounds. With ``rounds`` rounds
  (default ceil(log2 N), at most N-1) every node of an even N meets ``rounds`` distinct partners; with an odd
  N one node sits out each round, so a node meets ``rounds`` or ``rounds - 1`` distinct partners. N-1 rounds
  (N even) or N rounds (N odd) measure every pair of nodes. A node slow with two or more distinct partners is
  told apart from a slow link; with N = 2 there is one pair and nothing to tell apart.

A node-pair group holds every rank of both nodes (all their GPUs and NICs carry the all-reduce, as in a job).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from topoaudit.model.bench import RankInfo

NODE_PAIR_KIND = "nodepair"
MODES = ("round-robin", "reference")

Round = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class NodePairSet:
    """The ranks of one pair of nodes, measured in round ``round_no`` (from 1) with the other pairs of it."""

    name: str  # "nodes hostA+hostB"
    ranks: tuple[int, ...]
    round_no: int


def default_rounds(n_nodes: int) -> int:
    """ceil(log2 N) rounds, at least one, never more than a full round-robin needs."""
    if n_nodes < 2:
        return 0
    return min(max(1, math.ceil(math.log2(n_nodes))), full_rounds(n_nodes))


def full_rounds(n_nodes: int) -> int:
    """Rounds that measure every pair: N-1 for even N, N for odd N (one node sits out each round)."""
    if n_nodes < 2:
        return 0
    return n_nodes - 1 if n_nodes % 2 == 0 else n_nodes


def round_robin_rounds(nodes: Sequence[str], rounds: int | None = None) -> tuple[Round, ...]:
    """Rounds of disjoint node pairs (circle method): no pair repeats, every round pairs every node it can."""
    order = list(dict.fromkeys(nodes))
    n = len(order)
    if n < 2:
        return ()
    want = default_rounds(n) if rounds is None else min(rounds, full_rounds(n))
    slots: list[str | None] = [*order, None] if n % 2 else list(order)  # None: the node that sits out
    m = len(slots)
    out: list[Round] = []
    for k in range(want):
        # slot 0 stays; the others rotate by one each round
        ring = [slots[0], *(slots[1 + (i - k) % (m - 1)] for i in range(m - 1))]
        pairs = []
        for i in range(m // 2):
            a, b = ring[i], ring[m - 1 - i]
            if a is not None and b is not None:
                pairs.append((a, b) if order.index(a) < order.index(b) else (b, a))
        out.append(tuple(sorted(pairs, key=lambda p: (order.index(p[0]), order.index(p[1])))))
    return tuple(out)


def reference_rounds(nodes: Sequence[str], reference: str | None = None) -> tuple[Round, ...]:
    """One round per other node: (reference, node). The reference defaults to the first node."""
    order = list(dict.fromkeys(nodes))
    if len(order) < 2:
        return ()
    ref = order[0] if reference is None else reference
    if ref not in order:
        raise ValueError(f"reference node {ref!r} is not among the nodes {order}")
    return tuple(((ref, node),) for node in order if node != ref)


def nodes_of(ranks: Sequence[RankInfo]) -> dict[str, tuple[int, ...]]:
    """Node -> its ranks, nodes in the order of their lowest rank (rank 0's node first).

    A node is a host name, as each rank reads it where the launcher (torchrun, Slurm) started it.
    """
    out: dict[str, list[int]] = {}
    for r in sorted(ranks, key=lambda r: r.rank):
        out.setdefault(r.host, []).append(r.rank)
    return {host: tuple(rs) for host, rs in out.items()}


def node_pair_sets(ranks: Sequence[RankInfo], mode: str = "round-robin") -> tuple[list[NodePairSet], list[str]]:
    """The rank sets of a node-pair sweep, round by round, and notes on what was skipped."""
    if mode not in MODES:
        raise ValueError(f"unknown node-pair mode {mode!r}: use {' or '.join(MODES)}")
    nodes = nodes_of(ranks)
    if len(nodes) < 2:
        return [], [f"nodepairs: skipped, the ranks run on {len(nodes)} node; pairs need two or more"]
    names = list(nodes)
    rounds = reference_rounds(names) if mode == "reference" else round_robin_rounds(names)
    sets = [
        NodePairSet(f"nodes {a}+{b}", tuple(sorted((*nodes[a], *nodes[b]))), k)
        for k, pairs in enumerate(rounds, start=1)
        for a, b in pairs
    ]
    return sets, []


def runs_with_next(round_no: int, next_round_no: int | None) -> bool:
    """True when the next group is measured at the same time as this one: both in one round of disjoint pairs."""
    return next_round_no is not None and round_no > 0 and next_round_no == round_no


__all__ = [
    "MODES",
    "NODE_PAIR_KIND",
    "NodePairSet",
    "default_rounds",
    "full_rounds",
    "node_pair_sets",
    "nodes_of",
    "reference_rounds",
    "round_robin_rounds",
    "runs_with_next",
]
