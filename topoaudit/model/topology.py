"""The machine's GPU fabric: NVLink domains, the bottleneck of a ring, tensor-parallel placements.

All functions are pure over :class:`~topoaudit.model.machine.Machine`. Every GPU-to-GPU fact is read
through :func:`gpu_pair_links`, which is where a cell that claims NVLink without a link (``NV0``) becomes
"no NVLink", so domains, placements and rules never disagree about one pair. A pair the source does not
describe (a ``topo -m`` cut after some rows, a GPU lost mid-probe) carries :data:`UNKNOWN_PAIR`: it is
neither NVLink nor a missing one, so a domain, a placement or a rule says it does not know. A box of hundreds of GPUs
has a hundred thousand pairs, so each pass over them is made once per Machine and kept (the NVLink
pairs, the pairs by hop class); domains, placements and ring bounds then work from those.

networkx joins the GPUs that share NVSwitches (a live probe's port facts) and finds the cliques of a partly
linked mesh. It is imported by the function that needs it: a pasted matrix of a switched or fully linked
box needs neither, and importing networkx costs more than the rest of ``analyze``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from topoaudit.model.machine import Link, Machine, PathLevel

UNKNOWN_PAIR = "?"
"""The code of a GPU pair the source does not describe (level UNKNOWN): not a missing NVLink, an unknown one."""

MAX_NVLINKS_PER_GPU = 18
"""No GPU so far has more NVLink ports (H100/H200/B200: 18). A GPU whose per-peer counts add up to more
must reach its peers through NVSwitches, not point-to-point links."""

EXACT_RING_LIMIT = 10
"""Bottleneck rings are searched exactly up to this many GPUs; above, a spanning-tree bound is used."""

EXACT_CLIQUE_LIMIT = 16
"""A partial mesh is split into TP groups by enumerating its cliques up to this many GPUs (direct-link
meshes are at most 8 today); above, and behind NVSwitches, groups are taken greedily."""


@dataclass(frozen=True)
class Domain:
    """GPUs joined by NVLink (directly or through switches); every GPU is in exactly one domain."""

    id: int
    gpus: tuple[int, ...]
    all_pairs: bool  # every pair of its GPUs has a direct NVLink (or shares a switch)
    min_links: int  # smallest per-pair NVLink count over directly linked pairs (0 for a lone GPU)
    max_links: int
    build: str  # "nvswitch" | "mesh" | "partial-mesh" | "bridged-pair" | "single" | "unknown" (no link facts)
    unknown_pairs: int = 0  # pairs of its GPUs the source does not describe: the build is what the others show
    known_pairs_linked: bool = False  # every pair the source describes is linked, the unknown ones aside

    @property
    def complete_as_shown(self) -> bool:
        """Whether every pair of the domain the source describes is linked: ``all_pairs``, unknown pairs aside."""
        return self.all_pairs or self.known_pairs_linked

    @property
    def size(self) -> int:
        """How many GPUs the domain holds."""
        return len(self.gpus)


@dataclass(frozen=True)
class Hop:
    """One step of a ring: the pair, its ``topo -m`` code, its level and its NVLink count."""

    a: int
    b: int
    code: str
    level: PathLevel
    nvlinks: int


@dataclass(frozen=True)
class Bottleneck:
    """The slowest hop a ring over ``gpus`` must take, in the best ring order."""

    gpus: tuple[int, ...]
    level: PathLevel
    nvlinks: int  # NVLinks on the slowest hop when it is NVLink, else 0
    ring: tuple[int, ...]  # the ring order that achieves it (empty when not exact)
    slowest_hop: Hop | None  # None for a single GPU
    exact: bool

    @property
    def describe(self) -> str:
        """The slowest hop as people say it: "NVLink x18", "cross-socket SMP link (SYS)"."""
        if self.slowest_hop is None:
            return "single GPU (no communication)"
        if self.level == PathLevel.NVLINK:
            return f"NVLink x{self.nvlinks}"
        return self.level.label


@dataclass(frozen=True)
class Placement:
    """Disjoint tensor-parallel groups of ``tp`` GPUs that each stay inside one NVLink domain."""

    tp: int
    groups: tuple[tuple[int, ...], ...]
    fits: bool
    unused_gpus: tuple[int, ...]
    alternatives: tuple[str, ...]  # when it does not fit, or fits only partly
    # pairs of a domain large enough for a group that the source does not describe: when no group fits, whether
    # one would is not known (a `topo -m` cut short), and a reader of the placement must say so, not "no NVLink"
    unknown_pairs: int = 0

    @property
    def cuda_visible_devices(self) -> tuple[str, ...]:
        """The environment setting that pins each group's process to its GPUs."""
        return tuple("CUDA_VISIBLE_DEVICES=" + ",".join(map(str, g)) for g in self.groups)


def format_gpus(gpus: Iterable[int]) -> str:
    """Write a GPU set as people do: {0-3} for a contiguous run of three or more, {0,2,5} otherwise."""
    g = sorted(gpus)
    if len(g) > 2 and g[-1] - g[0] == len(g) - 1 and len(set(g)) == len(g):  # no list as long as the span
        return f"{{{g[0]}-{g[-1]}}}"
    return "{" + ",".join(map(str, g)) + "}"


def on_nvlink(link: Link | None) -> bool:
    """Whether a pair is joined by at least one NVLink (``NV0`` is not a link: nvidia-smi never prints it)."""
    return link is not None and link.level == PathLevel.NVLINK and link.nvlinks > 0


def is_unknown(link: Link | None) -> bool:
    """Whether the source leaves this pair undescribed (:data:`UNKNOWN_PAIR`), as opposed to a known path."""
    return link is not None and link.code == UNKNOWN_PAIR and link.level == PathLevel.UNKNOWN


def unknown_pairs(machine: Machine) -> frozenset[tuple[int, int]]:
    """Return the GPU pairs (low, high index) the source does not describe; computed once per Machine."""
    cached: frozenset[tuple[int, int]] | None = machine.__dict__.get("_unknown_pairs")
    if cached is None:
        cached = frozenset(pair for pair, link in gpu_pair_links(machine).items() if is_unknown(link))
        object.__setattr__(machine, "_unknown_pairs", cached)
    return cached


def gpus_with_unknown_pairs(machine: Machine) -> frozenset[int]:
    """Return the GPUs with a peer the source does not describe (their NVLink count is not all known)."""
    return frozenset(g for pair in unknown_pairs(machine) for g in pair)


def gpu_pair_links(machine: Machine) -> dict[tuple[int, int], Link]:
    """GPU-GPU links keyed by (low index, high index); computed once per Machine (it is immutable).

    A cell that reads NVLink with no link in it (``NV0``, from any source) is kept with its code but given
    the unknown level: the pair has no NVLink, and what joins it instead is not known.
    """
    cached: dict[tuple[int, int], Link] | None = machine.__dict__.get("_gpu_pairs")
    if cached is not None:
        return cached
    index = {g.label: g.index for g in machine.gpus}.get
    nvlink = PathLevel.NVLINK
    pairs: dict[tuple[int, int], Link] = {}
    for link in machine.links:  # a hundred thousand links on the largest boxes: kept to the bare steps
        i, j = index(link.a), index(link.b)
        if i is None or j is None:
            continue
        if link.level == nvlink and link.nvlinks <= 0:
            link = Link(link.a, link.b, link.code, PathLevel.UNKNOWN, 0)
        if i < j:
            pairs[i, j] = link
        else:
            pairs[j, i] = link
    object.__setattr__(machine, "_gpu_pairs", pairs)
    return pairs


def nvlink_pairs(machine: Machine) -> tuple[tuple[int, int, int], ...]:
    """List ``(a, b, nvlinks)`` for every GPU pair :func:`on_nvlink`, in the source's order; cached on the Machine."""
    cached: tuple[tuple[int, int, int], ...] | None = machine.__dict__.get("_nvlink_pairs")
    if cached is None:
        nvlink = PathLevel.NVLINK  # gpu_pair_links leaves no NVLink-level link without links
        cached = tuple((a, b, link.nvlinks) for (a, b), link in gpu_pair_links(machine).items() if link.level == nvlink)
        object.__setattr__(machine, "_nvlink_pairs", cached)
    return cached


def nvlink_peers(machine: Machine) -> dict[int, dict[int, int]]:
    """Each GPU's NVLink peers and the link count to each; computed once per Machine."""
    cached: dict[int, dict[int, int]] | None = machine.__dict__.get("_nvlink_peers")
    if cached is None:
        cached = {g.index: {} for g in machine.gpus}
        for a, b, count in nvlink_pairs(machine):
            cached[a][b] = count
            cached[b][a] = count
        object.__setattr__(machine, "_nvlink_peers", cached)
    return cached


def pairs_among(machine: Machine, gpus: Iterable[int]) -> Iterable[tuple[tuple[int, int], Link]]:
    """Yield the known GPU pairs with both ends in ``gpus``.

    Looked up pair by pair for a small set, filtered from all pairs for a large one (either way each pair is
    read once).
    """
    pairs = gpu_pair_links(machine)
    members = sorted(set(gpus))
    if len(members) * (len(members) - 1) // 2 <= len(pairs):
        return (
            ((i, j), link) for i, j in itertools.combinations(members, 2) if (link := pairs.get((i, j))) is not None
        )
    inside = set(members)
    return (item for item in pairs.items() if item[0][0] in inside and item[0][1] in inside)


def nvlink_domains(machine: Machine) -> tuple[Domain, ...]:
    """Find the connected components of the NVLink subgraph (through switches), largest first then by GPU index."""
    pairs = gpu_pair_links(machine)
    links_known = len(machine.gpus) < 2 or bool(pairs) or any(isinstance(g.nvlink_ports, tuple) for g in machine.gpus)
    peers = nvlink_peers(machine)
    switched = _switch_groups(machine)
    joined = {g: set(linked) for g, linked in peers.items()}
    for group in switched:
        for gpu in group:
            joined[gpu] |= group - {gpu}
    components = sorted((tuple(sorted(c)) for c in _components(joined)), key=lambda c: (-len(c), c))
    component_of = {g: number for number, gpus in enumerate(components) for g in gpus}
    unseen_in: dict[int, int] = {}  # unknown pairs inside each component, counted in one pass
    for a, b in unknown_pairs(machine):
        if component_of.get(a) == component_of.get(b):
            unseen_in[component_of[a]] = unseen_in.get(component_of[a], 0) + 1
    domains = []
    for number, gpus in enumerate(components):
        counts = [count for g in gpus for count in peers[g].values()]
        n = len(gpus)
        pairs_joined = sum(len(joined[g]) for g in gpus) // 2
        all_pairs = pairs_joined == n * (n - 1) // 2
        unseen = unseen_in.get(number, 0)
        as_shown = all_pairs or pairs_joined + unseen == n * (n - 1) // 2  # every pair the source shows is linked
        domains.append(
            Domain(
                id=number,
                gpus=gpus,
                all_pairs=all_pairs,
                min_links=min(counts, default=0),
                max_links=max(counts, default=0),
                build=_build_of(peers, gpus, as_shown, any(set(gpus) <= g for g in switched))
                if links_known
                else "unknown",
                unknown_pairs=unseen,
                known_pairs_linked=as_shown and unseen > 0,
            )
        )
    return tuple(domains)


def _switch_groups(machine: Machine) -> list[set[int]]:
    """GPUs whose NVLink ports land on the same NVSwitches (NVML probe only; topo text has no switches)."""
    by_switch: dict[str, set[int]] = {}
    for gpu in machine.gpus:
        if isinstance(gpu.nvlink_ports, tuple):
            for port in gpu.nvlink_ports:
                if (
                    port.remote_device_type == "switch"
                    and port.state == "active"
                    and isinstance(port.remote_pci_bus_id, str)
                ):
                    by_switch.setdefault(port.remote_pci_bus_id, set()).add(gpu.index)
    if not by_switch:
        return []
    import networkx as nx

    graph = nx.Graph()
    for members in by_switch.values():
        graph.add_nodes_from(members)
        graph.add_edges_from(itertools.combinations(sorted(members), 2))
    return [set(c) for c in nx.connected_components(graph)]


def _components(adjacent: dict[int, set[int]]) -> list[set[int]]:
    """Find the connected parts of a graph given as each node's neighbours."""
    seen: set[int] = set()
    parts = []
    for start in adjacent:
        if start in seen:
            continue
        part, todo = {start}, [start]
        while todo:
            for nxt in adjacent[todo.pop()]:
                if nxt not in part:
                    part.add(nxt)
                    todo.append(nxt)
        seen |= part
        parts.append(part)
    return parts


def _build_of(peers: dict[int, dict[int, int]], gpus: tuple[int, ...], all_pairs: bool, seen_switch: bool) -> str:
    n = len(gpus)
    if n == 1:
        return "single"
    if seen_switch:
        return "nvswitch"
    per_gpu_total = max(sum(peers[g].values()) for g in gpus)
    if per_gpu_total > MAX_NVLINKS_PER_GPU:
        return "nvswitch"  # more links than any GPU has ports: the peers share switches
    if n == 2:
        return "bridged-pair"
    return "mesh" if all_pairs else "partial-mesh"


def _edge_key(link: Link | None) -> tuple[int, int]:
    """Sort key of a hop: lower is faster. Unknown links (missing cells) count as the slowest."""
    if link is None:
        return (PathLevel.UNKNOWN + 1, 0)
    return (int(link.level), -link.nvlinks)


def bottleneck(machine: Machine, gpus: Iterable[int]) -> Bottleneck:
    """Slowest hop of the best ring over ``gpus`` (bottleneck travelling-salesman).

    Exact up to :data:`EXACT_RING_LIMIT` GPUs (threshold search with a Hamiltonian-cycle DP). Above,
    the largest edge of a minimum spanning tree is a lower bound that is tight for boxes made of fully
    linked domains, and ``exact`` is False (see :func:`_spanning_tree_bound`).
    """
    members = tuple(sorted(set(gpus)))
    if len(members) < 2:
        return Bottleneck(members, PathLevel.SELF, 0, members, None, True)
    pairs = gpu_pair_links(machine)

    def key(i: int, j: int) -> tuple[int, int]:
        return _edge_key(pairs.get((min(i, j), max(i, j))))

    if len(members) == 2:
        ring: tuple[int, ...] = members
        worst = members
        exact = True
    elif len(members) <= EXACT_RING_LIMIT:
        pattern = tuple(key(i, j) for i, j in itertools.combinations(members, 2))
        ring = tuple(members[position] for position in _best_ring(len(members), pattern))
        hops = list(zip(ring, ring[1:] + ring[:1], strict=True))
        worst = max(hops, key=lambda h: key(*h))
        exact = True
    else:
        worst = _spanning_tree_bound(machine, members)
        ring, exact = (), False
    a, b = min(worst), max(worst)
    link = pairs.get((a, b))
    level = link.level if link else PathLevel.UNKNOWN
    nvlinks = link.nvlinks if link else 0
    hop = Hop(a, b, link.code if link else "?", level, nvlinks)
    return Bottleneck(members, level, nvlinks, ring, hop, exact)


def _spanning_tree_bound(machine: Machine, members: tuple[int, ...]) -> tuple[int, int]:
    """Return the slowest hop of a minimum spanning tree over ``members`` (sorted): no ring can do better.

    Hops fall into a handful of classes (NV18, NV12, PIX, ..., SYS, no link at all), so rather than sorting
    every pair, whole classes are merged fastest first (union-find) until the GPUs are connected. The class
    that connects them is the bound, and the hop named is the first pair in GPU order of that class that
    joins two parts the faster classes left apart: the hop Kruskal's algorithm over all pairs would name.
    """
    parent = {g: g for g in members}

    def root(g: int) -> int:
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    parts = len(members)
    by_class = _pairs_by_class(machine, members)
    for hop_class in sorted(by_class):
        before = {g: root(g) for g in members}
        for a, b in by_class[hop_class]:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[ra] = rb
                parts -= 1
                if parts == 1:
                    break
        if parts == 1:
            return min((a, b) for a, b in by_class[hop_class] if before[a] != before[b])
    # Still apart: only pairs with no link fact join the parts (they count as the slowest hop).
    for k, a in enumerate(members):
        for b in members[k + 1 :]:
            if root(a) != root(b):
                return (a, b)
    raise AssertionError("a set of two or more GPUs always has a hop")  # pragma: no cover


def _pairs_by_class(machine: Machine, members: tuple[int, ...]) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Group the known pairs among ``members`` by their :func:`_edge_key`.

    The grouping of the whole machine is kept on it: the ring over every GPU is the largest asked for.
    """
    everyone: dict[tuple[int, int], list[tuple[int, int]]] | None = machine.__dict__.get("_pairs_by_class")
    if everyone is None:
        everyone = _group_by_class(gpu_pair_links(machine).items())
        object.__setattr__(machine, "_pairs_by_class", everyone)
    if len(members) == len(machine.gpus) and set(members) == {g.index for g in machine.gpus}:
        return everyone
    return _group_by_class(pairs_among(machine, members))


def _group_by_class(
    pairs: Iterable[tuple[tuple[int, int], Link]],
) -> dict[tuple[int, int], list[tuple[int, int]]]:
    by_class: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for pair, link in pairs:
        hop_class = (int(link.level), -link.nvlinks)
        group = by_class.get(hop_class)
        if group is None:
            by_class[hop_class] = [pair]
        else:
            group.append(pair)
    return by_class


@functools.lru_cache(maxsize=256)
def _best_ring(n: int, pattern: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """Positions 0..n-1 in a ring whose slowest hop is as fast as it can be (threshold search).

    ``pattern`` is the :func:`_edge_key` of each pair of positions in ``itertools.combinations`` order: the
    answer depends on nothing else, and a large box repeats one domain many times (75 NVSwitch nodes of 8),
    so each pattern is searched once.
    """
    of_pair = dict(zip(itertools.combinations(range(n), 2), pattern, strict=True))

    def key(i: int, j: int) -> tuple[int, int]:
        return of_pair[(i, j) if i < j else (j, i)]

    for limit in sorted(set(pattern)):
        found = _hamiltonian_cycle(tuple(range(n)), functools.partial(_within, key, limit))
        if found:
            return found
    return ()


def _within(key: Callable[[int, int], tuple[int, int]], limit: tuple[int, int], i: int, j: int) -> bool:
    return key(i, j) <= limit


def _hamiltonian_cycle(nodes: tuple[int, ...], allowed: Callable[[int, int], bool]) -> tuple[int, ...]:
    """Find a Hamiltonian cycle using only allowed edges (bitmask DP over paths from ``nodes[0]``), or ()."""
    n = len(nodes)
    adj = [[i != j and allowed(nodes[i], nodes[j]) for j in range(n)] for i in range(n)]
    # parent[mask][last]: the previous node on some path from 0 covering `mask` and ending at `last`
    parent: list[list[int]] = [[-2] * n for _ in range(1 << n)]
    parent[1][0] = -1
    for mask in range(1, 1 << n, 2):  # every path starts at node 0
        for last in range(n):
            if parent[mask][last] == -2:
                continue
            for nxt in range(n):
                if not mask >> nxt & 1 and adj[last][nxt] and parent[mask | 1 << nxt][nxt] == -2:
                    parent[mask | 1 << nxt][nxt] = last
    full = (1 << n) - 1
    for last in range(1, n):
        if parent[full][last] != -2 and adj[last][0]:
            order, mask, cur = [], full, last
            while cur != -1:
                order.append(cur)
                cur, mask = parent[mask][cur], mask & ~(1 << cur)
            return tuple(nodes[i] for i in reversed(order))
    return ()


def _within_domains(domains: tuple[Domain, ...], tp: int, largest: int) -> list[str]:
    """Return TP advice that names only domains the box has.

    One domain is "the", several are "each", and pipeline stages go "across domains" only when there are domains
    enough to hold them.
    """
    holding = [d for d in domains if d.size >= largest]
    replicas = sum(d.size // largest for d in holding)
    if len(holding) == 1:
        advice = [
            f"TP={largest} inside NVLink domain {format_gpus(holding[0].gpus)}, the only one of {largest} GPUs: "
            + ("one replica." if replicas == 1 else f"{replicas} replicas.")
        ]
    else:
        advice = [
            f"TP={largest} inside each of the {len(holding)} NVLink domains of {largest} GPUs, data parallel over "
            f"{replicas} replicas."
        ]
    stages = tp // largest
    if tp % largest == 0 and len(holding) >= stages:
        advice.append(
            f"TP={largest} inside a domain x PP={stages} across {stages} domains "
            f"(pipeline stages cross PCIe/SYS once per micro-batch instead of every layer)."
        )
    return advice


def place_tp(machine: Machine, domains: tuple[Domain, ...], tp: int) -> Placement:
    """Disjoint groups of ``tp`` GPUs, each inside one NVLink domain; alternatives when none exist."""
    total = len(machine.gpus)
    groups: list[tuple[int, ...]] = []
    peers = nvlink_peers(machine)
    for domain in domains:
        if domain.size < tp or (tp > 1 and domain.size == 1):
            continue
        groups.extend(_carve(domain, tp, peers))
    used = {g for group in groups for g in group}
    unused = tuple(sorted(g.index for g in machine.gpus if g.index not in used))
    largest = max((d.size for d in domains), default=0)
    alternatives: list[str] = []
    if tp > total:
        alternatives.append(f"TP={tp} needs {tp} GPUs; this machine has {total}: span nodes or use fewer GPUs.")
    broken = [d for d in domains if d.size >= tp > 1 and not d.complete_as_shown and d.build == "nvswitch"]
    unseen = [d for d in domains if d.size >= tp > 1 and d.unknown_pairs]
    # a GPU left out of a domain whose pairs are not all described may be left out only for want of a description
    undescribed = {g for d in domains if d.unknown_pairs for g in d.gpus}
    if not groups and unseen and not broken:
        alternatives.append(
            f"NVLink domain {format_gpus(unseen[0].gpus)}: the source does not describe {unseen[0].unknown_pairs} of "
            f"its GPU pairs (a `topo -m` cut short?), so no TP={tp} group is placed over them; give the whole matrix "
            "to place one."
        )
    elif not groups and broken:
        alternatives.append(
            f"NVLink domain {format_gpus(broken[0].gpus)} has {broken[0].size} GPUs but GPU pairs in it have no "
            f"NVLink: a TP={tp} group would cross a missing link (the nvlink-degraded finding names the pairs); "
            "repair the fabric first."
        )
    elif not groups and tp <= total:
        if largest >= 2:
            alternatives.extend(_within_domains(domains, tp, largest))
        else:
            alternatives.append("No NVLink: every TP group communicates over PCIe; prefer TP=1 with replicas.")
        alternatives.append(f"TP={tp} across domains runs its all-reduce over the slowest hop (see bottleneck).")
    elif groups and unused and tp > 1:
        unplaced = [g for g in unused if g in undescribed]
        left_out = [g for g in unused if g not in undescribed]
        if left_out:
            alternatives.append(
                f"GPUs {','.join(map(str, left_out))} cannot join a TP={tp} group on NVLink; "
                "use them for a smaller replica or leave them idle."
            )
        if unplaced:
            alternatives.append(
                f"GPUs {','.join(map(str, unplaced))} are not placed: the source does not describe every link among "
                "them (a `topo -m` cut short?)."
            )
    unknown = sum(d.unknown_pairs for d in unseen)
    return Placement(tp, tuple(groups), bool(groups), unused, tuple(alternatives), unknown)


def _carve(domain: Domain, tp: int, peers: dict[int, dict[int, int]]) -> list[tuple[int, ...]]:
    """Split a domain into disjoint groups of ``tp``: fully linked groups first, in GPU order.

    Only a partial mesh (DGX-1's cube-mesh, partial by design) also groups GPUs that reach each other
    through NVLink peers; behind NVSwitches every pair is linked, so a pair that is not is a broken link
    and no group may span it.
    """
    if domain.all_pairs or tp == 1:
        return [domain.gpus[k : k + tp] for k in range(0, domain.size - tp + 1, tp)]
    if domain.build != "partial-mesh" or domain.size > EXACT_CLIQUE_LIMIT:
        return _linked_groups(peers, domain.gpus, tp)
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(domain.gpus)
    graph.add_edges_from((i, j) for i in domain.gpus for j in peers[i] if i < j)
    groups: list[tuple[int, ...]] = []
    free = set(domain.gpus)
    for clique in sorted(nx.enumerate_all_cliques(graph), key=lambda c: (-len(c), sorted(c))):
        if len(clique) >= tp:
            for combo in itertools.combinations(sorted(clique), tp):
                if free.issuperset(combo):
                    groups.append(combo)
                    free -= set(combo)
    # Whatever is left stays on NVLink as long as it is connected through NVLink inside the domain.
    rest = sorted(free)
    for k in range(0, len(rest) - tp + 1, tp):
        chunk = tuple(rest[k : k + tp])
        if nx.is_connected(graph.subgraph(chunk)):
            groups.append(chunk)
    return sorted(groups)


def _linked_groups(peers: dict[int, dict[int, int]], gpus: tuple[int, ...], tp: int) -> list[tuple[int, ...]]:
    """Disjoint groups of ``tp`` GPUs whose every pair is linked, taken greedily in GPU order.

    A switched domain with a few broken pairs is nearly complete: enumerating its cliques would never end.
    """
    groups: list[tuple[int, ...]] = []
    free = list(gpus)
    while len(free) >= tp:
        group: list[int] = []
        for gpu in free:
            if all(member in peers[gpu] for member in group):
                group.append(gpu)
                if len(group) == tp:
                    break
        if len(group) == tp:
            groups.append(tuple(group))
            free = [g for g in free if g not in group]
        else:
            free = free[1:]  # no full group starts here: leave this GPU out
    return groups
