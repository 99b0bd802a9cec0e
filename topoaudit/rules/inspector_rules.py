"""Judge NCCL Inspector's per-collective busbw: a host's all-reduce far below what it should reach.

The input is the report's ``nccl_inspector`` summary (``parse/nccl_inspector.summarize``): one row per host,
communicator and collective, with the median busbw of its large messages. An all-reduce communicator is held
to the bandwidth oracle's figure for its GPU model (``bench/oracle.expected_busbw``); where the model is
unknown, or the oracle has no figure for its shape, hosts running communicators of the same shape are
compared with each other.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import finding, first_few

INSPECTOR_CODES = frozenset({"nccl-inspector-busbw-low"})
"""The codes judged only from NCCL Inspector output."""

LOW_RATIO = 0.7
"""Under this fraction of the oracle's figure, or of the other hosts' median, a host's busbw is low."""


Oracle = Callable[..., Any]
"""``bench.oracle.expected_busbw``, handed in by the pipeline (rules sit below bench in the layers)."""


def judge_inspector(summary: dict[str, Any], spec: GpuSpec | None, oracle: Oracle | None = None) -> list[Finding]:
    """Return findings for all-reduce communicators whose large-message busbw is far below the expected figure.

    ``oracle(spec, gpus_per_node, nodes=...)`` gives the figure (a Figure, or Unsupported); without an oracle
    or a spec, hosts are compared with each other.
    """
    rows = _large_all_reduce(summary)
    found: list[Finding] = []
    unjudged: list[dict[str, Any]] = []
    for row in rows:
        figure = _oracle(row, spec, oracle)
        if figure is None:
            unjudged.append(row)
            continue
        if row["large_median_busbw_gbps"] < LOW_RATIO * figure.busbw_gbps:
            found.append(
                finding(
                    "nccl-inspector-busbw-low",
                    f"Host {row['host']}: all-reduce communicator {_comm(row)} reached "
                    f"{row['large_median_busbw_gbps']:g} GB/s busbw at large messages (median of "
                    f"{row['large_collectives']}), under {LOW_RATIO:g}x the expected {figure.describe()}.",
                    host=row["host"],
                    comm_id=row["comm_id"],
                    comm_name=row["comm_name"],
                    busbw_gbps=row["large_median_busbw_gbps"],
                    expected_busbw_gbps=figure.busbw_gbps,
                    line=row["first_line"],
                    **figure.evidence(),
                )
            )
    found += _compare_hosts(unjudged)
    return found


def _large_all_reduce(summary: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        r
        for r in summary.get("communicators", ())
        if r.get("coll") == "AllReduce" and isinstance(r.get("large_median_busbw_gbps"), (int, float))
    ]


def _oracle(row: dict[str, Any], spec: GpuSpec | None, oracle: Oracle | None) -> Any:
    if spec is None or oracle is None:
        return None
    nodes, ranks = row["nnodes"], row["n_ranks"]
    if nodes < 1 or ranks % nodes:
        return None
    figure = oracle(spec, ranks // nodes, nodes=nodes)
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
    return row["comm_id"] if name == "unknown" else f"{row['comm_id']} ({name})"


def inspector_judgement(code: str, extras: dict[str, Any]) -> str | None:
    """Why ``code`` was not judged on a report (None when it was, or is not an Inspector code)."""
    if code not in INSPECTOR_CODES:
        return None
    summary = extras.get("nccl_inspector")
    if not isinstance(summary, dict):
        return "judged from NCCL Inspector output; this report has none"
    if not _large_all_reduce(summary):
        mib = summary.get("large_message_bytes", 0) // (1024 * 1024)
        return f"the NCCL Inspector output has no all-reduce of {mib} MiB or more to judge"
    return None
