"""The cost of crossing, in the user's terms: what a TP group's all-reduces cost per decode step, inside one NVLink
domain and across the box's split or the network between machines, and the ceiling that puts on tokens per second.

Tensor parallelism all-reduces each layer's output twice, once after attention and once after the MLP
(:data:`ALLREDUCES_PER_LAYER`); in a decode step each all-reduce carries one activation vector per sequence,
``batch x hidden x 2`` bytes. One all-reduce takes NCCL's latency plus the message at the large-message bandwidth:
measured where a run of the box (a bench, a pasted nccl-tests run) has a row at or around that size, else NCCL's
latency model (:mod:`topoaudit.model.nccl_latency`) and the bandwidth oracle's figure. No NCCL protocol has both
the lowest latency and the highest bandwidth, so the modelled time is a floor and the tokens per second a ceiling:
from communication alone, before compute, memory bandwidth, the KV cache and scheduling. Prefill moves a prompt's
activations in large messages: it is bandwidth-bound, timed at the large-message figure.

Pure: the oracle is handed in (the planner sits below the bench in the layers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topoaudit.catalog.machines import reference_machine
from topoaudit.model.nccl_bandwidth import pci_gbps
from topoaudit.model.nccl_latency import allreduce_latency
from topoaudit.model.network import NicSet
from topoaudit.model.plan import AllReducePath, CommCost, DomainFit, MachineDomains, ModelShape
from topoaudit.model.values import Unsupported
from topoaudit.units import format_size

if TYPE_CHECKING:
    from topoaudit.catalog import GpuSpec
    from topoaudit.catalog.machines import MachineSpec
    from topoaudit.model.bench import BenchGroup, BenchResult

ALLREDUCES_PER_LAYER = 2
"""Megatron-LM's tensor parallelism all-reduces twice per transformer layer in the forward pass, after the
attention block and after the MLP (Shoeybi et al. 2019, "Megatron-LM", section 3); vLLM and SGLang split layers the
same way."""

ACTIVATION_BYTES = 2
"""The all-reduce carries the activations in the compute dtype, bf16 (2 bytes), whatever the weights' precision:
an NVFP4 or FP8 checkpoint still all-reduces bf16 hidden states."""

CEILING = (
    "ceilings from communication alone: compute, memory bandwidth, the KV cache and scheduling are not counted, "
    "and speculative decoding (MTP) can accept more than one token per sequence per step"
)

SOURCES = (
    "sources: latency, NCCL's own model (src/graph/tuning.cc@v2.30.7-1 baseLat and hwLat, LL protocol); "
    "bandwidth, the oracle (docs/bandwidth.md) or the run's rows; 2 all-reduces "
    "per layer, Megatron-LM's tensor parallelism (Shoeybi et al. 2019); the report's JSON has each figure's source "
    "in full"
)

Oracle = Callable[..., Any]
"""``bench.oracle.expected_busbw``, handed in by the pipeline."""


@dataclass(frozen=True)
class Links:
    """What the all-reduces are timed from: the bandwidth oracle, a measured run of the box, the NICs it names."""

    oracle: Oracle | None = None
    measured: BenchResult | None = None
    network: NicSet | None = None  # --nics, or NCCL's NET/IB lines


@dataclass(frozen=True)
class _Path:
    """A path before it is timed: where it runs, its shape, and its model figures (or why it has none)."""

    kind: str
    where: str
    ranks: int
    nodes: int
    latency_us: float
    latency_how: str
    latency_short: str
    busbw: float | Unsupported
    busbw_how: str
    busbw_short: str


def communication_cost(
    shape: ModelShape,
    tp: int,
    card: GpuSpec,
    *,
    inside_label: str,
    checked: DomainFit,
    machine: MachineSpec | None,
    audited: MachineDomains | None,
    links: Links,
) -> CommCost:
    """The all-reduce cost of a TP group of ``tp`` GPUs of ``card`` per decode step, inside one NVLink domain (of
    ``inside_label``) and across the split or network the plan's group crosses.

    ``machine`` is the catalog machine the plan was sized on (a DGX Station: the group crosses machines over its
    NICs), ``audited`` the box it was checked against (its domains and the hop between them).
    """
    message = shape.batch * shape.hidden * ACTIVATION_BYTES
    per_step = ALLREDUCES_PER_LAYER * shape.layers
    if tp < 2:
        why = Unsupported("plan", "TP1: one GPU, no all-reduce")
        return CommCost(shape, tp, per_step, message, ACTIVATION_BYTES, why, why, ())
    measured_group, measured_across, not_measured = _measured(links.measured, tp, checked)
    paths: dict[str, AllReducePath | Unsupported] = {}
    for kind, path in (
        ("inside", _inside(card, tp, inside_label, links)),
        ("across", _across(card, tp, checked, machine, audited, links)),
    ):
        group = measured_group if measured_group is not None and measured_across == (kind == "across") else None
        paths[kind] = _timed(path, shape, message, per_step, group, not_measured)
    lines = _lines(shape, tp, message, per_step, paths["inside"], paths["across"], checked)
    return CommCost(shape, tp, per_step, message, ACTIVATION_BYTES, paths["inside"], paths["across"], lines)


# --- the paths ----------------------------------------------------------------------------------------------


def _inside(card: GpuSpec, tp: int, label: str, links: Links) -> _Path | Unsupported:
    """The group inside one NVLink domain of the card's standard build: NVLink latency, the oracle's figure."""
    if tp > max(1, card.domain_size) or card.build == "pcie":
        return Unsupported("plan", f"no NVLink domain of {card.name} holds {tp} GPUs")
    latency = allreduce_latency(tp, 1, "NVLINK")
    busbw, how, short = _oracle(links, card, tp)
    where = f"inside one NVLink domain ({tp} GPUs of the {label})"
    return _Path("inside", where, tp, 1, latency.us, latency.describe(), latency.short(), busbw, how, short)


def _across(
    card: GpuSpec,
    tp: int,
    checked: DomainFit,
    machine: MachineSpec | None,
    audited: MachineDomains | None,
    links: Links,
) -> _Path | Unsupported:
    """The group across what it crosses: the network between machines, or the hop between the box's domains."""
    if checked.fits_one_domain:
        return Unsupported("plan", f"TP{tp} stays inside one NVLink domain: nothing crosses")
    if checked.kind == "machine" and audited is not None and checked.fits_machine:
        return _across_domains(card, tp, audited)
    per_machine = machine.gpus if machine is not None else max(1, card.node_gpus)
    if machine is not None and machine.spans_machines and tp <= machine.domain_gpus:
        return Unsupported("plan", f"TP{tp} stays inside the {machine.domain_gpus}-GPU NVLink domain")
    nodes = math.ceil(tp / per_machine)
    if tp % nodes:
        return Unsupported("plan", f"TP{tp} does not split evenly over {nodes} machines of {per_machine} GPUs")
    per_node = tp // nodes
    network = links.network
    if network is None and machine is not None:
        network = NicSet(machine.nics, machine.nic_gbits, machine.link_layer, f"catalog: {machine.name}")
    latency = allreduce_latency(tp, nodes, "NVLINK")
    node_card = machine.card() if machine is not None else card
    busbw, how, short = _oracle(links, node_card, per_node, nodes=nodes, nics=network, algorithm="ring")
    if machine is not None and links.network is None and how:
        how += f"; the {machine.name}'s NICs: {machine.source_of('nics')}; their rate: {machine.source_of('nic_gbits')}"
    if machine is not None:
        over = machine.network if links.network is None else f"{machine.link} ({links.network.describe()})"
        where = f"across {nodes} {machine.name} over {over}"
    else:
        where = f"across {nodes} nodes of {per_node} over the network ({_nics_text(network, card)})"
    return _Path("across", where, tp, nodes, latency.us, latency.describe(), latency.short(), busbw, how, short)


def _nics_text(network: NicSet | None, card: GpuSpec) -> str:
    """The NICs a figure across nodes rests on: given or read, else the reference node's, assumed."""
    if network is not None:
        return network.describe()
    node = reference_machine(card.key)
    if node is None:
        return "NICs not named"
    layer = f" {node.link_layer}" if node.link_layer else ""
    return f"{node.nics}x {node.nic_gbits:g}G{layer} assumed: {node.name}; pass --nics to name yours"


def _across_domains(card: GpuSpec, tp: int, audited: MachineDomains) -> _Path:
    """The group across the audited box's NVLink domains: a ring's slowest hop is the PCIe path between them."""
    hop = audited.crossing or "PCIe"
    latency = allreduce_latency(tp, 1, "PCI")
    gen = {3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}.get(card.pcie_generation)
    busbw = pci_gbps(gen, card.pcie_width)
    how = (
        f"NCCL's PCIe figure for Gen{card.pcie_generation or 3} x{card.pcie_width}, {busbw:g} GB/s "
        "(src/graph/topo.cc: width x per-lane / 80): a ring's slowest hop, the path between the domains"
    )
    where = f"across the NVLink domains of {audited.label} over {hop}"
    short = f"{busbw:g} GB/s, NCCL's PCIe figure"
    return _Path("across", where, tp, 1, latency.us, latency.describe(), latency.short(), busbw, how, short)


def _oracle(links: Links, card: GpuSpec, gpus: int, **kw: Any) -> tuple[float | Unsupported, str, str]:
    """The oracle's busbw for the shape, where it comes from in full, and in a few words."""
    if links.oracle is None:
        return Unsupported("plan", "no bandwidth figure was handed to the planner"), "", ""
    figure = links.oracle(card, gpus, **kw)
    if isinstance(figure, Unsupported):
        return figure, "", ""
    said = "".join(f"; {a}" for a in figure.assumptions)
    short = f"{figure.busbw_gbps:g} GB/s, the oracle's {figure.algorithm} figure ({figure.kind})"
    return float(figure.busbw_gbps), f"the oracle's {figure.describe()}{said}", short


# --- measured rows ------------------------------------------------------------------------------------------


def _measured(result: BenchResult | None, tp: int, checked: DomainFit) -> tuple[BenchGroup | None, bool, str]:
    """The run's group of ``tp`` ranks, whether it crossed (hosts, or the box's split), or why none is used."""
    if result is None:
        return None, False, ""
    groups = [g for g in result.groups if len(g.ranks) == tp and g.rows]
    if not groups:
        sizes = sorted({len(g.ranks) for g in result.groups})
        return None, False, f"the run measured {'/'.join(map(str, sizes)) or 'no'} ranks, not TP{tp}"
    group = next((g for g in groups if g.name == "all"), groups[0])
    hosts = {r.host for r in result.ranks if r.rank in group.ranks}
    return group, len(hosts) > 1 or not checked.fits_one_domain, ""


def _time_at(group: BenchGroup, size: int) -> tuple[float, str] | None:
    """The measured time of one all-reduce of ``size`` bytes: the row at that size, or between the two around it."""
    rows = sorted((r for r in group.rows if r.time_us > 0), key=lambda r: r.size_bytes)
    below = [r for r in rows if r.size_bytes <= size]
    above = [r for r in rows if r.size_bytes >= size]
    if not below or not above:
        return None
    lo, hi = below[-1], above[0]
    if lo.size_bytes == hi.size_bytes:
        return lo.time_us, f"the row at {format_size(lo.size_bytes)}: {lo.time_us:g} us"
    share = (size - lo.size_bytes) / (hi.size_bytes - lo.size_bytes)
    time = lo.time_us + share * (hi.time_us - lo.time_us)
    return time, (
        f"between the rows at {format_size(lo.size_bytes)} ({lo.time_us:g} us) and {format_size(hi.size_bytes)} "
        f"({hi.time_us:g} us)"
    )


# --- timing ------------------------------------------------------------------------------------------------


def _timed(
    path: _Path | Unsupported,
    shape: ModelShape,
    message: int,
    per_step: int,
    group: BenchGroup | None,
    not_measured: str,
) -> AllReducePath | Unsupported:
    if isinstance(path, Unsupported):
        return path
    n = path.ranks
    to_algbw = n / (2 * (n - 1))  # nccl-tests: busbw = algbw x 2(n-1)/n for all-reduce
    measured = _time_at(group, message) if group is not None else None
    plateau = group.plateau_busbw_gbps if group is not None else None
    if measured is not None and isinstance(plateau, float) and group is not None:
        time_us, how = measured
        busbw = plateau
        basis = f"measured: group {group.name} of the run, {how}; large-message plateau {busbw:g} GB/s busbw"
        summary = f"measured on this box, {how}"
        latency: float | Unsupported = Unsupported("plan", "measured: the time includes it")
        timed_from = "measured"
    else:
        if isinstance(path.busbw, Unsupported):
            return Unsupported("plan", f"{path.where}: {path.busbw.reason}")
        busbw = path.busbw
        time_us = path.latency_us + message / (busbw * to_algbw * 1e9) * 1e6
        why = f" ({not_measured})" if not_measured else ""
        if group is not None and measured is None:
            why = f" (the run has no rows around {format_size(message)})"
        basis = (
            f"modelled{why}: latency {path.latency_how}, plus {format_size(message)} at {busbw:g} GB/s busbw, "
            f"{path.busbw_how}"
        )
        summary = f"{path.latency_short} + {format_size(message)} at {path.busbw_short}"
        latency, timed_from = path.latency_us, "model"
    step_ms = per_step * time_us / 1000
    per_sequence = 1000 / step_ms
    prefill = busbw * to_algbw * 1e9 / (per_step * shape.hidden * ACTIVATION_BYTES)
    return AllReducePath(
        kind=path.kind,
        where=path.where,
        ranks=n,
        nodes=path.nodes,
        allreduce_us=round(time_us, 2),
        timed_from=timed_from,
        latency_us=latency,
        busbw_gbps=round(busbw, 2),
        basis=basis,
        summary=summary,
        step_ms=round(step_ms, 3),
        tokens_per_s_per_sequence=round(per_sequence, 1),
        tokens_per_s=round(per_sequence * shape.batch, 1),
        prefill_tokens_per_s=round(prefill),
    )


# --- what the plan prints -------------------------------------------------------------------------------------


def _lines(
    shape: ModelShape,
    tp: int,
    message: int,
    per_step: int,
    inside: AllReducePath | Unsupported,
    across: AllReducePath | Unsupported,
    checked: DomainFit,
) -> tuple[str, ...]:
    out = [
        f"all-reduce per decode step: {ALLREDUCES_PER_LAYER} per layer x {shape.layers} layers = {per_step}, each "
        f"batch {shape.batch} x hidden {shape.hidden:,} x {ACTIVATION_BYTES} B (bf16 activations) = {message:,} B "
        f"({format_size(message)})"
    ]
    for path in (inside, across):
        if isinstance(path, AllReducePath):
            out.append(
                f"{path.where}: one all-reduce {path.allreduce_us:g} us ({path.summary}), so {path.step_ms:g} ms of "
                f"all-reduce per decode step: at most {_rate(path.tokens_per_s_per_sequence)} tokens/s per sequence, "
                f"{_rate(path.tokens_per_s)} tokens/s at batch {shape.batch}"
            )
    if isinstance(across, AllReducePath):
        subject = across.where.split(" over ")[0]
        if checked.kind == "machine" and checked.fits_machine:
            subject = (
                f"on this box runs its all-reduces across its NVLink domains over {across.where.split(' over ')[-1]}"
            )
        said = f"TP{tp} {subject}: at batch {shape.batch} each decode step spends {across.step_ms:g} ms in all-reduce"
        if isinstance(inside, AllReducePath):
            said += (
                f" instead of {inside.step_ms:g} ms inside one NVLink domain ({across.step_ms / inside.step_ms:.1f}x)"
            )
        else:
            said += f"; inside one NVLink domain: no figure ({inside.reason})"
        out.append(said)
    elif not checked.fits_one_domain:
        out.append(f"across: no figure ({across.reason})")
    prefill = [
        f"{_rate(p.prefill_tokens_per_s)} prompt tokens/s {'across' if p.kind == 'across' else 'inside one domain'} "
        f"({p.busbw_gbps:g} GB/s)"
        for p in (inside, across)
        if isinstance(p, AllReducePath)
    ]
    if prefill:
        out.append(
            f"prefill is bandwidth-bound: each prompt token moves {per_step} x {shape.hidden * ACTIVATION_BYTES:,} B "
            f"through all-reduce, at the large-message busbw at most {' and '.join(prefill)}"
        )
    out.append(CEILING)
    out.append(SOURCES)
    return tuple(out)


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"
