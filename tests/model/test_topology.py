"""NVLink domains, ring bottlenecks and TP placements on machines whose answer a human can check."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable
from pathlib import Path

import networkx as nx
import pytest
from builders import cube_mesh, machine, nvswitch8, pairs, pcie, split_4_4
from hypothesis import given, settings
from hypothesis import strategies as st

from topoaudit import examples
from topoaudit.model import topology
from topoaudit.model.machine import Gpu, Link, Machine, NvLinkPort, PathLevel, level_from_code
from topoaudit.model.report import SourceInfo
from topoaudit.model.topology import (
    EXACT_RING_LIMIT,
    bottleneck,
    gpu_pair_links,
    nvlink_domains,
    on_nvlink,
    place_tp,
)
from topoaudit.pipeline import analyze
from topoaudit.readers import load_path


def test_nvswitch_box_is_one_domain_of_eight() -> None:
    m = machine(8, nvswitch8)
    (domain,) = nvlink_domains(m)
    assert domain.gpus == tuple(range(8))
    assert domain.all_pairs and domain.build == "nvswitch"
    assert (domain.min_links, domain.max_links) == (18, 18)


def test_split_box_has_two_mesh_domains_and_crosses_sys() -> None:
    m = machine(8, split_4_4)
    domains = nvlink_domains(m)
    assert [d.gpus for d in domains] == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert all(d.build == "mesh" and d.all_pairs for d in domains)
    whole = bottleneck(m, range(8))
    assert whole.level == PathLevel.SYS and whole.exact
    assert bottleneck(m, (0, 1, 2, 3)).level == PathLevel.NVLINK


def test_bridged_pairs_are_four_domains() -> None:
    domains = nvlink_domains(machine(8, pairs))
    assert [d.gpus for d in domains] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert {d.build for d in domains} == {"bridged-pair"}


def test_cube_mesh_is_one_partial_domain_with_an_nv2_ring() -> None:
    m = machine(8, cube_mesh)
    (domain,) = nvlink_domains(m)
    assert domain.build == "partial-mesh" and not domain.all_pairs
    ring = bottleneck(m, range(8))
    # DGX-1's hybrid cube-mesh has a Hamiltonian ring on double links only.
    assert ring.level == PathLevel.NVLINK and ring.nvlinks == 2
    assert sorted(ring.ring) == list(range(8))
    hops = list(zip(ring.ring, ring.ring[1:] + ring.ring[:1], strict=True))
    assert all(cube_mesh(min(h), max(h)) == "NV2" for h in hops)


def test_pcie_only_box_is_singletons_and_ring_crosses_sockets() -> None:
    m = machine(8, pcie)
    assert [d.size for d in nvlink_domains(m)] == [1] * 8
    assert bottleneck(m, range(8)).level == PathLevel.SYS
    assert bottleneck(m, (0, 1, 2, 3)).level == PathLevel.PHB


def test_placements_on_split_box() -> None:
    m = machine(8, split_4_4)
    domains = nvlink_domains(m)
    four = place_tp(m, domains, 4)
    assert four.fits and four.groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert four.cuda_visible_devices == ("CUDA_VISIBLE_DEVICES=0,1,2,3", "CUDA_VISIBLE_DEVICES=4,5,6,7")
    eight = place_tp(m, domains, 8)
    assert not eight.fits and eight.groups == ()
    assert any("PP=2" in a for a in eight.alternatives)


def test_placement_in_cube_mesh_uses_fully_linked_quads() -> None:
    m = machine(8, cube_mesh)
    p = place_tp(m, nvlink_domains(m), 4)
    assert p.groups == ((0, 1, 2, 3), (4, 5, 6, 7))


def test_tp_larger_than_machine() -> None:
    m = machine(4, nvswitch8)
    p = place_tp(m, nvlink_domains(m), 8)
    assert not p.fits and "has 4" in p.alternatives[0]


def test_large_nvswitch_domain_uses_spanning_tree_bound() -> None:
    m = machine(72, lambda i, j: "NV18")
    (domain,) = nvlink_domains(m)
    assert domain.size == 72 and domain.build == "nvswitch"
    b = bottleneck(m, range(72))
    assert b.level == PathLevel.NVLINK and not b.exact


# --- Large boxes: the class-by-class ring bound, domains and placements answer as the plain algorithms do ---

TOPO = Path(__file__).parents[1] / "fixtures" / "topo"
EXAMPLES = Path(examples.__file__).parent
REAL = sorted(TOPO.glob("topo-*.txt")) + sorted(EXAMPLES.glob("*.txt"))
SLOWEST = (PathLevel.UNKNOWN + 1, 0)  # a pair with no link fact counts as the slowest hop


def _real(path: Path) -> Machine:
    return load_path(str(path)).machine


def _hop_key(machine: Machine, a: int, b: int) -> tuple[int, int]:
    link = gpu_pair_links(machine).get((min(a, b), max(a, b)))
    return SLOWEST if link is None else (int(link.level), -link.nvlinks)


def _kruskal_bound(machine: Machine, gpus: Iterable[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The slowest hop of networkx's minimum spanning tree over every pair: (its key, the pair it names)."""
    graph = nx.Graph()
    for i, j in itertools.combinations(sorted(set(gpus)), 2):
        level, fewer_links = _hop_key(machine, i, j)
        graph.add_edge(i, j, weight=level * 1000 + fewer_links)
    a, b = max(nx.minimum_spanning_tree(graph).edges(), key=lambda e: _hop_key(machine, *e))
    return _hop_key(machine, a, b), (min(a, b), max(a, b))


def _bound(machine: Machine, gpus: Iterable[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """What :func:`bottleneck` says for a set too large for the exact search: (hop key, the pair it names)."""
    b = bottleneck(machine, tuple(gpus))
    assert b.slowest_hop is not None and not b.exact
    return _hop_key(machine, b.slowest_hop.a, b.slowest_hop.b), (b.slowest_hop.a, b.slowest_hop.b)


def _nx_domains(machine: Machine) -> list[tuple[tuple[int, ...], bool, int, int]]:
    """NVLink domains as networkx's connected components: (GPUs, every pair linked, fewest, most links)."""
    graph = nx.Graph()
    graph.add_nodes_from(g.index for g in machine.gpus)
    for (i, j), link in gpu_pair_links(machine).items():
        if on_nvlink(link):
            graph.add_edge(i, j, nvlinks=link.nvlinks)
    out = []
    for part in sorted((tuple(sorted(c)) for c in nx.connected_components(graph)), key=lambda c: (-len(c), c)):
        sub = graph.subgraph(part)
        counts = [d["nvlinks"] for _, _, d in sub.edges(data=True)]
        n = len(part)
        out.append((part, sub.number_of_edges() == n * (n - 1) // 2, min(counts, default=0), max(counts, default=0)))
    return out


def _domains(machine: Machine) -> list[tuple[tuple[int, ...], bool, int, int]]:
    return [(d.gpus, d.all_pairs, d.min_links, d.max_links) for d in nvlink_domains(machine)]


@pytest.mark.parametrize("path", [p for p in REAL if len(_real(p).gpus) >= 3], ids=lambda p: p.stem)
def test_ring_bound_on_real_captures_names_the_spanning_tree_hop_and_never_beats_the_exact_ring(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = _real(path)
    everyone = [g.index for g in m.gpus]
    exact = bottleneck(m, everyone)
    monkeypatch.setattr(topology, "EXACT_RING_LIMIT", 2)  # every set of 3+ GPUs takes the bound
    assert _bound(m, everyone) == _kruskal_bound(m, everyone)
    for domain in nvlink_domains(m):
        if domain.size >= 3:
            assert _bound(m, domain.gpus) == _kruskal_bound(m, domain.gpus)
    if exact.exact and exact.slowest_hop is not None:
        # No ring is faster than the spanning tree's slowest hop.
        assert _bound(m, everyone)[0] <= _hop_key(m, exact.slowest_hop.a, exact.slowest_hop.b)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_domains_of_real_captures_are_the_nvlink_graphs_components(path: Path) -> None:
    m = _real(path)
    assert _domains(m) == _nx_domains(m)


CODES = ("NV18", "NV12", "NV6", "NV4", "NV2", "NV1", "NV0", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC", "??")


@st.composite
def racks(draw: st.DrawFn) -> Machine:
    """A box of 11-48 GPUs in NVLink domains, slower paths between them, some cells damaged or missing."""
    n = draw(st.integers(11, 48))
    size = draw(st.sampled_from((2, 4, 8, 9, 16, 36)))
    inside = draw(st.sampled_from(CODES[:6]))
    near, far = draw(st.lists(st.sampled_from(CODES[7:]), min_size=2, max_size=2))
    cells = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    damaged = draw(st.dictionaries(cells, st.sampled_from(CODES), max_size=8))
    missing = draw(st.sets(cells, max_size=3))

    def code(i: int, j: int) -> str | None:
        if (i, j) in missing:
            return None
        if (i, j) in damaged:
            return damaged[(i, j)]
        if i // size == j // size:
            return inside
        return near if i // (2 * size) == j // (2 * size) else far

    return _box(n, code)


def _box(n: int, code: Callable[[int, int], str | None]) -> Machine:
    gpus = tuple(Gpu(index=i) for i in range(n))
    links = []
    for i, j in itertools.combinations(range(n), 2):
        cell = code(i, j)
        if cell is not None:
            level, count = level_from_code(cell)
            links.append(Link(f"GPU{i}", f"GPU{j}", cell, level, count))
    return Machine("test", gpus, (), tuple(links))


@settings(max_examples=60, deadline=None)
@given(racks(), st.randoms(use_true_random=False))
def test_generated_boxes_give_the_plain_algorithms_answers(m: Machine, rng: random.Random) -> None:
    everyone = [g.index for g in m.gpus]
    assert _bound(m, everyone) == _kruskal_bound(m, everyone)
    subset = rng.sample(everyone, rng.randint(EXACT_RING_LIMIT + 1, len(everyone)))
    assert _bound(m, subset) == _kruskal_bound(m, subset)
    assert _domains(m) == _nx_domains(m)
    domains = nvlink_domains(m)
    linked = {(i, j) for (i, j), link in gpu_pair_links(m).items() if on_nvlink(link)}
    for tp in (2, 4, 8):
        placement = place_tp(m, domains, tp)
        used = [g for group in placement.groups for g in group]
        assert len(used) == len(set(used)) and placement.fits == bool(placement.groups)
        for group in placement.groups:
            assert len(group) == tp and any(set(group) <= set(d.gpus) for d in domains)
            if not any(d.build == "partial-mesh" and set(group) <= set(d.gpus) for d in domains):
                assert all(pair in linked for pair in itertools.combinations(group, 2))


def test_fully_linked_domains_bound_is_the_exact_ring(monkeypatch: pytest.MonkeyPatch) -> None:
    m = machine(10, lambda i, j: "NV12" if i // 5 == j // 5 else ("NODE" if i % 5 == j % 5 else "SYS"))
    exact = bottleneck(m, range(10))
    monkeypatch.setattr(topology, "EXACT_RING_LIMIT", 2)
    bound = bottleneck(m, range(10))
    assert exact.exact and not bound.exact
    assert (bound.level, bound.nvlinks) == (exact.level, exact.nvlinks) == (PathLevel.NODE, 0)
    assert bound.slowest_hop is not None and (bound.slowest_hop.a, bound.slowest_hop.b) == (0, 5)


def test_damaged_switched_racks_keep_their_domains_bound_placements_and_findings() -> None:
    """Three NVSwitch domains of 24 over SYS, one pair in each down: what a user reads off the report."""
    down = {(3, 17), (30, 31), (60, 70)}
    m = machine(72, lambda i, j: "SYS" if (i, j) in down or i // 24 != j // 24 else "NV18")
    domains = nvlink_domains(m)
    assert [(d.gpus, d.build, d.all_pairs) for d in domains] == [
        (tuple(range(k, k + 24)), "nvswitch", False) for k in (0, 24, 48)
    ]
    whole = bottleneck(m, range(72))
    assert whole.level == PathLevel.SYS and whole.slowest_hop is not None
    assert (whole.slowest_hop.a, whole.slowest_hop.b) == (0, 24)
    assert all(bottleneck(m, d.gpus).describe == "NVLink x18" for d in domains)
    eight = place_tp(m, domains, 8)
    assert eight.fits and all(not set(pair) <= set(g) for g in eight.groups for pair in down)
    report = analyze(m, source=SourceInfo("test", "racks"))
    degraded = " ".join(f.message for f in report.findings if f.code == "nvlink-degraded")
    assert all(f"GPU{a}-GPU{b} SYS" in degraded for a, b in down)


def test_gpus_on_shared_nvswitches_form_one_fully_joined_domain_without_pair_facts() -> None:
    """A probe that sees each GPU's ports land on the same switches knows every pair is joined."""

    def on_switches(index: int, switches: tuple[str, ...]) -> Gpu:
        ports = tuple(
            NvLinkPort(link=k, state="active", remote_device_type="switch", remote_pci_bus_id=bus)
            for k, bus in enumerate(switches)
        )
        return Gpu(index=index, nvlink_ports=ports)

    first, second = ("0000:01:00.0", "0000:02:00.0"), ("0000:03:00.0",)
    gpus = (*(on_switches(i, first) for i in range(4)), *(on_switches(i, second) for i in (4, 5)))
    m = Machine("nvml", gpus)
    assert [(d.gpus, d.build, d.all_pairs) for d in nvlink_domains(m)] == [
        ((0, 1, 2, 3), "nvswitch", True),
        ((4, 5), "nvswitch", True),
    ]


def test_a_gpu_whose_nvswitch_ports_are_all_inactive_is_outside_the_nvlink_domain() -> None:
    """Down ports still name the switch they were cabled to; only active ones join a GPU to the domain."""
    switches = ("0000:01:00.0", "0000:02:00.0")

    def on_switches(index: int, state: str) -> Gpu:
        ports = tuple(
            NvLinkPort(link=k, state=state, remote_device_type="switch", remote_pci_bus_id=bus)
            for k, bus in enumerate(switches)
        )
        return Gpu(index=index, nvlink_ports=ports)

    gpus = (*(on_switches(i, "active") for i in range(3)), on_switches(3, "inactive"))
    m = Machine("nvml", gpus)
    assert [(d.gpus, d.build) for d in nvlink_domains(m)] == [((0, 1, 2), "nvswitch"), ((3,), "single")]


def test_pairs_the_source_does_not_describe_leave_the_domain_whole_as_shown() -> None:
    """An NV18 box whose paste stops after GPU3's row: the pairs among GPU4-GPU7 are unknown, not missing."""
    m = machine(8, lambda i, j: "?" if i >= 4 else "NV18")
    (domain,) = nvlink_domains(m)
    assert domain.build == "nvswitch" and domain.unknown_pairs == 6
    assert not domain.all_pairs and domain.complete_as_shown
    tp4 = place_tp(m, (domain,), 4)
    assert tp4.groups == ((0, 1, 2, 3),) and tp4.unknown_pairs == 6
    assert tp4.alternatives == ("GPUs 4,5,6,7 are not placed: the source does not describe every link among them "
                                "(a `topo -m` cut short?).",)  # fmt: skip
    tp8 = place_tp(m, (domain,), 8)
    assert not tp8.fits and tp8.unknown_pairs == 6 and "does not describe 6 of its GPU pairs" in tp8.alternatives[0]


def test_a_known_missing_pair_still_breaks_a_switched_domain_beside_unknown_ones() -> None:
    m = machine(8, lambda i, j: "?" if i >= 5 else "SYS" if (i, j) == (0, 1) else "NV18")
    (domain,) = nvlink_domains(m)
    assert domain.unknown_pairs == 3 and not domain.complete_as_shown
    assert "repair the fabric first" in place_tp(m, (domain,), 8).alternatives[0]
