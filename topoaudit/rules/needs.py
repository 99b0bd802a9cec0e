"""What a rule needs from the input, and how to tell whether an input held it.

A rule declares the kinds of fact it judges (``@rule(..., needs=(NCCL_LOG,))``). The judge runs a rule only
when the input held every one of them, and a report's JUnit says of each code either that it was judged or,
from the first need its input lacked, why not (a pasted matrix has no NVLink error counters: the probe's rules
were not run, not passed). Each need answers from the facts alone, so a saved report is answered the same way
as the run that wrote it.

A need also says what of its kind the input gave a rule to examine (``covers``): "the links between 8 GPUs",
"NCCL's transports between 12 rank pairs". A kind of fact can be present and hold nothing to judge (an NCCL log
of its start-up lines, a sweep that printed no row), and a need that is a condition, not evidence (the input
holds captures at all), covers nothing. The gate's verdict says what it covered from these: a PASS is a
verdict over evidence a rule examined, and an input whose rules examined none is "not judged"
(:mod:`topoaudit.judge.coverage`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from topoaudit.model.values import Unsupported

if TYPE_CHECKING:  # the facts a need reads; a pasted matrix loads none of their models
    from topoaudit.catalog import GpuSpec
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.identity import HardwareClass
    from topoaudit.model.machine import Machine
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.nccl_graph import NcclGraphPrint
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.paste import Hit
    from topoaudit.model.plan import DeployPlan
    from topoaudit.model.python_session import PythonSession
    from topoaudit.model.setpci import SetpciAcs
    from topoaudit.model.smi_query import SmiGpu, SmiQuery


class Context(Protocol):
    """What a need reads: the facts of one audit (a :class:`~topoaudit.rules.base.RuleContext`)."""

    @property
    def machine(self) -> Machine: ...  # noqa: D102
    @property
    def bench(self) -> BenchResult | Unsupported: ...  # noqa: D102
    @property
    def nccl(self) -> NcclView | Unsupported: ...  # noqa: D102
    @property
    def captures(self) -> Captures | Unsupported: ...  # noqa: D102
    @property
    def inspector(self) -> dict[str, Any] | Unsupported: ...  # noqa: D102
    @property
    def ras(self) -> dict[str, Any] | Unsupported: ...  # noqa: D102
    @property
    def plan(self) -> DeployPlan | Unsupported: ...  # noqa: D102
    @property
    def spec(self) -> GpuSpec | None: ...  # noqa: D102
    @property
    def design(self) -> GpuSpec | HardwareClass | None: ...  # noqa: D102
    @property
    def smi_query(self) -> SmiQuery | Unsupported: ...  # noqa: D102
    @property
    def graph_print(self) -> NcclGraphPrint | Unsupported: ...  # noqa: D102
    @property
    def setpci_acs(self) -> SetpciAcs | Unsupported: ...  # noqa: D102
    @property
    def python_session(self) -> PythonSession | Unsupported: ...  # noqa: D102
    @property
    def signatures(self) -> tuple[Hit, ...] | Unsupported: ...  # noqa: D102
    @property
    def expect_busbw_gbps(self) -> float | None: ...  # noqa: D102
    @property
    def text(self) -> str: ...  # noqa: D102


PROBE_SOURCES = ("nvml",)
"""Machine sources that record what only a live probe sees (a live audit and its saved snapshot)."""
PORT_SOURCES = (*PROBE_SOURCES, "nvidia-smi-nvlink")
"""Machine sources with NVLink port states and counters: a probe, or a pasted ``nvidia-smi nvlink -s/-e``."""
NVBANDWIDTH_COPY_TESTS = re.compile(r"device_to_device_memcpy_(read|write)_(ce|sm)$")
"""nvbandwidth tests that copy between one GPU pair at a time, one direction: what the pair's NVLinks carry."""


def _nothing(ctx: Context) -> str:
    return ""


@dataclass(frozen=True)
class Need:
    """A kind of fact; ``missing(ctx)`` is "" when the input held it, else why a rule needing it was not run.

    ``covers(ctx)`` names the evidence of this kind a rule needing it examines ("" when the input holds none to
    judge, and for a need that is a condition rather than evidence).
    """

    name: str
    missing: Callable[[Context], str]
    covers: Callable[[Context], str] = _nothing

    def __repr__(self) -> str:
        """Name the need (rule listings and test failures print it)."""
        return f"Need({self.name})"


def _probe_missing(ctx: Context) -> str:
    return (
        "needs facts only a live probe records (`topoaudit audit` or a snapshot); "
        f"a {ctx.machine.source} source does not have them"
    )


def _probe(ctx: Context) -> str:
    return "" if ctx.machine.source in PROBE_SOURCES else _probe_missing(ctx)


def _ports(ctx: Context) -> str:
    return "" if ctx.machine.source in PORT_SOURCES else _probe_missing(ctx)


def _p2p(ctx: Context) -> str:
    return "" if ctx.machine.p2p or ctx.machine.source in PROBE_SOURCES else _probe_missing(ctx)


def _given(field: str, why: str) -> Callable[[Context], str]:
    def missing(ctx: Context) -> str:
        return why if isinstance(getattr(ctx, field), Unsupported) else ""

    return missing


def _bandwidth(ctx: Context) -> tuple[object, ...]:
    captures = ctx.captures
    return () if isinstance(captures, Unsupported) else captures.bandwidth


def _copies(ctx: Context) -> bool:
    return any(m.tool == "nvbandwidth" and NVBANDWIDTH_COPY_TESTS.match(m.test) for m in _bandwidth(ctx))  # type: ignore[attr-defined]


def _latency(ctx: Context) -> str:
    captured = not isinstance(ctx.captures, Unsupported) and ctx.captures.latency
    return "" if captured else "judged from p2pBandwidthLatencyTest's latency matrices; this report has none"


def _latency_covers(ctx: Context) -> str:
    if isinstance(ctx.captures, Unsupported) or not ctx.captures.latency:
        return ""
    pairs = {(r, c) for m in ctx.captures.latency for r in m.rows for c in m.columns if r != c}
    return f"the copy latency of {_plural(len(pairs), 'GPU pair')} (p2pBandwidthLatencyTest)"


def _sample_copies(ctx: Context, *, peer_access: bool = True) -> list[object]:
    """p2pBandwidthLatencyTest's bandwidth matrices of three or more pairs, with peer access on (or either way).

    Copies staged through the host (peer access off) compare the GPUs' PCIe links: a finding from them judges,
    but a uniform matrix says nothing of the links the box's collectives use.
    """
    from topoaudit.model.nccl_topo import COPY_SAMPLES

    return [
        m
        for m in _bandwidth(ctx)
        if m.tool in COPY_SAMPLES  # type: ignore[attr-defined]
        and (m.peer_access if peer_access else "bandwidth" in m.title.lower())  # type: ignore[attr-defined]
        and sum(r != c for r in m.rows for c in m.columns) >= 3  # type: ignore[attr-defined]
    ]


def _sample_copies_missing(ctx: Context) -> str:
    if _sample_copies(ctx, peer_access=False):
        return ""
    return "judged from p2pBandwidthLatencyTest's bandwidth matrices of three or more GPU pairs; none"


def _peer_copies(ctx: Context) -> list[tuple[str, str]]:
    """List the GPU pairs a copy test measured with peer access on (p2pBandwidthLatencyTest, busGrind)."""
    from topoaudit.model.nccl_topo import COPY_SAMPLES

    return sorted(
        {
            (r, c)
            for m in _bandwidth(ctx)
            if m.tool in COPY_SAMPLES and m.peer_access  # type: ignore[attr-defined]
            for r in m.rows  # type: ignore[attr-defined]
            for c in m.columns  # type: ignore[attr-defined]
            if r != c and r.startswith("GPU") and c.startswith("GPU")
        }
    )


def _peer_copies_missing(ctx: Context) -> str:
    if _peer_copies(ctx):
        return ""
    return "judged from a copy test's bandwidth matrices with peer access on (P2P=Enabled); none"


def _peer_copies_covers(ctx: Context) -> str:
    pairs = {tuple(sorted(pair)) for pair in _peer_copies(ctx)}
    return f"the peer copies of {_plural(len(pairs), 'GPU pair')} against PCIe's floor" if pairs else ""


def _peer_and_staged(ctx: Context) -> list[str]:
    """Return the directions p2pBandwidthLatencyTest printed both with peer access and staged through the host."""
    from topoaudit.model.nccl_topo import COPY_SAMPLES

    copies = [m for m in _bandwidth(ctx) if m.tool in COPY_SAMPLES]  # type: ignore[attr-defined]
    peer = {m.direction for m in copies if m.peer_access}  # type: ignore[attr-defined]
    staged = {m.direction for m in copies if m.peer_access is False}  # type: ignore[attr-defined]
    return sorted(peer & staged, reverse=True)  # unidirectional first, as the sample prints them


def _peer_and_staged_missing(ctx: Context) -> str:
    if _peer_and_staged(ctx):
        return ""
    return "judged from p2pBandwidthLatencyTest's P2P=Enabled and P2P=Disabled bandwidth matrices; not both"


def _peer_and_staged_covers(ctx: Context) -> str:
    directions = _peer_and_staged(ctx)
    if not directions:
        return ""
    both = " and ".join(directions)
    return f"peer copies against host-staged copies ({both}, p2pBandwidthLatencyTest)"


def _sample_copies_covers(ctx: Context) -> str:
    copies = _sample_copies(ctx)
    pairs = {
        tuple(sorted((r, c)))
        for m in copies
        for r in m.rows  # type: ignore[attr-defined]
        for c in m.columns  # type: ignore[attr-defined]
        if r != c
    }
    if not pairs:
        return ""  # copies staged through the host only: a finding from them judges, their agreement does not
    tools = ", ".join(sorted({m.tool for m in copies}))  # type: ignore[attr-defined]
    return f"the copy bandwidth of {_plural(len(pairs), 'GPU pair')} against each other ({tools})"


def _topology_dump(ctx: Context) -> str:
    dump = None if isinstance(ctx.captures, Unsupported) else ctx.captures.nccl_topology
    judged = dump is not None and not isinstance(dump, Unsupported) and dump.kind == "topology"
    return "" if judged else "judged from an NCCL topology dump (NCCL_TOPO_DUMP_FILE); this report has none"


def _nvbandwidth(ctx: Context) -> str:
    judged = any(m.tool == "nvbandwidth" for m in _bandwidth(ctx))  # type: ignore[attr-defined]
    outcomes = not isinstance(ctx.captures, Unsupported) and (ctx.captures.copy_failures or ctx.captures.waived_tests)
    return "" if judged or outcomes else "judged from nvbandwidth output; this report has none"


def _nvbandwidth_copies(ctx: Context) -> str:
    return "" if _copies(ctx) else "judged from nvbandwidth's device_to_device_memcpy tests; this report has none"


def _gpu_links(ctx: Context) -> str:
    from topoaudit.model.topology import gpu_pair_links

    if gpu_pair_links(ctx.machine):
        return ""
    return "judged against the NVLinks of `nvidia-smi topo -m` pasted before nvbandwidth's output; none was"


def _copies_and_sweep(ctx: Context) -> str:
    if _copies(ctx) and not isinstance(ctx.bench, Unsupported):
        return ""
    return "judged where nvbandwidth's GPU copies and an nccl-tests sweep of the same box are given together"


CPU_TIMED = ("kernel_cpu", "collective_cpu")
"""coll_timing_source values the CPU timed (NVIDIA/nccl plugins/profiler/inspector/inspector.cc): never mixed with
GPU-timed records, and not judged."""


def _large_all_reduce(ctx: Context) -> str:
    summary = ctx.inspector
    if isinstance(summary, Unsupported):
        return "judged from NCCL Inspector output; this report has none"
    rows = summary.get("communicators", ())
    if any(
        r.get("coll") == "AllReduce"
        and isinstance(r.get("large_median_busbw_gbps"), (int, float))
        and r.get("timing_source") not in CPU_TIMED
        for r in rows
    ):
        return ""
    mib = summary.get("large_message_bytes", 0) // (1024 * 1024)
    cpu = " timed on the GPU" if summary.get("cpu_timed_records") else ""
    return f"the NCCL Inspector output has no all-reduce of {mib} MiB or more{cpu} to judge"


def _plural(count: int, noun: str, plural: str = "") -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _probe_covers(ctx: Context) -> str:
    return f"a live probe of {_plural(len(ctx.machine.gpus), 'GPU')} (NVML, sysfs and the host)"


def _ports_covers(ctx: Context) -> str:
    with_ports = [g for g in ctx.machine.gpus if isinstance(g.nvlink_ports, tuple)]
    return f"the NVLink ports of {_plural(len(with_ports), 'GPU')}" if with_ports else ""


def _p2p_covers(ctx: Context) -> str:
    pairs = {(min(s.a, s.b), max(s.a, s.b)) for s in ctx.machine.p2p}
    return f"the peer-to-peer status of {_plural(len(pairs), 'GPU pair')}" if pairs else ""


def sweep_held_to_anything(ctx: Context) -> bool:
    """Whether a sweep's figures were held to something, so that a PASS over it means something held.

    Something: an expected figure (the model's, or NCCL's arithmetic on the box), the user's --expect-busbw, a data
    check that ran (#wrong a number, not N/A) on a message past the latency-sized ones
    (:data:`~topoaudit.model.bench.LATENCY_SIZES_BELOW_BYTES`: a table of those alone is most often the head of a run
    the paste cut), or other groups to compare; never a run of one rank.
    """
    from topoaudit.model.bench import LATENCY_SIZES_BELOW_BYTES

    bench = ctx.bench
    if isinstance(bench, Unsupported) or bench.one_rank:
        return False  # a run of one rank moves nothing between GPUs: its figures hold nothing of the links
    groups = [g for g in bench.groups if g.rows]
    checked = any(
        (isinstance(r.wrong, int) or isinstance(r.inplace_wrong, int)) and r.size_bytes >= LATENCY_SIZES_BELOW_BYTES
        for g in groups
        for r in g.rows
    )
    return _figures_held(ctx) or checked


def _figures_held(ctx: Context) -> bool:
    """Whether a sweep's bandwidth was held to a figure.

    The model's (or NCCL's arithmetic on the box), the user's --expect-busbw, or other groups of the same run.
    """
    bench = ctx.bench
    if isinstance(bench, Unsupported):
        return False
    groups = [g for g in bench.groups if g.rows]
    expected = any(isinstance(g.expected_busbw_gbps, float) for g in groups)
    return expected or ctx.expect_busbw_gbps is not None or len(groups) > 1


def _bench_covers(ctx: Context) -> str:
    bench = ctx.bench
    if isinstance(bench, Unsupported):
        return ""
    sizes = {row.size_bytes for group in bench.groups for row in group.rows}
    if not sizes:
        return ""  # a run that printed no result row: what it shows is a finding's, not a figure held
    if not sweep_held_to_anything(ctx):
        return ""  # figures with nothing to compare them with, and no data check: nothing was judged
    ranks = _plural(bench.world_size, "rank") if bench.world_size else "ranks the paste does not show"
    collective = bench.collective.replace("_", "-")
    article = "an" if collective[:1] in "aeiou" else "a"
    sweep = f"{article} {collective} sweep of {ranks} ({_plural(len(sizes), 'message size')})"
    if _figures_held(ctx):
        return sweep
    # its data check alone held: a PASS then says nothing of its bandwidth, and says so
    why = next(
        (g.expected_busbw_gbps.reason for g in bench.groups if isinstance(g.expected_busbw_gbps, Unsupported)),
        "no GPU model",
    )
    why = "no GPU model" if why.startswith("the GPU model is unknown") else why
    return f"the data check (#wrong) of {sweep}; its bandwidth held to no figure ({why}; no --expect-busbw)"


def _topology(ctx: Context) -> str:
    from topoaudit.model.topology import gpu_pair_links

    count = len(ctx.machine.gpus)
    if count >= 2 and gpu_pair_links(ctx.machine):
        return ""
    if count < 2 and isinstance(ctx.nccl, Unsupported) and isinstance(ctx.bench, Unsupported):
        return "judged between GPUs; the input shows " + ("one GPU" if count else "no GPU")
    return f"judged from the links between GPUs (`nvidia-smi topo -m`); the {ctx.machine.source} input describes none"


def nvlink_undecided(ctx: Context) -> bool:
    """GPU pairs described, none on NVLink, and no model to say whether that is the design.

    PCIe cards have no NVLink; an NVSwitch board whose links are all down shows the same matrix. Unless the layout
    shows PCIe cards (``judge.identify``), neither its links nor its NIC paths then judge the box: it is not judged,
    never PASS, until the model is named.
    """
    from topoaudit.model.machine import PathLevel
    from topoaudit.model.topology import gpu_pair_links, nvlink_pairs

    machine = ctx.machine
    if ctx.design is not None or len(machine.gpus) < 2 or nvlink_pairs(machine):
        return False
    return any(link.level != PathLevel.UNKNOWN for link in gpu_pair_links(machine).values())  # paths it could read


def _topology_covers(ctx: Context) -> str:
    from topoaudit.model.topology import unknown_pairs

    if nvlink_undecided(ctx):
        return ""
    n = len(ctx.machine.gpus)
    unknown = len(unknown_pairs(ctx.machine))  # a matrix cut before its last rows: the missing GPUs' pairs
    if unknown:
        pairs = n * (n - 1) // 2
        return f"the links of {pairs - unknown} of the {pairs} pairs of {n} GPUs ({ctx.machine.source})"
    return f"the links between {n} GPUs ({ctx.machine.source})"


def _nic_paths(ctx: Context) -> str:
    gpus = {g.label for g in ctx.machine.gpus}
    nics = {n.label for n in ctx.machine.nics}
    if any((lk.a in gpus and lk.b in nics) or (lk.b in gpus and lk.a in nics) for lk in ctx.machine.links):
        return ""
    shown = "no path to them" if ctx.machine.nics else "no NIC"
    return f"judged from the paths between GPUs and NICs (`nvidia-smi topo -m`); the input shows {shown}"


def _nic_paths_covers(ctx: Context) -> str:
    if nvlink_undecided(ctx):
        return ""
    return f"the paths from {_plural(len(ctx.machine.gpus), 'GPU')} to {_plural(len(ctx.machine.nics), 'NIC')}"


def _nccl_covers(ctx: Context) -> str:
    """Name what in an NCCL log the NCCL rules examine.

    Transports, graph paths beside a view of the links, GPUDirect RDMA between nodes, NVLS on an NVSwitch box;
    start-up lines, ring orders and NIC lists alone judge nothing.
    """
    view = ctx.nccl
    if isinstance(view, Unsupported):
        return ""
    said = []
    pairs = {(min(t.src_rank, t.dst_rank), max(t.src_rank, t.dst_rank)) for t in view.transports}
    if pairs:
        said.append(f"NCCL's transports between {_plural(len(pairs), 'rank pair')}")
    if view.patterns and (view.system_links or ctx.machine.links):
        said.append(f"NCCL's graph paths ({_plural(len(view.patterns), 'pattern')}) beside its view of the links")
    multi_node = len(view.hosts) > 1 or any(
        isinstance(r.nodes_in_comm, int) and r.nodes_in_comm > 1 for r in view.ranks
    )
    if view.gdr and multi_node:
        said.append(f"GPUDirect RDMA between nodes ({_plural(len(view.gdr), 'HCA decision')})")
    nvls = view.nvls_support or any(isinstance(c.nvls, int) for c in view.channel_counts)
    spec = ctx.spec
    switched = (
        spec.build == "nvswitch" and spec.nvlink_generation >= 4
        if spec is not None
        else bool(ctx.machine.nvswitches) or any(lk.nvlinks >= 18 for lk in ctx.machine.links)
    )
    if nvls and switched:
        said.append("NVLS on an NVSwitch box")
    return "; ".join(said)


def _captured(kind: str) -> Callable[[Context], str]:
    def covers(ctx: Context) -> str:
        count = len([m for m in _bandwidth(ctx) if m.tool == kind])  # type: ignore[attr-defined]
        return f"{kind}'s {_plural(count, 'matrix', 'matrices')}" if count else ""

    return covers


def _dump_covers(ctx: Context) -> str:
    dump = None if isinstance(ctx.captures, Unsupported) else ctx.captures.nccl_topology
    count = len(dump.gpus) if dump is not None and not isinstance(dump, Unsupported) else 0
    return f"NCCL's topology dump of {_plural(count, 'GPU')}" if count else ""  # no GPU in it: nothing judged


def _stated(text: str) -> Callable[[Context], str]:
    return lambda ctx: text


def _counted(field: str, noun: str) -> Callable[[Context], str]:
    """Covers of a paste's tuple of facts: how many the rules examine ("" when it holds none)."""

    def covers(ctx: Context) -> str:
        found = getattr(ctx, field)
        return "" if isinstance(found, Unsupported) or not found else _plural(len(found), noun)

    return covers


def unexplained_messages(ctx: Context) -> int:
    """Count the paste's known messages that are the catalog's fallbacks.

    A fallback is a framework's wrapper naming no cause, or an error or warning the catalog has no entry for.
    """
    from topoaudit.parse.signatures import catalog

    hits = ctx.signatures
    if isinstance(hits, Unsupported):
        return 0
    cat = catalog()
    return sum(cat.get(hit.signature).tier == "fallback" for hit in hits)


_ONE_GPU_RUN = re.compile(r"\bCUDA_VISIBLE_DEVICES=\d+(?![\d,]).*\s-g\s*1\b")
"""An nccl-tests command line that shows one GPU and asks for one (``CUDA_VISIBLE_DEVICES=1 ... -g 1``)."""
_LAUNCHER = re.compile(r"\b(?:mpirun|mpiexec|srun|torchrun)\b|\s-(?:np|n)\s*\d")


def named_not_judged(hit: Hit) -> bool:
    """Tell a known message shown at information that holds nothing to a measure.

    A notice its catalog entry says judges nothing (``judges = false``: a wait that a hang or a long compilation
    explains alike), a transfer test's figure any healthy path of its kind could give
    (:mod:`topoaudit.rules.transfer_figures`), or PyTorch's watchdog timing a collective out against a timeout set
    below a second (a test's setting).
    """
    from topoaudit.parse.signatures import catalog
    from topoaudit.rules.transfer_figures import TRANSFER_TABLES, reading

    if not catalog().get(hit.signature).judges:
        return True
    if hit.signature in TRANSFER_TABLES:
        return reading(hit) == "unjudged"
    return hit.signature == "torch-watchdog-timeout" and _timeout_set_too_short(hit)


def _short_of_the_gpus(hit: Hit) -> bool:
    """Tell a named run failure that never reached the GPUs: shown, but it judges nothing.

    ``run-failed`` at info, not a fallback: a rendezvous that did not complete, a process that saw no GPU, or one that
    crashed where the paste does not say.
    """
    from topoaudit.parse.signatures import catalog

    entry = catalog().get(hit.signature)
    return entry.code == "run-failed" and entry.severity == "info" and entry.tier != "fallback"


WATCHDOG_TIMEOUT_FLOOR_MS = 1_000
"""A process group timeout below this is a setting no collective can meet (a test sets 1 ms on purpose): its
watchdog's timeout says nothing of the links. PyTorch's default is 10 or 30 minutes."""


def _timeout_set_too_short(hit: Hit) -> bool:
    """Whether a watchdog timeout line names a timeout below :data:`WATCHDOG_TIMEOUT_FLOOR_MS`."""
    value = hit.values.get("timeout_ms", "")
    return value.isdigit() and int(value) < WATCHDOG_TIMEOUT_FLOOR_MS


def says_nothing(hit: Hit) -> bool:
    """Tell a known message that says nothing about the box.

    NHC's failure of a check of the host itself (its memory, file systems: ``nhc-host-check-failed``), a setting
    that changes only what NCCL prints, a setting the catalog knows only as set (``nccl-env-set``: no
    entry says it changes the path) or as harmless (an info entry: ``NCCL_IB_HCA set to mlx5``, a command line's
    ``NCCL_P2P_LEVEL=NVL``, which the rule reports and does not judge), a setting that only tunes NCCL
    (``NCCL_ALGO=RING`` on a command line: it says how the run was asked to go, nothing of the box), or a path
    setting on a command line that runs one GPU (there is no path between GPUs for it to change).
    """
    from topoaudit.model.finding import Severity
    from topoaudit.model.nccl import QUIET
    from topoaudit.model.nccl_effect import effect
    from topoaudit.parse.signatures import catalog

    name = hit.values.get("var", "")
    if name in QUIET or hit.signature in ("nccl-env-set", "nhc-host-check-failed"):
        return True
    entry = catalog().get(hit.signature)
    if entry.code != "nccl-env-override":
        return False
    if entry.severity == Severity.INFO:  # a setting its catalog entry knows does no harm: the box is not in it
        return True
    value = hit.values.get("value") or hit.values.get("level") or ""
    said = effect(name, value) if name and value else None
    if name and value and (said is None or said[0] == Severity.INFO):
        return True
    return bool(_ONE_GPU_RUN.search(hit.text)) and not _LAUNCHER.search(hit.text)


MODEL_DECIDES = frozenset({"smi-nvlink-inactive", "smi-nvlink-all-inactive", "dcgm-nvlink-down"})
"""Messages whose meaning is the model's to decide: an NVLink port `nvidia-smi nvlink -s` shows inactive, or DCGM
reports down, is a fault on an SXM board and the design on a PCIe card (an H100 NVL wires 12 of its 18). Without the
model they judge nothing."""


def _undecided(ctx: Context, hit: Hit) -> bool:
    """Whether only the GPU model could decide what this message means, and nothing names the model."""
    return hit.signature in MODEL_DECIDES and getattr(ctx, "spec", None) is None


def undecided_by_model(ctx: Context) -> int:
    """Count the paste's messages that only the GPU model could decide, when nothing names the model."""
    hits = ctx.signatures
    return 0 if isinstance(hits, Unsupported) else sum(_undecided(ctx, hit) for hit in hits)


def _known_messages_covers(ctx: Context) -> str:
    """Count the messages whose meaning the catalog knows.

    A fallback (a warning it has no entry for) judges nothing, nor does a message only the unnamed model could decide.
    """
    hits = ctx.signatures
    if isinstance(hits, Unsupported) or not hits:
        return ""
    from topoaudit.rules.one_node import sockets_of_one_node

    one_node = sockets_of_one_node(ctx)
    known = len(
        [
            hit
            for hit in hits
            if not says_nothing(hit)
            and not _short_of_the_gpus(hit)
            and not named_not_judged(hit)
            and hit.line not in one_node
            and not _undecided(ctx, hit)
        ]
    )
    known -= unexplained_messages(ctx)
    return _plural(known, "known message") if known else ""


def _smi_query_covers(ctx: Context) -> str:
    query = ctx.smi_query
    if isinstance(query, Unsupported) or not query.gpus:
        return ""
    judged = [g for g in query.gpus if _smi_gpu_judgeable(g)]
    if not judged:
        return ""  # e.g. a table of names and temperatures: nothing of the interconnect to hold to anything
    return f"`{query.command}` of {_plural(len(judged), 'GPU')}"


def _smi_gpu_judgeable(gpu: SmiGpu) -> bool:
    """Whether the GPU's lines hold what the rules over nvidia-smi judge: its fabric state, or a PCIe link figure."""
    from topoaudit.model.smi_query import FabricInfo, PcieLink

    if isinstance(gpu.fabric, FabricInfo) and isinstance(gpu.fabric.state, str):
        return True
    link = gpu.pcie
    if not isinstance(link, PcieLink):
        return False
    pairs = ((link.width_current, link.width_max), (link.generation_current, link.generation_max))
    return any(isinstance(now, int) and isinstance(most, int) for now, most in pairs)


def _setpci_covers(ctx: Context) -> str:
    read = ctx.setpci_acs
    if isinstance(read, Unsupported) or not read.bridges:
        return ""
    return f"the ACS control of {_plural(len(read.bridges), 'PCIe bridge')} (setpci)"


def _tensor_copies_covers(ctx: Context) -> str:
    read = ctx.python_session
    if isinstance(read, Unsupported) or not read.gpu_copies:
        return ""
    copies = len(read.gpu_copies)
    return f"the tensors printed before and after {copies} cop{'y' if copies == 1 else 'ies'} between GPUs"


def _peer_queries_covers(ctx: Context) -> str:
    read = ctx.python_session
    if isinstance(read, Unsupported) or not read.peer_queries:
        return ""
    return f"{_plural(len(read.peer_queries), 'peer-access query', 'peer-access queries')} of a Python session"


def _graph_print_covers(ctx: Context) -> str:
    """Say what the print's rules held: the CPU's links to the PCIe switches (a VM's bridges), the graphs searched.

    Paths alone (``NET/0 :GPU/31000 (3/1.25/PHB)``) are printed by every box and judge nothing.
    """
    graph = ctx.graph_print
    if isinstance(graph, Unsupported):
        return ""
    bridges = [link for link in graph.links_of("PCI") if link.src.startswith("CPU/") and link.dst.startswith("PCI/")]
    if not (bridges or graph.searches):
        return ""
    return f"NCCL's topology print ({_plural(len(graph.links), 'link')}, {_plural(len(graph.paths), 'path')})"


PROBE = Need("a live probe", _probe, _probe_covers)
"""NVML, sysfs and the host's environment, from ``topoaudit audit`` or its snapshot."""
NVLINK_PORTS = Need("NVLink port states and counters", _ports, _ports_covers)
"""From a probe, or a pasted ``nvidia-smi nvlink -s/-e``."""
P2P_STATUS = Need("GPU peer-to-peer status", _p2p, _p2p_covers)
"""From a probe, or a pasted ``nvidia-smi topo -p2p`` / p2pBandwidthLatencyTest."""
NCCL_LOG = Need(
    "an NCCL_DEBUG=INFO log", _given("nccl", "judged from an NCCL_DEBUG=INFO log; this report has none"), _nccl_covers
)
BENCH = Need(
    "an all-reduce sweep",
    _given("bench", "no bench in this report (run `topoaudit bench` to measure)"),
    _bench_covers,
)
"""``topoaudit bench``, ``audit --bench`` or a pasted nccl-tests run."""
NCCL_TOPOLOGY_DUMP = Need("an NCCL topology dump", _topology_dump, _dump_covers)
NVBANDWIDTH = Need("nvbandwidth output", _nvbandwidth, _captured("nvbandwidth"))
NVBANDWIDTH_COPIES = Need("nvbandwidth's GPU-to-GPU copies", _nvbandwidth_copies)
P2P_COPIES = Need("p2pBandwidthLatencyTest's copies", _sample_copies_missing, _sample_copies_covers)
"""From a pasted ``Unidirectional/Bidirectional P2P=Enabled/Disabled Bandwidth Matrix (GB/s)``."""
PEER_COPIES = Need("copies with peer access on", _peer_copies_missing, _peer_copies_covers)
"""A copy test's ``P2P=Enabled`` bandwidth matrix of any number of GPU pairs (two GPUs make one pair)."""
P2P_VERSUS_STAGED = Need("peer copies beside host-staged copies", _peer_and_staged_missing, _peer_and_staged_covers)
"""p2pBandwidthLatencyTest's P2P=Enabled and P2P=Disabled bandwidth matrices of one direction."""
P2P_LATENCY = Need("GPU-to-GPU copy latency", _latency, _latency_covers)
"""From a pasted p2pBandwidthLatencyTest's ``P2P=... Latency Matrix (us)``."""
GPU_LINKS = Need("the GPU pairs' links (`nvidia-smi topo -m`)", _gpu_links)
COPIES_AND_SWEEP = Need(
    "nvbandwidth's copies with an nccl-tests sweep", _copies_and_sweep, _stated("nvbandwidth's copies beside the sweep")
)
NCCL_INSPECTOR = Need(
    "NCCL Inspector output with large all-reduces", _large_all_reduce, _stated("NCCL Inspector's large all-reduces")
)
NCCL_RAS = Need(
    "NCCL RAS output",
    _given("ras", "judged from NCCL RAS output (`ncclras`); this report has none"),
    _stated("NCCL RAS's view of its communicators"),
)
CAPTURES = Need(
    "NCCL's XML dumps or captured matrices",
    _given("captures", "judged from NCCL's XML dumps, nvbandwidth or nvidia-smi captures; this report has none"),
)
SIGNATURES = Need(
    "pasted text looked through for known messages",
    _given("signatures", "judged from pasted text (an NCCL log, a traceback, error lines); this input has none"),
    _known_messages_covers,
)
SMI_QUERY = Need(
    "nvidia-smi -q output",
    _given("smi_query", "judged from `nvidia-smi -q`; this input has none"),
    _smi_query_covers,
)
_ABOUT_LINKS = re.compile(
    r"nvl|nvswitch|pcie|gpu_bw|bandwidth|nccl|\bib|_ib|hca|rdma|nic|eth|topo|p2p|fabric|link", re.IGNORECASE
)
"""A health check about the interconnect (NHC's check_nvlink_status, check_gpu_bw, check_ib_*; DCGM's PCIe and
NVLink rows): a pass of such a check judged something. A pass of another (ECC, clocks) or one with no message
says nothing about the links."""


def _health_covers(ctx: Context) -> str:
    events = getattr(ctx, "health")  # noqa: B009 (a RuleContext field the Protocol leaves out, as _counted reads)
    if isinstance(events, Unsupported) or not events:
        return ""
    judged = [
        e
        for e in events
        if not e.of_the_host_only and (e.severity.value != "info" or _ABOUT_LINKS.search(f"{e.check} {e.text}"))
    ]
    return _plural(len(judged), "health line") if judged else ""


HEALTH_LINES = Need(
    "NHC, DCGM or kernel-log lines",
    _given("health", "judged from NHC, DCGM or kernel-log (Xid) lines; this input has none"),
    _health_covers,
)
SETPCI_ACS = Need(
    "setpci reads of PCIe bridges' ACS control",
    _given("setpci_acs", "judged from `setpci` reads of the bridges' ACS control; this input has none"),
    _setpci_covers,
)
TENSOR_COPIES = Need(
    "tensors printed after a copy between GPUs",
    _given(
        "python_session",
        "judged from tensors a Python session printed after copying them between GPUs; this input has none",
    ),
    _tensor_copies_covers,
)
PEER_QUERIES = Need(
    "peer-access queries a Python session answered",
    _given("python_session", "judged from the peer-access queries a Python session printed; this input has none"),
    _peer_queries_covers,
)
PYTHON_SESSION = Need(
    "a Python session's tensors or peer-access queries",
    _given("python_session", "judged from a pasted Python session; this input has none"),
)
NCCL_GRAPH_PRINT = Need(
    "NCCL's topology print",
    _given("graph_print", "judged from NCCL's topology print (NCCL_DEBUG_SUBSYS=GRAPH); this input has none"),
    _graph_print_covers,
)
PLAN = Need(
    "a deploy plan",
    _given("plan", "judged where a deploy plan is asked for (`--plan-params`)"),
    _stated("the deploy plan against the box's NVLink domains"),
)
FLEET = Need("many node reports", lambda ctx: "judged across many nodes by `topoaudit fleet`, not on one node's report")
"""Codes only ``topoaudit fleet`` raises, comparing node reports: never judged on one node's report."""
TOPOLOGY = Need("the links between GPUs (`nvidia-smi topo -m`)", _topology, _topology_covers)
"""Two or more GPUs and the paths between them: a ``topo -m``, a probe, a snapshot, an NCCL topology dump."""
NIC_PATHS = Need("the paths between GPUs and NICs", _nic_paths, _nic_paths_covers)


def first_missing(needs: tuple[Need, ...], ctx: Context) -> str:
    """Why the input lacks the first of ``needs`` it lacks; "" when it holds them all."""
    for need in needs:
        why = need.missing(ctx)
        if why:
            return why
    return ""


def covered(needs: tuple[Need, ...], ctx: Context) -> tuple[str, ...]:
    """Return the evidence ``needs`` gave a rule to examine on ``ctx``: each need's ``covers``, those with any."""
    return tuple(text for need in needs if (text := need.covers(ctx)))
