"""An NCCL_DEBUG=INFO log: the transports NCCL chose, its rings and graphs, NVLS, GPUDirect RDMA and its warnings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    if "NCCL" not in text[:200_000]:  # cheap test before the parser loads
        return False
    from topoaudit.parse.nccl_log import looks_like_nccl_log

    return looks_like_nccl_log(text)


def load(text: str, name: str) -> Facts:
    """The ranks' GPUs on the first host become the machine; the log becomes the report's NCCL view.

    Its lines are those that name NCCL: a ``topo -m`` pasted beside the log is read from the others.
    """
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.nccl_log import machine_from_nccl_view, parse_nccl_log

    view = parse_nccl_log(text, name)
    version = view.version if isinstance(view.version, str) else "version not logged"
    hosts = f", {len(view.hosts)} host(s)" if view.hosts else ""
    return Facts(
        machine_from_nccl_view(view),
        SourceInfo(
            "nccl-log", name, description=f"NCCL_DEBUG=INFO log (NCCL {version}): {len(view.ranks)} rank(s){hosts}"
        ),
        nccl=view,
        used=frozenset(n for n, line in enumerate(text.splitlines(), 1) if "NCCL" in line),
        what="NCCL_DEBUG=INFO log",
    )


READER = Reader(
    "nccl-log",
    100,
    "an NCCL_DEBUG=INFO log",
    sniff,
    load,
    beside=("topo-matrix",),
    joins=("host.hostname",),  # the matrix names no host; the log's first host is the one it was captured on
)
