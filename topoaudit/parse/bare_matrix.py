"""Rows of a GPU-pair matrix pasted without its title or column header, told apart from other tables of numbers.

Kept apart from the P2P parser so that splitting a paste into its parts (which asks whether a stretch of numbers is
such a matrix) imports nothing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BARE_ROW = re.compile(r"^\s*(\d{1,3})((?:\s+\d+(?:\.\d+)?)+)\s*$")
"""A matrix row without anything around it: the GPU's index, then one plain figure per column."""
_COLUMN_HEADER = re.compile(r"^\s*\S+(?:\s+\d{1,6})+\s*$")


@dataclass(frozen=True)
class BareMatrix:
    """Rows of a p2pBandwidthLatencyTest matrix pasted without their title or column header (a window of one)."""

    first: int  # 0-based index of its first row in the lines
    last: int  # 0-based index of its last row
    measures: str  # "bandwidth" or "latency"
    columns: int


_TWO_BARE_ROWS = re.compile(r"^[ \t]*\d{1,3}(?:[ \t]+\d+(?:\.\d+)?){2,}[ \t]*\n[ \t]*\d{1,3}[ \t]", re.MULTILINE)
"""Two lines of numbers, the first led by an index: the cheap test before reading any rows."""


def holds_bare_matrix(text: str) -> bool:
    """Whether ``text`` holds rows of a GPU-pair matrix without title or header (:func:`bare_matrices`); a text
    without two lines of numbers is answered by one regular expression, without splitting it into lines."""
    return bool(_TWO_BARE_ROWS.search(text)) and bool(bare_matrices(text.splitlines()))


def bare_matrices(lines: list[str]) -> tuple[BareMatrix, ...]:
    """Runs of two or more rows that can only be a GPU-pair matrix, though nothing names it.

    Consecutive GPU indices, each row as many figures as the first and more than its own index, and each GPU's
    cell to itself on the same side of all its others in every row: the largest in a bandwidth matrix (a GPU
    copies within its own memory fastest), the smallest in a latency matrix. Other tables of numbers do not keep
    that shape row after row.
    """
    found: list[BareMatrix] = []
    run: list[tuple[int, int, list[float]]] = []

    def close() -> None:
        if len(run) >= 2:
            sides = {_own_cell_side(index, values) for _, index, values in run}
            if sides in ({"largest"}, {"smallest"}):
                measures = "bandwidth" if sides == {"largest"} else "latency"
                found.append(BareMatrix(run[0][0], run[-1][0], measures, len(run[0][2])))
        run.clear()

    headed = False  # the rows under a column header ("D\\D 0 1", "GPU 0 1", "CPU 0 1") are a headed matrix's
    for i, line in enumerate(lines):
        m = _BARE_ROW.match(line)
        if not m or _numbers_header(line):
            headed = bool(_COLUMN_HEADER.match(line))
            m = None
        if headed:
            close()
            continue
        values = [float(v) for v in m.group(2).split()] if m else []
        index = int(m.group(1)) if m else -1
        fits = bool(m) and len(values) >= 2 and index < len(values)
        if fits and run and (index != run[-1][1] + 1 or len(values) != len(run[-1][2])):
            close()
        if fits:
            run.append((i, index, values))
        else:
            close()
    close()
    return tuple(found)


_TITLED_BANDWIDTH = re.compile(r"\bbandwidth\b.*\bGB/s\b", re.IGNORECASE)
"""A copy benchmark's matrix title ("Measured bandwidth in GB/s of size 512 MiB:")."""


_TITLE_OVER_HEADER = re.compile(
    r"bandwidth\b[^\n]*GB/s[^\n]*\n(?:[ \t]*\n)?[ \t]*0(?:[ \t]+\d{1,6})+[ \t]*$", re.IGNORECASE | re.MULTILINE
)
"""A bandwidth title over a header of GPU indices: the cheap test before reading any lines."""


def holds_titled_matrix(text: str) -> bool:
    """Whether ``text`` holds a copy benchmark's matrix under a title naming GB/s (:func:`titled_headers`); a text
    without such a title over a header is answered by one regular expression, without splitting it into lines."""
    return bool(_TITLE_OVER_HEADER.search(text)) and bool(titled_headers(text.splitlines()))


def titled_headers(lines: list[str]) -> dict[int, str]:
    """Each header of GPU indices ("   0   1   2   3") right under a bandwidth title (a blank line between them
    at most): {the header's index: the title}. Such a header alone is also nvbandwidth's, or any table's; the title
    says its figures are GB/s."""
    found: dict[int, str] = {}
    title, gap = "", 0
    for i, line in enumerate(lines):
        if _TITLED_BANDWIDTH.search(line) and "Matrix (GB/s)" not in line and "(row)" not in line:
            title, gap = line.strip(), 0
        elif title and _numbers_header(line) and len(line.split()) >= 2:
            found[i] = title
            title = ""
        elif title and not line.strip() and gap < 1:
            gap += 1
        else:
            title = ""
    return found


def _numbers_header(line: str) -> bool:
    """nvbandwidth's column header: the GPUs' indices alone ("   0   1   2"), which reads like a row led by GPU 0."""
    return line.split() == [str(n) for n in range(len(line.split()))]


def _own_cell_side(index: int, values: list[float]) -> str:
    own, others = values[index], values[:index] + values[index + 1 :]
    if own > max(others):
        return "largest"
    return "smallest" if 0 < own < min(others) else ""  # a zero there is a cell left unmeasured (nvbandwidth's)
