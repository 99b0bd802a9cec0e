"""NCCL's own bandwidth arithmetic, by NCCL release: every constant with the releases it holds for and its source.

Each table lists a value from the first release whose source has it; it holds until the next entry. The
values were read at each tag of NVIDIA/nccl (``src/graph/topo.h``, ``src/graph/tuning.cc``,
``src/transport/nvls.cc``, ``src/graph/topo.cc``), and each entry names the file and tag. A run is held to
the arithmetic of the NCCL it reports; when it reports none, the newest release read (:data:`CURRENT`) is
used and the figure says so.

Pure: no torch, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from topoaudit.model.network import NcclVersion

T = TypeVar("T")
V = NcclVersion

CURRENT = V(2, 30, 7)
"""The newest NCCL release whose source was read (tag v2.30.7-1): the arithmetic used when a run names none."""


@dataclass(frozen=True)
class Held(Generic[T]):
    """A value NCCL's source has from release ``since`` until the next entry of its table."""

    since: NcclVersion
    value: T
    source: str  # "src/graph/topo.h@v2.20.3-1 SM90_NVLINK_BW"


@dataclass(frozen=True)
class InForce(Generic[T]):
    """The entry of a table that holds for one release, with the releases it holds for in words."""

    value: T
    source: str
    releases: str  # "NCCL 2.20.3 and later", "NCCL 2.18.1 until 2.20.3"


def in_force(table: tuple[Held[T], ...], version: NcclVersion) -> InForce[T]:
    """The entry in force at ``version``; a release older than every entry gets the oldest, said so."""
    index = max((i for i, held in enumerate(table) if held.since <= version), default=-1)
    entry = table[max(index, 0)]
    nxt = table[index + 1].since if 0 <= index + 1 < len(table) else None
    releases = f"NCCL {entry.since} until {nxt}" if nxt else f"NCCL {entry.since} and later"
    if index < 0:
        releases = f"the oldest release read, NCCL {entry.since} (NCCL {version} is older)"
    return InForce(entry.value, entry.source, releases)


# --- per-link NVLink figures (GB/s), src/graph/topo.h ------------------------------------------------------

_VOLTA = "src/graph/topo.h@v2.5.6-1 VOLTA_NVLINK_WIDTH 21 (before 2.8.3 every GPU but Pascal took the Volta figure)"
_SM80 = "(no constant of its own: ncclTopoNVLinkSpeed gives every sm80 and newer GPU SM80's figure)"

NVLINK_GBPS_PER_LINK: dict[int, tuple[Held[float], ...]] = {
    60: (Held(V(2, 5, 6), 18.0, "src/graph/topo.h@v2.5.6-1 PASCAL_NVLINK_WIDTH"),),
    70: (
        Held(V(2, 5, 6), 21.0, "src/graph/topo.h@v2.5.6-1 VOLTA_NVLINK_WIDTH"),
        Held(V(2, 10, 3), 22.0, "src/graph/topo.h@v2.10.3-1 SM70_NVLINK_WIDTH"),
        Held(V(2, 18, 1), 20.0, "src/graph/topo.h@v2.18.1-1 SM70_NVLINK_BW"),
    ),
    80: (
        Held(V(2, 5, 6), 21.0, _VOLTA),
        Held(V(2, 8, 3), 21.0, "src/graph/topo.h@v2.8.3-1 SM80_NVLINK_WIDTH"),
        Held(V(2, 10, 3), 22.0, "src/graph/topo.h@v2.10.3-1 SM80_NVLINK_WIDTH"),
        Held(V(2, 18, 1), 20.0, "src/graph/topo.h@v2.18.1-1 SM80_NVLINK_BW"),
    ),
    90: (
        Held(V(2, 5, 6), 21.0, _VOLTA),
        Held(V(2, 8, 3), 21.0, f"src/graph/topo.h@v2.8.3-1 SM80_NVLINK_WIDTH {_SM80}"),
        Held(V(2, 10, 3), 22.0, f"src/graph/topo.h@v2.10.3-1 SM80_NVLINK_WIDTH {_SM80}"),
        Held(V(2, 18, 1), 20.0, "src/graph/topo.h@v2.18.1-1 SM90_NVLINK_BW"),
        Held(V(2, 20, 3), 20.6, "src/graph/topo.h@v2.20.3-1 SM90_NVLINK_BW"),
    ),
    100: (
        Held(V(2, 5, 6), 21.0, _VOLTA),
        Held(V(2, 8, 3), 21.0, f"src/graph/topo.h@v2.8.3-1 SM80_NVLINK_WIDTH {_SM80}"),
        Held(V(2, 10, 3), 22.0, f"src/graph/topo.h@v2.10.3-1 SM80_NVLINK_WIDTH {_SM80}"),
        Held(V(2, 18, 1), 20.0, "src/graph/topo.h@v2.18.1-1 SM90_NVLINK_BW (no SM100 constant yet: sm90 and newer)"),
        Held(V(2, 20, 3), 20.6, "src/graph/topo.h@v2.20.3-1 SM90_NVLINK_BW (no SM100 constant yet: sm90 and newer)"),
        Held(V(2, 25, 1), 40.0, "src/graph/topo.h@v2.25.1-1 SM100_NVLINK_BW"),
        Held(V(2, 27, 5), 40.1, "src/graph/topo.h@v2.27.5-1 SM100_NVLINK_BW"),
    ),
}
"""GB/s per NVLink that NCCL counts for a GPU of each SM version; a GPU->NVSwitch link is ``links x figure``."""

SM_BY_NVLINK_GENERATION = {2: 70, 3: 80, 4: 90, 5: 100}
"""The SM version whose per-link figure applies to each NVLink generation (V100, A100, H100, B200)."""


def arch_row(sm: int, version: NcclVersion) -> str:
    """Which row of tuning.cc's per-architecture tables a GPU of ``sm`` takes in ``version``.

    Before 2.15.1 only an all-sm80 job took the Ampere row (``compCap80``); 2.15.1-2.16 matched sm80 and sm90
    exactly; 2.17.1 took ``>= 80`` / ``>= 90``; 2.25.1 added Blackwell for ``>= 100`` (``compCapIndex`` in
    src/graph/tuning.cc at v2.8.3-1, v2.15.1-1, v2.17.1-1, v2.25.1-1).
    """
    if version < V(2, 15, 1):
        return "ampere" if sm == 80 else "volta"
    if version < V(2, 17, 1):
        return {80: "ampere", 90: "hopper"}.get(sm, "volta")
    if sm >= 100 and version >= V(2, 25, 1):
        return "blackwell"
    return "hopper" if sm >= 90 else "ampere" if sm >= 80 else "volta"


# --- the ring's architecture caps, src/graph/tuning.cc ------------------------------------------------------

RING_CAPS: tuple[Held[dict[str, tuple[str, float]]], ...] = (
    Held(V(2, 5, 6), {}, "src/graph/tuning.cc@v2.5.6-1: no architecture cap"),
    Held(V(2, 7, 3), {"ampere": ("x", 0.92)}, "src/graph/tuning.cc@v2.7.3-1: if (compCap80) busBw *= 0.92"),
    Held(
        V(2, 7, 5),
        {"ampere": ("min", 235.0)},
        "src/graph/tuning.cc@v2.7.5-1: if (compCap80) busBw = std::min(busBw, 235.0f)",
    ),
    Held(
        V(2, 17, 1),
        {"ampere": ("min", 235.0), "hopper": ("min", 370.0)},
        "src/graph/tuning.cc@v2.17.1-1: Ampere std::min(busBw, 235.0f), Hopper std::min(busBw, 370.0f)",
    ),
    Held(V(2, 18, 1), {}, "src/graph/tuning.cc@v2.18.1-1: both caps removed"),
)
"""Caps on the ring's busBw by architecture row (:func:`arch_row`): ``("min", cap)`` or ``("x", factor)``."""


# --- tree, src/graph/tuning.cc ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeRule:
    """How ``ncclTopoTuneModel`` turns the tree graph's ``nChannels x bw`` into the tree's busBw."""

    factor: float
    fixed_cap: tuple[int, float, float] | None  # (nodes above which, cap there, cap otherwise) in GB/s
    per_channel_cap: bool  # busBw <= nChannels x perChMaxTreeBw
    tree_pattern_factor: float  # applied when the tree graph fell back to NCCL_TOPO_PATTERN_TREE; 1.0 = none


TREE: tuple[Held[TreeRule], ...] = (
    Held(
        V(2, 5, 6),
        TreeRule(0.9, (1, 70.0, 90.0), False, 1.0),
        "src/graph/tuning.cc@v2.5.6-1: busBw = std::min(busBw*.9, comm->nNodes > 1 ? 70.0 : 90.0)",
    ),
    Held(
        V(2, 6, 4),
        TreeRule(0.9, (2, 80.0, 110.0), False, 1.0),
        "src/graph/tuning.cc@v2.6.4-1: std::min(busBw*.9, comm->nNodes > 2 ? 80.0 : 110.0) (@v2.7.3-1: maxTreeBw, "
        "the same for Simple)",
    ),
    Held(
        V(2, 8, 3),
        TreeRule(0.92, None, True, 1.0),
        "src/graph/tuning.cc@v2.8.3-1: busBw = std::min(busBw*.92, graphs[a]->nChannels*perChMaxTreeBw)",
    ),
    Held(
        V(2, 18, 3),
        TreeRule(0.92, None, True, 0.85),
        "src/graph/tuning.cc@v2.18.3-1: std::min(busBw*.92, nChannels*perChMaxTreeBw), then busBw *= .85 when the "
        "tree graph's pattern is NCCL_TOPO_PATTERN_TREE",
    ),
)

TREE_ALGBW_RATIO_SOURCE = (
    "src/graph/tuning.cc@v2.5.6-1 and @v2.30.7-1: the tree's algorithm bandwidth is busBw x .5 (the ring's "
    "nRanks/nsteps), so its nccl-tests busbw is busBw x (n-1)/n"
)

PER_CHANNEL_TREE_GBPS: dict[str, tuple[Held[tuple[float, float, float]], ...]] = {
    "volta": (Held(V(2, 8, 3), (26.5, 18.5, 10.0), "src/graph/tuning.cc@v2.8.3-1 perChMaxTreeBws Volta"),),
    "ampere": (
        Held(V(2, 8, 3), (24.0, 22.5, 16.0), "src/graph/tuning.cc@v2.8.3-1 perChMaxTreeBws Ampere"),
        Held(V(2, 10, 3), (24.0, 23.6, 17.8), "src/graph/tuning.cc@v2.10.3-1 perChMaxTreeBws Ampere"),
    ),
    "hopper": (
        Held(V(2, 15, 1), (24.0, 23.6, 17.8), "src/graph/tuning.cc@v2.15.1-1 perChMaxTreeBws Hopper (Ampere's row)"),
        Held(V(2, 17, 1), (38.7, 41.4, 33.0), "src/graph/tuning.cc@v2.17.1-1 perChMaxTreeBws Hopper"),
        Held(V(2, 18, 3), (38.7, 41.4, 36.0), "src/graph/tuning.cc@v2.18.3-1 perChMaxTreeBws Hopper"),
    ),
    "blackwell": (
        Held(V(2, 25, 1), (77.4, 82.8, 72.0), "src/graph/tuning.cc@v2.25.1-1 perChMaxTreeBws Blackwell (2x Hopper)"),
        Held(V(2, 28, 3), (70.0, 42.8, 24.0), "src/graph/tuning.cc@v2.28.3-1 perChMaxTreeBws Blackwell"),
    ),
}
"""GB/s per tree channel for 1 node, 2 nodes, 3 or more nodes (``N1/N2/N4``), by architecture row."""


def per_channel_tree_gbps(sm: int, version: NcclVersion, nodes: int) -> InForce[float] | None:
    """The per-channel tree cap for ``nodes`` nodes; None before 2.8.3 (a fixed cap then) or for no row."""
    table = PER_CHANNEL_TREE_GBPS.get(arch_row(sm, version))
    if table is None or version < table[0].since:
        return None
    row = in_force(table, version)
    return InForce(row.value[min(nodes, 3) - 1], row.source, row.releases)


# --- CollNet, NVLS and the network --------------------------------------------------------------------------

COLLNET: tuple[Held[str], ...] = (
    Held(V(2, 6, 4), "busBw x 0.9", "src/graph/tuning.cc@v2.6.4-1: if (a == NCCL_ALGO_COLLNET) busBw *= .9"),
    Held(V(2, 10, 3), "no factor", "src/graph/tuning.cc@v2.10.3-1: the .9 removed (LL and LL128 busBw = 0)"),
    Held(
        V(2, 14, 3),
        "Direct: busBw / (f - (f-1)/2), f = GPUs per NIC; Chain: busBw x 0.75",
        "src/graph/tuning.cc@v2.14.3-1",
    ),
    Held(
        V(2, 18, 1),
        "Direct: busBw / (f - (f-1)/2), x 0.85 on sm90 and newer; Chain: no factor",
        "src/graph/tuning.cc@v2.18.1-1",
    ),
)
"""CollNet's refinement of busBw. Not used for a figure: it needs the channel count and GPU:NIC ratio of the
run's graph, so CollNet runs are held to public measurements (the oracle says which)."""

NVLS: tuple[Held[str], ...] = (
    Held(V(2, 5, 6), "", "NVIDIA/nccl before v2.17.1-1: no NVLS algorithm"),
    Held(
        V(2, 17, 1),
        "on by default inside one node (NCCL_NVLS_ENABLE=1) where the GPUs support multicast",
        'src/transport/nvls.cc@v2.17.1-1: NCCL_PARAM(NvlsEnable, "NVLS_ENABLE", 1), one node only',
    ),
    Held(
        V(2, 18, 1),
        "on wherever the GPUs support multicast (NCCL_NVLS_ENABLE=2, auto)",
        'src/transport/nvls.cc@v2.18.1-1: NCCL_PARAM(NvlsEnable, "NVLS_ENABLE", 2)',
    ),
)
"""Whether NCCL has NVLS and picks it by itself."""

NET_GBPS_SOURCE = "src/graph/topo.cc@v2.6.4-1 and later: net.bw = speed / 8000 (Mb/s to GB/s): a 400G port is 50 GB/s"

TREE_TWO_NODES_SOURCE = (
    "src/graph/search.cc@v2.30.7-1: on two nodes the tree's bwIntra is raised up to twice bwInter ('increase "
    "bwIntra for trees (2 nodes or collnet)') and tuning.cc uses bwIntra for nNodes <= 2"
)
