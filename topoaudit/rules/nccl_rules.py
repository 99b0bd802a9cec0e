"""Judge NCCL's own view (an ``NCCL_DEBUG=INFO`` log) against the machine.

The path NCCL took between GPUs (its transports, and its graph's path type) against the one the topology
allows, P2P refused between connected GPUs,
NVLS off on NVSwitch boxes, GPUDirect RDMA off between nodes, and WARN lines whose cause is known.

Every finding quotes its evidence: the log lines, with their line numbers.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding, Severity
from topoaudit.model.machine import Machine, PathLevel
from topoaudit.model.nccl import PATTERN_NAMES, LogLine, NcclTransport, NcclView, rank_gpu
from topoaudit.model.topology import format_gpus
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import RuleContext, as_sentence, finding
from topoaudit.rules.codes import Code
from topoaudit.rules.nccl_settings import effect, nvlink_everywhere, settings_finding
from topoaudit.rules.needs import NCCL_LOG
from topoaudit.rules.probe_rules import PEERMEM_COMMANDS, fabric_manager_commands, with_fabric_remedy
from topoaudit.rules.registry import rule

EVIDENCE_LINES = 6
PAIRS_IN_MESSAGE = 6
"""Log lines quoted per finding; the count of the rest is given."""

PEER_LEVELS = (PathLevel.NVLINK, PathLevel.PIX, PathLevel.PXB)
"""Paths NCCL uses peer access on by default (NCCL_P2P_LEVEL defaults to PXB: src/graph/paths.cc)."""

SLOW_GRAPH_PATHS = ("PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET")
"""NCCL's path types (topoPathTypeStr in src/graph/paths.cc) that leave NVLink: PCIe switches, the host
bridge, the CPU interconnect, the network. LOC, NVL, NVB and C2C stay on the GPUs' own links."""

_CUDA_802 = re.compile(r"system not yet initialized|\b802\b", re.IGNORECASE)

_INVALID_ARGUMENT = re.compile(r"invalid argument", re.IGNORECASE)


def _log(ctx: RuleContext) -> NcclView:
    """Return the NCCL view the rules here judge (the registry runs them only when the input holds one)."""
    assert isinstance(ctx.nccl, NcclView)
    return ctx.nccl


def quote(lines: Iterable[LogLine]) -> list[str]:
    """Evidence lines as ``line N: text``, the first EVIDENCE_LINES of them and a count of the rest."""
    unique = sorted({ln.line: ln for ln in lines}.values(), key=lambda ln: ln.line)
    quoted = [f"line {ln.line}: {ln.text}" for ln in unique[:EVIDENCE_LINES]]
    if len(unique) > EVIDENCE_LINES:
        quoted.append(f"... and {len(unique) - EVIDENCE_LINES} more line(s)")
    return quoted


def same_host(view: NcclView, a: int, b: int) -> bool:
    """Tell whether the log places two ranks on one host; False when it does not say."""
    ra, rb = view.rank(a), view.rank(b)
    return ra is not None and rb is not None and isinstance(ra.host, str) and ra.host == rb.host


SLOW_KINDS = ("SHM", "NET")
"""Transports inside one host that leave peer access: host memory and the network."""


def _same_box(view: NcclView, a: int, b: int, found: list[NcclTransport]) -> bool:
    """Tell whether two ranks run on one host.

    They do when the log's prefixes name one host, the communicator has one node, or a transport through host
    memory joins them (SHM joins ranks of one host only: src/transport/shm.cc).
    """
    if same_host(view, a, b) or any(t.kind == "SHM" for t in found):
        return True
    ra, rb = view.rank(a), view.rank(b)
    return any(r is not None and isinstance(r.nodes_in_comm, int) and r.nodes_in_comm == 1 for r in (ra, rb))


def p2p_islands(view: NcclView) -> list[list[int]]:
    """Return the groups of ranks NCCL joined by peer access (P2P) inside one host, largest first."""
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for t in view.transports:
        root(t.src_rank), root(t.dst_rank)
        if t.kind == "P2P" and t.src_rank != t.dst_rank:
            parent[root(t.src_rank)] = root(t.dst_rank)
    groups: dict[int, list[int]] = {}
    for rank in sorted(parent):
        groups.setdefault(root(rank), []).append(rank)
    return sorted(groups.values(), key=lambda g: (-len(g), g))


_TREE_RANK = re.compile(r"\d{1,7}")
"""A rank in NCCL's tree line ("3/-1/-1->2->1"): -1 is no rank, and a damaged line may hold anything else."""


def _hops(view: NcclView) -> list[tuple[int, int, str, LogLine]]:
    """Return every ring hop (wrapping around) and tree edge NCCL printed: (from, to, "ring"|"tree", line).

    A connection line whose pair no ring or tree names is a hop of its own ("connection"): an excerpt of channel
    lines, without the ring and tree lines, still shows how NCCL joined each pair.
    """
    hops: list[tuple[int, int, str, LogLine]] = []
    for ring in view.rings:
        order = ring.order
        hops += [
            (order[i], order[(i + 1) % len(order)], "ring", ring.first) for i in range(len(order)) if len(order) > 1
        ]
    for tree in view.trees:
        for part in tree.shape.split("|"):
            pieces = part.split("->")
            if len(pieces) < 3:
                continue
            children, parent = pieces[0], pieces[2]
            for child in children.split("/"):
                if _TREE_RANK.fullmatch(child):  # -1: no child there
                    hops.append((int(child), tree.rank, "tree", tree.first))
            if _TREE_RANK.fullmatch(parent):
                hops.append((tree.rank, int(parent), "tree", tree.first))
    named = {(min(a, b), max(a, b)) for a, b, _, _ in hops}
    for t in view.transports:
        pair = (min(t.src_rank, t.dst_rank), max(t.src_rank, t.dst_rank))
        if pair not in named and t.src_rank != t.dst_rank:
            named.add(pair)
            hops.append((t.src_rank, t.dst_rank, "connection", t.first))
    return hops


def format_ranks(ranks: list[int]) -> str:
    """``0-3`` for a run of ranks, ``0,2,5`` otherwise."""
    # the span first: a damaged log's rank of 400 digits must not build a range that long
    if len(ranks) > 2 and ranks[-1] - ranks[0] + 1 == len(ranks) and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]}-{ranks[-1]}"
    return ",".join(map(str, ranks))


@rule(
    Code(
        "nccl-ring-split",
        "warn",
        title=(
            "NCCL's rings or trees inside one host mix peer access (P2P) with host memory or the network: the GPUs form"
            " P2P islands and every all-reduce runs at the slowest hop"
        ),
        remedy=(
            "The hops between the islands go through host memory (SHM) or the network: paste `nvidia-smi topo -m` with "
            "the log to see whether the GPUs are split by design (two NVLink islands, CPU sockets) or P2P was refused "
            "(NCCL_P2P_DISABLE / NCCL_P2P_LEVEL, ACS, the IOMMU, ranks in separate containers); keep a tensor-parallel "
            "group inside one island."
        ),
    ),
    needs=(NCCL_LOG,),
)
def ring_split(ctx: RuleContext) -> Iterator[Finding]:
    """Report rings and trees inside one host whose hops mix P2P with SHM or the network (the log alone).

    With a topology beside the log, nccl-transport-below-topology compares each pair against its link and
    the topology rules name the split; this rule speaks only when the log is all there is.
    """
    view, machine, options = _log(ctx), ctx.machine, ctx.options
    if machine.links:
        return
    by_pair: dict[tuple[int, int], list[NcclTransport]] = {}
    for t in view.transports:
        by_pair.setdefault((min(t.src_rank, t.dst_rank), max(t.src_rank, t.dst_rank)), []).append(t)
    islands = p2p_islands(view)
    if len(islands) < 2 or len(islands[0]) < 2:
        return
    island_of = {r: i for i, group in enumerate(islands) for r in group}
    slow: dict[tuple[int, int], list[str]] = {}
    lines: list[LogLine] = []
    for a, b, what, line in _hops(view):
        pair = (min(a, b), max(a, b))
        found = by_pair.get(pair, [])
        if not found or any(t.kind == "P2P" for t in found) or not _same_box(view, a, b, found):
            continue
        if not any(t.kind in SLOW_KINDS for t in found) or island_of.get(a) == island_of.get(b):
            continue
        kinds = slow.setdefault(pair, [])
        if what not in kinds:
            kinds.append(what)
            lines.append(line)
    if not slow:
        return
    hop_text = []
    hop_items: list[dict[str, object]] = []
    for (a, b), whats in sorted(slow.items()):
        vias = sorted({t.via for t in by_pair[(a, b)]})
        hop_text.append(f"{a}-{b} via {', '.join(vias)} ({' and '.join(whats)})")
        hop_items.append({"ranks": [a, b], "transports": vias, "in": whats})
        lines += [t.first for t in by_pair[(a, b)]]
    p2p_lines = [
        next(t.first for t in view.transports if t.kind == "P2P" and t.src_rank in group)
        for group in islands
        if len(group) > 1
    ]
    shown = "; ".join(f"ranks {format_ranks(g)}" for g in islands)
    requested = [
        (name, value)
        for name, value in (
            ("--tp", getattr(options, "tp", None)),
            ("--expect-domain", getattr(options, "expect_domain", None)),
        )
        if isinstance(value, int)
    ]
    largest = len(islands[0])
    short = [(name, value) for name, value in requested if value > largest]
    message = (
        f"NCCL's rings inside one host mix peer access with host memory or the network: it found "
        f"{len(islands)} P2P islands ({shown}) and crosses between them at {len(slow)} hop(s): "
        f"{'; '.join(hop_text[:PAIRS_IN_MESSAGE])}"
        + (f"; and {len(hop_text) - PAIRS_IN_MESSAGE} more" if len(hop_text) > PAIRS_IN_MESSAGE else "")
        + ". Every all-reduce over the whole communicator runs at the slowest of these hops."
    )
    covered = view.coverage()
    if covered:
        message += f" {as_sentence(covered)}"
    # NCCL_DEBUG_SUBSYS=GRAPH prints the path type its graphs run over: PHB/SYS is through the CPU
    through_host = [pt for pt in view.patterns if pt.intra_path in ("PHB", "SYS", "NET")]
    if through_host:
        message += " " + as_sentence(
            "; ".join(
                f"NCCL's {PATTERN_NAMES.get(pt.pattern, f'pattern {pt.pattern}')} graph runs over {pt.intra_path} "
                f"at {pt.intra_gbps:g} GB/s (line {pt.evidence.line})"
                for pt in through_host[:PAIRS_IN_MESSAGE]
            )
        )
        lines += [pt.evidence for pt in through_host]
    extra: dict[str, object] = {}
    if short:
        name, value = short[0]
        message += f" {name} {value} asks for {value} ranks joined by P2P, but the largest island holds {largest}."
        extra["severity_reason"] = f"{name} {value}: no P2P island holds {value} ranks"
    yield finding(
        "nccl-ring-split",
        message,
        severity=Severity.FAIL if short else None,
        islands=[list(g) for g in islands],
        slow_hops=hop_items,
        log_lines=quote([*lines, *p2p_lines]),
        **({"coverage": covered} if covered else {}),
        **extra,
    )


@rule(
    Code(
        "nccl-transport-below-topology",
        "warn",
        title=(
            "NCCL connected two GPUs of one host through host memory or the network although they are NVLink or PCIe "
            "peers"
        ),
        remedy=(
            "NCCL could not use peer access between them: check NCCL_P2P_DISABLE / NCCL_P2P_LEVEL / NCCL_SHM_DISABLE in"
            " the job's environment, ACS and the IOMMU (`nvidia-smi topo -p2p r`), and that the ranks share one "
            "container (IPC namespace) on the host; GeForce cards report P2P unsupported (GNS) by design."
        ),
    ),
    needs=(NCCL_LOG,),
)
def transports_below_topology(ctx: RuleContext) -> Iterator[Finding]:
    """Report transports slower than the topology allows: one finding per kind of shortfall.

    The kinds are NVLink peers, PCIe peers, the network inside a host, the catalog's NVSwitch node; each
    finding names its rank pairs, so a split box reads as one problem, not one per ring hop.
    """
    view, machine, spec = _log(ctx), ctx.machine, ctx.spec
    slow: dict[tuple[int, int], list[NcclTransport]] = {}
    for t in view.transports:
        if t.kind in ("SHM", "NET"):
            slow.setdefault((min(t.src_rank, t.dst_rank), max(t.src_rank, t.dst_rank)), []).append(t)
    groups: dict[str, list[tuple[str, dict[str, object], list[NcclTransport]]]] = {}
    for (a, b), transports in sorted(slow.items()):
        gpu_a, gpu_b = rank_gpu(view.rank(a), machine), rank_gpu(view.rank(b), machine)
        link = machine.link(f"GPU{gpu_a}", f"GPU{gpu_b}") if gpu_a is not None and gpu_b is not None else None
        vias = sorted({t.via for t in transports})
        rank_a = view.rank(a)
        host = rank_a.host if rank_a is not None and isinstance(rank_a.host, str) else ""
        pair: dict[str, object] = {"ranks": [a, b], "transports": vias}
        if link is not None:
            pair |= {"gpus": [gpu_a, gpu_b], "link": link.code}
        if host:
            pair["host"] = host
        where = f"rank {a} (GPU{gpu_a}) - rank {b} (GPU{gpu_b})" if link is not None else f"rank {a} - rank {b}"
        text = f"{where} via {', '.join(vias)}"
        if link is not None and link.level in PEER_LEVELS:
            kind = "nvlink" if link.level == PathLevel.NVLINK else "pcie"
            text += f" ({link.code})"
        elif not machine.links and spec is not None and spec.build == "nvswitch" and same_host(view, a, b):
            kind = "catalog"
        elif any(t.kind == "NET" for t in transports) and (same_host(view, a, b) or link is not None):
            kind = "network"
            text += f" ({link.code})" if link is not None else ""
        else:
            continue
        groups.setdefault(kind, []).append((text, pair, transports))
    for kind, items in groups.items():
        shown = "; ".join(text for text, _, _ in items[:PAIRS_IN_MESSAGE])
        if len(items) > PAIRS_IN_MESSAGE:
            shown += f"; and {len(items) - PAIRS_IN_MESSAGE} more"
        count = f"{len(items)} rank pair(s)"
        if kind == "nvlink":
            message = f"NCCL avoids NVLink between {count} whose GPUs are NVLink peers: {shown}."
        elif kind == "pcie":
            message = f"NCCL avoids peer access between {count} whose GPUs share a PCIe switch: {shown}."
        elif kind == "catalog":
            assert spec is not None
            message = (
                f"NCCL avoids peer access between {count} of one host, but on a {spec.name} node every GPU shares "
                f"NVLink through the NVSwitches (by the catalog: paste `nvidia-smi topo -m` with the log to check "
                f"this box's links): {shown}."
            )
        else:
            message = (
                f"NCCL sends traffic between {count} of one host through the network, using neither peer access nor "
                f"shared memory: {shown}."
            )
        extra: dict[str, object] = {"severity_reason": "the GPUs share NVLink"} if kind == "nvlink" else {}
        if kind == "catalog":
            extra["link"] = f"NVSwitch (catalog: {spec.key})" if spec is not None else ""
        yield finding(
            "nccl-transport-below-topology",
            message,
            severity=Severity.FAIL if kind == "nvlink" else None,
            pairs=[pair for _, pair, _ in items],
            log_lines=quote(t.first for _, _, transports in items for t in transports),
            **extra,
        )


@rule(
    Code(
        "nccl-graph-below-topology",
        "fail",
        title="NCCL's ring or tree inside a node runs over PCIe or the CPU although its GPUs share NVLink",
        remedy=(
            "NCCL does not see the GPUs' NVLinks: check that every link is up (`nvidia-smi nvlink -s`), that peer "
            "access works (`nvidia-smi topo -p2p n`), that NCCL_P2P_LEVEL or an NCCL_TOPO_FILE does not hide NVLink, "
            "and, in a VM, that the hypervisor passes NVLink through (a VM that hides it needs the provider's topology "
            "file or a bare-metal node)."
        ),
    ),
    needs=(NCCL_LOG,),
)
def graph_below_topology(ctx: RuleContext) -> Iterator[Finding]:
    """Report NCCL graphs that run over PCIe or the CPU inside a node whose GPUs share one NVLink domain.

    A ``via P2P`` transport does not say whether peer access goes over NVLink or PCIe; the path type of the
    graph NCCL searched (``Pattern 4, ..., type SYS/PIX``, printed with NCCL_DEBUG_SUBSYS=GRAPH) does. On a
    box split into NVLink domains a slower path is expected and the topology rules name the split, so only
    GPUs of one domain are judged.
    """
    view, machine, domains = _log(ctx), ctx.machine, ctx.domains
    slow = [p for p in view.patterns if p.intra_path in SLOW_GRAPH_PATHS]
    gpus = sorted({g for r in view.ranks if (g := rank_gpu(r, machine)) is not None})
    if not slow or len(gpus) < 2:
        return
    domain = next((d for d in domains if set(gpus) <= set(d.gpus) and d.build != "unknown"), None)
    if domain is None or domain.size < 2:
        return
    shown = "; ".join(
        f"{PATTERN_NAMES.get(p.pattern, f'pattern {p.pattern}')} over {p.intra_path} "
        f"({p.channels} channel(s) at {p.intra_gbps:g} GB/s, line {p.evidence.line})"
        for p in slow[:PAIRS_IN_MESSAGE]
    )
    if len(slow) > PAIRS_IN_MESSAGE:
        shown += f"; and {len(slow) - PAIRS_IN_MESSAGE} more"
    yield finding(
        "nccl-graph-below-topology",
        f"NCCL's graphs inside the node leave NVLink although GPUs {format_gpus(gpus)} share one NVLink domain "
        f"({domain.build}): {shown}.",
        severity=Severity.FAIL,
        gpus=gpus,
        domain=list(domain.gpus),
        patterns=[
            {
                "pattern": PATTERN_NAMES.get(p.pattern, str(p.pattern)),
                "path": p.intra_path,
                "channels": p.channels,
                "gbps": p.intra_gbps,
            }
            for p in slow
        ],
        log_lines=quote(p.evidence for p in slow),
    )


PATH_SETTINGS = ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL")
"""Variables that can keep NCCL from peer access between GPUs it could join (their values judged by ``effect``)."""


def _narrows_p2p(name: str, value: str) -> bool:
    """Whether a P2P variable's value turns peer access off or narrows it (NCCL_P2P_DISABLE=0 does neither)."""
    said = effect(name, value)
    return said is not None and said[0] is Severity.WARN


@rule(
    Code(
        "nccl-p2p-unused",
        "warn",
        title=(
            "NCCL joins no GPUs of a host by peer access (P2P): every connection inside the host goes through host "
            "memory"
        ),
        remedy=(
            "Paste `nvidia-smi topo -m` and `nvidia-smi topo -p2p r` beside the log: GPUs on different CPU sockets use "
            "host memory by design; otherwise peer access is refused (GeForce cards on stock drivers, ACS or the "
            "IOMMU on the PCIe path, a VM, NCCL_P2P_DISABLE / NCCL_P2P_LEVEL, ranks in separate containers) and "
            "every all-reduce is staged through the CPU."
        ),
    ),
    needs=(NCCL_LOG,),
)
def p2p_unused(ctx: RuleContext) -> Iterator[Finding]:
    """Report a log whose ranks inside one host never use P2P (the log alone).

    A split into P2P islands is nccl-ring-split's; with a topology beside the log, nccl-transport-below-topology
    compares each pair against its link. This rule speaks when no pair inside a host uses peer access at all, in a
    log that goes on to ``Connected all rings`` (NCCL prints that after every ring connection), or in an excerpt
    whose pairs take in every rank of the communicator (its size printed, or channel lines closing a ring over ranks
    0 to n-1): a few channel lines copied from a box whose cross-socket hops use SHM by design would otherwise read
    as a box without P2P.
    """
    view, machine = _log(ctx), ctx.machine
    if machine.links:
        return
    inside: dict[tuple[int, int], list[NcclTransport]] = {}
    for t in view.transports:
        if t.src_rank != t.dst_rank:
            inside.setdefault((min(t.src_rank, t.dst_rank), max(t.src_rank, t.dst_rank)), []).append(t)
    inside = {pair: found for pair, found in inside.items() if _same_box(view, *pair, found)}
    if not inside or any(t.kind == "P2P" for found in inside.values() for t in found):
        return
    size = view.comm_size
    shown = {r for pair in inside for r in pair}
    every_rank = shown >= set(range(size)) if isinstance(size, int) else _closed_ring_from_zero(view.transports, shown)
    if not every_rank and not any(e.what == "Connected all rings" for e in view.events):
        return  # an excerpt of channel lines may leave out the P2P ones: only a log that connected its rings shows all
    if not all(any(t.kind in SLOW_KINDS for t in found) for found in inside.values()):
        return
    ranks = sorted({r for pair in inside for r in pair})
    vias = sorted({t.via for found in inside.values() for t in found})
    lines = [found[0].first for _, found in sorted(inside.items())]
    asked = [s for s in view.settings if s.name in PATH_SETTINGS and _narrows_p2p(s.name, s.value)]
    message = (
        f"NCCL uses peer access for none of the {len(inside)} rank pair(s) the log shows inside one host (ranks "
        f"{format_ranks(ranks)}): they go through {' and '.join(vias)}, so each of these transfers is staged through "
        "host memory."
    )
    if asked:
        message += " " + as_sentence(
            "; ".join(f"{s.name}={s.value} is set (line {s.evidence.line})" for s in asked) + ", which asks for this"
        )
    else:
        message += (
            " GPUs on different CPU sockets use host memory by design; elsewhere peer access is refused "
            "(GeForce cards, ACS or the IOMMU, a VM, separate containers)."
        )
    extra: dict[str, object] = {}
    covered = view.coverage()
    if covered:
        message += f" {as_sentence(covered)}"
        extra["coverage"] = covered
    yield finding(
        "nccl-p2p-unused",
        message,
        ranks=ranks,
        transports=vias,
        severity=None,
        log_lines=quote([*lines, *(s.evidence for s in asked)]),
        **extra,
    )


def _closed_ring_from_zero(transports: tuple[NcclTransport, ...], ranks: set[int]) -> bool:
    """Whether channel lines without the communicator's size still show all of it.

    Ranks 0 to n-1, each sending to and receiving from the others in one cycle (``0[0] -> 1[1]`` and
    ``1[1] -> 0[0]``): a ring over every rank of a communicator of n ranks is printed so.
    """
    if len(ranks) < 2 or ranks != set(range(len(ranks))):
        return False
    edges = {(t.src_rank, t.dst_rank) for t in transports if t.src_rank in ranks and t.dst_rank in ranks}
    forward: dict[int, set[int]] = {r: set() for r in ranks}
    backward: dict[int, set[int]] = {r: set() for r in ranks}
    for a, b in edges:
        forward[a].add(b)
        backward[b].add(a)
    return all(_reaches_all(0, step, ranks) for step in (forward, backward))


def _reaches_all(start: int, step: dict[int, set[int]], ranks: set[int]) -> bool:
    seen, todo = {start}, [start]
    while todo:
        for nxt in step[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen == ranks


@rule(
    Code(
        "nccl-p2p-disabled",
        "warn",
        title="NCCL reports P2P disabled between GPUs it sees as connected",
        remedy=(
            "NVML reports peer access unavailable for the pair: disable ACS on the PCIe bridges above the GPUs or set "
            "the IOMMU to passthrough (iommu=pt), check `nvidia-smi topo -p2p r`; between NVLink-connected GPUs it "
            "points at a hardware or fabric fault: reset the GPUs or ask the provider to check the baseboard."
        ),
    ),
    needs=(NCCL_LOG,),
)
def p2p_disabled(ctx: RuleContext) -> Iterator[Finding]:
    """Report GPU pairs NCCL says it cannot use peer access between, although it sees them connected.

    Between NVLink-connected GPUs NCCL stops and calls it a hardware issue (fail); elsewhere it falls back to
    host memory (warn).
    """
    view = _log(ctx)
    if not view.p2p_disabled:
        return
    nvlink = [p for p in view.p2p_disabled if p.nvlink]
    pairs = sorted({(p.gpu_a, p.gpu_b) for p in view.p2p_disabled})
    shown = ", ".join(f"GPU{a}-GPU{b}" for a, b in pairs[:8]) + (
        f" and {len(pairs) - 8} more" if len(pairs) > 8 else ""
    )
    kind = "NVLink-connected GPUs" if nvlink else "connected GPUs"
    yield finding(
        "nccl-p2p-disabled",
        f"NCCL reports P2P disabled between {kind}: {shown}"
        + (" (NCCL stops: it calls this a hardware issue)." if nvlink else "; it falls back to host memory."),
        severity=Severity.FAIL if nvlink else None,
        gpu_pairs=[list(p) for p in pairs],
        log_lines=quote(p.evidence for p in view.p2p_disabled),
        causes=["nvlink-down" if nvlink else "p2p-unsupported"],  # NCCL's own reading: a link fault, or no P2P
        **({"severity_reason": "P2P refused between NVLink-connected GPUs"} if nvlink else {}),
    )


def nvswitch_box(machine: Machine, spec: GpuSpec | None) -> bool:
    """Tell whether this is an NVSwitch Hopper or Blackwell box, where NCCL should use NVLS.

    It is when the catalog says so for the model, the probe saw NVSwitches, or the matrix shows NV18 pairs.
    """
    if spec is not None:
        return spec.build == "nvswitch" and spec.nvlink_generation >= 4
    # NV18 between GPUs is the per-GPU count of NVLink4/5 shared through NVSwitches (HGX H100/H200/B200)
    return bool(machine.nvswitches) or any(link.nvlinks >= 18 for link in machine.links)


@rule(
    Code(
        "nccl-nvls-off",
        "warn",
        title="NVLink SHARP (NVLS) is off on an NVSwitch Hopper or Blackwell box",
        remedy=(
            "All-reduce runs on rings at about 370 instead of about 480 GB/s on 8x H100: check that the fabric manager "
            "is running and healthy (`nvidia-smi -q | grep -A4 Fabric`), that NCCL_NVLS_ENABLE is not 0, and that NCCL "
            "is 2.17 or newer with CUDA 12.1+ and driver 530+."
        ),
    ),
    needs=(NCCL_LOG,),
)
def nvls_off(ctx: RuleContext) -> Iterator[Finding]:
    """Report NVLink SHARP (NVLS) off on an NVSwitch Hopper or Blackwell box running more than one GPU.

    NCCL says multicast is not available, or builds 0 NVLS channels: all-reduce falls back to rings at about
    three quarters of the bandwidth.
    """
    view, machine, spec = _log(ctx), ctx.machine, ctx.spec
    if not nvswitch_box(machine, spec):
        return
    said_off = [s.evidence for s in view.nvls_support if not s.available]
    zero_channels = [c.evidence for c in view.channel_counts if isinstance(c.nvls, int) and c.nvls == 0]
    multi_gpu = (
        any(isinstance(r.local_ranks, int) and r.local_ranks > 1 for r in view.ranks)
        or len({(t.src_rank, t.dst_rank) for t in view.transports if t.kind == "P2P"}) > 0
    )
    if not (said_off or zero_channels) or not multi_gpu:
        return
    model = spec.name if spec is not None else "an NVSwitch box"
    yield finding(
        "nccl-nvls-off",
        f"NCCL runs without NVLS on {model}: "
        + ("multicast support is not available" if said_off else "it built 0 NVLS channels")
        + "; all-reduce falls back to rings.",
        log_lines=quote([*said_off, *zero_channels]),
    )


@rule(
    Code(
        "nccl-gdr-disabled",
        "warn",
        title="GPUDirect RDMA is off for traffic between nodes",
        remedy=(
            "Network traffic is staged through host memory: load nvidia_peermem (or use DMA-BUF: kernel 5.12+, open "
            "driver), check ACS/IOMMU on the GPU-NIC path, and that NCCL_NET_GDR_LEVEL is not lowered."
        ),
        remedy_actions=(
            "module-load",
            "module-load-at-boot",
        ),
    ),
    needs=(NCCL_LOG,),
)
def gdr_disabled(ctx: RuleContext) -> Iterator[Finding]:
    """Report GPUDirect RDMA off between nodes: NCCL copies every inter-node message through host memory.

    Named from NCCL's "GPU Direct RDMA Disabled" lines, or from network connections without ``/GDRDMA``. NCCL
    prints the per-HCA line (``NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'``, src/graph/topo.cc) when
    the NIC cannot reach GPU memory at all (no nvidia-peermem, no DMA-BUF), so those lines say it alone, in a
    paste of a few lines or a single-node run; the older per-GPU form with a distance is a choice NCCL makes for
    far GPU-NIC pairs, judged only where traffic leaves the node.
    """
    view = _log(ctx)
    multi_node = len(view.hosts) > 1 or any(
        isinstance(r.nodes_in_comm, int) and r.nodes_in_comm > 1 for r in view.ranks
    )
    net = [t for t in view.transports if t.kind == "NET"]
    between_nodes = multi_node or bool(net)
    one_node = not between_nodes and any(isinstance(r.nodes_in_comm, int) for r in view.ranks)
    if one_node:  # the log says every rank is on one node: no traffic leaves it
        return
    enabled = {(g.host, g.hca) for g in view.gdr if g.enabled}
    off = [
        g
        for g in view.gdr
        if not g.enabled
        and (between_nodes or isinstance(g.distance, Unsupported))
        and (g.host, g.hca) not in enabled
        and "NET/Socket" not in g.evidence.text  # sockets never use GPUDirect RDMA: nccl-net-socket-fallback's
    ]
    plain_net = [t for t in net if not t.gdr and not t.via.startswith("NET/Socket")]
    if not off and not plain_net:
        return
    hcas = sorted({g.hca for g in off})
    what = f"for HCA {', '.join(hcas)}" if hcas else f"on {len(plain_net)} network connection(s) without /GDRDMA"
    effect = (
        "inter-node traffic is copied through host memory"
        if between_nodes
        else "the NICs cannot read or write GPU memory (no nvidia-peermem or DMA-BUF), so traffic between nodes "
        "would be copied through host memory"
    )
    gdr_off = finding(
        "nccl-gdr-disabled",
        f"NCCL has GPUDirect RDMA disabled {what}: {effect}.",
        hcas=hcas,
        log_lines=quote([*(g.evidence for g in off), *(t.first for t in plain_net)]),
    )
    yield dataclasses.replace(gdr_off, remedy_commands=PEERMEM_COMMANDS)


@rule(
    Code(
        "nccl-fabric-manager-down",
        "fail",
        title="NCCL failed with CUDA error 802 'system not yet initialized': the fabric manager is not running",
        remedy=(
            "Start the fabric manager matching the driver version (`systemctl enable --now nvidia-fabricmanager`; on "
            "Blackwell HGX it starts the NVLink subnet manager first, which needs the nvlsm package and the ib_umad "
            "module) and rerun; check `nvidia-smi -q | grep -A4 Fabric` shows Completed/Success."
        ),
        remedy_actions=(
            "package-check",
            "module-load",
            "module-load-at-boot",
            "service-start",
            "service-enable",
        ),
    ),
    Code(
        "nccl-nvls-invalid-argument",
        "fail",
        title=(
            "NCCL's NVLS setup failed with 'invalid argument' (seen after a fabric manager restart with GPUs in use)"
        ),
        remedy=(
            "Reset the GPUs (`nvidia-smi -r` with no process on them) or reboot the node; until then run with "
            "NCCL_NVLS_ENABLE=0 to avoid the failure at a cost in all-reduce bandwidth."
        ),
    ),
    needs=(NCCL_LOG,),
)
def known_warnings(ctx: RuleContext) -> Iterator[Finding]:
    """Report NCCL WARN lines whose cause is known.

    CUDA error 802 ("system not yet initialized"): the NVSwitch fabric manager is not running (on an NVL rack's
    tray, the tray is not registered with the rack's fabric). NVLS setup failing with "invalid argument": a
    fabric manager restarted while processes held the GPUs.
    """
    view, spec = _log(ctx), ctx.spec
    fm = [w.evidence for w in view.warnings if _CUDA_802.search(w.message) and "cuda" in w.message.lower()]
    if fm:
        tray = spec is not None and spec.layout == "nvl72"
        fm_down = finding(
            "nccl-fabric-manager-down",
            "NCCL failed with CUDA error 802 ('system not yet initialized'): "
            + (
                "this tray's GPUs are not registered with the rack's NVLink fabric, so they cannot use NVLink."
                if tray
                else "the NVSwitch fabric manager is not running, so the GPUs cannot use NVLink."
            ),
            log_lines=quote(fm),
        )
        yield with_fabric_remedy(fm_down, spec, fabric_manager_commands(spec))
    nvls = [
        w.evidence
        for w in view.warnings
        if _INVALID_ARGUMENT.search(w.message) and ("nvls" in w.source_location.lower() or "NVLS" in w.message)
    ]
    if nvls:
        yield finding(
            "nccl-nvls-invalid-argument",
            "NCCL's NVLS setup failed with 'invalid argument', the signature of a fabric manager restarted while "
            "processes held the GPUs.",
            log_lines=quote(nvls),
        )


@rule("nccl-env-override", needs=(NCCL_LOG,))
def env_settings(ctx: RuleContext) -> Iterator[Finding]:
    """Report the NCCL variables the log shows set (``NCCL_P2P_LEVEL set by environment to LOC``).

    A variable that switches a transport off or pins the path (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_IB_DISABLE,
    NCCL_ALGO, NCCL_NVLS_ENABLE=0, NCCL_CUMEM_ENABLE=0...) warns: two NVLink-connected GPUs then talk through
    host memory or the NICs. Tuning variables are info. NCCL before 2.23.4 prints NCCL_P2P_DISABLE=1 as
    ``NCCL_P2P_LEVEL set by environment to LOC``. The remedy lists the files that set each variable. Variables the
    paste shows typed (the command above the log, an ``export``, ``os.environ[...] = ...``) are said apart: NCCL
    prints only some of the variables it reads, and those are where the user set them.
    """
    view = _log(ctx)
    logged = [s for s in view.settings if s.origin != "command line"]
    named = {s.name for s in logged}
    typed = [s for s in view.settings if s.origin == "command line" and s.name not in named]
    everywhere = nvlink_everywhere(ctx)
    for found in (
        settings_finding(logged, "NCCL's log", view.version, nvlink_everywhere=everywhere),
        settings_finding(
            typed, "The pasted command line", view.version, find_where=False, nvlink_everywhere=everywhere
        ),
    ):
        if found is not None:
            yield found
