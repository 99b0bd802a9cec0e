"""What the user said the box must be -- on the command line (``--expect-gpus``, ``--expect-domain``) or in
a policy -- against what it is. The one place ``expectation-not-met`` findings are made.

Bench expectations are read guarded: without bench results they are listed as not checked, never failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding
from topoaudit.model.machine import Machine, PathLevel
from topoaudit.model.report import AuditOptions
from topoaudit.model.topology import Domain, format_gpus
from topoaudit.model.values import NOT_SET, Probed, Unsupported, is_absent

if TYPE_CHECKING:  # a bench result comes with its own module; a pasted matrix never loads it
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.policy import BusbwExpectation, Policy
from topoaudit.rules.base import RuleContext, finding
from topoaudit.rules.codes import Code
from topoaudit.rules.registry import rule
from topoaudit.units import format_size


@dataclass(frozen=True)
class Expectations:
    """The expectations to check and who stated them (``policy`` names a policy; "" is the command line)."""

    policy: str = ""
    gpus: Probed[int] = NOT_SET
    gpu_models: tuple[str, ...] = ()
    domains: Probed[tuple[int, ...]] = NOT_SET
    min_domain: Probed[int] = NOT_SET
    nic_local: bool = False
    busbw: tuple[BusbwExpectation, ...] = ()
    busbw_catalog_floor: bool = False
    max_latency_us: Probed[float] = NOT_SET
    latency_group: str = "all"

    @classmethod
    def of_policy(cls, policy: Policy) -> Expectations:
        return cls(
            policy=policy.name,
            gpus=policy.gpus,
            gpu_models=policy.gpu_models,
            domains=policy.domains,
            min_domain=policy.min_domain,
            nic_local=policy.nic_local,
            busbw=policy.busbw,
            busbw_catalog_floor=policy.busbw_catalog_floor,
            max_latency_us=policy.max_latency_us,
            latency_group=policy.latency_group,
        )

    @classmethod
    def of_options(cls, options: AuditOptions) -> Expectations:
        return cls(gpus=options.expect_gpus, min_domain=options.expect_domain)


@dataclass(frozen=True)
class Checked:
    """Findings for the expectations that failed, and one line for each that held or could not be checked."""

    findings: tuple[Finding, ...]
    met: tuple[str, ...]
    not_checked: tuple[str, ...]


def check_expectations(
    want: Expectations,
    machine: Machine,
    domains: tuple[Domain, ...],
    spec: GpuSpec | None,
    bench: BenchResult | Unsupported,
) -> Checked:
    """Check every expectation ``want`` states against the machine, its domains, its model and the bench."""
    met: list[str] = []
    not_checked: list[str] = []
    found = tuple(_expectations(want, machine, domains, spec, bench, met, not_checked))
    return Checked(found, tuple(met), tuple(not_checked))


@rule(
    Code(
        "expectation-not-met",
        "fail",
        title="The machine does not match what was expected (--expect-gpus / --expect-domain, or a policy)",
        remedy="The instance is not the advertised shape: attach this report to a provider ticket.",
    ),
)
def stated_expectations(ctx: RuleContext) -> Iterable[Finding]:
    """Fail what the user said the box must be and it is not: ``--expect-gpus N``, ``--expect-domain N``.

    A policy states the same expectations and more (GPU models, domain sizes, NIC locality, busbw floors,
    latency); the policy step checks those, with the policy's name in each message.
    """
    return check_expectations(
        Expectations.of_options(ctx.options), ctx.machine, ctx.domains, ctx.spec, ctx.bench
    ).findings


def _expect(want: Expectations, message: str, **evidence: Any) -> Finding:
    if want.policy:
        return finding("expectation-not-met", f"Policy '{want.policy}': {message}", policy=want.policy, **evidence)
    return finding("expectation-not-met", message[:1].upper() + message[1:], **evidence)


def _expectations(
    want: Expectations,
    machine: Machine,
    domains: tuple[Domain, ...],
    spec: GpuSpec | None,
    bench: BenchResult | Unsupported,
    met: list[str],
    not_checked: list[str],
) -> Iterable[Finding]:
    count = len(machine.gpus)
    if not is_absent(want.gpus):
        if count != want.gpus:
            yield _expect(want, f"expected {want.gpus} GPUs, found {count}.", expected_gpus=want.gpus, found_gpus=count)
        else:
            met.append(f"{count} GPUs")
    if want.gpu_models:
        if spec is None or spec.key not in want.gpu_models:
            found = spec.key if spec else (machine.gpu_model or "unknown")
            yield _expect(
                want,
                f"expected a GPU model in {', '.join(want.gpu_models)}, found {found}.",
                expected_models=list(want.gpu_models),
                found_model=found,
            )
        else:
            met.append(f"GPU model {spec.key}")
    sizes = tuple(sorted((d.size for d in domains if d.size >= 2), reverse=True))
    if isinstance(want.domains, tuple):
        if sizes != want.domains:
            yield _expect(
                want,
                f"expected NVLink domains of {_sizes(want.domains)}, found {_sizes(sizes) or 'none'}.",
                expected_domains=list(want.domains),
                found_domains=[list(d.gpus) for d in domains if d.size >= 2],
            )
        else:
            met.append(f"NVLink domains {_sizes(sizes)}")
    if isinstance(want.min_domain, int):
        largest = max((d.size for d in domains), default=0)
        if largest < want.min_domain:
            yield _expect(
                want,
                f"expected an NVLink domain of at least {want.min_domain} GPUs, the largest has {largest} "
                f"({' '.join(format_gpus(d.gpus) for d in domains if d.size >= 2) or 'no NVLink'}).",
                expected_min_domain=want.min_domain,
                largest_domain=largest,
                domains=[list(d.gpus) for d in domains],
            )
        else:
            met.append(f"largest NVLink domain {largest} >= {want.min_domain}")
    if want.nic_local:
        yield from _nic_local(want, machine, met, not_checked)
    yield from _bench_expectations(want, spec, bench, met, not_checked)


def _sizes(sizes: tuple[int, ...]) -> str:
    return " + ".join(map(str, sizes))


def _nic_local(want: Expectations, machine: Machine, met: list[str], not_checked: list[str]) -> Iterable[Finding]:
    if not machine.nics:
        not_checked.append("NIC locality: the input names no NIC")
        return
    far = []
    for gpu in machine.gpus:
        levels = [lk.level for nic in machine.nics if (lk := machine.link(gpu.label, nic.label)) is not None]
        if not levels or min(levels) > PathLevel.PXB:
            far.append(gpu.index)
    if far:
        yield _expect(
            want,
            f"expected a NIC at PIX/PXB for every GPU; GPUs {','.join(map(str, far))} have none.",
            gpus=far,
        )
    else:
        met.append("every GPU has a NIC at PIX/PXB")


def _bench_expectations(
    want: Expectations,
    spec: GpuSpec | None,
    bench: BenchResult | Unsupported,
    met: list[str],
    not_checked: list[str],
) -> Iterable[Finding]:
    wanted = list(want.busbw)
    if want.busbw_catalog_floor:
        from topoaudit.model.policy import BusbwExpectation

        wanted.append(BusbwExpectation("all", -1.0))  # resolved below from the catalog
    if not wanted and is_absent(want.max_latency_us):
        return
    if isinstance(bench, Unsupported):  # read guarded: no bench run (or a report from an older topoaudit)
        not_checked.extend(f"{_describe(w)}: no bench results" for w in wanted)
        if not is_absent(want.max_latency_us):
            not_checked.append(f"latency of {want.latency_group} <= {want.max_latency_us:g} us: no bench results")
        return
    for busbw in wanted:
        groups = [g for g in bench.groups if busbw.group in (g.name, g.kind)]
        if not groups:
            not_checked.append(f"{_describe(busbw)}: the bench has no group {busbw.group!r}")
            continue
        for group in groups:
            floor = busbw.min_gbps
            basis = "policy" if want.policy else "expected"
            if floor < 0:
                band = spec.band(len(group.ranks)) if spec else None
                if band is None:
                    not_checked.append(f"busbw of {group.name}: the catalog has no figure for {len(group.ranks)} GPUs")
                    continue
                floor, basis = band.min_gbps, f"catalog {spec.key if spec else ''} {band.algo} floor"
            value, at = _busbw_at(group, busbw.size_bytes)
            label = f"busbw of {group.name}" + (f" at {format_size(busbw.size_bytes)}" if busbw.size_bytes else "")
            if value is None:
                not_checked.append(f"{label}: not measured{' at that size' if busbw.size_bytes else ''}")
            elif value < floor:
                yield _expect(
                    want,
                    f"{label} is {value:g} GB/s, below the {floor:g} GB/s required ({basis}).",
                    group=group.name,
                    busbw_gbps=value,
                    min_gbps=floor,
                    size_bytes=at,
                )
            else:
                met.append(f"{label} {value:g} >= {floor:g} GB/s")
    limit = want.max_latency_us
    if isinstance(limit, float):
        chosen = next((g for g in bench.groups if want.latency_group in (g.name, g.kind)), None)
        latency = chosen.latency_p50_us if chosen is not None else None
        if chosen is None or not isinstance(latency, (int, float)):
            not_checked.append(f"latency of {want.latency_group}: not measured")
        elif latency > limit:
            yield _expect(
                want,
                f"small-message latency of {chosen.name} is {latency:g} us, above the {limit:g} us allowed.",
                group=chosen.name,
                latency_p50_us=latency,
                max_latency_us=limit,
            )
        else:
            met.append(f"latency of {chosen.name} {latency:g} <= {limit:g} us")


def _busbw_at(group: Any, size: int) -> tuple[float | None, int]:
    if size == 0:
        plateau = group.plateau_busbw_gbps
        at = group.plateau_size_bytes
        return (plateau, at if isinstance(at, int) else 0) if isinstance(plateau, (int, float)) else (None, 0)
    row = next((r for r in group.rows if r.size_bytes == size), None)
    return (row.busbw_gbps, size) if row is not None else (None, size)


def _describe(want: BusbwExpectation) -> str:
    floor = "the catalog floor" if want.min_gbps < 0 else f"{want.min_gbps:g} GB/s"
    return f"busbw of {want.group} >= {floor}" + (f" at {format_size(want.size_bytes)}" if want.size_bytes else "")
