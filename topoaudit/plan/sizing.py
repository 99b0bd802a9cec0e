"""The deploy planner's arithmetic: model size -> footprint -> cards -> TP size -> NVLink-domain fit.

Pure functions, no I/O. Every number the plan reports is also written as a human-readable step so a
reader can redo the sum (``DeployPlan.steps``). Size the model first, then check the card count against
the node's real NVLink domain before anything else. When it does not fit, the alternatives come in the
order a user can act on them: what the box (or node) at hand can do -- TP inside each domain with
pipeline parallelism across, then TP across its domains (the slow option) -- then which cards to rent
instead, then spreading over several machines.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.catalog import GpuSpec, all_gpus, find_gpu
from topoaudit.errors import ConfigError
from topoaudit.model.plan import (
    NO_SHAPE,
    Alternative,
    CommCost,
    DeployPlan,
    DomainFit,
    KvShape,
    MachineDomains,
    ModelShape,
    PlanRequest,
)
from topoaudit.model.values import Unsupported
from topoaudit.plan.precision import find_precision, kv_bytes_per_element

if TYPE_CHECKING:
    from topoaudit.catalog.machines import MachineSpec
    from topoaudit.plan.comm import Links

GB = 10**9

DEFAULT_KV_HEADROOM = 0.25
"""Allowance for KV cache and activations, as a fraction of the weights (a serving rule of thumb: 20-30%)."""

DEFAULT_MARGIN_WITH_HEADROOM = 0.0
"""No extra margin on top of the headroom fraction: the 25% is the whole allowance (744B INT4 -> 510 GB
-> 4 H200; 1600B INT4 -> 1.1 TB -> 8 H200, at the edge of one node)."""

DEFAULT_MARGIN_WITH_KV_SHAPE = 0.10
"""When the KV cache is computed from the model shape it counts only the cache; 10% covers
activations, CUDA graphs and allocator fragmentation."""

DEFAULT_RESERVE_GB = 2.0
"""Per card, held back from the catalog memory: CUDA context, NCCL buffers, allocator slack."""

EDGE_UTILISATION = 0.95
"""A plan that fills 95% or more of each card's usable memory is called "at the edge"."""

_PARAMS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*([kmbt]|bn)?\s*(?:params?)?\s*$", re.IGNORECASE)
_SCALE_TO_B = {"k": 1e-6, "m": 1e-3, "b": 1.0, "bn": 1.0, "t": 1e3}


def parse_params(text: str) -> float:
    """Parameter count in billions from ``744B``, ``1.6T``, ``49B``, ``70b``, ``350M`` or a plain count.

    A plain number is a raw parameter count and must be at least a million (``7000000000``); a small
    bare number such as ``744`` is refused because its unit is ambiguous. ConfigError on anything else.
    """
    m = _PARAMS_RE.match(str(text))
    if not m:
        raise ConfigError(
            f"cannot read {text!r} as a parameter count",
            hint="write it like 744B, 1.6T, 49B, 70b or 350M",
        )
    number = float(m.group(1))
    suffix = (m.group(2) or "").lower()
    if suffix:
        billions = number * _SCALE_TO_B[suffix]
    elif number >= 1e6:
        billions = number / 1e9
    else:
        raise ConfigError(
            f"parameter count {text!r} has no unit",
            hint=f"did you mean {m.group(1)}B (billions)? write it like 744B, 1.6T or 70b",
        )
    if billions <= 0:
        raise ConfigError(f"parameter count {text!r} must be positive")
    return billions


def _fmt(x: float) -> str:
    """Numbers as the steps show them: up to one decimal, no trailing .0 noise for whole numbers."""
    if abs(x - round(x)) < 0.05:
        return f"{round(x):,}"
    return f"{x:,.1f}"


def _fmt_params(billions: float) -> str:
    return f"{_fmt(billions)}B"


def _domain_word(build: str) -> str:
    return {
        "nvswitch": "NVSwitch domain",
        "bridge": "NVLink-bridged domain",
        "mesh": "NVLink mesh",
        "pcie": "PCIe-only (no NVLink)",
    }.get(build, "NVLink domain")


def standard_domains(spec: GpuSpec) -> tuple[tuple[int, ...], ...]:
    """The NVLink domains of the catalog's standard node for a GPU model, as GPU index tuples.

    A domain larger than the node (GB200/GB300 NVL72) is one rack-scale domain of ``domain_size``.
    """
    size = max(1, spec.domain_size)
    total = max(spec.node_gpus, size)
    return tuple(tuple(range(start, min(start + size, total))) for start in range(0, total, size))


def _standard_label(spec: GpuSpec) -> str:
    if spec.domain_size > spec.node_gpus:
        return (
            f"standard {spec.name} NVL{spec.domain_size} rack ({spec.domain_size} GPUs in one NVLink domain, "
            f"trays of {spec.node_gpus})"
        )
    if spec.build == "pcie" or spec.domain_size <= 1:
        return f"standard {spec.name} node ({spec.node_gpus} GPUs, PCIe only: every GPU is its own domain)"
    count = spec.node_gpus // max(1, spec.domain_size)
    if count <= 1:
        return f"standard {spec.name} node ({spec.node_gpus} GPUs, one {_domain_word(spec.build)})"
    return (
        f"standard {spec.name} node ({spec.node_gpus} GPUs as {count} {_domain_word(spec.build)}s "
        f"of {spec.domain_size})"
    )


def _short_label(spec: GpuSpec) -> str:
    """``standard NVIDIA GB300 NVL72 rack``, ``standard NVIDIA H100 SXM5 node``."""
    return (
        f"standard {spec.name} NVL{spec.domain_size} rack"
        if spec.domain_size > spec.node_gpus
        else (f"standard {spec.name} node")
    )


def tp_for(cards: int, heads: int | None, limit: int | None = None) -> tuple[int, str]:
    """The smallest TP size of at least ``cards`` that tensor parallelism accepts, and the rule used.

    With ``heads`` the TP size must divide the attention-head count; otherwise it is a power of two.
    With ``limit`` the answer is the *largest* valid size not above ``limit`` (for TP inside a domain).
    """
    if heads:
        valid = [d for d in range(1, heads + 1) if heads % d == 0]
        rule = f"a divisor of {heads} attention heads"
    else:
        valid = [2**k for k in range(0, 12)]
        rule = "a power of two"
    if limit is not None:
        below = [d for d in valid if d <= limit]
        return (max(below) if below else 1), rule
    above = [d for d in valid if d >= cards]
    if above:
        return min(above), rule
    return max(valid), rule  # more cards than heads: TP = heads, the rest goes to pipeline stages


def _kv_computed(shape: KvShape) -> tuple[float, str]:
    """KV cache in GB: 2 (K and V) x layers x kv_heads x head_dim x tokens x batch x bytes."""
    for name in ("context_tokens", "layers", "kv_heads", "head_dim", "batch"):
        if getattr(shape, name) <= 0:
            raise ConfigError(f"KV shape: {name.replace('_', ' ')} must be a positive whole number")
    per_elem = kv_bytes_per_element(shape.kv_precision)
    total = 2 * shape.layers * shape.kv_heads * shape.head_dim * shape.context_tokens * shape.batch * per_elem
    step = (
        f"KV cache = 2 (K,V) x {shape.layers} layers x {shape.kv_heads} KV heads x {shape.head_dim} head dim "
        f"x {shape.context_tokens:,} tokens x batch {shape.batch} x {per_elem:g} B ({shape.kv_precision}) "
        f"= {_fmt(total / GB)} GB"
    )
    return total / GB, step


def _fit(
    *,
    target: str,
    kind: str,
    domains: tuple[tuple[int, ...], ...],
    tp: int,
    pp: int,
    utilisation: float,
    memory: str = "",
    network: str = "the network",
) -> DomainFit:
    sizes = tuple(len(d) for d in domains)
    largest = max(sizes, default=0)
    gpu_count = sum(sizes)
    fits = tp <= largest
    fits_machine = tp * pp <= gpu_count
    placement: tuple[int, ...] | Unsupported
    if fits:
        home = min((d for d in domains if len(d) >= tp), key=len)
        placement = tuple(sorted(home)[:tp])
        at_edge = tp == largest or utilisation >= EDGE_UTILISATION
        where = "GPUs " + ",".join(str(i) for i in placement)
        verdict = (
            f"TP{tp} fits one NVLink domain of the {target}: use {where}"
            + (f" ({edge_reason(tp, largest, utilisation, memory)})" if at_edge else "")
            + "."
        )
    else:
        placement = Unsupported("plan", f"TP{tp} is larger than the largest NVLink domain ({largest})")
        at_edge = False
        if tp > gpu_count:
            verdict = (
                f"TP{tp} needs more GPUs than the {target} has ({gpu_count}); the group would cross machines "
                f"over {network}."
            )
        else:
            verdict = (
                f"TP{tp} does not fit one NVLink domain of the {target} (largest domain: {largest} GPUs); "
                f"every layer's all-reduce would cross the slower path between domains."
            )
    return DomainFit(
        target=target,
        kind=kind,
        gpu_count=gpu_count,
        domain_sizes=sizes,
        domains=domains,
        tp_size=tp,
        fits_one_domain=fits,
        at_edge=at_edge,
        fits_machine=fits_machine,
        placement=placement,
        verdict=verdict,
    )


def edge_reason(tp: int, largest: int, utilisation: float, memory: str = "") -> str:
    """Why a plan that fits is at the edge, naming the limit that binds with its numbers: the domain (TP takes
    every GPU of the largest domain, so the group cannot grow inside it) and/or the cards' memory (the share
    of usable memory each card holds against EDGE_UTILISATION). ``memory``: "106.2 of 139 GB"."""
    share = f"{utilisation:.0%}"
    held = f"{memory} usable" if memory else "its usable memory"
    edge = f"{EDGE_UTILISATION:.0%}"
    fills = tp == largest
    full = utilisation >= EDGE_UTILISATION
    if fills and full:
        return (
            f"at the edge, both limits bind: TP{tp} takes all {largest} GPUs of the domain and each card holds "
            f"{held} ({share}, at or over the {edge} memory edge); more KV cache or context needs more cards "
            "than one domain has"
        )
    if fills:
        return (
            f"at the edge of the domain, not of memory: TP{tp} takes all {largest} GPUs of the domain, so a larger "
            f"model cannot grow TP inside it; each card holds {held} ({share}, under the {edge} memory edge)"
        )
    return (
        f"at the edge of memory, not of the domain: each card holds {held} ({share}, at or over the {edge} "
        f"memory edge), little room for KV cache; the domain has room (TP{tp} of {largest} GPUs)"
    )


def _usable_gb(spec: GpuSpec, reserve_gb: float) -> float:
    return spec.memory_bytes / GB - reserve_gb


def _cards_for(footprint_gb: float, usable_gb: float) -> int:
    # a hair of tolerance so 1100.0 / 137.5 is 8 cards, not 9 from float noise
    return max(1, math.ceil(footprint_gb / usable_gb - 1e-9))


def binding_limit(cards_by_memory: int, tp: int, tp_rule: str, largest_domain: int) -> str:
    """Which limit puts the TP group outside one domain, in one sentence: the memory or the domain size."""
    if cards_by_memory > largest_domain:
        return (
            f"memory binds: the footprint needs {cards_by_memory} cards and the largest NVLink domain holds "
            f"{largest_domain}, so a smaller TP cannot hold the model; split it with pipeline stages or use "
            "cards with more memory"
        )
    return (
        f"the domain binds: {cards_by_memory} card(s) would hold the model, but TP must be {tp_rule} "
        f"(TP{tp}) and the largest NVLink domain holds {largest_domain}"
    )


def _alternatives(
    *,
    spec: GpuSpec,
    footprint_gb: float,
    cards_by_memory: int,
    heads: int | None,
    reserve_gb: float,
    checked: DomainFit,
    machine: MachineSpec | None = None,
) -> tuple[Alternative, ...]:
    """Ways out, in the order a user can act on them: with the box (or node) at hand, then other cards to
    rent or buy, then spreading over several machines."""
    on_hand: list[Alternative] = []
    elsewhere: list[Alternative] = []
    # TP inside a domain, pipeline parallelism across domains (inside the box when it has enough of them)
    largest = max(checked.domain_sizes, default=1)
    tp_in, _ = tp_for(cards_by_memory, heads, limit=largest)
    pp = math.ceil(cards_by_memory / tp_in) if tp_in else cards_by_memory
    domains_big_enough = sum(1 for s in checked.domain_sizes if s >= tp_in)
    if tp_in >= 1 and pp >= 2:
        in_target = domains_big_enough >= pp
        where = (
            f"uses {pp} of the {domains_big_enough} domains of the {checked.target}"
            if in_target
            else f"needs {pp} domains; the {checked.target} has {domains_big_enough}, so stages span machines"
        )
        (on_hand if in_target else elsewhere).append(
            Alternative(
                kind="tp-in-domain-pp-across",
                summary=f"TP{tp_in} inside each NVLink domain x PP{pp} across domains ({tp_in * pp} cards): {where}",
                gpu_key=spec.key,
                cards=tp_in * pp,
                tp_size=tp_in,
                pp_size=pp,
                fits_one_domain=True,
                cost=(
                    "pipeline bubbles raise per-request latency; only activations cross between stages "
                    "(once per stage boundary), not every layer's all-reduce; throughput needs micro-batching"
                ),
            )
        )
    # tensor parallelism across domains (on the box) or nodes (over the network): named as the slow option
    node = max(1, spec.node_gpus)
    tp_all, _ = tp_for(cards_by_memory, heads)
    nodes = math.ceil(tp_all / node)
    on_target = tp_all <= checked.gpu_count
    if on_target:
        summary = (
            f"TP{tp_all} across the domains of the {checked.target} anyway: the all-reduce crosses "
            f"PCIe/SYS between domains"
        )
    elif machine is not None:
        summary = f"TP{tp_all} across {max(nodes, 2)} {machine.name} over {machine.network}"
    else:
        summary = f"TP{tp_all} across {max(nodes, 2)} machines over InfiniBand/Ethernet"
    across = Alternative(
        kind="cross-node-tp",
        summary=summary,
        gpu_key=spec.key,
        cards=tp_all,
        tp_size=tp_all,
        pp_size=1,
        fits_one_domain=False,
        cost=(
            "the slow option: every layer's all-reduce waits on the network/PCIe hop, TP scaling is "
            "far from linear and p99 latency suffers; choose it only when the others are impossible"
        ),
    )
    # other cards, to rent or buy: fewer, higher-capacity cards (or the same memory in a bigger domain)
    candidates = []
    for other in all_gpus():
        if other.key == spec.key or other.memory_bytes < spec.memory_bytes:
            continue
        usable = _usable_gb(other, reserve_gb)
        if usable <= 0:
            continue
        need = _cards_for(footprint_gb, usable)
        tp, _ = tp_for(need, heads)
        if tp <= max(1, other.domain_size) and need <= tp:
            candidates.append((tp, other.memory_bytes, other, need))
    # fewest cards first, then the smallest step up in card class (H200 -> B200 before B300)
    candidates.sort(key=lambda c: (c[0], c[1]))
    rent = [
        Alternative(
            kind="cards-that-fit-one-domain",
            summary=(
                f"rent or buy {tp} x {other.name} instead ({_fmt(other.memory_bytes / GB)} GB each, {need} by "
                f"memory): TP{tp} inside one {_domain_word(other.build)} of {other.domain_size}"
            ),
            gpu_key=other.key,
            cards=tp,
            tp_size=tp,
            pp_size=1,
            fits_one_domain=True,
            cost=(
                f"a different card class: {tp} x {_fmt(other.memory_bytes / GB)} GB = "
                f"{_fmt(tp * other.memory_bytes / GB)} GB; price it against {cards_by_memory}+ x {spec.name} "
                "plus the interconnect penalty"
            ),
        )
        for tp, _mem, other, need in candidates[:4]
    ]
    if on_target:
        on_hand.append(across)
    elif nodes >= 2 or not checked.fits_one_domain:
        elsewhere.append(across)
    return (*on_hand, *rent, *elsewhere)


@dataclass(frozen=True)
class _Weights:
    """What the weights take, and from what: a parameter count x a precision, or GB given."""

    params_b: float | Unsupported
    active_params_b: float | Unsupported
    precision: str | Unsupported
    bytes_per_param: float | Unsupported
    precision_basis: str | Unsupported
    gb: float
    basis: str


@dataclass(frozen=True)
class _Footprint:
    """Weights + KV cache (computed from a shape, or a headroom fraction) + a safety margin."""

    kv_gb: float
    kv_method: str
    kv_headroom_fraction: float | Unsupported
    kv_shape: KvShape | Unsupported
    margin: float
    margin_gb: float
    gb: float


@dataclass(frozen=True)
class _Cards:
    """How many cards the footprint needs, and the TP x PP split of them."""

    card_gb: float
    usable: float
    by_memory: int
    for_weights: int
    heads: int | None
    tp: int
    rule: str
    pp: int
    per_card: float
    utilisation: float

    @property
    def cards(self) -> int:
        return self.tp * self.pp


def plan_deployment(
    request: PlanRequest, spec: GpuSpec, machine: MachineDomains | None = None, links: Links | None = None
) -> DeployPlan:
    """Size ``request`` on ``spec`` cards and check the TP group against the standard node and ``machine``.

    Where ``request.gpu`` names a catalog machine (a DGX Station, an NVL72 tray), the card is sized as that
    machine holds it and the group is checked against that machine: a group larger than it crosses machines over
    its NICs. With the model's shape (``request.shape``) the all-reduce cost per decode step is estimated, timed
    from ``links`` (a measured run of the box, the bandwidth oracle, the NICs).
    ConfigError (exit 4 through the CLI's error handler) on impossible inputs: no size given, both a
    parameter count and weights in GB, negative fractions, a reserve larger than the card. Each stage adds the
    steps of its arithmetic to the plan, in order.
    """
    from topoaudit.catalog.machines import find_machine

    catalog_machine = find_machine(request.gpu) if request.gpu else None
    if catalog_machine is not None and catalog_machine.gpu == spec.key:
        spec = catalog_machine.card()
    else:
        catalog_machine = None
    steps: list[str] = []
    weights = _weights(request, steps)
    footprint = _footprint(request, weights.gb, steps)
    cards = _cards(request, spec, weights.gb, footprint.gb, steps)
    standard, machine_fit = _domain_fits(spec, machine, cards, steps, catalog_machine)
    checked = machine_fit if isinstance(machine_fit, DomainFit) else standard
    alternatives: tuple[Alternative, ...] = ()
    if not checked.fits_one_domain:
        steps.append(binding_limit(cards.by_memory, cards.tp, cards.rule, max(checked.domain_sizes, default=0)))
        alternatives = _alternatives(
            spec=spec,
            footprint_gb=footprint.gb,
            cards_by_memory=cards.by_memory,
            heads=cards.heads,
            reserve_gb=request.reserve_gb,
            checked=checked,
            machine=catalog_machine,
        )
    communication: CommCost | Unsupported = NO_SHAPE
    if request.shape is not None:
        communication = _communication(request.shape, cards.tp, spec, checked, catalog_machine, machine, links)
        steps.extend(communication.lines)
    verdict = (
        "crosses-domain"
        if not checked.fits_one_domain
        else "at-edge-of-domain"
        if checked.at_edge
        else "fits-one-domain"
    )
    return DeployPlan(
        params_b=weights.params_b,
        active_params_b=weights.active_params_b,
        precision=weights.precision,
        bytes_per_param=weights.bytes_per_param,
        precision_basis=weights.precision_basis,
        weights_gb=round(weights.gb, 3),
        weights_basis=weights.basis,
        kv_method=footprint.kv_method,
        kv_headroom_fraction=footprint.kv_headroom_fraction,
        kv_shape=footprint.kv_shape,
        kv_cache_gb=round(footprint.kv_gb, 3),
        safety_margin_fraction=footprint.margin,
        safety_margin_gb=round(footprint.margin_gb, 3),
        footprint_gb=round(footprint.gb, 3),
        gpu_key=spec.key,
        gpu_name=spec.name,
        card_memory_gb=cards.card_gb,
        runtime_reserve_gb=request.reserve_gb,
        usable_per_card_gb=cards.usable,
        cards_for_weights=cards.for_weights,
        cards_by_memory=cards.by_memory,
        tp_size=cards.tp,
        tp_rule=cards.rule,
        pp_size=cards.pp,
        cards=cards.cards,
        per_card_gb=round(cards.per_card, 3),
        card_utilisation=round(cards.utilisation, 4),
        standard_node=standard,
        machine=machine_fit,
        alternatives=alternatives,
        steps=tuple(steps),
        verdict=verdict,
        communication=communication,
    )


def _weights(request: PlanRequest, steps: list[str]) -> _Weights:
    """The weights' GB: given, or parameters x the precision's bytes per parameter; the active count checked."""
    if request.weights_gb is not None and request.params_b is not None and request.precision is not None:
        raise ConfigError("give either a parameter count with a precision or the weights in GB, not both")
    params_b: float | Unsupported = Unsupported("plan", "not given")
    precision: str | Unsupported = Unsupported("plan", "not given")
    bpp: float | Unsupported = Unsupported("plan", "weights given in GB")
    basis: str | Unsupported = Unsupported("plan", "weights given in GB")
    if request.params_b is not None:
        if request.params_b <= 0:
            raise ConfigError("the parameter count must be positive")
        params_b = float(request.params_b)
    if request.weights_gb is not None:
        if not request.weights_gb > 0:
            raise ConfigError(f"weights must be a positive number of GB, not {request.weights_gb:g}")
        weights_gb = float(request.weights_gb)
        weights_basis = "given"
        steps.append(f"weights = {_fmt(weights_gb)} GB (given)")
        if request.precision is not None:
            precision = find_precision(request.precision).key
    else:
        if request.params_b is None or request.precision is None:
            raise ConfigError(
                "the planner needs the model size: --params with --precision, or --weights-gb",
                hint="e.g. --params 744B --precision int4",
            )
        p = find_precision(request.precision)
        precision, bpp, basis = p.key, p.bytes_per_param, p.basis
        weights_gb = request.params_b * p.bytes_per_param
        weights_basis = "parameters x precision"
        steps.append(
            f"weights = {_fmt_params(request.params_b)} parameters x {p.bytes_per_param:.4g} B/param "
            f"({p.key}: {p.basis}) = {_fmt(weights_gb)} GB"
        )
    active: float | Unsupported = Unsupported("plan", "not given")
    if request.active_params_b is not None:
        if request.active_params_b <= 0:
            raise ConfigError("the active parameter count must be positive")
        if isinstance(params_b, float) and request.active_params_b > params_b:
            raise ConfigError(
                f"active parameters ({_fmt_params(request.active_params_b)}) exceed the total ({_fmt_params(params_b)})"
            )
        active = float(request.active_params_b)
        total = _fmt_params(params_b) if isinstance(params_b, float) else "all"
        steps.append(
            f"memory is sized on {total} parameters: every expert stays resident; the "
            f"{_fmt_params(active)} active per token set compute per token, not memory"
        )
    return _Weights(params_b, active, precision, bpp, basis, weights_gb, weights_basis)


def _footprint(request: PlanRequest, weights_gb: float, steps: list[str]) -> _Footprint:
    """KV cache and activations (from the model's shape, or a fraction of the weights), then the safety margin."""
    headroom_fraction: float | Unsupported
    kv_shape: KvShape | Unsupported
    if request.kv_shape is not None:
        kv_gb, kv_step = _kv_computed(request.kv_shape)
        kv_method = "computed"
        headroom_fraction = Unsupported("plan", "KV cache computed from the model shape")
        kv_shape = request.kv_shape
        steps.append(kv_step)
        default_margin = DEFAULT_MARGIN_WITH_KV_SHAPE
    else:
        if not (request.kv_headroom >= 0) or request.kv_headroom > 10:
            raise ConfigError(
                f"KV headroom must be a fraction between 0 and 10 (0.25 = 25%), not {request.kv_headroom:g}"
            )
        kv_method = "headroom-fraction"
        headroom_fraction = request.kv_headroom
        kv_shape = Unsupported("plan", "no model shape given; headroom fraction used")
        kv_gb = weights_gb * request.kv_headroom
        steps.append(
            f"KV cache + activations headroom = {request.kv_headroom:.0%} x {_fmt(weights_gb)} GB = {_fmt(kv_gb)} GB"
        )
        default_margin = DEFAULT_MARGIN_WITH_HEADROOM
    margin = default_margin if request.safety_margin is None else request.safety_margin
    if not (margin >= 0) or margin > 10:
        raise ConfigError(f"the safety margin must be a fraction between 0 and 10, not {margin:g}")
    margin_gb = (weights_gb + kv_gb) * margin
    why = (
        " (default: the headroom fraction is the whole allowance)"
        if request.safety_margin is None and kv_method == "headroom-fraction"
        else " (default: activations, CUDA graphs, fragmentation)"
        if request.safety_margin is None
        else ""
    )
    steps.append(f"safety margin = {margin:.0%} x {_fmt(weights_gb + kv_gb)} GB = {_fmt(margin_gb)} GB{why}")
    footprint = weights_gb + kv_gb + margin_gb
    steps.append(f"footprint = {_fmt(weights_gb)} + {_fmt(kv_gb)} + {_fmt(margin_gb)} = {_fmt(footprint)} GB")
    return _Footprint(kv_gb, kv_method, headroom_fraction, kv_shape, margin, margin_gb, footprint)


def _cards(request: PlanRequest, spec: GpuSpec, weights_gb: float, footprint: float, steps: list[str]) -> _Cards:
    """Cards by memory (each less the runtime reserve), then the TP size the head count allows and PP for the rest."""
    if not (request.reserve_gb >= 0):
        raise ConfigError(f"the runtime reserve must be zero or more GB, not {request.reserve_gb:g}")
    card_gb = spec.memory_bytes / GB
    usable = card_gb - request.reserve_gb
    if usable <= 0:
        raise ConfigError(
            f"a runtime reserve of {_fmt(request.reserve_gb)} GB leaves nothing of a {_fmt(card_gb)} GB {spec.name}"
        )
    steps.append(
        f"usable per {spec.name} = {_fmt(card_gb)} GB (catalog) - {_fmt(request.reserve_gb)} GB runtime reserve "
        f"= {_fmt(usable)} GB"
    )
    by_memory = _cards_for(footprint, usable)
    steps.append(
        f"cards by memory = ceil({_fmt(footprint)} / {_fmt(usable)}) = ceil({footprint / usable:.2f}) = {by_memory}"
    )
    heads = request.attention_heads
    if heads is not None and heads <= 0:
        raise ConfigError("the attention-head count must be a positive whole number")
    tp, rule = tp_for(by_memory, heads)
    pp = math.ceil(by_memory / tp)
    if pp > 1:
        steps.append(
            f"TP size = {tp} (TP must be {rule}; it cannot exceed the head count), so {pp} pipeline stages "
            f"carry the rest: {tp} x {pp} = {tp * pp} cards"
        )
    elif tp == by_memory:
        steps.append(f"TP size = {tp} ({rule})")
    else:
        steps.append(f"TP size = {tp}: the smallest size >= {by_memory} that is {rule}")
    cards = tp * pp
    per_card = footprint / cards
    utilisation = per_card / usable
    steps.append(
        f"per card = {_fmt(footprint)} / {cards} = {_fmt(per_card)} GB of {_fmt(usable)} GB usable ({utilisation:.0%})"
    )
    for_weights = _cards_for(weights_gb, usable)
    if footprint <= usable:
        steps.append(f"the footprint fits one {spec.name}: no tensor parallelism needed")
    elif for_weights > 1:
        steps.append(
            f"the weights alone ({_fmt(weights_gb)} GB) do not fit one {spec.name} ({_fmt(usable)} GB usable): "
            f"they need {for_weights} cards before any KV cache"
        )
    else:
        steps.append(f"the weights fit one {spec.name}, but weights + KV cache need {by_memory} cards")
    return _Cards(card_gb, usable, by_memory, for_weights, heads, tp, rule, pp, per_card, utilisation)


def _domain_fits(
    spec: GpuSpec,
    machine: MachineDomains | None,
    cards: _Cards,
    steps: list[str],
    catalog_machine: MachineSpec | None = None,
) -> tuple[DomainFit, DomainFit | Unsupported]:
    """The TP group against the model's standard node (or the catalog machine the plan was sized on) and, when one
    was audited, against the machine's domains."""
    memory = f"{_fmt(cards.per_card)} of {_fmt(cards.usable)} GB"
    target, domains, network = _standard_label(spec), standard_domains(spec), "the network"
    if catalog_machine is not None:
        target, domains, network = catalog_machine.label, _machine_domains(catalog_machine), catalog_machine.network
    standard = _fit(
        target=target,
        kind="standard-node",
        domains=domains,
        tp=cards.tp,
        pp=cards.pp,
        utilisation=cards.utilisation,
        memory=memory,
        network=network,
    )
    steps.append(standard.verdict)
    if machine is None:
        return standard, Unsupported("plan", "no audited machine given")
    if not machine.domains:
        raise ConfigError(f"the machine {machine.label!r} has no GPUs to plan on")
    label = f"audited machine {machine.label}"
    if not machine.links_known:
        steps.append(
            f"{label}: {machine.gpu_count} GPUs, but the input describes no links between them: the plan is checked "
            "against the standard node (nvidia-smi topo -m of the box checks it against its own domains)"
        )
        return standard, Unsupported("plan", "the input describes no links between its GPUs")
    machine_fit = _fit(
        target=label,
        kind="machine",
        domains=machine.domains,
        tp=cards.tp,
        pp=cards.pp,
        utilisation=cards.utilisation,
        memory=memory,
    )
    sizes = "+".join(str(len(d)) for d in machine.domains)
    steps.append(f"{label}: {machine.gpu_count} GPUs in NVLink domains of {sizes}")
    if machine.gpu_model and not _same_model(machine.gpu_model, spec):
        steps.append(f"note: the machine reports {machine.gpu_model!r}, the plan is sized for {spec.name}")
    steps.append(machine_fit.verdict)
    return standard, machine_fit


def _machine_domains(machine: MachineSpec) -> tuple[tuple[int, ...], ...]:
    """A catalog machine's GPUs as NVLink domains: one rack-wide domain for a tray, the board for a node, each GPU
    alone where it has no NVLink to another (a station)."""
    card = machine.card()
    if machine.spans_machines:
        return standard_domains(card)
    size = max(1, machine.domain_gpus)
    return tuple(tuple(range(start, min(start + size, machine.gpus))) for start in range(0, machine.gpus, size))


def _communication(
    shape: ModelShape,
    tp: int,
    spec: GpuSpec,
    checked: DomainFit,
    catalog_machine: MachineSpec | None,
    audited: MachineDomains | None,
    links: Links | None,
) -> CommCost:
    """The all-reduce cost of the TP group per decode step, inside one domain of the card's standard build and
    across what the checked group crosses."""
    from topoaudit.plan.comm import Links, communication_cost

    for name in ("layers", "hidden", "batch"):
        if getattr(shape, name) <= 0:
            raise ConfigError(f"the model shape's {name} must be a positive whole number")
    card = (find_gpu(catalog_machine.gpu) if catalog_machine is not None else None) or spec
    return communication_cost(
        shape,
        tp,
        card,
        inside_label=_short_label(card),
        checked=checked,
        machine=catalog_machine,
        audited=audited,
        links=links or Links(),
    )


def _same_model(product: str, spec: GpuSpec) -> bool:
    return any(re.search(p, product, re.IGNORECASE) for p in spec.match) or product.lower() == spec.key.lower()
