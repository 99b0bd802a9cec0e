"""The report: the canonical artefact every format renders from.

``report_to_dict`` writes the JSON document (``schema_version`` first; machine facts at the top level:
``host``, ``gpus``, ``nics``, ``links``); ``report_from_dict`` reads it back into the same objects, so a
saved report re-renders on any machine without a GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from topoaudit.errors import InputError
from topoaudit.model.codec import DecodeError, decode, encode, read_json, shown
from topoaudit.model.finding import Finding, Severity, Skipped, verdict_of
from topoaudit.model.identity import UNIDENTIFIED, Identification
from topoaudit.model.machine import Machine
from topoaudit.model.network import NicSet
from topoaudit.model.paste import PastePart
from topoaudit.model.topology import Bottleneck, Domain, Placement
from topoaudit.model.values import NO_POLICY, Failed, Probed, Unsupported

if TYPE_CHECKING:  # bound by _bind_section_types() when a saved report is read
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.plan import DeployPlan
    from topoaudit.model.policy import Policy, PolicyOutcome

SCHEMA_VERSION = 1
"""Bump on a breaking change to the JSON report; readers refuse newer versions with a clear message."""

NOT_REQUESTED = Unsupported(source="options", reason="not requested")
BENCH_NOT_RUN = Unsupported(source="bench", reason="not run")
NCCL_LOG_NOT_GIVEN = Unsupported(source="nccl-log", reason="no NCCL_DEBUG=INFO log in the input")
CAPTURES_NOT_GIVEN = Unsupported(source="captures", reason="no NCCL XML dump or nvbandwidth output in the input")
INSPECTOR_NOT_GIVEN = Unsupported("nccl-inspector", "no NCCL Inspector output in the input")
RAS_NOT_GIVEN = Unsupported("nccl-ras", "no NCCL RAS output in the input")


@dataclass(frozen=True)
class SourceInfo:
    """Where the machine facts came from."""

    kind: str  # "topo-matrix" | "snapshot" | "nvml" | "example" | "nccl-tests" | ...
    name: str  # file path, example name or "live"
    demo: bool = False  # a bundled example box, not this machine: every output says so
    description: str = ""
    parts: tuple[PastePart, ...] = ()  # a paste's parts, their lines and what read each


ELIDED = "the paste leaves lines out here"
"""How an input issue starts when the paste itself elides lines ("......"): what it hides is not judged, nor counted."""
ELISION_LINE = re.compile(r"^\s*(?:\.{3,}|\u2026+|\[\.\.\.\]|<snip>|\[snip\])\s*$", re.MULTILINE)
"""A line the poster put in place of lines they left out: "......", "...", "[...]", "<snip>"."""


INCOMPLETE_ACTIONS = frozenset({"recovered", "affinity", "partial"})
"""Input issues that leave part of the capture unread: damage read around (in the links, or only in the CPU and NUMA
affinity columns), or a paste cut before its last rows."""


@dataclass(frozen=True)
class InputIssue:
    """Something in the input that was recovered or ignored (a damaged paste, an unknown field)."""

    line: int
    action: str  # "recovered" | "affinity" | "partial" | "excerpt" | "respaced" | "ignored"
    message: str


@dataclass(frozen=True)
class AuditOptions:
    """What the user asked the judge to check."""

    expect_gpus: Probed[int] = NOT_REQUESTED
    expect_domain: Probed[int] = NOT_REQUESTED
    tp: Probed[int] = NOT_REQUESTED
    gpu_model: Probed[str] = NOT_REQUESTED  # overrides the model the source reports
    fail_on: Severity = Severity.FAIL
    strict: bool = False
    policy: Policy | Unsupported = NOT_REQUESTED  # --policy FILE | builtin:NAME
    nics: NicSet | Unsupported = NOT_REQUESTED  # --nics COUNTxGBITS: one node's NICs, for runs across nodes
    expect_busbw_gbps: Probed[float] = NOT_REQUESTED  # --expect-busbw: the floor a sweep's plateau is held to


NOT_JUDGED = "not judged"
"""The verdict on an input whose rules examined no evidence and found nothing at warn or fail: not a PASS."""
VERDICTS = ("pass", "warn", "fail", NOT_JUDGED)


@dataclass(frozen=True)
class Gate:
    """The verdict and the exit code it implies under the options given, and what the verdict covered.

    A verdict is over the evidence the rules examined (``judged``): "the links between 8 GPUs", "NCCL's
    transports between 12 rank pairs", a warn or fail finding's own evidence. With none, the verdict is
    "not judged" (exit 0, 3 under ``--strict``) and ``to_judge`` names the one capture or option that would let
    the judge judge.
    """

    verdict: str  # "pass" | "warn" | "fail" | "not judged"
    exit_code: int
    reason: str  # one sentence: why this exit code
    incomplete: bool  # rules skipped, probes failed or input recovered
    judged: tuple[str, ...] = ()  # what the verdict covered, one phrase each; empty when not judged
    to_judge: str = ""  # not judged: the capture or option that would let it judge ("" when judged, or none would)


@dataclass(frozen=True)
class Report:
    """Everything one audit learned, judged and decided."""

    schema_version: int
    tool_version: str
    generated_at: str  # ISO 8601, UTC
    source: SourceInfo
    options: AuditOptions
    machine: Machine
    gpu_model: Probed[str]  # product name as reported (or --gpu-model)
    catalog_entry: Probed[str]  # catalog key the model matched
    domains: tuple[Domain, ...]
    bottlenecks: tuple[Bottleneck, ...]  # whole machine first, then each domain of 2+ GPUs
    placements: tuple[Placement, ...]
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...]
    input_issues: tuple[InputIssue, ...]
    gate: Gate
    extras: dict[str, Any] = field(default_factory=dict)  # loader facts shown as-is (the probe's summary)
    # the deploy plan (--plan-params, `topoaudit plan`), checked against this machine's domains
    plan: DeployPlan | Unsupported = NOT_REQUESTED
    # an all-reduce sweep: `bench`, `audit --bench`, or an imported nccl-tests run
    bench: BenchResult | Unsupported = BENCH_NOT_RUN
    # which policy judged the report, what it ignored and overrode
    policy: PolicyOutcome | Unsupported = NO_POLICY
    # NCCL's own view from an NCCL_DEBUG=INFO log: the transport per rank pair, channels, NVLS, GPUDirect RDMA
    nccl: NcclView | Unsupported = NCCL_LOG_NOT_GIVEN
    # NCCL's XML dumps and measured matrices: the facts a Machine has no field for
    captures: Captures | Unsupported = CAPTURES_NOT_GIVEN
    # how the box is known: the option or the input's line naming the model, the class its links show
    identified: Identification = UNIDENTIFIED

    @property
    def verdict(self) -> str:
        """Return the gate's verdict ("pass", "warn", "fail" or "not judged")."""
        return self.gate.verdict


_MACHINE_KEYS = ("host", "gpus", "nics", "links", "p2p", "nvswitches")


def report_to_dict(report: Report) -> dict[str, Any]:
    """Encode the canonical JSON document, machine facts lifted to the top level for easy querying."""
    data = encode(report)
    machine = data.pop("machine")
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[key] = value
        if key == "catalog_entry":
            out["machine_source"] = machine["source"]
            for mkey in _MACHINE_KEYS:
                out[mkey] = machine[mkey]
    out["verdict"] = report.gate.verdict
    return out


def report_from_json(text: str, name: str) -> Report:
    """Read a saved report's JSON text; InputError naming ``name`` when it is not JSON or not a report."""
    return report_from_dict(read_json(text, name, "report.json"))


def report_from_dict(data: Any) -> Report:
    """Read a report written by :func:`report_to_dict`; InputError on a foreign or newer document."""
    if not isinstance(data, dict) or "schema_version" not in data or "gate" not in data:
        raise InputError("this JSON is not a topoaudit report (no schema_version/gate fields)")
    version = data["schema_version"]
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise InputError(
            f"report schema_version {shown(version)} is newer than this topoaudit understands ({SCHEMA_VERSION})",
            hint="upgrade topoaudit to re-render it",
        )
    body = {k: v for k, v in data.items() if k not in _MACHINE_KEYS and k not in ("machine_source", "verdict")}
    body["machine"] = {k: data[k] for k in _MACHINE_KEYS if k in data}
    body["machine"]["source"] = data.get("machine_source", "unknown")
    _bind_section_types()
    try:
        report: Report = decode(Report, body)
    except DecodeError as exc:
        raise InputError(f"the report is damaged: {exc}") from exc
    gate = data["gate"]
    coverage_recorded = isinstance(gate, dict) and "judged" in gate  # reports written before verdicts said it
    contradiction = gate_contradiction(report, data.get("verdict", report.gate.verdict), coverage_recorded)
    if contradiction:
        raise InputError(
            f"the report contradicts itself: {contradiction}; a report changed after topoaudit wrote it is "
            "evidence of nothing, so it is not read",
            hint="ask for the report as it was written, or audit the machine again",
        )
    if not coverage_recorded and report.gate.verdict != NOT_JUDGED:
        # written before the gate said what it judged: say so, so the report rendered again stays whole
        report = replace(report, gate=replace(report.gate, judged=(WRITTEN_BEFORE_COVERAGE,)))
    return report


WRITTEN_BEFORE_COVERAGE = "what the saved report judged (it was written before reports listed it)"
INTERRUPTED_EXIT = 130  # a stopped bench ends so whatever it found (topoaudit.exitcodes.ExitCode.INTERRUPTED)


def gate_contradiction(report: Report, top_verdict: object, coverage_recorded: bool = True) -> str:
    """Say what in a report's gate its own findings and options contradict ("" when nothing does).

    The verdict is the worst finding's severity, PASS only over evidence the gate says it judged and "not
    judged" over none; the exit code follows from the findings at or above ``--fail-on`` (1), else an incomplete
    or unjudged audit under ``--strict`` (3), else 0; a stopped bench exits 130 whatever it found. A saved
    report is an attachment from someone else: one edited from FAIL to PASS, or from "not judged" to PASS,
    must not render as PASS, nor exit 0 under ``report``. A report written before the gate said what it judged
    (``coverage_recorded`` false) is held to the rest.
    """
    gate, options = report.gate, report.options
    verdict = verdict_word(report.findings, bool(gate.judged) or not coverage_recorded)
    at_or_above = sorted({f.code for f in report.findings if f.severity.rank >= options.fail_on.rank})
    if gate.verdict != verdict:
        worst = verdict_of(report.findings)
        worst_codes = sorted({f.code for f in report.findings if f.severity == worst})
        why = (
            f"{_codes(worst_codes)} at {verdict}"
            if verdict in ("warn", "fail")
            else "no warn or fail finding, and it judged nothing"
            if verdict == NOT_JUDGED
            else "no warn or fail finding"
        )
        return f"its gate says {shown(gate.verdict)} but its findings make it {verdict} ({why})"
    if top_verdict != gate.verdict:
        return f"its verdict says {shown(top_verdict)} but its gate says {gate.verdict}"
    lost = any(isinstance(g.status, Failed) for g in report.machine.gpus)
    incomplete = bool(report.skipped or lost or any(i.action in INCOMPLETE_ACTIONS for i in report.input_issues))
    unsure = incomplete or verdict == NOT_JUDGED
    expected = 1 if at_or_above else 3 if unsure and options.strict else 0
    if gate.exit_code not in (expected, INTERRUPTED_EXIT):
        why = (
            f"{_codes(at_or_above)} at or above --fail-on {options.fail_on.value}"
            if at_or_above
            else f"no finding at or above --fail-on {options.fail_on.value}"
        )
        return f"its gate exits {shown(gate.exit_code)} but its findings make it exit {expected} ({why})"
    return ""


def verdict_word(findings: tuple[Finding, ...], judged: bool) -> str:
    """Return the verdict findings give: the worst severity at warn or fail, else PASS when the rules judged.

    Without evidence judged and without a warn or fail finding it is "not judged": info findings alone make no
    verdict.
    """
    worst = verdict_of(findings)
    if worst is not None and worst != Severity.INFO:
        return worst.value
    return "pass" if judged else NOT_JUDGED


def _codes(codes: list[str]) -> str:
    """Name finding codes in a sentence: a code of the registry's shape as it is, anything else quoted."""
    named = [c if re.fullmatch(r"[a-z0-9][a-z0-9-]{0,63}", c) else shown(c, 40) for c in codes[:5]]
    return ", ".join(named) + (f" and {len(codes) - 5} more" if len(codes) > 5 else "")


def _bind_section_types() -> None:
    """Bind the types of the sections only some inputs or options fill in this module.

    These are a bench, a deploy plan, host checks, NCCL's log view, NCCL XML and nvbandwidth captures,
    a policy and its outcome.
    ``decode`` resolves the Report's type hints here; the types are imported when a saved report is read, not
    by every command that judges a pasted matrix.
    """
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.machine import bind_host_checks_type
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.plan import DeployPlan
    from topoaudit.model.policy import Policy, PolicyOutcome

    bind_host_checks_type()
    globals().update(BenchResult=BenchResult, NcclView=NcclView, Captures=Captures, DeployPlan=DeployPlan)
    globals().update(Policy=Policy, PolicyOutcome=PolicyOutcome)


# --- whose bundle a folder holds ------------------------------------------------------------------------


def bundle_conflict(saved_text: str, report: Report) -> str:
    """Say why a bundle (its ``report.json`` text) may not be replaced by one of ``report``; "" for the same host.

    ``--out DIR`` replaces an earlier bundle whole; one of another host is someone's evidence. The host is
    told by its name, else by its GPUs' UUIDs, else by the input both were read from; a redacted bundle
    (its names replaced by tokens) or one that cannot be read cannot be told apart, so it is not replaced
    either. ``report`` is the report as it will be written (redacted when the new bundle is).
    """
    try:
        saved = report_from_json(saved_text, "report.json")
    except InputError as exc:
        return f"its report.json cannot be read ({exc}), so whose it is cannot be told"
    if "redaction" in saved.extras or "redaction" in report.extras:
        return "its host's names are replaced by tokens (a redacted bundle), so whose it is cannot be told"
    theirs, ours = _identity(saved), _identity(report)
    if theirs[0] == ours[0] and theirs[1] == ours[1]:
        return ""
    if theirs[0] == ours[0]:
        return f"it holds the bundle of {theirs[2]}, and this report is of {ours[2]}"
    return f"it holds the bundle of {theirs[2]}, and this report, of {ours[2]}, cannot be shown to be the same host"


def _identity(report: Report) -> tuple[str, object, str]:
    """How a report names its host: (what, the value compared, the words for a sentence)."""
    host = report.machine.host.hostname
    if isinstance(host, str) and host.strip():
        short = host.strip().lower().split(".", 1)[0]
        return "host", short, f"host {shown(host, 60)}"
    uuids = frozenset(g.uuid for g in report.machine.gpus if isinstance(g.uuid, str))
    if uuids:
        return "gpus", uuids, f"the GPUs {shown(sorted(uuids)[0], 60)}{' ...' if len(uuids) > 1 else ''}"
    return "input", report.source.name, f"the input {shown(report.source.name, 60)}"
