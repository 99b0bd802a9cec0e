"""nvbandwidth output: copy bandwidth measured between GPU pairs and the host, one matrix per test."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader, noted

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    head = text[:200_000]
    if "nvbandwidth" not in head and "(row)" not in head:  # cheap test first
        return False
    from topoaudit.parse.nvbandwidth import looks_like_nvbandwidth

    return looks_like_nvbandwidth(text)


def load(text: str, name: str) -> Facts:
    """The GPUs the runs measured; their matrices go to the report's captures, judged pair by pair."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.nvbandwidth import parse_nvbandwidth

    parsed = parse_nvbandwidth(text, name)
    version = parsed.version or "version not printed"
    description = f"nvbandwidth output ({version}): {len(parsed.matrices)} matrix(es), {len(parsed.gpus)} GPU(s)"
    return Facts(
        Machine(source="nvbandwidth", gpus=parsed.gpus),
        SourceInfo("nvbandwidth", name, description=description),
        noted(parsed.notes),
        captures=Captures(bandwidth=parsed.matrices),
        used=parsed.used_lines,
        what="nvbandwidth output",
    )


READER = Reader(
    "nvbandwidth",
    60,
    "nvbandwidth output",
    sniff,
    load,
    # an nccl-tests run of the same box is judged as a sweep and against the copies; `topo -m` gives the links
    beside=("nccl-tests", "topo-matrix"),
    joins=("gpu.name",),
    capture=True,
)
