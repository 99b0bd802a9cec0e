"""``healthcheck``: judge this node for Slurm, reusing a fresh cached result, and keep its drain state in step.

A node that fails is drained with a reason that starts with ``topoaudit:``; a node that passes is resumed
only when its drain reason starts with ``topoaudit:`` -- another tool's drain (NHC, an operator) is never
touched. Slurm runs ``HealthCheckProgram`` every few minutes and kills it after 60 s, so the last full
result is cached (a report.json, written atomically) and reused while it is younger than the allowed age.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from topoaudit.app.audit import AuditRequest, ProbeRequest, audit
from topoaudit.app.common import GateRequest, audit_options
from topoaudit.errors import EnvironmentUnusable, InputError
from topoaudit.fleet.drain import REASON_PREFIX, reason_line

if TYPE_CHECKING:  # `healthcheck --help` loads no report model
    from topoaudit.model.report import Report

DEFAULT_HEALTHCHECK_CACHE = "/var/tmp/topoaudit-healthcheck.json"


@dataclass(frozen=True)
class HealthCheckRequest:
    """``topoaudit healthcheck``: judge this node (reusing a fresh cached result) and keep its drain in step."""

    gate: GateRequest = field(default_factory=GateRequest)
    probe: ProbeRequest = field(default_factory=ProbeRequest)
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
    from topoaudit.exitcodes import ExitCode

    node = this_node(request.node)
    scontrol = find_scontrol(request.scontrol) if request.apply else ""
    cached = read_cache(request.cache_path, request.max_age_s)
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
            reason = probe_failure_reason(exc)
            action = _keep_drain_in_step(scontrol, node, reason, healthy=False) if request.apply else "not applied"
            return HealthCheckResult(node, False, reason, 0.0, False, action, int(ExitCode.UNUSABLE))
        assert judged is not None  # no sweep: there are no other ranks
        report = judged.report
        unsaved = write_cache(request.cache_path, report)
        age, from_cache = 0.0, False
    healthy = report.gate.exit_code == 0
    reason = report.gate.reason if healthy else drain_reason(report)
    action = _keep_drain_in_step(scontrol, node, reason, healthy) if request.apply else "not applied"
    if not from_cache and unsaved:
        action += f"; {unsaved}"
    return HealthCheckResult(node, healthy, reason, age, from_cache, action, report.gate.exit_code)


def _keep_drain_in_step(scontrol: str, node: str, reason: str, healthy: bool) -> str:

    state = node_state(scontrol, node)
    if healthy:
        if state.drained_by_us:
            resume(scontrol, node)
            return f"resumed (it was drained by this check: {state.reason})"
        if state.drained:
            return f"left drained: another drain reason ({state.reason or 'none'})"
        return "none"
    if state.drained and not state.drained_by_us:
        return f"left as drained by another reason ({state.reason or 'none'})"
    if state.drained_by_us and state.reason == reason:
        return "already drained with this reason"
    drain(scontrol, node, reason)
    return "drained"


# --- the cache and Slurm ---------------------------------------------------------------------------------

SCONTROL_TIMEOUT_S = 15.0
DRAIN_FLAGS = frozenset({"DRAIN", "DRAINED", "DRAINING"})


@dataclass(frozen=True)
class NodeState:
    """What ``scontrol show node`` says: its state (``IDLE``, ``IDLE+DRAIN``, ``MIXED+DRAIN``...) and reason."""

    name: str
    state: str
    reason: str  # "" when Slurm records none

    @property
    def drained(self) -> bool:
        return any(flag in DRAIN_FLAGS for flag in self.state.upper().split("+"))

    @property
    def drained_by_us(self) -> bool:
        return self.drained and self.reason.startswith(REASON_PREFIX)


@dataclass(frozen=True)
class Cached:
    report: Report
    age_s: float


def drain_reason(report: Report) -> str:
    """``topoaudit: <code> <message>`` of the first finding that failed the gate, one line, as ``sinfo -R``
    shows it; the gate's sentence when no finding did (an incomplete audit under ``--strict``)."""
    failing = [f for f in report.findings if f.severity.rank >= report.options.fail_on.rank]
    if failing:
        worst = sorted(failing, key=lambda f: -f.severity.rank)
        more = f" (+{len(worst) - 1} more)" if len(worst) > 1 else ""
        return reason_line(f"{worst[0].code} {worst[0].message}", more)
    return reason_line(report.gate.reason)


def probe_failure_reason(error: Exception) -> str:
    """A node whose GPUs cannot be probed (no driver, no GPU) cannot serve GPU jobs: drained, with why."""
    return reason_line(f"probe failed: {error}")


def this_node(explicit: str | None = None) -> str:
    """The Slurm node name: given, else ``$SLURMD_NODENAME`` (slurmd sets it), else ``hostname -s``."""
    return explicit or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


# --- the cache -------------------------------------------------------------------------------------------


def read_cache(path: str, max_age_s: float, now: float | None = None) -> Cached | None:
    """The cached report when it was generated less than ``max_age_s`` ago; None when absent, old or unreadable.

    The age is read from the report's own ``generated_at`` (the clock that will read it), not the file's
    modification time, which a copied or restored file does not keep.
    """
    try:
        from topoaudit.model.report import report_from_json

        report = report_from_json(Path(path).read_text(encoding="utf-8"), path)
        generated = datetime.fromisoformat(report.generated_at.replace("Z", "+00:00"))
    except (OSError, UnicodeDecodeError, InputError, ValueError):
        return None  # a damaged cache is only a slower check: probe again and rewrite it
    if generated.tzinfo is None:
        generated = generated.replace(tzinfo=timezone.utc)
    age = (time.time() if now is None else now) - generated.timestamp()
    if age > max_age_s or age < -60:  # from the future: a clock jump; probe again
        return None
    return Cached(report, max(age, 0.0))


def write_cache(path: str, report: Report) -> str:
    """Keep the result for the next runs; a cache that cannot be written only makes them slower: the
    sentence saying why is returned ("" when written) instead of failing the check."""
    from topoaudit.errors import OutputError
    from topoaudit.model.report import report_to_dict
    from topoaudit.outputs.files import write_file
    from topoaudit.render.json import dumps

    try:
        write_file(path, dumps(report_to_dict(report)) + "\n")
    except OutputError as exc:
        return f"result not cached: {exc}"
    return ""


# --- Slurm -----------------------------------------------------------------------------------------------


def find_scontrol(binary: str = "scontrol") -> str:
    found = shutil.which(binary)
    if found is None:
        raise EnvironmentUnusable(
            f"the health check drains through Slurm's {binary}, which is not on PATH",
            hint="run it on a Slurm node, or pass --no-drain to only judge this node",
        )
    return found


def node_state(scontrol: str, node: str) -> NodeState:
    """``scontrol show node``: the node's state and reason (EnvironmentUnusable when Slurm does not answer)."""
    text = _scontrol(scontrol, "show", "node", node, "--oneliner")
    fields = _fields(text)
    if "NodeName" not in fields:
        raise EnvironmentUnusable(f"Slurm does not know node {node!r}: {text.strip()[:200]}")
    return NodeState(node, fields.get("State", "unknown"), fields.get("Reason", ""))


def drain(scontrol: str, node: str, reason: str) -> None:
    _scontrol(scontrol, "update", f"nodename={node}", "state=drain", f"reason={reason}")


def resume(scontrol: str, node: str) -> None:
    _scontrol(scontrol, "update", f"nodename={node}", "state=resume")


def _scontrol(scontrol: str, *args: str) -> str:
    try:
        done = subprocess.run(
            [scontrol, *args], capture_output=True, text=True, timeout=SCONTROL_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise EnvironmentUnusable(f"scontrol {args[0]} did not answer within {SCONTROL_TIMEOUT_S:g} s") from exc
    except OSError as exc:
        raise EnvironmentUnusable(f"scontrol could not run: {exc}") from exc
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[:300]
        raise EnvironmentUnusable(f"scontrol {' '.join(args[:2])} failed (exit {done.returncode}): {said}")
    return done.stdout


_LAST_KEYS = ("Reason",)  # free text that runs to the end of the line in `--oneliner` output


def _fields(line: str) -> dict[str, str]:
    """``Key=Value`` pairs of a ``scontrol show --oneliner`` line; Reason may hold spaces and '='."""
    fields: dict[str, str] = {}
    text = line.strip()
    for key in _LAST_KEYS:
        marker = f" {key}="
        if marker in f" {text}":
            head, _, tail = f" {text}".partition(marker)
            fields[key] = _strip_reason_stamp(tail.strip())
            text = head.strip()
    for token in text.split():
        key, sep, value = token.partition("=")
        if sep:
            fields.setdefault(key, value)
    return fields


def _strip_reason_stamp(reason: str) -> str:
    """``topoaudit: x [root@2026-12-01T12:00:00]`` -> ``topoaudit: x`` (Slurm appends who and when)."""
    if reason.endswith("]") and " [" in reason:
        return reason[: reason.rindex(" [")]
    return reason
