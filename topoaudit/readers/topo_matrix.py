"""`nvidia-smi topo -m` output: the GPUs, NICs and the path between every pair (the loosest sniff: tried last)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    from topoaudit.parse.topo_matrix import looks_like_topo_matrix

    return looks_like_topo_matrix(text)


def load(text: str, name: str) -> Facts:
    """The matrix's machine; columns a paste adds to ``topo -m`` (a re-typed NUMA column) kept as text, per GPU."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import InputIssue, SourceInfo
    from topoaudit.parse.topo_matrix import parse_topo_matrix

    parsed = parse_topo_matrix(text)
    extras = {"text_columns": {c.title: dict(c.values) for c in parsed.text_columns}} if parsed.text_columns else {}
    return Facts(
        parsed.machine,
        SourceInfo("topo-matrix", name),
        tuple(InputIssue(i.line, i.action, i.message) for i in parsed.issues),
        extras,
        what="`nvidia-smi topo -m`",
    )


READER = Reader("topo-matrix", 110, "`nvidia-smi topo -m` output", sniff, load)
