"""Known messages on any line (the signature catalog): what no other reader takes, such as a Python traceback with
NCCL's message inside or a lone ``NCCL WARN`` line, read for the errors it names.

Tried last, on the parts of a paste every other reader left (:attr:`~topoaudit.readers.Reader.fallback`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.parse.prefixes import Line


def sniff(text: str) -> bool:
    from topoaudit.parse.signatures import match_text

    return bool(match_text(text))


def load(text: str, name: str) -> Facts:
    from topoaudit.parse.prefixes import strip_prefixes

    return load_lines(strip_prefixes(text), name)


def load_lines(lines: Sequence[Line], name: str) -> Facts:
    """The messages found, with the lines they stand on; no machine (a message names no box)."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.signatures import match_lines

    hits = match_lines(lines)
    shown = sorted({h.line for h in hits})
    description = f"{len(hits)} known message(s) on {len(shown)} line(s), first on line {shown[0]}" if hits else ""
    return Facts(
        Machine(source="known-messages", gpus=()),
        SourceInfo("known-messages", name, description=description),
        signatures=hits,
        used=frozenset(shown),
        what="known messages",
    )


READER = Reader(
    "known-messages",
    120,
    "an error or warning topoaudit knows (an NCCL WARN line, a CUDA error, a traceback) on any line",
    sniff,
    load,
    fallback=True,
    load_lines=load_lines,
)
