"""An NCCL_DEBUG=INFO log: the transports NCCL chose, its rings and graphs, NVLS, GPUDirect RDMA and its warnings.

An excerpt is read as far as it goes: a few channel lines, NCCL's messages with their prefix cut off, a log cut
mid-line. What the paste covers is said (``the paste shows 3 of 8 ranks``), and a cut last line is named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.report import InputIssue

CHEAP_WORDS = ("NCCL", "NET/", " via ", "set by environment", "GPU Direct", "Channel ", "Trees ", "Ring ")
"""Words of NCCL's own lines: a paste without any of them is not read by the parser (a quoted message whose
``NCCL INFO`` was cut off still holds one)."""


def sniff(text: str) -> bool:
    head = text[:200_000]
    if not any(word in head for word in CHEAP_WORDS):  # cheap test before the parser loads
        return False
    from topoaudit.parse.nccl_log import looks_like_nccl_log

    return looks_like_nccl_log(text)


def load(text: str, name: str) -> Facts:
    """The ranks' GPUs on the host that holds most of them become the machine; the log becomes the NCCL view.

    Its lines are those that name NCCL: a ``topo -m`` pasted beside the log is read from the others.
    """
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.nccl_log import machine_from_nccl_view, parse_nccl_log

    view = parse_nccl_log(text, name)
    version = view.version if isinstance(view.version, str) else "version not logged"
    hosts = f", {len(view.hosts)} host(s)" if view.hosts else ""
    covered = view.coverage()
    return Facts(
        machine_from_nccl_view(view),
        SourceInfo(
            "nccl-log",
            name,
            description=f"NCCL_DEBUG=INFO log (NCCL {version}): {len(view.ranks)} rank(s){hosts}"
            + (f"; {covered}" if covered else ""),
        ),
        excerpt_issues(view, text),
        nccl=view,
        used=frozenset(n for n, line in enumerate(text.splitlines(), 1) if "NCCL" in line),
        what="NCCL_DEBUG=INFO log",
    )


def excerpt_issues(view: NcclView, text: str) -> tuple[InputIssue, ...]:
    """What the paste cannot show: the ranks it leaves out, and a last line it ends inside.

    A line cut inside NCCL's prefix or marker is certain damage; a paste that only lacks its last line break
    (a clipboard paste) may end inside its last line, and says so without calling the input damaged.
    """
    from topoaudit.model.nccl import LogLine
    from topoaudit.model.report import InputIssue

    issues = []
    covered = view.coverage()
    if covered:
        first = min((r.rank for r in view.ranks), default=0)
        line = next((t.first.line for t in view.transports if first in (t.src_rank, t.dst_rank)), 0)
        issues.append(InputIssue(line, "excerpt", f"{covered}; what these lines show is judged, the rest is not known"))
    if isinstance(view.truncated, LogLine):
        cut = view.truncated
        if text.endswith(("\n", "\r")):
            issues.append(
                InputIssue(
                    cut.line,
                    "recovered",
                    f"the log is truncated: line {cut.line} is cut inside NCCL's prefix ({cut.text[-60:]!r}) and "
                    "says nothing",
                )
            )
        else:
            issues.append(
                InputIssue(
                    cut.line,
                    "excerpt",
                    f"the log may be truncated: it ends without a line break, inside line {cut.line} "
                    f"({cut.text[-60:]!r}), which is read as far as it goes",
                )
            )
    return tuple(issues)


READER = Reader(
    "nccl-log",
    100,
    "an NCCL_DEBUG=INFO log",
    sniff,
    load,
    beside=("topo-matrix",),
    joins=("host.hostname",),  # the matrix names no host; the log's machine host is the one it was captured on
)
