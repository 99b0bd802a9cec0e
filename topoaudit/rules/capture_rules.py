"""Rules over what only NCCL's XML dump or a measured matrix says (the report's ``captures``).

What a capture shares with a probe is judged by the probe and topology rules through the Machine; these
rules read the rest: the NVLinks NCCL counted per GPU, the signs of a VM's flattened view, and copy
bandwidth measured between GPU pairs. They run when the input holds captures (the registry loads this module
only then), each on the kind of capture it reads.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from statistics import median

from topoaudit.catalog import GpuSpec, all_gpus
from topoaudit.model.bench import BenchResult
from topoaudit.model.finding import Finding, Severity
from topoaudit.model.machine import Link, Machine, PathLevel
from topoaudit.model.nccl_topo import COPY_SAMPLES, BandwidthMatrix, Captures, LatencyMatrix, NcclTopology
from topoaudit.model.topology import gpu_pair_links
from topoaudit.rules.base import RuleContext, as_sentence, finding, first_few
from topoaudit.rules.codes import Code
from topoaudit.rules.needs import (
    CAPTURES,
    COPIES_AND_SWEEP,
    GPU_LINKS,
    NCCL_TOPOLOGY_DUMP,
    NVBANDWIDTH,
    NVBANDWIDTH_COPIES,
    NVBANDWIDTH_COPY_TESTS,
    NVLINK_PORTS,
    P2P_COPIES,
    P2P_LATENCY,
    P2P_STATUS,
    P2P_VERSUS_STAGED,
    PEER_COPIES,
)
from topoaudit.rules.registry import rule
from topoaudit.rules.topology_rules import link_remedy, nvlink_absent_severity

_LINK_TESTS = NVBANDWIDTH_COPY_TESTS

# Healthy boxes copy at 0.82-0.86 of their links' rate (H100 NV18 371 of 450 GB/s, B300 NV18 765 of 900, H100 NVL
# NV12 257 of 300); Azure's health check fails an H100 pair under 335 GB/s (0.74).
LINKS_WARN_BELOW = 0.7
LINKS_FAIL_BELOW = 0.5

# A pair this far below the median of its siblings is not noise: nvbandwidth's runs agree within a few %.
PAIR_BELOW_SIBLINGS = 0.75
# Below half of its siblings a pair has lost most of its links (Azure's H100 gate: 335 GB/s, seen failing at 162).
PAIR_FAILS_BELOW = 0.5
# Two GPUs copying from or to the host: with no third to tell which is off, only a wide gap is a finding. Slots of
# one kind keep within ~20% of each other (host memory on the far socket); a link trained x8 for x16, or a
# generation lower, halves its GPU's copy.
HOST_PAIR_APART = 0.6

# nccl-tests' busbw against nvbandwidth's one-way copy of the slowest pair of the same GPUs. Healthy boxes keep
# a ring all-reduce at 0.85-0.98 of the copy (8x A100 ring 235 vs ~276 per pair, nvbandwidth README example and
# the catalog's A100 band; 8x H100 ring ~370 vs 376-395, NVIDIA/nccl-tests#212 and fixture
# nvbandwidth-8xh100-v0.10-multirun-separators-latency-1), NVLS up to ~1.25 (H100/H200 ~480 over the same copy,
# NVIDIA/nccl-tests#212), a send/recv at about the copy (NVIDIA/nccl#1264: 380 GB/s one way on H100).
AGREE_LOW = 0.5
"""Below half of the copy, NCCL is not moving what the links carry (users report 80 against nvbandwidth's 260)."""

AGREE_HIGH = 1.5
"""Above 1.5x the copy no NCCL algorithm explains it: nvbandwidth's pair was slow (or measured another box)."""

_AGREE_COLLECTIVES = ("all_reduce", "sendrecv", "all_gather", "reduce_scatter")


def _captures(ctx: RuleContext) -> Captures:
    """Return the captures the rules here judge (the registry runs them only when the input holds some)."""
    assert isinstance(ctx.captures, Captures)
    return ctx.captures


def _dump(ctx: RuleContext) -> NcclTopology:
    dump = _captures(ctx).nccl_topology
    assert isinstance(dump, NcclTopology)
    return dump


@rule(
    Code(
        "bandwidth-tools-disagree",
        "warn",
        title="nvbandwidth and nccl-tests measured the same GPUs far apart, beyond the ratio the two tools keep",
        remedy=(
            "Rerun both on the idle box; when NCCL is the low one read its transport (NCCL_DEBUG=INFO: SHM or NET where"
            " P2P was expected), when nvbandwidth is, check the pair's links (`nvidia-smi nvlink -s`)."
        ),
    ),
    needs=(COPIES_AND_SWEEP, CAPTURES),
)
def tools_disagree(ctx: RuleContext) -> list[Finding]:
    """Name a group whose nccl-tests plateau and nvbandwidth copy of the same GPUs are far beyond their ratio."""
    captures, bench = _captures(ctx), ctx.bench
    assert isinstance(bench, BenchResult)
    if bench.source != "nccl-tests" or bench.collective not in _AGREE_COLLECTIVES or len(bench.hosts) != 1:
        return []
    copies = [m for m in captures.bandwidth if m.tool == "nvbandwidth" and _LINK_TESTS.match(m.test)]
    if not copies:
        return []
    devices = {r.rank: r.local_rank for r in bench.ranks}
    out: list[Finding] = []
    for group in bench.groups:
        plateau = group.plateau_busbw_gbps
        gpus = sorted({devices[r] for r in group.ranks if r in devices})
        if not isinstance(plateau, float) or len(gpus) < 2:
            continue
        for matrix in copies:
            cells = [(r, c, v) for r, c, v in _measured(matrix) if (p := _gpu_pair(r, c)) and set(p) <= set(gpus)]
            if not cells:
                continue
            row, column, slowest = min(cells, key=lambda x: x[2])
            ratio = plateau / slowest
            if AGREE_LOW <= ratio <= AGREE_HIGH:
                continue
            low = "nccl-tests" if ratio < AGREE_LOW else "nvbandwidth"
            out.append(
                finding(
                    "bandwidth-tools-disagree",
                    f"nccl-tests {bench.collective} over GPUs {','.join(map(str, gpus))} plateaus at {plateau:g} GB/s "
                    f"busbw while nvbandwidth {matrix.test} copies {row}->{column} (their slowest pair) at "
                    f"{slowest:g} GB/s: {ratio:.2f}x, outside the {AGREE_LOW:g}-{AGREE_HIGH:g}x the two tools keep on "
                    f"a healthy box; {low} is the low one",
                    group=group.name,
                    gpus=gpus,
                    nccl_tests_busbw_gbps=plateau,
                    nvbandwidth_gbps=slowest,
                    nvbandwidth_test=matrix.test,
                    nvbandwidth_pair=[row, column],
                    ratio=round(ratio, 3),
                    agree_low=AGREE_LOW,
                    agree_high=AGREE_HIGH,
                    low_tool=low,
                )
            )
            break  # one finding per group: the first copy test that disagrees
    return out


@rule(
    Code(
        "nccl-topo-nvlinks-low",
        "warn",
        title="NCCL counts fewer NVLinks for a GPU than its siblings have (or than its model has)",
        remedy=(
            "Check the GPU's links with `nvidia-smi nvlink -s` and `-e`: an inactive link or rising error counters need"
            " a GPU reset (`nvidia-smi -r`), a reboot, or the provider's baseboard service."
        ),
    ),
    needs=(NCCL_TOPOLOGY_DUMP, CAPTURES),
)
def nvlinks_low(ctx: RuleContext) -> list[Finding]:
    """NCCL counts fewer NVLinks for a GPU than its siblings have (an HGX H100 GPU has 18 over four switches).

    Compared with the catalog's count for the model when it is known (H100 NVL: 12 by design), else with
    the best GPU in the file. A file that names no NVLink at all says nothing here, nor does the GPU a paste of the
    dump stops inside.
    """
    topology, spec = _dump(ctx), ctx.spec
    if not topology.describes_nvlink or not topology.gpus or topology.flavour == "rccl":
        return []
    # a GPU whose element the paste stops inside lists only the links before the cut: not counted
    counts = {g.index: g.nvlink_count for g in topology.gpus if g.index != topology.cut_inside_gpu}
    if not counts:
        return []
    best = max(counts.values())
    by_catalog = spec is not None and spec.nvlink_generation > 0 and spec.nvlinks_per_gpu > 0
    expected = spec.nvlinks_per_gpu if by_catalog and spec is not None else best
    low = {i: c for i, c in counts.items() if c < expected}
    if not low or (not by_catalog and len(counts) < 2):
        return []
    versus = f"{spec.name} has {expected} per GPU" if by_catalog and spec is not None else f"its siblings have {best}"
    targets = {f"GPU{g.index}": [f"{n.target} x{n.count}" for n in g.nvlinks] for g in topology.gpus if g.index in low}
    return [
        finding(
            "nccl-topo-nvlinks-low",
            f"NCCL counts fewer NVLinks on {len(low)} GPU(s) than expected ({versus}): "
            + "; ".join(f"GPU{i} {c}" for i, c in sorted(low.items())[:8])
            + ".",
            severity=Severity.FAIL if by_catalog else Severity.WARN,
            nvlinks={f"GPU{i}": c for i, c in sorted(counts.items())},
            expected_nvlinks=expected,
            targets=targets,
        )
    ]


@rule(
    Code(
        "nccl-topo-flattened",
        "warn",
        title="NCCL sees a flattened virtual-machine topology (no NUMA node, no PCIe speed or width)",
        remedy=(
            "Give NCCL the real topology: set NCCL_TOPO_FILE to the provider's topology file for this VM size (or one "
            "written from the host's `nvidia-smi topo -m`), so rings and GPUDirect RDMA choices rest on facts rather "
            "than defaults."
        ),
    ),
    needs=(NCCL_TOPOLOGY_DUMP, CAPTURES),
)
def flattened(ctx: RuleContext) -> list[Finding]:
    """NCCL sees a VM's flattened topology: no NUMA node, no PCIe link speed or width.

    NCCL then assumes 16 lanes at its default per-lane speed and places every GPU and NIC on one CPU, so its
    rings and GPUDirect RDMA choices rest on guesses. An invisible NVSwitch (NCCL's ``fffffff:`` target) is
    listed beside them; alone it is normal on GB200 trays.
    """
    topology = _dump(ctx)
    signs: list[str] = []
    # a GPU on a C2C link shares its package with the CPU (GB10, Grace superchips): a single-socket Arm host without
    # NUMA nodes prints numaid="-1" on bare metal
    superchip = any(g.c2c_links for g in topology.gpus)
    if any(n < 0 for n in topology.cpu_numa_ids) and not superchip:
        signs.append('cpu numaid="-1" (NCCL cannot tell which socket a device hangs off)')
    blank = [g for g in topology.gpus if not g.link_speed.strip() or g.link_width == 0]
    if blank:
        signs.append(
            f'GPU PCIe link_speed="{blank[0].link_speed}" link_width="{blank[0].link_width}" on '
            f"{len(blank)} of {len(topology.gpus)} GPUs (NCCL assumes x16 at its default speed)"
        )
    if not signs:
        return []
    hidden = [g.index for g in topology.gpus if any(n.target_kind == "hidden" for n in g.nvlinks)]
    if hidden:
        signs.append(f"the NVSwitch behind GPUs {','.join(map(str, hidden))} is invisible (target fffffff:...)")
    no_nvlink = len(topology.gpus) > 1 and not any(g.nvlinks for g in topology.gpus)
    if no_nvlink:
        signs.append(
            "no NVLink between its GPUs either: their traffic takes the PCIe path NCCL sees, through the CPU, where "
            "its default (NCCL_P2P_LEVEL up to PXB) uses no peer access"
        )
    message = "NCCL sees a flattened virtual-machine topology: " + "; ".join(signs) + "."
    if no_nvlink:
        return [finding("nccl-topo-flattened", message, signs=signs, causes=["p2p-unsupported"])]
    return [finding("nccl-topo-flattened", message, signs=signs)]


@rule(
    Code(
        "nvbandwidth-pair-low",
        "warn",
        title="A GPU pair copies far below the other pairs in nvbandwidth",
        remedy=(
            "Compare the pair's path in `nvidia-smi topo -m` and its links in `nvidia-smi nvlink -s`/`-e`; rerun "
            "nvbandwidth on an idle box, and reset or service the GPUs whose links are degraded."
        ),
    ),
    Code(
        "nvbandwidth-below-links",
        "warn",
        needs=(NVBANDWIDTH_COPIES, GPU_LINKS),
        title="GPU pairs copy far below what their NVLinks carry in nvbandwidth",
        remedy=(
            "Check that every link is up at full speed (`nvidia-smi nvlink -s`, `-e`), that peer access is on "
            "(`nvidia-smi topo -p2p r`) and, behind NVSwitches, that the fabric manager runs; rerun nvbandwidth on an "
            "idle box, and have the provider service the GPUs or baseboard if the pairs stay slow."
        ),
    ),
    needs=(NVBANDWIDTH, CAPTURES),
)
def nvbandwidth_pairs(ctx: RuleContext) -> list[Finding]:
    """Judge each nvbandwidth matrix: pairs far below their siblings, and GPU copies far below their NVLinks.

    On a uniform fabric every pair copies at about the same rate: one slow pair is a degraded link, a pair routed
    over PCIe, or a GPU throttled during the run. The sibling comparison cannot see a box slow everywhere; the
    link count can, where ``nvidia-smi topo -m`` is pasted with the run: NV18 on an H100 carries 18 x 25 GB/s
    each way, and a healthy copy reaches 0.8 of it.
    """
    found: list[Finding] = []
    for matrix in _captures(ctx).bandwidth:
        if matrix.tool == "nvbandwidth":
            found += _bandwidth_pair_low(matrix, ctx.machine, "nvbandwidth-pair-low")
            if _LINK_TESTS.match(matrix.test):
                found += _bandwidth_below_links(matrix, ctx.machine, ctx.spec)
    return found


PEER_TESTS = re.compile(r"^(device_to_device|all_to_one|one_to_all)_")
"""nvbandwidth tests that copy between GPUs by peer access: waived only when no GPU can reach any other one
(filterHasAccessiblePeerPairs: cuDeviceCanAccessPeer false for every pair, NVIDIA/nvbandwidth@66746a3
testcase.cpp and testcase.h)."""


@rule(
    Code(
        "nvbandwidth-data-corruption",
        "fail",
        title="A copy in nvbandwidth returned wrong data: its pattern check failed",
        remedy=(
            "Do not run jobs on these GPUs until it is explained: rerun the test alone (`nvbandwidth -t TEST`, and "
            "with `-b 64`) to see whether it repeats, read `dmesg` for Xid and DMAR/IOMMU errors, check that one CUDA "
            "toolkit is installed and nvbandwidth was built on this box, and have the GPUs or their links serviced "
            "if it repeats."
        ),
    ),
    Code(
        "nvbandwidth-test-failed",
        "fail",
        title="An nvbandwidth test failed instead of printing its matrix (a CUDA or NVML error, an internal check)",
        remedy=(
            "Read the error the finding quotes: a CUDA error in a GPU-to-GPU copy points at peer access (ACS, the "
            "IOMMU, `nvidia-smi topo -p2p r`), an NVML error at the driver; rerun the test alone, with nvbandwidth "
            "built against this box's driver and CUDA."
        ),
    ),
    "p2p-unavailable",
    needs=(NVBANDWIDTH, CAPTURES),
)
def nvbandwidth_outcomes(ctx: RuleContext) -> Iterator[Finding]:
    """Judge the nvbandwidth tests that printed no matrix: a failed pattern check, another failure, a waived test.

    After each copy nvbandwidth checks the bytes it wrote (``Invalid value when checking the pattern``, then ``ASSERT
    in expression h_errorFlag == 0`` from v0.7): a GPU copy that returned wrong data, named with its test. A CUDA or
    NVML error is a failed test. nvbandwidth waives a GPU-to-GPU test only when no GPU can reach any other by peer
    access, so on a box of two or more GPUs a waived one says that no pair has P2P.
    """
    captures = _captures(ctx)
    wrong = [f for f in captures.copy_failures if f.kind == "data-check"]
    if wrong:
        tests = list(dict.fromkeys(str(f.testcase) for f in wrong if isinstance(f.testcase, str)))
        first = wrong[0]
        where = f" in {first_few(tests, 4)}" if tests else ""
        at = f" ({first.detail})" if first.detail else ""
        yield finding(
            "nvbandwidth-data-corruption",
            f"A GPU copy returned wrong data{where}: nvbandwidth's pattern check failed, line {first.line}: "
            f"'{first.text}'{at}.",
            tests=tests,
            lines=[f.line for f in wrong],
        )
    failed = [f for f in captures.copy_failures if f.kind not in ("data-check", "stopped")]
    if failed:
        first = failed[0]
        test = f" {first.testcase}" if isinstance(first.testcase, str) else ""
        number = f" (CUDA error {first.cuda_error})" if isinstance(first.cuda_error, int) else ""
        more = f"; {len(failed) - 1} more failure line(s)" if len(failed) > 1 else ""
        yield finding(
            "nvbandwidth-test-failed",
            f"nvbandwidth's test{test} failed{number}: line {first.line}: '{first.text}'{more}.",
            tests=list(dict.fromkeys(str(f.testcase) for f in failed if isinstance(f.testcase, str))),
            lines=[f.line for f in failed],
        )
    gpus = len(ctx.machine.gpus)
    peer = [w for w in captures.waived_tests if isinstance(w.testcase, str) and PEER_TESTS.match(w.testcase)]
    if peer and gpus >= 2:
        names = list(dict.fromkeys(str(w.testcase) for w in peer))
        yield finding(
            "p2p-unavailable",
            f"nvbandwidth waived {first_few(names, 3)} on {gpus} GPUs (line {peer[0].line}): it waives a GPU-to-GPU "
            "test only when no GPU can reach any other by peer access, so no pair of these GPUs has P2P; their "
            "copies go through host memory.",
            waived=names,
            gpus=gpus,
        )


@rule(
    Code(
        "p2p-copy-pair-low",
        "warn",
        title="A GPU pair copies far below the other pairs in p2pBandwidthLatencyTest",
        remedy=(
            "Compare the pair's path in `nvidia-smi topo -m` and its links in `nvidia-smi nvlink -s`/`-e`; rerun "
            "the test on an idle box (or nvbandwidth), and reset or service the GPUs whose links are degraded."
        ),
    ),
    needs=(CAPTURES, P2P_COPIES),
)
def p2p_copy_pairs(ctx: RuleContext) -> list[Finding]:
    """Judge p2pBandwidthLatencyTest's copies, pair against pair.

    The sample copies between every pair; on a uniform fabric (NVSwitch, PCIe cards under one switch) they agree
    within a few %, so one pair far below its siblings has lost links or takes another path. With peer access off
    every copy is staged through the host: it says nothing about NVLink, but a GPU whose every pair is far below
    the others has a PCIe link trained narrow or slow.
    """
    found: list[Finding] = []
    for matrix in _captures(ctx).bandwidth:
        if matrix.tool not in COPY_SAMPLES or "bandwidth" not in matrix.title.lower():
            continue
        for low in _bandwidth_pair_low(matrix, ctx.machine, "p2p-copy-pair-low"):
            found.append(_with_common_gpu(low) if matrix.peer_access is False else low)
    return found


PCIE3_X8_FLOOR_GBPS = 5.0
"""Peer copies below this run slower than a PCIe 3.0 x8 link carries (7.9 GB/s on the wire, about 6.5 GB/s as
copies reach it), the narrowest link a GPU sits on in a server: one way, per pair, with peer access on."""


@rule(
    Code(
        "p2p-copy-below-pcie",
        "warn",
        title="Peer copies between GPUs run below what a PCIe 3.0 x8 link carries",
        remedy=(
            "Find the slow hop: `nvidia-smi topo -m` for the path between the GPUs (a cross-socket or cross-die SYS "
            "path, a switch uplink), `nvidia-smi -q -d PCIE` for each GPU's link generation and width under load, "
            "and the riser or slot each GPU sits in; peer access through a root complex that does not forward peer "
            "traffic well is often faster staged (NCCL_P2P_DISABLE=1 for the run, or another slot)."
        ),
    ),
    needs=(CAPTURES, PEER_COPIES),
)
def p2p_copy_below_pcie(ctx: RuleContext) -> list[Finding]:
    """Judge peer copies against the slowest link a GPU has in a server, whatever the model.

    The sibling comparison cannot see a box where every pair is slow (two GPUs have one pair); no GPU pair with peer
    access on copies below a PCIe 3.0 x8 link unless a hop between them is narrower or slower still (an x4 or x1
    riser, an uplink trained at Gen1, a root complex that forwards peer traffic poorly).
    """
    for matrix in _captures(ctx).bandwidth:
        if matrix.tool not in COPY_SAMPLES or matrix.peer_access is not True:
            continue
        cells = [(r, c, v) for r, c, v in _measured(matrix) if r.startswith("GPU") and c.startswith("GPU")]
        floor = PCIE3_X8_FLOOR_GBPS * (2 if matrix.direction == "bidirectional" else 1)
        slow = [(r, c, v) for r, c, v in cells if v < floor]
        if not cells or len(slow) * 2 < len(cells):
            continue  # a few slow pairs among fast ones are p2p-copy-pair-low's to name
        shown = first_few([f"{r}->{c} {v:.2f} GB/s" for r, c, v in sorted(slow, key=lambda x: x[2])], 4)
        return [  # the first matrix that shows it: the others measured the same links
            finding(
                "p2p-copy-below-pcie",
                f"{matrix.test}: {len(slow)} of {len(cells)} GPU pair(s) copy with peer access on below "
                f"{floor:g} GB/s ({matrix.direction}), less than a PCIe 3.0 x8 link carries: {shown}.",
                test=matrix.test,
                floor_gbps=floor,
                pairs=[{"from": r, "to": c, "gbps": v} for r, c, v in slow],
            )
        ]
    return []


P2P_BELOW_STAGED = 0.7
"""Peer copies below this share of the same copies staged through host memory: peer access is on but broken."""


@rule(
    Code(
        "p2p-slower-than-staged",
        "warn",
        title="Peer-to-peer copies run slower than the same copies staged through host memory",
        remedy=(
            "Peer access is on but throttled: check that BAR1 maps the whole GPU memory (Above 4G decoding and "
            "Resizable BAR in the BIOS; `nvidia-smi -q -d MEMORY` shows the BAR1 size; dmesg's 'BAR 1 ... can't "
            "assign; no space'), and that ACS or the IOMMU does not send peer traffic through the root complex "
            "(NCCL's troubleshooting guide, PCI Access Control Services). Until then NCCL_P2P_DISABLE=1 is faster."
        ),
    ),
    needs=(CAPTURES, P2P_VERSUS_STAGED),
)
def p2p_slower_than_staged(ctx: RuleContext) -> list[Finding]:
    """Judge p2pBandwidthLatencyTest's P2P=Enabled matrices against its P2P=Disabled ones of the same direction.

    With peer access off every copy crosses host memory twice, so a working peer path is at least as fast; peer
    copies well below that path mean peer access is enabled but broken (a BAR1 too small to map the memory, ACS
    redirecting peer traffic, an IOMMU translating it).
    """
    copies = [
        (m, [v for r, c, v in _measured(m) if r.startswith("GPU") and c.startswith("GPU")])
        for m in _captures(ctx).bandwidth
        if m.tool in COPY_SAMPLES and m.peer_access is not None
    ]
    staged = {m.direction: median(cells) for m, cells in copies if cells and m.peer_access is False}
    found: list[Finding] = []
    for matrix, cells in copies:
        if not (cells and matrix.peer_access and matrix.direction in staged):
            continue
        peer, host = median(cells), staged[matrix.direction]
        if peer < P2P_BELOW_STAGED * host:
            found.append(
                finding(
                    "p2p-slower-than-staged",
                    f"{matrix.title.strip()}: peer copies run at {peer:.1f} GB/s (median of {len(cells)} pairs), "
                    f"below the {host:.1f} GB/s of the same copies staged through host memory (P2P=Disabled): "
                    "peer access is on but throttled or broken.",
                    test=matrix.test,
                    peer_median_gbps=round(peer, 2),
                    staged_median_gbps=round(host, 2),
                )
            )
    return found


def _with_common_gpu(low: Finding) -> Finding:
    """Name the GPU every slow pair of a host-staged matrix shares: its own PCIe link is the slow part."""
    pairs = low.evidence.get("pairs")
    if not isinstance(pairs, list) or not pairs:
        return low
    shared = set.intersection(*({p["from"], p["to"]} for p in pairs))
    if len(shared) != 1:
        return low
    (gpu,) = shared
    note = (
        f" Every slow pair includes {gpu}, and these copies go through host memory (peer access off): {gpu}'s "
        "PCIe link is trained narrow or slow (check its Link Width and Generation in `nvidia-smi -q`)."
    )
    return dataclasses.replace(low, message=low.message + note, evidence={**low.evidence, "gpu": gpu})


def _bandwidth_pair_low(matrix: BandwidthMatrix, machine: Machine, code: str) -> list[Finding]:
    """Flag a pair whose measured copy bandwidth is far below the other pairs of the same test and path.

    On a uniform fabric every pair copies at about the same rate; one slow GPU pair is a degraded link, a
    pair routed over PCIe, or a GPU throttled during the run; one GPU slow from or to the host is a PCIe link
    trained narrow or slow. When the topology is known (a ``topo -m`` pasted beside the run), pairs are
    compared only with pairs on the same kind of path, so an NVLink-bridged pair beside PCIe pairs is no
    outlier.
    """
    links = gpu_pair_links(machine)
    groups: dict[str, list[tuple[str, str, float]]] = {}
    for row, column, value in _measured(matrix):
        groups.setdefault(_path_class(row, column, links), []).append((row, column, value))
    found: list[tuple[str, str, float, float, str]] = []
    for path, cells in groups.items():
        if len(cells) == 2 and path == "host":
            (r, c, v), (*_, v2) = sorted(cells, key=lambda cell: cell[2])
            if v < HOST_PAIR_APART * v2:
                found.append((r, c, v, v2, TWO_FROM_HOST))
            continue
        if len(cells) < 3:
            continue
        typical = median(v for *_, v in cells)
        found += [(r, c, v, typical, path) for r, c, v in cells if v < PAIR_BELOW_SIBLINGS * typical]
    if not found:
        return []
    found.sort(key=lambda x: x[2] / x[3])
    shown = first_few([_below(r, c, v, m, path) for r, c, v, m, path in found], 6)
    worst = found[0][2] / found[0][3]
    two_only = all(path == TWO_FROM_HOST for *_, path in found)  # which of two is off cannot be told: never fail
    return [
        finding(
            code,
            f"{matrix.test}: {len(found)} pair(s) copy far below their siblings: {shown}.",
            severity=Severity.FAIL if worst < PAIR_FAILS_BELOW and not two_only else Severity.WARN,
            test=matrix.test,
            pairs=[
                {"from": r, "to": c, "gbps": v, "median_gbps": round(m, 2), "path": _path_name(path)}
                for r, c, v, m, path in found
            ],
        )
    ]


def _per_link_gbps(spec: GpuSpec | None) -> tuple[float, str]:
    """Give one NVLink's unidirectional GB/s and where the figure comes from.

    The catalog entry of the box's GPU, or, when the model is unknown, the slowest rate of any catalogued
    NVLink, so that an unknown GPU is never held to too high a figure.
    """
    if spec is not None and spec.nvlink_rate_gbps > 0:
        return spec.nvlink_rate_gbps, f"catalog entry {spec.key}"
    slowest = min(s.nvlink_rate_gbps for s in all_gpus() if s.nvlink_rate_gbps > 0)
    return slowest, "the slowest NVLink in the catalog, as the GPU model is unknown"


def _bandwidth_below_links(matrix: BandwidthMatrix, machine: Machine, spec: GpuSpec | None) -> list[Finding]:
    """Flag GPU pairs whose measured copy falls far below what the NVLinks `topo -m` gives them carry.

    The sibling comparison cannot see a box that is slow everywhere (every pair staged through the host, or
    links trained slow); the link count can: NV18 on an H100 carries 18 x 25 GB/s each way, and a healthy
    copy reaches 0.8 of it.
    """
    links = gpu_pair_links(machine)
    rate, basis = _per_link_gbps(spec)
    slow: list[tuple[str, str, float, int, float]] = []
    for row, column, value in _measured(matrix):
        pair = _gpu_pair(row, column)
        link = links.get(pair) if pair is not None else None
        if link is None or link.level != PathLevel.NVLINK or link.nvlinks < 1:
            continue
        capacity = link.nvlinks * rate
        if value < LINKS_WARN_BELOW * capacity:
            slow.append((row, column, value, link.nvlinks, capacity))
    if not slow:
        return []
    slow.sort(key=lambda x: x[2] / x[4])
    shown = first_few([f"{r}->{c} {v:.2f} GB/s over NV{n} ({v / cap:.0%})" for r, c, v, n, cap in slow], 6)
    worst = slow[0][2] / slow[0][4]
    return [
        finding(
            "nvbandwidth-below-links",
            f"{matrix.test}: {len(slow)} GPU pair(s) copy at under {LINKS_WARN_BELOW:.0%} of what their NVLinks "
            f"carry ({rate:g} GB/s per link each way, {basis}): {shown}.",
            severity=Severity.FAIL if worst < LINKS_FAIL_BELOW else Severity.WARN,
            test=matrix.test,
            per_link_gbps=rate,
            per_link_basis=basis,
            pairs=[
                {"from": r, "to": c, "gbps": v, "nvlinks": n, "links_gbps": cap, "ratio": round(v / cap, 3)}
                for r, c, v, n, cap in slow
            ],
        )
    ]


def _measured(matrix: BandwidthMatrix) -> Iterator[tuple[str, str, float]]:
    """Every measured cell off the diagonal: (row, column, GB/s)."""
    for row, values in zip(matrix.rows, matrix.values_gbps, strict=True):
        for column, value in zip(matrix.columns, values, strict=True):
            if isinstance(value, float) and row != column:
                yield row, column, value


def _gpu_pair(row: str, column: str) -> tuple[int, int] | None:
    """``GPU3``, ``GPU1`` -> (1, 3), the key of :func:`gpu_pair_links`; None when either side is the host."""
    if not (row.startswith("GPU") and column.startswith("GPU")):
        return None
    a, b = int(row[3:]), int(column[3:])
    return (min(a, b), max(a, b))


def _path_class(row: str, column: str, links: dict[tuple[int, int], Link]) -> str:
    """Name what a pair is compared with: host-GPU pairs with each other; GPU pairs by their path when known."""
    pair = _gpu_pair(row, column)
    if pair is None:
        return "host"
    link = links.get(pair)
    return "" if link is None else link.level.name


TWO_FROM_HOST = "host (two GPUs)"


def _below(row: str, column: str, gbps: float, typical: float, path: str) -> str:
    if path == TWO_FROM_HOST:
        other = f"the other GPU's {typical:.2f} (one of the two PCIe links is off)"
        return f"{row}->{column} {gbps:.2f} GB/s against {other}"
    return f"{row}->{column} {gbps:.2f} GB/s (median {typical:.2f}{_over(path)})"


def _path_name(path: str) -> str:
    return "host" if path == TWO_FROM_HOST else path or "unknown"


def _over(path: str) -> str:
    return f" over {PathLevel[path].label}" if path in PathLevel.__members__ else ""


@rule("p2p-unavailable", "nvlink-absent", needs=(P2P_STATUS, CAPTURES))
def p2p_without_topology(ctx: RuleContext) -> list[Finding]:
    """P2P statuses pasted without the topology (``nvidia-smi topo -p2p`` or p2pBandwidthLatencyTest alone).

    With a ``topo -m`` beside them the probe's rule judges each pair against its path; alone, a pair
    without peer access is still worth saying, with the path left for the user to paste. "GPU not supported"
    is the design of consumer cards: informational when the model is named, a warning when nothing names it (every
    copy goes through host memory, and nothing says that was the plan).
    """
    machine = ctx.machine
    if not machine.p2p or gpu_pair_links(machine):
        return []
    if not any(isinstance(v, str) for p in machine.p2p for v in (p.read, p.write)):
        return _no_nvlink_pairs(ctx)
    bad = [
        (p.a, p.b, status)
        for p in machine.p2p
        for status in dict.fromkeys(v for v in (p.read, p.write) if isinstance(v, str) and v != "ok")
    ]
    if not bad:
        return []
    reasons = sorted({s for *_, s in bad})
    consumer = reasons == ["gpu-not-supported"]
    by_design = consumer and ctx.spec is not None  # a named model whose GPUs refuse P2P: the model's design
    shown = ", ".join(f"GPU{a}-GPU{b} {s}" for a, b, s in bad[:6]) + (
        f" and {len(bad) - 6} more" if len(bad) > 6 else ""
    )
    return [
        finding(
            "p2p-unavailable",
            f"P2P is unavailable on {len(bad)} GPU pair(s): {shown}. "
            + (
                "The GPU model does not support P2P (consumer cards, by design): every GPU-to-GPU copy goes through "
                "host memory. "
                if consumer
                else ""
            )
            + "Paste `nvidia-smi topo -m` beside it to judge each pair against its path.",
            severity=Severity.INFO if by_design else Severity.WARN,
            pairs=[{"gpus": [a, b], "status": s, "path": "unknown"} for a, b, s in bad],
            likely_cause="the GPU model does not support P2P" if consumer else "unknown",
        )
    ]


def _no_nvlink_pairs(ctx: RuleContext) -> list[Finding]:
    """Judge ``nvidia-smi topo -p2p n`` pasted alone: no pair with NVLink is GPUs without any.

    Its NS is "no NVLink between the pair", which says nothing of peer access over PCIe (``-p2p r`` answers that);
    judged as a ``topo -m`` without an NV cell is.
    """
    pairs = [p for p in ctx.machine.p2p if isinstance(p.nvlink, str)]
    if not pairs or any(p.nvlink == "ok" for p in pairs):
        return []
    severity, why = nvlink_absent_severity(ctx)
    return [
        finding(
            "nvlink-absent",
            f"`nvidia-smi topo -p2p n` shows no NVLink between any of its {len(pairs)} GPU pair(s) "
            f"({', '.join(f'GPU{p.a}-GPU{p.b} {p.nvlink}' for p in pairs[:6])}): peer traffic goes over PCIe, or "
            "through host memory where PCIe peer access is off (`nvidia-smi topo -p2p r` shows which). "
            + as_sentence(why),
            severity=severity,
            gpus=[g.index for g in ctx.machine.gpus],
            slowest_path="unknown",
            reason=why,
        )
    ]


@rule("nvlink-link-down", needs=(NVLINK_PORTS, CAPTURES))
def all_links_inactive(ctx: RuleContext) -> list[Finding]:
    """Flag a GPU for which ``nvidia-smi nvlink -s`` prints NVML's "all links are inactive" sentence.

    The probe's link-down rule compares active ports with the model's design count; a paste of this
    sentence names no ports, so it is judged here: an NVLink model with no active link has lost its fabric.
    """
    machine, spec = ctx.machine, ctx.spec
    dead = [
        g.label
        for g in machine.gpus
        if isinstance(g.nvlink_ports, tuple) and any(p.link < 0 and p.state == "inactive" for p in g.nvlink_ports)
    ]
    if not dead or (spec is not None and spec.nvlink_generation == 0):
        return []
    if spec is not None and spec.build == "bridge":  # PCIe cards: NVLink comes only with a bridge, and that is optional
        every = len(dead) == len(machine.gpus)
        said = (
            f"no NVLink bridge is fitted, so the GPUs talk over PCIe (bridges are optional on {spec.name} cards)"
            if every
            else "a bridge is missing or unseated where the other cards have theirs"
        )
        down = finding(
            "nvlink-link-down",
            f"NVML reports every NVLink inactive on {', '.join(dead)}: {said}.",
            severity=Severity.INFO if every else Severity.WARN,
            gpus=dead,
        )
        return [down if every else dataclasses.replace(down, remedy=link_remedy(ctx))]
    down = finding(
        "nvlink-link-down",
        f"NVML reports every NVLink inactive on {', '.join(dead)}: the GPU is cut off from its NVLink peers.",
        severity=Severity.FAIL if spec is not None else Severity.WARN,
        gpus=dead,
    )
    return [dataclasses.replace(down, remedy=link_remedy(ctx))]


@rule("bench-run-hung", needs=(CAPTURES,))
def copy_test_stopped(ctx: RuleContext) -> Iterator[Finding]:
    """Report a pasted p2pBandwidthLatencyTest whose output ends on a matrix's title, before its first row.

    The sample prints each matrix's title and then copies between every pair: output that stops there is a copy
    that never finished. Between GPUs that report peer access that is most often ACS or the IOMMU redirecting the
    copy through the root complex, where it stalls; it fails, as a hung nccl-tests run does. Copies staged through
    host memory (P2P=Disabled) after a matrix the paste shows completed do not stall where those went: an excerpt
    cut at a title reads the same, and is said at information.
    """
    captures = _captures(ctx)
    stopped = [f for f in captures.copy_failures if f.kind == "stopped"]
    if not stopped:
        return
    first = stopped[0]
    measured_before = any(
        m.tool in COPY_SAMPLES and any(isinstance(v, float) for row in m.values_gbps for v in row)
        for m in captures.bandwidth
    )
    if "P2P=Disabled" in first.text and measured_before:
        yield finding(
            "bench-run-hung",
            f"p2pBandwidthLatencyTest's output ends on '{first.text}' (line {first.line}): copies staged through "
            "host memory do not stall where the matrix above them completed, so the paste most likely stops there.",
            severity=Severity.INFO,
            last_line=first.line,
            last_text=first.text,
        )
        return
    how = (
        " (with peer access off, so staged through host memory)"
        if "P2P=Disabled" in first.text
        else " (with peer access on, directly between the GPUs)"
        if "P2P=Enabled" in first.text
        else ""
    )
    yield finding(
        "bench-run-hung",
        f"p2pBandwidthLatencyTest printed '{first.text}' (line {first.line}) and then nothing: the copies it "
        f"measures there{how} never finished, or the paste stops there.",
        last_line=first.line,
        last_text=first.text,
    )


LATENCY_WARN_ABOVE_US = 100.0
"""A GPU-to-GPU copy takes 1-3 us over NVLink or PCIe P2P and 10-21 us staged through host memory
(p2pBandwidthLatencyTest on 8x RTX 4090, 2x and 4x RTX 6000 Ada, 4x V100 NVLink: fixtures p2p-8x4090-p2pbwlat-*,
p2p-2xrtx6000ada-*, p2p-4xrtx6000ada-*); five times the slowest healthy path is no longer a path working normally."""
LATENCY_FAIL_ABOVE_US = 1000.0
"""A millisecond per copy is a path that stalls: the 49 ms P2P writes of a box whose peer path was broken
(huggingface/transformers#20438) are the known case."""


@rule(
    Code(
        "p2p-latency-high",
        "fail",
        title="Copies between GPUs take far longer than any working path allows",
        remedy=(
            "Run p2pBandwidthLatencyTest (or `nvidia-smi topo -p2p r`) again with peer access on and off; when only "
            "the P2P=Enabled matrix is slow, peer traffic is redirected or stalled by ACS or the IOMMU: disable ACS "
            "on the PCIe bridges above the GPUs or set iommu=pt, and in a VM ask for P2P-enabled passthrough; "
            "until then NCCL_P2P_DISABLE=1 avoids the broken path."
        ),
    ),
    needs=(CAPTURES, P2P_LATENCY),
)
def p2p_latency_high(ctx: RuleContext) -> Iterator[Finding]:
    """GPU pairs whose measured copy latency is far above NVLink's, PCIe's or host memory's.

    p2pBandwidthLatencyTest times a small write between every pair, with peer access on and off. A working path
    answers in microseconds; milliseconds mean the copy stalls on its way (peer traffic redirected through a root
    complex that drops or delays it), and the collectives that take that path hang or crawl.
    """
    slow: list[tuple[LatencyMatrix, str, str, float]] = []
    for matrix in _captures(ctx).latency:
        for row, values in zip(matrix.rows, matrix.values_us, strict=False):
            for column, value in zip(matrix.columns, values, strict=False):
                if isinstance(value, float) and value > LATENCY_WARN_ABOVE_US and row != column:
                    slow.append((matrix, row, column, value))
    if not slow:
        return
    worst = max(value for *_, value in slow)
    tests = list(dict.fromkeys(m.test for m, *_ in slow))
    shown = first_few([f"{r}->{c} {v:,.0f} us" for _, r, c, v in sorted(slow, key=lambda t: -t[3])], 4)
    pairs = {tuple(sorted((r, c))) for _, r, c, _ in slow}
    enabled_only = all("P2P=Enabled" in t for t in tests)
    yield finding(
        "p2p-latency-high",
        f"{len(pairs)} GPU pair(s) take up to {worst:,.0f} us per copy in {' and '.join(tests)} ({shown}), where a "
        f"working path takes 1-21 us"
        + ("; only with peer access on, so the direct path between the GPUs is what stalls." if enabled_only else "."),
        severity=Severity.FAIL if worst > LATENCY_FAIL_ABOVE_US else Severity.WARN,
        pairs=sorted(f"{a}-{b}" for a, b in pairs),
        worst_us=worst,
        tests=tests,
    )
