"""``nvbandwidth`` output (v0.4 to v0.10): each test's copy-bandwidth matrix between GPUs (and CPU to GPU).

A measured link matrix corroborates or contradicts the topology: a pair far below its siblings is a
degraded link or a path that is not what ``topo -m`` says. Several runs pasted one after another (with
``#####`` separators), bidirectional tests' sub-matrices (``Read1``, ``Read2``, ``Total``) and the
diagonal (``N/A`` or ``0.00``, a GPU's copy to itself) are all read; latency matrices (ns) are noted and
left out.

A test that does not print its matrix says why, and that is read too (NVIDIA/nvbandwidth's kernels.cu,
error_handling.h, nvbandwidth.cpp): the pattern check after a copy (``Invalid value when checking the
pattern at ...`` with its ``Current offset``, from v0.7 followed by ``ASSERT in expression h_errorFlag ==
0``) is one data-check :class:`CopyTestFailure` of the test it ran in; CUDA and NVML errors and other asserts
are failures of their kind; ``Waiving <test>.`` (up to v0.4) and ``Waived:`` (v0.5 on, named from a ``-t``
on the pasted command line) are :class:`WaivedTest`; a matrix cut off keeps the rows printed and names the
missing ones; a test still running where the output stops is ``stopped_in``.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass

from topoaudit.errors import InputError, NothingToJudge
from topoaudit.model.machine import Gpu
from topoaudit.model.nccl_topo import BandwidthMatrix, CopyTestFailure, WaivedTest
from topoaudit.model.values import Probed, Unsupported
from topoaudit.parse.cuda_errors import cuda_error_number
from topoaudit.units import parse_bus_id

SOURCE = "nvbandwidth"

_RUNNING = re.compile(r"^\s*Running (\w+)\.\s*$")
_TITLE = re.compile(r"^\s*(.*\b(CPU|GPU)\(row\).*\b(CPU|GPU)\(column\)\s*(\w*)\s*(?:bandwidth)?\s*\((GB/s|ns)\))\s*$")
_DEVICE = re.compile(r"^\s*Device (\d{1,6}): (.+?)\s*$")
# From v0.6 the device line ends with its bus id: "Device 0: NVIDIA A100-SXM4-80GB (00000000:34:00)".
_DEVICE_BUS = re.compile(r"^(?P<name>.+?)\s*\((?P<bus>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\)$")
_VERSION = re.compile(r"^\s*nvbandwidth Version:\s*(\S+)")
# The run's other lines: banner, versions, devices, test names, sums, notes, separators between runs.
_OTHER = re.compile(
    r"^\s*(nvbandwidth Version|Built from|CUDA .*Version|Driver Version|Device \d+:|Running \w+\.|SUM |"
    r"COEFFICIENT_OF_VARIATION|NOTE:|Additional system-specific|Performance can vary|#{5,})"
)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


_NOT_STOPPED = Unsupported(SOURCE, "every test that started printed its outcome")


@dataclass(frozen=True)
class ParsedNvbandwidth:
    version: str  # "v0.10.0"; "" when the paste starts at a test
    gpus: tuple[Gpu, ...]
    matrices: tuple[BandwidthMatrix, ...]
    notes: tuple[tuple[int, str], ...]
    used_lines: frozenset[int] = frozenset()  # 1-based lines of the nvbandwidth output (a `topo -m` may sit beside it)
    failures: tuple[CopyTestFailure, ...] = ()  # tests that failed instead of printing their matrix
    waived: tuple[WaivedTest, ...] = ()  # tests skipped because their precondition failed
    tests_run: tuple[str, ...] = ()  # every ``Running <test>.``, in order
    stopped_in: Probed[str] = _NOT_STOPPED  # the test that was running when the output stops


class NvbandwidthFailed(InputError):
    """A run that reports a failed test (wrong data after a copy, a CUDA error): refused by default with what
    failed, the reading kept in ``partial`` for a caller that judges the failures."""

    def __init__(self, message: str, partial: ParsedNvbandwidth) -> None:
        super().__init__(message)
        self.partial = partial


def looks_like_nvbandwidth(text: str) -> bool:
    """An ``nvbandwidth Version`` banner, or a ``Running <test>.`` line followed by a row/column matrix title."""
    head = text[:200_000]
    if re.search(r"^\s*nvbandwidth Version:", head, re.M):
        return True
    lines = head.splitlines()
    return any(_RUNNING.match(a) and _TITLE.match(b) for a, b in itertools.pairwise(lines))


def parse_nvbandwidth(text: str, name: str, *, partial: bool = False) -> ParsedNvbandwidth:
    """Every matrix in the paste, named by its test (``device_to_device_memcpy_read_ce``, ``..._total``), and
    every test that failed, was waived, or was running when the output stops.

    A run that reports a failure raises :class:`NvbandwidthFailed` naming it unless ``partial`` is set: read as
    a run of matrices only, its failure would go unsaid. A paste with no matrix and no test outcome raises
    :class:`InputError`.
    """
    reader = _Reader(text.splitlines())
    reader.read()
    parsed = reader.parsed()
    if not (parsed.matrices or parsed.failures or parsed.waived or parsed.tests_run):
        raise NothingToJudge(f"{name}: nvbandwidth output without a bandwidth matrix or a test outcome")
    if parsed.failures and not partial:
        first = parsed.failures[0]
        where = f" in {first.testcase}" if isinstance(first.testcase, str) else ""
        what = "a copy returned wrong data (its pattern check failed)" if first.kind == "data-check" else "it failed"
        raise NvbandwidthFailed(
            f"{name}: nvbandwidth stopped{where}: {what}; line {first.line}: {first.text[:160]!r}"
            + (f" (+{len(parsed.failures) - 1} more)" if len(parsed.failures) > 1 else ""),
            parsed,
        )
    if not parsed.matrices and not partial:
        shown = (
            f"waived {', '.join(str(w.testcase) for w in parsed.waived)}"
            if parsed.waived
            else f"stopped in {parsed.stopped_in}"
        )
        raise NvbandwidthFailed(f"{name}: nvbandwidth printed no matrix: it {shown}", parsed)
    return parsed


def _gpu(index: int, printed: str) -> Gpu:
    """A GPU as its device line names it; from v0.6 the line's bus id is the GPU's, not part of its name."""
    if not printed:
        return Gpu(index=index, name=Unsupported(SOURCE, "not named in this run"))
    m = _DEVICE_BUS.match(printed)
    bus = parse_bus_id(f"{m['bus']}.0") if m else None
    if m is None or bus is None:
        return Gpu(index=index, name=printed)
    return Gpu(index=index, name=m["name"], pci_bus_id=bus)


_PATTERN_FAILED = re.compile(r"Invalid value when checking the pattern(?: at <?(?P<address>[^>\s]+)>?)?")
_OFFSET = re.compile(r"^\s*Current offset\s*(?::|\[)\s*(?P<offset>[\d/ ]+?)\s*\]?\s*$")
_ASSERT = re.compile(r"ASSERT in expression (?P<expr>.+?)(?: on \S+, rank = \d+)? in .+ : (?P<where>\S+:\d+)")
_CUDA_ASSERT = re.compile(
    r"\[(?P<name>CUDA_ERROR_[A-Z_]+|cuda[A-Z]\w+)\] (?P<text>.+?)(?: in expression (?P<expr>.+?) in .*)?:?\s*$"
)
_NVML_ERROR = re.compile(r"NVML_ERROR: \[(?P<text>[^\]]+)\]")
_ERROR = re.compile(r"^\s*ERROR: (?P<text>.+?)\s*$")
_WAIVING = re.compile(r"^\s*Waiving (?P<test>[a-z0-9_]+)\.\s*$")
_WAIVED = re.compile(r"^\s*Waived:\s*(?P<msg>.*?)\s*$")
_REQUESTED = re.compile(r"nvbandwidth\S*\s.*?(?:-t|--testcase)\s+(?P<tests>[\w. ]+)")


class _Reader:
    """One pass over the lines: matrices, the test each belongs to, and each test's outcome."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.version = ""
        self.names: dict[int, str] = {}
        self.matrices: list[BandwidthMatrix] = []
        self.notes: list[tuple[int, str]] = []
        self.used: set[int] = set()
        self.failures: list[CopyTestFailure] = []
        self.waived: list[WaivedTest] = []
        self.tests_run: list[str] = []
        self.requested: list[str] = []
        self.outcomes = 0  # status lines seen: a ``Waived:`` is the outcome of the next requested test
        self.running = ""
        self.running_done = True

    def read(self) -> None:
        lines = self.lines
        i = 0
        while i < len(lines):
            line = lines[i]
            if _OTHER.match(line):
                self.used.add(i + 1)
            if match := _VERSION.match(line):
                self.version = self.version or match.group(1)
            elif match := _DEVICE.match(line):
                self.names[int(match.group(1))] = match.group(2)
            elif match := _RUNNING.match(line):
                self.running, self.running_done = match.group(1), False
                self.tests_run.append(self.running)
                self.outcomes += 1
            elif match := _TITLE.match(line):
                start = i
                matrix, i = _matrix(lines, i, match, self.running)
                self.used.update(range(start + 1, i + 1))
                if match.group(5) != "GB/s":
                    self.notes.append((start + 1, f"{self.running}: a latency matrix (ns), not bandwidth; left out"))
                    self.running_done = True
                elif matrix is not None:
                    self.matrices.append(matrix)
                    self.running_done = True
                continue
            elif (match := _REQUESTED.search(line)) and not self.requested:
                self.requested = [t.rstrip(".") for t in match.group("tests").split() if not t.startswith("-")]
            else:
                self.outcome(i + 1, line)
            i += 1

    def outcome(self, number: int, line: str) -> None:
        """A test's failure or waiver (what nvbandwidth prints instead of a matrix)."""
        text = line.strip()
        testcase: Probed[str] = self.running or Unsupported(SOURCE, "no 'Running <test>.' line before it")
        if m := _PATTERN_FAILED.search(text):
            self.fail("data-check", testcase, text, "", number)
        elif (m := _OFFSET.match(line)) and self.failures and self.failures[-1].line == number - 1:
            self.failures[-1] = dataclasses.replace(self.failures[-1], detail=f"offset {m['offset'].strip()}")
            self.used.add(number)
        elif m := _ASSERT.search(text):
            expr = m["expr"].strip()
            if expr == "h_errorFlag == 0":
                known = self.failures[-1] if self.failures else None
                if known is not None and known.kind == "data-check" and known.testcase == testcase:
                    self.used.add(number)
                    return  # the host's assert after the device's pattern message: one failure
                self.fail("data-check", testcase, text, f"{expr} ({m['where']})", number)
            else:
                self.fail("assert", testcase, text, f"{expr} ({m['where']})", number)
        elif m := _CUDA_ASSERT.search(text):
            self.fail("cuda", testcase, text, m["name"], number, cuda_error_number(m["text"]))
        elif m := _NVML_ERROR.search(text):
            self.fail("nvml", testcase, text, m["text"], number)
        elif m := _ERROR.match(line):
            self.fail("error", testcase, text, "", number)
        elif m := _WAIVING.match(line):
            self.waived.append(WaivedTest(m["test"], number, text))
            self.used.add(number)
            self.outcomes += 1
        elif _WAIVED.match(line):
            name = self.requested[self.outcomes] if self.outcomes < len(self.requested) else None
            self.waived.append(
                WaivedTest(
                    name or Unsupported(SOURCE, "nvbandwidth v0.5 and later print 'Waived:' without the test's name"),
                    number,
                    text,
                )
            )
            self.used.add(number)
            self.outcomes += 1

    def fail(
        self, kind: str, testcase: Probed[str], text: str, detail: str, number: int, cuda: int | None = None
    ) -> None:
        self.failures.append(
            CopyTestFailure(
                kind,
                testcase,
                text[:MAX_TEXT],
                detail,
                cuda if cuda is not None else Unsupported(SOURCE, "no CUDA error named"),
                number,
                text[:MAX_TEXT],
            )
        )
        self.used.add(number)
        self.running_done = True

    def parsed(self) -> ParsedNvbandwidth:
        indices = set(self.names)
        for m in self.matrices:
            indices.update(int(label[3:]) for label in (*m.rows, *m.columns) if label.startswith("GPU"))
        gpus = tuple(_gpu(k, self.names.get(k, "")) for k in sorted(indices))
        stopped: Probed[str] = self.running if self.running and not self.running_done else _NOT_STOPPED
        if isinstance(stopped, str):
            self.notes.append((0, f"{stopped}: the output stops before its matrix (the run was cut or died)"))
        return ParsedNvbandwidth(
            self.version,
            gpus,
            tuple(self.matrices),
            tuple(self.notes),
            frozenset(self.used),
            failures=tuple(self.failures),
            waived=tuple(self.waived),
            tests_run=tuple(self.tests_run),
            stopped_in=stopped,
        )


MAX_TEXT = 300
MAX_INDEX_DIGITS = 6
"""A device index nvbandwidth prints has a few digits; a longer run of digits is no index (and too long for int())."""


def _matrix(lines: list[str], start: int, title: re.Match[str], running: str) -> tuple[BandwidthMatrix | None, int]:
    """The matrix under a title line, and the index of the first line after it."""
    row_kind, column_kind, part = title.group(2), title.group(3), title.group(4)
    i = start + 1
    header = lines[i].split() if i < len(lines) else []
    if not header or not all(h.isdecimal() and len(h) <= MAX_INDEX_DIGITS for h in header):
        return None, i
    columns = [int(h) for h in header]
    i += 1
    rows: list[str] = []
    values: list[tuple[Probed[float], ...]] = []
    while i < len(lines):
        tokens = lines[i].split()
        if len(tokens) != len(columns) + 1 or not tokens[0].isdecimal() or len(tokens[0]) > MAX_INDEX_DIGITS:
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
    labels = tuple(f"{column_kind}{c}" for c in columns)
    square = row_kind == column_kind == "GPU"
    matrix = BandwidthMatrix(
        test=test or "nvbandwidth",
        title=title.group(1).strip(),
        rows=tuple(rows),
        columns=labels,
        values_gbps=tuple(values),
        rows_missing=tuple(label for label in labels if label not in rows) if square else (),
    )
    return (matrix if rows else None), i
