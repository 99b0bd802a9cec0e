"""The providers' published NCCL topology files (tests/fixtures/captures/provider) and topoaudit's reading of one
in the shape of their ``groupings.json``: per host, the GPUs and NICs with their NUMA nodes, each GPU's nearest
NICs and the NVLink domains."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from topoaudit.model.machine import PathLevel
from topoaudit.model.topology import nvlink_domains
from topoaudit.parse.nccl_xml import ParsedNcclXml, parse_nccl_xml_hosts

PROVIDER = Path(__file__).parent / "fixtures" / "captures" / "provider"
GROUPINGS: dict[str, list[dict[str, Any]]] = json.loads((PROVIDER / "groupings.json").read_text(encoding="utf-8"))


def groupings(text: str) -> list[dict[str, Any]]:
    """topoaudit's reading of a topology file, host by host, in the shape of groupings.json."""
    return [_host(parsed) for parsed in parse_nccl_xml_hosts(text, "topo.xml")]


def _host(parsed: ParsedNcclXml) -> dict[str, Any]:
    machine = parsed.machine
    numa = {g.pci_bus_id: g.numa_nodes[0] if isinstance(g.numa_nodes, tuple) else -1 for g in machine.gpus}
    nic_numa = {
        n.pci_bus_id if isinstance(n.pci_bus_id, str) else str(n.device): n.numa_node
        if isinstance(n.numa_node, int)
        else -1
        for n in machine.nics
    }
    pairs = {str(gpu): _nearest(parsed, str(gpu), nic_numa) for gpu in numa}
    bus = {g.index: str(g.pci_bus_id) for g in machine.gpus}
    linked = any(lk.level == PathLevel.NVLINK for lk in machine.links)
    domains = sorted(sorted(bus[i] for i in d.gpus) for d in nvlink_domains(machine) if d.size > 1) if linked else []
    out: dict[str, Any] = {"host_hash": parsed.host_hash, "gpus": numa, "nics": nic_numa, "pairs": pairs}
    if not machine.gpus:
        out["placed"] = {d.bus_id: d.numa_id for d in parsed.devices}
    out["nvlink_domains"] = domains
    return out


def _nearest(parsed: ParsedNcclXml, gpu: str, nics: dict[str, int]) -> list[str]:
    """The NICs whose lowest common ancestor with the GPU in the file's tree is deepest; none across CPUs.

    Two NICs a GPU reaches over several bridges are both PXB in ``topo -m`` terms; the one under the GPU's own
    switch is its pair (OCI's A100 dumps put a second NIC under the next switch up).
    """
    above = {d.bus_id: d.parent for d in parsed.devices}
    numa = {d.bus_id: d.numa_id for d in parsed.devices}

    def chain(bus: str) -> list[str]:
        path, node = [], bus
        while node in above:
            path.append(node)
            node = above[node]
        return [f"cpu{numa.get(bus, nics.get(bus))}", *reversed(path)]

    mine, best, found = chain(gpu), 0, []
    for nic in nics:
        theirs = chain(nic)
        shared = [a == b for a, b in zip(mine, theirs, strict=False)]
        depth = shared.index(False) if False in shared else len(shared)
        if depth > best:
            best, found = depth, [nic]
        elif depth == best and depth:
            found.append(nic)
    return sorted(found)
