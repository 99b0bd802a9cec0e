"""NCCL's XML topology or graph dump (``NCCL_TOPO_DUMP_FILE``, ``NCCL_GRAPH_DUMP_FILE``), or a provider's topology
file: the machine NCCL sees, and what only NCCL counts (its NVLinks, a VM's flattened view)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    if "<system" not in text[:65536] and "<graphs" not in text[:65536]:  # cheap test before the parser loads
        return False
    from topoaudit.parse.nccl_xml import looks_like_nccl_xml

    return looks_like_nccl_xml(text)


def load(text: str, name: str) -> Facts:
    """NCCL's topology becomes the machine (GPUs, NICs, paths, NVLink counts); the rest, the report's captures."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.nccl_xml import parse_nccl_xml

    parsed = parse_nccl_xml(text, name)
    topology = parsed.topology
    what = "NCCL_GRAPH_DUMP_FILE" if topology.kind == "graph" else f"{topology.flavour.upper()} topology"
    description = f"{what} XML (version {topology.version or 'not given'}): {len(parsed.machine.gpus)} GPU(s)"
    return Facts(
        parsed.machine,
        SourceInfo("nccl-xml", name, description=description),
        parsed.input_issues(),  # damage read around is recovered: the audit is incomplete
        captures=Captures(nccl_topology=topology),
        what=f"{what} XML",
    )


READER = Reader("nccl-xml", 30, "an NCCL topology or graph dump (XML)", sniff, load, capture=True)
