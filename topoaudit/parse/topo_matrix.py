"""Parse ``nvidia-smi topo -m`` text, as pasted into tickets, into a :class:`Machine`.

CONTRACT (used by the rest of topoaudit; keep it):

* ``parse_topo_matrix(text) -> TopoParse`` -- ``machine.source == "topo-matrix"``; one :class:`Gpu` per
  GPU row (``index``, ``cpu_affinity``, ``numa_nodes``, ``gpu_numa_id`` where present, else
  ``Unsupported("nvidia-smi topo -m", "<why>")``), one :class:`Nic` per NIC column (``label`` as the column
  names it, ``device`` from the NIC Legend), one :class:`Link` per unordered device pair (GPU-GPU, GPU-NIC,
  NIC-NIC) with ``a``/``b`` the labels ordered GPUs first then NICs by column order, ``code`` the verbatim
  cell (``NV18``, ``SOC``, ``PIX``, unknown vendor codes kept), ``level``/``nvlinks`` from
  :func:`level_from_code`, never an NVLink count nvidia-smi cannot print; ``text_columns`` for columns the
  paste adds to topo -m.
* Every recovered or ignored oddity is a :class:`ParseIssue` naming its 1-based input line.
* Input whose GPU matrix is ambiguous or absent raises :class:`TopoParseError` (exit 4) with the issues;
  a capture that holds nvidia-smi's own failure message says the capture failed, and why.
* What the paste cannot show is recorded: :attr:`TopoParse.missing_rows` (devices without a row),
  :attr:`TopoParse.unknown_links` (device pairs no cell describes), :attr:`TopoParse.header_inferred`, and
  :meth:`TopoParse.coverage` (``rows for 5 of 16 GPUs; 55 GPU pair(s) unknown``). GPU pairs left unknown are
  returned only with ``partial=True``; otherwise they refuse the input, saying what the paste shows, with
  the reading kept on the error (``TopoParseError.partial``).

HOW IT READS (and why):

* Cells are found by whitespace splitting, never by fixed columns: pastes come with tabs, expanded tabs,
  hand-compressed 2-space columns and values that overflow into the next column (``112-127 5``).
* Each line is cleaned first: ANSI colour codes, ``\r``, and quote/comment prefixes (``#``, ``>``) go; the
  header is found by its ``GPU0`` label wherever it sits on the line (a shell prompt may be glued in front).
  A matrix pasted without its header line is read when its rows name their columns: each row's ``X`` sits
  in its own column, so the GPU rows, a NIC row (``NIC1`` in column GPUs + 1) and the NVLink cells (only
  GPUs have them) give the GPU and NIC columns; the values after the cells are read in topo -m's order.
* A matrix cut after some rows keeps what its rows show: the cells of the rows present give their links
  to every column, the mirror gives the missing rows' links to the rows present, and the pairs among the
  missing rows are unknown (never guessed).
* vLLM's collect_env prints the matrix with blank CPU and NUMA Affinity columns; when the header and rows
  kept their spaces, a short row's values are placed under the titles they stand under, so a lone ``N/A``
  is the GPU NUMA ID and the blank columns are :class:`Unsupported`, not a cut row.
* The matrix is symmetric, so a damaged row (a missing cell, two cells glued like ``NV18NV18``, a row cut
  short, a missing GPU or NIC row, GPU0's included) is re-aligned against the mirrored cells of the intact
  rows. Only when every alignment consistent with the mirror gives the same GPU-GPU values is it recovered
  (with an issue); otherwise :class:`TopoParseError`. NIC pairs that no cell describes (pastes truncated
  after some NIC rows) get no :class:`Link` and one issue -- they are unknown, not guessed.
* Affinity columns are mapped by the header's names (``CPU Affinity``, ``NUMA Affinity`` / ``Node
  Affinity``, ``GPU NUMA ID``) in the header's order; ``N/A`` becomes :class:`Unsupported`. A column topo -m
  does not print (a re-typed ``NUMA``) is kept as text (:attr:`TopoParse.text_columns` and an ``ignored``
  issue), never guessed into a fact. A CPU list glued to the NUMA value after it (``0-23,48-710``, the row
  one value short) is split when the other rows settle the split, else the row's affinity is
  :class:`Failed` with the reason. A CPU list that is visibly cut (``-31,64-95``) or that is a textual
  fragment of another row's list (``2-63,96-127`` next to ``32-63,96-127``: the terminal ate a character)
  makes the whole CPU-affinity column :class:`Failed`, because the same cut hits every row and a plausible
  wrong CPU list is worse than none.
* A cell that cannot be what nvidia-smi printed is unknown, never a link: an NVLink count of 0 (nvidia-smi
  never prints ``NV0``) or above :data:`MAX_NVLINKS` (``NV99``), and the last cell of a paste that ends
  without a line break (``N`` of a cut ``NV12``). Such a cell is read from its mirror when the mirror is
  sound (with an issue naming the line); a GPU pair left without a readable cell refuses the input.
* Link codes are kept verbatim. Codes outside NVIDIA's legend (the MetaX clone's ``HT`` = MarsLink) map to
  ``PathLevel.UNKNOWN`` with an ``ignored`` issue quoting the paste's own legend: topoaudit does not count
  a link it cannot name as NVLink. ``nvidia-smi topo -p2p`` output (cells ``OK``/``CNS``/``GNS``...) is
  rejected: it has the same shape but other meaning.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from topoaudit.errors import InputError, NothingToJudge
from topoaudit.model.machine import Gpu, Link, Machine, Nic, level_from_code
from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.parse.cpulist import parse_cpu_list
from topoaudit.parse.text import capture_failure


@dataclass(frozen=True)
class ParseIssue:
    """Something in the input that was recovered, ignored, or made the input unusable."""

    line: int  # 1-based line in the input; 0 when not tied to one line
    action: str  # "recovered" | "ignored" | "ambiguous" | "excerpt" (a shape of a paste, nothing lost: no header line)
    # | "respaced" (the paste lost the spaces between cells; every cell is a code topo -m prints: nothing lost)
    # | "partial" (cut before its last rows: what it shows is judged, the rest is not known)
    # | "affinity" (a CPU or NUMA affinity value damaged by the paste: read where unambiguous, else recorded as failed;
    #   every link cell is read in full)
    message: str


@dataclass(frozen=True)
class TextColumn:
    """A column after the matrix that ``topo -m`` does not print (a hand-added ``NUMA``): kept verbatim."""

    title: str
    values: tuple[tuple[str, str], ...]  # (GPU label, text)


@dataclass(frozen=True)
class TopoParse:
    """A parsed ``topo -m``: the machine, what was recovered or refused on the way, and columns kept as text."""

    machine: Machine
    issues: tuple[ParseIssue, ...] = ()
    text_columns: tuple[TextColumn, ...] = ()
    # What the paste cannot show: devices with no row (a paste cut after some rows; their links come from the
    # mirrored cells where a row present has one), and device pairs no cell describes (left out of the links).
    missing_rows: tuple[str, ...] = ()
    unknown_links: tuple[tuple[str, str], ...] = ()
    header_inferred: bool = False  # no header line: the columns were named from the rows' labels

    def unknown_gpu_pairs(self) -> tuple[tuple[str, str], ...]:
        """The GPU pairs no cell describes (both rows missing from the paste)."""
        gpus = {g.label for g in self.machine.gpus}
        return tuple((a, b) for a, b in self.unknown_links if a in gpus and b in gpus)

    def coverage(self) -> str:
        """What the paste shows when it is not the whole matrix (``rows for 5 of 16 GPUs``); "" when whole."""
        gpus = {g.label for g in self.machine.gpus}
        unknown = self.unknown_gpu_pairs()
        if not unknown:
            return ""
        missing = [label for label in self.missing_rows if label in gpus]
        return f"rows for {len(gpus) - len(missing)} of {len(gpus)} GPUs; {len(unknown)} GPU pair(s) unknown"


class TopoParseError(InputError):
    """The GPU matrix cannot be read without guessing."""

    def __init__(self, message: str, issues: tuple[ParseIssue, ...] = ()) -> None:
        super().__init__(message)
        self.issues = issues
        self.partial: TopoParse | None = None  # a matrix cut after some GPU rows, as far as it was read


class TopoNothingToJudge(TopoParseError, NothingToJudge):
    """The matrix's rows are there, none of them a GPU's (an excerpt of its NIC rows): nothing about the GPUs' links."""


SOURCE = "nvidia-smi topo -m"

# The most NVLinks any NVIDIA GPU has (Hopper and Blackwell: 18, see topoaudit/catalog/gpus.toml), so the
# most a ``NV#`` cell can bond between two GPUs.
MAX_NVLINKS = 18

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Colour codes, a bare ESC, and the "[0m" left behind when a paste drops the ESC byte.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b|\[[0-9;]*m")
_QUOTE_PREFIX = re.compile(r"^\s*[#>]+")
# The header is the line where GPU0 is followed by another column name (or nothing: a 1-GPU box), which
# tells it apart from the GPU0 row, where GPU0 is followed by a cell (X, NV18, SYS...).
_HEADER = re.compile(r"GPU0(?=\s*$|\s+(?:GPU\d|NIC\d|CPU|NUMA|Node|\S*[a-z]))")
_COLUMN_LABEL = re.compile(r"GPU\d+|NIC\d+|[A-Za-z][\w.-]*\d")
_ROW_LABEL = re.compile(r"(GPU|NIC)(\d{1,5})")
_AFFINITY_NAME = re.compile(r"(CPU\s*Affinity)|(NUMA\s*Affinity|Node\s*Affinity)|(GPU\s*NUMA\s*ID)", re.I)
_CELL = re.compile(r"[A-Z][A-Z0-9#]*")
_GLUED = re.compile(r"(?:NV\d+|X|SYS|SOC|NODE|PHB|PXB|PIX){2,}")
_GLUED_PART = re.compile(r"NV\d+|X|SYS|SOC|NODE|PHB|PXB|PIX")
_NVIDIA_CODE = re.compile(r"X|NV\d+|SYS|SOC|NODE|PHB|PXB|PIX")
_NV_COUNT = re.compile(r"NV(\d+)")
# A cell that cannot be read as printed. Alone it fits any off-diagonal column; followed by the text that
# survived a cut (``?NV1``) it fits where the mirrored cell starts with that text. Real cells never start
# with ``?`` (see _CELL).
_UNREADABLE = "?"
# Beginnings of topo -m codes that are no code themselves: what a cut leaves of ``NV12``, ``NODE``, ``SYS``.
_CODE_STARTS = frozenset(
    code[:i] for code in ("NV", "SYS", "SOC", "NODE", "PHB", "PXB", "PIX") for i in range(1, len(code) + 1)
) - {"SYS", "SOC", "NODE", "PHB", "PXB", "PIX"}
_P2P_CODES = frozenset({"OK", "NS", "CNS", "GNS", "TNS", "DR", "U"})
_LEGEND_START = re.compile(r"^\s*(?:NIC\s+)?Legend\s*:", re.I)
_NIC_LEGEND = re.compile(r"\s*(NIC\d+)\s*:\s*(\S+)\s*")
_CODE_LEGEND = re.compile(r"\s*(\S+)\s+=\s+(.*?)\s*")
_AFFINITY_KINDS = ("cpu", "numa", "gpu_numa")
_TOKEN = re.compile(r"\S+")
_MARKDOWN_ROW = re.compile(r"^\s*\|(?:[^|\n]*\|){2,}\s*$")
_MARKDOWN_RULE = re.compile(r"^\s*\|(?:\s*:?-{3,}:?\s*\|)+\s*$")
_WIDE_GAP = re.compile(r"\t+|\s{2,}")
_NO_CPU_COLUMN = Unsupported(SOURCE, "no CPU Affinity column in the paste")
_NO_NUMA_COLUMN = Unsupported(SOURCE, "no NUMA Affinity column in the paste")
_NO_GPU_NUMA_COLUMN = Unsupported(SOURCE, "no GPU NUMA ID column in the paste (older drivers lack it)")
_NA_WHY = {
    "cpu": "",
    "numa": " (NUMA not exposed to the driver)",
    "gpu_numa": " (the GPU has no NUMA node of its own)",
}
_AFFINITY_TITLES = {"cpu": "CPU Affinity", "numa": "NUMA Affinity", "gpu_numa": "GPU NUMA ID"}


_TABBED_GPU_ROW = re.compile(r"^\s*GPU\d+\t")


def _tab_tail(line: str, matrix_cells: int) -> list[str]:
    """The cells after a row's label and matrix cells, split at its tabs (blank cells kept, trailing ones dropped)."""
    cells = [c.strip() for c in line.rstrip("\n").split("\t")]
    while cells and not cells[0]:
        cells.pop(0)
    tail = cells[1 + matrix_cells :]
    while tail and not tail[-1]:
        tail.pop()
    return tail


@dataclass
class _Row:
    """One matrix line as split, before the matrix is checked for symmetry and recovered."""

    label: str
    line: int
    cells: list[str]
    rest: list[str]
    unreadable: list[str] = field(default_factory=list)  # why cells were replaced by _UNREADABLE
    glue: str = ""  # why the CPU list is failed: glued to the next column beyond recognition

    def why_unreadable(self) -> str:
        """The reasons once each, with how many cells each hit (``'NV99' ... (7 cells)``)."""
        counts: dict[str, int] = {}
        for why in self.unreadable:
            counts[why] = counts.get(why, 0) + 1
        return "; ".join(f"{why} ({n} cells)" if n > 1 else why for why, n in counts.items())


@dataclass
class _Affinity:
    """One GPU's affinity values while they are being read (raw text kept to spot terminal cuts)."""

    cpu: Probed[tuple[int, ...]] = _NO_CPU_COLUMN
    numa: Probed[tuple[int, ...]] = _NO_NUMA_COLUMN
    gpu_numa: Probed[int] = _NO_GPU_NUMA_COLUMN
    cpu_text: str = ""
    cpu_cut: str = ""
    text: dict[str, str] = field(default_factory=dict)  # columns topo -m does not print, by title

    def set(self, kind: str, value: Probed[Any]) -> None:
        setattr(self, kind, value)


@dataclass
class _Header:
    """The header line: the device labels and the columns that follow the matrix."""

    line: int
    labels: list[str]
    # The columns after the matrix, in the header's order: (kind, title), kind one of _AFFINITY_KINDS or
    # "text" for a column topo -m does not print (a hand-added ``NUMA``), whose values are kept as text.
    trailing: list[tuple[str, str]] = field(default_factory=list)


def _clean(line: str) -> str:
    """Drop what pasting adds around a line (colour codes, ``#``/``>`` prefixes, a Markdown table's pipes) so
    splitting sees cells."""
    line = _QUOTE_PREFIX.sub("", _ANSI.sub("", line), count=1)
    if _MARKDOWN_ROW.match(line):
        # a matrix rendered as a Markdown table (a page or comment that shows it as HTML): its cells, tab-separated
        return "" if _MARKDOWN_RULE.match(line) else "\t".join(c.strip() for c in line.strip().strip("|").split("|"))
    return line


def _read_header(line: str, line_no: int) -> _Header | None:
    """The device columns, then the named columns after them (known affinity names, or any other title)."""
    m = _HEADER.search(line)
    if m is None:
        return None
    tail = line[m.start() :]
    labels: list[str] = []
    for token in _TOKEN.finditer(tail):
        if not _COLUMN_LABEL.fullmatch(token.group()):
            names = _trailing_columns(tail[token.start() :])
            if names is None:
                return None  # prose that happens to mention GPU0
            return _Header(line_no, labels, names)
        glued = _GLUED_LABELS.fullmatch(token.group())
        labels.extend((glued["a"], glued["b"]) if glued else (token.group(),))
    return _Header(line_no, labels)


_GLUED_LABELS = re.compile(r"(?P<a>(?P<stem>[A-Za-z][A-Za-z0-9]*?_?)\d+)(?P<b>(?P=stem)\d+)")
"""Two column labels whose gap a copy lost ("mlx5_2mlx5_3", "GPU6GPU7"): the same stem twice, each with its number."""


def _trailing_columns(text: str) -> list[tuple[str, str]] | None:
    """``CPU Affinity  NUMA Affinity`` -> kinds; other titles (split on tabs or wide gaps) kept as text.

    None when no affinity column is named and a title starts in lower case: that is a sentence that
    mentions GPU0 (``GPU0 is the one that fails``), not a header.
    """
    out: list[tuple[str, str]] = []

    def others(segment: str) -> None:
        out.extend(("text", title) for title in _WIDE_GAP.split(segment.strip()) if title)

    at = 0
    for name in _AFFINITY_NAME.finditer(text):
        others(text[at : name.start()])
        kind = _AFFINITY_KINDS[(name.lastindex or 1) - 1]
        out.append((kind, _AFFINITY_TITLES[kind]))
        at = name.end()
    others(text[at:])
    if all(kind == "text" for kind, _title in out) and any(not title[0].isupper() for _kind, title in out):
        return None
    return out


def _split_cells(tokens: Sequence[str], limit: int) -> tuple[list[str], list[str], list[str]]:
    """Leading link cells of a row (glued ``NV18NV18`` split), the rest (affinity, notes), the glued tokens."""
    cells: list[str] = []
    glued: list[str] = []
    i = 0
    while i < len(tokens) and len(cells) < limit:
        tok = tokens[i]
        parts = _cell_parts(tok)
        if parts is None:
            break
        if len(parts) > 1 or parts[0] != tok:
            glued.append(tok)
        cells.extend(parts)
        i += 1
    rest = [part for tok in tokens[i:] for part in _unglued_na(tok)]
    return cells, rest, glued


_NUMA_THEN_NA = re.compile(r"(\d{1,4})(N/A)")
"""A NUMA node glued to the GPU NUMA ID after it ("0N/A"): the two columns' single space lost in a copy."""


def _other_socket_splits(splits: list[tuple[str, str]], sibling_texts: set[str]) -> list[tuple[str, str]]:
    """The splits of a glued list that read as the other socket's CPUs: as many CPUs as a whole row's list, none of
    them a whole row's ("56-111,168-2231" beside "0-55,112-167": 112 CPUs and NUMA node 1)."""
    siblings = [set(_cpu_list_or_empty(text)) for text in sibling_texts]
    out = []
    for cpu, numa in splits:
        cpus = set(_cpu_list_or_empty(cpu))
        if (
            cpus
            and numa.isdecimal()
            and int(numa) < 16
            and all(len(cpus) == len(other) and not cpus & other for other in siblings)
        ):
            out.append((cpu, numa))
    return out


def _unglued_na(token: str) -> tuple[str, ...]:
    m = _NUMA_THEN_NA.fullmatch(token)
    return (m[1], m[2]) if m else (token,)


@functools.lru_cache(maxsize=512)
def _cell_parts(token: str) -> tuple[str, ...] | None:
    """The cells a token holds (two for a glued ``NV18NV18``), None when it is not a cell.

    Cached: a matrix repeats a handful of codes thousands of times.
    """
    if not _CELL.fullmatch(token):
        return None
    return tuple(_GLUED_PART.findall(token)) if _GLUED.fullmatch(token) else (token,)


@functools.lru_cache(maxsize=512)
def impossible_link_count(code: str) -> str | None:
    """Why an ``NV#`` cell cannot be real (``NV0``, ``NV99``); None for every other cell."""
    m = _NV_COUNT.fullmatch(code)
    if m is None:
        return None
    count = m.group(1)
    if count.startswith("0"):
        return f"{_quoted(code)} is not a possible NVLink count (nvidia-smi prints NV1 to NV{MAX_NVLINKS}, never 0)"
    if len(count) > 2 or int(count) > MAX_NVLINKS:
        return f"{_quoted(code)} is not a possible NVLink count (no GPU has more than {MAX_NVLINKS} NVLinks)"
    return None


def _fits(token: str, column: int, diag: int | None, mirror: str | None) -> bool:
    """May ``token`` be the cell of ``column``, given the mirrored cell (None when unknown)?"""
    if column == diag:
        return token == "X"
    if token.startswith(_UNREADABLE):
        return mirror is None or mirror.startswith(token[1:])
    return token != "X" and (mirror is None or mirror == token)


@dataclass
class _BareRow:
    """A matrix row found without a header: its label, line, link cells, the values after them, its diagonal."""

    label: str
    line: int
    cells: list[str]
    rest: list[str]
    diagonal: int


def _bare_rows(lines: Sequence[str]) -> list[_BareRow]:
    """Lines that are whole matrix rows on their own: a label, NVIDIA link cells, exactly one ``X``."""
    rows: list[_BareRow] = []
    for no, line in enumerate(lines, 1):
        if _LEGEND_START.match(line):
            break
        tokens = line.split()
        if len(tokens) < 3 or not _COLUMN_LABEL.fullmatch(tokens[0]):
            continue  # labels: GPUn, NICn, and the device names old drivers print (mlx5_0, bnxt_re0...)
        cells, rest, _glued = _split_cells(tokens[1:], len(tokens))
        if len(cells) < 2 or cells.count("X") != 1 or not all(_NVIDIA_CODE.fullmatch(c) for c in cells):
            continue
        rows.append(_BareRow(tokens[0], no, cells, rest, cells.index("X")))
    return rows


def _infer_header(lines: Sequence[str]) -> _Header | str:
    """The header a matrix pasted without its header line had, from its rows; why not (or "") when they cannot say.

    Each row names its own column by its ``X``: ``GPU3`` has it in column 3, ``NIC1`` in column (GPUs + 1), so a
    NIC row settles how many GPU columns there are. Without one, the GPU columns are those the GPU rows and the
    NVLink cells reach (only GPUs have NVLinks); a column left over that no row names is a GPU or a NIC whose
    row is missing, and that is not guessed. The values after the cells are read in topo -m's order: CPU
    Affinity, NUMA Affinity, GPU NUMA ID.
    """
    rows = _bare_rows(lines)
    if not rows:
        return ""
    counts: dict[int, int] = {}
    for row in rows:
        counts[len(row.cells)] = counts.get(len(row.cells), 0) + 1
    width = max(counts, key=lambda n: (counts[n], n))
    rows = [row for row in rows if len(row.cells) == width]
    named: dict[int, str] = {}
    gpus = nic_base = None
    for row in rows:
        m = _ROW_LABEL.fullmatch(row.label)
        if m and m.group(1) == "GPU" and int(m.group(2)) != row.diagonal:
            return f"the {row.label} row (line {row.line}) has its X in column {row.diagonal + 1}"
        if m and m.group(1) == "NIC":
            base = row.diagonal - int(m.group(2))
            if nic_base is not None and base != nic_base:
                return f"the NIC rows place their X inconsistently (line {row.line})"
            nic_base = base
        if named.get(row.diagonal, row.label) != row.label:
            return f"{named[row.diagonal]} and {row.label} both have their X in column {row.diagonal + 1}"
        named[row.diagonal] = row.label
    gpu_columns = [p for p, label in named.items() if label.startswith("GPU")]
    other_columns = [p for p, label in named.items() if not label.startswith("GPU")]
    reach = max(gpu_columns, default=-1)
    for row in rows:
        reach = max([reach, *(p for p, cell in enumerate(row.cells) if cell.startswith("NV"))])
    if nic_base is not None:
        gpus = nic_base
    elif other_columns:
        gpus = min(other_columns)
        if any(p not in named for p in range(reach + 1, gpus)):
            return f"columns {reach + 2}-{gpus} have no row and no NVLink cell: GPUs or NICs cannot be told"
    else:
        gpus = reach + 1
    if gpus < 1 or reach >= gpus or any(p >= gpus for p in gpu_columns) or any(p < gpus for p in other_columns):
        return "the GPU rows and the NIC rows overlap"
    labels = [f"GPU{i}" for i in range(gpus)]
    for p in range(gpus, width):
        if p in named:
            labels.append(named[p])
        elif nic_base is not None or not other_columns:
            labels.append(f"NIC{p - gpus}")
        else:
            return f"column {p + 1} has no row to name it"
    if not other_columns and nic_base is None and width > gpus and not _full_switch_board(rows, gpus):
        return f"columns {gpus + 1}-{width} have no row and no NVLink cell: GPUs or NICs cannot be told"
    extra = [len(row.rest) for row in rows if row.label.startswith("GPU")]
    kinds = _AFFINITY_KINDS[: min(max(extra, default=0), len(_AFFINITY_KINDS))]
    return _Header(rows[0].line - 1, labels, [(kind, _AFFINITY_TITLES[kind]) for kind in kinds])


SWITCH_BOARD_GPUS = 8
"""GPUs on an NVSwitch baseboard (HGX/DGX A100, H100, H200, B200): NV12/NV18 reaching GPU7 closes the GPU columns."""


def _full_switch_board(rows: list[_BareRow], gpus: int) -> bool:
    """The NVLink cells reach the eighth GPU of an NVSwitch baseboard (NV12 or NV18): the columns after it are NICs."""
    return gpus == SWITCH_BOARD_GPUS and any(c in ("NV12", "NV18") for row in rows for c in row.cells)


def _blank_after(lines: list[str], number: int) -> bool:
    """Whether nothing but blank lines follows line ``number`` (counted from 1): the paste stops there."""
    return not any(line.strip() for line in lines[number:])


def looks_like_topo_matrix(text: str) -> bool:
    """Cheap sniff: a header naming GPU0 and a GPU row under it (any GPU: a lost GPU0 row is recovered)."""
    header = None
    for no, raw in enumerate(_LINE_BREAK.split(text), 1):
        line = _clean(raw)
        if header is None:
            header = _read_header(line, no)
            continue
        tokens = line.split()
        if tokens and tokens[0].startswith("GPU") and tokens[0] in header.labels:
            cells, _, _ = _split_cells(tokens[1:], len(header.labels))
            others = {c for c in cells if c != "X"}
            # ``topo -p2p`` has the same shape with OK/CNS/GNS cells: not a topology.
            return bool(cells) and not (others and others <= _P2P_CODES)
    if header is not None:  # the header alone, the paste stopping there: recognised, nothing to judge
        labels = header.labels
        return len(set(labels)) == len(labels) >= 2 and _blank_after(_LINE_BREAK.split(text), header.line)
    # A capture of nvidia-smi's failure message is a topo -m capture that failed: it gets its own sentence.
    if capture_failure(text) is not None:
        return True
    # A matrix pasted without its header: rows that name their own columns.
    head = [_clean(raw) for raw in _LINE_BREAK.split(text[:200_000])]
    return isinstance(_infer_header(head), _Header)


def parse_topo_matrix(text: str, *, partial: bool = False) -> TopoParse:
    """Parse ``nvidia-smi topo -m`` output; see the module docstring for the contract.

    A matrix cut after some GPU rows leaves GPU pairs that no cell describes. With ``partial`` it is returned
    as read (:attr:`TopoParse.unknown_links`, :attr:`TopoParse.missing_rows`, :meth:`TopoParse.coverage`);
    without, it raises :class:`TopoParseError` saying what the paste shows, the reading kept in its
    ``partial`` attribute, since a judge that takes a missing pair for a missing NVLink would be wrong.
    """
    return _Parser(text, partial=partial).parse()


def _align(tokens: Sequence[str], mirror: Sequence[str | None], diag: int | None) -> list[set[str | None]] | None:
    """Every way to place a damaged row's cells among the columns, keeping their order.

    A cell may sit in column ``p`` only if it agrees with the mirrored cell (``X`` exactly on the diagonal);
    a column left without a cell, or holding an unreadable cell, takes the mirrored value, ``None`` when that
    is unknown too. Returns, per
    column, the set of values over all valid placements (a singleton means the column is determined), or
    ``None`` when no placement exists (the row contradicts its mirror). Two passes of reachability keep
    it O(columns x cells) instead of enumerating placements.
    """
    n, k = len(mirror), len(tokens)
    gap = ["X" if p == diag else mirror[p] for p in range(n)]
    if k == n:  # as many cells as columns: the one placement keeps every cell where it is
        if not all(_fits(tok, p, diag, mirror[p]) for p, tok in enumerate(tokens)):
            return None
        return [{gap[p] if tok.startswith(_UNREADABLE) else tok} for p, tok in enumerate(tokens)]
    fits = [[_fits(tok, p, diag, mirror[p]) for p in range(n)] for tok in tokens]
    reach = [[False] * (k + 1) for _ in range(n + 1)]
    reach[0][0] = True
    for p in range(n):
        for t in range(k + 1):
            if reach[p][t]:
                reach[p + 1][t] = True
                if t < k and fits[t][p]:
                    reach[p + 1][t + 1] = True
    if not reach[n][k]:
        return None
    back = [[False] * (k + 1) for _ in range(n + 1)]
    back[n][k] = True
    for p in range(n - 1, -1, -1):
        for t in range(k + 1):
            back[p][t] = back[p + 1][t] or (t < k and fits[t][p] and back[p + 1][t + 1])
    outcomes: list[set[str | None]] = []
    for p in range(n):
        outs: set[str | None] = set()
        for t in range(k + 1):
            if reach[p][t]:
                if back[p + 1][t]:
                    outs.add(gap[p])
                if t < k and fits[t][p] and back[p + 1][t + 1]:
                    outs.add(gap[p] if tokens[t].startswith(_UNREADABLE) else tokens[t])
        outcomes.append(outs)
    return outcomes


class _Parser:
    """One parse: the cleaned lines, the header, the rows, and the issues found on the way."""

    def __init__(self, text: str, partial: bool = False) -> None:
        self.text = text
        self.partial = partial
        self.lines = [_clean(raw) for raw in _LINE_BREAK.split(text)]
        # A paste that stops mid-line (no line break, no trailing blank) may have lost the end of its last cell.
        self.cut_line = len(self.lines) if text and not text[-1].isspace() else 0
        self.issues: list[ParseIssue] = []
        self.text_columns: list[TextColumn] = []
        self.cells: dict[str, dict[str, str]] = {}  # row label -> column label -> verbatim code
        self.unknown_links: list[tuple[str, str]] = []
        self.header_inferred = False
        self.header_line = 0
        self.tab_stops: dict[int, list[int] | None] = {}  # matrix cells -> a whole tabbed row's value stops

    # -- helpers -------------------------------------------------------------------------------------------
    def fail(self, line: int, message: str) -> TopoParseError:
        where = f"line {line}: " if line else ""
        self.issues.append(ParseIssue(line, "ambiguous", message))
        return TopoParseError(f"cannot read the nvidia-smi topo -m matrix: {where}{message}", self.sorted_issues())

    def failed_capture(self, message: str) -> TopoParseError:
        """nvidia-smi printed its failure instead of a matrix: say that, not "cannot read the matrix"."""
        self.issues.append(ParseIssue(0, "ambiguous", message))
        return TopoParseError(message, self.sorted_issues())

    def note(self, line: int, action: str, message: str) -> None:
        self.issues.append(ParseIssue(line, action, message))

    def sorted_issues(self) -> tuple[ParseIssue, ...]:
        return tuple(sorted(self.issues, key=lambda i: i.line))

    # -- the steps ------------------------------------------------------------------------------------------
    def parse(self) -> TopoParse:
        header = self.find_header()
        self.header_line = header.line
        self.check_header(header)
        rows = self.read_rows(header)
        gpu_labels = [x for x in header.labels if _ROW_LABEL.fullmatch(x) and x.startswith("GPU")]
        if not any(label in rows for label in gpu_labels):
            failure = capture_failure(self.text)
            if failure:
                raise self.failed_capture(failure)
            if rows:  # NIC rows only: they place the NICs, and say nothing of the links between GPUs
                self.issues.append(ParseIssue(header.line, "ambiguous", "NIC rows without the GPU rows"))
                raise TopoNothingToJudge(
                    f"an nvidia-smi topo -m excerpt of its NIC rows ({', '.join(rows)}) without the GPU rows: nothing "
                    "about the links between GPUs",
                    self.sorted_issues(),
                )
            if _blank_after(self.lines, header.line):  # the paste stops after its header
                self.issues.append(ParseIssue(header.line, "partial", "the header without a row under it"))
                raise TopoNothingToJudge(
                    "the header of an nvidia-smi topo -m matrix without its rows: nothing about the links between "
                    "GPUs; paste the rows below it",
                    self.sorted_issues(),
                )
            raise self.fail(header.line, "a header naming GPU0 but no GPU rows under it")
        self.resolve(header, rows, gpu_labels)
        nic_labels = [x for x in header.labels if x not in gpu_labels]
        nic_labels += [label for label in rows if label not in header.labels]
        links = self.links(gpu_labels + nic_labels, set(gpu_labels), header, rows)
        gpus = self.gpus(gpu_labels, header, rows)
        nics = self.nics(nic_labels, header.line)
        machine = Machine(source="topo-matrix", gpus=gpus, nics=nics, links=links)
        parsed = TopoParse(
            machine,
            self.sorted_issues(),
            tuple(self.text_columns),
            missing_rows=tuple(label for label in gpu_labels + nic_labels if label not in rows),
            unknown_links=tuple(self.unknown_links),
            header_inferred=self.header_inferred,
        )
        unknown_gpu_pairs = parsed.unknown_gpu_pairs()
        if unknown_gpu_pairs and not self.partial:
            missing = [label for label in gpu_labels if label not in rows]
            error = self.fail(
                max(r.line for r in rows.values()),
                f"the paste shows rows for {len(gpu_labels) - len(missing)} of {len(gpu_labels)} GPUs "
                f"({_label_ranges(missing)} have no row), so {len(unknown_gpu_pairs)} GPU pair(s) have no cell; "
                "a verdict on NVLink domains and TP groups needs every pair: paste the whole matrix",
            )
            error.partial = parsed
            raise error
        return parsed

    def find_header(self) -> _Header:
        for no, line in enumerate(self.lines, 1):
            header = _read_header(line, no)
            if header is not None:
                return header
        failure = capture_failure(self.text)
        if failure:
            raise self.failed_capture(failure)
        inferred = _infer_header(self.lines)
        if isinstance(inferred, _Header):
            self.header_inferred = True
            names = ", ".join(title for _kind, title in inferred.trailing) or "none"
            self.note(
                inferred.line + 1,
                "excerpt",
                f"no header line: the columns are named from the rows ({_label_ranges(inferred.labels)}, each row's "
                f"X on the diagonal) and the columns after the matrix in topo -m's order ({names})",
            )
            return inferred
        if inferred:
            raise self.fail(0, f"no header line naming GPU0, and the rows do not name their columns: {inferred}")
        raise self.fail(0, "no header line naming GPU0 (is this `nvidia-smi topo -m` output?)")

    def check_header(self, header: _Header) -> None:
        """GPU columns must be GPU0..GPUn-1 before any NIC column; otherwise the count itself is in doubt."""
        seen_nic = False
        for i, label in enumerate(header.labels):
            if label.startswith("GPU"):
                if seen_nic or label != f"GPU{i}":
                    raise self.fail(header.line, f"header columns are out of order at {label!r}: {header.labels}")
            else:
                seen_nic = True
        if len(set(header.labels)) != len(header.labels):
            raise self.fail(header.line, f"a column label repeats in the header: {header.labels}")

    def read_rows(self, header: _Header) -> dict[str, _Row]:
        """Rows from the header to the legend; junk in between is skipped, not fatal."""
        n = len(header.labels)
        columns = set(header.labels)
        rows: dict[str, _Row] = {}
        for no in range(header.line + 1, len(self.lines) + 1):
            line = self.lines[no - 1]
            tokens = line.split()
            if not tokens:
                continue
            if _LEGEND_START.match(line):
                break
            if _read_header(line, no) is not None:
                self.note(no, "ignored", "a second matrix header starts here; only the first matrix was read")
                break
            label = tokens[0]
            if label not in columns and not _ROW_LABEL.fullmatch(label):
                continue
            if label.startswith("GPU") and label not in columns:
                raise self.fail(
                    no,
                    f"row {label} but the header has GPU columns only up to "
                    f"{[x for x in header.labels if x.startswith('GPU')][-1]}: GPU counts disagree",
                )
            cells, rest, glued = _split_cells(tokens[1:], n + 1)
            if not cells:
                self.note(no, "ignored", f"line starts with {label} but has no link cells")
                continue
            if len(cells) > n and not any(_NVIDIA_CODE.fullmatch(c) for c in cells[n:]):
                rest = cells[n:] + rest  # a word after the last column ("NUMA 0" typed in by hand), not a link
                cells = cells[:n]
            if len(cells) > n:
                raise self.fail(no, f"{label} row has more cells than the header has columns ({n})")
            if glued:
                self.note(no, "respaced", f"{label} row: split glued cells {', '.join(glued)}")
            row = _Row(label, no, cells, rest)
            self.mark_unreadable(row, n)
            if label in rows:
                if rows[label].cells != cells:
                    raise self.fail(no, f"{label} row appears twice (lines {rows[label].line} and {no}) and differs")
                self.note(no, "ignored", f"{label} row repeated (first at line {rows[label].line})")
                continue
            rows[label] = row
        return rows

    def mark_unreadable(self, row: _Row, columns: int) -> None:
        """Replace cells that cannot be what nvidia-smi printed by _UNREADABLE, so the mirror decides them.

        The last cell of a row is cut when the paste ends right after it, or when the row is short and the
        cell is only the start of a code (``N`` of ``NV12``, ``NOD`` of ``NODE``).
        """
        for i, cell in enumerate(row.cells):
            why = impossible_link_count(cell)
            if why:
                row.cells[i] = _UNREADABLE
                row.unreadable.append(why)
        last = row.cells[-1]
        if row.rest or last == "X" or last.startswith(_UNREADABLE):
            return
        if row.line == self.cut_line:
            row.cells[-1] = _UNREADABLE + last
            row.unreadable.append(f"the paste ends inside the cell {_quoted(last)}")
        elif len(row.cells) < columns and last in _CODE_STARTS:
            row.cells[-1] = _UNREADABLE + last
            row.unreadable.append(f"the row ends inside the cell {_quoted(last)}")

    def resolve(self, header: _Header, rows: dict[str, _Row], gpu_labels: list[str]) -> None:
        """Fill ``self.cells``: intact rows as they are, damaged rows re-aligned against the mirror."""
        cols = header.labels
        index = {label: i for i, label in enumerate(cols)}
        damaged: list[_Row] = []
        for row in rows.values():
            diag = index.get(row.label)
            intact = not row.unreadable and len(row.cells) == len(cols) and _x_only_at(row.cells, diag)
            if intact:
                self.cells[row.label] = dict(zip(cols, row.cells, strict=True))
            else:
                damaged.append(row)
        gpu_cols = [index[g] for g in gpu_labels]
        pending = [r for r in damaged if r.label in gpu_labels]
        # A recovered GPU row can serve as the mirror of another damaged one: repeat until nothing moves.
        while pending:
            still = [r for r in pending if not self.realign(r, cols, index, gpu_cols, strict=True)]
            if len(still) == len(pending):
                row = still[0]
                raise self.fail(row.line, self.why_not(row, cols, index, gpu_cols))
            pending = still
        for row in damaged:
            if row.label not in gpu_labels and not self.realign(row, cols, index, gpu_cols, strict=False):
                raise self.fail(row.line, f"{row.label} row contradicts the GPU rows: {_shown(row.cells)}")

    def line_of_missing(self, label: str, header: _Header, rows: dict[str, _Row]) -> int:
        """Where a missing row would have been: after the rows of the columns before it."""
        index = {col: i for i, col in enumerate(header.labels)}
        before = [r.line for r in rows.values() if index.get(r.label, len(index)) < index[label]]
        return max(before, default=header.line) + 1

    def realign(self, row: _Row, cols: list[str], index: dict[str, int], gpu_cols: list[int], strict: bool) -> bool:
        mirror = [self.cells.get(col, {}).get(row.label) for col in cols]
        outcomes = _align(row.cells, mirror, index.get(row.label))
        if outcomes is None:
            return False
        if strict and any(len(outcomes[p]) != 1 or None in outcomes[p] for p in gpu_cols):
            return False
        unknown = []
        for col, outs in zip(cols, outcomes, strict=True):
            value = next(iter(outs)) if len(outs) == 1 else None
            if value is None:
                unknown.append(col)
            else:
                self.cells.setdefault(row.label, {})[col] = value
        diag = index.get(row.label)
        what = []
        if len(row.cells) != len(cols) or not _x_only_at(row.cells, diag):
            how = "cut short" if len(row.cells) < len(cols) else "misaligned"
            what.append(f" has {len(row.cells)} of {len(cols)} cells ({how})")
        if row.unreadable:
            what.append(f"{':' if not what else ''} {row.why_unreadable()}")
        detail = f"; cells for {', '.join(unknown)} unknown" if unknown else ""
        self.note(row.line, "recovered", f"{row.label} row{';'.join(what)}; filled from the mirrored cells{detail}")
        return True

    def why_not(self, row: _Row, cols: list[str], index: dict[str, int], gpu_cols: list[int]) -> str:
        mirror = [self.cells.get(col, {}).get(row.label) for col in cols]
        outcomes = _align(row.cells, mirror, index.get(row.label))
        cells = f"{len(row.cells)} of {len(cols)} cells"
        if row.unreadable:
            cells += f"; {row.why_unreadable()}"
        if outcomes is None:
            return f"{row.label} row ({cells}) contradicts the other rows: {_shown(row.cells)}"
        for p in gpu_cols:
            if outcomes[p] == {None}:
                return (
                    f"{row.label} row has {cells}; no readable cell gives the {row.label}-{cols[p]} link "
                    f"(its mirror in the {cols[p]} row is unreadable or missing)"
                )
            if len(outcomes[p]) != 1 or None in outcomes[p]:
                seen = sorted("unknown" if v is None else v for v in outcomes[p])
                return (
                    f"{row.label} row has {cells}; the {row.label}-{cols[p]} cell could be "
                    f"{' or '.join(seen)} and its mirror in the {cols[p]} row does not settle it"
                )
        return f"{row.label} row ({cells}) cannot be aligned"

    def links(self, devices: list[str], gpus: set[str], header: _Header, rows: dict[str, _Row]) -> tuple[Link, ...]:
        out: list[Link] = []
        unknown: list[tuple[str, str]] = []
        first_seen: dict[str, str] = {}
        cols = set(header.labels)
        gpu_codes: set[str] = set()
        codes: set[str] = set().union(*(row.values() for row in self.cells.values()))
        levels = {code: level_from_code(code) for code in codes}
        nvidia_codes = {code for code in codes if _NVIDIA_CODE.fullmatch(code)}
        row_of = [self.cells.get(device, {}) for device in devices]
        is_gpu = [device in gpus for device in devices]
        for i, a in enumerate(devices):
            row_a = row_of[i]
            for j in range(i + 1, len(devices)):
                b = devices[j]
                ab, ba = row_a.get(b), row_of[j].get(a)
                both_gpus = is_gpu[i] and is_gpu[j]
                if ab is not None and ba is not None and ab != ba:
                    line = rows[a].line if a in rows else 0
                    raise self.fail(
                        line,
                        f"{a}-{b} reads {ab} in the {a} row (line {line}) but {ba} in the {b} "
                        f"row (line {rows[b].line if b in rows else '?'})",
                    )
                code = ab if ab is not None else ba
                if code is None:  # neither row is in the paste (cut after some rows): unknown, not guessed
                    unknown.append((a, b))
                    continue
                if both_gpus:
                    gpu_codes.add(code)
                if code not in nvidia_codes:
                    first_seen.setdefault(code, a if ab is not None else b)
                level, nvlinks = levels[code]
                out.append(Link(a, b, code, level, nvlinks))
        if gpu_codes - {"X"} and gpu_codes - {"X"} <= _P2P_CODES:
            raise self.fail(
                header.line, "cells are P2P statuses (OK/CNS/GNS...): this is `nvidia-smi topo -p2p`, not `topo -m`"
            )
        legend = self.code_legend()
        for code, label in first_seen.items():
            meaning = f" (the paste's legend: {legend[code]!r})" if code in legend else ""
            line = rows[label].line if label in rows else header.line
            self.note(
                line,
                "ignored",
                f"link code {_quoted(code)} is not an NVIDIA topo code{meaning}; kept verbatim with level UNKNOWN",
            )
        gpu_unknown = [pair for pair in unknown if pair[0] in gpus and pair[1] in gpus]
        other_unknown = [pair for pair in unknown if not (pair[0] in gpus and pair[1] in gpus)]
        if gpu_unknown:
            self.note_unknown_gpu_links(gpu_unknown, [g for g in devices if g in gpus], rows)
        if other_unknown:
            self.note_unknown_links(other_unknown, cols, rows)
        self.unknown_links = unknown
        in_unknown = {label for pair in unknown for label in pair}
        order = {label: i for i, label in enumerate(header.labels)}
        last_row = max((order.get(label, -1) for label in rows), default=-1)
        first_row = min((order.get(label, len(order)) for label in rows), default=len(order))
        last_line = max((r.line for r in rows.values()), default=0)
        ends_there = _blank_after(self.lines, last_line)  # nothing after the last row
        for label in header.labels:
            if label in rows or label in in_unknown:
                continue
            stops = ends_there and order[label] > last_row  # the paste stops before its row: a cut
            starts = self.header_inferred and order[label] < first_row  # copied from a later row, without the header
            if stops or starts:
                affinity = ", its affinity is unknown" if label in gpus else ""
                self.note(
                    self.line_of_missing(label, header, rows),
                    "excerpt",
                    f"{label} row not in the paste, which {'stops before' if stops else 'starts after'} it; its links "
                    f"were read from the other rows{affinity}",
                )
                continue
            if label in gpus:
                self.note(
                    self.line_of_missing(label, header, rows),
                    "recovered",
                    f"{label} row missing; its links were read from the other GPU rows (the matrix is "
                    "symmetric), its affinity is unknown",
                )
            else:
                self.note(
                    self.line_of_missing(label, header, rows),
                    "recovered",
                    f"{label} row missing; its links were read from the other rows (the matrix is symmetric)",
                )
        return tuple(out)

    def note_unknown_gpu_links(self, unknown: list[tuple[str, str]], gpus: list[str], rows: dict[str, _Row]) -> None:
        """A paste cut after some GPU rows: the rows present are read, the pairs among the missing GPUs are not."""
        shown = [g for g in gpus if g in rows]
        missing = [g for g in gpus if g not in rows]
        last = max(r.line for r in rows.values())
        example = "-".join(unknown[0])
        self.note(
            last,
            "partial",
            f"the paste shows rows for {len(shown)} of {len(gpus)} GPUs ({_label_ranges(missing)} have no row; "
            f"the matrix stops after line {last}): {len(unknown)} GPU pair(s) among them have no cell, e.g. "
            f"{example}, and are left out; their links are unknown, and so is their affinity",
        )

    def note_unknown_links(self, unknown: list[tuple[str, str]], cols: set[str], rows: dict[str, _Row]) -> None:
        """Say why NIC pairs have no link: rows missing (truncated paste) or columns missing (terminal width)."""
        no_row = [c for c in cols if c not in rows and not c.startswith("GPU")]
        no_col = [r for r in rows if r not in cols]
        last = max(r.line for r in rows.values())
        reasons = []
        if no_row:
            names = ", ".join(sorted(no_row, key=_natural))
            reasons.append(f"no rows for {names} (paste truncated after line {last}?)")
        if no_col:
            reasons.append(f"{', '.join(no_col)} have rows but no header column (cut by terminal width?)")
        example = "-".join(unknown[0])
        # NIC to NIC cells say nothing any rule reads (a GPU's path to its NIC is in the GPU's row), and a paste cut
        # before its last rows still holds every GPU pair in its columns: an excerpt, unless a GPU pair is unknown
        nics_only = not any(label.startswith("GPU") for pair in unknown for label in pair)
        gpu_pairs_known = not any(a.startswith("GPU") and b.startswith("GPU") for a, b in unknown)
        excerpt = nics_only or (gpu_pairs_known and not no_col)
        self.note(
            last if no_row else rows[no_col[0]].line if no_col else 0,
            "excerpt" if excerpt else "recovered",
            f"{len(unknown)} device pair(s) have no cell, e.g. {example}: "
            f"{'; '.join(reasons) or 'damaged rows'}; those links are left out"
            + (
                "; no GPU's link is among them"
                if nics_only
                else "; every GPU pair is known, only paths from GPUs to NICs are not"
                if excerpt
                else ""
            ),
        )

    def code_legend(self) -> dict[str, str]:
        legend: dict[str, str] = {}
        for line in self.lines:
            m = _CODE_LEGEND.fullmatch(line)
            if m:
                legend.setdefault(m.group(1), m.group(2))
        return legend

    def nics(self, labels: list[str], header_line: int) -> tuple[Nic, ...]:
        legend: dict[str, str] = {}
        for line in self.lines[header_line:]:
            m = _NIC_LEGEND.fullmatch(line)
            if m:
                legend.setdefault(m.group(1), m.group(2))
        nics = []
        for label in labels:
            device: Probed[str]
            if label in legend:
                device = legend[label]
            elif not _ROW_LABEL.fullmatch(label):
                device = label  # old drivers name the column after the device itself (mlx5_0)
            else:
                device = Unsupported(SOURCE, f"no NIC Legend line for {label} in the paste")
            nics.append(Nic(label=label, device=device))
        return tuple(nics)

    def gpus(self, labels: list[str], header: _Header, rows: dict[str, _Row]) -> tuple[Gpu, ...]:
        present = [rows[label] for label in labels if label in rows]
        self.unglue_cpu_lists(present, header.trailing)
        values = {label: self.affinity(rows.get(label), label, header.trailing) for label in labels}
        self.distrust_cut_cpu_lists(values, rows)
        self.keep_text_columns(values, header)
        return tuple(
            Gpu(
                index=i,
                cpu_affinity=values[label].cpu,
                numa_nodes=values[label].numa,
                gpu_numa_id=values[label].gpu_numa,
            )
            for i, label in enumerate(labels)
        )

    def affinity(self, row: _Row | None, label: str, columns: list[tuple[str, str]]) -> _Affinity:
        """Map a GPU row's trailing values onto the header's columns, by name and order."""
        out = _Affinity()
        if row is None:
            for kind, _title in columns:
                if kind != "text":
                    out.set(kind, Failed(SOURCE, f"{label} row missing from the paste"))
            return out
        values = row.rest
        if len(values) > len(columns):
            self.note(row.line, "ignored", f"text after the last column: {_quoted(' '.join(values[len(columns) :]))}")
        placed = (
            self.place_by_position(row, columns) or self.place_by_tabs(row, columns)
            if len(values) < len(columns) and not row.glue
            else None
        )
        if placed is not None:
            for j, (kind, title) in enumerate(columns):
                if placed[j] is None and kind != "text":
                    out.set(kind, Unsupported(SOURCE, f"{title} is blank in the {label} row (line {row.line})"))
                elif placed[j] is not None:
                    self.read_value(out, row, label, kind, title, placed[j] or "", cut=False)
            return out
        # A row may stop before hand-added text columns at the end; only a missing topo -m value is a cut.
        needed = len(columns)
        while needed > len(values) and columns[needed - 1][0] == "text":
            needed -= 1
        short = len(values) < needed
        if short and not row.glue:  # the links are whole: what is lost is this GPU's affinity, said unknown
            missing = ", ".join(title for _kind, title in columns[len(values) : needed])
            self.note(
                row.line,
                "ignored",
                f"{label} row is cut short: {missing} missing"
                + (" and the last value may be cut too" if values else "")
                + "; its links are read whole",
            )
        for j, (kind, title) in enumerate(columns):
            if j >= len(values):
                if kind != "text":
                    out.set(kind, Failed(SOURCE, f"{title} missing from the {label} row (line {row.line})"))
                continue
            self.read_value(out, row, label, kind, title, values[j], cut=short and j == len(values) - 1)
        return out

    def read_value(self, out: _Affinity, row: _Row, label: str, kind: str, title: str, raw: str, cut: bool) -> None:
        """One trailing value into ``out``: a CPU list, a NUMA node list or number, N/A, or text."""
        if kind == "text":
            out.text[title] = raw
        elif row.glue:
            out.set(kind, Failed(SOURCE, row.glue))
        elif cut:
            out.set(kind, Failed(SOURCE, f"{title} {_quoted(raw)} in the {label} row (line {row.line}) may be cut"))
        elif raw.upper() == "N/A":
            out.set(kind, Unsupported(SOURCE, f"{title} is N/A{_NA_WHY[kind]}"))
        else:
            try:
                out.set(kind, _node_number(raw) if kind == "gpu_numa" else parse_cpu_list(raw))
                if kind == "cpu":
                    out.cpu_text = raw
            except ValueError:
                out.set(
                    kind,
                    Failed(SOURCE, f"{title} {_quoted(raw)} in the {label} row (line {row.line}) is unreadable"),
                )
                if kind == "cpu" and raw.startswith(("-", ",")):
                    out.cpu_cut = raw  # reported once for the whole column
                else:
                    self.note(row.line, "affinity", f"{label}: {title} {_quoted(raw)} unreadable; recorded as failed")

    def place_by_position(self, row: _Row, columns: list[tuple[str, str]]) -> list[str | None] | None:
        """A short row's values placed under the header's titles by where they stand; None for a blank column.

        ``nvidia-smi topo -m`` run where the affinity is unknown (vLLM's collect_env in a container) prints blank
        CPU and NUMA Affinity columns, so ``N/A`` alone belongs under GPU NUMA ID, not CPU Affinity. A value
        belongs to the last title that starts at most one tab stop after it. Only a row with a blank column
        before a value is read this way (the method returns None otherwise: a row cut at its end is read in
        order), and only when the header and the row kept their spaces (tab characters hide the widths).
        """
        header_text, line = self.lines[self.header_line - 1], self.lines[row.line - 1]
        if not row.rest or "\t" in header_text or "\t" in line or self.header_inferred:
            return None
        starts = _title_starts(header_text, columns)
        if starts is None:
            return None
        at = [m.start() for m in _TOKEN.finditer(line)][-len(row.rest) :]
        placed: list[str | None] = [None] * len(columns)
        last = -1
        for value, x in zip(row.rest, at, strict=True):
            j = max((k for k, start in enumerate(starts) if start <= x + 8), default=-1)
            if j <= last:
                return None
            placed[j], last = value, j
        if placed[: len(row.rest)] == row.rest:
            return None  # the values stand in order from the first column: a row cut at its end, not blanks
        return placed

    def place_by_tabs(self, row: _Row, columns: list[tuple[str, str]]) -> list[str | None] | None:
        """A short row's values placed by its tab stops, read against a whole row of the same matrix.

        With tabs, ``topo -m`` leaves a blank cell for an unknown affinity (``NODE\t\t1\t\tN/A``: no CPU list, NUMA
        node 1) where a whole row reads ``NODE\t0-39\t0\t\tN/A``: each value goes under the column whose value
        stands at the same tab stop in the whole row. None where no whole row has as many stops, or a value stands
        where the whole row has none (a row cut at its end is then read in order).
        """
        line = self.lines[row.line - 1]
        if "\t" not in line:
            return None
        stops = self.whole_row_stops(len(row.cells), len(columns))
        mine = _tab_tail(line, len(row.cells))
        if stops is None or len(mine) != stops[-1] + 1:
            return None
        placed: list[str | None] = [None] * len(columns)
        for k, cell in enumerate(mine):
            if cell:
                if k not in stops:
                    return None
                placed[stops.index(k)] = cell
        if [v for v in placed if v is not None] != row.rest or placed[: len(row.rest)] == row.rest:
            return None
        return placed

    def whole_row_stops(self, matrix_cells: int, columns: int) -> list[int] | None:
        """The tab stops of the first tabbed GPU row with a value under every trailing column (found once)."""
        if matrix_cells not in self.tab_stops:
            self.tab_stops[matrix_cells] = None
            for other in self.lines[self.header_line :]:
                if _TABBED_GPU_ROW.match(other):
                    tail = _tab_tail(other, matrix_cells)
                    stops = [k for k, cell in enumerate(tail) if cell]
                    if len(stops) == columns:
                        self.tab_stops[matrix_cells] = stops
                        break
        return self.tab_stops[matrix_cells]

    def unglue_cpu_lists(self, rows: list[_Row], columns: list[tuple[str, str]]) -> None:
        """Split a CPU list glued to the NUMA value after it (``0-23,48-710`` = ``0-23,48-71`` + ``0``).

        A lost separator leaves the row one value short, with a list that reaches past the CPUs of the whole
        rows or that ends in a whole row's list. The split is taken when exactly one split is a whole row's
        list, or else exactly one stays within their CPUs; otherwise the row's affinity is failed with the
        reason, since a glued list parses into CPUs the machine may not have.
        """
        kinds = [kind for kind, _title in columns]
        if "cpu" not in kinds or kinds.index("cpu") + 1 >= len(kinds) or kinds[kinds.index("cpu") + 1] != "numa":
            return
        at = kinds.index("cpu")
        whole = [r for r in rows if len(r.rest) >= len(kinds)]
        sibling_texts = {r.rest[at] for r in whole}
        top = max((cpu for r in whole for cpu in _cpu_list_or_empty(r.rest[at])), default=None)
        for row in rows:
            if top is None or len(row.rest) != len(kinds) - 1 or at >= len(row.rest):
                continue
            glued = row.rest[at]
            listed = _cpu_list_or_empty(glued)
            splits = _splits(glued)
            like_siblings = [(cpu, numa) for cpu, numa in splits if cpu in sibling_texts]
            if not listed or (max(listed) <= top and not like_siblings):
                continue  # plausible as it stands: the row is cut short at its end, handled as such
            choice = (
                like_siblings
                or [(cpu, numa) for cpu, numa in splits if max(parse_cpu_list(cpu)) <= top]
                or _other_socket_splits(splits, sibling_texts)
            )
            if len(choice) == 1:
                cpu, numa = choice[0]
                row.rest[at : at + 1] = [cpu, numa]
                self.note(
                    row.line,
                    "affinity",
                    f"{row.label} row: CPU Affinity and NUMA Affinity are glued together ({_quoted(glued)}; the row "
                    f"is one value short); read as {cpu!r} and {numa!r}",
                )
            else:
                row.glue = (
                    f"CPU Affinity {_quoted(glued)} in the {row.label} row (line {row.line}) looks glued to the NUMA "
                    f"Affinity after it (the row is one value short; read whole, the list reaches CPU {max(listed)} "
                    f"where the other rows stop at {top})"
                )
                self.note(row.line, "affinity", f"{row.glue}; the row's affinity is recorded as failed")

    def keep_text_columns(self, values: dict[str, _Affinity], header: _Header) -> None:
        """Columns topo -m does not print are kept as text, once per column, in an input issue."""
        for kind, title in header.trailing:
            if kind == "text":
                shown = ", ".join(f"{label} {_quoted(v.text[title])}" for label, v in values.items() if title in v.text)
                self.text_columns.append(
                    TextColumn(title, tuple((k, v.text[title]) for k, v in values.items() if title in v.text))
                )
                self.note(
                    header.line,
                    "ignored",
                    f"column {_quoted(title)} is not one nvidia-smi topo -m prints; its values are kept as text only"
                    + (f": {shown}" if shown else ""),
                )

    def distrust_cut_cpu_lists(self, values: dict[str, _Affinity], rows: dict[str, _Row]) -> None:
        """A terminal cut hits every row: one visibly cut CPU list voids the whole column.

        Visibly cut: it starts with ``-``/``,``, or it is the tail or head of another row's list
        (``2-63,96-127`` beside ``32-63,96-127``). Such a value parses, so it must not reach the judge.
        """
        texts = {label: v.cpu_text for label, v in values.items() if v.cpu_text}
        bad = {label: v.cpu_cut for label, v in values.items() if v.cpu_cut}
        distinct = set(texts.values())
        fragments = {t for t in distinct if any(o != t and (o.endswith(t) or o.startswith(t)) for o in distinct)}
        bad.update((label, text) for label, text in texts.items() if text in fragments)
        if not bad:
            return
        order = sorted(bad, key=_natural)
        shown = ", ".join(f"{label} {_quoted(bad[label])}" for label in order)
        self.note(
            rows[order[0]].line,
            "affinity",
            f"CPU Affinity column looks cut (terminal width?): {shown}; CPU affinity recorded as failed for every GPU",
        )
        for v in values.values():
            if not isinstance(v.cpu, Unsupported):
                v.cpu = Failed(SOURCE, "CPU Affinity column cut in the paste (terminal width?)")


def _title_starts(header: str, columns: list[tuple[str, str]]) -> list[int] | None:
    """Where each trailing column's title starts in the header line; None when a title is not found in order."""
    starts: list[int] = []
    at = 0
    for kind, title in columns:
        if kind == "text":
            found = header.find(title, at)
        else:
            m = next(
                (m for m in _AFFINITY_NAME.finditer(header, at) if m.lastindex == _AFFINITY_KINDS.index(kind) + 1), None
            )
            found = m.start() if m else -1
        if found < 0:
            return None
        starts.append(found)
        at = found + 1
    return starts


def _cpu_list_or_empty(text: str) -> tuple[int, ...]:
    try:
        return parse_cpu_list(text)
    except ValueError:
        return ()


def _splits(glued: str) -> list[tuple[str, str]]:
    """Ways to read ``glued`` as a CPU list followed by a NUMA node (up to three digits, no leading zero)."""
    out = []
    for width in (1, 2, 3):
        cpu, numa = glued[:-width], glued[-width:]
        readable = cpu[-1:].isdecimal() and bool(_cpu_list_or_empty(cpu))
        if readable and numa.isdecimal() and (numa == "0" or not numa.startswith("0")):
            out.append((cpu, numa))
    return out


def _shown(cells: list[str], limit: int = 200) -> str:
    """A row's cells as the user pasted them, unreadable ones marked, shortened for a message."""
    text = " ".join(
        "(unreadable)" if cell == _UNREADABLE else f"{cell[1:]}(cut)" if cell.startswith(_UNREADABLE) else cell
        for cell in cells
    )
    return text if len(text) <= limit else text[:limit] + f"... ({len(cells)} cells)"


def _x_only_at(cells: list[str], diag: int | None) -> bool:
    """True when ``X`` (self) is exactly the diagonal cell: a row with no cell lost or shifted."""
    return cells.count("X") == (diag is not None) and (diag is None or cells[diag] == "X")


def _node_number(text: str) -> int:
    """A NUMA node number as nvidia-smi prints it: plain ASCII digits (``int`` alone also takes ``1_0``)."""
    if not (text.isascii() and text.isdecimal() and len(text) <= 5):
        raise ValueError(f"not a NUMA node number: {text[:40]!r}")
    return int(text)


def _quoted(text: str, limit: int = 40) -> str:
    """``repr`` of a value from the paste, shortened: a damaged paste can hold a token of any length."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def _label_ranges(labels: Sequence[str]) -> str:
    """``GPU5-GPU15`` for a run of consecutive labels, ``GPU2, GPU5`` otherwise."""
    parts: list[list[tuple[str, int]]] = []
    for label in labels:
        m = _ROW_LABEL.fullmatch(label)
        key = (m.group(1), int(m.group(2))) if m else (label, -1)
        if parts and m and parts[-1][-1][0] == key[0] and parts[-1][-1][1] == key[1] - 1:
            parts[-1].append(key)
        else:
            parts.append([key])
    out = []
    for run in parts:
        first, last = run[0], run[-1]
        name = f"{first[0]}{first[1]}" if first[1] >= 0 else first[0]
        out.append(name if len(run) == 1 else f"{name}-{last[0]}{last[1]}")
    return ", ".join(out)


def _natural(label: str) -> tuple[str, int, str]:
    """Sort key: NIC2 before NIC10 (compares the digits by length first, so any length is safe)."""
    m = re.fullmatch(r"(\D*)(\d*)", label)
    return (m.group(1), len(m.group(2)), m.group(2)) if m else (label, 0, "")
