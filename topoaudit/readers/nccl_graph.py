"""NCCL's topology print (``NCCL_DEBUG_SUBSYS=GRAPH``): the system tree NCCL modelled, its paths and the graphs
it searched, read wherever its lines stand (alone, or inside an NCCL_DEBUG=INFO log)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    head = text[:200_000]
    if "/" not in head or ("=== System" not in head and "+ " not in head and " :GPU/" not in head):  # cheap test
        return False
    from topoaudit.parse.nccl_graph import looks_like_nccl_graph

    return looks_like_nccl_graph(text)


def load(text: str, name: str) -> Facts:
    """The GPUs NCCL printed (by rank) become the machine, without links: the print's links are NCCL's model of
    the box, judged against each other by the GRAPH print's rules, not as the box's topology."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Gpu, Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.nccl_graph import parse_nccl_graph

    graph = parse_nccl_graph(text, name)
    ranks = sorted({g.gpu_rank for g in graph.gpus() if isinstance(g.gpu_rank, int)})
    description = (
        f"NCCL topology print (NCCL_DEBUG_SUBSYS=GRAPH): {len(graph.gpus())} GPU(s), {len(graph.links)} link(s), "
        f"{len(graph.searches)} graph(s) searched"
    )
    return Facts(
        Machine(source="nccl-graph", gpus=tuple(Gpu(r) for r in ranks) if len(ranks) == len(graph.gpus()) else ()),
        SourceInfo("nccl-graph", name, description=description),
        graph_print=graph,
        used=frozenset(),
        what="NCCL topology print",
    )


READER = Reader(
    "nccl-graph",
    105,
    "NCCL's topology print (NCCL_DEBUG_SUBSYS=GRAPH)",
    sniff,
    load,
    parts=("nccl-log",),
    overlay=True,
)
