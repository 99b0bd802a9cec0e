"""What a pasted text held beyond a machine: its parts, and the known messages found on its lines.

A paste is split into parts (an NCCL log, a traceback, nccl-tests output, ...), each read by the reader that
recognises it; the report names every part with its lines and what read it. The signature catalog's messages
(``topoaudit/catalog/signatures.toml``) are looked for on every line; each one found is a :class:`Hit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from topoaudit.model.values import Unsupported

PREFIX_SOURCE = "line prefix"
NO_RANK = Unsupported(PREFIX_SOURCE, "no prefix names a rank")
NO_HOST = Unsupported(PREFIX_SOURCE, "no prefix names a host")


@dataclass(frozen=True)
class PastePart:
    """A stretch of the paste of one kind, and the reader that read it."""

    kind: str  # "nccl-log", "traceback", "nvidia-smi-q", ... (topoaudit.parse.paste_parts.KINDS), or a document's
    first_line: int  # 1-based, inclusive
    last_line: int
    read_by: str = ""  # the reader that read it ("" when none could)
    note: str = ""  # why no reader read it, when one tried

    @property
    def span(self) -> str:
        """The line range as a report prints it: "line 4", "lines 1-13"."""
        if self.first_line == self.last_line:
            return f"line {self.first_line}"
        return f"lines {self.first_line}-{self.last_line}"


@dataclass(frozen=True)
class Hit:
    """A known message (a signature of the catalog) found on a line of the paste."""

    line: int  # 1-based line number in the paste
    signature: str  # the signature's id
    values: dict[str, str] = field(default_factory=dict)  # the named groups that matched
    text: str = ""  # the line without its prefixes, trimmed
    rank: int | Unsupported = NO_RANK  # what a launcher's prefix on the line named ("[rank3]:")
    host: str | Unsupported = NO_HOST  # ... and the host ("node07: ", a syslog host, a Ray worker's ip)


def parts_read(parts: tuple[PastePart, ...]) -> str:
    """Name the parts of a mixed paste as a report's source line shows them; "" for a paste of one part, read whole.

    "nccl-log lines 1-13, traceback lines 14-18 (known-messages), other line 20 (not read)".
    """
    if len(parts) <= 1 and all(p.read_by for p in parts):
        return ""
    named = []
    for p in parts:
        by = "not read" if not p.read_by else "" if p.read_by == p.kind else p.read_by
        named.append(f"{p.kind} {p.span}" + (f" ({by})" if by else ""))
    return ", ".join(named)
