"""NCCL RAS output (``ncclras``, NCCL 2.24+): its status in text and JSON (``ncclras -f json``, 2.28.7+), and its
monitor mode (``ncclras -m``, 2.29+), in text and JSON.

* ``looks_like_nccl_ras(text) -> bool``: cheap sniff, no parse.
* ``parse_nccl_ras(text, name="") -> RasDump``: the communicators with their present and missing ranks, the
  job processes RAS reports missing or dead, the per-rank errors, and the monitor's peer events; InputError
  when the text is RAS output that cannot be read (broken JSON, no communicator table).
* ``ras_to_dict`` / ``ras_from_dict``: the JSON-ready form the report carries in its extras (``nccl_ras``).

The formats follow NCCL's ``src/ras/client_support.cc`` (the text "Errors" section and its
``rasClientBreakDownErrors``, ``errorStr`` of the communicator table, ``rasGpuDevsToString``,
``jsonWriteRankData``, ``jsonWriteMissingRank``, ``rasClientsNotifyEvent``), ``src/ras/peers.cc``
(``rasPeerInfoToString``) and the samples of ``docs/userguide/source/troubleshooting/ras.rst``. Checked against
those files at NVIDIA/nccl v2.29.2-1, v2.29.7-1, v2.30.3-1 and v2.30.7-1: the formats read here are the same in
all four (the text status also matches the 2.24-2.28 samples of the docs).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from topoaudit.errors import InputError
from topoaudit.model.codec import shown
from topoaudit.model.machine import Gpu, Host, Machine
from topoaudit.model.values import Unsupported

SOURCE = "nccl-ras"
NOT_IN_DUMP = Unsupported(source=SOURCE, reason="not in the RAS output")
# init_state / async_error values that are not an error (ncclSuccess, ncclInProgress)
_NOT_ERRORS = (0, 7)
RESULT_NAMES = {
    1: "Unhandled CUDA error",
    2: "System error",
    3: "Internal error",
    4: "Invalid argument",
    5: "Invalid usage",
    6: "Remote process error",
}
"""ncclResult_t values (src/nccl.h.in) as RAS names them in text (ncclErrorToString, src/ras/client_support.cc)."""


@dataclass(frozen=True)
class RasRank:
    """One communicator rank as RAS reports it; ``problem`` is "" for a healthy rank."""

    rank: int
    host: str | Unsupported
    pid: int | Unsupported = NOT_IN_DUMP
    gpu: int | Unsupported = NOT_IN_DUMP  # the NVML index where given, else the CUDA index
    # "missing" | "unresponsive" | "dead" | "init error 2 (System error)" | "async error 6 (Remote process error)"
    # | "abort flag set" | "asynchronous: System error" (text form)
    problem: str = ""


@dataclass(frozen=True)
class RasCommunicator:
    """One communicator: ``ident`` as RAS names it (``#0-0 (cf264af53edbe986)`` in text, the hash in JSON)."""

    ident: str
    size: int | Unsupported
    ranks: tuple[RasRank, ...]  # ranks that answered (with any error they reported)
    missing: tuple[RasRank, ...]  # ranks RAS could not collect data from
    missing_count: int  # what RAS counted, even when it lists fewer ranks than that
    errors: tuple[str, ...] = ()  # text-form error lines ("Asynchronous error on 1 rank")
    status: str = ""  # the table's Status: NOCOMM | INIT | RUNNING | FINALIZE | ABORT ("" when not printed)
    flags: tuple[str, ...] = ()  # the table's Errors, split: ("INCOMPLETE", "ERROR"); () for OK or not printed
    mismatches: tuple[str, ...] = ()  # a MISMATCH's lines under Warnings ("30 ranks have launched up to operation 640")


@dataclass(frozen=True)
class RasProcess:
    """A job process RAS reports as missing (INCOMPLETE) or unreachable (DEAD)."""

    state: str  # "missing" | "dead"
    host: str
    pid: int
    gpus: str  # as RAS prints them: "5", "0,1,2,3,4,5,6,7", "0 (NVML 3)"

    @property
    def nvml_gpus(self) -> tuple[int, ...]:
        """The GPUs the process manages by NVML index (the CUDA list where RAS printed no NVML one)."""
        return gpu_indices(self.gpus)


def gpu_indices(text: str) -> tuple[int, ...]:
    """``"0,1,2"`` -> (0, 1, 2); ``"5 (NVML 7)"`` -> (7,): RAS prints NVML indices in brackets where they differ
    from CUDA's (rasGpuDevsToString, src/ras/client_support.cc)."""
    m = re.fullmatch(r"\s*(\d{1,6}(?:,\d{1,6})*)(?:\s*\(NVML (\d{1,6}(?:,\d{1,6})*)\))?\s*", text)
    if not m:
        return ()
    return tuple(int(x) for x in (m[2] or m[1]).split(",") if x)


@dataclass(frozen=True)
class RasEvent:
    """One event of RAS monitor mode (``ncclras -m``): a peer process joined, stopped answering, recovered or died."""

    timestamp: str
    event: str  # PEER_DEAD, PEER_TIMEOUT_DEAD, PEER_UNRESPONSIVE, PEER_RECOVERED, PEER_NEW, ...
    host: str | Unsupported  # the peer's node; the socket address where RAS did not know the process
    pid: int | Unsupported
    gpus: str  # as RAS prints them ("1", "0,1,2,3", "5 (NVML 7)"); "" when not printed
    details: str


@dataclass(frozen=True)
class RasDump:
    """What one RAS query reported."""

    format: str  # "json" | "text"
    nccl_version: str | Unsupported
    communicators: tuple[RasCommunicator, ...]
    processes: tuple[RasProcess, ...] = ()
    timeouts: int = 0
    nodes: int | Unsupported = NOT_IN_DUMP
    gpus_per_node: int | Unsupported = NOT_IN_DUMP
    events: tuple[RasEvent, ...] = ()  # monitor mode

    @property
    def hosts(self) -> tuple[str, ...]:
        """Every host named, in the order first seen."""
        seen: dict[str, None] = {}
        for c in self.communicators:
            for r in (*c.ranks, *c.missing):
                if isinstance(r.host, str):
                    seen.setdefault(r.host)
        for p in self.processes:
            seen.setdefault(p.host)
        for e in self.events:
            if isinstance(e.host, str):
                seen.setdefault(e.host)
        return tuple(seen)


def looks_like_nccl_ras(text: str) -> bool:
    """RAS output: the status JSON's keys or the text form's section headers, or monitor mode's banner, events."""
    head = text[:65536]
    if head.lstrip().startswith("{"):
        if _JSON_EVENT.search(head):
            return True
        return (
            '"communicators"' in head
            and ('"missing_ranks' in head or '"nccl_version"' in head)
            and ('"ras"' in text[-4096:] or '"ranks_count"' in head)
        )
    return bool(_TEXT_SIGNS.search(head) or _MONITOR_SIGNS.search(head))


_TEXT_SIGNS = re.compile(
    r"^Job summary\n=+\s*$|^Group\s+Comms\s+Nodes\s+Ranks\s+Ranks\s+Ranks\s+Status\s+Errors\s*$"
    r"|^Errors\n=+\n\n(?:INCOMPLETE|DEAD|#\d+-\d+ \([0-9a-f]+\) (?:INCOMPLETE|ERROR))\s*$",  # the Errors section alone
    re.M,
)
_MONITOR_SIGNS = re.compile(r"^RAS Monitor Mode - watching for peer changes|^\s*\[[\d-]+ [\d:]+\] PEER_[A-Z_]+: ", re.M)
_JSON_EVENT = re.compile(r'"group":\s*"(?:LIFECYCLE|TRACE)",\s*"event":\s*"PEER_')


def parse_nccl_ras(text: str, name: str = "") -> RasDump:
    """Read any form of RAS output; InputError (one sentence) when it cannot be read."""
    if text.lstrip().startswith("{"):
        if _JSON_EVENT.search(text[:65536]):
            return _parse_json_events(text, name)
        return _parse_json(text, name)
    if _MONITOR_SIGNS.search(text[:65536]) and not _TEXT_SIGNS.search(text[:65536]):
        return _parse_text_events(text, name)
    return _parse_text(text, name)


# --- JSON -------------------------------------------------------------------------------------------------


def _parse_json(text: str, name: str) -> RasDump:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{name}: NCCL RAS JSON output that breaks at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
            "a truncated copy?",
            hint="capture it again with `ncclras -f json > ras.json`",
        ) from exc
    except (RecursionError, ValueError) as exc:
        raise InputError(f"{name}: NCCL RAS JSON output {_beyond_json(exc)}; ncclras writes neither") from None
    comms = doc.get("communicators") if isinstance(doc, dict) else None
    if not isinstance(comms, list):
        raise InputError(f"{name}: NCCL RAS JSON output without a `communicators` list")
    out = []
    for i, c in enumerate(comms):
        if not isinstance(c, dict):
            raise InputError(f"{name}: NCCL RAS JSON output whose communicator {i} is not an object")
        ranks = tuple(_json_rank(r, name, missing=False) for r in _list(c, "ranks", name))
        missing = tuple(_json_rank(r, name, missing=True) for r in _list(c, "missing_ranks", name))
        counted = c.get("missing_ranks_count")
        size = c.get("size")
        out.append(
            RasCommunicator(
                ident=str(c.get("hash", f"communicator {i}")),
                size=size if isinstance(size, int) else NOT_IN_DUMP,
                ranks=ranks,
                missing=missing,
                missing_count=max(counted if isinstance(counted, int) else 0, len(missing)),
            )
        )
    ras = doc.get("ras") if isinstance(doc.get("ras"), dict) else {}
    version = doc.get("nccl_version")
    timeouts = ras.get("timeouts_count")
    return RasDump(
        "json",
        version if isinstance(version, str) else NOT_IN_DUMP,
        tuple(out),
        timeouts=timeouts if isinstance(timeouts, int) else 0,
    )


def _beyond_json(exc: Exception) -> str:
    """What Python's JSON reader refused beyond a syntax error: nesting past the recursion limit, or an integer
    literal of more than 4,300 digits."""
    if isinstance(exc, RecursionError):
        return "nested more than a thousand levels deep"
    return "holding an integer thousands of digits long"


def _list(c: dict[str, Any], key: str, name: str) -> list[dict[str, Any]]:
    value = c.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(f"{name}: NCCL RAS JSON output whose `{key}` is not a list of ranks")
    return value


def _json_rank(r: dict[str, Any], name: str, *, missing: bool) -> RasRank:
    rank = r.get("rank")
    if not isinstance(rank, int):
        raise InputError(f"{name}: NCCL RAS JSON output with a rank entry that has no `rank` number")
    host = r.get("host")
    pid = r.get("pid")
    gpu = r.get("nvml_dev", r.get("cuda_dev"))
    raw_status = r.get("status")
    status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
    if missing:
        problem = (
            "dead" if status.get("considered_dead") else "unresponsive" if status.get("unresponsive") else "missing"
        )
    else:
        init, err = status.get("init_state", 0), status.get("async_error", 0)
        problem = (
            f"init error {_result(init)}"
            if isinstance(init, int) and init not in _NOT_ERRORS
            else f"async error {_result(err)}"
            if isinstance(err, int) and err not in _NOT_ERRORS
            else "abort flag set"
            if status.get("abort_flag") is True
            else ""
        )
    return RasRank(
        rank,
        host if isinstance(host, str) and host else NOT_IN_DUMP,
        pid if isinstance(pid, int) else NOT_IN_DUMP,
        gpu if isinstance(gpu, int) and gpu >= 0 else NOT_IN_DUMP,
        problem,
    )


def _result(code: int) -> str:
    name = RESULT_NAMES.get(code)
    return f"{code} ({name})" if name else str(code)


# --- monitor mode ----------------------------------------------------------------------------------------

_EVENT_LINE = re.compile(r"^\s*\[([\d-]+ [\d:]+)\] (PEER_[A-Z_]+): ?(.*?)\s*$")
_EVENT_PEER = re.compile(r"^Process (\d{1,9}) on node (\S+) managing GPUs? ([\d,]+(?: \(NVML [\d,]+\))?)\s*(.*)$")
_EVENT_ADDR = re.compile(r"^(\S+<\d+>)\s*(.*)$")


def _parse_text_events(text: str, name: str) -> RasDump:
    """``[time] EVENT: Process P on node H managing GPU G details`` (rasClientsNotifyEvent, rasPeerInfoToString),
    or the peer's socket address where RAS did not know the process."""
    events: list[RasEvent] = []
    for line in text.splitlines():
        m = _EVENT_LINE.match(line)
        if not m:
            continue
        stamp, event, rest = m[1], m[2], m[3]
        if p := _EVENT_PEER.match(rest):
            events.append(RasEvent(stamp, event, p[2], int(p[1]), p[3], p[4]))
        elif a := _EVENT_ADDR.match(rest):
            host = a[1].split("<", 1)[0]
            events.append(RasEvent(stamp, event, host, NOT_IN_DUMP, "", a[2]))
        else:
            events.append(RasEvent(stamp, event, NOT_IN_DUMP, NOT_IN_DUMP, "", rest))
    return RasDump("monitor-text", NOT_IN_DUMP, (), events=tuple(events))


def _parse_json_events(text: str, name: str) -> RasDump:
    """The monitor's JSON events, one pretty-printed object after another (rasClientsNotifyEvent)."""
    decoder = json.JSONDecoder()
    events: list[RasEvent] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{name}: NCCL RAS monitor JSON that breaks at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
                "a truncated copy?",
                hint="capture it again with `ncclras -m -f json > ras-events.json`",
            ) from exc
        except (RecursionError, ValueError) as exc:
            raise InputError(f"{name}: NCCL RAS monitor JSON {_beyond_json(exc)}; ncclras writes neither") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
            continue
        raw_peer = obj.get("peer")
        peer: dict[str, Any] = raw_peer if isinstance(raw_peer, dict) else {}
        host = peer.get("host") or str(peer.get("addr", "")).split("<", 1)[0]
        pid = peer.get("pid")
        cuda, nvml = peer.get("cuda_devs"), peer.get("nvml_devs")
        gpus = ""
        if isinstance(cuda, list) and all(isinstance(x, int) for x in cuda):
            gpus = ",".join(map(str, cuda))
            if isinstance(nvml, list) and nvml != cuda and all(isinstance(x, int) for x in nvml):
                gpus += f" (NVML {','.join(map(str, nvml))})"
        events.append(
            RasEvent(
                str(obj.get("timestamp", "")),
                obj["event"],
                host if isinstance(host, str) and host else NOT_IN_DUMP,
                pid if isinstance(pid, int) else NOT_IN_DUMP,
                gpus,
                str(obj.get("details", "")),
            )
        )
    return RasDump("monitor-json", NOT_IN_DUMP, (), events=tuple(events))


# --- text -------------------------------------------------------------------------------------------------

_ROW = re.compile(
    r"^\s*(\d{1,9})\s+(\d{1,9})\s+(\d{1,9})\s+([\d-]+)\s+(\d{1,9})\s+(\d{1,9})\s+([A-Z]+)\s+([A-Z,]+)\s*$"
)
_SUMMARY = re.compile(r"^\s*(\d{1,9})\s+(\d{1,9})\s+(\d{1,9})\s+(\d{1,9})\s+(\d{1,9})\s*$")
_SUMMARY_HEADER = re.compile(r"^\s*Nodes\s+Processes\s+GPUs\s+Processes\s+GPUs\s*$")
"""The job summary's column header: its table, where an excerpt starts below the "Job summary" title."""
_COMM = re.compile(r"^(#\d+-\d+ \([0-9a-f]+\)) ([A-Z]+)\s*$")
_SECTION = re.compile(r"^(INCOMPLETE|DEAD|TIMEOUT)\s*$")
_PROCESS = re.compile(r"^\s+Process (\d{1,9}) on node (\S+) managing GPUs? (.+?)\s*$")
_RANK_LINE = re.compile(
    r"^\s+Rank (\d{1,9})(?: has .+?| reported (.+?))? -- GPU (\d{1,9})(?: \(NVML (\d{1,9})\))?[^,]*? "
    r"managed by process (\d{1,9}) on node (\S+)\s*$"
)
_RANK_NOT_FOUND = re.compile(r"^\s+Rank (\d{1,9})(?: has .+?| reported (.+?))? -- \[process information not found\]")
_RANKS_REPORTED = re.compile(r"^\s+\d+ ranks reported (.+?)\s*$")
_VERSION = re.compile(r"^NCCL version (\S+) compiled with CUDA")
_MISSING_COUNT = re.compile(r"^\s+Missing communicator data from (\d{1,9}) rank")
_MISSING_OLD = re.compile(r"^\s+The missing ranks?: ([\d, ]+)")
_ERROR_LINE = re.compile(r"^\s+((Initialization|Asynchronous) errors? on \d+ ranks?)")
_MISMATCH_LINE = re.compile(
    r"^\s+(Communicator ranks have different .{1,80}|\d{1,9} ranks? ha(?:ve|s) .{1,80}?)\s*$"
)  # "30 ranks have launched up to operation 640", "26 ranks have status UNKNOWN"
_TIMEOUTS = re.compile(r"Encountered (\d{1,9}) communication timeouts?")


def _parse_text(text: str, name: str) -> RasDump:
    lines = text.splitlines()
    table: list[tuple[int, int, str, tuple[str, ...]]] = []  # (group, comms in group, status, errors) per row
    sizes: dict[int, int] = {}
    nodes: int | Unsupported = NOT_IN_DUMP
    per_node: int | Unsupported = NOT_IN_DUMP
    version: str | Unsupported = NOT_IN_DUMP
    section = ""  # "Errors" | "Warnings"
    block = ""  # the error block the lines belong to: "INCOMPLETE", "DEAD", or a communicator ident
    processes: list[RasProcess] = []
    comm_missing: dict[str, list[RasRank]] = {}
    comm_counts: dict[str, int] = {}
    comm_errors: dict[str, list[str]] = {}
    comm_mismatches: dict[str, list[str]] = {}
    comm_ranks: dict[str, list[RasRank]] = {}
    timeouts = 0
    kind = ""  # what the rank lines of a communicator's block are: "missing" | "error" | "warn"
    phase, reported = "", ""  # in an ERROR block: "initialization" | "asynchronous", and the error "N ranks reported"
    after_summary = False
    table_nodes = table_per_node = 0  # the communicator table's nodes and GPUs per node (one GPU per NCCL rank)
    summary_shown = False
    for i, line in enumerate(lines):
        if not isinstance(version, str) and (m := _VERSION.match(line)):
            version = m[1]
            continue
        if line.startswith("Job summary") or _SUMMARY_HEADER.match(line):
            after_summary = summary_shown = True
            continue
        if after_summary and (m := _SUMMARY.match(line)):
            nodes, per_node = int(m[1]), int(m[2]) * int(m[3])
            after_summary = False
            continue
        if m := _ROW.match(line):
            flags = tuple(f for f in m[8].split(",") if f and f != "OK")
            table.append((int(m[1]), int(m[2]), m[7], flags))
            sizes[int(m[1])] = int(m[5])
            if int(m[3]):  # ranks in the group over its nodes: the GPUs per node its communicators use
                table_nodes = max(table_nodes, int(m[3]))
                table_per_node = max(table_per_node, int(m[6]) // int(m[3]))
            continue
        if line.strip() in ("Errors", "Warnings") and i + 1 < len(lines) and lines[i + 1].startswith("==="):
            section, block, kind = line.strip(), "", ""
            continue
        if m := _SECTION.match(line):
            block = m[1]
            continue
        if m := _COMM.match(line):
            # a communicator's block: its missing ranks (INCOMPLETE), ranks in error (ERROR), or, under
            # Warnings, ranks RAS has data for whose counts or status differ (MISMATCH: no fault by itself)
            block = m[1]
            kind = "warn" if section != "Errors" else "missing" if m[2] == "INCOMPLETE" else "error"
            phase, reported = "", ""
            comm_missing.setdefault(block, [])
            continue
        if t := _TIMEOUTS.search(line):
            timeouts += int(t[1])
            continue
        if not line.strip():
            continue
        if block in ("INCOMPLETE", "DEAD") and (m := _PROCESS.match(line)):
            processes.append(RasProcess("missing" if block == "INCOMPLETE" else "dead", m[2], int(m[1]), m[3]))
        elif block.startswith("#"):
            if m := _MISSING_COUNT.match(line):
                comm_counts[block] = int(m[1])
            elif m := _MISSING_OLD.match(line):
                for r in re.findall(r"\b\d{1,9}\b", m[1]):  # a rank of more digits is damage, not a rank
                    comm_missing[block].append(RasRank(int(r), NOT_IN_DUMP, problem="missing"))
            elif m := _ERROR_LINE.match(line):
                comm_errors.setdefault(block, []).append(m[1])
                phase, reported = m[2].lower(), ""
            elif kind == "warn" and (m := _MISMATCH_LINE.match(line)):
                comm_mismatches.setdefault(block, []).append(m[1])
            elif kind == "error" and (m := _RANKS_REPORTED.match(line)):
                reported = m[1]
                comm_errors.setdefault(block, []).append(line.strip())
            elif m := _RANK_LINE.match(line):
                gpu = int(m[4]) if m[4] is not None else int(m[3])
                rank = RasRank(int(m[1]), m[6], int(m[5]), gpu, _text_problem(kind, phase, m[2] or reported))
                target = comm_missing if kind == "missing" else comm_ranks
                target.setdefault(block, []).append(rank)
            elif m := _RANK_NOT_FOUND.match(line):
                problem = _text_problem(kind, phase, m[2] or reported)
                target = comm_missing if kind == "missing" else comm_ranks
                target.setdefault(block, []).append(RasRank(int(m[1]), NOT_IN_DUMP, problem=problem))
    if not table and comm_missing:  # the Errors section quoted alone: its communicators, sizes unknown
        return RasDump(
            "text",
            version,
            tuple(
                RasCommunicator(
                    ident,
                    NOT_IN_DUMP,
                    _unique(comm_ranks.get(ident, ())),
                    tuple(missing),
                    max(comm_counts.get(ident, 0), len(missing)),
                    tuple(comm_errors.get(ident, ())),
                )
                for ident, missing in comm_missing.items()
            ),
            tuple(processes),
            timeouts,
        )
    if not table:
        raise InputError(
            f"{name}: NCCL RAS text output without its communicator table (the `Group  Comms ...` rows); "
            "a truncated copy?",
            hint="capture it again with `ncclras > ras.txt`",
        )
    if not summary_shown and table_per_node:  # the table pasted without the job summary above it
        nodes, per_node = table_nodes, table_per_node
    comms: list[RasCommunicator] = []
    for group, count, status, flags in table:
        for k in range(count):
            prefix = f"#{group}-{k} ("
            ident = next((b for b in comm_missing if b.startswith(prefix)), f"#{group}-{k}")
            missing = tuple(comm_missing.get(ident, ()))
            comms.append(
                RasCommunicator(
                    ident,
                    sizes[group],
                    ranks=_unique(comm_ranks.get(ident, ())),
                    missing=missing,
                    missing_count=max(comm_counts.get(ident, 0), len(missing)),
                    errors=tuple(comm_errors.get(ident, ())),
                    status=status,
                    flags=flags,
                    mismatches=tuple(comm_mismatches.get(ident, ())),
                )
            )
    return RasDump("text", version, tuple(comms), tuple(processes), timeouts, nodes, per_node)


def _text_problem(kind: str, phase: str, error: str) -> str:
    """A listed rank's problem: "missing", "asynchronous: System error", "" (a MISMATCH outlier is not one)."""
    if kind == "missing":
        return "missing"
    if kind != "error":
        return ""
    where = f"{phase}: " if phase else ""
    return f"{where}{error}" if error else f"{phase or 'an'} error"


def _unique(ranks: list[RasRank] | tuple[RasRank, ...]) -> tuple[RasRank, ...]:
    """One entry per rank: a rank listed under ERROR and again under a MISMATCH keeps its error."""
    out: dict[int, RasRank] = {}
    for r in ranks:
        if r.rank not in out or (r.problem and not out[r.rank].problem):
            out[r.rank] = r
    return tuple(out.values())


# --- the report's extras ----------------------------------------------------------------------------------


def _v(value: object) -> object:
    return None if isinstance(value, Unsupported) else value


def ras_to_dict(dump: RasDump) -> dict[str, Any]:
    """The JSON-ready form kept in the report (absent values are omitted, never 0)."""

    def rank(r: RasRank) -> dict[str, Any]:
        d = {"rank": r.rank, "host": _v(r.host), "pid": _v(r.pid), "gpu": _v(r.gpu), "problem": r.problem}
        return {k: v for k, v in d.items() if v is not None and v != ""}

    def event(e: RasEvent) -> dict[str, Any]:
        d = {"timestamp": e.timestamp, "event": e.event, "host": _v(e.host), "pid": _v(e.pid), "gpus": e.gpus}
        d["details"] = e.details
        return {k: v for k, v in d.items() if v is not None and v != ""}

    out: dict[str, Any] = {
        "format": dump.format,
        **({"nccl_version": dump.nccl_version} if isinstance(dump.nccl_version, str) else {}),
        "communicators": [
            {
                "id": c.ident,
                **({"size_ranks": c.size} if isinstance(c.size, int) else {}),
                **({"status": c.status} if c.status else {}),
                **({"flags": list(c.flags)} if c.flags else {}),
                **({"mismatches": list(c.mismatches)} if c.mismatches else {}),
                "ranks": [rank(r) for r in c.ranks],
                "missing_ranks": [rank(r) for r in c.missing],
                "missing_ranks_count": c.missing_count,
                "errors": list(c.errors),
            }
            for c in dump.communicators
        ],
        "processes": [{"state": p.state, "host": p.host, "pid": p.pid, "gpus": p.gpus} for p in dump.processes],
        "timeouts_count": dump.timeouts,
        **({"nodes": dump.nodes} if isinstance(dump.nodes, int) else {}),
        **({"gpus_per_node": dump.gpus_per_node} if isinstance(dump.gpus_per_node, int) else {}),
    }
    if dump.events:
        out["events"] = [event(e) for e in dump.events]
    return out


def ras_from_dict(d: dict[str, Any]) -> RasDump:
    """Inverse of ``ras_to_dict`` (what was omitted comes back as not in the dump).

    The dict comes from a saved report, someone else's file: a value of another type than ``ras_to_dict``
    writes is refused with InputError (exit 4), so no rule meets it.
    """

    def rank(r: Any) -> RasRank:
        r = _of(r, dict, "a rank")
        return RasRank(
            _of(r.get("rank"), int, "a rank's number"),
            _given(r, "host", str),
            _given(r, "pid", int),
            _given(r, "gpu", int),
            _of(r.get("problem", ""), str, "a rank's problem"),
        )

    def communicator(c: Any) -> RasCommunicator:
        c = _of(c, dict, "a communicator")
        return RasCommunicator(
            _of(c.get("id"), str, "a communicator's id"),
            _given(c, "size_ranks", int),
            tuple(rank(r) for r in _of(c.get("ranks", []), list, "a communicator's ranks")),
            tuple(rank(r) for r in _of(c.get("missing_ranks", []), list, "a communicator's missing ranks")),
            _of(c.get("missing_ranks_count", 0), int, "a missing-rank count"),
            tuple(_of(e, str, "an error") for e in _of(c.get("errors", []), list, "a communicator's errors")),
            _of(c.get("status", ""), str, "a communicator's status"),
            tuple(_of(f, str, "a flag") for f in _of(c.get("flags", []), list, "a communicator's flags")),
            tuple(_of(w, str, "a mismatch") for w in _of(c.get("mismatches", []), list, "a communicator's mismatches")),
        )

    def process(p: Any) -> RasProcess:
        p = _of(p, dict, "a process")
        return RasProcess(
            _of(p.get("state"), str, "a process state"),
            _of(p.get("host"), str, "a process host"),
            _of(p.get("pid"), int, "a process id"),
            _of(p.get("gpus"), str, "a process's GPUs"),
        )

    def event(e: Any) -> RasEvent:
        e = _of(e, dict, "an event")
        return RasEvent(
            _of(e.get("timestamp", ""), str, "an event's time"),
            _of(e.get("event"), str, "an event's name"),
            _given(e, "host", str),
            _given(e, "pid", int),
            _of(e.get("gpus", ""), str, "an event's GPUs"),
            _of(e.get("details", ""), str, "an event's details"),
        )

    d = _of(d, dict, "the section")
    return RasDump(
        _of(d.get("format"), str, "its format"),
        _given(d, "nccl_version", str),
        tuple(communicator(c) for c in _of(d.get("communicators", []), list, "its communicators")),
        tuple(process(p) for p in _of(d.get("processes", []), list, "its processes")),
        _of(d.get("timeouts_count", 0), int, "its timeout count"),
        _given(d, "nodes", int),
        _given(d, "gpus_per_node", int),
        tuple(event(e) for e in _of(d.get("events", []), list, "its events")),
    )


_T = TypeVar("_T")
_KIND_WORDS = {list: "a list", dict: "an object", int: "a whole number", str: "text"}


def _of(value: Any, kind: type[_T], what: str) -> _T:
    """``value`` when it is of ``kind`` (a bool is no number), else InputError naming what it should be."""
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    raise InputError(
        f"the saved report's NCCL RAS section (extras.nccl_ras) is not as topoaudit writes it: {what} is "
        f"{shown(value, 40)}, not {_KIND_WORDS.get(kind, kind.__name__)}"
    )


def _given(d: dict[str, Any], key: str, kind: type[_T]) -> _T | Unsupported:
    """An optional value: of ``kind`` when written, not in the dump when left out."""
    return _of(d[key], kind, key) if key in d and d[key] is not None else NOT_IN_DUMP


DEAD_EVENTS = frozenset({"PEER_DEAD", "PEER_TIMEOUT_DEAD"})
"""Monitor events that declare a peer dead for good (src/ras/peers.cc, src/ras/rasnet.cc)."""
TROUBLE_EVENTS = frozenset({"PEER_UNRESPONSIVE", "PEER_KEEPALIVE_TIMEOUT", "PEER_SEND_STUCK", "PEER_INIT_TIMEOUT"})
"""Monitor events of a peer that stopped answering, until a later PEER_RECOVERED or PEER_CONNECTED."""
HEALTHY_EVENTS = frozenset({"PEER_RECOVERED", "PEER_CONNECTED", "PEER_NEW"})


def peers_in_trouble(dump: RasDump) -> list[tuple[str, RasEvent]]:
    """("dead" | "unresponsive", the event that says so) per peer the monitor last saw in trouble, in order."""
    state: dict[tuple[object, object], tuple[str, RasEvent]] = {}
    for e in dump.events:
        key = (e.host if isinstance(e.host, str) else None, e.pid if isinstance(e.pid, int) else None)
        if key == (None, None):
            continue
        before = state.get(key)
        if before and before[0] == "dead":
            continue  # RAS never talks to a dead peer again
        if e.event in DEAD_EVENTS:
            state[key] = ("dead", e)
        elif e.event in TROUBLE_EVENTS:
            state[key] = ("unresponsive", e)
        elif e.event in HEALTHY_EVENTS:
            state.pop(key, None)
    return list(state.values())


def machine_from_ras(dump: RasDump) -> Machine:
    """One host's GPUs as RAS names them (NVML index); no links: a RAS dump says nothing of the fabric.

    The host is the first one with a missing or failing rank (or a missing or dead process, or a peer the
    monitor saw die or stop answering), else the first host named: the report, and a fleet's drain list, then
    point at the node the findings are about. The text form without rank lines gives only the job summary's
    GPUs per node, numbered from 0.
    """
    troubled = [
        r.host
        for c in dump.communicators
        for r in (*c.missing, *c.ranks)
        if (r.problem or r in c.missing) and isinstance(r.host, str)
    ] + [p.host for p in dump.processes]
    troubled += [e.host for _, e in peers_in_trouble(dump) if isinstance(e.host, str)]
    host = troubled[0] if troubled else dump.hosts[0] if dump.hosts else None
    indices = {
        r.gpu for c in dump.communicators for r in (*c.ranks, *c.missing) if r.host == host and isinstance(r.gpu, int)
    }
    for p in dump.processes:
        if p.host == host:
            indices.update(p.nvml_gpus)
    for e in dump.events:
        if e.host == host:
            indices.update(gpu_indices(e.gpus))
    if isinstance(dump.gpus_per_node, int):
        indices |= set(range(dump.gpus_per_node))
    gpus = tuple(Gpu(index=i) for i in sorted(indices))
    return Machine(source=SOURCE, gpus=gpus, host=Host(hostname=host if host is not None else NOT_IN_DUMP))
