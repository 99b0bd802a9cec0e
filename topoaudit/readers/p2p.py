"""`nvidia-smi topo -p2p`, CUDA's p2pBandwidthLatencyTest or a copy benchmark's GB/s matrix: peer-to-peer status per
GPU pair, and measured copies."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from topoaudit.parse import tensorflow_log
from topoaudit.readers import Reader, noted

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


_LATENCY_HEADER = re.compile(r"^[ \t]*GPU(?:[ \t]+\d{1,6}){2,}[ \t]*$", re.MULTILINE)
"""p2pBandwidthLatencyTest's latency matrix header ("   GPU     0      1"), which a paste may keep without its title:
the parser's own pattern, kept here so that the sniff of a `topo -m` matrix imports no P2P parser."""


def sniff(text: str) -> bool:
    head = text[:200_000]
    marks = ("P2P", " OK", "NS", "Matrix (us)", "D\\D", "Access Peer", "Host/Device Bandwidth", *tensorflow_log.MARKS)
    if not any(mark in head for mark in marks) and not _LATENCY_HEADER.search(head):  # cheap test first
        from topoaudit.parse.bare_matrix import holds_bare_matrix, holds_titled_matrix

        return holds_bare_matrix(head) or holds_titled_matrix(head)
    from topoaudit.parse.p2p_matrix import looks_like_p2p

    return looks_like_p2p(text)


def load(text: str, name: str) -> Facts:
    """P2P statuses as the probe records them; the measured matrices go to the report's captures."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.p2p_matrix import parse_p2p

    parsed = parse_p2p(text, name)
    description = f"{parsed.tool} output: {len(parsed.gpus)} GPU(s), {len(parsed.statuses)} pair(s)"
    return Facts(
        Machine(source="p2p-capture", gpus=parsed.gpus, p2p=parsed.statuses),
        SourceInfo("p2p-capture", name, description=description),
        (*noted(parsed.notes), *noted(parsed.damaged, "recovered")),
        captures=Captures(bandwidth=parsed.matrices, latency=parsed.latency, copy_failures=parsed.stopped),
        used=parsed.used_lines,
        what=f"`{parsed.tool}`",
    )


READER = Reader(
    "p2p-capture",
    50,
    "`nvidia-smi topo -p2p` output",
    sniff,
    load,
    beside=("topo-matrix",),
    joins=("p2p",),
    capture=True,
    parts=("p2p-matrix",),
)
