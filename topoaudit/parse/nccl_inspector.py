"""NCCL Inspector's output (the profiler plugin ``libnccl-profiler-inspector.so``): its per-collective JSON and
its Prometheus textfile (``NCCL_INSPECTOR_PROM_DUMP=1``).

With ``NCCL_INSPECTOR_ENABLE=1`` each process writes one JSON object per completed collective (or P2P
operation) per communicator: ``header`` (communicator ``id``, ``comm_name``, ``rank``, ``n_ranks``, ``nnodes``),
``metadata`` (``inspector_output_format_version``, ``hostname``, ``pid``, ``dump_timestamp_us``) and
``coll_perf`` (``coll``, ``coll_sn``, ``coll_msg_size_bytes``, ``coll_exec_time_us``, ``coll_timing_source``,
``coll_algobw_gbs``, ``coll_busbw_gbs``) or ``p2p_perf``. The plugin writes one object a line (JSON lines, as
NVIDIA's exporter reads it), its README shows them pretty-printed: both are read. A damaged object is noted by
line and skipped. ``coll_timing_source`` says whether the GPU timed the kernels (``kernel_gpu``) or the CPU timed
the call (``kernel_cpu``, ``collective_cpu``, which include launch and wait): the two are never summarized
together, and only GPU-timed collectives are judged (NCCL 2.30's plugin drops CPU-timed ones by default,
``NCCL_INSPECTOR_REQUIRE_KERNEL_TIMING=1``).

The Prometheus textfile comes in two forms: NCCL 2.29's one line per collective (labels ``comm_id``,
``hostname``, ``rank``, ``nranks``, ``n_nodes``, ``gpu_device_id``, ``collective``, ``coll_sn``,
``message_size`` such as ``2.00GB``; metrics ``nccl_algorithm_bandwidth_gbs``, ``nccl_bus_bandwidth_gbs``,
``nccl_collective_exec_time_microseconds``), and NCCL 2.30's buckets (labels ``version`` ``v5.1``, ``node``,
``gpu``, ``comm_name``, ``n_nodes``, ``nranks``, ``collective``, ``message_size`` such as ``4-5GB``,
``algo_proto`` such as ``NVLS_Simple``; the geometric mean busbw of the bucket). Its ``algo_proto`` names the
algorithm NCCL ran, which the JSON does not.

Keys, labels and formats are those of NVIDIA/nccl ``ext-profiler/inspector/inspector.cc`` at v2.29.2-1,
``plugins/profiler/inspector/inspector.cc`` and ``inspector_prom.cc`` at v2.29.7-1, and
``plugins/profiler/inspector/inspector_json.cc`` and ``inspector_prom.cc`` at v2.30.3-1 and v2.30.7-1.

Pure: no I/O.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass
from typing import Any

from topoaudit.model.busbw import busbw_factor, normalize_algorithm

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
    algobw_gbps: float  # NCCL 2.30's Prometheus buckets give none: busbw / nccl-tests' factor there
    busbw_gbps: float
    dump_timestamp_us: int
    timing: str = ""  # coll_timing_source: "kernel_gpu" | "kernel_cpu" | "collective_cpu"; "" when not given
    algorithm: str = ""  # the algorithm NCCL ran (Prometheus algo_proto, 2.30), as the oracle names it; "" unknown

    @property
    def cpu_timed(self) -> bool:
        """True when the CPU timed the call: launch and wait included, not comparable to a GPU-timed one."""
        return self.timing in CPU_TIMING


CPU_TIMING = ("kernel_cpu", "collective_cpu")
"""coll_timing_source values timed by the CPU (inspectorTimingSourceToString, inspector.cc at v2.29.2-1 on)."""


@dataclass(frozen=True)
class InspectorLog:
    """What an Inspector file holds: its collectives and the lines left out, with why."""

    records: tuple[InspectorRecord, ...]
    format_versions: tuple[str, ...]
    p2p_count: int  # point-to-point records, read but not judged
    notes: tuple[tuple[int, str], ...]  # (line, why it was skipped)


def looks_like_inspector(text: str) -> bool:
    """True when the text starts with an Inspector record (an object with header, metadata and coll_perf), or is
    the plugin's Prometheus textfile."""
    head = text[:65536]
    if _PROM_SIGN.search(head):
        return True
    if '"inspector_output_format_version"' not in head or '"header"' not in head:
        return False
    return head.lstrip()[:1] == "{"


_PROM_SIGN = re.compile(
    r"^nccl_(?:bus_bandwidth_gbs|algorithm_bandwidth_gbs|collective_exec_time_microseconds|p2p_bus_bandwidth_gbs)\{"
    r"[^}]*(?:comm_id|comm_name)=",
    re.M,
)


def parse_inspector(text: str, name: str = "<input>") -> InspectorLog:
    """Read every Inspector object (or Prometheus sample) in ``text``; damaged ones become notes, never raise."""
    if _PROM_SIGN.search(text[:65536]):
        return parse_inspector_prom(text)
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
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            pos = _next_object(text, pos)
            last = line + text.count("\n", counted, pos) - (1 if pos < end else 0)
            last = max(last, line)
            span = f"lines {line} to {last}" if last > line else f"line {line}"
            notes.append((line, f"{span}: not a JSON object ({_json_refusal(exc)}); skipped"))
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


def _json_refusal(exc: Exception) -> str:
    """Why ``json`` refused an object, in words: its own message, or what Python's limits met."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested more than a thousand levels deep"
    return "an integer thousands of digits long"  # int() refuses a literal of more than 4,300 digits


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _next_object(text: str, pos: int) -> int:
    """Where the next object starts after a damaged one: the next line that opens with ``{``."""
    found = text.find("\n{", pos)
    return len(text) if found < 0 else found + 1


MAX_GBPS = 1e6
"""No link carries a million GB/s: a figure above (``1e308``, inf, a 400-digit integer) is damage, not a measurement."""
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
        if not (_is_number(value) and 0 <= value <= MAX_GBPS):
            return f"coll_perf.{key} is not a bandwidth; skipped"
    if not isinstance(coll.get("coll"), str) or not isinstance(header.get("id"), str):
        return "coll_perf.coll or header.id is not a string; skipped"
    host = meta.get("hostname")
    if not isinstance(host, str) or not host:
        return "metadata.hostname is missing; skipped"
    pid: Any = meta.get("pid")
    stamp: Any = meta.get("dump_timestamp_us")
    name = header.get("comm_name")
    timing = coll.get("coll_timing_source")
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
        timing=timing if isinstance(timing, str) else "",
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def summarize(log: InspectorLog) -> dict[str, Any]:
    """The report's view of the file: one row per host, communicator, collective, algorithm and timing source
    (JSON-ready, units named): CPU-timed collectives are never mixed with GPU-timed ones.

    ``large_median_busbw_gbps`` is the median busbw of the collectives at or above ``LARGE_MESSAGE_BYTES``;
    a row without such a collective carries the reason instead of a number.
    """
    groups: dict[tuple[str, str, str, str, str], list[InspectorRecord]] = {}
    for r in log.records:
        groups.setdefault((r.host, r.comm_id, r.coll, r.algorithm, r.timing), []).append(r)
    rows = []
    for (host, comm_id, coll, algorithm, timing), recs in groups.items():
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
        if algorithm:
            row["algorithm"] = algorithm
        if timing:
            row["timing_source"] = timing
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
        "cpu_timed_records": sum(1 for r in log.records if r.cpu_timed),
        "p2p_records": log.p2p_count,
        "large_message_bytes": LARGE_MESSAGE_BYTES,
        "communicators": rows,
    }


_SUMMARY_ROW = {"host": str, "comm_id": str, "comm_name": str, "coll": str, "n_ranks": int, "nnodes": int,
                "first_line": int}  # fmt: skip
_SUMMARY_ROW_OPTIONAL = {"algorithm": str, "timing_source": str, "large_median_busbw_gbps": float}


def check_summary(summary: dict[str, Any]) -> None:
    """Refuse a saved report's Inspector summary (extras.nccl_inspector) that is not as :func:`summarize` writes
    it, where the rules read it: InputError (exit 4) naming the value, before any rule meets it."""

    def refuse(what: str, value: object) -> None:
        from topoaudit.errors import InputError
        from topoaudit.model.codec import shown

        raise InputError(
            "the saved report's NCCL Inspector section (extras.nccl_inspector) is not as topoaudit writes it: "
            f"{what} is {shown(value, 40)}"
        )

    for key in ("large_message_bytes", "cpu_timed_records"):
        if key in summary and not _is_int(summary[key]):
            refuse(key, summary[key])
    rows = summary.get("communicators", [])
    if not isinstance(rows, list):
        refuse("communicators", rows)
    for row in rows:
        if not isinstance(row, dict):
            refuse("a communicator row", row)
        for key, kind in (*_SUMMARY_ROW.items(), *_SUMMARY_ROW_OPTIONAL.items()):
            value = row.get(key)
            if value is None and key in _SUMMARY_ROW_OPTIONAL:
                continue
            sound = (
                _is_number(value) and 0 <= value <= MAX_GBPS
                if kind is float
                else _is_int(value)
                if kind is int
                else isinstance(value, kind)
            )
            if not sound:
                refuse(f"a row's {key}", value)


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


# --- the Prometheus textfile (NCCL_INSPECTOR_PROM_DUMP=1) -------------------------------------------------

_SAMPLE = re.compile(r"^(nccl_[a-z0-9_]+)\{(.*)\}\s+(\S+)\s*$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)(?:-\d+)?(B|KB|MB|GB|TB)$")


def _size_bytes(label: str) -> int | None:
    """``2.00GB`` (2.29: the size, 1024-based) or ``4-5GB`` (2.30: the bucket, its lower bound) in bytes."""
    m = _SIZE.match(label.strip())
    if not m:
        return None
    size = float(m[1]) * _UNITS[m[2]]
    return int(size) if math.isfinite(size) else None  # a label of 400 nines is no size


def parse_inspector_prom(text: str) -> InspectorLog:
    """Read the plugin's Prometheus samples: one record per ``nccl_bus_bandwidth_gbs`` sample, with its execution
    time (and, in 2.29, algorithm bandwidth) from the samples of the same labels."""
    samples: dict[str, dict[str, float]] = {}
    order: list[tuple[int, str, dict[str, str]]] = []
    notes: list[tuple[int, str]] = []
    p2p = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            notes.append((number, f"line {number}: not a Prometheus sample; skipped"))
            continue
        metric, labels_text, value_text = m[1], m[2], m[3]
        try:
            value = float(value_text)
        except ValueError:
            notes.append((number, f"line {number}: {metric} has no number ({value_text!r}); skipped"))
            continue
        if metric.startswith("nccl_p2p_"):
            p2p += metric == "nccl_p2p_bus_bandwidth_gbs"
            continue
        by_metric = samples.setdefault(labels_text, {})
        if not by_metric:
            order.append((number, labels_text, dict(_LABEL.findall(labels_text))))
        by_metric[metric] = value
    records: list[InspectorRecord] = []
    versions: list[str] = []
    for number, labels_text, labels in order:
        values = samples[labels_text]
        record = _prom_record(number, labels, values)
        if isinstance(record, str):
            notes.append((number, f"line {number}: {record}; skipped"))
            continue
        version = f"prometheus {labels['version']}" if "version" in labels else "prometheus (per collective)"
        if version not in versions:
            versions.append(version)
        records.append(record)
    return InspectorLog(tuple(records), tuple(versions), p2p, tuple(notes))


def _prom_record(line: int, labels: dict[str, str], values: dict[str, float]) -> InspectorRecord | str:
    busbw = values.get("nccl_bus_bandwidth_gbs")
    if busbw is None or busbw != busbw or busbw < 0:
        return "a sample set without nccl_bus_bandwidth_gbs"
    size = _size_bytes(labels.get("message_size", ""))
    host = labels.get("hostname") or labels.get("node") or ""
    coll = labels.get("collective", "")
    try:
        ranks = int(labels.get("nranks", labels.get("n_ranks", "")))
        nodes = int(labels.get("n_nodes", ""))
    except ValueError:
        return "nranks or n_nodes is not a whole number"
    if size is None or not host or not coll:
        return "message_size, the host (hostname or node) or collective is missing"
    gpu = labels.get("gpu_device_id") or labels.get("gpu") or ""
    rank_text = labels.get("rank", "")
    rank = int(rank_text) if rank_text.isdecimal() else int(gpu[3:]) if gpu[3:].isdecimal() else -1
    algo_proto = labels.get("algo_proto", "")
    algorithm = normalize_algorithm(algo_proto.rsplit("_", 1)[0]) if "_" in algo_proto else ""
    factor = busbw_factor(ranks, _COLLECTIVES.get(coll, "all_reduce")) if ranks > 1 else 1.0
    algbw = values.get("nccl_algorithm_bandwidth_gbs", busbw / factor if factor else busbw)
    sn = labels.get("coll_sn", "")
    return InspectorRecord(
        line=line,
        host=host,
        pid=-1,
        # 2.30's buckets carry no communicator id: its name and shape stand for it
        comm_id=labels.get("comm_id") or f"{labels.get('comm_name') or 'unknown'} ({ranks} ranks)",
        comm_name=labels.get("comm_name") or "unknown",
        rank=rank,
        n_ranks=ranks,
        nnodes=nodes,
        coll=coll,
        coll_sn=int(sn) if sn.isdecimal() else -1,
        msg_size_bytes=size,
        exec_time_us=round(values.get("nccl_collective_exec_time_microseconds", 0.0)),
        algobw_gbps=round(algbw, 6),
        busbw_gbps=busbw,
        dump_timestamp_us=-1,
        algorithm=algorithm,
    )


_COLLECTIVES = {
    "AllReduce": "all_reduce",
    "AllGather": "all_gather",
    "ReduceScatter": "reduce_scatter",
    "Broadcast": "broadcast",
    "Reduce": "reduce",
}
"""ncclFuncToString names (the ``collective`` label) as nccl-tests' busbw factors name them."""
