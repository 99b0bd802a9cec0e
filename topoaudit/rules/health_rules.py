"""Rules over pasted health-checker and kernel lines: Azure NHC's and DCGM's failed checks, the driver's Xid lines.

A line the signature catalog names with a more precise code (NHC's ``check_gpu_bw`` is a slow GPU pair, an IOMMU
page fault blocks peer access, an NVSwitch SXid is the fabric's) is left to that code
(:mod:`topoaudit.rules.signature_rules`); the rest are said here, each check or Xid with the GPU it names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding, Severity
from topoaudit.model.health import HealthEvent
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import RuleContext, as_sentence, finding, first_few
from topoaudit.rules.needs import HEALTH_LINES
from topoaudit.rules.registry import rule

KERNEL = "kernel-gpu-error"
CHECK = "health-check-failed"
OWN = frozenset({KERNEL, CHECK})


def _events(ctx: RuleContext) -> tuple[HealthEvent, ...]:
    events = ctx.health
    assert not isinstance(events, Unsupported)  # the rule needs HEALTH_LINES
    return events


def _named_elsewhere(ctx: RuleContext) -> dict[int, set[str]]:
    """Return the codes the signature catalog names, by line (its fallbacks name no meaning: the line stays ours)."""
    hits = ctx.signatures
    if isinstance(hits, Unsupported) or not hits:
        return {}
    from topoaudit.parse.signatures import catalog

    cat = catalog()
    codes: dict[int, set[str]] = {}
    for hit in hits:
        signature = cat.get(hit.signature)
        if signature.tier != "fallback":
            codes.setdefault(hit.line, set()).add(signature.code)
    return codes


@rule(KERNEL, CHECK, needs=(HEALTH_LINES,))
def health_lines(ctx: RuleContext) -> Iterable[Finding]:
    """Report the failures NHC, DCGM and the kernel log show, by GPU.

    Xid lines, "fallen off the bus" and failed driver initialisation are ``kernel-gpu-error`` with what each Xid
    means; a failed NHC or DCGM check is ``health-check-failed`` naming the check and the GPU. An NVLink check on a
    card whose NVLink comes from an optional bridge (A100 PCIe, H100 NVL) is a warning, and on a card with no
    NVLink at all only informational: the links it reports down may not exist.
    """
    named = _named_elsewhere(ctx)
    kernel: list[HealthEvent] = []
    checks: list[HealthEvent] = []
    for event in _events(ctx):
        codes = named.get(event.line, set())
        if event.severity == Severity.INFO or codes - OWN:
            continue  # a pass, or a line a more precise code names
        own = codes & OWN
        code = own.pop() if len(own) == 1 else KERNEL if event.source == "kernel" else CHECK
        (kernel if code == KERNEL else checks).append(event)
    if kernel:
        yield _kernel_finding(kernel)
    if checks:
        yield _check_finding(checks, ctx.spec)


def _who(event: HealthEvent) -> str:
    if event.source == "kubernetes":
        return "the node"
    if isinstance(event.gpu, int):
        return f"GPU {event.gpu}"
    if isinstance(event.pci_bus_id, str):
        return event.pci_bus_id
    return "a GPU the line does not name"


def _kernel_finding(events: Sequence[HealthEvent]) -> Finding:
    by_gpu: dict[str, list[str]] = {}
    for e in events:
        label = f"{e.check} ({e.meaning.rstrip('.')})" if e.meaning else e.check
        if label not in by_gpu.setdefault(_who(e), []):
            by_gpu[_who(e)].append(label)
    worst = max((e.severity for e in events), key=lambda s: s.rank)
    return finding(
        KERNEL,
        f"The kernel log has {len(events)} GPU error line(s): "
        + "; ".join(f"{who}: {', '.join(labels)}" for who, labels in sorted(by_gpu.items()))
        + f" (first on line {events[0].line}).",
        severity=worst,
        gpus=by_gpu,
        lines=[{"line": e.line, "check": e.check, "pci_bus_id": str(e.pci_bus_id)} for e in events[:20]],
        causes=[c for c in dict.fromkeys(e.cause for e in events if e.severity == worst) if c and c != "other"],
    )


def _nvlink_check(event: HealthEvent) -> bool:
    return "nvlink" in f"{event.check} {event.text}".lower()


def _check_severity(event: HealthEvent, spec: GpuSpec | None) -> tuple[Severity, str]:
    """Return the check's severity on this box, and why it is lowered ("" when it is not)."""
    if event.of_the_host_only and event.severity != Severity.INFO:
        return Severity.INFO, f"the check is of the host ({event.check}), not of its GPUs or their links"
    if spec is None or not _nvlink_check(event) or event.severity == Severity.INFO:
        return event.severity, ""
    if spec.nvlink_generation == 0:
        return Severity.INFO, f"{spec.name} has no NVLink, so an NVLink check reports links that do not exist"
    if spec.build == "bridge":
        why = f"{spec.name} has NVLink only through a bridge; without one fitted the links are down by design"
        return Severity.WARN, why
    return event.severity, ""


def _check_finding(events: Sequence[HealthEvent], spec: GpuSpec | None) -> Finding:
    judged = [(e, *_check_severity(e, spec)) for e in events]
    worst = max((s for _, s, _ in judged), key=lambda s: s.rank)
    failed = []
    for e, _, _ in judged:
        links = f" (links {', '.join(map(str, e.links))})" if e.links else ""
        what = f"{e.source.upper()} {e.check} on {_who(e)}{links}"
        if what not in failed:
            failed.append(what)
    detail = next((e.text for e, _, _ in judged if e.text), "")
    meaning = next((e.meaning for e, _, _ in judged if e.meaning), "")
    lowered = next((why for _, _, why in judged if why), "")
    message = f"{len(failed)} health check(s) failed: {first_few(failed, 4, '; ')} (first on line {events[0].line})"
    if detail:
        message += f": {detail!r}"
    if meaning:
        message += f". {as_sentence(meaning)}"
    if lowered:
        message += f". {as_sentence(lowered)}"
    return finding(
        CHECK,
        as_sentence(message),
        severity=worst,
        checks=[{"line": e.line, "source": e.source, "check": e.check, "gpu": _who(e)} for e in events[:20]],
        causes=[c for c in dict.fromkeys(e.cause for e, s, _ in judged if s == worst) if c and c != "other"],
    )
