"""The bench section as plain cells, shared by the console and Markdown renderers (no rich here)."""

from __future__ import annotations

from topoaudit.bench.formulas import format_size
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow
from topoaudit.model.values import Failed, Unsupported


def _num(value: object, fmt: str = "{:.2f}") -> str:
    if isinstance(value, (Unsupported, Failed)):
        return "-"
    if isinstance(value, float):
        return fmt.format(value)
    return str(value)


def title(result: BenchResult) -> str:
    where = f"{result.world_size} rank(s) on {len(result.hosts)} host(s)"
    src = "imported from nccl-tests" if result.source == "nccl-tests" else f"measured with {result.backend}"
    extra = f", {result.version}" if result.version else ""
    return f"{result.collective} bench, {src}{extra}: {where}, {result.status}"


GROUP_HEADER = [
    "group",
    "ranks",
    "plateau busbw GB/s",
    "at",
    "peak GB/s",
    "lat p50 us",
    "lat p99 us",
    "expected",
    "ratio",
]


def group_rows(result: BenchResult) -> list[list[str]]:
    rows = []
    for g in result.groups:
        if g.kind == "pair":
            continue
        rows.append(
            [
                g.name + (" (stopped)" if g.error else ""),
                _ranks(g.ranks),
                _num(g.plateau_busbw_gbps),
                format_size(g.plateau_size_bytes) if isinstance(g.plateau_size_bytes, int) else "-",
                _num(g.peak_busbw_gbps),
                _num(g.latency_p50_us, "{:.1f}"),
                _num(g.latency_p99_us, "{:.1f}"),
                _num(g.expected_busbw_gbps, "{:.1f}"),
                _num(g.ratio, "{:.0%}"),
            ]
        )
    return rows


def has_inplace(group: BenchGroup) -> bool:
    return any(isinstance(r.inplace_time_us, float) for r in group.rows)


def row_header(group: BenchGroup) -> list[str]:
    head = ["size(B)", "count", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong"]
    if has_inplace(group):
        head += ["in-place time(us)", "in-place busbw", "#wrong"]
    else:
        head += ["p99(us)"]
    return head


def row_cells(group: BenchGroup, row: BenchRow) -> list[str]:
    cells = [
        str(row.size_bytes),
        str(row.count),
        row.dtype,
        f"{row.time_us:.2f}",
        f"{row.algbw_gbps:.2f}",
        f"{row.busbw_gbps:.2f}",
        _num(row.wrong),
    ]
    if has_inplace(group):
        cells += [_num(row.inplace_time_us), _num(row.inplace_busbw_gbps), _num(row.inplace_wrong)]
    else:
        cells += [_num(row.p99_us)]
    return cells


def pair_matrix(result: BenchResult) -> tuple[list[str], list[list[str]]] | None:
    """busbw (GB/s) of every pair measured alone, as a rank x rank matrix; None without pairs."""
    if not result.pairs:
        return None
    ranks = sorted({r for p in result.pairs for r in (p.a, p.b)})
    value = {(p.a, p.b): p.busbw_gbps for p in result.pairs}
    value.update({(p.b, p.a): p.busbw_gbps for p in result.pairs})
    header = ["rank", *map(str, ranks)]
    rows = [[str(a)] + ["X" if a == b else _num(value.get((a, b))) for b in ranks] for a in ranks]
    return header, rows


def islands_line(result: BenchResult) -> str | None:
    measured, expected = result.measured_islands, result.expected_islands
    if not isinstance(measured, tuple):
        return None
    text = "measured islands: " + " ".join("{" + _ranks(i) + "}" for i in measured)
    if isinstance(expected, tuple):
        text += "; topology domains: " + " ".join("{" + _ranks(d) + "}" for d in expected)
    return text


def footer_lines(result: BenchResult) -> list[str]:
    lines = []
    if isinstance(result.avg_busbw_gbps, float):
        lines.append(
            f"nccl-tests 'Avg bus bandwidth' {result.avg_busbw_gbps:g} GB/s (a mean over all sizes; not a gate)"
        )
    if isinstance(result.out_of_bounds, int):
        lines.append(f"out of bounds values: {result.out_of_bounds}")
    if result.source == "topoaudit" and result.timed_s > 0:
        lines.append(
            f"wall {result.wall_s:.1f} s, timed collectives {result.timed_s:.2f} s "
            f"(overhead x{result.wall_s / result.timed_s:.1f})"
        )
    skipped = {s.size_bytes: s.reason for g in result.groups for s in g.skipped_sizes}
    for size, reason in sorted(skipped.items()):
        lines.append(f"skipped {format_size(size)}: {reason}")
    for e in result.errors:
        where = f" [{e.group} {format_size(e.size_bytes)}]" if e.group else ""
        lines.append(f"rank {e.rank} {e.kind}{where}: {e.message}")
    lines += [n for n in result.notes if not n.startswith("nccl-tests' 'Avg")]
    env = result.environment
    if env:
        lines.append("environment: " + ", ".join(f"{k}={v}" for k, v in sorted(env.items())))
    return lines


def _ranks(ranks: tuple[int, ...]) -> str:
    r = list(ranks)
    if len(r) > 2 and r == list(range(r[0], r[-1] + 1)):
        return f"{r[0]}-{r[-1]}"
    return ",".join(map(str, r))
