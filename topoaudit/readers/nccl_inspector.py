"""NCCL Inspector's JSON (the profiler plugin): busbw per collective, host and communicator."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.errors import InputError
from topoaudit.readers import Reader, noted

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    head = text[:65536]
    if "inspector_output_format_version" not in head and "nccl_bus_bandwidth_gbs{" not in head:  # cheap test first
        return False
    from topoaudit.parse.nccl_inspector import looks_like_inspector

    return looks_like_inspector(text)


def load(text: str, name: str) -> Facts:
    """Per-collective busbw, summarized per host and communicator; the GPUs of a host become the machine."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Gpu, Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.nccl_inspector import gpus_per_host, parse_inspector, summarize

    parsed = parse_inspector(text, name)
    if not parsed.records:
        why = f" (line {parsed.notes[0][0]}: {parsed.notes[0][1]})" if parsed.notes else ""
        raise InputError(f"{name}: NCCL Inspector output with no complete collective record{why}")
    summary = summarize(parsed)
    hosts = sorted({r.host for r in parsed.records})
    description = (
        f"NCCL Inspector output ({', '.join(parsed.format_versions) or 'version not given'}): "
        f"{len(parsed.records)} collective(s), {len(summary['communicators'])} communicator row(s), "
        f"{len(hosts)} host(s)"
    )
    return Facts(
        Machine(source="nccl-inspector", gpus=tuple(Gpu(index=i) for i in range(gpus_per_host(parsed)))),
        SourceInfo("nccl-inspector", name, description=description),
        noted(parsed.notes, "recovered"),  # a record skipped is a collective not judged
        inspector=summary,
        what="NCCL Inspector output",
    )


READER = Reader("nccl-inspector", 70, "NCCL Inspector JSON", sniff, load)
