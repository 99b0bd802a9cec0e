"""NCCL RAS status output (``ncclras``, NCCL 2.24+): its JSON form (``ncclras -f json``, 2.28.7+) and its text form.

* ``looks_like_nccl_ras(text) -> bool``: cheap sniff, no parse.
* ``parse_nccl_ras(text, name="") -> RasDump``: the communicators with their present and missing ranks, the
  job processes RAS reports missing or dead, and the per-rank errors; InputError when the text is a RAS dump
  that cannot be read (broken JSON, no communicator table).
* ``ras_to_dict`` / ``ras_from_dict``: the JSON-ready form the report carries in its extras (``nccl_ras``).

The formats follow NCCL's ``src/ras/client_support.cc`` (``jsonWriteRankData``, ``jsonWriteMissingRank``,
the text "Errors" section) and the samples of ``docs/userguide/source/troubleshooting/ras.rst``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from topoaudit.errors import InputError
from topoaudit.model.machine import Gpu, Host, Machine
from topoaudit.model.values import Unsupported

SOURCE = "nccl-ras"
NOT_IN_DUMP = Unsupported(source=SOURCE, reason="not in the RAS output")
# init_state / async_error values that are not an error (ncclSuccess, ncclInProgress)
_NOT_ERRORS = (0, 7)


@dataclass(frozen=True)
class RasRank:
    """One communicator rank as RAS reports it; ``problem`` is "" for a healthy rank."""

    rank: int
    host: str | Unsupported
    pid: int | Unsupported = NOT_IN_DUMP
    gpu: int | Unsupported = NOT_IN_DUMP  # the NVML index where given, else the CUDA index
    problem: str = ""  # "missing" | "unresponsive" | "dead" | "init error 3" | "async error 6" | "abort flag set"


@dataclass(frozen=True)
class RasCommunicator:
    """One communicator: ``ident`` as RAS names it (``#0-0 (cf264af53edbe986)`` in text, the hash in JSON)."""

    ident: str
    size: int | Unsupported
    ranks: tuple[RasRank, ...]  # ranks that answered (with any error they reported)
    missing: tuple[RasRank, ...]  # ranks RAS could not collect data from
    missing_count: int  # what RAS counted, even when it lists fewer ranks than that
    errors: tuple[str, ...] = ()  # text-form error lines ("Asynchronous error on 1 rank")


@dataclass(frozen=True)
class RasProcess:
    """A job process RAS reports as missing (INCOMPLETE) or unreachable (DEAD)."""

    state: str  # "missing" | "dead"
    host: str
    pid: int
    gpus: str  # as RAS prints them ("5", "0-3")


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
        return tuple(seen)


def looks_like_nccl_ras(text: str) -> bool:
    """A RAS status dump: the JSON document's keys, or the text form's section headers."""
    head = text[:65536]
    if head.lstrip().startswith("{"):
        return (
            '"communicators"' in head
            and ('"missing_ranks' in head or '"nccl_version"' in head)
            and ('"ras"' in text[-4096:] or '"ranks_count"' in head)
        )
    return bool(_TEXT_SIGNS.search(head))


_TEXT_SIGNS = re.compile(
    r"^Job summary\n=+\s*$|^Group\s+Comms\s+Nodes\s+Ranks\s+Ranks\s+Ranks\s+Status\s+Errors\s*$"
    r"|^Errors\n=+\n\n(?:INCOMPLETE|DEAD|#\d+-\d+ \([0-9a-f]+\) (?:INCOMPLETE|ERROR))\s*$",  # the Errors section alone
    re.M,
)


def parse_nccl_ras(text: str, name: str = "") -> RasDump:
    """Read either form of a RAS dump; InputError (one sentence) when it cannot be read."""
    if text.lstrip().startswith("{"):
        return _parse_json(text, name)
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
            f"init error {init}"
            if isinstance(init, int) and init not in _NOT_ERRORS
            else f"async error {err}"
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


# --- text -------------------------------------------------------------------------------------------------

_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+([\d-]+)\s+(\d+)\s+(\d+)\s+([A-Z]+)\s+([A-Z]+)\s*$")
_SUMMARY = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
_COMM = re.compile(r"^(#\d+-\d+ \([0-9a-f]+\)) ([A-Z]+)\s*$")
_SECTION = re.compile(r"^(INCOMPLETE|DEAD|TIMEOUT)\s*$")
_PROCESS = re.compile(r"^\s+Process (\d+) on node (\S+) managing GPUs? (.+?)\s*$")
_RANK_LINE = re.compile(
    r"^\s+Rank (\d+)(?: has .+?)? -- GPU (\d+)(?: \(NVML (\d+)\))?[^,]*? managed by process (\d+) on node (\S+)\s*$"
)
_RANK_NOT_FOUND = re.compile(r"^\s+Rank (\d+) -- \[process information not found\]")
_MISSING_COUNT = re.compile(r"^\s+Missing communicator data from (\d+) rank")
_MISSING_OLD = re.compile(r"^\s+The missing ranks?: ([\d, ]+)")
_ERROR_LINE = re.compile(r"^\s+((?:Initialization|Asynchronous) errors? on \d+ ranks?)")
_TIMEOUTS = re.compile(r"Encountered (\d+) communication timeouts?")


def _parse_text(text: str, name: str) -> RasDump:
    lines = text.splitlines()
    table: list[tuple[int, int]] = []  # (group, comms in group) per summary row
    sizes: dict[int, int] = {}
    nodes: int | Unsupported = NOT_IN_DUMP
    per_node: int | Unsupported = NOT_IN_DUMP
    section = ""  # "Errors" | "Warnings"
    block = ""  # the error block the lines belong to: "INCOMPLETE", "DEAD", or a communicator ident
    processes: list[RasProcess] = []
    comm_missing: dict[str, list[RasRank]] = {}
    comm_counts: dict[str, int] = {}
    comm_errors: dict[str, list[str]] = {}
    comm_ranks: dict[str, list[RasRank]] = {}
    timeouts = 0
    kind = ""  # what the rank lines of a communicator's block are: "missing" | "error" | "warn"
    after_summary = False
    for i, line in enumerate(lines):
        if line.startswith("Job summary"):
            after_summary = True
            continue
        if after_summary and (m := _SUMMARY.match(line)):
            nodes, per_node = int(m[1]), int(m[2]) * int(m[3])
            after_summary = False
            continue
        if m := _ROW.match(line):
            table.append((int(m[1]), int(m[2])))
            sizes[int(m[1])] = int(m[5])
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
                for r in re.findall(r"\d+", m[1]):
                    comm_missing[block].append(RasRank(int(r), NOT_IN_DUMP, problem="missing"))
            elif m := _ERROR_LINE.match(line):
                comm_errors.setdefault(block, []).append(m[1])
            elif m := _RANK_LINE.match(line):
                gpu = int(m[3]) if m[3] is not None else int(m[2])
                problem = {"missing": "missing", "error": "error"}.get(kind, "")
                target = comm_missing if kind == "missing" else comm_ranks
                target.setdefault(block, []).append(RasRank(int(m[1]), m[5], int(m[4]), gpu, problem))
            elif m := _RANK_NOT_FOUND.match(line):
                comm_missing[block].append(RasRank(int(m[1]), NOT_IN_DUMP, problem="missing"))
    if not table and comm_missing:  # the Errors section quoted alone: its communicators, sizes unknown
        return RasDump(
            "text",
            NOT_IN_DUMP,
            tuple(
                RasCommunicator(
                    ident,
                    NOT_IN_DUMP,
                    tuple(comm_ranks.get(ident, ())),
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
    comms: list[RasCommunicator] = []
    for group, count in table:
        for k in range(count):
            prefix = f"#{group}-{k} ("
            ident = next((b for b in comm_missing if b.startswith(prefix)), f"#{group}-{k}")
            missing = tuple(comm_missing.get(ident, ()))
            comms.append(
                RasCommunicator(
                    ident,
                    sizes[group],
                    ranks=tuple(comm_ranks.get(ident, ())),
                    missing=missing,
                    missing_count=max(comm_counts.get(ident, 0), len(missing)),
                    errors=tuple(comm_errors.get(ident, ())),
                )
            )
    return RasDump("text", NOT_IN_DUMP, tuple(comms), tuple(processes), timeouts, nodes, per_node)


# --- the report's extras ----------------------------------------------------------------------------------


def _v(value: object) -> object:
    return None if isinstance(value, Unsupported) else value


def ras_to_dict(dump: RasDump) -> dict[str, Any]:
    """The JSON-ready form kept in the report (absent values are omitted, never 0)."""

    def rank(r: RasRank) -> dict[str, Any]:
        d = {"rank": r.rank, "host": _v(r.host), "pid": _v(r.pid), "gpu": _v(r.gpu), "problem": r.problem}
        return {k: v for k, v in d.items() if v is not None and v != ""}

    return {
        "format": dump.format,
        **({"nccl_version": dump.nccl_version} if isinstance(dump.nccl_version, str) else {}),
        "communicators": [
            {
                "id": c.ident,
                **({"size_ranks": c.size} if isinstance(c.size, int) else {}),
                "ranks": [rank(r) for r in c.ranks],
                "missing_ranks": [rank(r) for r in c.missing],
                "missing_ranks_count": c.missing_count,
                "errors": list(c.errors),
            }
            for c in dump.communicators
        ],
        "processes": [{"state": p.state, "host": p.host, "pid": p.pid, "gpus": p.gpus} for p in dump.processes],
        "timeouts_count": dump.timeouts,
    }


def ras_from_dict(d: dict[str, Any]) -> RasDump:
    """Inverse of ``ras_to_dict`` (what was omitted comes back as not in the dump)."""

    def rank(r: dict[str, Any]) -> RasRank:
        return RasRank(
            int(r["rank"]),
            r.get("host", NOT_IN_DUMP),
            r.get("pid", NOT_IN_DUMP),
            r.get("gpu", NOT_IN_DUMP),
            r.get("problem", ""),
        )

    comms = tuple(
        RasCommunicator(
            c["id"],
            c.get("size_ranks", NOT_IN_DUMP),
            tuple(rank(r) for r in c.get("ranks", ())),
            tuple(rank(r) for r in c.get("missing_ranks", ())),
            int(c.get("missing_ranks_count", 0)),
            tuple(c.get("errors", ())),
        )
        for c in d.get("communicators", ())
    )
    procs = tuple(RasProcess(p["state"], p["host"], int(p["pid"]), p["gpus"]) for p in d.get("processes", ()))
    return RasDump(d["format"], d.get("nccl_version", NOT_IN_DUMP), comms, procs, int(d.get("timeouts_count", 0)))


def machine_from_ras(dump: RasDump) -> Machine:
    """One host's GPUs as RAS names them (NVML index); no links: a RAS dump says nothing of the fabric.

    The host is the first one with a missing or failing rank (or a missing or dead process), else the first
    host named: the report, and a fleet's drain list, then point at the node the findings are about. The
    text form without rank lines gives only the job summary's GPUs per node, numbered from 0.
    """
    troubled = [
        r.host
        for c in dump.communicators
        for r in (*c.missing, *c.ranks)
        if (r.problem or r in c.missing) and isinstance(r.host, str)
    ] + [p.host for p in dump.processes]
    host = troubled[0] if troubled else dump.hosts[0] if dump.hosts else None
    indices = {
        r.gpu for c in dump.communicators for r in (*c.ranks, *c.missing) if r.host == host and isinstance(r.gpu, int)
    }
    for p in dump.processes:
        if p.host == host and p.gpus.isdigit():
            indices.add(int(p.gpus))
    if isinstance(dump.gpus_per_node, int):
        indices |= set(range(dump.gpus_per_node))
    gpus = tuple(Gpu(index=i) for i in sorted(indices))
    return Machine(source=SOURCE, gpus=gpus, host=Host(hostname=host if host is not None else NOT_IN_DUMP))
