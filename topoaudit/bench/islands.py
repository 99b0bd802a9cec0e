"""Measured islands: cluster the pairwise bandwidth matrix into sets of ranks that talk fast together.

Pairs are split at the largest multiplicative gap between consecutive bandwidths (in sorted order); a gap
below :data:`MIN_GAP` means every pair is alike and the ranks form one island. Islands are the connected
components of the "fast" pairs. Pure; no torch.
"""

from __future__ import annotations

import itertools

import networkx as nx

from topoaudit.model.bench import PairBw

MIN_GAP = 3.5
"""Fast and slow pairs differ at least this much (NVLink vs PCIe: an H100 NVL pair ~200 vs PCIe Gen5 ~50,
4x and more; a shaped link vs loopback ~40x). Noise between like pairs stays under it: loopback gloo pairs
on a loaded 2-core runner were seen up to 2.5x apart."""


def islands(ranks: tuple[int, ...], pairs: tuple[PairBw, ...]) -> tuple[tuple[int, ...], ...]:
    """Islands of ranks, each sorted, ordered by their lowest rank. Ranks with no measured pair stand alone."""
    graph = nx.Graph()
    graph.add_nodes_from(ranks)
    measured = [p for p in pairs if p.busbw_gbps > 0]
    if measured:
        values = sorted(p.busbw_gbps for p in measured)
        cut = values[0]  # everything counts as fast unless a clear gap exists
        best_gap = 1.0
        for low, high in itertools.pairwise(values):
            gap = high / low if low > 0 else float("inf")
            if gap > best_gap:
                best_gap, cut = gap, high
        if best_gap < MIN_GAP:
            cut = values[0]
        for p in measured:
            if p.busbw_gbps >= cut:
                graph.add_edge(p.a, p.b)
    comps = [tuple(sorted(c)) for c in nx.connected_components(graph)]
    return tuple(sorted(comps))


def same_partition(a: tuple[tuple[int, ...], ...], b: tuple[tuple[int, ...], ...]) -> bool:
    return {frozenset(x) for x in a} == {frozenset(x) for x in b}
