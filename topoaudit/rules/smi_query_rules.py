"""Rules over a pasted ``nvidia-smi -q`` (whole, or its Fabric block): the NVLink fabric each GPU reports.

On an NVSwitch system every GPU registers with the fabric the fabric manager sets up: ``State`` Completed and
``Status`` Success, then a ``Health`` summary. The same codes the live probe raises from NVML's fabric info are
raised here from the text, with the platform's remedy (the fabric manager, and on Blackwell its NVLink subnet
manager; on an NVL rack's tray, the rack's operator).
"""

from __future__ import annotations

from collections.abc import Iterable

from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.model.finding import Finding, Severity
from topoaudit.model.smi_query import FabricInfo, SmiGpu, SmiQuery
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import RuleContext, finding, first_few
from topoaudit.rules.needs import SMI_QUERY
from topoaudit.rules.probe_rules import fabric_manager_commands, with_fabric_remedy
from topoaudit.rules.registry import rule

_HEALTHY = "Healthy"
_LIMITED = "Limited Capacity"


def _query(ctx: RuleContext) -> SmiQuery:
    query = ctx.smi_query
    assert not isinstance(query, Unsupported)  # the rule needs SMI_QUERY
    return query


def _spec(ctx: RuleContext, query: SmiQuery) -> GpuSpec | None:
    """Return the GPU model judged against: ``--gpu-model`` or the box's, else the product name pasted."""
    if ctx.spec is not None:
        return ctx.spec
    names = {g.product_name for g in query.gpus if isinstance(g.product_name, str)}
    return find_gpu(next(iter(names))) if len(names) == 1 else None


def _on_fabric(query: SmiQuery, spec: GpuSpec | None) -> list[tuple[SmiGpu, FabricInfo]]:
    """Select the GPUs whose Fabric block the paste shows, when the box has an NVLink fabric to register with.

    A GPU without one prints N/A (read as absent); a known model that is not built on NVSwitches is not judged.
    """
    if spec is not None and spec.build != "nvswitch":
        return []
    return [(g, g.fabric) for g in query.gpus if isinstance(g.fabric, FabricInfo) and isinstance(g.fabric.state, str)]


@rule("fabric-not-ready", "fabric-unhealthy", needs=(SMI_QUERY,))
def pasted_fabric(ctx: RuleContext) -> Iterable[Finding]:
    """Judge the fabric state, status and health a pasted ``nvidia-smi -q`` shows for each GPU.

    A state other than Completed, or a status other than Success, is ``fabric-not-ready`` (CUDA then fails with
    "system not yet initialized"); a health summary other than Healthy, degraded bandwidth, an unhealthy route, a
    route or access-timeout recovery, or an incorrect configuration is ``fabric-unhealthy`` (limited capacity
    alone warns).
    """
    query = _query(ctx)
    spec = _spec(ctx, query)
    gpus = _on_fabric(query, spec)
    if not gpus:
        return
    not_ready = {g.label: why for g, f in gpus if (why := _registration(f))}
    if not_ready:
        states = sorted(set(not_ready.values()))
        yield with_fabric_remedy(
            finding(
                "fabric-not-ready",
                f"{len(not_ready)} of {len(gpus)} GPU(s) the paste shows are not registered with the NVSwitch fabric "
                f"({'; '.join(states)}): CUDA fails with 'system not yet initialized' (error 802) until the fabric "
                "manager has set the fabric up.",
                gpus=not_ready,
                lines=[g.line for g, _ in gpus if g.label in not_ready],
                excerpt=query.excerpt,
            ),
            spec,
            fabric_manager_commands(spec),
        )
    unhealthy = {g.label: problems for g, f in gpus if (problems := _health_problems(f))}
    if unhealthy:
        severity = Severity.WARN if all(p == [f"summary {_LIMITED}"] for p in unhealthy.values()) else Severity.FAIL
        yield finding(
            "fabric-unhealthy",
            f"{len(unhealthy)} GPU(s) report NVLink fabric problems: "
            + first_few([f"{g}: {', '.join(p)}" for g, p in sorted(unhealthy.items())], 6, "; ")
            + ".",
            severity=severity,
            gpus=unhealthy,
            lines=[g.line for g, f in gpus if g.label in unhealthy],
        )


def _registration(fabric: FabricInfo) -> str:
    """Why the GPU is not registered with the fabric ("" when it is, or when the paste does not say)."""
    if fabric.state != "Completed":
        return f"state {fabric.state}"
    if isinstance(fabric.status, str) and fabric.status != "Success":
        return f"state Completed, status {fabric.status}"
    return ""


def _health_problems(fabric: FabricInfo) -> list[str]:
    """List what the Health block says is wrong ([] when it is healthy or not shown)."""
    problems = []
    if isinstance(fabric.health_summary, str) and fabric.health_summary != _HEALTHY:
        problems.append(f"summary {fabric.health_summary}")
    if isinstance(fabric.health_bandwidth, str) and fabric.health_bandwidth not in ("Full", "N/A"):
        problems.append(f"bandwidth {fabric.health_bandwidth}")
    for flag, what in (
        (fabric.route_unhealthy, "route unhealthy"),
        (fabric.route_recovery_in_progress, "route recovery in progress"),
        (fabric.access_timeout_recovery, "access-timeout recovery"),
    ):
        if flag is True:
            problems.append(what)
    if isinstance(fabric.incorrect_configuration, str) and fabric.incorrect_configuration not in ("None", "none"):
        problems.append(f"incorrect configuration: {fabric.incorrect_configuration}")
    return problems


@rule("pcie-link-degraded", needs=(SMI_QUERY,))
def pasted_pcie_link(ctx: RuleContext) -> Iterable[Finding]:
    """Judge the PCIe link each GPU of a pasted ``nvidia-smi -q`` reports (its GPU Link Info).

    A link narrower than the GPU's maximum halves (or worse) every copy to and from it, idle or not: warn. A lower
    generation alone is how an idle GPU saves power (info): the paste does not say whether the GPU was busy.
    """
    narrow: list[str] = []
    slow: list[str] = []
    lines: list[int] = []
    for gpu in _query(ctx).gpus:
        link = gpu.pcie
        if isinstance(link, Unsupported):
            continue
        width, width_max = link.width_current, link.width_max
        gen, gen_max = link.generation_current, link.generation_max
        if isinstance(width, int) and isinstance(width_max, int) and width < width_max:
            narrow.append(f"{gpu.label} x{width} of x{width_max}")
            lines.append(gpu.line)
        elif isinstance(gen, int) and isinstance(gen_max, int) and gen < gen_max:
            slow.append(f"{gpu.label} Gen{gen} of Gen{gen_max}")
            lines.append(gpu.line)
    if not (narrow or slow):
        return
    parts = []
    if narrow:
        parts.append(f"{len(narrow)} GPU(s) run a narrower PCIe link than they support ({first_few(narrow, 4)})")
    if slow:
        parts.append(
            f"{len(slow)} GPU(s) run a lower PCIe generation ({first_few(slow, 4)}), which an idle GPU does to save "
            "power: read it again under load"
        )
    yield finding(
        "pcie-link-degraded",
        "; ".join(parts) + ".",
        severity=Severity.WARN if narrow else Severity.INFO,
        narrow=narrow,
        slower_generation=slow,
        lines=lines,
    )


@rule("gpu-hardware-error", needs=(SMI_QUERY,))
def pasted_remapped_rows(ctx: RuleContext) -> Iterable[Finding]:
    """Judge the Remapped Rows block each GPU of a pasted ``nvidia-smi -q`` reports (A100 and later).

    A row remap after an uncorrectable ECC error takes effect at the next GPU reset: until then the GPU runs with
    memory it knows is bad and the next access to it fails the job (warn: reset it before trusting it). A remap that
    failed found no spare row in its bank: the GPU is to be replaced (fail). NVIDIA's GPU memory error management
    guide, "Row Remapping".
    """
    failed: list[str] = []
    pending: list[str] = []
    lines: list[int] = []
    for gpu in _query(ctx).gpus:
        rows = gpu.remapped_rows
        if isinstance(rows, Unsupported):
            continue
        errors = (
            f", {rows.uncorrectable} row(s) with uncorrectable errors" if isinstance(rows.uncorrectable, int) else ""
        )
        if rows.failure_occurred is True:
            failed.append(gpu.label + errors)
            lines.append(gpu.line)
        elif rows.pending is True:
            pending.append(gpu.label + errors)
            lines.append(gpu.line)
    if failed:
        yield finding(
            "gpu-hardware-error",
            f"Row remapping failed on {len(failed)} GPU(s): {first_few(failed, 4)}. A memory bank has no spare row "
            "left for a row with uncorrectable errors, so the GPU is to be replaced.",
            severity=Severity.FAIL,
            remap_failed=failed,
            remap_pending=pending,
            lines=lines,
        )
    elif pending:
        yield finding(
            "gpu-hardware-error",
            f"{len(pending)} GPU(s) have a row remap pending: {first_few(pending, 4)}. The remap of memory rows with "
            "uncorrectable errors takes effect at the next GPU reset, and until then the GPU runs with rows it knows "
            "are bad: reset it (`nvidia-smi -r`, or reboot) before trusting it with a job.",
            severity=Severity.WARN,
            remap_pending=pending,
            lines=lines,
        )
