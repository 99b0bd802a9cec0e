"""Turn whatever the user hands ``analyze`` into a Machine: a pasted ``topo -m``, a snapshot, a saved
report, a bundled example, an nccl-tests log.

``LOADERS`` is an ordered table of (name, sniff, load); the first loader whose sniff accepts the text
reads it. A loader only loads: what it read is judged by ``pipeline.analyze``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from topoaudit.errors import InputError
from topoaudit.model.machine import Machine
from topoaudit.model.report import BENCH_NOT_RUN, CAPTURES_NOT_GIVEN, NCCL_LOG_NOT_GIVEN, InputIssue, SourceInfo
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import INSPECTOR_NOT_GIVEN, RAS_NOT_GIVEN, facts_in_extras

if TYPE_CHECKING:  # imported by the loaders of the inputs that have them, not by a matrix's
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.report import Report

MAX_INPUT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Loaded:
    """A machine and what the loader learned on the way."""

    machine: Machine
    source: SourceInfo
    issues: tuple[InputIssue, ...] = ()
    extras: dict[str, Any] = field(default_factory=dict)
    bench: BenchResult | Unsupported = BENCH_NOT_RUN  # an imported nccl-tests run, not yet judged
    nccl: NcclView | Unsupported = NCCL_LOG_NOT_GIVEN  # NCCL's own view from an NCCL_DEBUG=INFO log
    captures: Captures | Unsupported = CAPTURES_NOT_GIVEN  # NCCL XML dumps, nvbandwidth matrices
    inspector: dict[str, Any] | Unsupported = INSPECTOR_NOT_GIVEN  # NCCL Inspector, summarized per communicator
    ras: dict[str, Any] | Unsupported = RAS_NOT_GIVEN  # an NCCL RAS dump, in the form the report keeps
    saved: Report | None = None  # the input was a saved report: what it was asked and decided (fleet keeps it)


Sniff = Callable[[str], bool]
Load = Callable[[str, str], Loaded]


def _is_report(text: str) -> bool:
    head = text.lstrip()[:4096]
    return head.startswith("{") and '"schema_version"' in head and '"gate"' in text


def _load_report(text: str, name: str) -> Loaded:
    from topoaudit.model.report import report_from_json

    report = report_from_json(text, name)
    return Loaded(
        report.machine,
        SourceInfo("report", name, report.source.demo, f"re-judged from a saved report ({report.source.kind})"),
        report.input_issues,
        extras=dict(report.extras),
        bench=report.bench,  # a saved sweep is judged again with the rest of the report
        saved=report,
        **facts_in_extras(report.extras),
    )


def _is_topo(text: str) -> bool:
    from topoaudit.parse.topo_matrix import looks_like_topo_matrix

    return looks_like_topo_matrix(text)


def _load_topo(text: str, name: str) -> Loaded:
    from topoaudit.parse.topo_matrix import parse_topo_matrix

    parsed = parse_topo_matrix(text)
    issues = tuple(InputIssue(i.line, i.action, i.message) for i in parsed.issues)
    # Columns the paste adds to topo -m (a re-typed NUMA column) are kept as text, per GPU.
    extras = {"text_columns": {c.title: dict(c.values) for c in parsed.text_columns}} if parsed.text_columns else {}
    return Loaded(parsed.machine, SourceInfo("topo-matrix", name), issues, extras=extras)


# --- nccl-tests / rccl-tests output ---
def _is_nccl_tests(text: str) -> bool:
    if "bus" not in text[:20000] and "Avg bus bandwidth" not in text:  # cheap test before the parser loads
        return False
    from topoaudit.parse.nccl_tests import looks_like_nccl_tests

    return looks_like_nccl_tests(text)


def _load_nccl_tests(text: str, name: str) -> Loaded:
    """The ranks' GPUs (first host) become the machine; the rows become the bench the pipeline judges."""
    from topoaudit.parse.nccl_tests import machine_from_result, parse_nccl_tests

    parsed = parse_nccl_tests(text, name)
    issues = tuple(InputIssue(i.line, i.action, i.message) for i in parsed.issues)
    description = f"{parsed.flavour} {parsed.format} output: {parsed.result.world_size} ranks"
    machine, nccl = machine_from_result(parsed.result), _nccl_view_beside(text, name)
    if not machine.gpus and not isinstance(nccl, Unsupported):  # rank lines cut: NCCL's lines place the GPUs
        from topoaudit.parse.nccl_log import machine_from_nccl_view

        machine = machine_from_nccl_view(nccl)
    return Loaded(
        machine, SourceInfo("nccl-tests", name, description=description), issues, bench=parsed.result, nccl=nccl
    )


# --- NCCL_DEBUG=INFO log ---
def _is_nccl_log(text: str) -> bool:
    if "NCCL" not in text[:200_000]:  # cheap test before the parser loads
        return False
    from topoaudit.parse.nccl_log import looks_like_nccl_log

    return looks_like_nccl_log(text)


def _load_nccl_log(text: str, name: str) -> Loaded:
    """The ranks' GPUs on the first host become the machine; the log becomes the report's NCCL view."""
    from topoaudit.parse.nccl_log import machine_from_nccl_view, parse_nccl_log

    view = parse_nccl_log(text, name)
    version = view.version if isinstance(view.version, str) else "version not logged"
    hosts = f", {len(view.hosts)} host(s)" if view.hosts else ""
    description = f"NCCL_DEBUG=INFO log (NCCL {version}): {len(view.ranks)} rank(s){hosts}"
    beside = _topology_beside_log(text, name)
    if beside is None:
        return Loaded(machine_from_nccl_view(view), SourceInfo("nccl-log", name, description=description), nccl=view)
    machine = beside.machine
    if view.hosts:  # the matrix names no host; the log's first host is the one it was captured on
        machine = dataclasses.replace(machine, host=dataclasses.replace(machine.host, hostname=view.hosts[0]))
    description += ", with the `nvidia-smi topo -m` pasted beside it"
    return Loaded(machine, SourceInfo("nccl-log", name, description=description), beside.issues, nccl=view)


def _topology_beside_log(text: str, name: str) -> Loaded | None:
    """A paste of `nvidia-smi topo -m` and the NCCL log of the same host, in one file: the matrix gives the
    machine (its links), the log NCCL's view. NCCL lines are blanked so the matrix keeps its line numbers."""
    if "GPU0" not in text:  # every topo -m header names GPU0
        return None
    rest = "\n".join("" if "NCCL" in line else line for line in text.splitlines())
    return _load_topo(rest, name) if _is_topo(rest) else None


def _nccl_view_beside(text: str, name: str) -> NcclView | Unsupported:
    """The NCCL log lines an nccl-tests run printed beside its table (NCCL_DEBUG=INFO), when there are any."""
    if not _is_nccl_log(text):
        return NCCL_LOG_NOT_GIVEN
    from topoaudit.parse.nccl_log import parse_nccl_log

    return parse_nccl_log(text, name)


# --- NCCL_TOPO_DUMP_FILE / NCCL_GRAPH_DUMP_FILE XML ---
def _is_nccl_xml(text: str) -> bool:
    if "<system" not in text[:65536] and "<graphs" not in text[:65536]:  # cheap test before the parser loads
        return False
    from topoaudit.parse.nccl_xml import looks_like_nccl_xml

    return looks_like_nccl_xml(text)


def _load_nccl_xml(text: str, name: str) -> Loaded:
    """NCCL's topology becomes the machine (GPUs, NICs, paths, NVLink counts); the rest, the report's captures."""
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.parse.nccl_xml import parse_nccl_xml

    parsed = parse_nccl_xml(text, name)
    topology = parsed.topology
    what = "NCCL_GRAPH_DUMP_FILE" if topology.kind == "graph" else f"{topology.flavour.upper()} topology"
    description = f"{what} XML (version {topology.version or 'not given'}): {len(parsed.machine.gpus)} GPU(s)"
    return Loaded(
        parsed.machine,
        SourceInfo("nccl-xml", name, description=description),
        _ignored(parsed.notes),
        captures=Captures(nccl_topology=topology),
    )


def _ignored(notes: tuple[tuple[int, str], ...]) -> tuple[InputIssue, ...]:
    """A parser's notes on lines it left out, as the report's input issues."""
    return tuple(InputIssue(line, "ignored", note) for line, note in notes)


def _lines_left(text: str, used: frozenset[int]) -> str:
    """The paste with a parser's lines blanked (numbering kept), so a `topo -m` beside them is read alone."""
    return "\n".join("" if n in used else line for n, line in enumerate(text.splitlines(), 1))


# --- nvidia-smi nvlink -s / -e / -c ---
def _is_nvlink_status(text: str) -> bool:
    if "Link " not in text[:65536] and "inactive" not in text[:65536].lower():  # cheap test first
        return False
    from topoaudit.parse.nvlink_status import looks_like_nvlink_status

    return looks_like_nvlink_status(text)


def _load_nvlink_status(text: str, name: str) -> Loaded:
    """Each GPU's NVLink ports, as a probe records them: the probe's link rules judge them."""
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.parse.nvlink_status import parse_nvlink_status

    parsed = parse_nvlink_status(text, name)
    notes = _ignored(parsed.notes)
    extras: dict[str, Any] = {"nvlink_speeds_gbps": parsed.speeds_gbps} if parsed.speeds_gbps else {}
    rest = _lines_left(text, parsed.used_lines)
    if _is_topo(rest):  # `nvidia-smi topo -m` pasted beside it: its links, with each GPU's ports
        beside = _load_topo(rest, name)
        ports = {g.index: g for g in parsed.machine.gpus}
        gpus = tuple(
            dataclasses.replace(g, name=ports[g.index].name, uuid=ports[g.index].uuid,
                                nvlink_ports=ports[g.index].nvlink_ports) if g.index in ports else g
            for g in beside.machine.gpus
        )  # fmt: skip
        machine = dataclasses.replace(beside.machine, source=parsed.machine.source, gpus=gpus)
        source = SourceInfo("topo-matrix", name, description="`nvidia-smi topo -m` with `nvidia-smi nvlink` beside it")
        return Loaded(machine, source, beside.issues + notes, extras={**beside.extras, **extras}, captures=Captures())
    description = f"nvidia-smi nvlink output: {len(parsed.machine.gpus)} GPU(s)"
    return Loaded(
        parsed.machine,
        SourceInfo("nvidia-smi-nvlink", name, description=description),
        notes,
        extras=extras,
        captures=Captures(),
    )


# --- nvidia-smi topo -p2p / p2pBandwidthLatencyTest ---
def _is_p2p(text: str) -> bool:
    if "P2P" not in text[:200_000] and " OK" not in text[:200_000] and "NS" not in text[:200_000]:  # cheap test
        return False
    from topoaudit.parse.p2p_matrix import looks_like_p2p

    return looks_like_p2p(text)


def _load_p2p(text: str, name: str) -> Loaded:
    """P2P statuses as the probe records them; with a `topo -m` in the same paste, on that machine."""
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.parse.p2p_matrix import parse_p2p

    parsed = parse_p2p(text, name)
    notes = _ignored(parsed.notes)
    captures = Captures(bandwidth=parsed.matrices)
    rest = _lines_left(text, parsed.used_lines)
    if parsed.used_lines and _is_topo(rest):
        beside = _load_topo(rest, name)
        machine = dataclasses.replace(beside.machine, p2p=parsed.statuses)
        description = f"`nvidia-smi topo -m` with `{parsed.tool}` beside it"
        source = SourceInfo("topo-matrix", name, description=description)
        return Loaded(machine, source, beside.issues + notes, extras=beside.extras, captures=captures)
    machine = Machine(source="p2p-capture", gpus=parsed.gpus, p2p=parsed.statuses)
    description = f"{parsed.tool} output: {len(parsed.gpus)} GPU(s), {len(parsed.statuses)} pair(s)"
    return Loaded(machine, SourceInfo("p2p-capture", name, description=description), notes, captures=captures)


# --- nvbandwidth ---
def _is_nvbandwidth(text: str) -> bool:
    if "nvbandwidth" not in text[:200_000] and "(row)" not in text[:200_000]:  # cheap test first
        return False
    from topoaudit.parse.nvbandwidth import looks_like_nvbandwidth

    return looks_like_nvbandwidth(text)


def _load_nvbandwidth(text: str, name: str) -> Loaded:
    """The GPUs the runs measured; their matrices go to the report's captures, judged pair by pair."""
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.parse.nvbandwidth import parse_nvbandwidth

    parsed = parse_nvbandwidth(text, name)
    notes = _ignored(parsed.notes)
    captures = Captures(bandwidth=parsed.matrices)
    rest = _lines_left(text, parsed.used_lines)
    bench = _nccl_tests_beside(rest, name)
    if _is_topo(rest):  # `nvidia-smi topo -m` pasted beside the run: pairs are compared with pairs on their path
        beside = _load_topo(rest, name)
        named = {g.index: g.name for g in parsed.gpus if isinstance(g.name, str)}  # nvbandwidth's device list
        gpus = tuple(
            dataclasses.replace(g, name=named[g.index]) if g.index in named else g for g in beside.machine.gpus
        )
        source = SourceInfo("topo-matrix", name, description="`nvidia-smi topo -m` with nvbandwidth output beside it")
        machine = dataclasses.replace(beside.machine, gpus=gpus)
        return Loaded(machine, source, beside.issues + notes, extras=beside.extras, captures=captures, bench=bench)
    version = parsed.version or "version not printed"
    description = f"nvbandwidth output ({version}): {len(parsed.matrices)} matrix(es), {len(parsed.gpus)} GPU(s)"
    return Loaded(
        Machine(source="nvbandwidth", gpus=parsed.gpus),
        SourceInfo("nvbandwidth", name, description=description),
        notes,
        captures=captures,
        bench=bench,
    )


def _nccl_tests_beside(rest: str, name: str) -> BenchResult | Unsupported:
    """An nccl-tests run pasted with nvbandwidth's output: judged as a sweep, and against the copies."""
    if not _is_nccl_tests(rest):
        return BENCH_NOT_RUN
    from topoaudit.parse.nccl_tests import parse_nccl_tests

    return parse_nccl_tests(rest, name).result


# --- NCCL Inspector (profiler plugin) JSON ---
def _is_nccl_inspector(text: str) -> bool:
    if "inspector_output_format_version" not in text[:65536]:  # cheap test first
        return False
    from topoaudit.parse.nccl_inspector import looks_like_inspector

    return looks_like_inspector(text)


def _load_nccl_inspector(text: str, name: str) -> Loaded:
    """Per-collective busbw from NCCL Inspector: summarized per host and communicator, judged in the pipeline."""
    from topoaudit.model.machine import Gpu
    from topoaudit.parse.nccl_inspector import gpus_per_host, parse_inspector, summarize

    parsed = parse_inspector(text, name)
    if not parsed.records:
        why = f" (line {parsed.notes[0][0]}: {parsed.notes[0][1]})" if parsed.notes else ""
        raise InputError(f"{name}: NCCL Inspector output with no complete collective record{why}")
    summary = summarize(parsed)
    hosts = sorted({r.host for r in parsed.records})
    description = (
        f"NCCL Inspector output ({', '.join(parsed.format_versions) or 'version not given'}): "
        f"{len(parsed.records)} collective(s), {len(summary['communicators'])} communicator row(s), "
        f"{len(hosts)} host(s)"
    )
    return Loaded(
        Machine(source="nccl-inspector", gpus=tuple(Gpu(index=i) for i in range(gpus_per_host(parsed)))),
        SourceInfo("nccl-inspector", name, description=description),
        _ignored(parsed.notes),
        inspector=summary,
    )


# --- NCCL RAS status (`ncclras`, text or `-f json`) ---
def _is_nccl_ras(text: str) -> bool:
    head = text[:65536]
    if not any(sign in head for sign in ("Group     Comms", "Job summary", '"missing_ranks', "Errors\n======")):
        return False  # cheap test first
    from topoaudit.parse.nccl_ras import looks_like_nccl_ras

    return looks_like_nccl_ras(text)


def _load_nccl_ras(text: str, name: str) -> Loaded:
    """The first host's GPUs become the machine; the communicators go to the extras the pipeline judges."""
    from topoaudit.parse.nccl_ras import machine_from_ras, parse_nccl_ras, ras_to_dict

    dump = parse_nccl_ras(text, name)
    missing = sum(c.missing_count for c in dump.communicators)
    description = (
        f"NCCL RAS {dump.format} output: {len(dump.communicators)} communicator(s), {missing} rank(s) missing, "
        f"{len(dump.hosts)} host(s) named"
    )
    source = SourceInfo("nccl-ras", name, description=description)
    return Loaded(machine_from_ras(dump), source, ras=ras_to_dict(dump))


# --- topoaudit snapshot ---
def _is_snapshot(text: str) -> bool:
    if "topoaudit-snapshot" not in text[:1024]:  # cheap test first: most inputs are topo -m text
        return False
    from topoaudit.probe.snapshot import looks_like_snapshot

    return looks_like_snapshot(text)


def _load_snapshot(text: str, name: str) -> Loaded:
    from topoaudit.probe.snapshot import snapshot_from_json

    return loaded_from_snapshot(snapshot_from_json(text, name), name)


def loaded_from_snapshot(snapshot: Any, name: str, kind: str = "snapshot") -> Loaded:
    """A probe snapshot (live: kind "live") -> Loaded; the same Machine either way, so the same verdict."""
    from topoaudit.probe.interpret import snapshot_summary, snapshot_to_machine

    summary = snapshot_summary(snapshot)
    return Loaded(
        snapshot_to_machine(snapshot),
        SourceInfo(kind, name, description=summary["description"]),
        extras={"probe": summary},
    )


LOADERS: list[tuple[str, Sniff, Load]] = [
    ("snapshot", _is_snapshot, _load_snapshot),
    ("report", _is_report, _load_report),
    ("nccl-xml", _is_nccl_xml, _load_nccl_xml),
    ("nvidia-smi-nvlink", _is_nvlink_status, _load_nvlink_status),
    ("p2p", _is_p2p, _load_p2p),
    ("nvbandwidth", _is_nvbandwidth, _load_nvbandwidth),
    ("nccl-inspector", _is_nccl_inspector, _load_nccl_inspector),
    ("nccl-ras", _is_nccl_ras, _load_nccl_ras),
    # the topo matrix sniff is the loosest: it goes last
    ("nccl-tests", _is_nccl_tests, _load_nccl_tests),
    ("nccl-log", _is_nccl_log, _load_nccl_log),
    ("topo-matrix", _is_topo, _load_topo),
]


def load_text(text: str, name: str) -> Loaded:
    """Pick the loader for ``text``; InputError naming what it looked like when none fits."""
    if "\x00" in text[:4096]:
        raise InputError(f"{name}: binary data, not a text capture")
    for _fmt, sniff, load in LOADERS:
        if sniff(text):
            return load(text, name)
    if text.lstrip()[:1] in ("{", "["):  # a report or snapshot cut short: say where the JSON breaks
        import json

        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{name}: invalid JSON, it breaks at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
                "a truncated or edited file?",
                hint="copy the whole file again: a report or snapshot topoaudit writes is one complete JSON document",
            ) from exc
    raise InputError(
        f"{name}: not a format topoaudit reads (expected `nvidia-smi topo -m` output, a topoaudit snapshot "
        "or report, nccl-tests output, an NCCL_DEBUG=INFO log, an NCCL topology or graph dump (XML), "
        "`nvidia-smi nvlink -s` or `topo -p2p` output, nvbandwidth output, NCCL Inspector JSON, or NCCL RAS output)",
        hint="capture it with `nvidia-smi topo -m > topo.txt`",
    )


def load_path(path: str) -> Loaded:
    """Read a file (or ``-`` for standard input) and load it."""
    if path == "-":
        return load_text(sys.stdin.read(), "<stdin>")
    p = Path(path)
    try:
        if p.stat().st_size > MAX_INPUT_BYTES:
            raise InputError(f"{path}: larger than {MAX_INPUT_BYTES // 2**20} MiB; not a capture topoaudit reads")
        raw = p.read_bytes()
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise InputError(f"{path}: is a directory, not a capture file") from exc
    except PermissionError as exc:
        raise InputError(f"{path}: permission denied") from exc
    from topoaudit.parse.text import decode_capture

    return load_text(decode_capture(raw), path)


# --- bundled examples -------------------------------------------------------------------------------


def load_example(name: str) -> Loaded:
    """A bundled example, labelled as a demo in every output (the index is read only here, not by a file's load)."""
    from topoaudit.examples import examples

    known = examples()
    if name not in known:
        raise InputError(f"unknown example {name!r}; known: {', '.join(sorted(known))}")
    example = known[name]
    loaded = load_text(example.text(), f"example:{name}")
    # topo -m omits the product name; the example's index records what its GPUs report.
    machine = dataclasses.replace(
        loaded.machine, gpus=tuple(dataclasses.replace(g, name=example.gpu_model) for g in loaded.machine.gpus)
    )
    return Loaded(
        machine,
        SourceInfo("example", name, demo=True, description=example.description),
        loaded.issues,
        extras=loaded.extras,
    )
