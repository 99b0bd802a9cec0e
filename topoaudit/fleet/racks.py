"""NVL racks: the NVLink domain spans trays, so the fleet assembles it from the trays' fabric records.

Trays of one rack share a cluster UUID and a clique id; Blackwell trays of every rack share one sentinel
clique id, so the pair (cluster UUID, clique id) is the key, never the clique id alone. A tray whose
fabric state, status or health differs from most of its rack is named; so is a fabric-attached tray that
names no cluster at all (an all-zero UUID: its registration failed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from topoaudit.fleet.summary import TrayFabric
from topoaudit.model.fleet import Rack, Tray

RACK_SIZES = (72, 36)


def assemble_racks(trays: Sequence[tuple[str, TrayFabric]], rack_gpus: int) -> tuple[list[Rack], list[Tray]]:
    """Racks keyed by (cluster UUID, clique id), and the fabric-attached trays that fit no rack."""
    by_key: dict[tuple[str, int], list[Tray]] = {}
    unassigned: list[Tray] = []
    for host, fabric in trays:
        tray = Tray(host=host, gpus=fabric.gpus, state=fabric.state, status=fabric.status, health=fabric.health)
        if fabric.cluster_uuid and fabric.clique_id >= 0:
            by_key.setdefault((fabric.cluster_uuid, fabric.clique_id), []).append(tray)
        else:
            unassigned.append(tray)
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
    return racks, unassigned


def usual_fabric(rack: Rack) -> tuple[str, str, str]:
    """The (state, status, health) most trays of the rack report."""
    return Counter((t.state, t.status, t.health) for t in rack.trays).most_common(1)[0][0]
