"""``fleet``: judge many node inputs alike, once each, and reduce them to one fleet report."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from topoaudit.app.common import GateRequest, MachineInput, audit_options, load_machine, saved_request

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from topoaudit.fleet.inputs import NodeInput
    from topoaudit.fleet.summary import NodeSummary
    from topoaudit.model.facts import Facts
    from topoaudit.model.fleet import FleetReport
    from topoaudit.model.report import AuditOptions, Report


@dataclass(frozen=True)
class FleetRequest:
    """``topoaudit fleet``: node inputs judged alike, then compared."""

    paths: tuple[str, ...]
    gate: GateRequest = field(default_factory=GateRequest)
    expect_nodes: str | None = None  # FILE or a Slurm host list
    max_report_age_s: float = 86400.0
    rack_gpus: int = 72
    apply: bool = False  # run the drain commands (scontrol) instead of only printing them
    jobs: int = 1  # processes judging nodes at once (the command line's default: the cores available)


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
        _load_judge()  # before the workers fork, so each starts with it loaded
    with _few_collections():
        if request.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(request.jobs, initializer=_worker_start) as pool:
                report = assemble(_in_order(pool, items, request.jobs * 4), fleet_options, __version__)
        else:
            report = assemble(map(_fleet_node, items), fleet_options, __version__)
    if request.apply:
        from topoaudit.fleet.slurm import apply_drain

        report = replace(report, applied=apply_drain(report.drain))
    return report


def _load_judge() -> None:
    """Load what judging a node needs: every reader, the pipeline, every family of rules, the catalog."""
    import topoaudit.fleet.summary
    import topoaudit.pipeline  # noqa: F401
    from topoaudit.catalog import all_gpus
    from topoaudit.readers import readers
    from topoaudit.rules.families import load_all

    readers()
    load_all()
    all_gpus()


# Reading a node report makes thousands of short-lived objects, and Python's cyclic collector, at its default
# thresholds, ran a tenth of a fleet's time for none of them: none is part of a cycle. The objects topoaudit
# holds for the whole run (modules, the catalog) are frozen out of every collection.
_GEN0_THRESHOLD = 50_000


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Collect garbage rarely while the fleet is judged; the usual thresholds come back afterwards."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(_GEN0_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _worker_start() -> None:
    """A worker process collects as rarely as the parent (a forked worker inherits it; a spawned one does not)."""
    gc.freeze()
    gc.set_threshold(_GEN0_THRESHOLD, *gc.get_threshold()[1:])


_CHUNK = 32
"""Nodes a worker judges per task: one task per node spends more on handing it over than on judging it."""


def _in_order(pool: Executor, items: Iterator[tuple[NodeInput, GateRequest]], window: int) -> Iterator[NodeSummary]:
    """Node summaries in input order, with at most ``window`` chunks in flight (memory stays bounded)."""
    from collections import deque
    from itertools import islice

    pending: deque[Future[list[NodeSummary]]] = deque()
    while chunk := list(islice(items, _CHUNK)):
        pending.append(pool.submit(_fleet_nodes, chunk))
        if len(pending) >= window:
            yield from pending.popleft().result()
    while pending:
        yield from pending.popleft().result()


def _fleet_nodes(chunk: list[tuple[NodeInput, GateRequest]]) -> list[NodeSummary]:
    return [_fleet_node(item) for item in chunk]


def _fleet_node(item: tuple[NodeInput, GateRequest]) -> NodeSummary:
    """One node judged through the same steps as ``analyze PATH``, reduced to its fleet summary."""
    from topoaudit.errors import TopoauditError
    from topoaudit.fleet.inputs import captured_at
    from topoaudit.fleet.summary import summarize, unusable

    node, gate = item
    if node.error:  # the folder walk could not read it (a symbolic link that loops): unusable, the others judged
        return unusable(node.host_hint, node.shown_as, node.error)
    try:
        loaded, _ = load_machine(MachineInput(path=node.path), keep_evidence=False)
        options, kept, overridden = node_options(gate, loaded.saved)
        report = _judge(loaded, options)
    except TopoauditError as exc:
        return unusable(node.host_hint, node.shown_as, str(exc))
    saved = loaded.saved
    if saved is None:
        return summarize(report, node.shown_as, node.host_hint, captured_at(node.path))
    judged_with = _judged_with(kept, overridden)
    note = ""
    if saved.gate.verdict != report.gate.verdict:
        note = _why_it_differs(saved, report, overridden)
    return summarize(
        report,
        node.shown_as,
        node.host_hint,
        captured_at(node.path),
        saved_verdict=saved.gate.verdict,
        judged_with=judged_with,
        note=note,
    )


def node_options(gate: GateRequest, saved: Report | None) -> tuple[AuditOptions, list[str], list[str]]:
    """The options one node is judged with: the fleet's ``--fail-on``/``--strict``, and for a saved report
    the request it was saved with (``--gpu-model``, ``--tp``, ``--expect-*``, its policy) wherever the
    fleet's options do not name one. Returns the options, the saved request kept, and the fleet's
    options that overrode a different saved one (each in words)."""
    request = saved_request(gate, saved, keep_gate=False)
    return request.options, list(request.kept), list(request.overridden)


def _judged_with(kept: list[str], overridden: list[str]) -> str:
    parts = [f"the report's own {', '.join(kept)}"] if kept else []
    parts += [f"the fleet's {', '.join(overridden)}"] if overridden else []
    return "; ".join(parts) or "no --gpu-model, --tp or --expect-* (none saved, none given)"


def _why_it_differs(saved: Report, report: Report, overridden: list[str]) -> str:
    """Why the fleet's verdict on a saved report is not the one it was saved with."""
    from topoaudit import __version__

    why = []
    if overridden:
        why.append(f"the fleet's {', '.join(overridden)}")
    if saved.options.fail_on != report.options.fail_on:
        why.append(f"--fail-on {report.options.fail_on.value} here, {saved.options.fail_on.value} when saved")
    if saved.options.strict != report.options.strict:
        why.append(f"--strict {'on' if report.options.strict else 'off'} here")
    if saved.tool_version != __version__:
        why.append(f"saved by topoaudit {saved.tool_version}, judged by {__version__} (its rules may differ)")
    because = "; ".join(why) or "the same request judged again gave another verdict"
    return f"saved {saved.gate.verdict.upper()}, judged {report.gate.verdict.upper()} here: {because}"


def _judge(loaded: Facts, options: AuditOptions) -> Report:
    """``common.judge`` with the node's own options (a saved report keeps what it was asked)."""
    from topoaudit.errors import InputError
    from topoaudit.pipeline import analyze_facts

    if not loaded.machine.gpus:
        raise InputError(f"{loaded.source.name}: no GPUs in the input")
    return analyze_facts(loaded, options=options)
