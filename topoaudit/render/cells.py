"""The cells of the row model: a table cell with its tone, a table, and the words for absent values.

Every section of :mod:`topoaudit.render.rows` (and its bench, plan, NCCL and facts sections, each in its own
module, loaded only when a report has one) builds from these, so a colour or an absent value's wording is
decided here once for console, Markdown and HTML.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TypeVar

from topoaudit.model.machine import PathLevel, level_from_code
from topoaudit.model.values import Failed, Unsupported

T = TypeVar("T")

TONES: dict[str, tuple[str, str]] = {
    "fail": ("bold red", "t-fail"),
    "warn": ("yellow", "t-warn"),
    "info": ("cyan", "t-info"),
    "pass": ("bold green", "t-pass"),
    "absent": ("dim", "absent"),
    "failed": ("red", "failed"),
    "strong": ("bold", "t-strong"),
    "self": ("dim", "lv-self"),
    "nvlink": ("bold green", "lv-nv"),
    "pcie-switch": ("cyan", "lv-pix"),
    "host-bridge": ("yellow", "lv-phb"),
    "sys": ("red", "lv-sys"),
    "unknown": ("magenta", "lv-unk"),
}
"""Tone -> (rich style for the console, CSS class for HTML). The one colour table of every format."""


LEVEL_TONE = {
    PathLevel.SELF: "self",
    PathLevel.NVLINK: "nvlink",
    PathLevel.PIX: "pcie-switch",
    PathLevel.PXB: "pcie-switch",
    PathLevel.PHB: "host-bridge",
    PathLevel.NODE: "host-bridge",
    PathLevel.SYS: "sys",
    PathLevel.UNKNOWN: "unknown",
}


FULL_MATRIX_MAX = 64
"""Above this many devices the link matrix is summarised per domain; report.json keeps every link."""

MAX_LISTED = 256
"""Rows a table or list of the row model shows (a real box has a few dozen GPUs, NICs or issues at most); a
damaged or hostile report listing 120,000 is shown in part, in a second, saying what it left out. report.json
keeps every one."""


MAX_GPUS_LISTED = 1024
"""GPUs (and what is listed per GPU or domain) a table shows: one NVLink domain reaches 576 GPUs."""


def first_listed(items: tuple[T, ...], noun: str, most: int = MAX_LISTED) -> tuple[tuple[T, ...], str]:
    """The first ``most`` of ``items`` and what was left out ("119,744 of its 120,000 NICs"; "" for nothing)."""
    if len(items) <= most:
        return items, ""
    return items[:most], f"{len(items) - most:,} of its {len(items):,} {noun}"


def left_out_note(cut: str) -> tuple[str, ...]:
    """A table's note for what :func:`first_listed` left out; none when nothing was."""
    return (f"Listed in part: {cut} are left out (report.json holds them all).",) if cut else ()


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, its tone (colour and CSS class) and an optional longer hint."""

    text: str
    tone: str = ""  # a key of TONES, or "" for plain text
    hint: str = ""  # a longer explanation (HTML tooltip)


@dataclass(frozen=True)
class Table:
    """A titled table of cells, laid out by each format (a matrix in column blocks on a terminal)."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...] = ()
    anchor: str = ""
    matrix: bool = False  # a device-by-device grid: laid out in column blocks, coloured like the link matrix


def absent_text(value: Unsupported | Failed) -> str:
    """The reason a value is absent, as a reader wants it: "failed: ..." only for a failure."""
    reason = value.reason.strip().rstrip(".")
    return f"failed: {reason}" if isinstance(value, Failed) else reason


def value_cell(value: object, unit: str = "") -> Cell:
    """A probed value, or its absence (muted, with where the question was asked)."""
    if isinstance(value, Failed):
        return Cell(absent_text(value), "failed", f"source: {value.source}")
    if isinstance(value, Unsupported):
        return Cell(absent_text(value), "absent", f"source: {value.source}")
    if isinstance(value, (tuple, list)):
        return Cell(",".join(map(str, value)) + unit)
    return Cell(f"{value}{unit}")


def sentence(text: str) -> str:
    """``text`` ending in exactly one full stop, whatever punctuation it already carries."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", ".)", "…")) else text + "."


def cells(*texts: str) -> tuple[Cell, ...]:
    return tuple(Cell(t) for t in texts)


def plain(value: object) -> str:
    return "?" if isinstance(value, (Unsupported, Failed)) else str(value)


def code_cell(code: str) -> Cell:
    level, _ = level_from_code(code)
    return Cell(code, LEVEL_TONE[level], level.label)


def format_size(n: int) -> str:
    """A message size as nccl-tests users read it: 1K, 64M, 8G (binary units)."""
    for unit, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    for unit, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n}B"


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` without control characters (terminal escapes, bells, carriage returns): each becomes
    U+FFFD, so a string from the machine can neither drive a terminal nor break an XML file."""
    return _CONTROL.sub("\ufffd", text)


def is_printable(text: str) -> bool:
    """Whether ``text`` has no control character for :func:`printable` to replace."""
    return _CONTROL.search(text) is None


VIEW_FIELDS: dict[type, tuple[str, ...]] = {}
"""Row-model type -> its field names: the objects whose strings :func:`topoaudit.render.rows.view` makes
printable. Each module of the row model registers its own types as it loads."""


def register_views(*types: type) -> None:
    """Make ``types`` (frozen dataclasses of the row model) walked by the printable pass."""
    for t in types:
        VIEW_FIELDS[t] = tuple(f.name for f in dataclasses.fields(t))


register_views(Cell, Table)
