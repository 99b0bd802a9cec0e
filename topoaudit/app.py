"""The use cases the commands call: analyse an input, audit this machine, probe, bench, plan, re-render.

Each takes a typed, frozen request built once by the command line and returns a judged
:class:`~topoaudit.model.report.Report` (or the text to show). Nothing here knows about click or a
terminal; heavy modules (the pipeline, networkx, the planner, torch) load inside the function that needs
them, so a command pays only for what it runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from topoaudit.errors import InputError, UsageError

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from topoaudit.bench.config import BenchConfig
    from topoaudit.examples import Example
    from topoaudit.fleet.inputs import NodeInput
    from topoaudit.fleet.summary import NodeSummary
    from topoaudit.loaders import Loaded
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.fleet import FleetReport
    from topoaudit.model.machine import Machine
    from topoaudit.model.plan import PlanRequest
    from topoaudit.model.report import AuditOptions, Report
    from topoaudit.probe.snapshot import Snapshot

Evidence = Mapping[str, "str | bytes"]
Progress = Callable[[int, int, str], None]
_T = TypeVar("_T")
STDIN_CAPTURE = "a capture, e.g. nvidia-smi topo -m | topoaudit analyze -"
STDIN_REPORT = "a saved report, e.g. topoaudit analyze topo.txt --format json | topoaudit report - --format html"
DEMO_EXAMPLE = "hgx-h100"


# --- requests ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateRequest:
    """What the user asked the judge to check (``None``: not given on the command line)."""

    expect_gpus: int | None = None
    expect_domain: int | None = None
    tp: int | None = None
    gpu_model: str | None = None
    fail_on: str | None = None  # a Severity value; the policy's, else "fail", when not given
    strict: bool = False
    policy: str | None = None  # FILE or builtin:NAME


@dataclass(frozen=True)
class MachineInput:
    """The machine to judge: a capture file (``-`` for standard input) or a bundled example."""

    path: str | None = None
    example: str | None = None


@dataclass(frozen=True)
class AnalyzeRequest:
    machine: MachineInput
    gate: GateRequest = GateRequest()
    plan: PlanRequest | None = None  # ``--plan-*``: a deploy plan section checked against this machine
    keep_evidence: bool = False  # a bundle is written: keep the raw input


@dataclass(frozen=True)
class ProbeRequest:
    sysfs_root: str = "/"
    call_timeout_s: float = 10.0
    smi_timeout_s: float = 20.0


@dataclass(frozen=True)
class SweepRequest:
    """An all-reduce sweep (sizes in bytes; ``nproc``/``pair_bytes`` 0: the bench's default)."""

    groups: tuple[str, ...] = ("all",)
    backend: str = "auto"
    nproc: int = 0
    min_bytes: int = 8
    max_bytes: int = 4 << 30
    pair_bytes: int = 0
    timeout_s: float = 60.0
    expect_busbw_gbps: float | None = None
    topology: str | None = None  # a capture of this machine: its domains and expected busbw


@dataclass(frozen=True)
class AuditRequest:
    gate: GateRequest = GateRequest()
    probe: ProbeRequest = ProbeRequest()
    demo: bool = False
    sweep: SweepRequest | None = None  # ``--bench``


@dataclass(frozen=True)
class BenchRequest:
    sweep: SweepRequest = SweepRequest()
    gate: GateRequest = GateRequest()


@dataclass(frozen=True)
class PlanCommandRequest:
    plan: PlanRequest
    machine: MachineInput | None = None  # ``--from``/``--example``: check against this box's domains


@dataclass(frozen=True)
class OutputRequest:
    """Where and how to show a report; ``color`` and ``width`` are decided by the command line."""

    fmt: str = "console"
    output: str | None = None  # -o FILE; None: the text is returned for standard output
    verbose: bool = False
    color: bool = False
    width: int = 120
    out_dir: str | None = None  # --out DIR: the bundle
    redact: bool = False


# --- results -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Judged:
    """A judged report and the raw inputs it came from (kept in a bundle's evidence/)."""

    report: Report
    evidence: Evidence = field(default_factory=dict)


@dataclass(frozen=True)
class Published:
    """What :func:`publish` did: the report as shown (redacted when asked) and its text."""

    report: Report
    text: str
    written_to: str | None = None
    bundle_files: int = 0


@dataclass(frozen=True)
class ProbeResult:
    snapshot_json: str
    summary: str


# --- use cases -----------------------------------------------------------------------------------------


def example_list() -> list[Example]:
    """The bundled example boxes, by name."""
    from topoaudit.examples import examples

    return [example for _, example in sorted(examples().items())]


def analyze_input(request: AnalyzeRequest) -> Judged:
    """Judge a captured machine (a file, standard input or a bundled example)."""
    loaded, evidence = _load_machine(request.machine, keep_evidence=request.keep_evidence)
    report = _judge(loaded, _gate_knowing_the_card(request.gate, request.plan, loaded.machine), request.plan)
    return Judged(report, evidence)


def audit(request: AuditRequest, progress: Progress | None = None) -> Judged | None:
    """Probe this machine (or the demo box), judge it, and measure it with ``--bench``.

    None when this process is a launched bench rank other than 0 (rank 0 reports for the job).
    """
    if request.demo and request.sweep is not None:
        raise UsageError("--bench measures this machine; --demo audits a bundled example box, not this one")
    if request.sweep is not None:
        _bench_config(request.sweep)  # a sweep that cannot run is refused before the probe
    evidence: dict[str, str | bytes]
    if request.demo:
        loaded, evidence = _load_machine(MachineInput(example=DEMO_EXAMPLE), keep_evidence=True)
    else:
        from topoaudit.loaders import loaded_from_snapshot
        from topoaudit.probe.snapshot import snapshot_to_json

        snapshot = _probe(request.probe)
        loaded = loaded_from_snapshot(snapshot, "this machine", kind="live")
        evidence = {"snapshot.json": snapshot_to_json(snapshot)}
        for record in snapshot.commands:
            if isinstance(record.text, str):
                evidence[record.command.replace(" ", "-") + ".txt"] = record.text
    if request.sweep is None:
        return Judged(_judge(loaded, request.gate, None), evidence)
    # the bench uses the probed machine: its domains, groups and expected busbw
    measured, nccl_files = _sweep(request.sweep, loaded.machine, progress)
    if measured is None:
        return None
    evidence.update(nccl_files)
    loaded = _with_nccl_view(loaded, nccl_files)
    expect = request.sweep.expect_busbw_gbps
    return Judged(_judge(loaded, request.gate, None, bench=measured, expect_busbw_gbps=expect), evidence)


def probe(request: ProbeRequest) -> ProbeResult:
    """Capture this machine into snapshot JSON, with a one-line summary of what was found."""
    from topoaudit.probe.snapshot import snapshot_to_json

    snapshot = _probe(request)
    lost = sum(1 for g in snapshot.gpus if g.status != "ok")
    summary = f"probed {len(snapshot.gpus)} GPU(s) in {snapshot.probe_wall_s:.2f} s" + (
        f", {lost} lost mid-probe" if lost else ""
    )
    return ProbeResult(snapshot_to_json(snapshot), summary)


def bench(request: BenchRequest, progress: Progress | None = None) -> Judged | None:
    """Measure all-reduce and judge the numbers (with NCCL's own log and dumps as evidence, on NCCL); None on a
    launched rank other than 0."""
    _bench_config(request.sweep)  # a sweep that cannot run is refused before the probe
    machine = _topology(request.sweep.topology) if request.sweep.topology else _probed_machine()
    measured, nccl_files = _sweep(request.sweep, machine, progress)
    if measured is None:
        return None
    from topoaudit.loaders import Loaded
    from topoaudit.model.report import SourceInfo

    loaded = Loaded(
        machine if machine is not None and machine.gpus else _machine_from(measured),
        SourceInfo("bench", "live", description=f"all-reduce bench over {measured.world_size} rank(s)"),
    )
    loaded = _with_nccl_view(loaded, nccl_files)
    expect = request.sweep.expect_busbw_gbps
    return Judged(_judge(loaded, request.gate, None, bench=measured, expect_busbw_gbps=expect), nccl_files)


def bench_rank() -> int | None:
    """This process's rank when started by torchrun or Slurm; None when the bench spawns its own ranks."""
    from topoaudit.bench import launched_env

    launched = launched_env()
    return None if launched is None else int(launched["rank"])


def plan(request: PlanCommandRequest) -> Report:
    """Size a model and check its TP group: against ``request.machine`` when given, else the catalog's node.

    The result is a Report (its ``plan`` section, the plan's finding and the gate) like every command's.
    """
    if request.machine is not None:
        loaded, _ = _load_machine(request.machine, keep_evidence=False)
        return _judge(loaded, _gate_knowing_the_card(GateRequest(), request.plan, loaded.machine), request.plan)
    if not request.plan.gpu:
        raise UsageError("the planner needs a GPU model: --gpu MODEL, or --from/--example a machine")
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.pipeline import analyze
    from topoaudit.plan.target import resolve_gpu

    spec = _planner_call(lambda: resolve_gpu(request.plan.gpu))
    return analyze(  # no machine: the plan is checked against the catalog's standard node
        Machine(source="plan", gpus=()),
        source=SourceInfo("plan", "catalog standard node", description=f"the standard {spec.name} node"),
        options=audit_options(GateRequest(gpu_model=spec.name)),
        plan_request=request.plan,
    )


def load_saved_report(path: str) -> Report:
    """A saved report.json (or ``-``); InputError with a sentence when it is not one."""
    from topoaudit.model.report import report_from_json

    return report_from_json(_read_input(path, STDIN_REPORT), path)


def publish(report: Report, out: OutputRequest, evidence: Evidence | None = None) -> Published:
    """Write the bundle (``--out``), redact (``--redact``), render, and write ``-o`` FILE when given."""
    from topoaudit.render import RenderOptions, render

    files = 0
    if out.out_dir:
        from topoaudit.bundle import write_bundle

        bundle = write_bundle(report, out.out_dir, evidence or {}, redact=out.redact)
        report, files = bundle.report, len(bundle.files)
    elif out.redact:
        from topoaudit.redact import redact_report

        report = redact_report(report)
    options = RenderOptions(color=out.color and out.fmt == "console", width=out.width, verbose=out.verbose)
    text = render(report, out.fmt, options)
    if out.output:
        write_text_file(out.output, text)
    return Published(report, text, out.output, files)


def write_text_file(path: str, text: str) -> None:
    """Write a report atomically; OutputError (exit 4) naming the path when it cannot be written."""
    from topoaudit.outputs import write_file

    write_file(path, text)


def input_evidence(path: str | None, example: str | None) -> dict[str, str | bytes]:
    """The raw input of a judged machine, for the bundle's evidence/ directory."""
    if example:
        from topoaudit.examples import examples

        known = examples().get(example)
        return {f"example-{known.file}": known.text()} if known is not None else {}
    if path and path != "-":
        try:
            return {Path(path).name: Path(path).read_bytes()}
        except OSError:
            return {}
    return {}


# --- steps ---------------------------------------------------------------------------------------------


def _load_machine(source: MachineInput, keep_evidence: bool) -> tuple[Loaded, dict[str, str | bytes]]:
    from topoaudit.examples import examples
    from topoaudit.loaders import load_example, load_path, load_text

    if bool(source.path) == bool(source.example):
        raise UsageError("give either PATH or --example NAME (see --example list)")
    if source.example:
        known = examples()
        if source.example not in known:
            raise UsageError(f"unknown example {source.example!r}; known: {', '.join(sorted(known))}")
        loaded = load_example(source.example)
        return loaded, input_evidence(None, source.example) if keep_evidence else {}
    path = str(source.path)
    if path == "-":  # standard input can be read once: keep the text for the bundle
        text = _read_input("-", STDIN_CAPTURE)
        return load_text(text, "<stdin>"), {"stdin.txt": text} if keep_evidence else {}
    _refuse_empty_file(path)
    return load_path(path), input_evidence(path, None) if keep_evidence else {}


def _read_input(path: str, expected: str, stdin: TextIO | None = None) -> str:
    """The text of a file or of standard input (``-``), refusing a terminal and empty input by name."""
    if path == "-":
        stream = stdin or sys.stdin
        if stream.isatty():
            raise UsageError(f"'-' reads standard input, which is a terminal here: pipe in {expected}")
        from topoaudit.parse.text import decode_capture  # UTF-16 from a Windows pipe reads too

        raw = getattr(stream, "buffer", None)
        text = decode_capture(raw.read()) if raw is not None else stream.read()
        if not text.strip():
            raise InputError("standard input is empty", hint=f"pipe in {expected}")
        return text
    _refuse_empty_file(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such file") from exc
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it ({type(exc).__name__})") from exc


def _refuse_empty_file(path: str) -> None:
    """An empty file is named as such, not as 'a format topoaudit does not read'."""
    try:
        size = os.stat(path).st_size
        empty = size == 0 or (size <= 4096 and not Path(path).read_bytes().strip())
    except OSError:
        return  # the loader names a missing or unreadable file
    if empty:
        raise InputError(f"{path}: the file is empty", hint="capture it with `nvidia-smi topo -m > topo.txt`")


def _gate_knowing_the_card(gate: GateRequest, plan: PlanRequest | None, machine: Machine) -> GateRequest:
    """A machine that does not name its GPU model (``topo -m`` text) is judged as the card the plan names.

    ``--gpu-model`` always wins, and a source that names its model keeps it: the plan then sizes on the
    card the user asked about and says where it differs from the box.
    """
    if gate.gpu_model or plan is None or not plan.gpu or machine.gpu_model:
        return gate
    from topoaudit.catalog import find_gpu

    spec = find_gpu(plan.gpu)
    return replace(gate, gpu_model=spec.name) if spec is not None else gate


def audit_options(gate: GateRequest) -> AuditOptions:
    """GateRequest -> AuditOptions (loads the policy; options not given stay 'not requested')."""
    from topoaudit.model.finding import Severity
    from topoaudit.model.policy import Policy
    from topoaudit.model.report import NOT_REQUESTED, AuditOptions
    from topoaudit.model.values import Unsupported

    policy: Policy | Unsupported = NOT_REQUESTED
    if gate.policy:
        from topoaudit.judge.policy import load_policy

        policy = load_policy(gate.policy)
    from_policy = policy.fail_on if isinstance(policy, Policy) else None
    fail_on = gate.fail_on or (from_policy if isinstance(from_policy, (str, Severity)) else "fail")
    return AuditOptions(
        expect_gpus=NOT_REQUESTED if gate.expect_gpus is None else gate.expect_gpus,
        expect_domain=NOT_REQUESTED if gate.expect_domain is None else gate.expect_domain,
        tp=NOT_REQUESTED if gate.tp is None else gate.tp,
        gpu_model=gate.gpu_model or NOT_REQUESTED,
        fail_on=Severity(str(fail_on)),
        strict=gate.strict or (isinstance(policy, Policy) and policy.strict),
        policy=policy,
    )


def _judge(
    loaded: Loaded,
    gate: GateRequest,
    plan_request: PlanRequest | None,
    *,
    bench: BenchResult | None = None,
    expect_busbw_gbps: float | None = None,
) -> Report:
    """The one call into the pipeline: the machine, a bench and a plan request judged together, once."""
    from topoaudit.pipeline import analyze

    if not loaded.machine.gpus and bench is None:
        raise InputError(f"{loaded.source.name}: no GPUs in the input")
    return analyze(
        loaded.machine,
        source=loaded.source,
        options=audit_options(gate),
        input_issues=loaded.issues,
        bench=bench if bench is not None else loaded.bench,
        expect_busbw_gbps=expect_busbw_gbps,
        plan_request=plan_request,
        imported_findings=loaded.findings,
        extras=loaded.extras,
        nccl=loaded.nccl,
        captures=loaded.captures,
    )


def _planner_call(call: Callable[[], _T]) -> _T:
    """A planner refusal caused by option values is a usage error (exit 2), said in one sentence."""
    from topoaudit.errors import ConfigError

    try:
        return call()
    except ConfigError as exc:
        raise UsageError(str(exc), hint=exc.hint) from exc


def _probe(request: ProbeRequest) -> Snapshot:
    from topoaudit.probe.collect import probe as collect

    return collect(request.sysfs_root, call_timeout_s=request.call_timeout_s, smi_timeout_s=request.smi_timeout_s)


def _bench_config(sweep: SweepRequest, machine: Machine | None = None) -> BenchConfig:
    """The bench's own config; it refuses a sweep that cannot run (UsageError, exit 2) before any rank starts."""
    from topoaudit.bench import BenchConfig

    return BenchConfig(
        groups=sweep.groups,
        backend=sweep.backend,
        nproc=sweep.nproc,
        min_bytes=sweep.min_bytes,
        max_bytes=sweep.max_bytes,
        pair_bytes=sweep.pair_bytes,
        timeout_s=sweep.timeout_s,
        machine=machine if machine is not None and machine.gpus else None,
    )


def _sweep(
    sweep: SweepRequest, machine: Machine | None, progress: Progress | None
) -> tuple[BenchResult | None, dict[str, bytes]]:
    """Run the sweep (judged later, with everything else, by the pipeline) and the files NCCL wrote meanwhile."""
    from topoaudit.bench import run_bench_with_nccl_view

    return run_bench_with_nccl_view(_bench_config(sweep, machine), progress)


def _with_nccl_view(loaded: Loaded, nccl_files: dict[str, bytes]) -> Loaded:
    """The bench's NCCL log read into the report's NCCL view, beside the measured busbw."""
    if not nccl_files:
        return loaded
    import dataclasses

    from topoaudit.bench import nccl_view

    return dataclasses.replace(loaded, nccl=nccl_view(nccl_files))


def _topology(path: str) -> Machine:
    from topoaudit.loaders import load_path

    return load_path(path).machine


def _probed_machine() -> Machine | None:
    """This machine's topology from NVML when a driver is there (domains and expected busbw); else None."""
    from topoaudit.errors import TopoauditError

    try:
        from topoaudit.loaders import loaded_from_snapshot
        from topoaudit.probe.collect import probe as collect

        return loaded_from_snapshot(collect("/"), "this machine", kind="live").machine
    except (ImportError, TopoauditError):  # no pynvml, no driver, no GPU: the bench runs without expectations
        return None


def _machine_from(result: BenchResult) -> Machine:
    """Rank 0's host as far as the bench saw it: its GPUs by CUDA index (no links: the bench does not probe)."""
    from topoaudit.model.machine import Gpu, Host, Machine

    host = result.ranks[0].host if result.ranks else "unknown"
    gpus = tuple(
        Gpu(index=r.local_rank, name=r.name, pci_bus_id=r.pci_bus_id)
        for r in result.ranks
        if r.host == host and r.device != "cpu"
    )
    return Machine(source="bench", gpus=gpus, host=Host(hostname=host))


# --- fleet ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FleetRequest:
    """``topoaudit fleet``: node inputs judged alike, then compared."""

    paths: tuple[str, ...]
    gate: GateRequest = GateRequest()
    expect_nodes: str | None = None  # FILE or a Slurm host list
    max_report_age_s: float = 86400.0
    rack_gpus: int = 72
    apply: bool = False  # run the drain commands (scontrol) instead of only printing them
    jobs: int = 1  # processes judging nodes at once


def fleet(request: FleetRequest) -> FleetReport:
    """Judge every node input like ``analyze`` does, once each, and reduce the fleet to one report."""
    from topoaudit import __version__
    from topoaudit.fleet.assemble import assemble
    from topoaudit.fleet.inputs import expected_hosts, node_inputs
    from topoaudit.model.fleet import FleetOptions

    options = audit_options(request.gate)  # a bad policy or option is refused before any node is read
    fleet_options = FleetOptions(
        fail_on=options.fail_on,
        strict=options.strict,
        max_report_age_s=request.max_report_age_s,
        rack_gpus=request.rack_gpus,
        expected_nodes=expected_hosts(request.expect_nodes) if request.expect_nodes else (),
    )
    items = ((node, request.gate) for node in node_inputs(request.paths))
    if request.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(request.jobs) as pool:
            report = assemble(_in_order(pool, items, request.jobs * 64), fleet_options, __version__)
    else:
        report = assemble(map(_fleet_node, items), fleet_options, __version__)
    if request.apply:
        from topoaudit.fleet.slurm import apply_drain

        report = replace(report, applied=apply_drain(report.drain))
    return report


def _in_order(pool: Executor, items: Iterator[tuple[NodeInput, GateRequest]], window: int) -> Iterator[NodeSummary]:
    """Node summaries in input order, with at most ``window`` nodes in flight (memory stays bounded)."""
    from collections import deque

    pending: deque[Future[NodeSummary]] = deque()
    for item in items:
        pending.append(pool.submit(_fleet_node, item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _fleet_node(item: tuple[NodeInput, GateRequest]) -> NodeSummary:
    """One node judged through the same steps as ``analyze PATH``, reduced to its fleet summary."""
    from topoaudit.errors import TopoauditError
    from topoaudit.fleet.inputs import captured_at
    from topoaudit.fleet.summary import summarize, unusable

    node, gate = item
    try:
        loaded, _ = _load_machine(MachineInput(path=node.path), keep_evidence=False)
        report = _judge(loaded, gate, None)
    except TopoauditError as exc:
        return unusable(node.host_hint, node.shown_as, str(exc))
    return summarize(report, node.shown_as, node.host_hint, captured_at(node.path))


# --- Slurm health check ----------------------------------------------------------------------------------


DEFAULT_HEALTHCHECK_CACHE = "/var/tmp/topoaudit-healthcheck.json"


@dataclass(frozen=True)
class HealthCheckRequest:
    """``topoaudit healthcheck``: judge this node (reusing a fresh cached result) and keep its drain in step."""

    gate: GateRequest = GateRequest()
    probe: ProbeRequest = ProbeRequest()
    cache_path: str = DEFAULT_HEALTHCHECK_CACHE
    max_age_s: float = 600.0
    node: str | None = None  # the Slurm node name; default $SLURMD_NODENAME, else `hostname -s`
    apply: bool = True  # drain on failure, resume a node this check drained; False: only judge
    scontrol: str = "scontrol"


@dataclass(frozen=True)
class HealthCheckResult:
    node: str
    healthy: bool
    reason: str  # the `topoaudit: ...` drain reason when unhealthy, else the gate's sentence
    age_s: float  # age of the result judged (0 for a probe just now)
    from_cache: bool
    action: str  # what was done to the node in Slurm, in words
    exit_code: int


def healthcheck(request: HealthCheckRequest) -> HealthCheckResult:
    """Judge this node, then drain it (failed) or resume it (passed, and drained by this check before)."""
    from topoaudit import healthcheck as hc
    from topoaudit.exitcodes import ExitCode

    node = hc.this_node(request.node)
    scontrol = hc.find_scontrol(request.scontrol) if request.apply else ""
    cached = hc.read_cache(request.cache_path, request.max_age_s)
    if cached is not None and cached.report.options != audit_options(request.gate):
        cached = None  # judged under other options or another policy: judge again
    unsaved = ""
    if cached is not None:
        report, age, from_cache = cached.report, cached.age_s, True
    else:
        from topoaudit.errors import EnvironmentUnusable

        try:
            judged = audit(AuditRequest(request.gate, request.probe))
        except (EnvironmentUnusable, InputError) as exc:  # no driver, no GPU: this node cannot serve GPU jobs
            reason = hc.probe_failure_reason(exc)
            action = _keep_drain_in_step(scontrol, node, reason, healthy=False) if request.apply else "not applied"
            return HealthCheckResult(node, False, reason, 0.0, False, action, int(ExitCode.UNUSABLE))
        assert judged is not None  # no sweep: there are no other ranks
        report = judged.report
        unsaved = hc.write_cache(request.cache_path, report)
        age, from_cache = 0.0, False
    healthy = report.gate.exit_code == 0
    reason = report.gate.reason if healthy else hc.drain_reason(report)
    action = _keep_drain_in_step(scontrol, node, reason, healthy) if request.apply else "not applied"
    if not from_cache and unsaved:
        action += f"; {unsaved}"
    return HealthCheckResult(node, healthy, reason, age, from_cache, action, report.gate.exit_code)


def _keep_drain_in_step(scontrol: str, node: str, reason: str, healthy: bool) -> str:
    from topoaudit import healthcheck as hc

    state = hc.node_state(scontrol, node)
    if healthy:
        if state.drained_by_us:
            hc.resume(scontrol, node)
            return f"resumed (it was drained by this check: {state.reason})"
        if state.drained:
            return f"left drained: another drain reason ({state.reason or 'none'})"
        return "none"
    if state.drained and not state.drained_by_us:
        return f"left as drained by another reason ({state.reason or 'none'})"
    if state.drained_by_us and state.reason == reason:
        return "already drained with this reason"
    hc.drain(scontrol, node, reason)
    return "drained"
