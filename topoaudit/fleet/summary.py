"""A judged node report reduced to what the fleet compares: verdict, fingerprint, figures, identities, fabric.

The reduction keeps a few hundred numbers per node at most, so a fleet of ten thousand nodes holds ten
thousand summaries, never ten thousand reports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from topoaudit.fleet.node_pairs import NODE_PAIR_CODES, fleet_findings
from topoaudit.model.bench import BenchResult
from topoaudit.model.finding import Severity, worst_first
from topoaudit.model.fleet import FleetFinding
from topoaudit.model.report import NOT_JUDGED, Report

MIN_FIGURE_BYTES = 1 << 20
"""busbw is compared at 1 MiB and above: smaller messages measure latency, not the links."""
LOWER_IS_BETTER_UNITS = frozenset({"us"})


@dataclass(frozen=True)
class Fingerprint:
    """The hardware a node reports: nodes with equal fingerprints are compared with each other."""

    gpu_model: str
    gpu_count: int
    domain_sizes: tuple[int, ...]  # largest first; all 1 when no NVLink
    nic_count: int
    nic_rates_gbps: tuple[float, ...]  # the distinct rates, sorted
    driver: str

    @property
    def label(self) -> str:
        domains = "+".join(str(s) for s in self.domain_sizes) if any(s > 1 for s in self.domain_sizes) else "none"
        rates = "/".join(f"{r:g}" for r in self.nic_rates_gbps)
        nics = f"{self.nic_count} NIC{'' if self.nic_count == 1 else 's'}" + (f" @ {rates} Gb/s" if rates else "")
        return f"{self.gpu_count}x {self.gpu_model}; NVLink domains {domains}; {nics}; driver {self.driver}"


@dataclass(frozen=True)
class Figure:
    """One measured or counted figure of a node, compared across its hardware group."""

    name: str  # "busbw all @ 1 GiB", "NVLinks GPU0-GPU1", "NIC mlx5_0 rate"
    unit: str  # "GB/s" | "links" | "Gb/s" | "us"
    value: float


@dataclass(frozen=True)
class TrayFabric:
    """A node's GPUs' NVLink fabric registration, as its report recorded it."""

    cluster_uuid: str  # "" when none was recorded or it is all zeros
    clique_id: int  # -1 when none was recorded
    gpus: int
    state: str
    status: str
    health: str
    model: str = ""  # the GPU model the report names ("" when it names none)
    switch_links: int = 0  # active NVLinks to an NVSwitch
    off_node_switch_links: int = 0  # of those, to a switch the node cannot see (PCI address ffffffff:ff:ff.0)


@dataclass(frozen=True)
class NodeSummary:
    """What the fleet keeps of one node."""

    host: str
    input: str
    captured_at: str = ""
    node_verdict: str = ""  # "" when the input could not be judged
    exit_code: int = 0
    incomplete: bool = False
    fail_codes: tuple[str, ...] = ()  # at or above --fail-on (the node gate's own)
    warn_codes: tuple[str, ...] = ()
    reason: str = ""  # the worst finding's code and message, or why the input is unusable
    fingerprint: Fingerprint | None = None
    figures: tuple[Figure, ...] = ()
    gpu_ids: tuple[tuple[str, str], ...] = ()  # ("GPU UUID" | "GPU serial", value)
    fabric: TrayFabric | None = None
    error: str = ""  # the input is unusable: the sentence the user would have seen
    gpu_count: int = 0
    named_elsewhere: tuple[FleetFinding, ...] = ()  # findings of this report that name other nodes
    saved_verdict: str = ""  # the verdict a saved report recorded ("" when the input was not one)
    judged_with: str = ""  # the request the node was judged with, in words
    note: str = ""  # why the fleet's verdict on the node differs from the saved one ("" when it does not)


def size_label(size_bytes: int) -> str:
    """1048576 -> "1 MiB" (figure names stay short and exact)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size_bytes >= 1 << shift and size_bytes % (1 << shift) == 0:
            return f"{size_bytes >> shift} {unit}"
    return f"{size_bytes} B"


def summarize(
    report: Report,
    input_name: str,
    host_hint: str,
    captured_at: str = "",
    *,
    saved_verdict: str = "",
    judged_with: str = "",
    note: str = "",
) -> NodeSummary:
    """The summary of one judged node report (``saved_verdict``, ``judged_with``, ``note``: see NodeSummary)."""
    machine = report.machine
    hostname = machine.host.hostname
    fail_rank = report.options.fail_on.rank
    moved = fleet_findings(report.findings)  # node-pair findings name other nodes: they go to those nodes
    ordered = worst_first(f for f in report.findings if f.code not in NODE_PAIR_CODES)
    fail_codes = _unique(f.code for f in ordered if f.severity.rank >= fail_rank)
    warn_codes = _unique(f.code for f in ordered if f.severity.rank < fail_rank and f.severity != Severity.INFO)
    worst = next((f for f in ordered if f.severity.rank >= fail_rank), None)
    return NodeSummary(
        host=hostname if isinstance(hostname, str) and hostname else host_hint,
        input=input_name,
        captured_at=captured_at,
        node_verdict=report.gate.verdict,
        exit_code=0 if moved and report.gate.exit_code == 1 and not fail_codes else report.gate.exit_code,
        incomplete=report.gate.incomplete or report.gate.verdict == NOT_JUDGED,  # a node not judged did not pass
        fail_codes=fail_codes,
        warn_codes=warn_codes,
        reason=f"{worst.code} {worst.message}" if worst is not None else "",
        fingerprint=fingerprint(report),
        figures=figures(report),
        gpu_ids=_gpu_ids(report),
        fabric=_fabric(report),
        gpu_count=len(machine.gpus),
        named_elsewhere=moved,
        saved_verdict=saved_verdict,
        judged_with=judged_with,
        note=note,
    )


def unusable(host: str, input_name: str, error: str) -> NodeSummary:
    """A node whose input could not be read or judged."""
    return NodeSummary(host=host, input=input_name, error=error)


def fingerprint(report: Report) -> Fingerprint:
    machine = report.machine
    model = report.gpu_model if isinstance(report.gpu_model, str) else "unknown model"
    driver = machine.host.driver_version
    rates = sorted({n.link_rate_gbps for n in machine.nics if isinstance(n.link_rate_gbps, (int, float))})
    return Fingerprint(
        gpu_model=model,
        gpu_count=len(machine.gpus),
        domain_sizes=tuple(sorted((d.size for d in report.domains), reverse=True)),
        nic_count=len(machine.nics),
        nic_rates_gbps=tuple(float(r) for r in rates),
        driver=driver if isinstance(driver, str) else "unknown",
    )


def figures(report: Report) -> tuple[Figure, ...]:
    """Every figure the fleet compares: busbw per group and size, pair busbw, NCCL Inspector busbw, links, NIC rates."""
    out: list[Figure] = []
    bench = report.bench
    if isinstance(bench, BenchResult):
        for group in bench.groups:
            for row in group.rows:
                if row.size_bytes >= MIN_FIGURE_BYTES:
                    out.append(Figure(f"busbw {group.name} @ {size_label(row.size_bytes)}", "GB/s", row.busbw_gbps))
            if isinstance(group.latency_p50_us, (int, float)):
                out.append(Figure(f"latency p50 {group.name}", "us", float(group.latency_p50_us)))
        out.extend(Figure(f"busbw pair {p.a}-{p.b}", "GB/s", p.busbw_gbps) for p in bench.pairs)
    out.extend(_inspector_figures(report))
    for link in report.machine.links:
        if link.a.startswith("GPU") and link.b.startswith("GPU"):
            out.append(Figure(f"NVLinks {link.a}-{link.b}", "links", float(link.nvlinks)))
    for gpu in report.machine.gpus:
        if isinstance(gpu.nvlink_ports, tuple):
            active = sum(1 for p in gpu.nvlink_ports if p.state == "active")
            out.append(Figure(f"active NVLinks {gpu.label}", "links", float(active)))
    for nic in report.machine.nics:
        if isinstance(nic.link_rate_gbps, (int, float)):
            name = nic.device if isinstance(nic.device, str) else nic.label
            out.append(Figure(f"NIC {name} rate", "Gb/s", float(nic.link_rate_gbps)))
    return tuple(out)


def _inspector_figures(report: Report) -> list[Figure]:
    """NCCL Inspector's median busbw per collective, rank count and size: what the node's own jobs reached.

    Communicator ids differ from node to node, so a figure is named by the collective and its rank count.
    """
    summary = report.extras.get("nccl_inspector") if isinstance(report.extras, dict) else None
    if not isinstance(summary, dict):
        return []
    out = []
    for comm in summary.get("communicators", ()):
        for row in comm.get("by_size", ()) if isinstance(comm, dict) else ():
            size, busbw = row.get("msg_size_bytes"), row.get("median_busbw_gbps")
            if isinstance(size, int) and size >= MIN_FIGURE_BYTES and isinstance(busbw, (int, float)):
                name = f"Inspector {comm.get('coll')} {comm.get('n_ranks')} ranks @ {size_label(size)}"
                out.append(Figure(name, "GB/s", float(busbw)))
    return out


def _gpu_ids(report: Report) -> tuple[tuple[str, str], ...]:
    ids: list[tuple[str, str]] = []
    for gpu in report.machine.gpus:
        if isinstance(gpu.uuid, str) and gpu.uuid.strip():
            ids.append(("GPU UUID", gpu.uuid.strip()))
        if isinstance(gpu.serial, str) and gpu.serial.strip().strip("0"):
            ids.append(("GPU serial", gpu.serial.strip()))
    return tuple(ids)


def _fabric(report: Report) -> TrayFabric | None:
    """The node's fabric registration when its GPUs are fabric-attached (NVSwitch/NVL trays); else None."""
    gpus = [g for g in report.machine.gpus if isinstance(g.fabric.state, str) and g.fabric.state != "not-supported"]
    if not gpus:
        return None
    keys = {(_cluster(g.fabric.cluster_uuid), g.fabric.clique_id) for g in gpus}
    cluster, clique = keys.pop() if len(keys) == 1 else ("", -1)
    health = _health_by_gpu(report)
    ports = [p for g in gpus if isinstance(g.nvlink_ports, tuple) for p in g.nvlink_ports]
    switch_ports = [p for p in ports if p.state == "active" and p.remote_device_type == "switch"]
    model = report.gpu_model if isinstance(report.gpu_model, str) else ""
    return TrayFabric(
        cluster_uuid=cluster,
        clique_id=clique if isinstance(clique, int) and cluster else -1,
        gpus=len(gpus),
        state=_one({str(g.fabric.state) for g in gpus}),
        status=_one({g.fabric.status if isinstance(g.fabric.status, str) else "not recorded" for g in gpus}),
        health=_one({health.get(g.index, "not recorded") for g in gpus}),
        model=model,
        switch_links=len(switch_ports),
        off_node_switch_links=sum(1 for p in switch_ports if _hidden(p.remote_pci_bus_id)),
    )


def _hidden(bus: object) -> bool:
    """NVML's address for an NVSwitch the node cannot see (one in another tray of an NVL rack): all ones."""
    return isinstance(bus, str) and bus.split(":", 1)[0].lower().strip("f") == "" and bus.lower().startswith("ff")


def _health_by_gpu(report: Report) -> dict[int, str]:
    """Each GPU's fabric health (summary and raw mask) where the probe's host checks recorded it."""
    checks = getattr(report.machine.host, "checks", None)  # recorded by a live probe (or its snapshot)
    records = getattr(checks, "fabric_health", None)
    if not isinstance(records, tuple):
        return {}
    out = {}
    for record in records:
        parts = []
        summary, mask = getattr(record, "summary", None), getattr(record, "health_mask", None)
        if isinstance(summary, str):
            parts.append(summary)
        if isinstance(mask, int) and not isinstance(mask, bool):
            parts.append(f"mask {mask:#x}")
        if parts:
            out[int(record.gpu)] = " ".join(parts)
    return out


def _cluster(value: object) -> str:
    """A cluster UUID that names a cluster: all zeros (an H100, or a failed registration) names none."""
    if not isinstance(value, str) or not value.replace("-", "").strip("0"):
        return ""
    return value.lower()


def _one(values: set[str]) -> str:
    return values.pop() if len(values) == 1 else "mixed (" + ", ".join(sorted(values)) + ")"


def _unique(codes: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for code in codes:
        seen.setdefault(code, None)
    return tuple(seen)
