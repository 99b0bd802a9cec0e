"""Judge NCCL Inspector's per-collective busbw: a host's all-reduce far below what it should reach.

The input is the report's ``nccl_inspector`` summary (``parse/nccl_inspector.summarize``): one row per host,
communicator and collective, with the median busbw of its large messages. An all-reduce communicator is held
to the bandwidth oracle's figure for its GPU model (``bench/oracle.expected_busbw``); where the model is
unknown, or the oracle has no figure for its shape, hosts running communicators of the same shape are
compared with each other.
"""

from __future__ import annotations

import statistics
from typing import Any

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import Oracle, RuleContext, finding, first_few
from topoaudit.rules.codes import Code
from topoaudit.rules.needs import NCCL_INSPECTOR
from topoaudit.rules.registry import rule

LOW_RATIO = 0.7
"""Under this fraction of the oracle's figure, or of the other hosts' median, a host's busbw is low."""


@rule(
    Code(
        "nccl-inspector-busbw-low",
        "warn",
        title="NCCL Inspector shows a host's all-reduce busbw far below the expected figure or the other hosts",
        remedy=(
            "Run nccl-tests' all_reduce_perf on the named host alone and check its links (`nvidia-smi nvlink -s`, `-e`)"
            " and, across nodes, its NICs; drain the host from jobs that span it until its busbw recovers."
        ),
    ),
    needs=(NCCL_INSPECTOR,),
)
def inspector_busbw(ctx: RuleContext) -> list[Finding]:
    """Flag a host whose all-reduce busbw at large messages is far below what its communicator should reach.

    Each all-reduce communicator in NCCL Inspector's per-collective records is held to the bandwidth oracle's
    figure for its GPU model and shape (under 0.7x of it is low); where the model is unknown, or the oracle has
    no figure for the shape, hosts running communicators of one shape are compared with each other.
    """
    assert not isinstance(ctx.inspector, Unsupported)
    return judge_inspector(ctx.inspector, ctx.spec, ctx.oracle)


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
