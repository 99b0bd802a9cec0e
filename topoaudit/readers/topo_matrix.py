"""`nvidia-smi topo -m` output: the GPUs, NICs and the path between every pair (the loosest sniff: tried last).

A matrix pasted without its header line or cut after some rows is read as far as it goes: the pairs no cell
describes become unknown pairs (never a missing NVLink), and the paste's coverage is said with the source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.parse.topo_matrix import TopoParse


def sniff(text: str) -> bool:
    from topoaudit.parse.topo_matrix import looks_like_topo_matrix

    return looks_like_topo_matrix(text)


def load(text: str, name: str) -> Facts:
    """The matrix's machine; columns a paste adds to ``topo -m`` (a re-typed NUMA column) kept as text, per GPU."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import InputIssue, SourceInfo
    from topoaudit.parse.topo_matrix import parse_topo_matrix

    parsed = parse_topo_matrix(text, partial=True)
    extras = {"text_columns": {c.title: dict(c.values) for c in parsed.text_columns}} if parsed.text_columns else {}
    coverage = parsed.coverage()
    return Facts(
        with_unknown_pairs(parsed),
        SourceInfo("topo-matrix", name, description=f"an excerpt: {coverage}" if coverage else ""),
        tuple(InputIssue(i.line, i.action, i.message) for i in parsed.issues),
        extras,
        what="`nvidia-smi topo -m`",
    )


def with_unknown_pairs(parsed: TopoParse) -> Machine:
    """The machine with each GPU pair no cell describes as an unknown pair, so no rule reads it as a missing link."""
    import dataclasses

    from topoaudit.model.machine import Link, PathLevel
    from topoaudit.model.topology import UNKNOWN_PAIR

    unknown = parsed.unknown_gpu_pairs()
    if not unknown:
        return parsed.machine
    added = tuple(Link(a, b, UNKNOWN_PAIR, PathLevel.UNKNOWN, 0) for a, b in unknown)
    return dataclasses.replace(parsed.machine, links=parsed.machine.links + added)


READER = Reader("topo-matrix", 110, "`nvidia-smi topo -m` output", sniff, load)
