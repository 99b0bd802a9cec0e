"""What a rule needs from the input, and how to tell whether an input held it.

A rule declares the kinds of fact it judges (``@rule(..., needs=(NCCL_LOG,))``). The judge runs a rule only
when the input held every one of them, and a report's JUnit says of each code either that it was judged or,
from the first need its input lacked, why not (a pasted matrix has no NVLink error counters: the probe's rules
were not run, not passed). Each need answers from the facts alone, so a saved report is answered the same way
as the run that wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from topoaudit.model.values import Unsupported

if TYPE_CHECKING:  # the facts a need reads; a pasted matrix loads none of their models
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.machine import Machine
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.plan import DeployPlan


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


PROBE_SOURCES = ("nvml",)
"""Machine sources that record what only a live probe sees (a live audit and its saved snapshot)."""
PORT_SOURCES = (*PROBE_SOURCES, "nvidia-smi-nvlink")
"""Machine sources with NVLink port states and counters: a probe, or a pasted ``nvidia-smi nvlink -s/-e``."""
NVBANDWIDTH_COPY_TESTS = re.compile(r"device_to_device_memcpy_(read|write)_(ce|sm)$")
"""nvbandwidth tests that copy between one GPU pair at a time, one direction: what the pair's NVLinks carry."""


@dataclass(frozen=True)
class Need:
    """A kind of fact; ``missing(ctx)`` is "" when the input held it, else why a rule needing it was not run."""

    name: str
    missing: Callable[[Context], str]

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


def _topology_dump(ctx: Context) -> str:
    dump = None if isinstance(ctx.captures, Unsupported) else ctx.captures.nccl_topology
    judged = dump is not None and not isinstance(dump, Unsupported) and dump.kind == "topology"
    return "" if judged else "judged from an NCCL topology dump (NCCL_TOPO_DUMP_FILE); this report has none"


def _nvbandwidth(ctx: Context) -> str:
    judged = any(m.tool == "nvbandwidth" for m in _bandwidth(ctx))  # type: ignore[attr-defined]
    return "" if judged else "judged from nvbandwidth output; this report has none"


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


PROBE = Need("a live probe", _probe)
"""NVML, sysfs and the host's environment, from ``topoaudit audit`` or its snapshot."""
NVLINK_PORTS = Need("NVLink port states and counters", _ports)
"""From a probe, or a pasted ``nvidia-smi nvlink -s/-e``."""
P2P_STATUS = Need("GPU peer-to-peer status", _p2p)
"""From a probe, or a pasted ``nvidia-smi topo -p2p`` / p2pBandwidthLatencyTest."""
NCCL_LOG = Need("an NCCL_DEBUG=INFO log", _given("nccl", "judged from an NCCL_DEBUG=INFO log; this report has none"))
BENCH = Need("an all-reduce sweep", _given("bench", "no bench in this report (run `topoaudit bench` to measure)"))
"""``topoaudit bench``, ``audit --bench`` or a pasted nccl-tests run."""
NCCL_TOPOLOGY_DUMP = Need("an NCCL topology dump", _topology_dump)
NVBANDWIDTH = Need("nvbandwidth output", _nvbandwidth)
NVBANDWIDTH_COPIES = Need("nvbandwidth's GPU-to-GPU copies", _nvbandwidth_copies)
GPU_LINKS = Need("the GPU pairs' links (`nvidia-smi topo -m`)", _gpu_links)
COPIES_AND_SWEEP = Need("nvbandwidth's copies with an nccl-tests sweep", _copies_and_sweep)
NCCL_INSPECTOR = Need("NCCL Inspector output with large all-reduces", _large_all_reduce)
NCCL_RAS = Need("NCCL RAS output", _given("ras", "judged from NCCL RAS output (`ncclras`); this report has none"))
CAPTURES = Need(
    "NCCL's XML dumps or captured matrices",
    _given("captures", "judged from NCCL's XML dumps, nvbandwidth or nvidia-smi captures; this report has none"),
)
SIGNATURES = Need(
    "pasted text looked through for known messages",
    _given("signatures", "judged from pasted text (an NCCL log, a traceback, error lines); this input has none"),
)
SMI_QUERY = Need("nvidia-smi -q output", _given("smi_query", "judged from `nvidia-smi -q`; this input has none"))
HEALTH_LINES = Need(
    "NHC, DCGM or kernel-log lines",
    _given("health", "judged from NHC, DCGM or kernel-log (Xid) lines; this input has none"),
)
NCCL_GRAPH_PRINT = Need(
    "NCCL's topology print",
    _given("graph_print", "judged from NCCL's topology print (NCCL_DEBUG_SUBSYS=GRAPH); this input has none"),
)
PLAN = Need("a deploy plan", _given("plan", "judged where a deploy plan is asked for (`--plan-params`)"))
FLEET = Need("many node reports", lambda ctx: "judged across many nodes by `topoaudit fleet`, not on one node's report")
"""Codes only ``topoaudit fleet`` raises, comparing node reports: never judged on one node's report."""


def first_missing(needs: tuple[Need, ...], ctx: Context) -> str:
    """Why the input lacks the first of ``needs`` it lacks; "" when it holds them all."""
    for need in needs:
        why = need.missing(ctx)
        if why:
            return why
    return ""
