"""Rules over NCCL's topology print (``NCCL_DEBUG_SUBSYS=GRAPH``): the box as NCCL modelled it, against itself.

The print is NCCL's model of the box, each link with the bandwidth NCCL gave it. Two things in it are wrong on
their face: a virtual machine's emulated PCIe bridges (``+ PCI[0.2] - PCI/...`` between the CPU and every switch:
NCCL could not read their speed, so every path through them looks slow), and a ring or tree NCCL searched over
PCIe or the CPU between GPUs the same print shows on NVLink.
"""

from __future__ import annotations

from collections.abc import Iterable

from topoaudit.model.finding import Finding
from topoaudit.model.nccl_graph import GraphSearch, NcclGraphPrint
from topoaudit.model.topology import gpu_pair_links
from topoaudit.model.values import Probed, Unsupported
from topoaudit.rules.base import RuleContext, finding, first_few
from topoaudit.rules.needs import NCCL_GRAPH_PRINT
from topoaudit.rules.registry import rule

SLOW_PATHS = ("PIX", "PXB", "P2C", "PXN", "PHB", "SYS")
"""NCCL's path types inside a node that leave NVLink (PCIe switches, the host bridge, the CPUs' interconnect)."""
VM_BRIDGE_GBPS = 1.0
"""A PCIe link NCCL gives less than this is one whose speed it could not read (a VM's emulated bridge: 0.2)."""
PATTERN_NAMES = {1: "balanced tree", 2: "split tree", 3: "tree", 4: "ring", 5: "NVLS", 6: "CollNet direct"}


def _print(ctx: RuleContext) -> NcclGraphPrint:
    graph = ctx.graph_print
    assert not isinstance(graph, Unsupported)  # the rule needs NCCL_GRAPH_PRINT
    return graph


@rule("nccl-topo-flattened", needs=(NCCL_GRAPH_PRINT,))
def emulated_bridges(ctx: RuleContext) -> Iterable[Finding]:
    """Report every PCIe switch of NCCL's print hanging off the CPU by a link it gave a VM bridge's figure (0.2 GB/s).

    The hypervisor's emulated bridges report no link speed, so NCCL models every path through them as slower than
    the GPUs' own links and may route rings through the CPU: give it the provider's topology file
    (NCCL_TOPO_FILE).
    """
    graph = _print(ctx)
    bridges = [link for link in graph.links_of("PCI") if link.src.startswith("CPU/") and link.dst.startswith("PCI/")]
    slow = [link for link in bridges if link.gbps < VM_BRIDGE_GBPS]
    if not bridges or len(slow) < len(bridges):
        return
    yield finding(
        "nccl-topo-flattened",
        f"NCCL's topology print shows all {len(bridges)} PCIe switch(es) hanging off the CPU by links it gives "
        f"{slow[0].gbps:g} GB/s ({first_few([f'{b.src} - {b.dst} (line {b.evidence.line})' for b in slow], 3)}): "
        "a virtual machine's emulated bridges, whose speed NCCL cannot read, so it models every path through them as "
        "slow.",
        bridges=[{"cpu": b.src, "switch": b.dst, "gbps": b.gbps, "line": b.evidence.line} for b in slow],
    )


@rule("nccl-graph-below-topology", needs=(NCCL_GRAPH_PRINT,))
def graph_below_print(ctx: RuleContext) -> Iterable[Finding]:
    """Report a ring or tree NCCL searched over PCIe or the CPU between GPUs its own print shows on NVLink.

    Judged from the print alone; where the box's own topology (``topo -m``) is pasted beside an NCCL log, the
    log's rules judge the graphs against it instead.
    """
    if gpu_pair_links(ctx.machine) and not isinstance(ctx.nccl, Unsupported):
        return
    graph = _print(ctx)
    on_nvlink = set(graph.gpus_on_nvlink())
    by_rank = {(n.host, n.gpu_rank): n.id for n in graph.gpus() if isinstance(n.gpu_rank, int)}
    slow: list[tuple[GraphSearch, list[str]]] = []
    for search in graph.searches:
        if search.pattern.intra_path not in SLOW_PATHS:
            continue
        gpus = _gpus_of(search, by_rank)
        if len(gpus) >= 2 and all(g in on_nvlink for g in gpus):
            slow.append((search, gpus))
    if not slow:
        return
    shown = "; ".join(
        f"{PATTERN_NAMES.get(s.pattern.pattern, f'pattern {s.pattern.pattern}')} over {s.pattern.intra_path} "
        f"between {', '.join(gpus)} (line {s.pattern.evidence.line})"
        for s, gpus in slow[:3]
    )
    yield finding(
        "nccl-graph-below-topology",
        f"NCCL searched graphs that leave NVLink although its own print shows the GPUs on NVLink: {shown}.",
        gpus=sorted({g for _, gpus in slow for g in gpus}),
        lines=[s.pattern.evidence.line for s, _ in slow],
    )


def _gpus_of(search: GraphSearch, by_rank: dict[tuple[Probed[str], int], str]) -> list[str]:
    """Return the tree's ids of the GPUs a searched graph's channels name (``GPU/3`` in a channel is rank 3)."""
    gpus: list[str] = []
    for channel in search.channels:
        for node in channel:
            if not node.startswith("GPU/"):
                continue
            rank = node.removeprefix("GPU/")
            found = by_rank.get((search.host, int(rank))) if rank.isdecimal() else None
            tree_id = found or node
            if tree_id not in gpus:
                gpus.append(tree_id)
    return gpus
