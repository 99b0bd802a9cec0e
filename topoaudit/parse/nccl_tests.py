"""Parse nccl-tests / rccl-tests ``*_perf`` output (text table or ``-J`` JSON) into a :class:`BenchResult`.

CONTRACT:

* ``looks_like_nccl_tests(text) -> bool`` -- a cheap sniff for ``analyze``'s input loader.
* ``parse_nccl_tests(text, name="") -> NcclTestsParse``: ``result.source == "nccl-tests"``; one
  :class:`RankInfo` per ``#  Rank`` line (``host``, ``device``, PCI bus id, GPU name); one group ``all`` with
  every data row (out-of-place as the row, in-place in the ``inplace_*`` fields); ``peak_busbw``/``plateau``
  from the rows; ``avg_busbw_gbps`` is the footer's mean over every size (kept, never gated on);
  ``#wrong`` as an int (``N/A`` -> Unsupported). Raises :class:`NcclTestsParseError` (exit 4) when no data row
  can be read.

Accepted damage, each recorded as a :class:`ParseIssue` with its line: MPI/NCCL noise lines inside the
table (``[1,0]<stdout>:`` prefixes are stripped), collapsed whitespace, rows trimmed to the out-of-place
half, a missing header or footer, the old formats (no ``Group`` column, ``[0x1a]`` bus numbers, a float
``error`` column instead of ``#wrong``), rccl-tests' banner lines.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from topoaudit.errors import InputError
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow, RankInfo
from topoaudit.model.busbw import normalize_algorithm, peak, plateau
from topoaudit.model.machine import Gpu, Host, Machine
from topoaudit.model.values import Unsupported
from topoaudit.parse.topo_matrix import ParseIssue
from topoaudit.units import parse_bus_id

SOURCE = "nccl-tests"

_RANK = re.compile(
    r"^#\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<dev>\d+)\s+\[(?P<bus>[^\]]*)\]\s*(?P<name>.*?)\s*$"
)
_MPI_PREFIX = re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:\s?")
_TYPES = {
    "float", "half", "double", "bfloat16", "int8", "uint8", "int32", "uint32", "int64", "uint64", "int", "char",
    "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2", "float32", "float16", "float64",
}  # fmt: skip
_OPS = {"sum", "prod", "max", "min", "avg", "none", "mulsum", "premulsum"}
_COLLECTIVE = re.compile(r"\b(\w+?)_perf\b")


@dataclass(frozen=True)
class NcclTestsParse:
    result: BenchResult
    issues: tuple[ParseIssue, ...] = ()
    flavour: str = "nccl-tests"  # "nccl-tests" | "rccl-tests"
    format: str = "text"  # "text" | "json"


class NcclTestsParseError(InputError):
    """No data row of an nccl-tests table could be read."""


def looks_like_nccl_tests(text: str) -> bool:
    head = text[:20000]
    if head.lstrip().startswith("{"):
        return '"results"' in head and ('"bus_bw"' in head or '"nccl_version"' in head)
    has_header = bool(re.search(r"#\s*size\s+count\s+type", head)) or ("algbw" in head and "busbw" in head)
    has_rank = bool(re.search(r"^#\s*Rank\s+\d+\s+.*device", head, re.MULTILINE))
    has_perf = "_perf" in head or "nccl-tests" in head or "rccl-tests" in head or "Avg bus bandwidth" in text
    return (has_header and (has_rank or has_perf)) or (has_rank and has_perf)


def _float_or_none(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _bus_id(raw: str) -> str | Unsupported:
    """The rank's PCI bus id when the log prints a whole one; older logs print only the bus number."""
    return parse_bus_id(raw) or Unsupported(SOURCE, f"only the PCI bus number is printed ({raw.strip()})")


def _header_layout(line: str) -> tuple[bool, list[str]] | None:
    """(has a root column, names after the fixed columns) from the ``# size count type redop root ...`` line."""
    tokens = line.lstrip("#").split()
    if len(tokens) < 3 or tokens[0] != "size" or tokens[1] != "count":
        return None
    fixed = {"size", "count", "type", "redop", "root"}
    return "root" in tokens, [t for t in tokens if t not in fixed]


def parse_nccl_tests(text: str, name: str = "") -> NcclTestsParse:
    """Parse one nccl-tests run (text or ``-J`` JSON); see the module docstring."""
    if text.lstrip().startswith("{"):
        return _parse_json(text, name)
    issues: list[ParseIssue] = []
    ranks: list[RankInfo] = []
    rows: list[BenchRow] = []
    redops: set[str] = set()
    layout: tuple[bool, list[str]] | None = None
    version = ""
    flavour = "nccl-tests"
    collective = ""
    avg: float | Unsupported = Unsupported(SOURCE, "no 'Avg bus bandwidth' footer (output cut?)")
    oob: int | Unsupported = Unsupported(SOURCE, "no 'Out of bounds values' footer (output cut?)")
    in_table = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _MPI_PREFIX.sub("", raw).rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            body = stripped.lstrip("#").strip()
            if m := _RANK.match(stripped):
                ranks.append(
                    RankInfo(
                        rank=int(m["rank"]),
                        local_rank=int(m["dev"]),
                        host=m["host"],
                        device=f"cuda:{m['dev']}",
                        gpu_index=int(m["dev"]),
                        pci_bus_id=_bus_id(m["bus"]),
                        name=m["name"] or Unsupported(SOURCE, "no device name printed"),
                        pid=int(m["pid"]),
                    )
                )
            elif (cols := _header_layout(stripped)) is not None:
                layout = cols
                in_table = True
            elif body.startswith("nccl-tests version"):
                version = body
            elif body.startswith(("Collective test starting:", "Collective test concluded:")):
                collective = body.split(":", 1)[1].strip()
                in_table = False if "concluded" in body else in_table
            elif body.startswith("Avg bus bandwidth"):
                value = (
                    _float_or_none(body.split(":", 1)[1].split()[0])
                    if ":" in body and body.split(":", 1)[1].split()
                    else None
                )
                if value is not None:
                    avg = value
                in_table = False
            elif body.startswith("Out of bounds values"):
                tail = body.split(":", 1)[1].split() if ":" in body else []
                if tail and tail[0].isdigit():
                    oob = int(tail[0])
                in_table = False
            continue
        if stripped.startswith("rccl-tests"):
            flavour = "rccl-tests"
            version = version or stripped
            continue
        row = _data_row(stripped, layout, number, issues)
        if row is not None:
            rows.append(row)
            redops.add(stripped.split()[3].lower())
            in_table = True
        elif in_table:
            issues.append(ParseIssue(number, "ignored", f"not a table row (MPI/NCCL noise?): {stripped[:80]}"))
    if not rows:
        raise NcclTestsParseError(
            "no nccl-tests data row found",
            hint="pass the stdout of all_reduce_perf (or another *_perf) including the size/time/busbw table",
        )
    if layout is None:
        issues.append(ParseIssue(0, "recovered", "no column header: assumed time/algbw/busbw/#wrong per half"))
    collective = (
        collective or _collective_from(name) or _collective_from_rows(redops, issues) or _collective_from(text)
    ) or "all_reduce_perf"
    result = _result(ranks, rows, collective, flavour, version, avg, oob, issues)
    ran = algorithm_in(text, max(r.size_bytes for r in rows))
    if ran is not None:
        algo, evidence = ran
        result = dataclasses.replace(
            result, environment={**result.environment, ALGORITHM_KEY: algo, ALGORITHM_EVIDENCE_KEY: evidence}
        )
    return NcclTestsParse(result, tuple(issues), flavour, "text")


ALGORITHM_KEY = "nccl_algorithm"
"""``BenchResult.environment`` key: the all-reduce algorithm the input shows NCCL ran at its largest size."""
ALGORITHM_EVIDENCE_KEY = "nccl_algorithm_evidence"
"""``BenchResult.environment`` key: the line that shows it (``line 52: ...``)."""

# NCCL_DEBUG_SUBSYS=TUNING, one line per collective: "[AllReduce: ]8589934592 Bytes -> Algo 1 proto 2 time 27.0"
# (NVIDIA/nccl#1453, #1595: "Algo 1 proto 2" is RING/SIMPLE); newer NCCL prints the names ("Algo RING").
_TUNING = re.compile(r"NCCL INFO\s+(?:(?P<func>\w+):\s+)?(?P<bytes>\d+) Bytes -> Algo (?P<algo>\w+) proto")
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


def _collective_from_rows(redops: set[str], issues: list[ParseIssue]) -> str:
    """Without a name: ``redop none`` is a data-movement collective (all_gather and alltoall print the same)."""
    if redops == {"none"}:
        issues.append(ParseIssue(0, "recovered", "collective not named; redop 'none' read as all_gather"))
        return "all_gather_perf"
    return ""


def _data_row(
    line: str, layout: tuple[bool, list[str]] | None, number: int, issues: list[ParseIssue]
) -> BenchRow | None:
    tokens = line.split()
    if len(tokens) < 6 or not tokens[0].isdigit() or not tokens[1].isdigit():
        return None
    if tokens[2].lower() not in _TYPES or tokens[3].lower() not in _OPS:
        return None
    rest = tokens[4:]
    # no header: the current format has a root column (8 + 1 tokens, or 4 + 1 when trimmed); the old one not
    has_root = layout[0] if layout is not None else len(rest) % 4 == 1
    if has_root:
        if not re.fullmatch(r"-?\d+", rest[0]):
            return None
        rest = rest[1:]
    names = (
        layout[1] if layout is not None else ["time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"]
    )
    half = _half_width(names)
    oop, ip = rest[:half], rest[half : 2 * half]
    if len(oop) < 3 or any(_float_or_none(t) is None for t in oop[:3]):
        return None
    size, count = int(tokens[0]), int(tokens[1])
    if len(rest) < 2 * half:
        issues.append(ParseIssue(number, "recovered", "row trimmed: only the out-of-place half is present"))
    wrong_name = names[3] if len(names) > 3 else "#wrong"
    t, algbw, busbw = (float(x) for x in oop[:3])
    wrong = _wrong(oop[3] if len(oop) > 3 else None, wrong_name)
    ip_ok = len(ip) >= 3 and all(_float_or_none(x) is not None for x in ip[:3])
    missing = Unsupported(SOURCE, "in-place half not in the input")
    return BenchRow(
        size_bytes=size,
        count=count,
        dtype=tokens[2],
        time_us=t,
        algbw_gbps=algbw,
        busbw_gbps=busbw,
        wrong=wrong,
        inplace_time_us=float(ip[0]) if ip_ok else missing,
        inplace_busbw_gbps=float(ip[2]) if ip_ok else missing,
        inplace_wrong=_wrong(ip[3] if ip_ok and len(ip) > 3 else None, wrong_name) if ip_ok else missing,
    )


def _half_width(names: list[str]) -> int:
    """Columns per half: from the header (``time`` appears once per half), default 4."""
    starts = [i for i, n in enumerate(names) if n in ("time", "cputime")]
    if len(starts) >= 2:
        return starts[1] - starts[0]
    return 4


def _wrong(token: str | None, column: str) -> int | Unsupported:
    if token is None:
        return Unsupported(SOURCE, "#wrong column not in the input")
    if token.upper() == "N/A":
        return Unsupported(SOURCE, "data check disabled (-c 0): #wrong is N/A")
    value = _float_or_none(token)
    if value is None:
        return Unsupported(SOURCE, f"unreadable #wrong {token!r}")
    if column == "error":  # old nccl-tests: the maximum deviation, not a count
        if value == 0:
            return 0
        return Unsupported(SOURCE, f"old format reports a max error {token}, not a count of wrong elements")
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
) -> BenchResult:
    rows = sorted(rows, key=lambda r: r.size_bytes)
    curve = [(r.size_bytes, r.busbw_gbps) for r in rows]
    plat, top = plateau(curve), peak(curve)
    world = len(ranks) or 0
    if not ranks:
        issues.append(ParseIssue(0, "recovered", "no '#  Rank' lines: ranks, hosts and devices unknown"))
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
        backend="rccl" if flavour == "rccl-tests" else "nccl",
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
    for k, item in enumerate(doc["results"]):
        oop, ip = item.get("out_of_place"), item.get("in_place")
        first = oop if isinstance(oop, dict) else ip
        if not isinstance(first, dict):
            issues.append(ParseIssue(0, "ignored", f"results[{k}] has no timing"))
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
                inplace_time_us=_jfloat(ip.get("time", ip.get("cpu_time"))) if isinstance(ip, dict) else missing,
                inplace_busbw_gbps=_jfloat(ip.get("bus_bw")) if isinstance(ip, dict) else missing,
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
    return NcclTestsParse(result, tuple(issues), "nccl-tests", "json")


def _jfloat(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(value)  # "nan" is written as a string
    except (TypeError, ValueError):
        return 0.0


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
