"""NCCL RAS status (``ncclras``, text or ``-f json``): communicators with missing ranks or rank errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts

# The text form's tables, its JSON, monitor mode (text and JSON events): cheap tests before the parser loads.
_SIGNS = ("Group     Comms", "Job summary", '"missing_ranks', "Errors\n======", "RAS Monitor Mode", "] PEER_",
          '"event": "PEER_')  # fmt: skip


def sniff(text: str) -> bool:
    head = text[:65536]
    if not any(sign in head for sign in _SIGNS):  # cheap test first
        return False
    from topoaudit.parse.nccl_ras import looks_like_nccl_ras

    return looks_like_nccl_ras(text)


def load(text: str, name: str) -> Facts:
    """The first host's GPUs become the machine; the communicators, in the form the report keeps, are judged."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.nccl_ras import machine_from_ras, parse_nccl_ras, ras_to_dict

    dump = parse_nccl_ras(text, name)
    missing = sum(c.missing_count for c in dump.communicators)
    description = (
        f"NCCL RAS {dump.format} output: {len(dump.communicators)} communicator(s), {missing} rank(s) missing, "
        f"{len(dump.hosts)} host(s) named"
    )
    return Facts(
        machine_from_ras(dump),
        SourceInfo("nccl-ras", name, description=description),
        ras=ras_to_dict(dump),
        what="NCCL RAS output",
    )


READER = Reader("nccl-ras", 80, "NCCL RAS output", sniff, load)
