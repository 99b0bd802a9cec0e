"""Prometheus text exposition, for node_exporter's textfile collector (``-o /var/lib/node_exporter/topoaudit.prom``).

Built with the official ``prometheus-client`` (a private registry rendered by ``generate_latest``), so names,
escaping and ``# TYPE`` lines follow the format exactly. Names carry the ``topoaudit_`` prefix and base
units (bytes per second, not GB/s); counters end in ``_total``. Per-GPU series use dcgm-exporter's label
keys (``gpu``, ``UUID``, ``pci_bus_id``, ``Hostname``) and its bus-id spelling, so they join with DCGM data.
A label the source cannot give is left out of the series, never filled with a placeholder; a value the
source cannot give has no sample at all.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from topoaudit.model.busbw import GB
from topoaudit.model.machine import Gpu, NvLinkPort
from topoaudit.model.report import VERDICTS, Report
from topoaudit.model.values import is_absent
from topoaudit.render import RenderOptions

SEVERITIES = ("info", "warn", "fail")
_ERROR_COUNTERS = ("replay_errors", "recovery_errors", "crc_flit_errors", "crc_data_errors")


def render(report: Report, options: RenderOptions) -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_ReportCollector(report))
    return generate_latest(registry).decode("utf-8")


_BUS_ID = re.compile(r"(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2}\.[0-7])")


def dcgm_bus_id(bus_id: str) -> str:
    """``0000:3b:00.0`` -> ``00000000:3B:00.0``: the NVML spelling dcgm-exporter puts in ``pci_bus_id``.

    A value that is not a PCI bus id (a damaged or edited report) is kept as it is: it joins nothing either way.
    """
    found = _BUS_ID.fullmatch(bus_id.strip())
    if found is None:
        return bus_id
    domain, bus, rest = found.groups()
    return f"{int(domain or '0', 16):08X}:{bus.upper():0>2}:{rest.upper():0>4}"


class _ReportCollector(Collector):
    """Yields every metric family of one report (the registry asks once per exposition)."""

    def __init__(self, report: Report) -> None:
        self.report = report

    def collect(self) -> Iterator[Metric]:
        report = self.report
        host = report.machine.host.hostname
        node_keys: list[str] = [] if is_absent(host) else ["Hostname"]
        node: list[str] = [] if is_absent(host) else [str(host)]
        yield from _verdict(report, node_keys, node)
        yield from _findings(report, node_keys, node)
        yield from _domains(report, node_keys, node)
        yield from _links(report, node_keys, node)
        yield from _gpus(report, node_keys, node)
        yield from _bench(report, node_keys, node)


def _gauge(name: str, doc: str, keys: Sequence[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=list(keys))


def _verdict(report: Report, keys: list[str], node: list[str]) -> Iterator[Metric]:
    info = InfoMetricFamily("topoaudit_report", "The audited machine and the tool that judged it.", labels=keys)
    facts = {
        "tool_version": report.tool_version,
        "source_kind": report.source.kind,
        "gpu_model": "" if is_absent(report.gpu_model) else str(report.gpu_model),
        "demo": "true" if report.source.demo else "false",
    }
    info.add_metric(node, {k: v for k, v in facts.items() if v})
    yield info
    verdict = _gauge(
        "topoaudit_verdict",
        "1 for the audit's verdict (pass, warn, fail or not judged), 0 for the others.",
        [*keys, "verdict"],
    )
    for name in VERDICTS:
        verdict.add_metric([*node, name], 1.0 if report.gate.verdict == name else 0.0)
    yield verdict
    exit_code = _gauge(
        "topoaudit_exit_code",
        "The exit code the gate gave (0 pass, 1 findings, 3 incomplete or not judged under --strict).",
        keys,
    )
    exit_code.add_metric(node, float(report.gate.exit_code))
    yield exit_code
    incomplete = _gauge(
        "topoaudit_incomplete", "1 when rules were skipped, probes failed or the input was recovered.", keys
    )
    incomplete.add_metric(node, 1.0 if report.gate.incomplete else 0.0)
    yield incomplete
    stamp = _timestamp(report.generated_at)
    if stamp is not None:
        last = _gauge("topoaudit_last_run_timestamp_seconds", "When the report was generated (Unix time).", keys)
        last.add_metric(node, stamp)
        yield last


def _findings(report: Report, keys: list[str], node: list[str]) -> Iterator[Metric]:
    findings = _gauge(
        "topoaudit_findings", "Findings of the audit, by finding code and severity.", [*keys, "code", "severity"]
    )
    for (code, severity), count in sorted(Counter((f.code, f.severity.value) for f in report.findings).items()):
        findings.add_metric([*node, code, severity], float(count))
    yield findings
    by_severity = _gauge("topoaudit_findings_by_severity", "Findings of the audit, by severity.", [*keys, "severity"])
    for severity in SEVERITIES:
        by_severity.add_metric([*node, severity], float(sum(f.severity.value == severity for f in report.findings)))
    yield by_severity
    skipped = _gauge("topoaudit_skipped_rules", "Rules that could not run on this input.", keys)
    skipped.add_metric(node, float(len(report.skipped)))
    yield skipped


def _domains(report: Report, keys: list[str], node: list[str]) -> Iterator[Metric]:
    count = _gauge("topoaudit_nvlink_domains", "NVLink domains (GPUs joined by NVLink; a lone GPU is one).", keys)
    count.add_metric(node, float(len(report.domains)))
    yield count
    sizes = _gauge("topoaudit_nvlink_domain_size_gpus", "GPUs in each NVLink domain.", [*keys, "domain", "build"])
    for domain in report.domains:
        sizes.add_metric([*node, str(domain.id), domain.build], float(len(domain.gpus)))
    yield sizes
    largest = _gauge("topoaudit_nvlink_domain_size_max_gpus", "GPUs in the largest NVLink domain.", keys)
    largest.add_metric(node, float(max((len(d.gpus) for d in report.domains), default=0)))
    yield largest
    gpus = _gauge("topoaudit_gpus", "GPUs the audit saw.", keys)
    gpus.add_metric(node, float(len(report.machine.gpus)))
    yield gpus


def _links(report: Report, keys: list[str], node: list[str]) -> Iterator[Metric]:
    gpu_labels = {g.label for g in report.machine.gpus}
    pairs = Counter(
        link.level.name.lower() for link in report.machine.links if link.a in gpu_labels and link.b in gpu_labels
    )
    by_level = _gauge(
        "topoaudit_gpu_pairs", "GPU pairs by the path between them (nvlink, pix, pxb, phb, node, sys).", [*keys, "path"]
    )
    for level, count in sorted(pairs.items()):
        by_level.add_metric([*node, level], float(count))
    yield by_level


def _gpu_labels(gpu: Gpu) -> tuple[list[str], list[str]]:
    keys, values = ["gpu"], [str(gpu.index)]
    if not is_absent(gpu.uuid):
        keys.append("UUID")
        values.append(str(gpu.uuid))
    if not is_absent(gpu.pci_bus_id):
        keys.append("pci_bus_id")
        values.append(dcgm_bus_id(str(gpu.pci_bus_id)))
    return keys, values


def _gpus(report: Report, keys: list[str], node: list[str]) -> Iterator[Metric]:
    """Per-GPU series; families are split by label set, since a family's samples share their label keys."""
    peers: dict[str, list[int]] = {}  # GPU label -> bonded NVLinks to each GPU it reaches by NVLink
    gpu_names = {g.label for g in report.machine.gpus}
    for link in report.machine.links:
        if link.nvlinks and link.a in gpu_names and link.b in gpu_names:
            peers.setdefault(link.a, []).append(link.nvlinks)
            peers.setdefault(link.b, []).append(link.nvlinks)
    families: dict[tuple[str, tuple[str, ...]], GaugeMetricFamily | CounterMetricFamily] = {}

    def family(
        make: type[GaugeMetricFamily | CounterMetricFamily],
        name: str,
        doc: str,
        gpu_keys: list[str],
        extra: Sequence[str] = (),
    ) -> Any:
        label_keys = (*gpu_keys, *keys, *extra)
        if (name, label_keys) not in families:
            families[name, label_keys] = make(name, doc, labels=list(label_keys))
        return families[name, label_keys]

    for gpu in report.machine.gpus:
        gpu_keys, gpu_values = _gpu_labels(gpu)
        labels = [*gpu_values, *node]
        linked = peers.get(gpu.label, [])
        doc = "GPUs this GPU reaches over NVLink."
        family(GaugeMetricFamily, "topoaudit_gpu_nvlink_peers", doc, gpu_keys).add_metric(labels, float(len(linked)))
        if linked:
            doc = "The fewest bonded NVLinks between this GPU and any of its NVLink peers (a lost link lowers it)."
            weakest = family(GaugeMetricFamily, "topoaudit_gpu_nvlinks_min_per_peer", doc, gpu_keys)
            weakest.add_metric(labels, float(min(linked)))
        ports = gpu.nvlink_ports
        if not isinstance(ports, tuple):
            continue
        doc = "NVLink ports of this GPU in the active state."
        active = float(sum(p.state == "active" for p in ports))
        family(GaugeMetricFamily, "topoaudit_nvlink_active_links", doc, gpu_keys).add_metric(labels, active)
        doc = "NVLink ports of this GPU."
        family(GaugeMetricFamily, "topoaudit_nvlink_links", doc, gpu_keys).add_metric(labels, float(len(ports)))
        for counter in _ERROR_COUNTERS:
            value = _sum_counter(ports, counter)
            if value is None:
                continue
            doc = "NVLink error counters of this GPU, summed over its ports (replay, recovery, crc_flit, crc_data)."
            errors = family(CounterMetricFamily, "topoaudit_nvlink_errors", doc, gpu_keys, ("kind",))
            errors.add_metric([*labels, counter.removesuffix("_errors")], float(value))
    yield from families.values()


def _sum_counter(ports: tuple[NvLinkPort, ...], field_name: str) -> int | None:
    """The sum over the ports that report the counter; None when no port does."""
    values = [getattr(p, field_name) for p in ports]
    known = [v for v in values if isinstance(v, int)]
    return sum(known) if known else None


def _bench(report: Report, keys: list[str], node: list[str]) -> Iterator[Metric]:
    bench = report.bench
    if is_absent(bench):
        return
    from topoaudit.model.bench import BenchResult

    assert isinstance(bench, BenchResult)
    group_keys = [*keys, "group", "kind", "ranks"]
    plateau = _gauge(
        "topoaudit_allreduce_busbw_bytes_per_second",
        "Measured all-reduce bus bandwidth of each group, at its plateau (bytes per second).",
        [*group_keys, "size_bytes"],
    )
    expected = _gauge(
        "topoaudit_allreduce_expected_busbw_bytes_per_second",
        "The bus bandwidth this group should reach on this hardware (bytes per second).",
        group_keys,
    )
    ratio = _gauge(
        "topoaudit_allreduce_busbw_ratio", "Measured plateau over expected bus bandwidth (1 = as expected).", group_keys
    )
    wrong = CounterMetricFamily(
        "topoaudit_allreduce_wrong_elements",
        "Elements whose all-reduce result differed from the expected sum (any is data corruption).",
        labels=group_keys,
    )
    for group in bench.groups:
        labels = [*node, group.name, group.kind, _ranks(group.ranks)]
        if isinstance(group.plateau_busbw_gbps, float | int) and isinstance(group.plateau_size_bytes, int):
            plateau.add_metric([*labels, str(group.plateau_size_bytes)], float(group.plateau_busbw_gbps) * GB)
        if isinstance(group.expected_busbw_gbps, float | int):
            expected.add_metric(labels, float(group.expected_busbw_gbps) * GB)
        if isinstance(group.ratio, float | int):
            ratio.add_metric(labels, float(group.ratio))
        counted = [r.wrong for r in group.rows if isinstance(r.wrong, int)]
        if counted:
            wrong.add_metric(labels, float(sum(counted)))
    yield from (plateau, expected, ratio, wrong)


def _ranks(ranks: tuple[int, ...]) -> str:
    """``(0, 1, 2, 3, 6)`` -> ``0-3,6``: short and stable, so the label does not grow with the box."""
    spans: list[str] = []
    start = prev = None
    for rank in sorted(ranks):
        if prev is not None and rank == prev + 1:
            prev = rank
            continue
        if start is not None:
            spans.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = rank
    if start is not None:
        spans.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(spans)


def _timestamp(iso: str) -> float | None:
    """``2026-12-01T12:00:00+00:00`` -> Unix seconds; None when the report's time is unreadable."""
    try:
        stamp = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()
