"""Parse nccl-tests / rccl-tests ``*_perf`` output (text table or ``-J`` JSON) into :class:`BenchResult` runs.

CONTRACT:

* ``looks_like_nccl_tests(text) -> bool`` -- a cheap sniff for ``analyze``'s input loader: a header with its
  rank lines, a line only nccl-tests prints (its footer, a ``Test CUDA/NCCL failure``, a trace line), or
  table rows (a tail pasted alone).
* ``parse_nccl_tests(text, name="") -> NcclTestsParse``: ``runs`` holds each run of the paste, ``result`` the
  first. ``result.source == "nccl-tests"``; one :class:`RankInfo` per ``#  Rank`` line (``host``, ``device``,
  PCI bus id, GPU name, pid); one group ``all`` with every data row (out-of-place as the row, in-place in
  the ``inplace_*`` fields); ``peak_busbw``/``plateau`` from the rows; ``avg_busbw_gbps`` is the footer's
  mean over every size (kept, never gated on); ``#wrong`` as an int (``N/A`` -> Unsupported).
* A run is read as far as it went: rows without header or rank lines, a footer alone, header and rank
  lines and then nothing (``status == "partial"``, no rows, ``last_output`` the line it stopped at).
* Failures are typed (:class:`RunFailure` in ``failures``: ``Test CUDA failure`` with the CUDA error the text
  names, ``Test NCCL failure`` with NCCL's last error after `` / ``, timeouts, ``Out of bounds values : N
  FAILED``) and placed on a rank when the host and pid name one; they are also the run's ``errors``, so the
  bench judge names them (``status == "failed"``).
* Figures that cannot be measurements (NaN, inf, 1e308, negative, a time of 0) and a size repeated with
  other figures are :class:`RowProblem` input issues, never figures to judge.
* Two runs glued into one paste (a second header, parameter line or footer; the size column restarting
  within one series) are read apart.
* ``nccl_version`` from ``# nccl-tests version ... nccl-library=22807`` or ``NCCL version 2.28.7``; the
  command line, when pasted, in ``command`` and its ``NCCL_*=`` assignments in ``settings``.
* The Markdown table of ml-engineering's ``all_reduce_bench.py`` (``| payload | busbw | algbw |``, under "The
  average bandwidth of all_reduce over 32 ranks") is read as one run of the same shape (``flavour ==
  "all_reduce_bench"``): its rows' sizes and figures, no data check (``#wrong`` Unsupported), each row's time the
  size over its algbw (the tool's own definition of algbw).
* Raises :class:`NcclTestsParseError` (exit 4) when no run can be read (no row, rank line, footer or
  failure), naming the last lines the paste printed.

Accepted damage, each recorded as a :class:`ParseIssue` with its line: MPI/NCCL noise lines inside the
table (``[1,0]<stdout>:`` prefixes are stripped), collapsed whitespace, rows trimmed to the out-of-place
half, a missing header or footer, the old formats (no ``Group`` or ``Pid`` column, ``[0x1a]`` bus numbers, a
float ``error`` column instead of ``#wrong``), rccl-tests' banner lines.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from topoaudit.errors import InputError, NothingToJudge
from topoaudit.model.bench import ONE_RANK_REPEAT, BenchGroup, BenchResult, BenchRow, RankInfo, RowProblem, RunFailure
from topoaudit.model.busbw import normalize_algorithm, peak, plateau
from topoaudit.model.machine import Gpu, Host, Machine
from topoaudit.model.nccl import LogLine, NcclSetting
from topoaudit.model.report import ELIDED
from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.parse.cuda_errors import cuda_error_number
from topoaudit.parse.topo_matrix import ParseIssue
from topoaudit.units import parse_bus_id

SOURCE = "nccl-tests"

# A rank is read up to MAX_RANK_DIGITS digits: a damaged one of a hundred is still named as pasted, one longer than
# Python turns into an int (4,300 digits) is no rank line.
MAX_RANK_DIGITS = 4000
_RANK = re.compile(
    rf"^#\s*Rank\s+(?P<rank>\d{{1,{MAX_RANK_DIGITS}}})\s+"
    r"(?:Group\s+(?P<group>\d{1,7})\s+)?(?:Pid\s+(?P<pid>\d{1,10})\s+)?"
    r"(?:on\s+(?P<host>\S+)\s+|uses\s+)"  # NCCL 1's tests: "#   Rank  0 uses device  0 [0x02] Tesla P100"
    r"device\s+(?P<dev>\d{1,5})\s+\[(?P<bus>[^\]]*)\]\s*(?P<name>.*?)\s*$"
)
_UNHASHED = re.compile(
    r"^(?:Using devices\s*$|Rank\s+\d+\s+(?:Group|Pid|on|uses)\s|bytes\s+N\s+type\s|out-of-place\s+in-place\s*$"
    r"|size\s+count\s+type\s|Out of bounds values\s*:|Avg bus bandwidth\s*:)"
)
"""nccl-tests' own comment lines as a page shows them when Markdown took their "#" (a heading): read as comments."""
_MPI_PREFIX = re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:\s?")
_TYPES = {
    "float", "half", "double", "bfloat16", "int8", "uint8", "int32", "uint32", "int64", "uint64", "int", "char",
    "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2", "float32", "float16", "float64",
}  # fmt: skip
_OPS = {"sum", "prod", "max", "min", "avg", "none", "mulsum", "premulsum"}
_COLLECTIVE = re.compile(r"\b(\w+?)_perf\b")


@dataclass(frozen=True)
class NcclTestsParse:
    """The runs of one paste: ``result`` is the first, ``runs`` all of them (two runs glued are read apart)."""

    result: BenchResult
    issues: tuple[ParseIssue, ...] = ()
    flavour: str = "nccl-tests"  # "nccl-tests" | "rccl-tests" | "mscclpp-test" | "all_reduce_bench"
    format: str = "text"  # "text" | "json"
    runs: tuple[BenchResult, ...] = ()


class NcclTestsParseError(InputError):
    """No data row of an nccl-tests table could be read."""


class NcclTestsNothingRead(NcclTestsParseError, NothingToJudge):
    """nccl-tests output recognised (its header, a banner) that holds no row, rank line or failure to judge."""


# Lines only nccl-tests prints about a run's outcome: its footer, its failure and trace lines. (Its parameter
# and device banner alone are not enough: an NCCL log pasted from a run's start carries them too.)
_OWN_LINE = re.compile(
    r"^\s*#\s*(?:Out of bounds values\s*:|Avg bus bandwidth\s*:)"
    r"|(?:Test )?(?:CUDA|Cuda|NCCL) failure [\w./-]+\.cu:\d+ '"
    r"|\.\. \S+(?: pid \d+)?: Test failure [\w./-]+:\d+"
    r"|: Test timeout \(\d+s\) ",
    re.MULTILINE,
)
# The parameter line only nccl-tests prints (src/common.cu): "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728".
_PARAMETERS = re.compile(
    r"^\s*#\s*nThread\s+(?P<threads>\d{1,6})\s+nGpus\s+(?P<gpus>\d{1,6})\s+minBytes\s+\d+", re.MULTILINE
)
_ROW_START = re.compile(
    r"^\s*\d+\s+\d+\s+(?:" + "|".join(sorted(_TYPES)) + r")\s+(?:(?:" + "|".join(sorted(_OPS)) + r")\s"
    r"|[\d.]+\s+[\d.]+\s+[\d.]+\s+\d(?:\.\d+)?e[+-]\d+\b)",  # nccl-tests 1.x: no redop, a max error column
    re.MULTILINE | re.IGNORECASE,
)


_TABLE_HEADER = re.compile(
    r"^(?:[#>\s]*(?:out-of-place\s+in-place|in-place\s+out-of-place)\s*\n)?[#>\s]*"
    r"(?:(?:size\s+count|bytes\s+N)\s+type\s.*|size\s+count\s+time\s+)\balgbw\s+busbw\b",
    re.MULTILINE,
)
"""nccl-tests' column header: the column names (1.x: "bytes N type op"), under its "out-of-place in-place" line
where the paste starts above them."""


def looks_like_nccl_tests(text: str) -> bool:
    """A cheap sniff: a header with its rank lines or program name, a line only nccl-tests prints (a footer, a
    failure, a trace line), the table's header over a row, or table rows (a tail of rows pasted without the rest)."""
    head = text[:20000]
    if head.lstrip().startswith("{"):
        return '"results"' in head and ('"bus_bw"' in head or '"nccl_version"' in head)
    if BENCH_TABLE_HEADER.search(head):
        return True  # ml-engineering's all_reduce_bench.py table
    has_header = bool(re.search(r"#\s*size\s+count\s+type", head)) or ("algbw" in head and "busbw" in head)
    has_rank = bool(re.search(r"^#?\s*Rank\s+\d+\s+.*device", head, re.MULTILINE))
    has_perf = "_perf" in head or "nccl-tests" in head or "rccl-tests" in head or "Avg bus bandwidth" in text
    if (has_header and (has_rank or has_perf)) or (has_rank and has_perf):
        return True
    rows = _ROW_START.finditer(head)
    if has_header and next(rows, None) is not None:  # the table's own header over a row: a run cut to its start
        return True
    if _OWN_LINE.search(head) or _PARAMETERS.search(head):
        return True
    if _TABLE_HEADER.search(head):  # the table's two header lines alone: the paste stops before the first row
        return True
    rows = _ROW_START.finditer(head)
    return next(rows, None) is not None and next(rows, None) is not None


def _float_or_none(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _bus_id(raw: str) -> str | Unsupported:
    """The rank's PCI bus id when the log prints a whole one; older logs print only the bus number."""
    return parse_bus_id(raw) or Unsupported(SOURCE, f"only the PCI bus number is printed ({raw.strip()})")


@dataclass(frozen=True)
class _Layout:
    """A table's columns as its header names them."""

    has_root: bool
    names: list[str]  # the columns after the fixed ones (size, count, type, redop, root)
    typed: bool = True  # False: MSCCL++'s mscclpp-test, whose rows have no type or redop and one half each


def _header_layout(line: str) -> _Layout | None:
    """The columns from the ``# size count type redop root ...`` line, nccl-tests 1.x's ``# bytes N type op ...
    res`` (its ``res`` the max error), or mscclpp-test's ``# size count time algbw busbw #wrong ...``."""
    tokens = line.lstrip("#").split()
    if len(tokens) >= 3 and tokens[0] == "bytes" and tokens[1] == "N":
        return _Layout(False, ["error" if t == "res" else t for t in tokens if t not in {"bytes", "N", "type", "op"}])
    if len(tokens) < 3 or tokens[0] != "size" or tokens[1] != "count":
        return None
    if tokens[2] == "time":
        return _Layout(False, tokens[2:], typed=False)
    fixed = {"size", "count", "type", "redop", "root"}
    return _Layout("root" in tokens, [t for t in tokens if t not in fixed])


def parse_nccl_tests(text: str, name: str = "") -> NcclTestsParse:
    """Parse nccl-tests output (text or ``-J`` JSON); see the module docstring."""
    if text.lstrip().startswith("{"):
        return _parse_json(text, name)
    if BENCH_TABLE_HEADER.search(text[:20000]):
        return _parse_bench_table(text)
    return _Reader(text, name).parse()


BENCH_TABLE_HEADER = re.compile(r"^\s*\|\s*payload\s*\|\s*busbw\s*\|\s*algbw\s*\|\s*$", re.MULTILINE)
"""ml-engineering's all_reduce_bench.py prints its sweep as a Markdown table under this header."""
BENCH_TABLE_ROW = re.compile(
    r"^\s*\|\s*(?P<size>\d{1,6}(?:\.\d{1,3})?)\s*(?P<unit>B|KiB|MiB|GiB|TiB)\s*\|"
    r"\s*(?P<busbw>\d{1,9}(?:\.\d{1,6})?)\s*GBps\s*\|\s*(?P<algbw>\d{1,9}(?:\.\d{1,6})?)\s*GBps\s*\|\s*$"
)
BENCH_TABLE_TITLE = re.compile(r"The average bandwidth of (?P<collective>\w{1,40}) over (?P<ranks>\d{1,6}) ranks")
_UNIT_BYTES = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_BENCH_TABLE = "all_reduce_bench"


def _parse_bench_table(text: str) -> NcclTestsParse:
    """ml-engineering's all_reduce_bench.py table: its sizes and figures, its collective and rank count from the
    title line when pasted (else from the rows' busbw/algbw, as for nccl-tests' rows)."""
    issues: list[ParseIssue] = []
    rows: list[BenchRow] = []
    last: LogLine | None = None
    no_check = Unsupported(_BENCH_TABLE, "all_reduce_bench.py prints no data check")
    for number, line in enumerate(text.splitlines(), 1):
        m = BENCH_TABLE_ROW.match(line)
        if not m:
            continue
        size = round(float(m["size"]) * _UNIT_BYTES[m["unit"]])
        busbw, algbw = float(m["busbw"]), float(m["algbw"])
        if algbw <= 0 or size <= 0:
            issues.append(ParseIssue(number, "recovered", f"the row for {size} bytes has no bandwidth; left out"))
            continue
        time_us = size / (algbw * 1e9) * 1e6
        rows.append(BenchRow(size, size // 4, "float32", time_us, algbw, busbw, no_check))
        last = LogLine(number, line.strip()[:MAX_EVIDENCE_CHARS])
    if not rows:
        raise NcclTestsParseError("an all_reduce_bench.py table without a row of figures")
    title = BENCH_TABLE_TITLE.search(text)
    collective = f"{title['collective']}_perf" if title else "all_reduce_perf"
    if not title:
        issues.append(ParseIssue(0, "excerpt", "the table's title line is not in the paste: read as all_reduce"))
    no_footer = Unsupported(_BENCH_TABLE, "all_reduce_bench.py prints no footer")
    result = _result([], rows, collective, _BENCH_TABLE, "", no_footer, no_footer, issues, prints_ranks=False)
    ranks = int(title["ranks"]) if title else ranks_from_rows(rows, result.collective)
    whence = "the table's title" if title else "the rows' busbw/algbw"
    said = f"{ranks} ranks, from {whence}" if ranks else "the rank count is not in the paste"
    result = dataclasses.replace(
        result,
        world_size=ranks or 0,
        status="complete",
        notes=(said,),
        last_output=last or Unsupported(_BENCH_TABLE, "no row"),
        nccl_version=Unsupported(_BENCH_TABLE, "the tool prints no NCCL version"),
        command=Unsupported(_BENCH_TABLE, "no command line in the paste"),
        table_header=Unsupported(_BENCH_TABLE, "a Markdown table's header"),
    )
    return NcclTestsParse(result, tuple(issues), _BENCH_TABLE, "text", runs=(result,))


_NO_AVG = Unsupported(SOURCE, "no 'Avg bus bandwidth' footer (output cut?)")
_NO_OOB = Unsupported(SOURCE, "no 'Out of bounds values' footer (output cut?)")


@dataclass
class _Run:
    """One run while it is read: everything between one run's first line and the next run's."""

    first_line: int = 0
    ranks: list[RankInfo] = field(default_factory=list)
    rows: list[tuple[BenchRow, int, tuple[str, str, str]]] = field(default_factory=list)  # row, line, series
    seen: dict[tuple[tuple[str, str, str], int], tuple[BenchRow, int]] = field(default_factory=dict)
    last_size: dict[tuple[str, str, str], int] = field(default_factory=dict)  # per series, its last size
    conflicted: set[int] = field(default_factory=set)  # lines of rows left out for a conflicting repeat
    header_line: tuple[int, str] | None = None  # the table's column names (with no row after them: a hung size)
    params_seen: bool = False  # its '# nThread 1 nGpus 8 minBytes ...' line: the run started
    gpus_per_process: int = 0  # nThread x nGpus of that line: each process prints that many '#  Rank' lines
    version: str = ""
    nccl_version: str = ""
    flavour: str = "nccl-tests"
    collective: str = ""
    avg: float | Unsupported = _NO_AVG
    oob: int | Unsupported = _NO_OOB
    oob_line: LogLine | None = None
    command: str = ""
    settings: list[NcclSetting] = field(default_factory=list)
    failures: list[RunFailure] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    last: tuple[int, str] | None = None  # the last line of nccl-tests' own the run printed: (number, text)
    printed_last: tuple[int, str] | None = None  # its last line of any program (NCCL's INFO lines too)
    in_table: bool = False
    ended: bool = False  # its footer or 'Collective test concluded' was printed

    @property
    def header_seen(self) -> bool:
        """Whether the run printed its table's column names."""
        return self.header_line is not None

    @property
    def started(self) -> bool:
        """Whether anything of a run was read: a later run's first line then starts a new run."""
        return bool(self.rows or self.ranks or self.failures or self.header_seen or self.ended or self.command)

    @property
    def has_run(self) -> bool:
        """Whether the lines read are a run to report: its parameters, a rank, the table, a row, a footer or a
        failure (a run that printed its parameters and then nothing hung or died before naming its GPUs)."""
        return bool(self.rows or self.ranks or self.failures or self.header_seen or self.ended or self.params_seen)


class _Reader:
    """The text output, read line by line into one or more runs (glued pastes are split, never merged)."""

    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.name = name
        self.issues: list[ParseIssue] = []
        self.runs: list[_Run] = []
        self.run = _Run()
        self.layout: _Layout | None = None
        # the last lines the output printed, for the refusal of a paste with no run in it
        self.printed: collections.deque[tuple[int, str]] = collections.deque(maxlen=2)
        self.last_line_number = 0  # the paste's last line with text, as parse() reaches it

    def new_run(self, number: int, why: str) -> None:
        """Close the current run and start another at ``number`` (two runs glued into one paste)."""
        if self.run.has_run:
            self.runs.append(self.run)
            self.issues.append(
                ParseIssue(
                    number,
                    "recovered",
                    f"another nccl-tests run starts here ({why}): the runs are read apart, and each is judged on its "
                    "own",
                )
            )
        self.run = _Run(first_line=number)

    def parse(self) -> NcclTestsParse:
        for number, raw in enumerate(self.text.splitlines(), start=1):
            line = _MPI_PREFIX.sub("", raw).rstrip()
            stripped = line.strip()
            if stripped:
                self.last_line_number = number
                self.read(number, stripped)
                if any(ch.isalnum() for ch in stripped):  # not a '-----' rule of a launcher's message
                    self.run.printed_last = (number, stripped)
        if self.run.has_run:
            self.runs.append(self.run)
        if not self.runs:
            shown = "; ".join(f"line {number}: {text[:80]!r}" for number, text in self.printed)
            raise NcclTestsNothingRead(
                "no nccl-tests data row, rank line or failure found"
                + (f" (the run printed {shown}, then nothing that names a GPU)" if shown else ""),
                hint="pass the stdout of all_reduce_perf (or another *_perf) including the size/time/busbw table",
            )
        fallback = _collective_from(self.name) or ""
        results = [self.result(run, fallback) for run in self.runs]
        flavour = self.runs[0].flavour
        return NcclTestsParse(results[0], tuple(self.issues), flavour, "text", runs=tuple(results))

    # --- one line ------------------------------------------------------------------------------------------

    def read(self, number: int, stripped: str) -> None:
        if stripped[0].isdecimal() and self.row(number, stripped):
            return  # most lines of a paste: read before any search, without building their evidence
        if stripped[0] != "#" and _UNHASHED.match(stripped):
            stripped = "# " + stripped  # a comment line whose "#" a Markdown render took (it made it a heading)
        evidence = LogLine(number, stripped[:MAX_EVIDENCE_CHARS])
        if stripped.startswith("#"):
            if stripped.strip("# "):
                self.comment(number, stripped, evidence)
            return
        if "_perf" in stripped and (command := _COMMAND.search(stripped)) is not None:
            if self.run.started:
                self.new_run(number, "a command line")
            self.run.command = _command_text(stripped, command.start("cmd"))
            self.run.settings.extend(
                NcclSetting(m["name"], m["value"], "command line", evidence) for m in _ASSIGN.finditer(stripped)
            )
        elif stripped.startswith("rccl-tests"):
            self.run.flavour = "rccl-tests"
            self.run.version = self.run.version or stripped
        elif _FAILURE_WORDS.search(stripped) and self.failure(stripped, evidence):
            pass
        elif "NCCL version" in stripped and (version := _NCCL_VERSION.search(stripped)) is not None:
            self.run.nccl_version = self.run.nccl_version or version["version"]
        else:
            if self.run.in_table:
                self.issues.append(ParseIssue(number, "ignored", f"not a table row (MPI/NCCL noise?): {stripped[:80]}"))
            return
        self.printed.append((number, stripped))
        self.run.last = (number, stripped)

    def comment(self, number: int, stripped: str, evidence: LogLine) -> None:
        run = self.run
        body = stripped.lstrip("#").strip()
        if m := _RANK.match(stripped):
            if run.rows or run.ended:
                self.new_run(number, "rank lines after a table")
                run = self.run
            run.ranks.append(
                RankInfo(
                    rank=int(m["rank"]),
                    local_rank=int(m["dev"]),
                    host=m["host"] or "unknown",
                    device=f"cuda:{m['dev']}",
                    gpu_index=int(m["dev"]),
                    pci_bus_id=_bus_id(m["bus"]),
                    name=m["name"] or Unsupported(SOURCE, "no device name printed"),
                    pid=int(m["pid"]) if m["pid"] else 0,
                )
            )
        elif (cols := _header_layout(stripped)) is not None:
            if run.rows or run.header_seen or run.ended:
                self.new_run(number, "a second table header")
                run = self.run
            self.layout = cols
            if not cols.typed:
                run.flavour = "mscclpp-test"
            run.in_table = True
            run.header_line = (number, stripped)
        elif body.startswith(("nThread", "nccl-tests version", "Collective test starting:")):
            if run.rows or run.ended or (body.startswith("nThread") and run.header_seen):
                self.new_run(number, f"'{body[:30]}'")
                run = self.run
            if (params := _PARAMETERS.match(stripped)) is not None:
                run.params_seen = True
                run.gpus_per_process = int(params["threads"]) * int(params["gpus"])
            if body.startswith("nccl-tests version"):
                run.version = body
                if (v := _TESTS_VERSION.search(body)) is not None:
                    run.nccl_version = run.nccl_version or _nccl_version_code(int(v["library"]))
            elif body.startswith("Collective test starting:"):
                run.collective = body.split(":", 1)[1].strip()
        elif body.startswith("Collective test concluded:"):
            run.collective = run.collective or body.split(":", 1)[1].strip()
            run.in_table, run.ended = False, True
        elif body.startswith("Avg bus bandwidth"):
            if isinstance(run.avg, float):
                self.new_run(number, "a second footer")
                run = self.run
            value = _footer_value(body)
            if value is not None and math.isfinite(value) and value >= 0:
                run.avg = value
            elif value is not None:
                run.avg = Unsupported(
                    SOURCE, f"the footer's average {body.split(':', 1)[1].split()[0]!r} is not a figure"
                )
            run.in_table, run.ended = False, True
        elif body.startswith("Out of bounds values"):
            if run.ended or isinstance(run.oob, int):
                self.new_run(number, "a second footer")
                run = self.run
            if (m := _OOB.search(body)) is not None:
                run.oob, run.oob_line = int(m["count"]), evidence
                if run.oob > 0 or m["state"] == "FAILED":
                    run.failures.append(
                        _failure("data-check", body, "", "", NOT_PRINTED_HOST, NOT_PRINTED_PID, evidence)
                    )
            run.in_table = False
        elif body.startswith("error:"):
            run.failures.append(
                _failure("nccl", body.split(":", 1)[1].strip(), "", "", NOT_PRINTED_HOST, NOT_PRINTED_PID, evidence)
            )
        elif (version := _NCCL_VERSION.search(body)) is not None:
            run.nccl_version = run.nccl_version or version["version"]
        else:
            self.printed.append((number, stripped))
            run.last = (number, stripped)
            return
        self.printed.append((number, stripped))
        run.last = (number, stripped)

    def failure(self, stripped: str, evidence: LogLine) -> bool:
        """A failure line of nccl-tests (its own CUDA/NCCL checks, its timeout, its trace when unwinding)."""
        run = self.run
        if (m := _FAILURE.search(stripped)) is not None:
            message, _, detail = m["body"].partition(" / ")
            kind = "nccl" if m["what"] == "NCCL" else "cuda"
            host: Probed[str] = m["host"] if m["host"] else NOT_PRINTED_HOST
            run.failures.append(
                _failure(kind, message.strip(), detail.strip(), m["where"], host, NOT_PRINTED_PID, evidence)
            )
            self.row_before_failure(stripped[: m.start()], evidence)
            return True
        if (m := _TRACE.search(stripped)) is not None:
            pid: Probed[int] = int(m["pid"]) if m["pid"] else NOT_PRINTED_PID
            for known in reversed(run.failures):
                if known.host == m["host"] and not isinstance(known.pid, int) and isinstance(pid, int):
                    run.failures[run.failures.index(known)] = dataclasses.replace(known, pid=pid)
                    return True
                if known.host == m["host"] and known.kind != "test":
                    return True  # a further trace line of a failure already read
            run.failures.append(_failure("test", "Test failure", "", m["where"], m["host"], pid, evidence))
            return True
        if (m := _TIMEOUT.search(stripped)) is not None:
            run.failures.append(
                _failure(
                    "timeout", f"no progress for {m['seconds']} s", "", m["where"], m["host"], NOT_PRINTED_PID, evidence
                )
            )
            return True
        if (m := _GPU_COUNT.search(stripped)) is not None:
            run.failures.append(_failure("gpus", m.group(0), "", "", NOT_PRINTED_HOST, NOT_PRINTED_PID, evidence))
            return True
        return False

    def row_before_failure(self, before: str, evidence: LogLine) -> None:
        """A row the failure cut in two (``2097152 32768 float none -1 node0: Test CUDA failure ...``): its size
        is where the run stopped; the row holds no figure."""
        tokens = before.split()
        if len(tokens) >= 4 and tokens[0].isdecimal() and tokens[1].isdecimal() and tokens[2].lower() in _TYPES:
            self.issues.append(
                ParseIssue(
                    evidence.line, "recovered", f"the run failed in the row for {tokens[0]} bytes; no figure in it"
                )
            )

    def row(self, number: int, stripped: str) -> bool:
        """A table row into the current run (or the next, when the sizes restart); False when it is no row."""
        run = self.run
        read = _data_row(stripped, self.layout, number, self.issues)
        if read is None:
            return False
        if isinstance(read, RowProblem):
            run.problems.append(read)
            self.issues.append(ParseIssue(number, "recovered", read.message))
        else:
            row, series, inplace_problem, check_failed = read
            if check_failed:
                run.failures.append(
                    _failure(
                        "data-check", check_failed, "", "", NOT_PRINTED_HOST, NOT_PRINTED_PID, _line(number, stripped)
                    )
                )
            if inplace_problem is not None:
                run.problems.append(inplace_problem)
                self.issues.append(ParseIssue(number, "recovered", inplace_problem.message))
            if run.ended and run.rows:
                self.new_run(number, "rows after the footer")
                run = self.run
            elif row.size_bytes < run.last_size.get(series, -1) and not _interleaved_one_rank_runs(run, row):
                self.new_run(number, f"the size column restarts at {row.size_bytes} bytes")
                run = self.run
            earlier = run.seen.get((series, row.size_bytes))
            if earlier is not None:
                self.repeated(run, row, number, earlier, _line(number, stripped))
            else:
                run.rows.append((row, number, series))
                run.seen[series, row.size_bytes] = (row, number)
                run.last_size[series] = row.size_bytes
        run.in_table = True
        run.last = (number, stripped)
        self.printed.append((number, stripped))
        return True

    def repeated(self, run: _Run, row: BenchRow, number: int, earlier: tuple[BenchRow, int], evidence: LogLine) -> None:
        """The same size twice in one run: the same figures are a line pasted twice; other figures judge neither."""
        first, first_line = earlier
        if first_line in run.conflicted:
            return  # its size is already left out
        if first.one_rank and row.one_rank:
            self.issues.append(
                ParseIssue(
                    number,
                    "ignored",
                    f"the row for {row.size_bytes} bytes repeats line {first_line}'s size: {ONE_RANK_REPEAT}",
                )
            )
            return
        if _figures(first) == _figures(row):
            self.issues.append(
                ParseIssue(number, "ignored", f"the row for {row.size_bytes} bytes repeats line {first_line}")
            )
            return
        if row.size_bytes == 0:
            # a size smaller than one element per rank rounds down to 0 (reduce_scatter, all_gather, alltoall
            # over many ranks), so nccl-tests prints a 0-byte row for each such size: times of nothing, not a conflict
            self.issues.append(
                ParseIssue(
                    number, "ignored", f"another 0-byte row (line {first_line} is one): a size under one element"
                )
            )
            return
        run.rows = [(r, n, k) for r, n, k in run.rows if n != first_line]  # rare: once per conflicting size
        run.conflicted.add(first_line)
        problem = RowProblem(
            "conflict",
            row.size_bytes,
            f"{row.size_bytes} bytes appears twice with other figures (line {first_line}: busbw "
            f"{first.busbw_gbps:g} GB/s, line {number}: {row.busbw_gbps:g} GB/s); neither is judged",
            evidence,
        )
        run.problems.append(problem)
        self.issues.append(ParseIssue(number, "recovered", problem.message))

    # --- one run's result ------------------------------------------------------------------------------------

    def note_cut_device_list(self, run: _Run) -> None:
        """Say so when a process lists fewer GPUs than its parameters give it: the paste stops in its device list
        (nThread 1 nGpus 8 and six '#  Rank' lines), so the GPUs it shows are not all the run's."""
        per_pid = collections.Counter(r.pid for r in run.ranks if r.pid)
        short = {pid: n for pid, n in per_pid.items() if n < run.gpus_per_process}
        if self.ends_in_device_list(run) and not short:
            self.issues.append(
                ParseIssue(
                    0,
                    "excerpt",
                    f"{ELIDED}: the paste ends in the run's device list (its last line is rank "
                    f"{run.ranks[-1].rank}'s), so how many GPUs the run had is not shown",
                )
            )
        numbers = [r.rank for r in run.ranks]
        gap = next(((a, b) for a, b in itertools.pairwise(numbers) if b > a + 1), None)
        if gap is not None:
            self.issues.append(
                ParseIssue(
                    0,
                    "excerpt",
                    f"{ELIDED}: the device list goes from rank {gap[0]} to rank {gap[1]}, so the ranks between are "
                    "not shown and the GPUs they drive are not judged",
                )
            )
        if run.gpus_per_process and short:
            pid, shown = next(iter(short.items()))
            self.issues.append(
                ParseIssue(
                    0,
                    "excerpt",
                    f"{ELIDED}: each process of the run drives {run.gpus_per_process} GPU(s) (its nThread x nGpus) "
                    f"and process {pid} lists {shown}; the GPUs it leaves out are not judged",
                )
            )

    def ends_in_device_list(self, run: _Run) -> bool:
        """Whether the paste's last line is one of the run's '#  Rank' lines: the list may go on past the cut."""
        if not run.ranks or run.rows or run.header_seen or run.failures or run.ended:
            return False
        last = max((x for x in (run.last, run.printed_last) if x is not None), default=None)
        return last is not None and last[0] == self.last_line_number and "Rank" in last[1]

    def result(self, run: _Run, fallback: str) -> BenchResult:
        self.note_cut_device_list(run)
        if not run.header_seen and self.layout is None and run.rows:
            self.issues.append(ParseIssue(0, "excerpt", "no column header: assumed time/algbw/busbw/#wrong per half"))
        collective = (
            run.collective
            or _collective_from(run.command)  # the program it ran, named on the pasted command line
            or fallback
            or _collective_from_rows(run.rows, self.issues)
            or _collective_from(self.text)
            or "all_reduce_perf"
        )
        rows = [r for r, _n, _k in run.rows]
        failures = tuple(_placed(f, run.ranks) for f in run.failures)
        status = (
            "failed"
            if any(f.kind != "data-check" for f in failures)
            else "complete"
            if isinstance(run.avg, float)
            else "partial"
        )
        result = _result(run.ranks, rows, collective, run.flavour, run.version, run.avg, run.oob, self.issues)
        result = dataclasses.replace(
            result,
            status=status,
            nccl_version=run.nccl_version or Unsupported(SOURCE, "no NCCL version line in the paste"),
            command=run.command or Unsupported(SOURCE, "no command line in the paste"),
            settings=tuple(run.settings),
            failures=failures,
            row_problems=tuple(run.problems),
            last_output=_last_printed(run),
            table_header=_line(*run.header_line)
            if run.header_line is not None
            else Unsupported(SOURCE, "the run printed no table header"),
        )
        if not run.ranks and rows and all(r.one_rank for r in rows):
            said = "1 rank per run, from the rows' busbw of 0 beside a non-zero algbw (the rank lines were not pasted)"
            result = dataclasses.replace(result, world_size=1, notes=(*result.notes, said))
        elif not run.ranks and (counted := ranks_from_rows(rows, result.collective)) is not None:
            across = ": a run across nodes, as no node holds more than 16 GPUs" if counted > 16 else ""
            said = f"{counted} ranks, from the rows' busbw/algbw (the rank lines were not pasted){across}"
            result = dataclasses.replace(result, world_size=counted, notes=(*result.notes, said))
        ran = algorithm_in(self.text, max((r.size_bytes for r in rows), default=0))
        if ran is not None:
            algo, evidence = ran
            result = dataclasses.replace(
                result, environment={**result.environment, ALGORITHM_KEY: algo, ALGORITHM_EVIDENCE_KEY: evidence}
            )
        return result


MAX_EVIDENCE_CHARS = 300
NOT_PRINTED_HOST = Unsupported(SOURCE, "the line names no host")
NOT_PRINTED_PID = Unsupported(SOURCE, "the line names no pid")
MAX_FIGURE = 1e6
"""No link carries a million GB/s, and no collective takes a million seconds (10^12 us): a figure above is not a
measurement but damage (``1e308``)."""
MAX_SIZE_BYTES = 1 << 50

_FAILURE = re.compile(
    r"(?:(?P<host>[^\s:]+): )?(?:Test )?(?P<what>CUDA|Cuda|NCCL) failure (?P<where>[\w./-]+:\d+) '(?P<body>.*)'"
)
_TRACE = re.compile(r"\.\. (?P<host>\S+?)(?: pid (?P<pid>\d{1,10}))?: Test failure (?P<where>[\w./-]+:\d+)")
_TIMEOUT = re.compile(r"(?P<host>\S+): Test timeout \((?P<seconds>\d+)s\) (?P<where>[\w./-]+:\d+)")
_GPU_COUNT = re.compile(r"Invalid number of GPUs: \d+ requested but only \d+ were found")
_OOB = re.compile(r"Out of bounds values\s*:\s*(?P<count>\d{1,12})\s*(?P<state>OK|FAILED)?")
_TESTS_VERSION = re.compile(r"(?:nccl-library=|ncclGetVersion=)(?P<library>\d{4,6})\b")
_NCCL_VERSION = re.compile(r"\bNCCL version (?P<version>\d+\.\d+\.\d+)")
# A command line: the *_perf program, maybe after a shell prompt, a launcher and NCCL_* assignments.
_COMMAND = re.compile(
    r"(?P<cmd>(?:(?:mpirun|mpiexec|srun|torchrun|env|sudo|numactl)\b.*?)?(?:[\w.~/-]*/)?\w+_perf)(?:\s|$)"
)
_FAILURE_WORDS = re.compile(r"failure|Test timeout|Invalid number of GPUs")
_ENV_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_ASSIGN = re.compile(r"(?<![\w-])(?P<name>NCCL_[A-Z0-9_]+)=(?P<value>[^\s'\"]+)")


def _command_text(line: str, start: int) -> str:
    """The command from a pasted prompt line: the program, with the ``NAME=value`` assignments typed before it
    (a shell prompt such as ``(base) root@node:~/nccl-tests#`` is left out)."""
    tokens = line[:start].split()
    keep = 0
    while keep < len(tokens) and _ENV_WORD.fullmatch(tokens[len(tokens) - 1 - keep]):
        keep += 1
    before = " ".join(tokens[len(tokens) - keep :]) if keep else ""
    return f"{before} {line[start:]}".strip()


def _nccl_version_code(code: int) -> str:
    """NCCL's version number as its library reports it (``22807`` is 2.28.7; before 2.9, ``2708`` is 2.7.8)."""
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def _footer_value(body: str) -> float | None:
    tail = body.split(":", 1)[1].split() if ":" in body else []
    return _float_or_none(tail[0]) if tail else None


def _failure(
    kind: str, message: str, detail: str, where: str, host: Probed[str], pid: Probed[int], evidence: LogLine
) -> RunFailure:
    number = cuda_error_number(f"{message} {detail}") if kind in ("cuda", "nccl", "gpus") else None
    return RunFailure(
        kind=kind,
        message=message,
        detail=detail,
        source_location=where,
        host=host,
        pid=pid,
        rank=Unsupported(SOURCE, "the line names no rank"),
        cuda_error=number if number is not None else Unsupported(SOURCE, "no CUDA error named"),
        evidence=evidence,
    )


def _placed(failure: RunFailure, ranks: list[RankInfo]) -> RunFailure:
    """The rank that printed a failure, when its host and pid (or its host alone) name one rank."""
    if not isinstance(failure.host, str):
        return failure
    on_host = [r for r in ranks if r.host == failure.host]
    if isinstance(failure.pid, int):
        on_host = [r for r in on_host if r.pid == failure.pid] or on_host
    if len(on_host) == 1:
        return dataclasses.replace(failure, rank=on_host[0].rank)
    return failure


SHARE_OF_RANKS = {"all_reduce": 2.0, "all_gather": 1.0, "reduce_scatter": 1.0, "alltoall": 1.0}
"""busbw = algbw x factor x (n-1)/n for n ranks, as nccl-tests computes busbw (doc/PERFORMANCE.md): the rows of a
run whose rank lines were not pasted still say how many ranks it had."""
PRINTED_HALF_UNIT = 0.005
"""nccl-tests prints bandwidths with two decimals: each figure is known to half of 0.01."""


_MSCCLPP_TYPE = "int32"
"""mscclpp-test prints no type column: its collectives move ``int`` elements (test/mscclpp-test/common.cc)."""
_ONE_HALF = _Layout(False, ["time", "algbw", "busbw", "#wrong"])
"""An mscclpp-test row, its type put in: the figures of the one half it ran."""
_COLUMNS = ["time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"]
_COLUMNS_1X = ["time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"]
"""A row's columns after its size, count, type (and redop, root) without a header: today's and nccl-tests 1.x's."""
_MAX_ERROR = re.compile(r"\d(?:\.\d+)?e[+-]\d+")


def _interleaved_one_rank_runs(run: _Run, row: BenchRow) -> bool:
    """Rows of one-rank runs that several processes print at once (mpirun without MPI in nccl-tests): their sizes
    interleave, and a smaller size after a larger one is another process's row, not another run."""
    return row.one_rank and all(r.one_rank for r, _n, _k in run.rows)


def ranks_from_rows(rows: list[BenchRow], collective: str) -> int | None:
    """The rank count the rows' busbw/algbw ratio names, when every row precise enough to tell names the same one.

    With s = (n-1)/n, n = 1/(1-s) and an error in s grows n's by n squared: a row is used only when its printed
    figures pin n to within half a rank.
    """
    factor = SHARE_OF_RANKS.get(collective)
    if factor is None:
        return None
    counts = set()
    for row in rows:
        if row.algbw_gbps <= 0 or row.busbw_gbps <= 0:
            continue
        share = row.busbw_gbps / row.algbw_gbps / factor
        if not 0 < share < 1:
            return None
        n = 1 / (1 - share)
        error = n * n * share * (PRINTED_HALF_UNIT / row.busbw_gbps + PRINTED_HALF_UNIT / row.algbw_gbps)
        if error >= 0.45:
            continue  # too few digits to tell this row's rank count
        if abs(n - round(n)) > max(error, 0.02):
            return None  # not a whole rank count: not the ratio of a run's own rows
        counts.add(round(n))
    if len(counts) != 1:
        return None
    (n,) = counts
    return n if n >= 2 else None


def _last_printed(run: _Run) -> LogLine | Unsupported:
    """The last line the run printed, of any program: where a run that stopped stopped (NCCL's lines are its own)."""
    last = max((x for x in (run.last, run.printed_last) if x is not None), default=None)
    return _line(*last) if last is not None else Unsupported(SOURCE, "nothing printed")


def _figures(row: BenchRow) -> tuple[object, ...]:
    return (row.time_us, row.algbw_gbps, row.busbw_gbps, row.wrong)


ALGORITHM_KEY = "nccl_algorithm"
"""``BenchResult.environment`` key: the all-reduce algorithm the input shows NCCL ran at its largest size."""
ALGORITHM_EVIDENCE_KEY = "nccl_algorithm_evidence"
"""``BenchResult.environment`` key: the line that shows it (``line 52: ...``)."""

# NCCL_DEBUG_SUBSYS=TUNING, one line per collective: "[AllReduce: ]8589934592 Bytes -> Algo 1 proto 2 time 27.0"
# (NVIDIA/nccl#1453, #1595: "Algo 1 proto 2" is RING/SIMPLE); newer NCCL prints the names ("Algo RING").
_TUNING = re.compile(r"NCCL INFO\s+(?:(?P<func>\w+):\s+)?(?P<bytes>\d{1,19}) Bytes -> Algo (?P<algo>\w+) proto")
# NCCL's algorithm numbers (src/include/device.h): TREE 0, RING 1, COLLNET_DIRECT 2, COLLNET_CHAIN 3, NVLS 4,
# NVLS_TREE 5 (before 2.14 COLLNET was 2 and the list ended there).
_ALGO_IDS = {"0": "tree", "1": "ring", "2": "collnet", "3": "collnet", "4": "nvls", "5": "nvls_tree"}
_ALGO_ENV = re.compile(r"NCCL INFO\s+NCCL_ALGO set by environment to\s+(?P<value>\S+)")
_ALGO_ASSIGN = re.compile(r"(?<![\w-])NCCL_ALGO=(?P<value>[\w^,]+)")


def algorithm_in(text: str, largest_bytes: int) -> tuple[str, str] | None:
    """The all-reduce algorithm NCCL ran and the line that shows it, from what was pasted with the table.

    NCCL's TUNING lines for the largest size win (what ran where the plateau is read); then NCCL's own
    ``NCCL_ALGO set by environment to X`` (the ENV subsystem); then ``NCCL_ALGO=X`` on a pasted command line.
    None when nothing names one algorithm (NCCL chose; ``Ring,Tree`` or ``^NVLS`` leave it the choice).
    """
    tuned: dict[str, tuple[int, str]] = {}
    best = -1
    env_line: tuple[str, str] | None = None
    assign_line: tuple[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if "Bytes -> Algo" in line and (m := _TUNING.search(line)):
            if m["func"] and m["func"].lower() != "allreduce":
                continue
            size = int(m["bytes"])
            algo = _ALGO_IDS.get(m["algo"]) or normalize_algorithm(m["algo"])
            if algo and size >= best:
                if size > best:
                    tuned.clear()
                    best = size
                tuned.setdefault(algo, (number, line.strip()[:200]))
        elif "set by environment" in line and (m := _ALGO_ENV.search(line)):
            algo = normalize_algorithm(m["value"])
            env_line = (algo, f"line {number}: {line.strip()[:200]}") if algo else None
        elif "NCCL_ALGO=" in line and (m := _ALGO_ASSIGN.search(line)) and assign_line is None:
            algo = normalize_algorithm(m["value"])
            assign_line = (algo, f"line {number}: {line.strip()[:200]}") if algo else None
    if len(tuned) == 1 and best >= largest_bytes // 2:
        ((algo, (number, line)),) = tuned.items()
        return algo, f"line {number}: {line}"
    return env_line or assign_line


_NAMES = re.compile(
    r"(all_?reduce|all_?gather|reduce_?scatter|alltoall|broadcast|sendrecv|hypercube|gather|scatter|reduce)"
)


def _collective_from(text: str) -> str:
    m = _COLLECTIVE.search(text)
    if m:
        return f"{m.group(1)}_perf"
    n = _NAMES.search(text.lower())
    if n:
        word = n.group(1)
        word = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter"}.get(word, word)
        return f"{word}_perf"
    return ""


def _collective_from_rows(rows: list[tuple[BenchRow, int, tuple[str, str, str]]], issues: list[ParseIssue]) -> str:
    """Without a name, read the collective from what its rows print: ``redop none`` and root -1 is a data movement
    that reduces nothing. busbw equal to algbw is sendrecv; below it, all_gather and alltoall, which share the busbw
    factor (n-1)/n, so the figures are held to the same expectation whichever ran. Root 0 is a broadcast's."""
    series = {s for _r, _n, s in rows}
    if not series or any(redop != "none" for _t, redop, _root in series):
        return ""
    if all(root not in ("-1", "") for _t, _redop, root in series):
        issues.append(ParseIssue(0, "excerpt", "collective not named; redop 'none' with a root: read as broadcast"))
        return "broadcast_perf"
    moved = [r for r, _n, _s in rows if r.algbw_gbps > 0]
    if moved and all(abs(r.busbw_gbps - r.algbw_gbps) <= 0.01 * r.algbw_gbps for r in moved):
        issues.append(ParseIssue(0, "excerpt", "collective not named; redop 'none' and busbw equal to algbw: sendrecv"))
        return "sendrecv_perf"
    issues.append(
        ParseIssue(0, "excerpt", "collective not named; redop 'none': all_gather or alltoall (the same busbw factor)")
    )
    return "all_gather_perf"


def _data_row(
    line: str, layout: _Layout | None, number: int, issues: list[ParseIssue]
) -> tuple[BenchRow, tuple[str, str, str], RowProblem | None, str] | RowProblem | None:
    """A table row: the row, its series (type, redop, root), a problem with its in-place half and, in the old format,
    why its max error failed the data check ("" when it did not); a :class:`RowProblem` when its out-of-place figures
    are impossible; None when the line is no row."""
    tokens = line.split()
    one_half = layout is not None and not layout.typed
    if one_half and 5 <= len(tokens) <= 6:
        tokens = [*tokens[:2], _MSCCLPP_TYPE, *tokens[2:]]  # mscclpp-test: one half, of int32 elements
        layout = _ONE_HALF
    if len(tokens) < 6 or not tokens[0].isdecimal() or not tokens[1].isdecimal():
        return None
    # nccl-tests 1.x printed no redop column where the collective has none to name (size count type time ...)
    op_less = tokens[3].lower() not in _OPS and _float_or_none(tokens[3]) is not None
    if tokens[2].lower() not in _TYPES or (tokens[3].lower() not in _OPS and not op_less):
        return None
    rest = tokens[3:] if op_less else tokens[4:]
    # no header: the current format has a root column (8 + 1 tokens, or 4 + 1 when trimmed); the old one not
    has_root = False if op_less else layout.has_root if layout is not None else len(rest) % 4 == 1
    root = ""
    if has_root:
        if not re.fullmatch(r"-?\d+", rest[0]):
            return None
        root, rest = rest[0], rest[1:]
    names = layout.names if layout is not None else _COLUMNS
    if op_less and layout is None and len(rest) >= 4 and _MAX_ERROR.fullmatch(rest[3]):
        names = _COLUMNS_1X  # its max error (0e+00), not a count of wrong elements
    half = _half_width(names)
    oop, ip = rest[:half], rest[half : 2 * half]
    if len(oop) < 3:
        return None
    t, algbw, busbw = _float_or_none(oop[0]), _float_or_none(oop[1]), _float_or_none(oop[2])
    if t is None or algbw is None or busbw is None:
        return None
    size_text, count_text = tokens[0], tokens[1]
    if len(size_text) > 16 or int(size_text) > MAX_SIZE_BYTES:
        return RowProblem(
            "impossible", 0, f"the row's size {size_text[:40]!r} is not a possible size; left out", _line(number, line)
        )
    if len(count_text) > 16:  # the size is sound: name the column that is not
        message = f"the row for {size_text} bytes has the element count {count_text[:40]!r}, not a possible count"
        return RowProblem("impossible", int(size_text), f"{message}; left out", _line(number, line))
    size, count = int(size_text), int(count_text)
    why = "" if _sound(t, algbw, busbw) else _impossible(oop[:3])
    if why:
        message = f"the row for {size} bytes has {why}; left out of the figures"
        return RowProblem("impossible", size, message, _line(number, line))
    if len(rest) < 2 * half and not one_half:
        issues.append(ParseIssue(number, "recovered", "row trimmed: only the out-of-place half is present"))
    wrong_name = names[3] if len(names) > 3 else "#wrong"
    wrong = _wrong(oop[3] if len(oop) > 3 else None, wrong_name, tokens[2])
    ip_t, ip_algbw, ip_busbw = (_float_or_none(x) for x in ip[:3]) if len(ip) >= 3 else (None, None, None)
    ip_ok = ip_t is not None and ip_algbw is not None and ip_busbw is not None
    missing: Unsupported | Failed = Unsupported(SOURCE, "in-place half not in the input")
    problem = None
    if (
        ip_t is not None
        and ip_algbw is not None
        and ip_busbw is not None
        and not _sound(ip_t, ip_algbw, ip_busbw)
        and not _one_rank_in_place(busbw, ip_t, ip_algbw, ip_busbw)
    ):
        ip_why = _impossible(ip[:3])
        message = f"the in-place half of the row for {size} bytes has {ip_why}"
        problem = RowProblem("impossible", size, message, _line(number, line))
        missing, ip_ok = Failed(SOURCE, f"the in-place half has {ip_why}"), False
    row = BenchRow(
        size_bytes=size,
        count=count,
        dtype=tokens[2],
        time_us=t,
        algbw_gbps=algbw,
        busbw_gbps=busbw,
        wrong=wrong,
        inplace_time_us=ip_t if ip_ok and ip_t is not None else missing,
        inplace_busbw_gbps=ip_busbw if ip_ok and ip_busbw is not None else missing,
        inplace_wrong=_wrong(ip[3] if ip_ok and len(ip) > 3 else None, wrong_name, tokens[2]) if ip_ok else missing,
    )
    checked = ""
    if wrong_name == "error" and (over := _error_over_bound(tokens[2], oop, ip if ip_ok else [])) is not None:
        checked = (
            f"the row for {size} bytes reports a max error of {over[0]:g}, above nccl-tests' bound of {over[1]:g} for "
            f"{tokens[2]}: its data check failed there"
        )
    return row, (tokens[2].lower(), "" if op_less else tokens[3].lower(), root), problem, checked


_DELTA_MAX = {"half": 5e-2, "float16": 5e-2, "bfloat16": 5e-2, "float": 1e-5, "float32": 1e-5, "double": 1e-12,
              "float64": 1e-12}  # fmt: skip
"""nccl-tests' DeltaMaxValue: the largest deviation a row's result may have from the expected values before it counts
as wrong (src/common.cu; half was 1e-2 before 2.x); integers must match exactly. The old format prints that deviation
in its ``error`` column, not a count."""


def _error_over_bound(dtype: str, *halves: list[str]) -> tuple[float, float] | None:
    """The largest ``error`` a row's halves print above nccl-tests' bound for its type, and the bound (None within)."""
    bound = _DELTA_MAX.get(dtype.lower(), 0.0)
    errors = [v for half in halves if len(half) > 3 and (v := _float_or_none(half[3])) is not None and math.isfinite(v)]
    worst = max(errors, default=0.0)
    return (worst, bound) if worst > bound else None


def _one_rank_in_place(busbw: float, time_us: float, algbw: float, inplace_busbw: float) -> bool:
    """One rank's in-place half copies nothing: its time is the call's overhead, its algbw any size over it."""
    return busbw == 0 and inplace_busbw == 0 and time_us > 0 and math.isfinite(algbw)


def _line(number: int, line: str) -> LogLine:
    return LogLine(number, line.strip()[:MAX_EVIDENCE_CHARS])


_FIGURE_NAMES = ("time", "algbw", "busbw")


def _sound(time_us: float, algbw: float, busbw: float) -> bool:
    """The common case, in three comparisons (NaN fails them all): see :func:`_impossible` for why not."""
    return 0 < time_us <= MAX_FIGURE * 1e6 and 0 <= algbw <= MAX_FIGURE and 0 <= busbw <= MAX_FIGURE


def _impossible(figures: list[str]) -> str:
    """Why a row's time/algbw/busbw cannot be a measurement (NaN, inf, 1e308, negative, zero time); "" when sound."""
    for name, text in zip(_FIGURE_NAMES, figures, strict=False):
        value = float(text)
        if not math.isfinite(value):
            return f"{name} {text!r}, not a number"
        if value < 0:
            return f"a negative {name} ({text})"
        if value > MAX_FIGURE * (1e6 if name == "time" else 1):
            return f"{name} {text}, beyond any measurement"
        if name == "time" and value == 0:
            return "a time of 0"
    return ""


def _half_width(names: list[str]) -> int:
    """Columns per half: from the header (``time`` appears once per half), default 4."""
    starts = [i for i, n in enumerate(names) if n in ("time", "cputime")]
    if len(starts) >= 2:
        return starts[1] - starts[0]
    return 4


def _wrong(token: str | None, column: str, dtype: str = "") -> int | Unsupported:
    """The row's count of wrong elements; in the old format (an ``error`` column, the largest deviation) 0 when the
    deviation is within the bound nccl-tests holds the type to, as nccl-tests itself counts it."""
    if token is None:
        return Unsupported(SOURCE, "#wrong column not in the input")
    if token.upper() == "N/A":
        return Unsupported(SOURCE, "data check disabled (-c 0): #wrong is N/A")
    value = _float_or_none(token)
    if value is None or not math.isfinite(value) or value < 0:
        return Unsupported(SOURCE, f"unreadable #wrong {token[:40]!r}")
    if column == "error":  # old nccl-tests: the maximum deviation, not a count
        if value == 0 or value <= _DELTA_MAX.get(dtype.lower(), 0.0):
            return 0
        return Unsupported(SOURCE, f"old format reports a max error {token}, above the bound for {dtype or 'its type'}")
    return int(value)


def _result(
    ranks: list[RankInfo],
    rows: list[BenchRow],
    collective: str,
    flavour: str,
    version: str,
    avg: float | Unsupported,
    oob: int | Unsupported,
    issues: list[ParseIssue],
    *,
    prints_ranks: bool = True,
) -> BenchResult:
    rows = sorted(rows, key=lambda r: r.size_bytes)
    curve = [(r.size_bytes, r.busbw_gbps) for r in rows]
    plat, top = plateau(curve), peak(curve)
    world = len(ranks) or 0
    if not ranks and prints_ranks:
        issues.append(ParseIssue(0, "excerpt", "no '#  Rank' lines: ranks, hosts and devices unknown"))
    hosts = tuple(dict.fromkeys(r.host for r in ranks))
    group = BenchGroup(
        name="all",
        kind="all",
        ranks=tuple(r.rank for r in ranks),
        gpus=tuple(f"{r.host}:{r.device}" for r in ranks),
        rows=tuple(rows),
        plateau_busbw_gbps=plat[1] if plat else Unsupported(SOURCE, "no size >= 1 MiB in the input"),
        plateau_size_bytes=plat[0] if plat else Unsupported(SOURCE, "no size >= 1 MiB in the input"),
        peak_busbw_gbps=top[1] if top else Unsupported(SOURCE, "no rows"),
        peak_size_bytes=top[0] if top else Unsupported(SOURCE, "no rows"),
        expected_busbw_gbps=Unsupported(SOURCE, "imported run: no machine model"),
    )
    name = collective.removesuffix("_perf")
    return BenchResult(
        source=SOURCE,
        collective=name,
        backend={"rccl-tests": "rccl", "mscclpp-test": "mscclpp"}.get(flavour, "nccl"),
        world_size=world,
        hosts=hosts,
        ranks=tuple(ranks),
        groups=(group,),
        status="complete" if not isinstance(avg, Unsupported) else "partial",
        version=version,
        avg_busbw_gbps=avg,
        out_of_bounds=oob,
        notes=("nccl-tests' 'Avg bus bandwidth' is a mean over every size (and both halves); the plateau is the gate",),
    )


_JSON_FIGURES = ("time", "alg_bw", "bus_bw")


def _parse_json(text: str, name: str) -> NcclTestsParse:
    try:
        doc: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NcclTestsParseError(f"nccl-tests JSON is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise NcclTestsParseError("this JSON has no nccl-tests 'results' list")
    issues: list[ParseIssue] = []
    ranks = [
        RankInfo(
            rank=int(d.get("rank", k)),
            local_rank=int(d.get("device", 0)),
            host=str(d.get("hostname", "unknown")),
            device=f"cuda:{int(d.get('device', 0))}",
            gpu_index=int(d.get("device", 0)),
            pci_bus_id=_bus_id(str(d.get("device_hex", ""))),
            name=str(d.get("device_info", "")) or Unsupported(SOURCE, "no device_info"),
            pid=int(d.get("pid", 0)),
        )
        for k, d in enumerate(doc.get("devices") or [])
        if isinstance(d, dict)
    ]
    rows: list[BenchRow] = []
    problems: list[RowProblem] = []
    for k, item in enumerate(doc["results"]):
        oop, ip = item.get("out_of_place"), item.get("in_place")
        first = oop if isinstance(oop, dict) else ip
        if not isinstance(first, dict):
            issues.append(ParseIssue(0, "ignored", f"results[{k}] has no timing"))
            continue
        figures = [str(first.get(key, first.get("cpu_time") if key == "time" else None)) for key in _JSON_FIGURES]
        absent = [key for key, f in zip(_JSON_FIGURES, figures, strict=True) if _float_or_none(f) is None]
        if absent:  # a figure the JSON lacks is not a zero: the row is left out and said
            named = ", ".join(absent)
            message = f"results[{k}] ({item.get('size')} bytes) has no number for {named}; left out of the figures"
            problems.append(RowProblem("missing", _jint(item.get("size")), message, LogLine(0, f"results[{k}]")))
            issues.append(ParseIssue(0, "recovered", message))
            continue
        if why := _impossible(figures):
            message = f"results[{k}] ({item.get('size')} bytes) has {why}; left out of the figures"
            problems.append(RowProblem("impossible", _jint(item.get("size")), message, LogLine(0, f"results[{k}]")))
            issues.append(ParseIssue(0, "recovered", message))
            continue
        missing = Unsupported(SOURCE, "in-place half not in the input")
        rows.append(
            BenchRow(
                size_bytes=int(item["size"]),
                count=int(item.get("count", 0)),
                dtype=str(item.get("type", "float")),
                time_us=_jfloat(first.get("time", first.get("cpu_time"))),
                algbw_gbps=_jfloat(first.get("alg_bw")),
                busbw_gbps=_jfloat(first.get("bus_bw")),
                wrong=_jwrong(first.get("nwrong")),
                inplace_time_us=_jfigure(ip, "time", "cpu_time") if isinstance(ip, dict) else missing,
                inplace_busbw_gbps=_jfigure(ip, "bus_bw") if isinstance(ip, dict) else missing,
                inplace_wrong=_jwrong(ip.get("nwrong")) if isinstance(ip, dict) else missing,
            )
        )
    if not rows:
        raise NcclTestsParseError("nccl-tests JSON has no result rows")
    avg_doc, oob_doc = doc.get("average_bus_bandwidth"), doc.get("out_of_bounds")
    avg: float | Unsupported = (
        _jfloat(avg_doc.get("bandwidth")) if isinstance(avg_doc, dict) else Unsupported(SOURCE, "no average")
    )
    oob: int | Unsupported = (
        int(oob_doc.get("count", 0)) if isinstance(oob_doc, dict) else Unsupported(SOURCE, "no out_of_bounds")
    )
    args = " ".join(str(a) for a in doc.get("args") or [])
    collective = _collective_from(args) or _collective_from(name) or "all_reduce_perf"
    version = f"nccl-tests JSON v{doc.get('version', '?')}, NCCL {doc.get('nccl_version', '?')}"
    result = _result(ranks, rows, collective, "nccl-tests", version, avg, oob, issues)
    result = dataclasses.replace(
        result,
        row_problems=tuple(problems),
        nccl_version=_json_nccl_version(doc.get("nccl_version")),
    )
    return NcclTestsParse(result, tuple(issues), "nccl-tests", "json", runs=(result,))


def _json_nccl_version(value: Any) -> str | Unsupported:
    """``nccl_version`` of ``-J`` output: NCCL's version code (``23007``), or a version string."""
    text = str(value) if value is not None else ""
    if text.isdecimal() and 4 <= len(text) <= 6:
        return _nccl_version_code(int(text))
    return text or Unsupported(SOURCE, "no nccl_version in the JSON")


def _jint(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


def _jfloat(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(value)  # "nan" is written as a string
    except (TypeError, ValueError):
        return 0.0


def _jfigure(half: dict[str, Any], key: str, fallback: str = "") -> float | Unsupported:
    """One figure of a JSON row's half, or why there is none (never a zero for a figure the JSON lacks)."""
    value = _float_or_none(str(half.get(key, half.get(fallback) if fallback else None)))
    return value if value is not None else Unsupported(SOURCE, f"the in-place half has no number for {key}")


def _jwrong(value: Any) -> int | Unsupported:
    if value is None:
        return Unsupported(SOURCE, "data check disabled (-c 0): nwrong is null")
    return int(_jfloat(value))


def machine_from_result(result: BenchResult) -> Machine:
    """The GPUs the run used on its first host, by CUDA device number (what ``analyze`` shows beside the rows).

    nccl-tests prints no links, so the machine has none: topology rules that need links are skipped."""
    host = result.hosts[0] if result.hosts else "unknown"
    seen: dict[int, RankInfo] = {}
    for r in result.ranks:
        if r.host == host and r.local_rank not in seen:
            seen[r.local_rank] = r
    gpus = tuple(Gpu(index=dev, name=r.name, pci_bus_id=r.pci_bus_id) for dev, r in sorted(seen.items()))
    return Machine(
        source="nccl-tests",
        gpus=gpus,
        host=Host(hostname=host if result.hosts else Unsupported(SOURCE, "no '#  Rank' lines")),
    )
