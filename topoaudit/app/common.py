"""What every use case shares: the gate and output requests, loading the machine to judge, the one call into
the pipeline, and publishing a report. Nothing here knows about click or a terminal; heavy modules load
inside the function that needs them."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from topoaudit.errors import InputError, UsageError

if TYPE_CHECKING:
    from topoaudit.examples import Example
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.network import NicSet
    from topoaudit.model.plan import PlanRequest
    from topoaudit.model.policy import Policy
    from topoaudit.model.report import AuditOptions, Report

Evidence = Mapping[str, "str | bytes"]
Progress = Callable[[int, int, str], None]
_T = TypeVar("_T")
STDIN_CAPTURE = "a capture, e.g. nvidia-smi topo -m | topoaudit analyze -"
STDIN_REPORT = "a saved report, e.g. topoaudit analyze topo.txt --format json | topoaudit report - --format html"


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
    nics: str | None = None  # --nics COUNTxGBITS: one node's NICs


@dataclass(frozen=True)
class MachineInput:
    """The machine to judge: a capture file (``-`` for standard input) or a bundled example."""

    path: str | None = None
    example: str | None = None


@dataclass(frozen=True)
class OutputRequest:
    """Where and how to show a report; ``color`` and ``width`` are decided by the command line."""

    fmt: str = "console"
    output: str | None = None  # -o FILE; None: the text is returned for standard output
    verbose: bool = False
    color: bool = False
    width: int = 120
    out_dir: str | None = None  # --out DIR: the bundle
    force: bool = False  # --force: --out may replace another host's bundle
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


def example_list() -> list[Example]:
    """The bundled example boxes, by name."""
    from topoaudit.examples import examples

    return [example for _, example in sorted(examples().items())]


def publish(report: Report, out: OutputRequest, evidence: Evidence | None = None) -> Published:
    """Write the bundle (``--out``), redact (``--redact``), render, and write ``-o`` FILE when given."""
    from topoaudit.render import RenderOptions, render

    files = 0
    if out.out_dir:
        from topoaudit.outputs.bundle import write_bundle

        bundle = write_bundle(report, out.out_dir, evidence or {}, redact=out.redact, force=out.force)
        report, files = bundle.report, len(bundle.files)
    elif out.redact:
        from topoaudit.outputs.redact import redact_report

        report = redact_report(report)
    options = RenderOptions(color=out.color and out.fmt == "console", width=out.width, verbose=out.verbose)
    text = render(report, out.fmt, options)
    if out.output:
        write_text_file(out.output, text)
    return Published(report, text, out.output, files)


def write_text_file(path: str, text: str) -> None:
    """Write a report atomically; OutputError (exit 4) naming the path when it cannot be written."""
    from topoaudit.outputs.files import write_file

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


def load_machine(source: MachineInput, keep_evidence: bool) -> tuple[Facts, dict[str, str | bytes]]:
    from topoaudit.readers import load_example, load_path, load_text

    if bool(source.path) == bool(source.example):
        raise UsageError("give either PATH or --example NAME (see --example list)")
    if source.example:
        from topoaudit.examples import examples

        known = examples()
        if source.example not in known:
            raise UsageError(f"unknown example {source.example!r}; known: {', '.join(sorted(known))}")
        loaded = load_example(source.example)
        return loaded, input_evidence(None, source.example) if keep_evidence else {}
    path = bundle_report(str(source.path))
    if path == "-":  # standard input can be read once: keep the text for the bundle
        text = read_input("-", STDIN_CAPTURE)
        return load_text(text, "<stdin>"), {"stdin.txt": text} if keep_evidence else {}
    refuse_empty_file(path)
    return load_path(path), input_evidence(path, None) if keep_evidence else {}


BUNDLE_REPORT = "report.json"
"""The report inside a bundle directory (what ``--out DIR`` writes)."""


def bundle_report(path: str) -> str:
    """A bundle directory stands for the report.json it holds; any other path is returned as it is."""
    if path == "-" or not os.path.isdir(path):
        return path
    inside = Path(path) / BUNDLE_REPORT
    if not inside.is_file():
        try:
            files = any(p.is_file() for p in Path(path).iterdir())
        except OSError:  # unreadable: the sentence above still holds
            files = False
        raise InputError(
            f"{path}: a directory without {BUNDLE_REPORT}; give a capture file, a report.json, or a bundle "
            f"directory (what --out DIR writes)",
            hint=f"`topoaudit fleet {path}` judges a directory of node reports and captures together"
            if files
            else "capture one with `nvidia-smi topo -m > topo.txt`",
        )
    return str(inside)


def read_input(path: str, expected: str, stdin: TextIO | None = None) -> str:
    """The text of a file or of standard input (``-``), refusing a terminal and empty input by name.

    Either is read to at most :data:`~topoaudit.parse.text.MAX_INPUT_BYTES`; a path that cannot be read (a folder,
    a symbolic link that loops) is named in one sentence.
    """
    from topoaudit.parse.text import decode_capture, read_capped, read_capture_file  # UTF-16 from Windows reads too

    if path == "-":
        stream = stdin or sys.stdin
        if stream.isatty():
            raise UsageError(f"'-' reads standard input, which is a terminal here: pipe in {expected}")
        raw = getattr(stream, "buffer", None)
        text = decode_capture(read_capped(raw, "standard input")) if raw is not None else stream.read()
        if not text.strip():
            raise InputError("standard input is empty", hint=f"pipe in {expected}")
        return text
    refuse_empty_file(path)
    return decode_capture(read_capture_file(path))


def refuse_empty_file(path: str) -> None:
    """An empty file is named as such, not as 'a format topoaudit does not read'."""
    try:
        size = os.stat(path).st_size
        empty = size == 0 or (size <= 4096 and not Path(path).read_bytes().strip())
    except OSError:
        return  # the loader names a missing or unreadable file
    if empty:
        raise InputError(f"{path}: the file is empty", hint="capture it with `nvidia-smi topo -m > topo.txt`")


def gate_knowing_the_card(gate: GateRequest, plan: PlanRequest | None, machine: Machine) -> GateRequest:
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
    from topoaudit.model.report import NOT_REQUESTED, AuditOptions
    from topoaudit.model.values import Unsupported

    policy: Policy | Unsupported = NOT_REQUESTED
    if gate.policy:
        from topoaudit.judge.policy import load_policy

        policy = load_policy(gate.policy)
    from_policy = None if isinstance(policy, Unsupported) else policy.fail_on
    fail_on = gate.fail_on or (from_policy if isinstance(from_policy, (str, Severity)) else "fail")
    nics = NOT_REQUESTED if gate.nics is None else _nics(gate.nics)
    return AuditOptions(
        expect_gpus=NOT_REQUESTED if gate.expect_gpus is None else gate.expect_gpus,
        expect_domain=NOT_REQUESTED if gate.expect_domain is None else gate.expect_domain,
        tp=NOT_REQUESTED if gate.tp is None else gate.tp,
        gpu_model=gate.gpu_model or NOT_REQUESTED,
        fail_on=Severity(str(fail_on)),
        strict=gate.strict or (not isinstance(policy, Unsupported) and policy.strict),
        policy=policy,
        nics=nics,
    )


_KEPT = ("gpu_model", "tp", "expect_gpus", "expect_domain", "expect_busbw_gbps", "policy", "nics")
_FLAGS = {"gpu_model": "--gpu-model", "tp": "--tp", "expect_gpus": "--expect-gpus",
          "expect_domain": "--expect-domain", "expect_busbw_gbps": "--expect-busbw", "policy": "--policy",
          "nics": "--nics"}  # fmt: skip


@dataclass(frozen=True)
class SavedRequest:
    """The options a saved report is judged with again, and in words what was kept of its own and what overridden."""

    options: AuditOptions
    kept: tuple[str, ...] = ()  # "--tp 8": the saved report's own request, kept where the user named none
    overridden: tuple[str, ...] = ()  # "--tp 2 (the report was saved with --tp 8)": the user's, over another saved


def saved_request(
    gate: GateRequest, saved: Report | None, *, keep_gate: bool = True, expect_busbw_gbps: float | None = None
) -> SavedRequest:
    """The options a saved report is judged with: the user's where given, else the request it was saved with.

    ``--gpu-model``, ``--tp``, ``--expect-*``, ``--nics`` and the policy are kept from the report wherever the user
    names none;
    with ``keep_gate`` so are its ``--fail-on`` and ``--strict`` (``analyze DIR``: a saved FAIL exits as it was
    saved), without it the caller's own gate decides (``fleet`` judges every node at its own ``--fail-on``).
    """
    from topoaudit.model.values import Unsupported

    options = audit_options(gate)
    if expect_busbw_gbps is not None:
        options = replace(options, expect_busbw_gbps=expect_busbw_gbps)
    if saved is None:
        return SavedRequest(options)
    kept: list[str] = []
    overridden: list[str] = []
    changes: dict[str, object] = {}
    for name in _KEPT:
        own, mine = getattr(saved.options, name), getattr(options, name)
        if isinstance(own, Unsupported):
            continue
        if isinstance(mine, Unsupported):
            changes[name] = own
            kept.append(_shown(name, own))
        elif mine != own:
            overridden.append(f"{_shown(name, mine)} (the report was saved with {_shown(name, own)})")
    if keep_gate and gate.fail_on is None and saved.options.fail_on != options.fail_on:
        changes["fail_on"] = saved.options.fail_on
        kept.append(f"--fail-on {saved.options.fail_on.value}")
    if keep_gate and saved.options.strict and not options.strict:
        changes["strict"] = True
        kept.append("--strict")
    return SavedRequest(replace(options, **changes), tuple(kept), tuple(overridden))  # type: ignore[arg-type]


def _shown(name: str, value: object) -> str:
    if name == "policy":
        return f"--policy {getattr(value, 'source', value)}"
    if name == "nics":
        return str(getattr(value, "source", value))  # "--nics 8x400", as it was given
    if isinstance(value, float):
        return f"{_FLAGS[name]} {value:g}"
    return f"{_FLAGS[name]} {value!r}" if isinstance(value, str) else f"{_FLAGS[name]} {value}"


def _nics(text: str) -> NicSet:
    """``--nics`` read; InputError (exit 4) in one sentence when it is not COUNTxGBITS."""
    from topoaudit.model.network import parse_nics

    try:
        return parse_nics(text)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def judge(
    loaded: Facts,
    gate: GateRequest,
    plan_request: PlanRequest | None,
    *,
    bench: BenchResult | None = None,
    expect_busbw_gbps: float | None = None,
) -> Report:
    """The one call into the pipeline: the machine, a bench and a plan request judged together, once."""
    from topoaudit.pipeline import analyze_facts

    if not loaded.machine.gpus and bench is None and not (loaded.judgeable_without_gpus() or _holds_facts(loaded)):
        raise InputError(f"{loaded.source.name}: no GPUs in the input")
    facts = loaded if bench is None else replace(loaded, bench=bench)
    request = saved_request(gate, loaded.saved, expect_busbw_gbps=expect_busbw_gbps)
    if request.kept:  # a saved report keeps what it was asked: the report says so
        said = f"{facts.source.description}; judged with the report's own {', '.join(request.kept)}"
        facts = replace(facts, source=replace(facts.source, description=said.lstrip("; ")))
    floor = request.options.expect_busbw_gbps
    return analyze_facts(
        facts,
        options=request.options,
        expect_busbw_gbps=floor if isinstance(floor, float) else None,
        plan_request=plan_request,
    )


def _holds_facts(loaded: Facts) -> bool:
    """Whether a paste that names no GPU still holds facts the rules judge: a run's rows, footer or failure, or NCCL
    lines that show its transports, GPUDirect RDMA, the variables it was run with or its warnings (an excerpt quoted
    without the ``host:pid:tid [dev]`` prefix that names GPUs)."""
    from topoaudit.model.values import Unsupported

    view = loaded.nccl
    shown = not isinstance(view, Unsupported) and bool(view.transports or view.gdr or view.settings or view.warnings)
    return shown or not isinstance(loaded.bench, Unsupported)


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity: a Slurm step or a container's cpuset), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def planner_call(call: Callable[[], _T]) -> _T:
    """A planner refusal caused by option values is a usage error (exit 2), said in one sentence."""
    from topoaudit.errors import ConfigError

    try:
        return call()
    except ConfigError as exc:
        raise UsageError(str(exc), hint=exc.hint) from exc
