"""``audit`` and ``probe``: capture this machine (or the demo box), judge it, and measure it with ``--bench``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from topoaudit.app.bench import SweepRequest, bench_config, run_sweep, with_nccl_view
from topoaudit.app.common import GateRequest, Judged, MachineInput, Progress, judge, load_machine
from topoaudit.errors import UsageError

if TYPE_CHECKING:
    from topoaudit.probe.snapshot import Snapshot

DEMO_EXAMPLE = "hgx-h100"


@dataclass(frozen=True)
class ProbeRequest:
    sysfs_root: str = "/"
    call_timeout_s: float = 10.0
    smi_timeout_s: float = 20.0


@dataclass(frozen=True)
class AuditRequest:
    gate: GateRequest = field(default_factory=GateRequest)
    probe: ProbeRequest = field(default_factory=ProbeRequest)
    demo: bool = False
    sweep: SweepRequest | None = None  # ``--bench``


@dataclass(frozen=True)
class ProbeResult:
    snapshot_json: str
    summary: str


def audit(request: AuditRequest, progress: Progress | None = None) -> Judged | None:
    """Probe this machine (or the demo box), judge it, and measure it with ``--bench``.

    None when this process is a launched bench rank other than 0 (rank 0 reports for the job).
    """
    if request.demo and request.sweep is not None:
        raise UsageError("--bench measures this machine; --demo audits a bundled example box, not this one")
    if request.sweep is not None:
        bench_config(request.sweep)  # a sweep that cannot run is refused before the probe
    evidence: dict[str, str | bytes]
    if request.demo:
        loaded, evidence = load_machine(MachineInput(example=DEMO_EXAMPLE), keep_evidence=True)
    else:
        from topoaudit.probe.snapshot import snapshot_to_json
        from topoaudit.readers.snapshot import facts_of_snapshot

        snapshot = _probe(request.probe)
        loaded = facts_of_snapshot(snapshot, "this machine", kind="live")
        evidence = {"snapshot.json": snapshot_to_json(snapshot)}
        for record in snapshot.commands:
            if isinstance(record.text, str):
                evidence[record.command.replace(" ", "-") + ".txt"] = record.text
    if request.sweep is None:
        return Judged(judge(loaded, request.gate, None), evidence)
    # the bench uses the probed machine: its domains, groups and expected busbw
    measured, nccl_files = run_sweep(request.sweep, loaded.machine, progress)
    if measured is None:
        return None
    evidence.update(nccl_files)
    loaded = with_nccl_view(loaded, nccl_files)
    expect = request.sweep.expect_busbw_gbps
    return Judged(judge(loaded, request.gate, None, bench=measured, expect_busbw_gbps=expect), evidence)


def probe(request: ProbeRequest) -> ProbeResult:
    """Capture this machine into snapshot JSON, with a one-line summary of what was found."""
    from topoaudit.probe.snapshot import snapshot_to_json

    snapshot = _probe(request)
    lost = sum(1 for g in snapshot.gpus if g.status != "ok")
    summary = f"probed {len(snapshot.gpus)} GPU(s) in {snapshot.probe_wall_s:.2f} s" + (
        f", {lost} lost mid-probe" if lost else ""
    )
    return ProbeResult(snapshot_to_json(snapshot), summary)


def _probe(request: ProbeRequest) -> Snapshot:
    from topoaudit.probe.collect import probe as collect

    return collect(request.sysfs_root, call_timeout_s=request.call_timeout_s, smi_timeout_s=request.smi_timeout_s)
