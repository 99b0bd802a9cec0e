"""Health checkers' and the kernel's failure lines: Azure NHC, DCGM (``dcgmi health``/``diag``), the NVIDIA
driver's Xid, "fallen off the bus" and NVLink training lines (``dmesg``, ``journalctl -k``), and a Kubernetes node's
GPU capacity against what its device plugin offers (``kubectl describe node``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.parse.prefixes import Line

# "raining": the driver's NVLink training lines
_SIGNS = (
    "Xid",
    "NVRM",
    "nhc",
    "check_",
    "DCGM",
    "dcgm",
    "| Fail",
    "IO_PAGE_FAULT",
    "DMAR:",
    "raining",
    "nvidia.com/gpu",
)


def sniff(text: str) -> bool:
    head = text[:200_000]
    if not any(sign in head for sign in _SIGNS):  # cheap test first
        return False
    from topoaudit.parse.health_lines import read_health_lines

    return bool(read_health_lines(head))


def load(text: str, name: str) -> Facts:
    from topoaudit.parse.prefixes import strip_prefixes

    return load_lines(strip_prefixes(text), name)


def load_lines(lines: Sequence[Line], name: str) -> Facts:
    """Each failure line as an event (the check or Xid, the GPU or bus id it names); no machine: the lines name
    GPUs, not the box."""
    from topoaudit.errors import InputError
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.health_lines import read_health_lines

    events = read_health_lines(lines)
    if not events:
        raise InputError(f"{name}: no NHC, DCGM or kernel failure line in the input")
    sources = sorted({e.source for e in events})
    return Facts(
        Machine(source="health-lines", gpus=()),
        SourceInfo("health-lines", name, description=f"{len(events)} {'/'.join(sources)} line(s)"),
        health=events,
        used=frozenset(e.line for e in events),
        what="health-check and kernel lines",
    )


READER = Reader(
    "health-lines",
    85,
    "NHC, DCGM or kernel-log (Xid) lines, or a Kubernetes node's GPU capacity (`kubectl describe node`)",
    sniff,
    load,
    parts=("nhc", "dcgm", "kernel-log", "kubernetes-node"),
    load_lines=load_lines,
)
