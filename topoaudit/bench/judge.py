"""Findings from a bench result: corruption, below-expected bandwidth, islands vs domains, timeouts. Pure."""

from __future__ import annotations

from topoaudit.bench.expect import const, judge_ratio
from topoaudit.bench.formulas import format_size
from topoaudit.bench.islands import same_partition
from topoaudit.model.bench import BenchResult
from topoaudit.model.finding import Finding, Severity
from topoaudit.rules.codes import info


def _finding(code: str, message: str, severity: Severity | None = None, **evidence: object) -> Finding:
    entry = info(code)
    return Finding(code, severity or entry.severity, message, dict(evidence), entry.remedy)


def judge_bench(result: BenchResult, *, expect_busbw_gbps: float | None = None) -> tuple[Finding, ...]:
    """Every bench finding, worst first. ``expect_busbw_gbps`` is the user's gate on the ``all`` plateau."""
    out: list[Finding] = []
    for group in result.groups:
        bad = [(r.size_bytes, r.wrong) for r in group.rows if isinstance(r.wrong, int) and r.wrong > 0]
        bad += [
            (r.size_bytes, r.inplace_wrong)
            for r in group.rows
            if isinstance(r.inplace_wrong, int) and r.inplace_wrong > 0
        ]
        if bad:
            sizes = ", ".join(f"{format_size(s)} ({w} wrong)" for s, w in bad[:6])
            out.append(
                _finding(
                    "bench-data-corruption",
                    f"all-reduce returned wrong data in group {group.name} (ranks {_ranks(group.ranks)}): {sizes}",
                    group=group.name,
                    ranks=list(group.ranks),
                    wrong_by_size_bytes={str(s): w for s, w in bad},
                )
            )
        if isinstance(group.ratio, float) and isinstance(group.expected_busbw_gbps, float):
            verdict = judge_ratio(group.ratio)
            if verdict in ("warn", "fail"):
                out.append(
                    _finding(
                        "bench-below-expected",
                        f"group {group.name} plateaus at {group.plateau_busbw_gbps} GB/s busbw, "
                        f"{group.ratio:.0%} of the {group.expected_busbw_gbps:g} GB/s the topology predicts "
                        f"({group.expected_basis})",
                        severity=Severity(verdict),
                        group=group.name,
                        measured_busbw_gbps=group.plateau_busbw_gbps,
                        expected_busbw_gbps=group.expected_busbw_gbps,
                        ratio=group.ratio,
                        warn_below=const("warn_below_ratio"),
                        fail_below=const("fail_below_ratio"),
                    )
                )
    if expect_busbw_gbps:
        whole = result.group("all") or (result.groups[0] if result.groups else None)
        if whole is not None and isinstance(whole.plateau_busbw_gbps, float):
            if whole.plateau_busbw_gbps < expect_busbw_gbps:
                out.append(
                    _finding(
                        "bench-below-expected",
                        f"group {whole.name} plateaus at {whole.plateau_busbw_gbps} GB/s busbw, below the "
                        f"--expect-busbw {expect_busbw_gbps:g} GB/s",
                        severity=Severity.FAIL,
                        group=whole.name,
                        measured_busbw_gbps=whole.plateau_busbw_gbps,
                        expected_busbw_gbps=expect_busbw_gbps,
                        basis="--expect-busbw",
                    )
                )
        elif whole is not None or result.status != "complete":
            out.append(
                _finding(
                    "bench-incomplete",
                    f"--expect-busbw {expect_busbw_gbps:g} cannot be checked: no large-message plateau was measured",
                    expected_busbw_gbps=expect_busbw_gbps,
                )
            )
    measured, expected = result.measured_islands, result.expected_islands
    if isinstance(measured, tuple) and isinstance(expected, tuple) and not same_partition(measured, expected):
        out.append(
            _finding(
                "measured-topology-mismatch",
                f"the pairwise matrix measures {len(measured)} island(s) {_sets(measured)} but the topology "
                f"says {len(expected)} domain(s) {_sets(expected)}",
                measured_islands=[list(x) for x in measured],
                expected_domains=[list(x) for x in expected],
            )
        )
    for err in result.errors:
        if err.kind == "timeout":
            where = f" in group {err.group} at {format_size(err.size_bytes)}" if err.group else ""
            out.append(
                _finding(
                    "bench-timeout",
                    f"a collective did not finish{where} (rank {err.rank}): {err.message}",
                    group=err.group,
                    size_bytes=err.size_bytes,
                    rank=err.rank,
                )
            )
            break
    others = [e for e in result.errors if e.kind not in ("timeout",)]
    if others and not any(f.code == "bench-timeout" for f in out):
        first = others[0]
        where = f" in group {first.group} at {format_size(first.size_bytes)}" if first.group else ""
        out.append(
            _finding(
                "bench-rank-failed",
                f"rank {first.rank} {first.kind}{where}: {first.message}"
                + (f" (+{len(others) - 1} more)" if len(others) > 1 else ""),
                errors=[{"rank": e.rank, "kind": e.kind, "message": e.message} for e in others],
            )
        )
    if result.status != "complete" and not any(
        f.code in ("bench-incomplete", "bench-timeout", "bench-rank-failed") for f in out
    ):
        out.append(_finding("bench-incomplete", f"the bench stopped early ({result.status})"))
    skipped = {s.size_bytes for g in result.groups for s in g.skipped_sizes}
    if skipped:
        out.append(
            _finding(
                "bench-size-skipped",
                f"{len(skipped)} size(s) did not fit in free memory and were skipped: "
                + ", ".join(format_size(s) for s in sorted(skipped)),
                sizes_bytes=sorted(skipped),
            )
        )
    out.sort(key=lambda f: -f.severity.rank)
    return tuple(out)


def _ranks(ranks: tuple[int, ...]) -> str:
    return ",".join(map(str, ranks))


def _sets(parts: tuple[tuple[int, ...], ...]) -> str:
    return " ".join("{" + _ranks(p) + "}" for p in parts)
