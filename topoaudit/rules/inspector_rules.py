"""Judge NCCL Inspector's per-collective busbw: a host's all-reduce far below what it should reach.

The input is the report's ``nccl_inspector`` summary (``parse/nccl_inspector.summarize``): one row per host,
communicator, collective, algorithm and timing source, with the median busbw of its large messages. An
all-reduce communicator is held to the bandwidth oracle's figure for its GPU model, its nodes and the algorithm
it ran (``bench/oracle.expected_busbw``: NCCL's own choice where the file does not say, the network's figure
across nodes), under the tolerance that figure carries. Where the model is unknown, or the oracle has no
figure for its shape, hosts running communicators of the same shape are compared with each other. Collectives
the CPU timed (``coll_timing_source`` ``kernel_cpu`` or ``collective_cpu``) include launch and wait: they are
not judged.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding
from topoaudit.model.network import NcclVersion, NicSet
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import finding, first_few

INSPECTOR_CODES = frozenset({"nccl-inspector-busbw-low"})
"""The codes judged only from NCCL Inspector output."""

LOW_RATIO = 0.7
"""Under this fraction of the other hosts' median, a host's busbw is low (where no figure applies; a figure
carries its own tolerance, taken from healthy public runs: ``bench/oracle.tolerance``)."""


Oracle = Callable[..., Any]
"""``bench.oracle.expected_busbw``, handed in by the pipeline (rules sit below bench in the layers)."""


def judge_inspector(
    summary: dict[str, Any],
    spec: GpuSpec | None,
    oracle: Oracle | None = None,
    *,
    network: NicSet | None = None,
    nccl_version: NcclVersion | None = None,
) -> list[Finding]:
    """Return findings for all-reduce communicators whose large-message busbw is far below the expected figure.

    ``oracle(spec, gpus_per_node, nodes=..., algorithm=..., nics=..., nccl_version=...)`` gives the figure (a
    Figure, or Unsupported); without an oracle or a spec, hosts are compared with each other. ``network`` is one
    node's NICs (NCCL's NET/IB lines or ``--nics``), ``nccl_version`` the release the job ran: where absent the
    oracle assumes them and says so.
    """
    rows = _large_all_reduce(summary)
    found: list[Finding] = []
    unjudged: list[dict[str, Any]] = []
    for row in rows:
        figure = _oracle(row, spec, oracle, network, nccl_version)
        if figure is None:
            unjudged.append(row)
            continue
        ratio = getattr(figure, "warn_below_ratio", LOW_RATIO)
        if row["large_median_busbw_gbps"] < ratio * figure.busbw_gbps:
            ran = f"algorithm {row['algorithm']} (its algo_proto)" if row.get("algorithm") else "NCCL's own choice"
            said = "".join(f"; {a}" for a in getattr(figure, "assumptions", ()))
            found.append(
                finding(
                    "nccl-inspector-busbw-low",
                    f"Host {row['host']}: all-reduce communicator {_comm(row)}{_shape(row)} reached "
                    f"{row['large_median_busbw_gbps']:g} GB/s busbw at large messages (median of "
                    f"{row['large_collectives']}), under {ratio:g}x the expected {figure.describe()}; {ran}{said}.",
                    host=row["host"],
                    comm_id=row["comm_id"],
                    comm_name=row["comm_name"],
                    busbw_gbps=row["large_median_busbw_gbps"],
                    expected_busbw_gbps=figure.busbw_gbps,
                    line=row["first_line"],
                    algorithm=row.get("algorithm", "not recorded"),
                    **figure.evidence(),
                )
            )
    found += _compare_hosts(unjudged)
    return found


def _large_all_reduce(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """GPU-timed (or untimed) all-reduce rows with a large-message median: what can be judged."""
    return [
        r
        for r in summary.get("communicators", ())
        if r.get("coll") == "AllReduce"
        and isinstance(r.get("large_median_busbw_gbps"), (int, float))
        and r.get("timing_source") not in CPU_TIMED
    ]


CPU_TIMED = ("kernel_cpu", "collective_cpu")
"""coll_timing_source values the CPU timed (NVIDIA/nccl plugins/profiler/inspector/inspector.cc)."""


def _shape(row: dict[str, Any]) -> str:
    """`` (2 nodes x 8 ranks)`` for a communicator across nodes; "" inside one."""
    nodes, ranks = row["nnodes"], row["n_ranks"]
    return f" ({nodes} nodes x {ranks // nodes} ranks)" if nodes > 1 and ranks % nodes == 0 else ""


def _oracle(
    row: dict[str, Any],
    spec: GpuSpec | None,
    oracle: Oracle | None,
    network: NicSet | None,
    nccl_version: NcclVersion | None,
) -> Any:
    if spec is None or oracle is None:
        return None
    nodes, ranks = row["nnodes"], row["n_ranks"]
    if nodes < 1 or ranks % nodes:
        return None
    rack = spec.layout == "nvl72" and ranks <= spec.domain_size  # trays of one NVLink domain
    figure = oracle(
        spec,
        ranks if rack else ranks // nodes,
        nodes=1 if rack else nodes,
        algorithm=row.get("algorithm", ""),
        nics=network,
        nccl_version=nccl_version,
        one_nvlink_domain=rack,
    )
    return None if isinstance(figure, Unsupported) else figure


def _compare_hosts(rows: list[dict[str, Any]]) -> list[Finding]:
    """Within communicators of one shape (ranks, nodes), a host whose median is under LOW_RATIO x the others'."""
    shapes: dict[tuple[int, int], dict[str, list[dict[str, Any]]]] = {}
    for row in rows:
        shapes.setdefault((row["n_ranks"], row["nnodes"]), {}).setdefault(row["host"], []).append(row)
    found: list[Finding] = []
    for (ranks, _nodes), hosts in sorted(shapes.items()):
        if len(hosts) < 2:
            continue
        medians = {h: statistics.median(r["large_median_busbw_gbps"] for r in rs) for h, rs in hosts.items()}
        for host, median in sorted(medians.items()):
            others = statistics.median(m for h, m in medians.items() if h != host)
            if median >= LOW_RATIO * others:
                continue
            comms = [_comm(r) for r in hosts[host]]
            found.append(
                finding(
                    "nccl-inspector-busbw-low",
                    f"Host {host}: all-reduce busbw {median:g} GB/s at large messages on {ranks}-rank "
                    f"communicator(s) {first_few(comms, 3)}, under {LOW_RATIO:g}x the other hosts' median "
                    f"{others:g} GB/s ({len(medians) - 1} other host(s)); no expected figure for these communicators "
                    "(--gpu-model names the card), so hosts are compared with each other.",
                    host=host,
                    comm_ids=[r["comm_id"] for r in hosts[host]],
                    busbw_gbps=round(median, 3),
                    others_median_busbw_gbps=round(others, 3),
                    line=hosts[host][0]["first_line"],
                )
            )
    return found


def _comm(row: dict[str, Any]) -> str:
    name = row["comm_name"]
    return row["comm_id"] if name == "unknown" or row["comm_id"].startswith(name) else f"{row['comm_id']} ({name})"


def inspector_judgement(code: str, extras: dict[str, Any]) -> str | None:
    """Why ``code`` was not judged on a report (None when it was, or is not an Inspector code)."""
    if code not in INSPECTOR_CODES:
        return None
    summary = extras.get("nccl_inspector")
    if not isinstance(summary, dict):
        return "judged from NCCL Inspector output; this report has none"
    if not _large_all_reduce(summary):
        mib = summary.get("large_message_bytes", 0) // (1024 * 1024)
        cpu = " timed on the GPU" if summary.get("cpu_timed_records") else ""
        return f"the NCCL Inspector output has no all-reduce of {mib} MiB or more{cpu} to judge"
    return None
