"""NCCL Inspector's per-collective JSON output (the profiler plugin ``libnccl-profiler-inspector.so``).

With ``NCCL_INSPECTOR_ENABLE=1`` each process writes one JSON object per completed collective (or P2P
operation) per communicator: ``header`` (communicator ``id``, ``comm_name``, ``rank``, ``n_ranks``, ``nnodes``),
``metadata`` (``inspector_output_format_version``, ``hostname``, ``pid``, ``dump_timestamp_us``) and
``coll_perf`` (``coll``, ``coll_sn``, ``coll_msg_size_bytes``, ``coll_exec_time_us``, ``coll_algobw_gbs``,
``coll_busbw_gbs``) or ``p2p_perf``. The keys are those ``plugins/profiler/inspector/inspector_json.cc``
writes (NVIDIA/nccl); the plugin writes one object a line (JSON lines, as NVIDIA's exporter reads it), its
README shows them pretty-printed: both are read. A damaged object is noted by line and skipped.

Pure: no I/O.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from typing import Any

LARGE_MESSAGE_BYTES = 256 * 1024 * 1024
"""The message size from which an all-reduce's busbw stands for its plateau (the oracle's figure)."""


@dataclass(frozen=True)
class InspectorRecord:
    """One completed collective as one rank's Inspector saw it."""

    line: int  # where its object starts in the file
    host: str
    pid: int
    comm_id: str  # the communicator's hash, as NCCL prints it
    comm_name: str  # "unknown" where the application named none
    rank: int
    n_ranks: int
    nnodes: int
    coll: str  # AllReduce, AllGather, ReduceScatter, ...
    coll_sn: int
    msg_size_bytes: int
    exec_time_us: int
    algobw_gbps: float
    busbw_gbps: float
    dump_timestamp_us: int


@dataclass(frozen=True)
class InspectorLog:
    """What an Inspector file holds: its collectives and the lines left out, with why."""

    records: tuple[InspectorRecord, ...]
    format_versions: tuple[str, ...]
    p2p_count: int  # point-to-point records, read but not judged
    notes: tuple[tuple[int, str], ...]  # (line, why it was skipped)


def looks_like_inspector(text: str) -> bool:
    """True when the text starts with an Inspector record (an object with header, metadata and coll_perf)."""
    head = text[:65536]
    if '"inspector_output_format_version"' not in head or '"header"' not in head:
        return False
    return head.lstrip()[:1] == "{"


def parse_inspector(text: str, name: str = "<input>") -> InspectorLog:
    """Read every Inspector object in ``text``; damaged ones become notes, never an exception."""
    decoder = json.JSONDecoder()
    records: list[InspectorRecord] = []
    notes: list[tuple[int, str]] = []
    versions: list[str] = []
    p2p = 0
    pos, end = 0, len(text)
    line, counted = 1, 0  # the line at ``counted``, advanced as the reader goes (never recounted from the start)
    while True:
        pos = _skip_space(text, pos)
        if pos >= end:
            break
        line, counted = line + text.count("\n", counted, pos), pos
        try:
            obj, stop = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            pos = _next_object(text, pos)
            last = line + text.count("\n", counted, pos) - (1 if pos < end else 0)
            last = max(last, line)
            span = f"lines {line} to {last}" if last > line else f"line {line}"
            notes.append((line, f"{span}: not a JSON object ({exc.msg}); skipped"))
            continue
        pos = stop
        if not isinstance(obj, dict):
            notes.append((line, "a JSON value that is not an Inspector object; skipped"))
            continue
        if "p2p_perf" in obj and "coll_perf" not in obj:
            p2p += 1
            continue
        record = _record(obj, line)
        if isinstance(record, str):
            notes.append((line, record))
            continue
        version = obj["metadata"].get("inspector_output_format_version")
        if isinstance(version, str) and version not in versions:
            versions.append(version)
        records.append(record)
    return InspectorLog(tuple(records), tuple(versions), p2p, tuple(notes))


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _next_object(text: str, pos: int) -> int:
    """Where the next object starts after a damaged one: the next line that opens with ``{``."""
    found = text.find("\n{", pos)
    return len(text) if found < 0 else found + 1


_INT_KEYS = (("header", "rank"), ("header", "n_ranks"), ("header", "nnodes"))
_COLL_INT_KEYS = ("coll_sn", "coll_msg_size_bytes", "coll_exec_time_us")
_COLL_FLOAT_KEYS = ("coll_algobw_gbs", "coll_busbw_gbs")


def _record(obj: dict[str, Any], line: int) -> InspectorRecord | str:
    """The record, or why the object cannot be one."""
    parts = {key: obj.get(key) for key in ("header", "metadata", "coll_perf")}
    missing = [key for key, value in parts.items() if not isinstance(value, dict)]
    if missing:
        return f"an object without {', '.join(missing)}; skipped"
    header, meta, coll = parts["header"], parts["metadata"], parts["coll_perf"]
    assert isinstance(header, dict) and isinstance(meta, dict) and isinstance(coll, dict)
    for section, key in _INT_KEYS:
        if not _is_int(obj[section].get(key)):
            return f"{section}.{key} is not a whole number; skipped"
    for key in _COLL_INT_KEYS:
        if not _is_int(coll.get(key)):
            return f"coll_perf.{key} is not a whole number; skipped"
    for key in _COLL_FLOAT_KEYS:
        value: Any = coll.get(key)
        if not (_is_number(value) and value >= 0):
            return f"coll_perf.{key} is not a bandwidth; skipped"
    if not isinstance(coll.get("coll"), str) or not isinstance(header.get("id"), str):
        return "coll_perf.coll or header.id is not a string; skipped"
    host = meta.get("hostname")
    if not isinstance(host, str) or not host:
        return "metadata.hostname is missing; skipped"
    pid: Any = meta.get("pid")
    stamp: Any = meta.get("dump_timestamp_us")
    name = header.get("comm_name")
    return InspectorRecord(
        line=line,
        host=host,
        pid=pid if _is_int(pid) else -1,
        comm_id=header["id"],
        comm_name=name if isinstance(name, str) and name else "unknown",
        rank=header["rank"],
        n_ranks=header["n_ranks"],
        nnodes=header["nnodes"],
        coll=coll["coll"],
        coll_sn=coll["coll_sn"],
        msg_size_bytes=coll["coll_msg_size_bytes"],
        exec_time_us=coll["coll_exec_time_us"],
        algobw_gbps=float(coll["coll_algobw_gbs"]),
        busbw_gbps=float(coll["coll_busbw_gbs"]),
        dump_timestamp_us=stamp if _is_int(stamp) else -1,
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def summarize(log: InspectorLog) -> dict[str, Any]:
    """The report's view of the file: one row per host, communicator and collective (JSON-ready, units named).

    ``large_median_busbw_gbps`` is the median busbw of the collectives at or above ``LARGE_MESSAGE_BYTES``;
    a row without such a collective carries the reason instead of a number.
    """
    groups: dict[tuple[str, str, str], list[InspectorRecord]] = {}
    for r in log.records:
        groups.setdefault((r.host, r.comm_id, r.coll), []).append(r)
    rows = []
    for (host, comm_id, coll), recs in groups.items():
        large = [r.busbw_gbps for r in recs if r.msg_size_bytes >= LARGE_MESSAGE_BYTES]
        first = recs[0]
        row: dict[str, Any] = {
            "host": host,
            "comm_id": comm_id,
            "comm_name": first.comm_name,
            "coll": coll,
            "n_ranks": first.n_ranks,
            "nnodes": first.nnodes,
            "ranks": sorted({r.rank for r in recs}),
            "collectives": len(recs),
            "largest_msg_size_bytes": max(r.msg_size_bytes for r in recs),
            "median_busbw_gbps": round(statistics.median(r.busbw_gbps for r in recs), 3),
            "large_collectives": len(large),
            "first_line": first.line,
            "by_size": _by_size(recs),
        }
        stamps = [r.dump_timestamp_us for r in recs if r.dump_timestamp_us >= 0]
        if stamps:  # when the collectives were written: the span the busbw figures cover
            row["first_dump_timestamp_us"], row["last_dump_timestamp_us"] = min(stamps), max(stamps)
        if large:
            row["large_median_busbw_gbps"] = round(statistics.median(large), 3)
        else:
            row["large_median_busbw_reason"] = f"no collective of {LARGE_MESSAGE_BYTES // (1024 * 1024)} MiB or more"
        rows.append(row)
    return {
        "format_versions": list(log.format_versions),
        "records": len(log.records),
        "p2p_records": log.p2p_count,
        "large_message_bytes": LARGE_MESSAGE_BYTES,
        "communicators": rows,
    }


def _by_size(recs: list[InspectorRecord]) -> list[dict[str, Any]]:
    """Median busbw per message size, smallest first: the row's sweep as its collectives ran it."""
    sizes: dict[int, list[float]] = {}
    for r in recs:
        sizes.setdefault(r.msg_size_bytes, []).append(r.busbw_gbps)
    return [
        {"msg_size_bytes": size, "collectives": len(bws), "median_busbw_gbps": round(statistics.median(bws), 3)}
        for size, bws in sorted(sizes.items())
    ]


def gpus_per_host(log: InspectorLog) -> int:
    """The most ranks one host ran in one communicator: the GPUs the file shows on a host (it names no GPU)."""
    ranks: dict[tuple[str, str], set[int]] = {}
    for r in log.records:
        ranks.setdefault((r.host, r.comm_id), set()).add(r.rank)
    return max((len(v) for v in ranks.values()), default=0)
