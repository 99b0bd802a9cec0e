"""Which sets of ranks to sweep: ``all``, each NVLink ``domain``, ``cross`` (one rank of each domain),
every ``pair``, ``tp=N`` (the placements the core computes), ``nodepairs`` (pairs of nodes in rounds, see
``bench.node_pairs``). Pure; no torch.

Ranks are mapped to GPUs of the machine model by PCI bus id when both sides know it (CUDA and NVML
indices can differ), else by local device index. Without a machine model, the ranks of one
host count as one domain on CPU (gloo) and as unknown on GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.bench.node_pairs import NODE_PAIR_KIND, node_pair_sets
from topoaudit.model.bench import RankInfo
from topoaudit.model.machine import Machine
from topoaudit.model.topology import nvlink_domains, place_tp
from topoaudit.units import normalize_bus_id

GROUP_KINDS = ("all", "domains", "cross", "pairs", "nodepairs")
NODE_PAIR_ITEMS = {"nodepairs": "round-robin", "nodepairs=ref": "reference"}


@dataclass(frozen=True)
class GroupSpec:
    name: str
    kind: str  # "all" | "domain" | "cross" | "pair" | "tp"
    ranks: tuple[int, ...]
    sweep: bool  # the whole size list; False: one size (pairs)
    round_no: int = 0  # > 0: measured at once with the other groups of this round (disjoint ranks)


@dataclass(frozen=True)
class Plan:
    groups: tuple[GroupSpec, ...]
    domains: tuple[tuple[int, ...], ...]  # in ranks; empty when unknown
    domain_basis: str  # "nvlink" | "host" | "" (unknown)
    notes: tuple[str, ...]


def parse_groups(text: str) -> tuple[str, ...]:
    """``"all,domains,tp=4"`` -> ("all", "domains", "tp=4"); ValueError naming a bad item."""
    items = tuple(x.strip().lower() for x in text.split(",") if x.strip())
    if not items:
        raise ValueError("--groups is empty; use all, domains, cross, pairs, nodepairs[=ref] or tp=N")
    for item in items:
        if item in GROUP_KINDS or item in NODE_PAIR_ITEMS or item in ("domain", "pair"):
            continue
        if item.startswith("tp=") and item[3:].isdecimal() and int(item[3:]) >= 2:
            continue
        raise ValueError(f"unknown group {item!r}: use all, domains, cross, pairs, nodepairs[=ref] or tp=N (N >= 2)")
    return tuple({"domain": "domains", "pair": "pairs"}.get(i, i) for i in items)


def map_gpus(ranks: tuple[RankInfo, ...], machine: Machine | None) -> dict[int, int]:
    """rank -> GPU index in ``machine`` (ranks whose GPU cannot be joined are left out)."""
    if machine is None:
        return {}
    by_bus = {normalize_bus_id(g.pci_bus_id): g.index for g in machine.gpus if isinstance(g.pci_bus_id, str)}
    indices = {g.index for g in machine.gpus}
    out: dict[int, int] = {}
    for r in ranks:
        if r.device == "cpu":
            continue
        if isinstance(r.pci_bus_id, str) and by_bus:
            gpu = by_bus.get(normalize_bus_id(r.pci_bus_id))
            if gpu is not None:
                out[r.rank] = gpu
            continue
        if r.local_rank in indices:
            out[r.rank] = r.local_rank
    return out


def rank_domains(
    ranks: tuple[RankInfo, ...], machine: Machine | None, gpu_of: dict[int, int]
) -> tuple[tuple[tuple[int, ...], ...], str]:
    """The domains in ranks: NVLink domains on every host (the machine model is taken as every host's shape),
    or one domain per host on CPU; ``((), "")`` when unknown."""
    hosts: dict[str, list[RankInfo]] = {}
    for r in ranks:
        hosts.setdefault(r.host, []).append(r)
    if all(r.device == "cpu" for r in ranks):
        return tuple(tuple(sorted(x.rank for x in rs)) for rs in hosts.values()), "host"
    if machine is None or len(gpu_of) != len(ranks):
        return (), ""
    domain_of = {g: d.id for d in nvlink_domains(machine) for g in d.gpus}
    out: list[tuple[int, ...]] = []
    for rs in hosts.values():
        by_domain: dict[int, list[int]] = {}
        for r in rs:
            by_domain.setdefault(domain_of.get(gpu_of[r.rank], -1 - r.rank), []).append(r.rank)
        out.extend(tuple(sorted(v)) for v in by_domain.values())
    return tuple(sorted(out)), "nvlink"


def make_plan(requested: tuple[str, ...], ranks: tuple[RankInfo, ...], machine: Machine | None = None) -> Plan:
    """The groups to sweep, in a fixed order every rank agrees on."""
    world = tuple(sorted(r.rank for r in ranks))
    gpu_of = map_gpus(ranks, machine)
    domains, basis = rank_domains(ranks, machine, gpu_of)
    notes: list[str] = []
    groups: list[GroupSpec] = []

    def add(spec: GroupSpec) -> None:
        if len(spec.ranks) >= 1 and spec.ranks not in [g.ranks for g in groups if g.kind == spec.kind]:
            groups.append(spec)

    for item in requested:
        if item == "all":
            add(GroupSpec("all", "all", world, True))
        elif item == "domains":
            if not domains:
                notes.append("domains: skipped, the NVLink domains of these GPUs are not known (no machine model)")
            elif len(domains) == 1 and domains[0] == world and "all" in requested:
                notes.append("domains: one domain holds every rank; it is the 'all' group")
            else:
                for k, d in enumerate(domains):
                    if len(d) >= 2:
                        add(GroupSpec(f"domain{k}", "domain", d, True))
        elif item == "cross":
            if len(domains) < 2:
                notes.append("cross: skipped, fewer than two domains to cross")
            else:
                add(GroupSpec("cross", "cross", tuple(sorted(d[0] for d in domains)), True))
        elif item == "pairs":
            if len(world) < 2:
                notes.append("pairs: skipped, a single rank has no pairs")
            for i, a in enumerate(world):
                for b in world[i + 1 :]:
                    add(GroupSpec(f"pair {a}-{b}", "pair", (a, b), False))
        elif item in NODE_PAIR_ITEMS:
            node_sets, node_notes = node_pair_sets(ranks, NODE_PAIR_ITEMS[item])
            groups.extend(GroupSpec(s.name, NODE_PAIR_KIND, s.ranks, False, s.round_no) for s in node_sets)
            notes.extend(node_notes)
        elif item.startswith("tp="):
            tp = int(item[3:])
            groups.extend(_tp_groups(tp, world, machine, gpu_of, notes))
    return Plan(tuple(groups), domains, basis, tuple(notes))


def _tp_groups(
    tp: int, world: tuple[int, ...], machine: Machine | None, gpu_of: dict[int, int], notes: list[str]
) -> list[GroupSpec]:
    if tp > len(world):
        notes.append(f"tp={tp}: skipped, only {len(world)} ranks")
        return []
    if machine is not None and len(gpu_of) == len(world) and len(set(gpu_of.values())) == len(world):
        rank_of = {g: r for r, g in gpu_of.items()}
        placement = place_tp(machine, nvlink_domains(machine), tp)
        specs = [
            GroupSpec(f"tp{tp} #{k}", "tp", tuple(sorted(rank_of[g] for g in grp)), True)
            for k, grp in enumerate(placement.groups)
            if all(g in rank_of for g in grp)
        ]
        if specs:
            return specs
        notes.append(f"tp={tp}: no placement stays inside an NVLink domain; measuring ranks 0-{tp - 1} across")
        return [GroupSpec(f"tp{tp} (spans domains)", "tp", world[:tp], True)]
    return [
        GroupSpec(f"tp{tp} #{k}", "tp", world[i : i + tp], True)
        for k, i in enumerate(range(0, len(world) - tp + 1, tp))
    ]
