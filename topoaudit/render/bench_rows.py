"""The bench section of the row model: the groups' table, every size of each group, pairs and islands.

Loaded only for a report with a bench (measured or imported from nccl-tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.model.values import Failed, Unsupported
from topoaudit.render.cells import Cell, Table, format_size, register_views
from topoaudit.render.common import gbps

if TYPE_CHECKING:
    from topoaudit.model.bench import BenchGroup, BenchResult


def _num(value: object, fmt: str = "{:.2f}") -> str:
    """A measured figure in a bench table; ``-`` where it was not measured."""
    if isinstance(value, (Unsupported, Failed)):
        return "-"
    if isinstance(value, float):
        return fmt.format(value)
    return str(value)


def ranks_text(ranks: tuple[int, ...]) -> str:
    """Ranks as a reader scans them: ``0-7`` for a run, ``0,2,5`` otherwise."""
    r = list(ranks)
    if len(r) > 2 and r[-1] - r[0] == len(r) - 1 and r == sorted(set(r)):  # no list as long as the span
        return f"{r[0]}-{r[-1]}"
    return ",".join(map(str, r))


@dataclass(frozen=True)
class BenchView:
    """A bench as tables: the groups, every size of each group, pairs, islands and the notes under them."""

    result: BenchResult
    title: str
    groups: Table
    rows: tuple[Table, ...]  # every size of each group that has rows
    pairs: Table | None
    islands: str
    footer: tuple[str, ...]


def bench_title(result: BenchResult) -> str:
    where = f"{result.world_size} rank(s) on {len(result.hosts)} host(s)"
    tool = "mscclpp-test" if result.backend == "mscclpp" else "nccl-tests"
    src = f"imported from {tool}" if result.source == "nccl-tests" else f"measured with {result.backend}"
    extra = f", {result.version}" if result.version else ""
    return f"{result.collective} bench, {src}{extra}: {where}, {result.status}"


BENCH_GROUP_HEADER = (
    "group",
    "ranks",
    "plateau busbw GB/s",
    "at",
    "peak GB/s",
    "lat p50 us",
    "lat p99 us",
    "expected GB/s",
    "ratio",
    "error",
)


def _group_row(g: BenchGroup) -> tuple[Cell, ...]:
    return (
        Cell(g.name, "strong"),
        Cell(ranks_text(g.ranks)),
        Cell(_num(g.plateau_busbw_gbps)),
        Cell(format_size(g.plateau_size_bytes) if isinstance(g.plateau_size_bytes, int) else "-"),
        Cell(_num(g.peak_busbw_gbps)),
        Cell(_num(g.latency_p50_us, "{:.1f}")),
        Cell(_num(g.latency_p99_us, "{:.1f}")),
        Cell(_num(g.expected_busbw_gbps, "{:.1f}"), hint=g.expected_basis),
        Cell(_num(g.ratio, "{:.0%}")),
        Cell(g.error, "fail" if g.error else ""),
    )


def _has_inplace(group: BenchGroup) -> bool:
    return any(isinstance(r.inplace_time_us, float) for r in group.rows)


def _rows_table(g: BenchGroup) -> Table:
    head = ["size(B)", "count", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong"]
    inplace = _has_inplace(g)
    head += ["in-place time(us)", "in-place busbw", "in-place #wrong"] if inplace else ["p99(us)"]
    rows = []
    for r in g.rows:
        tone = "fail" if isinstance(r.wrong, int) and r.wrong > 0 else ""
        cells = [str(r.size_bytes), str(r.count), r.dtype, f"{r.time_us:.2f}", f"{r.algbw_gbps:.2f}",
                 f"{r.busbw_gbps:.2f}", _num(r.wrong)]  # fmt: skip
        if inplace:
            cells += [_num(r.inplace_time_us), _num(r.inplace_busbw_gbps), _num(r.inplace_wrong)]
        else:
            cells += [_num(r.p99_us)]
        rows.append(tuple(Cell(c, tone) for c in cells))
    return Table(f"{g.name} (ranks {ranks_text(g.ranks)}): every size, slowest rank", tuple(head), tuple(rows))


def _pairs_table(result: BenchResult) -> Table | None:
    if not result.pairs:
        return None
    ranks = sorted({r for p in result.pairs for r in (p.a, p.b)})
    value = {(p.a, p.b): p.busbw_gbps for p in result.pairs}
    value.update({(p.b, p.a): p.busbw_gbps for p in result.pairs})
    rows = tuple(
        (Cell(str(a), "strong"), *(Cell("X", "self") if a == b else Cell(_num(value.get((a, b)))) for b in ranks))
        for a in ranks
    )
    return Table("Pairwise busbw GB/s (each pair alone)", ("rank", *map(str, ranks)), rows)


def _islands(result: BenchResult) -> str:
    measured, expected = result.measured_islands, result.expected_islands
    if not isinstance(measured, tuple):
        return ""
    text = "Ranks that talk fast together (measured): " + " ".join("{" + ranks_text(i) + "}" for i in measured)
    if isinstance(expected, tuple):
        text += "; NVLink domains, in ranks: " + " ".join("{" + ranks_text(d) + "}" for d in expected)
    return text


def _bench_footer(result: BenchResult) -> tuple[str, ...]:
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
    if result.environment:
        lines.append("environment: " + ", ".join(f"{k}={v}" for k, v in sorted(result.environment.items())))
    return tuple(lines)


def bench_view(result: BenchResult) -> BenchView:
    shown = [g for g in result.groups if g.kind != "pair"]
    header: tuple[str, ...] = BENCH_GROUP_HEADER
    rows = [_group_row(g) for g in shown]
    if not any(g.error for g in shown):  # the error column only when a group stopped
        header, rows = header[:-1], [row[:-1] for row in rows]
    groups = Table(bench_title(result), header, tuple(rows), anchor="bench")
    return BenchView(
        result=result,
        title=bench_title(result),
        groups=groups,
        rows=tuple(_rows_table(g) for g in shown if g.rows),
        pairs=_pairs_table(result),
        islands=_islands(result),
        footer=_bench_footer(result),
    )


def plot_title(g: BenchGroup) -> str:
    size = f" at {format_size(g.plateau_size_bytes)}" if isinstance(g.plateau_size_bytes, int) else ""
    plateau = f": plateau {gbps(g.plateau_busbw_gbps)} GB/s{size}" if isinstance(g.plateau_busbw_gbps, float) else ""
    return f"{g.name} ({len(g.ranks)} ranks){plateau}"


register_views(BenchView)
