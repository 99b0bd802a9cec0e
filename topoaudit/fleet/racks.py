"""NVL racks: the NVLink domain spans trays, so the fleet assembles it from the trays' fabric records.

Trays of one rack share a cluster UUID and a clique id; Blackwell trays of every rack share one sentinel
clique id, so the pair (cluster UUID, clique id) is the key, never the clique id alone. A tray whose
fabric state, status or health differs from most of its rack is named; so is a fabric-attached tray that
names no cluster at all (an all-zero UUID: its registration failed) -- but only where its NVLink domain
spans nodes. An HGX/DGX baseboard (NVSwitches on the node) reports an all-zero cluster UUID and clique 0
when healthy: its domain lies inside the node, and no rack is assembled from it.

Whether a tray's domain spans nodes is decided from evidence the report shows, each stated in words:

* the catalog: the model is a tray of a rack (GB200/GB300 NVL: domain of 72 GPUs, 4 per tray), or it sits
  on a baseboard whose domain is the node (H100/H200 SXM: 8 GPUs on NVSwitch);
* the links: NVLinks ending on an NVSwitch the node cannot see (NVML's ffffffff:ff:ff.0, a switch tray),
  or on NVSwitches at PCI addresses of the node (HGX: on the baseboard);
* the fleet: other trays of the same model register a cluster (for a baseboard model, most of its trays),
  or other trays register this tray's own cluster.

Any evidence of a rack makes it a rack tray; otherwise the domain is the node's own (a lone HGX node that
registered a cluster of its own is not a rack of 8 GPUs short of 72).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from topoaudit.fleet.summary import TrayFabric
from topoaudit.model.fleet import FabricScope, Rack, Tray


@dataclass(frozen=True)
class _Scope:
    spans_nodes: bool
    evidence: tuple[str, ...]  # the evidence for the side decided


def nvlink_scope(fabric: TrayFabric, registered: Counter[str], trays: Counter[str], sharing: int = 0) -> _Scope:
    """Does this tray's NVLink domain span nodes?

    ``registered`` and ``trays``: per model, the fleet's trays that name a cluster and all its fabric-attached
    ones; ``sharing``: for a tray that names a cluster, how many other trays name the same (cluster, clique).
    The catalog and the links decide first; the fleet's registrations decide for a model the catalog does
    not place, and for a baseboard model only where most of its trays register (an NVLink Switch system),
    so one odd registration among HGX nodes turns no healthy node into a tray in no rack.
    """
    from topoaudit.catalog import find_gpu

    rack: list[str] = []
    node: list[str] = []
    spec = find_gpu(fabric.model) if fabric.model else None
    baseboard = spec is not None and spec.domain_size <= spec.node_gpus
    if spec is not None and not baseboard:
        rack.append(
            f"the catalog lists {spec.name} as a tray of {spec.node_gpus} GPUs in a {spec.domain_size}-GPU NVLink rack"
        )
    elif spec is not None:
        where = "NVSwitch baseboard" if spec.build == "nvswitch" else "node"
        node.append(f"the catalog lists {spec.name} with its NVLink domain on its {spec.node_gpus}-GPU {where}")
    if fabric.off_node_switch_links:
        rack.append(
            f"{fabric.off_node_switch_links} NVLinks end on NVSwitches outside the node (PCI address ffffffff:ff:ff.0)"
        )
    elif fabric.switch_links:
        node.append("its NVLinks end on NVSwitches at PCI addresses of the node")
    model = fabric.model or "this model"
    if fabric.cluster_uuid:
        if sharing:
            rack.append(
                f"{sharing} other tray{'s' if sharing != 1 else ''} register{'s' if sharing == 1 else ''} its cluster"
            )
        else:
            node.append("no other node of this fleet registers its cluster")
    else:
        others = registered[fabric.model]
        most = others * 2 >= trays[fabric.model]
        if others and (most or not baseboard):
            trays_of = f"{others} other tray{'s' if others != 1 else ''}"
            rack.append(f"{trays_of} of {model} in this fleet register{'s' if others == 1 else ''} a cluster")
        elif others:
            verb = "registers" if others == 1 else "register"
            node.append(f"only {others} of {trays[fabric.model]} nodes of {model} in this fleet {verb} a cluster")
        else:
            node.append(f"no other node of {model} in this fleet registers a cluster")
    return _Scope(True, tuple(rack)) if rack else _Scope(False, tuple(node))


def assemble_racks(
    trays: Sequence[tuple[str, TrayFabric]], rack_gpus: int
) -> tuple[list[Rack], list[Tray], list[FabricScope]]:
    """Racks keyed by (cluster UUID, clique id); the rack trays that fit no rack; the nodes whose NVLink
    domain lies inside the node (per GPU model, with the evidence)."""
    registered = Counter(fabric.model for _, fabric in trays if fabric.cluster_uuid)
    per_model = Counter(fabric.model for _, fabric in trays)
    per_key = Counter((f.cluster_uuid, f.clique_id) for _, f in trays if f.cluster_uuid and f.clique_id >= 0)
    by_key: dict[tuple[str, int], list[Tray]] = {}
    unassigned: list[Tray] = []
    in_node: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for host, fabric in trays:
        tray = Tray(host=host, gpus=fabric.gpus, state=fabric.state, status=fabric.status, health=fabric.health)
        key = (fabric.cluster_uuid, fabric.clique_id)
        named = bool(fabric.cluster_uuid) and fabric.clique_id >= 0
        scope = nvlink_scope(fabric, registered, per_model, per_key[key] - 1 if named else 0)
        if named and scope.spans_nodes:
            by_key.setdefault(key, []).append(tray)
        elif scope.spans_nodes:
            unassigned.append(Tray(tray.host, tray.gpus, tray.state, tray.status, tray.health, scope.evidence))
        else:
            in_node.setdefault((fabric.model, scope.evidence), []).append(host)
    racks = []
    for (cluster, clique), members in sorted(by_key.items()):
        usual = Counter((t.state, t.status, t.health) for t in members).most_common(1)[0][0]
        odd = tuple(t.host for t in members if (t.state, t.status, t.health) != usual)
        racks.append(
            Rack(
                cluster_uuid=cluster,
                clique_id=clique,
                gpus=sum(t.gpus for t in members),
                expected_gpus=rack_gpus,
                trays=tuple(sorted(members, key=lambda t: t.host)),
                odd_trays=odd,
            )
        )
    scopes = [
        FabricScope(model or "unknown model", tuple(sorted(hosts)), evidence)
        for (model, evidence), hosts in sorted(in_node.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]
    return racks, unassigned, scopes


def usual_fabric(rack: Rack) -> tuple[str, str, str]:
    """The (state, status, health) most trays of the rack report."""
    return Counter((t.state, t.status, t.health) for t in rack.trays).most_common(1)[0][0]
