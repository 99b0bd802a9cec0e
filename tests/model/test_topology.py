"""NVLink domains, ring bottlenecks and TP placements on machines whose answer a human can check."""

from __future__ import annotations

from builders import cube_mesh, machine, nvswitch8, pairs, pcie, split_4_4

from topoaudit.model.machine import PathLevel
from topoaudit.model.topology import bottleneck, nvlink_domains, place_tp


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
