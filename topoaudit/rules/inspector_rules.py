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
from typing import Any

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding
from topoaudit.model.network import NcclVersion, NicSet
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import Oracle, RuleContext, finding, first_few
from topoaudit.rules.codes import Code
from topoaudit.rules.needs import CPU_TIMED, NCCL_INSPECTOR
from topoaudit.rules.registry import rule

LOW_RATIO = 0.7
"""Under this fraction of the other hosts' median, a host's busbw is low (where no figure applies; a figure
carries its own tolerance, taken from healthy public runs: ``bench/oracle.tolerance``)."""


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
    return judge_inspector(
        ctx.inspector, ctx.spec, ctx.oracle, network=ctx.run.network, nccl_version=ctx.run.nccl_version
    )


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
