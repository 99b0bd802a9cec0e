"""``nvbandwidth`` output (v0.4 to v0.10): each test's copy-bandwidth matrix between GPUs (and CPU to GPU).

A measured link matrix corroborates or contradicts the topology: a pair far below its siblings is a
degraded link or a path that is not what ``topo -m`` says. Several runs pasted one after another (with
``#####`` separators), bidirectional tests' sub-matrices (``Read1``, ``Read2``, ``Total``) and the
diagonal (``N/A`` or ``0.00``, a GPU's copy to itself) are all read; latency matrices (ns) are noted and
left out.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from topoaudit.errors import InputError
from topoaudit.model.machine import Gpu
from topoaudit.model.nccl_topo import BandwidthMatrix
from topoaudit.model.values import Probed, Unsupported

SOURCE = "nvbandwidth"

_RUNNING = re.compile(r"^\s*Running (\w+)\.\s*$")
_TITLE = re.compile(r"^\s*(.*\b(CPU|GPU)\(row\).*\b(CPU|GPU)\(column\)\s*(\w*)\s*(?:bandwidth)?\s*\((GB/s|ns)\))\s*$")
_DEVICE = re.compile(r"^\s*Device (\d+): (.+?)\s*$")
_VERSION = re.compile(r"^\s*nvbandwidth Version:\s*(\S+)")
# The run's other lines: banner, versions, devices, test names, sums, notes, separators between runs.
_OTHER = re.compile(
    r"^\s*(nvbandwidth Version|Built from|CUDA .*Version|Driver Version|Device \d+:|Running \w+\.|SUM |"
    r"COEFFICIENT_OF_VARIATION|NOTE:|Additional system-specific|Performance can vary|#{5,})"
)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


@dataclass(frozen=True)
class ParsedNvbandwidth:
    version: str  # "v0.10.0"; "" when the paste starts at a test
    gpus: tuple[Gpu, ...]
    matrices: tuple[BandwidthMatrix, ...]
    notes: tuple[tuple[int, str], ...]
    used_lines: frozenset[int] = frozenset()  # 1-based lines of the nvbandwidth output (a `topo -m` may sit beside it)


def looks_like_nvbandwidth(text: str) -> bool:
    """An ``nvbandwidth Version`` banner, or a ``Running <test>.`` line followed by a row/column matrix title."""
    head = text[:200_000]
    if re.search(r"^\s*nvbandwidth Version:", head, re.M):
        return True
    lines = head.splitlines()
    return any(_RUNNING.match(a) and _TITLE.match(b) for a, b in itertools.pairwise(lines))


def parse_nvbandwidth(text: str, name: str) -> ParsedNvbandwidth:
    """Every matrix in the paste, named by its test (``device_to_device_memcpy_read_ce``, ``..._total``)."""
    lines = text.splitlines()
    version = ""
    names: dict[int, str] = {}
    matrices: list[BandwidthMatrix] = []
    notes: list[tuple[int, str]] = []
    running = ""
    used: set[int] = set()
    i = 0
    while i < len(lines):
        line = lines[i]
        if _OTHER.match(line):
            used.add(i + 1)
        if match := _VERSION.match(line):
            version = version or match.group(1)
        elif match := _DEVICE.match(line):
            names[int(match.group(1))] = match.group(2)
        elif match := _RUNNING.match(line):
            running = match.group(1)
        elif match := _TITLE.match(line):
            start = i
            matrix, i = _matrix(lines, i, match, running)
            used.update(range(start + 1, i + 1))
            if match.group(5) != "GB/s":
                notes.append((start + 1, f"{running}: a latency matrix (ns), not bandwidth; left out"))
            elif matrix is not None:
                matrices.append(matrix)
            continue
        i += 1
    if not matrices:
        raise InputError(f"{name}: nvbandwidth output without a bandwidth matrix")
    indices = set(names)
    for m in matrices:
        indices.update(int(label[3:]) for label in (*m.rows, *m.columns) if label.startswith("GPU"))
    gpus = tuple(
        Gpu(index=k, name=names.get(k) or Unsupported(SOURCE, "not named in this run")) for k in sorted(indices)
    )
    return ParsedNvbandwidth(version, gpus, tuple(matrices), tuple(notes), frozenset(used))


def _matrix(lines: list[str], start: int, title: re.Match[str], running: str) -> tuple[BandwidthMatrix | None, int]:
    """The matrix under a title line, and the index of the first line after it."""
    row_kind, column_kind, part = title.group(2), title.group(3), title.group(4)
    i = start + 1
    header = lines[i].split() if i < len(lines) else []
    if not header or not all(h.isdigit() for h in header):
        return None, i
    columns = [int(h) for h in header]
    i += 1
    rows: list[str] = []
    values: list[tuple[Probed[float], ...]] = []
    while i < len(lines):
        tokens = lines[i].split()
        if len(tokens) != len(columns) + 1 or not tokens[0].isdigit():
            break
        row = int(tokens[0])
        cells: list[Probed[float]] = []
        for column, cell in zip(columns, tokens[1:], strict=True):
            same_gpu = row_kind == column_kind == "GPU" and row == column
            if same_gpu or not _NUMBER.match(cell):
                cells.append(Unsupported(SOURCE, "a GPU's copy to itself" if same_gpu else f"'{cell}' in the matrix"))
            else:
                cells.append(float(cell))
        rows.append(f"{row_kind}{row}")
        values.append(tuple(cells))
        i += 1
    test = running + (f"_{part.lower()}" if part and part.lower() != "bandwidth" else "")
    matrix = BandwidthMatrix(
        test=test or "nvbandwidth",
        title=title.group(1).strip(),
        rows=tuple(rows),
        columns=tuple(f"{column_kind}{c}" for c in columns),
        values_gbps=tuple(values),
    )
    return (matrix if rows else None), i
