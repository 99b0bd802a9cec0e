"""The bandwidth oracle: what all-reduce busbw a box should reach, by algorithm, with where each figure comes from.

A figure is one of three kinds, and the report says which:

* ``measured`` -- a public measurement of the same model and GPU count with that algorithm (the catalog's band,
  ``topoaudit/catalog/gpus.toml``, each with its source), its typical plateau; across nodes, the public
  measurements of :data:`ACROSS_NODES_MEASURED`;
* ``gate`` -- a provider's health-check threshold for that box where no plateau was published;
* ``derived`` -- NCCL's own arithmetic for the release the run reports, said in full (the tables of
  :mod:`topoaudit.bench.nccl_arithmetic`, each constant with its releases and ``file@tag``).

Inside one NVLink domain the ring is the links NCCL counts times its per-link figure (with the caps of the
release), the tree NCCL's tree refinement of that. Across nodes the network sets the figure: the node's NICs
together (NCCL's ``speed / 8000`` each), at most the node's own ring; CollNet and NVLS-tree are held to public
measurements only. Where the input names no NICs, those of the model's reference node are assumed and said,
and the run warns at most. With no algorithm stated, the figure is that of NCCL's own choice on the platform
and release (NVLS on NVSwitch boxes of sm90 and newer since 2.17.1).

How far below its figure a healthy run may fall is not a fixed fraction: :func:`tolerance` takes it from the
healthy public runs and the providers' acceptance gates (:data:`HEALTHY_ONE_DOMAIN`,
:data:`HEALTHY_ACROSS_NODES`).

Pure: no torch, no I/O.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topoaudit.bench.nccl_arithmetic import (
    COLLNET,
    CURRENT,
    NET_GBPS_SOURCE,
    NVLINK_GBPS_PER_LINK,
    NVLS,
    RING_CAPS,
    SM_BY_NVLINK_GENERATION,
    TREE,
    TREE_ALGBW_RATIO_SOURCE,
    TREE_TWO_NODES_SOURCE,
    arch_row,
    in_force,
    per_channel_tree_gbps,
)
from topoaudit.catalog import GpuSpec
from topoaudit.catalog.machines import all_machines
from topoaudit.model.busbw import ALGORITHMS, NCCL_ALGO_VALUES, normalize_algorithm
from topoaudit.model.nccl_bandwidth import net_gbps
from topoaudit.model.network import NcclVersion, NicSet
from topoaudit.model.values import Unsupported
from topoaudit.units import format_size

if TYPE_CHECKING:
    from topoaudit.model.bench import BenchResult
    from topoaudit.plan.comm import Links


@dataclass(frozen=True)
class Figure:
    """An expected all-reduce busbw plateau, its provenance, and how far below it a healthy run may fall."""

    busbw_gbps: float  # what the judge compares the plateau with
    algorithm: str  # one of ALGORITHMS, or "default" where the source measured NCCL's own choice
    kind: str  # "measured" | "gate" | "derived"
    source: str  # public measurement or NCCL source file
    arithmetic: str = ""  # for a derived figure: the sum, in full
    size_bytes: int = 0  # the message size the source measured at (0: a model, no size)
    floor_gbps: float = 0.0  # the lowest healthy figure the catalog band gives (a gate), 0 when none
    warn_below_ratio: float = 1.0  # a plateau under this fraction of the figure is low (see tolerance())
    tolerance_source: str = ""
    assumptions: tuple[str, ...] = ()  # what the figure rests on that the input did not say
    warn_at_most: bool = False  # the network was assumed: a run below the figure warns, never fails
    lowest_gbps: float = 0.0  # the ring's figure where NCCL's default was assumed: a fail must be low against it too
    across_nodes: bool = False

    def describe(self) -> str:
        """One line a reader can check: the figure, its kind, where it comes from."""
        at = f" at {format_size(self.size_bytes)}" if self.size_bytes else ""
        how = f"{self.arithmetic}; " if self.arithmetic else ""
        return f"{self.busbw_gbps:g} GB/s {self.algorithm} ({self.kind}{at}: {how}{self.source})"

    def evidence(self) -> dict[str, object]:
        return {
            "oracle_busbw_gbps": self.busbw_gbps,
            "oracle_algorithm": self.algorithm,
            "oracle_kind": self.kind,
            "oracle_source": self.source,
            "oracle_arithmetic": self.arithmetic,
            "oracle_size_bytes": self.size_bytes,
            "oracle_warn_below_ratio": self.warn_below_ratio,
            "oracle_tolerance_source": self.tolerance_source,
            "oracle_assumptions": list(self.assumptions),
            "oracle_warn_at_most": self.warn_at_most,
        }


# --- what the oracle assumes where the input is silent ----------------------------------------------------


def _reference_nodes() -> dict[str, tuple[str, int, int, str, str]]:
    """Each card's reference machine in the catalog (``catalog/machines.toml``): the node it is assumed to sit in."""
    return {
        m.gpu: (
            f"{m.name} reference node" if m.kind == "node" else m.name,
            m.nics,
            int(m.nic_gbits),
            m.link_layer,
            m.source_of("nics"),
        )
        for m in all_machines()
        if m.reference
    }


REFERENCE_NODES: dict[str, tuple[str, int, int, str, str]] = _reference_nodes()
"""Each model's reference node: (the node, NICs, Gb/s each, link layer, where that node's NICs are published)."""

REFERENCE_NICS: dict[str, NicSet] = {
    key: NicSet(count, float(gbits), layer, f"assumed: {node}", assumed=True)
    for key, (node, count, gbits, layer, _source) in REFERENCE_NODES.items()
}
"""The NICs of each model's reference node, assumed (and said) when the input names none."""

SINGLE_CAPTURES: dict[tuple[str, int], str] = {
    ("GB300", 16): "701.33 GB/s at 8 GiB in one public OCI capture (4 trays of an NVL72 rack, NCCL 2.29.3)",
    ("RTX4090", 8): "14.45 GB/s at 128 MiB in one public capture (stock driver, PCIe P2P off)",
}
"""Shapes whose only public figure is one capture: shown beside a run, never used to judge one (a figure
taken from the only capture it is tested on would pass that capture by construction)."""

ACROSS_NODES_MEASURED: dict[tuple[str, str], tuple[tuple[int, int, float, float, str], ...]] = {
    # (model, algorithm): (fewest nodes, most nodes, NIC Gb/s per node, busbw GB/s, source)
    ("H100-SXM", "nvls_tree"): (
        (2, 2, 3200.0, 430.0, "NVIDIA/nccl#1221: 2 nodes of 8x H100 over 8x 400G RoCE with NVLS on, NCCL 2.19.3"),
    ),
    ("H200-SXM", "nvls_tree"): (
        (3, 64, 3200.0, 310.07, "stas00/ml-engineering network/README.md: 4 nodes of 8x H200 (p5en, 3.2 Tb/s EFA)"),
    ),
    ("H100-SXM", "collnet"): (
        (
            2,
            512,
            3200.0,
            450.0,
            "Azure/ai-infrastructure-on-azure skills/ai-infra/references/sku_baselines.md: ND H100 v5, 8x 400 Gb/s "
            "IB with SHARP/CollNet, ~450 expected at 16G (warn below 400)",
        ),
    ),
}
"""Public measurements of CollNet and NVLS-tree across nodes: they reduce in the network switch or across
NVLink and IB together, which NCCL's arithmetic here does not reproduce."""


# --- the figure ---------------------------------------------------------------------------------------------


def expected_busbw(
    spec: GpuSpec,
    gpus_per_node: int,
    *,
    nodes: int = 1,
    nics: NicSet | None = None,
    algorithm: str = "",
    one_nvlink_domain: bool = False,
    nccl_version: NcclVersion | None = None,
    channels: int | None = None,
    tree_pattern: str = "balanced",
) -> Figure | Unsupported:
    """Return the large-message all-reduce busbw ``nodes`` x ``gpus_per_node`` GPUs of model ``spec`` should reach.

    ``algorithm`` is the one NCCL ran ("" when not known: NCCL's own choice on this platform and release).
    ``one_nvlink_domain`` says the nodes share one NVLink domain (trays of an NVL72 rack): the network is not
    crossed. ``nics`` are one node's NICs (None: the reference node's, assumed). ``nccl_version`` is the release
    the run reports (None: :data:`~topoaudit.bench.nccl_arithmetic.CURRENT`, said so). ``channels`` is the tree
    graph's channel count where NCCL printed it (its per-channel cap applies only then), ``tree_pattern``
    ``"tree"`` where the tree graph fell back to NCCL_TOPO_PATTERN_TREE.
    """
    algo = algorithm
    if algo and algo not in ALGORITHMS:
        return Unsupported("oracle", f"unknown algorithm {algorithm!r}")
    total = gpus_per_node * nodes
    if total < 2:
        return Unsupported("oracle", "a single GPU: all-reduce moves no data over a link")
    version = nccl_version or CURRENT
    unknown_version = () if nccl_version else (f"NCCL version not reported: NCCL {CURRENT}'s arithmetic assumed",)
    ctx = _Ctx(spec, version, unknown_version, channels, tree_pattern)
    if nodes > 1 and not one_nvlink_domain:
        figure = _across_nodes(ctx, gpus_per_node, nodes, nics, algo)
    else:
        figure = _one_domain(ctx, total, algo)
    if isinstance(figure, Unsupported):
        return figure
    ratio, why = tolerance(figure)
    return dataclasses.replace(figure, warn_below_ratio=ratio, tolerance_source=why)


@dataclass(frozen=True)
class _Ctx:
    spec: GpuSpec
    version: NcclVersion
    unknown_version: tuple[str, ...]  # the assumption to state when a figure follows the release
    channels: int | None
    tree_pattern: str


def default_algorithm(spec: GpuSpec, gpus: int, version: NcclVersion) -> tuple[str, str]:
    """(algorithm, why) NCCL picks for a large all-reduce on ``gpus`` GPUs of one NVLink domain of ``spec``.

    NCCL picks NVLS on an NVSwitch domain of sm90 and newer where multicast is available: on by default since
    2.17.1 (``src/transport/nvls.cc@v2.17.1-1``), auto since 2.18.1; measured as NCCL's choice at 8 GPUs by
    sjeaugey in NVIDIA/nccl-tests#212 (H100, ~480 vs ~370 for NCCL_ALGO=RING) and in the TUNING lines of
    stas00/ml-engineering network/README.md (H200 from 5 GPUs, B200 from 6, NCCL 2.27.7).
    """
    nvls = in_force(NVLS, version)
    measured_default = spec.band(gpus, "default")
    nvswitch = spec.build == "nvswitch" and spec.nvlink_generation >= 4
    if measured_default is not None and spec.band(gpus, "nvls") is None:
        return "default", f"the figure measures NCCL's own choice on {gpus}x {spec.name} ({measured_default.source})"
    if nvswitch and not nvls.value:
        return "ring", f"NCCL {version} has no NVLS ({nvls.source}): it runs the ring"
    if nvswitch and spec.band(gpus, "nvls") is not None:
        return "nvls", (
            f"algorithm not stated: NCCL {version} picks NVLS for a large all-reduce on {gpus}x {spec.name} "
            f"(NVLS {nvls.value}, {nvls.source}; NCCL's choice measured as NVLS by sjeaugey in NVIDIA/nccl-tests#212 "
            "and in stas00/ml-engineering network/README.md)"
        )
    if nvswitch:
        return "ring", (
            f"algorithm not stated: NCCL {version} would pick NVLS on {gpus}x {spec.name}, but no public NVLS "
            "measurement exists for it: held to the ring's figure, the lowest NCCL's choices reach"
        )
    return "ring", "algorithm not stated: NCCL's ring (no NVLS on this box)"


def _one_domain(ctx: _Ctx, gpus: int, algo: str) -> Figure | Unsupported:
    spec = ctx.spec
    assumed: tuple[str, ...] = ()
    lowest = 0.0
    if not algo:
        algo, why = default_algorithm(spec, gpus, ctx.version)
        assumed = (why, *ctx.unknown_version)
        if algo in ("nvls", "default"):
            ring = _one_domain(ctx, gpus, "ring")
            lowest = ring.busbw_gbps if isinstance(ring, Figure) else 0.0
    figure = _figure_of(ctx, gpus, algo)
    if isinstance(figure, Unsupported):
        single = SINGLE_CAPTURES.get((spec.key, gpus))
        if single:
            return Unsupported("oracle", f"{figure.reason}; the only public figure, {single}, is a single "
                               "self-measurement and cannot judge a run")  # fmt: skip
        return figure
    single = SINGLE_CAPTURES.get((spec.key, gpus))
    notes = (
        (f"one public capture measured {single}: a single self-measurement, shown, not used to judge",)
        if single
        else ()
    )
    if figure.kind == "derived" and not assumed:
        assumed = ctx.unknown_version
    return dataclasses.replace(figure, assumptions=(*assumed, *figure.assumptions, *notes), lowest_gbps=lowest)


def _figure_of(ctx: _Ctx, gpus: int, algo: str) -> Figure | Unsupported:
    spec = ctx.spec
    if algo in ("nvls", "default"):
        band = spec.band(gpus, "nvls") or spec.band(gpus, "default")  # "default": NCCL's choice on an NVLS box
        if band is None:
            return Unsupported(
                "oracle", f"no public NVLS measurement of {gpus}x {spec.name}; NCCL's NVLS model is not reproduced"
            )
        return _band_figure(band)
    if algo == "nvls_tree":
        return Unsupported("oracle", "NVLS-tree runs across nodes; inside one NVLink domain NCCL runs NVLS")
    if algo == "collnet":
        return Unsupported("oracle", "CollNet reduces in the network: it runs only across nodes")
    band = spec.band(gpus, "ring")
    if algo == "ring" and band is not None:
        return _band_figure(band)
    ring = _ring_model(ctx, gpus)
    if isinstance(ring, Unsupported) or algo == "ring":
        return ring
    return _tree(ctx, ring.busbw_gbps, ring.arithmetic, nodes=1, ranks=gpus)


def _band_figure(band: object) -> Figure:
    from topoaudit.catalog import BusbwBand

    assert isinstance(band, BusbwBand)
    label = band.algo
    if band.typical_gbps > 0:
        return Figure(band.typical_gbps, label, "measured", band.source, size_bytes=band.size_bytes,
                      floor_gbps=band.min_gbps)  # fmt: skip
    return Figure(band.min_gbps, label, "gate", band.source, size_bytes=band.size_bytes, floor_gbps=band.min_gbps)


def _ring_model(ctx: _Ctx, gpus: int) -> Figure | Unsupported:
    """NCCL's ring figure inside one NVLink domain: the links NCCL counts x its per-link figure, and the caps of
    the release (``ncclTopoTuneModel``: ring ``busBw = nChannels x bw``, at most the sum of the links the graph
    search found, src/graph/search.cc)."""
    spec = ctx.spec
    partial_mesh = spec.layout == "hybrid-cube-mesh"  # not every pair linked: NCCL's rings mix links, not modelled
    if not (spec.one_domain and gpus <= spec.domain_size) or not spec.nvlinks_per_gpu or partial_mesh:
        return Unsupported("oracle", f"no NCCL model for {gpus}x {spec.name}: its GPUs are not one NVLink domain")
    sm = SM_BY_NVLINK_GENERATION.get(spec.nvlink_generation)
    if sm is None:
        return Unsupported("oracle", f"NVLink generation {spec.nvlink_generation} has no NCCL constant")
    per_link = in_force(NVLINK_GBPS_PER_LINK[sm], ctx.version)
    figure = round(spec.nvlinks_per_gpu * per_link.value, 1)
    arithmetic = (
        f"{spec.nvlinks_per_gpu} NVLinks x {per_link.value:g} GB/s (sm{sm}; {per_link.releases}: {per_link.source})"
        f" = {figure:g}"
    )
    caps = in_force(RING_CAPS, ctx.version)
    cap = caps.value.get(arch_row(sm, ctx.version))
    if cap is not None:
        how, value = cap
        capped = round(min(figure, value) if how == "min" else figure * value, 1)
        if capped != figure:
            arithmetic += f", {'capped at' if how == 'min' else 'x'} {value:g} ({caps.releases}: {caps.source})"
            figure = capped
    source = "NCCL's ring busBw = nChannels x bw, at most the links the graph search counts (src/graph/tuning.cc)"
    return Figure(figure, "ring", "derived", source, arithmetic=arithmetic)


def _tree(ctx: _Ctx, base: float, base_how: str, *, nodes: int, ranks: int) -> Figure:
    """NCCL's tree refinement of ``base`` (the tree graph's nChannels x bw) for the release, in nccl-tests' units."""
    sm = SM_BY_NVLINK_GENERATION.get(ctx.spec.nvlink_generation, 0)
    rule = in_force(TREE, ctx.version)
    value = base * rule.value.factor
    how = f"({base_how}) x {rule.value.factor:g} ({rule.releases}: {rule.source})"
    if rule.value.fixed_cap is not None:
        over, above, below = rule.value.fixed_cap
        cap = above if nodes > over else below
        if value > cap:
            value, how = cap, f"{how}, capped at {cap:g}"
    if rule.value.per_channel_cap:
        per = per_channel_tree_gbps(sm, ctx.version, nodes) if sm else None
        if per is not None and ctx.channels:
            cap = ctx.channels * per.value
            if value > cap:
                value = cap
            how += f", at most {ctx.channels} channels x {per.value:g} GB/s ({per.source})"
        elif per is not None:
            how += (
                f" (NCCL also caps it at nChannels x {per.value:g} GB/s, {per.source}: the channel count is in "
                "NCCL's GRAPH line, not given, so that cap is left out)"
            )
    if rule.value.tree_pattern_factor != 1.0 and ctx.tree_pattern == "tree":
        value *= rule.value.tree_pattern_factor
        how += f" x {rule.value.tree_pattern_factor:g} (the tree graph fell back to NCCL_TOPO_PATTERN_TREE)"
    factor = (ranks - 1) / ranks
    value = round(value * factor, 1)
    how += f" x (n-1)/n = {ranks - 1}/{ranks} in nccl-tests' busbw ({TREE_ALGBW_RATIO_SOURCE})"
    return Figure(value, "tree", "derived", "NCCL's tree busBw (src/graph/tuning.cc)", arithmetic=how)


# --- across nodes --------------------------------------------------------------------------------------------


def _network(spec: GpuSpec, nodes: int, nics: NicSet | None) -> NicSet | Unsupported:
    """The node's NICs: the ones read or given, with the reference node's rate where the input gave none."""
    ref = REFERENCE_NICS.get(spec.key)
    if nics is None:
        if ref is None:
            return Unsupported(
                "oracle",
                f"across {nodes} nodes the NICs set the figure; the input names none and {spec.name} has no "
                "reference node to assume: pass --nics COUNTxGBITS",
            )
        return ref
    if nics.known_rate:
        return nics
    if ref is None or not ref.known_rate:
        return Unsupported(
            "oracle", f"across {nodes} nodes the NICs set the figure; their rate is unknown: pass --nics COUNTxGBITS"
        )
    assert isinstance(ref.gbits_each, float)
    return NicSet(
        nics.count,
        ref.gbits_each,
        nics.link_layer,
        f"{nics.count} NICs {nics.source}; {ref.gbits_each:g}G each {ref.source}",
        assumed=True,
    )


def _across_nodes(ctx: _Ctx, per_node: int, nodes: int, nics: NicSet | None, algo: str) -> Figure | Unsupported:
    spec = ctx.spec
    if algo == "nvls":
        return Unsupported("oracle", "NVLS reduces inside one NVLink domain; across nodes NCCL runs NVLS-tree")
    net = _network(spec, nodes, nics)
    if isinstance(net, Unsupported):
        return net
    assert isinstance(net.gbits_each, float | int)
    assumed = (f"NICs {net.describe()}: pass --nics COUNTxGBITS to judge your network",) if net.assumed else ()
    if algo in ("nvls_tree", "collnet"):
        figure = _measured_across(spec, nodes, net, algo)
        if isinstance(figure, Unsupported):
            return figure
        source = figure.source + _reference_source(spec, net)
        return dataclasses.replace(
            figure, source=source, assumptions=assumed, warn_at_most=net.assumed, across_nodes=True
        )
    usable = net.count
    share = ""
    if spec.node_gpus and per_node < spec.node_gpus:  # a node's share of its NICs: NCCL uses the GPUs' near ones
        usable = min(net.count, max(1, math.ceil(net.count * per_node / spec.node_gpus)))
        share = f" ({per_node} of {spec.node_gpus} GPUs per node ran: {usable} of {net.count} NICs)"
    per_nic = net_gbps(int(net.gbits_each * 1000))
    total = round(usable * per_nic, 1)
    nic_count = f"{usable} NIC" if usable == 1 else f"{usable} NICs"
    net_how = f"{nic_count} x {per_nic:g} GB/s ({net.gbits_each:g} Gb/s / 8, {NET_GBPS_SOURCE}){share} = {total:g}"
    node = _ring_model(ctx, per_node) if per_node > 1 else None
    node_gbps = node.busbw_gbps if isinstance(node, Figure) else 0.0
    ring_value, ring_how = total, net_how
    if node_gbps and node_gbps < total:
        ring_value, ring_how = node_gbps, f"{net_how}; the node's own ring, {node_gbps:g}, is lower"
    source = (
        "the node's NICs together carry a ring's 2(n-1)/n x S (sjeaugey in NVIDIA/nccl#457): ring busBw = "
        "nChannels x bwInter, each channel through one NIC (src/graph/search.cc, src/graph/tuning.cc)"
    )
    ring = Figure(ring_value, "ring", "derived", source, arithmetic=ring_how)
    two = nodes <= 2
    tree_base = min(2 * total if two else total, node_gbps or math.inf)
    tree_how = (f"2 x ({net_how}) on two nodes ({TREE_TWO_NODES_SOURCE})" if two else net_how) + (
        f", at most the node's own ring {node_gbps:g}" if node_gbps and tree_base == node_gbps else ""
    )
    tree = _tree(ctx, tree_base, tree_how, nodes=nodes, ranks=per_node * nodes)
    if algo == "ring":
        chosen = ring
    elif algo == "tree":
        chosen = tree
    else:
        chosen = min((ring, tree), key=lambda f: f.busbw_gbps)
        assumed = (
            "algorithm not stated: across nodes NCCL picks ring, tree or NVLS-tree itself (sjeaugey in "
            f"NVIDIA/nccl-tests#196): held to the lower of the ring ({ring.busbw_gbps:g}) and tree "
            f"({tree.busbw_gbps:g}) figures",
            *assumed,
        )
    return dataclasses.replace(
        chosen,
        source=chosen.source + _reference_source(spec, net),
        assumptions=(*assumed, *ctx.unknown_version),
        warn_at_most=net.assumed,
        across_nodes=True,
    )


def _reference_source(spec: GpuSpec, net: NicSet) -> str:
    """Where the assumed reference node's NICs are published, for a figure that rests on them."""
    node = REFERENCE_NODES.get(spec.key)
    return f"; the reference node's NICs: {node[4]}" if net.assumed and node else ""


def _measured_across(spec: GpuSpec, nodes: int, net: NicSet, algo: str) -> Figure | Unsupported:
    assert isinstance(net.gbits_each, float | int)
    node_gbits = net.count * net.gbits_each
    for low, high, gbits, busbw, source in ACROSS_NODES_MEASURED.get((spec.key, algo), ()):
        if low <= nodes <= high and math.isclose(gbits, node_gbits):
            return Figure(busbw, algo, "measured", source)
    name = {"nvls_tree": "NVLS-tree", "collnet": "CollNet"}[algo]
    why = f"no public {name} measurement of {nodes} nodes of {spec.name} with {net.describe()}"
    if algo == "collnet":
        rule = in_force(COLLNET, CURRENT)
        why += (
            f"; NCCL's CollNet arithmetic needs the run's channels and GPUs per NIC ({rule.value}, {rule.source}), "
            "so it is not reproduced"
        )
    return Unsupported("oracle", why)


# --- how far below its figure a healthy run may fall -----------------------------------------------------


@dataclass(frozen=True)
class Healthy:
    """A public run on a healthy box, or a provider's acceptance line: no such run may be judged low."""

    model: str  # catalog key
    gpus_per_node: int
    busbw_gbps: float
    source: str
    algorithm: str = ""  # "" where the source ran NCCL's own choice
    nodes: int = 1
    nics: tuple[int, float] = (0, 0.0)  # (count, Gb/s each) per node, across nodes


HEALTHY_ONE_DOMAIN: tuple[Healthy, ...] = (
    Healthy("A100-SXM", 8, 230.0, "sjeaugey in NVIDIA/nccl-tests#149 (~230 at 8G)", "ring"),
    Healthy("A100-SXM", 8, 232.54, "NVIDIA/nccl-tests#175 (4G)", "ring"),
    Healthy("A100-SXM", 8, 234.89, "stas00/ml-engineering network/README.md @744d01e1 (16 GiB)", "ring"),
    Healthy("A100-SXM", 8, 235.65, "microsoft/superbenchmark NDmv4 baseline.json (8 GiB)", "ring"),
    Healthy("A100-SXM", 8, 228.0, "Azure gate @4G, Azure/azurehpc-health-checks conf/nd96amsr_a100_v4.conf @00f42e35"),
    Healthy("H100-SXM", 8, 365.0, "NVIDIA/nccl#1455 (NCCL_ALGO=RING, 2-4G)", "ring"),
    Healthy("H100-SXM", 8, 370.0, "sjeaugey in NVIDIA/nccl-tests#212 (NCCL_ALGO=RING)", "ring"),
    Healthy("H100-SXM", 8, 480.0, "NVIDIA/nccl#1455 (NVLS, 2-4G)", "nvls"),
    Healthy("H100-SXM", 8, 476.0, "AddyLaddy in NVIDIA/nccl-tests#290 ('expected range for H100')"),
    Healthy("H100-SXM", 8, 479.72, "Voltage Park benchmark, github.com/aigatech/vpbenchmarking (8 GiB, NCCL 2.24.3)"),
    Healthy("H100-SXM", 8, 460.0, "Azure gate, Azure/azurehpc-health-checks conf/nd96isr_h100_v5.conf (16G)"),
    Healthy("H200-SXM", 8, 363.3, "stas00/ml-engineering network/README.md @744d01e1 (NVLS off, 8 GiB)", "ring"),
    Healthy("H200-SXM", 8, 367.61, "stas00/ml-engineering network/README.md @744d01e1 (NVLS off, 16 GiB)", "ring"),
    Healthy("H200-SXM", 8, 473.1, "stas00/ml-engineering network/README.md @744d01e1 (NVLS, 8 GiB)", "nvls"),
    Healthy("H200-SXM", 8, 475.0, "NVIDIA/nccl-tests#272 (4G, NCCL 2.20.3)"),
    Healthy("H200-SXM", 8, 431.0, "Azure gate, Azure/azurehpc-health-checks conf/nd96isr_h200_v5.conf (16G)"),
    Healthy("B200", 8, 673.8, "stas00/ml-engineering network/README.md @744d01e1 (NVLS off, 8 GiB)", "ring"),
    Healthy("B200", 8, 838.0, "stas00/ml-engineering network/README.md @744d01e1 (8 GiB, NCCL 2.27.7)"),
    Healthy("GB200", 72, 834.57, "coreweave/nccl-tests#43 (8 GiB, 72 GPUs)"),
    Healthy(
        "GB300",
        72,
        800.0,
        "Azure's warn line, Azure/ai-infrastructure-on-azure skills/ai-infra/references/sku_baselines.md (rack, 16G)",
    ),
)
"""Healthy runs and provider acceptance lines inside one NVLink domain, at a plateau size (OCI's 440 gate is left
out: it gates the mean of a 1-8 GiB sweep, not a plateau, oracle-quickstart/oci-hpc active_healthcheck.py)."""

HEALTHY_ACROSS_NODES: tuple[Healthy, ...] = (
    Healthy("A100-SXM", 8, 192.0, "AddyLaddy in NVIDIA/nccl#812 (DGX A100, 8x 200G)", nodes=2, nics=(8, 200.0)),
    Healthy("H100-SXM", 8, 320.0, "NVIDIA/nccl#1221 (8x 400G RoCE, NCCL 2.19.3)", nodes=4, nics=(8, 400.0)),
    Healthy("H100-SXM", 8, 330.0, "NVIDIA/nccl#1221 (NVLS off, 8x 400G RoCE)", nodes=2, nics=(8, 400.0)),
    Healthy("H100-SXM", 8, 330.93, "Voltage Park benchmark (32 GPUs, 3.2 Tb/s IB)", nodes=4, nics=(8, 400.0)),
    Healthy(
        "H200-SXM",
        8,
        364.65,
        "stas00/ml-engineering network/README.md @744d01e1 (p5en, EFA, AWS tuner, ring)",
        "ring",
        nodes=4,
        nics=(16, 200.0),
    ),
    Healthy(
        "B200",
        8,
        377.34,
        "stas00/ml-engineering network/README.md @744d01e1 (p6-b200, 4 GiB)",
        nodes=4,
        nics=(8, 400.0),
    ),
    Healthy(
        "GB300",
        4,
        180.0,
        "Azure's warn line, inter-rack IB only, Azure/ai-infrastructure-on-azure sku_baselines.md",
        nodes=18,
        nics=(4, 400.0),
    ),
    Healthy("H100-SXM", 8, 430.0, "NVIDIA/nccl#1221 (NVLS on, 2 nodes)", "nvls_tree", nodes=2, nics=(8, 400.0)),
    Healthy(
        "H100-SXM",
        8,
        400.0,
        "Azure's warn line, ND H100 v5 with SHARP, Azure/ai-infrastructure-on-azure sku_baselines.md",
        "collnet",
        nodes=2,
        nics=(8, 400.0),
    ),
)
"""Healthy runs and provider warn lines across nodes. A run whose algorithm the source did not state is taken
against the ring's figure, the highest of NCCL's network figures here, so that no ring at that speed warns."""


def _figure_for(record: Healthy) -> Figure:
    """The figure a healthy record is compared with (before any tolerance)."""
    from topoaudit.catalog import find_gpu

    spec = find_gpu(record.model)
    assert spec is not None, record.model
    ctx = _Ctx(spec, CURRENT, (), None, "balanced")
    if record.nodes > 1:
        count, gbits = record.nics
        nics = NicSet(count, gbits, "", record.source)
        found = _across_nodes(ctx, record.gpus_per_node, record.nodes, nics, record.algorithm or "ring")
    else:
        found = _one_domain(ctx, record.gpus_per_node * record.nodes, record.algorithm)
    assert isinstance(found, Figure), (record, found)
    return found


@functools.cache
def _tolerances() -> dict[str, tuple[float, str]]:
    out: dict[str, tuple[float, str]] = {}
    for scope, records in (("one-domain", HEALTHY_ONE_DOMAIN), ("across-nodes", HEALTHY_ACROSS_NODES)):
        ratio, worst = min((r.busbw_gbps / _figure_for(r).busbw_gbps, r) for r in records)
        floored = math.floor(ratio * 100) / 100
        out[scope] = (
            floored,
            f"{floored:g} of the figure: the lowest of {len(records)} healthy public runs and provider acceptance "
            f"lines {'across nodes' if scope == 'across-nodes' else 'in one NVLink domain'} against their figures "
            f"is {worst.busbw_gbps:g} of {_figure_for(worst).busbw_gbps:g} ({ratio:.3f}, {worst.source})",
        )
    return out


def tolerance(figure: Figure) -> tuple[float, str]:
    """(fraction, why): under ``fraction`` x the figure a plateau is low.

    A provider's gate is itself the acceptance line (1.0). Otherwise the fraction is the lowest ratio of any
    healthy public run or provider acceptance line to the figure the oracle gives for it
    (:data:`HEALTHY_ONE_DOMAIN`, :data:`HEALTHY_ACROSS_NODES`): no box those sources call healthy is judged low.
    """
    if figure.kind == "gate":
        return 1.0, "1 of the figure: a provider's acceptance gate is the line itself"
    return _tolerances()["across-nodes" if figure.across_nodes else "one-domain"]


# --- docs/bandwidth.md ----------------------------------------------------------------------------------------

MARKER_BEGIN = "<!-- BEGIN GENERATED ORACLE -->"
MARKER_END = "<!-- END GENERATED ORACLE -->"


def oracle_markdown() -> str:
    """The oracle's figures, NCCL's constants by release, the tolerances and the reference nodes, as Markdown.

    docs/bandwidth.md shows it between its markers (tests fail when the committed file differs).
    """
    return "\n\n".join((_figures_table(), _across_table(), _constants_table(), _tolerance_table(), _reference_table()))


def _cell(figure: Figure | Unsupported) -> tuple[str, str, str, str, str]:
    if isinstance(figure, Unsupported):
        return "–", "–", "–", "–", figure.reason
    at = format_size(figure.size_bytes) if figure.size_bytes else "–"
    how = f"{figure.arithmetic}; " if figure.arithmetic else ""
    said = "".join(f"; {a}" for a in figure.assumptions)
    return f"{figure.busbw_gbps:g}", figure.kind, f"{figure.warn_below_ratio:g}", at, f"{how}{figure.source}{said}"


def _figures_table() -> str:
    from topoaudit.catalog import all_gpus

    out = [
        f"Inside one NVLink domain (NCCL {CURRENT}; a run that reports its release gets that release's arithmetic):",
        "",
        "| model | GPUs | algorithm | busbw GB/s | kind | warn below | measured at | source (and arithmetic) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for spec in all_gpus():
        counts = sorted({b.gpus for b in spec.busbw} | ({spec.node_gpus} if spec.one_domain else set()))
        for gpus in counts:
            rack = spec.layout == "nvl72" and gpus > spec.node_gpus
            per_node, nodes = (spec.node_gpus, gpus // spec.node_gpus) if rack else (gpus, 1)
            for algo in ("", "ring", "tree", "nvls"):
                figure = expected_busbw(spec, per_node, nodes=nodes, algorithm=algo, one_nvlink_domain=rack)
                if isinstance(figure, Unsupported) and algo:
                    continue
                if not algo and isinstance(figure, Figure) and figure.algorithm == "ring":
                    continue  # NCCL's choice is the ring: the ring's row says it
                name = algo or "not stated"
                if isinstance(figure, Figure) and figure.algorithm != (algo or figure.algorithm):
                    name = f"{algo} ({figure.algorithm} measured)"
                elif isinstance(figure, Figure) and not algo:
                    name = f"not stated: {figure.algorithm}"
                busbw, kind, warn, at, source = _cell(figure)
                out.append(f"| `{spec.key}` | {gpus} | {name} | {busbw} | {kind} | {warn} | {at} | {source} |")
    return "\n".join(out)


ACROSS_EXAMPLES = (
    ("H100-SXM", 8, 2, (8, 400.0)),
    ("H100-SXM", 8, 4, (8, 400.0)),
    ("A100-SXM", 8, 2, (8, 200.0)),
    ("B200", 8, 4, (8, 400.0)),
)
"""Shapes docs/bandwidth.md shows across nodes."""


def _across_table() -> str:
    from topoaudit.catalog import find_gpu

    out = [
        f"Across nodes (NCCL {CURRENT}), with the NICs given, and with none given (the reference node's, assumed):",
        "",
        "| model | nodes x GPUs | NICs per node | algorithm | busbw GB/s | kind | warn below | source |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, per_node, nodes, (count, gbits) in ACROSS_EXAMPLES:
        spec = find_gpu(key)
        assert spec is not None
        for nics in (NicSet(count, gbits, "", f"--nics {count}x{gbits:g}"), None):
            for algo in ("", "ring", "tree", "nvls_tree", "collnet"):
                figure = expected_busbw(spec, per_node, nodes=nodes, nics=nics, algorithm=algo)
                if isinstance(figure, Unsupported) and algo:
                    continue
                busbw, kind, warn, _at, source = _cell(figure)
                given = f"{count}x {gbits:g}G" if nics else "none (assumed)"
                name = algo or "not stated"
                out.append(
                    f"| `{key}` | {nodes} x {per_node} | {given} | {name} | {busbw} | {kind} | {warn} | {source} |"
                )
    return "\n".join(out)


def _constants_table() -> str:
    from topoaudit.bench.nccl_arithmetic import PER_CHANNEL_TREE_GBPS, Held

    rows: list[tuple[str, str, str]] = []

    def add(what: str, table: Sequence[Held[Any]], show: Callable[[Any], str] = str) -> None:
        for i, held in enumerate(table):
            nxt = table[i + 1].since if i + 1 < len(table) else None
            releases = f"{held.since} until {nxt}" if nxt else f"{held.since} and later"
            rows.append((what, show(held.value), f"{releases} | {held.source}"))

    for sm, per_link in sorted(NVLINK_GBPS_PER_LINK.items()):
        add(f"NVLink GB/s per link, sm{sm}", per_link, lambda v: f"{v:g}")
    add(
        "ring cap by architecture row",
        RING_CAPS,
        lambda v: ", ".join(f"{k}: {h} {x:g}" for k, (h, x) in v.items()) or "none",
    )
    add(
        "tree",
        TREE,
        lambda v: (
            f"x {v.factor:g}"
            + (
                f", cap {v.fixed_cap[1]:g} above {v.fixed_cap[0]} node(s) else {v.fixed_cap[2]:g}"
                if v.fixed_cap
                else ""
            )
            + (", at most nChannels x perChMaxTreeBw" if v.per_channel_cap else "")
            + (f", x {v.tree_pattern_factor:g} for the TREE pattern" if v.tree_pattern_factor != 1.0 else "")
        ),
    )
    for row, table in PER_CHANNEL_TREE_GBPS.items():
        add(f"tree GB/s per channel, {row} (1 / 2 / 3+ nodes)", table, lambda v: " / ".join(f"{x:g}" for x in v))
    add("CollNet", COLLNET)
    add("NVLS", NVLS, lambda v: v or "no NVLS")
    out = [
        "NCCL's constants by release (each from the first release whose source has it until the next entry):",
        "",
        "| constant | value | NCCL releases | source |",
        "|---|---|---|---|",
    ]
    out += [f"| {what} | {value} | {rest} |" for what, value, rest in rows]
    return "\n".join(out)


def _tolerance_table() -> str:
    out = [
        "The healthy runs and provider lines the tolerance is taken from (each against its figure):",
        "",
        "| scope | model | shape | algorithm | busbw GB/s | figure GB/s | ratio | source |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for scope, records in (("one domain", HEALTHY_ONE_DOMAIN), ("across nodes", HEALTHY_ACROSS_NODES)):
        for r in records:
            figure = _figure_for(r)
            shape = (
                f"{r.nodes} x {r.gpus_per_node}, {r.nics[0]}x {r.nics[1]:g}G" if r.nodes > 1 else f"{r.gpus_per_node}"
            )
            out.append(
                f"| {scope} | `{r.model}` | {shape} | {r.algorithm or 'not stated'} | {r.busbw_gbps:g} | "
                f"{figure.busbw_gbps:g} | {r.busbw_gbps / figure.busbw_gbps:.3f} | {r.source} |"
            )
    one, across = _tolerances()["one-domain"], _tolerances()["across-nodes"]
    out += ["", f"Warn below, in one NVLink domain: {one[1]}.", "", f"Warn below, across nodes: {across[1]}."]
    return "\n".join(out)


def _reference_table() -> str:
    out = ["The reference nodes assumed where the input names no NICs:", "", "| model | NICs assumed | source |"]
    out += ["|---|---|---|"]
    out += [f"| `{key}` | {REFERENCE_NICS[key].describe()} | {node[4]} |" for key, node in REFERENCE_NODES.items()]
    return "\n".join(out)


__all__ = [
    "ALGORITHMS",
    "NCCL_ALGO_VALUES",
    "Figure",
    "NicSet",
    "default_algorithm",
    "expected_busbw",
    "normalize_algorithm",
    "tolerance",
]


def planner_links(bench: BenchResult | Unsupported, network: NicSet | None) -> Links:
    """What the planner times a TP group's all-reduces from: this oracle, the run beside the plan, its NICs."""
    from topoaudit.plan.comm import Links

    return Links(expected_busbw, None if isinstance(bench, Unsupported) else bench, network)
