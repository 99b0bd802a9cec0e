"""The pure assembly of a run's results: what the ranks wrote (rank infos, the plan, rows, errors) -> groups
with their plateau, latency and expectation -> the pairwise matrix and its islands -> a :class:`BenchResult`.
No torch, no processes, no store: every function here takes and returns plain data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from topoaudit.bench import formulas
from topoaudit.bench.expect import expected_busbw
from topoaudit.bench.groups import GroupSpec, Plan, map_gpus
from topoaudit.bench.islands import islands
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow, PairBw, RankError, RankInfo, SkippedSize
from topoaudit.model.busbw import algbw_gbps, busbw_gbps, peak, plateau
from topoaudit.model.machine import Machine
from topoaudit.model.values import Unsupported
from topoaudit.units import format_size

ONE_RANK = Unsupported(
    "bench", "one rank: an all-reduce over a single rank moves no data, only its latency is measured"
)


@dataclass(frozen=True)
class RunDocuments:
    """What the ranks of one run wrote, as JSON documents: each rank's info, rank 0's plan (absent when the run
    stopped before it), the measured rows (one per group and size), the errors ranks reported."""

    infos: tuple[dict[str, Any], ...] = ()
    plan: dict[str, Any] | None = None
    records: tuple[dict[str, Any], ...] = ()
    errors: tuple[dict[str, Any], ...] = ()


def result_from_documents(
    documents: RunDocuments,
    *,
    backend: str,
    world: int,
    errors: list[RankError],
    machine: Machine | None,
    wall_s: float,
) -> BenchResult:
    """A run's documents, plus the errors the launcher saw itself, -> a :class:`BenchResult`. Works on partial
    runs: without a plan nothing was measured (``failed``); rows of an unfinished run are kept (``partial``)."""
    ranks, _ = ranks_from_infos(documents.infos)  # the plan already carries the note on shared host names
    errors = [
        *errors,
        *(
            RankError(int(doc["rank"]), doc["kind"], doc["message"], doc.get("group", ""), int(doc.get("size", 0)))
            for doc in documents.errors
        ),
    ]
    env: dict[str, str] = next((i["env"] for i in documents.infos if i["rank"] == 0 and "env" in i), {})
    plan_doc = documents.plan
    if plan_doc is None:
        return BenchResult(
            source="topoaudit",
            collective="all_reduce",
            backend=backend,
            world_size=world,
            hosts=tuple(sorted({r.host for r in ranks})),
            ranks=ranks,
            groups=(),
            status="failed",
            errors=tuple(errors),
            environment=env,
            wall_s=round(wall_s, 3),
        )
    return assemble(
        backend=backend,
        world=world,
        ranks=ranks,
        plan=plan_from_document(plan_doc),
        records=list(documents.records),
        skipped=[SkippedSize(int(s["size"]), s["reason"]) for s in plan_doc["skipped"]],
        errors=errors,
        machine=machine,
        environment=env,
        wall_s=wall_s,
    )


def plan_from_document(doc: dict[str, Any]) -> Plan:
    return Plan(
        tuple(
            GroupSpec(g["name"], g["kind"], tuple(g["ranks"]), bool(g["sweep"]), int(g.get("round_no", 0)))
            for g in doc["groups"]
        ),
        tuple(tuple(d) for d in doc["domains"]),
        doc["domain_basis"],
        tuple(doc["notes"]),
    )


def ranks_from_infos(infos: Sequence[dict[str, Any]]) -> tuple[tuple[RankInfo, ...], tuple[str, ...]]:
    """The ranks' own accounts -> :class:`RankInfo`, machines that share a host name told apart, and notes.

    A node is a host name everywhere in the bench (a domain per host, node pairs, "one host" in the judge).
    Machines launched under one name (containers given the same ``--hostname``) would be measured as one node,
    so each rank also reports its kernel's boot id: it differs between machines and is shared by the
    containers of one machine. Such hosts become ``name#1``, ``name#2``, in the order of their lowest rank.
    """
    boots: dict[str, dict[str, None]] = {}
    local: dict[str, list[int]] = {}
    for i in sorted(infos, key=lambda i: int(i["rank"])):
        host = str(i["host"])
        if i.get("boot_id"):
            boots.setdefault(host, {})[str(i["boot_id"])] = None
        local.setdefault(host, []).append(int(i["local_rank"]))
    notes = []
    renamed: dict[tuple[str, str], str] = {}
    for host, ids in boots.items():
        if len(ids) > 1:
            names = {boot: f"{host}#{k}" for k, boot in enumerate(ids, start=1)}
            renamed |= {(host, boot): name for boot, name in names.items()}
            notes.append(
                f"{len(ids)} machines report the host name {host!r} (their kernels' boot ids differ): measured as "
                f"{', '.join(names.values())}; give each node its own host name"
            )
    for host, ranks in local.items():
        repeated = sorted({r for r in ranks if ranks.count(r) > 1})
        if host not in boots and repeated:
            notes.append(
                f"host {host!r} reports local rank {repeated[0]} more than once: several machines may share this "
                "name, and without their boot ids they are measured as one node"
            )
    out = []
    for i in infos:
        rank = rank_from_info(i)
        name = renamed.get((rank.host, str(i.get("boot_id", ""))))
        out.append(dataclasses.replace(rank, host=name) if name else rank)
    return tuple(out), tuple(notes)


def rank_from_info(i: dict[str, Any]) -> RankInfo:
    """One rank's own account of itself (written by the rank into the store) -> :class:`RankInfo`."""
    return RankInfo(
        rank=int(i["rank"]),
        local_rank=int(i["local_rank"]),
        host=str(i["host"]),
        device=str(i["device"]),
        pci_bus_id=i["pci_bus_id"] if "pci_bus_id" in i else Unsupported("torch", "no PCI bus id (CPU rank)"),
        name=i["name"] if "name" in i else Unsupported("torch", "CPU rank"),
        pid=int(i.get("pid", 0)),
    )


def assemble(
    *,
    backend: str,
    world: int,
    ranks: tuple[RankInfo, ...],
    plan: Plan,
    records: list[dict[str, Any]],
    skipped: list[SkippedSize],
    errors: list[RankError],
    machine: Machine | None,
    environment: dict[str, str],
    wall_s: float,
) -> BenchResult:
    """Rows per group, plateau / latency, expectation, pair matrix and islands (pure; unit-testable)."""
    gpu_of = map_gpus(ranks, machine)
    hosts = {r.rank: r.host for r in ranks}
    gpu_label = {r.rank: f"{r.host}:{r.device}" for r in ranks}
    by_group: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_group.setdefault(rec["group"], []).append(rec)
    failed_groups = {e.group: e for e in errors if e.group}
    groups: list[BenchGroup] = []
    pairs: list[PairBw] = []
    for spec in plan.groups:
        recs = sorted(by_group.get(spec.name, []), key=lambda r: r["size"])
        expected, basis = _expectation(spec, machine, gpu_of, hosts, backend)
        group = _group(spec, recs, skipped, expected, basis, gpu_label, failed_groups.get(spec.name))
        groups.append(group)
        if spec.kind == "pair" and group.rows:
            pairs.append(_pair_figure(spec, group.rows[-1]))
    status = "complete"
    if errors:
        status = "partial" if records else "failed"
    timed = sum(float(rec.get("timed_s", 0.0)) for rec in records)
    return BenchResult(
        source="topoaudit",
        collective="all_reduce",
        backend=backend,
        world_size=world,
        hosts=tuple(sorted(set(hosts.values()))),
        ranks=ranks,
        groups=tuple(groups),
        status=status,
        pairs=tuple(pairs),
        measured_islands=_measured_islands(world, ranks, pairs),
        expected_islands=plan.domains
        if plan.domains
        else Unsupported("bench", "NVLink domains of these ranks unknown"),
        errors=tuple(errors),
        notes=_notes(plan, groups),
        environment=environment,
        wall_s=round(wall_s, 3),
        timed_s=round(timed, 6),
    )


def _group(
    spec: GroupSpec,
    recs: list[dict[str, Any]],
    skipped: list[SkippedSize],
    expected: float | Unsupported,
    basis: str,
    gpu_label: dict[int, str],
    err: RankError | None,
) -> BenchGroup:
    """One group's rows, plateau, peak, small-message latency and its ratio to the expected figure."""
    n = len(spec.ranks)
    rows = tuple(_row(rec, n) for rec in recs)
    # One rank moves no data (NCCL returns without touching the fabric: 0.07 us per call on an H200),
    # so a "bandwidth" would be bytes / launch overhead. Only its latency means anything.
    curve = [(r.size_bytes, r.busbw_gbps) for r in rows] if n > 1 else []
    plat, top = plateau(curve), peak(curve)
    no_bw = ONE_RANK if n < 2 else None
    small = [t for rec in recs if rec["size"] <= formulas.LATENCY_MAX_BYTES for t in rec["trial_us"]]
    ratio: float | Unsupported = Unsupported("bench", "no expectation or no plateau")
    if isinstance(expected, float) and plat is not None and expected > 0:
        ratio = round(plat[1] / expected, 3)
    return BenchGroup(
        name=spec.name,
        kind=spec.kind,
        ranks=spec.ranks,
        gpus=tuple(gpu_label.get(r, f"rank{r}") for r in spec.ranks),
        rows=rows,
        skipped_sizes=tuple(skipped) if spec.sweep else (),
        plateau_busbw_gbps=round(plat[1], 3) if plat else no_bw or Unsupported("bench", "no size >= 1 MiB measured"),
        plateau_size_bytes=plat[0] if plat else no_bw or Unsupported("bench", "no size >= 1 MiB measured"),
        peak_busbw_gbps=round(top[1], 3) if top else no_bw or Unsupported("bench", "nothing measured"),
        peak_size_bytes=top[0] if top else no_bw or Unsupported("bench", "nothing measured"),
        latency_p50_us=round(formulas.percentile(small, 50), 2) if small else _no_small,
        latency_p99_us=round(formulas.percentile(small, 99), 2) if small else _no_small,
        expected_busbw_gbps=expected,
        expected_basis=basis,
        ratio=ratio,
        error=f"{err.kind} at {format_size(err.size_bytes)}: {err.message}" if err else "",
    )


def _pair_figure(spec: GroupSpec, row: BenchRow) -> PairBw:
    """A pair's capability is its best trial at its largest size.

    A slow trial says another process took the CPU or the link for a moment, not that the path is slow (the
    median split loopback pairs 2.2x apart on a loaded 2-core runner).
    """
    fastest_us = row.min_us if isinstance(row.min_us, float) else row.time_us
    return PairBw(spec.ranks[0], spec.ranks[1], algbw_gbps(row.size_bytes, fastest_us), row.size_bytes)


def _measured_islands(
    world: int, ranks: tuple[RankInfo, ...], pairs: list[PairBw]
) -> tuple[tuple[int, ...], ...] | Unsupported:
    """The fast islands the pair sweep measured; only when every pair was measured (--groups pairs)."""
    all_ranks = tuple(sorted(r.rank for r in ranks)) or tuple(range(world))
    if world >= 2 and len(pairs) == world * (world - 1) // 2:
        return islands(all_ranks, tuple(pairs))
    return Unsupported("bench", "needs every pair measured (--groups pairs)")


def _notes(plan: Plan, groups: list[BenchGroup]) -> tuple[str, ...]:
    notes = list(plan.notes)
    if plan.domain_basis == "host":
        notes.append("CPU ranks: each host counts as one domain")
    for g in groups:
        if isinstance(g.ratio, float) and g.ratio > 1.15:
            notes.append(f"{g.name}: above the ring model ({g.ratio:.2f}x); NVLS or tree can exceed it")
    return tuple(notes)


_no_small = Unsupported("bench", "no size <= 64 KiB measured")


def _row(rec: dict[str, Any], n: int) -> BenchRow:
    trials = [float(t) for t in rec["trial_us"]]
    t = formulas.median(trials)
    size = int(rec["size"])
    return BenchRow(
        size_bytes=size,
        count=int(rec["count"]),
        dtype="float32",
        time_us=round(t, 3),
        algbw_gbps=algbw_gbps(size, t),
        busbw_gbps=busbw_gbps(size, t, n),
        wrong=int(rec["wrong"]),
        p50_us=round(formulas.percentile(trials, 50), 3),
        p99_us=round(formulas.percentile(trials, 99), 3),
        min_us=round(min(trials), 3),
        calls=int(rec["calls"]),
    )


def _expectation(
    spec: GroupSpec, machine: Machine | None, gpu_of: dict[int, int], hosts: dict[int, str], backend: str
) -> tuple[float | Unsupported, str]:
    if backend == "gloo":
        return Unsupported("bench-model", "gloo on CPU: no link model"), ""
    if machine is None:
        return Unsupported("bench-model", "no machine model (probe unavailable)"), ""
    if len({hosts.get(r) for r in spec.ranks}) > 1:
        return Unsupported("bench-model", "the group spans hosts; NIC rates are not modelled"), ""
    if not all(r in gpu_of for r in spec.ranks):
        return Unsupported("bench-model", "ranks not joined to the machine's GPUs"), ""
    exp = expected_busbw(machine, tuple(gpu_of[r] for r in spec.ranks))
    value = exp.busbw_gbps
    return (float(value), exp.basis) if isinstance(value, (int, float)) else (value, exp.basis)


__all__ = [
    "ONE_RANK",
    "RunDocuments",
    "assemble",
    "plan_from_document",
    "rank_from_info",
    "ranks_from_infos",
    "result_from_documents",
]
