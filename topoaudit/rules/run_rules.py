"""Rules over how a pasted nccl-tests run went.

What it died of, where it hung, whether its data check held, whether its runs agree, how long its smallest messages
took, and the NCCL variables typed on its command line. The bench judge (topoaudit.bench.judge) holds the sweep's
figures to what the links should carry; these rules read what only the run's own output says (parse.nccl_tests):
its failure lines with the CUDA error they name, its last line when it printed no row, its ``Out of bounds values``
footer, the runs glued into one paste, and the time of its smallest sizes against NCCL's own latency model.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator

from topoaudit.model.bench import (
    LATENCY_SIZES_BELOW_BYTES,
    ONE_RANK_REPEAT,
    BenchGroup,
    BenchResult,
    BenchRow,
    RunFailure,
)
from topoaudit.model.finding import Finding, Severity
from topoaudit.model.nccl import LogLine, NcclView
from topoaudit.model.report import ELIDED, ELISION_LINE
from topoaudit.model.values import Failed, Unsupported
from topoaudit.rules.base import RuleContext, finding, first_few
from topoaudit.rules.codes import Code
from topoaudit.rules.nccl_settings import nvlink_everywhere, settings_finding
from topoaudit.rules.needs import BENCH
from topoaudit.rules.probe_rules import fabric_manager_commands, with_fabric_remedy
from topoaudit.rules.registry import rule
from topoaudit.units import format_size

PASTED = "nccl-tests"
"""``BenchResult.source`` of a pasted run (topoaudit's own bench reports through the bench judge)."""

SYSTEM_NOT_READY = 802
"""cudaErrorSystemNotReady, 'system not yet initialized': on an NVSwitch box, the fabric manager is not running."""


def _pasted(ctx: RuleContext) -> BenchResult | None:
    bench = ctx.bench
    return bench if isinstance(bench, BenchResult) and bench.source == PASTED else None


def _at(failure: RunFailure) -> str:
    """Where a failure was printed: "rank 0 (node0)", "host gpu", or ""."""
    host = failure.host if isinstance(failure.host, str) else ""
    if isinstance(failure.rank, int):
        return f"rank {failure.rank}" + (f" ({host})" if host else "")
    return f"host {host}" if host else ""


def _what(failure: RunFailure) -> str:
    """Quote a failure as nccl-tests printed it: its message, NCCL's last error, where in the test."""
    text = f"'{failure.message}'"
    if failure.detail:
        text += f" (NCCL's last error: {failure.detail})"
    if failure.source_location:
        text += f" at {failure.source_location}"
    return text


def _rows_before(result: BenchResult) -> str:
    rows = [r for g in result.groups for r in g.rows]
    if not rows:
        return "before its first row"
    largest = max(r.size_bytes for r in rows)
    return f"after {len(rows)} row(s), the largest {format_size(largest)}"


@rule(
    "nccl-fabric-manager-down",
    "bench-rank-failed",
    "bench-timeout",
    needs=(BENCH,),
)
def run_failures(ctx: RuleContext) -> Iterator[Finding]:
    """Report what a pasted run died of, naming the cause its failure line names.

    ``Test CUDA failure common.cu:941 'system not yet initialized'`` is CUDA error 802: on an NVSwitch box the
    fabric manager is not running (the finding carries the platform's fabric remedy). ``Test timeout`` is a
    collective that did not finish; any other CUDA or NCCL failure is a failed run, named with NCCL's last error
    when the line carries it, the host and rank that printed it, and how far the run got.
    """
    result = _pasted(ctx)
    if result is None:
        return
    died = [f for f in result.failures if f.kind != "data-check"]
    if not died:
        return
    spec = ctx.spec
    not_ready = [f for f in died if isinstance(f.cuda_error, int) and f.cuda_error == SYSTEM_NOT_READY]
    if not_ready:
        first = not_ready[0]
        tray = spec is not None and spec.layout == "nvl72"
        cause = (
            "this tray's GPUs are not registered with the rack's NVLink fabric, so they cannot use NVLink"
            if tray
            else "the NVSwitch fabric manager is not running, so the GPUs cannot use NVLink"
        )
        found = finding(
            "nccl-fabric-manager-down",
            f"The run died {_rows_before(result)} with CUDA error 802 ({_what(first)}"
            + (f", {_at(first)}" if _at(first) else "")
            + f", line {first.evidence.line}): {cause}.",
            log_lines=[f"line {f.evidence.line}: {f.evidence.text}" for f in not_ready[:6]],
        )
        yield with_fabric_remedy(found, spec, fabric_manager_commands(spec))
    timeouts = [f for f in died if f.kind == "timeout"]
    if timeouts:
        first = timeouts[0]
        yield finding(
            "bench-timeout",
            f"A collective did not finish: {_at(first) or 'a rank'} reports {first.message} at "
            f"{first.source_location} (line {first.evidence.line}), {_rows_before(result)}.",
            log_lines=[f"line {f.evidence.line}: {f.evidence.text}" for f in timeouts[:6]],
        )
    rest = [f for f in died if f not in not_ready and f not in timeouts]
    if rest:
        first = rest[0]
        hosts = sorted({f.host for f in rest if isinstance(f.host, str)})
        more = f"; {len(rest) - 1} more failure line(s)" if len(rest) > 1 else ""
        where = f" on {first_few(hosts, 4)}" if len(hosts) > 1 else ""
        yield finding(
            "bench-rank-failed",
            f"The run failed {_rows_before(result)}: {_at(first) + ' reports ' if _at(first) else ''}{_what(first)} "
            f"(line {first.evidence.line}){more}{where}.",
            errors=[
                {
                    "kind": f.kind,
                    "message": f.message,
                    "detail": f.detail,
                    "where": f.source_location,
                    "host": f.host if isinstance(f.host, str) else "",
                    "rank": f.rank if isinstance(f.rank, int) else None,
                    "cuda_error": f.cuda_error if isinstance(f.cuda_error, int) else None,
                    "line": f.evidence.line,
                }
                for f in rest
            ],
        )


@rule("bench-data-corruption", needs=(BENCH,))
def data_check_failed(ctx: RuleContext) -> Iterator[Finding]:
    """Report nccl-tests' own data check failing (``# Out of bounds values : 16 FAILED``) where no row shows it.

    nccl-tests checks every result against the expected values; the footer counts the wrong ones over the whole
    run. The rows' ``#wrong`` column says it per size (the bench judge names those); a footer pasted without its
    rows says it alone, and so does an old-format row whose ``error`` (a deviation, not a count) is above the bound
    nccl-tests holds that type to.
    """
    result = _pasted(ctx)
    if result is None:
        return
    checks = [f for f in result.failures if f.kind == "data-check"]
    shown = any(isinstance(w, int) and w > 0 for g in result.groups for r in g.rows for w in (r.wrong, r.inplace_wrong))
    if not checks or shown:
        return
    first = checks[0]
    count = result.out_of_bounds if isinstance(result.out_of_bounds, int) else None
    many = f"{count} value(s)" if count else "values"
    what = first.message if first.message.startswith("the row for") else f"{many} out of bounds"
    yield finding(
        "bench-data-corruption",
        f"nccl-tests' data check failed: {what} (line {first.evidence.line}: "
        f"'{first.evidence.text}'): the collective returned wrong data.",
        out_of_bounds=count,
        log_lines=[f"line {f.evidence.line}: {f.evidence.text}" for f in checks[:6]],
    )


@rule(
    Code(
        "bench-run-hung",
        "fail",
        title="A pasted run printed its setup and then nothing: it hung there (or the paste stops there)",
        remedy=(
            "Rerun with a timeout (`timeout 600 ./build/all_reduce_perf ...`) and NCCL_DEBUG=INFO "
            "NCCL_DEBUG_SUBSYS=INIT,P2P,SHM,NET, and paste its last lines: a hang at init between PCIe GPUs is most "
            "often ACS or the IOMMU blocking peer access (NCCL_P2P_DISABLE=1 makes it run if so), on an NVSwitch box "
            "the fabric manager; `nvidia-smi` hanging too points at the driver."
        ),
    ),
    needs=(BENCH,),
)
def run_hung(ctx: RuleContext) -> Iterator[Finding]:
    """Report a pasted run that printed its parameters or device lines and then nothing: no row, no footer, no failure.

    nccl-tests sets NCCL up after its device lines, prints its table's column names, and then a row within seconds.
    A run that printed the column names and no row hung in its first collective (the classic stall of peer copies
    that ACS or the IOMMU blocks): it fails, or warns where NCCL's log goes on past them (a log pasted in part stops
    the same way). One that stops before them, in its device lines or NCCL's setup, may have hung in NCCL's init,
    and a paste cut there reads the same: it is said, at information and not judged, unless NCCL warned on the way
    (then it warns). A run of one rank moves nothing between GPUs and only informs.
    The finding names the last line the run printed, and the last NCCL warning when its log is pasted beside it.
    """
    result = _pasted(ctx)
    if result is None or result.failures or any(g.rows for g in result.groups):
        return
    if isinstance(result.avg_busbw_gbps, float) or isinstance(result.out_of_bounds, int):
        return  # its footer: it ended
    last = result.last_output
    if not isinstance(last, LogLine):
        return
    named = [h for h in result.hosts if h != "unknown"]  # NCCL 1's tests and -J output may name no host
    on = f" on {len(result.ranks)} rank(s)" + (f" of {first_few(named, 3)}" if named else "") if result.ranks else ""
    header = result.table_header if isinstance(result.table_header, LogLine) else None
    where = (
        "It hung in its first collective (its table's column names are printed, no row under them)."
        if header is not None
        else "It hung there, in NCCL's setup before its first size, or the paste stops there."
    )
    message = (
        f"The run{on} printed its setup and then nothing: no row, no failure, no footer. The last line it printed is "
        f"line {last.line}: '{last.text}'. {where}"
    )
    view = ctx.nccl
    warned_at = view.warnings[-1].evidence if isinstance(view, NcclView) and view.warnings else None
    if warned_at is not None:
        message += f" NCCL's last warning is line {warned_at.line}: '{warned_at.text}'."
    one_rank = len(result.ranks) == 1 and warned_at is None
    # a warning says NCCL itself stopped there; lines left out say the table's rows may have been too
    cut = (_device_list_cut(result) or (_elided(ctx) if header is not None else "")) if warned_at is None else ""
    if one_rank or cut:
        severity, reason = (
            Severity.INFO,
            (
                "one rank and no NCCL warning: the run moves nothing between GPUs, so where it stopped says nothing of "
                "their links"
                if one_rank
                else cut
            ),
        )
    elif header is not None and last.line <= header.line + 1:  # nothing after the names (and their units line)
        severity, reason = (
            Severity.FAIL,
            "the run printed its table's column names and no row: it hung in its first size",
        )
    elif header is not None:
        severity, reason = (
            Severity.WARN,
            (
                "the run printed its table's column names and no row, and NCCL's log beside it goes on past them: "
                "a log pasted in part stops the same way"
            ),
        )
    elif warned_at is not None:
        severity, reason = Severity.WARN, "NCCL warned in the run's setup, before its table: it stopped there"
    else:
        severity, reason = (
            Severity.INFO,
            (
                "the paste ends in the run's setup, before its table: a run that hung in NCCL's init stops there, "
                "and so does a paste cut there"
            ),
        )
    yield finding(
        "bench-run-hung",
        message,
        severity=severity,
        last_line=last.line,
        last_text=last.text,
        severity_reason=reason,
    )


def _elided(ctx: RuleContext) -> str:
    """Say why the paste, not the run, may stop where it does: the poster left lines out ("" when not).

    A line of dots says so, or a reader noted it (a device list that skips ranks).
    """
    m = ELISION_LINE.search(ctx.text)
    if m is not None:
        where = f"line {ctx.text.count(chr(10), 0, m.start()) + 1}: {m.group().strip()!r}"
    else:
        where = next((i.message for i in ctx.issues if i.message.startswith(ELIDED)), "")
    if not where:
        return ""
    return (
        f"the poster left lines out of the paste ({where}), so where it stops may be where the paste was cut, not "
        "where the run stopped"
    )


def _device_list_cut(result: BenchResult) -> str:
    """Why the paste, not the run, stops in the device list ("" when nothing says so).

    nccl-tests prints every rank's device line at once: a list whose last host shows fewer ranks than its first,
    ending on a rank line, was cut where the page or the copy ended.
    """
    if not result.ranks or not isinstance(result.last_output, LogLine) or "Rank" not in result.last_output.text:
        return ""
    per_host = collections.Counter(r.host for r in result.ranks)
    hosts = list(dict.fromkeys(r.host for r in result.ranks))
    if len(hosts) < 2 or per_host[hosts[-1]] >= per_host[hosts[0]]:
        return ""
    return (
        f"the paste stops inside the device list ({hosts[0]} lists {per_host[hosts[0]]} rank(s), {hosts[-1]} "
        f"{per_host[hosts[-1]]}), which nccl-tests prints at once: the paste was cut there, not the run"
    )


RUNS_DISAGREE_BELOW = 0.5
"""Two runs of one collective on the same GPUs differ by a few percent at one size (nccl-tests' iterations are
averaged); below half of the other, one of them ran on another path (a transport, an algorithm, a busy link)."""


def _at_size(group: BenchGroup, size: int) -> float | None:
    return next((r.busbw_gbps for r in group.rows if r.size_bytes == size), None)


@rule(
    Code(
        "bench-runs-disagree",
        "warn",
        title="Two runs of one collective on the same GPUs, pasted together, differ by more than twice at one size",
        remedy=(
            "One of them did not run on the path the other did: compare the two runs' NCCL settings and transports "
            "(NCCL_DEBUG=INFO), rerun both on an idle box, and judge the slower one alone."
        ),
    ),
    needs=(BENCH,),
)
def runs_disagree(ctx: RuleContext) -> Iterator[Finding]:
    """Report glued runs of one collective on the same GPUs whose busbw at a common size differ by more than twice.

    Several runs pasted one after another are read apart and each is judged on its own; a good run beside one four
    times slower must not pass because the first is good.
    """
    result = _pasted(ctx)
    if result is None:
        return
    runs = [g for g in result.groups if g.kind == "all" and g.rows]
    if len(runs) < 2:
        return
    slow: list[str] = []
    pairs: list[dict[str, object]] = []
    for other in runs[1:]:
        for a, b in ((runs[0], other),):
            common = {r.size_bytes for r in a.rows} & {r.size_bytes for r in b.rows}
            size = max((s for s in common if (_at_size(a, s) or 0) > 0 and (_at_size(b, s) or 0) > 0), default=None)
            if size is None:
                continue
            fa, fb = _at_size(a, size) or 0.0, _at_size(b, size) or 0.0
            low, high = sorted(((fa, a), (fb, b)), key=lambda item: item[0])
            if low[0] >= RUNS_DISAGREE_BELOW * high[0]:
                continue
            slow.append(
                f"{_run_name(low[1])} reaches {low[0]:g} GB/s busbw at {format_size(size)} where "
                f"{_run_name(high[1])} reaches {high[0]:g} ({low[0] / high[0]:.0%})"
            )
            pairs.append({"slow": low[1].name, "fast": high[1].name, "size_bytes": size, "ratio": low[0] / high[0]})
    if slow:
        yield finding(
            "bench-runs-disagree",
            f"The paste holds {len(runs)} runs of {result.collective} on the same GPUs, and they disagree: "
            + "; ".join(slow)
            + ". Each run is judged on its own; one of them did not run on the path the other did.",
            runs=pairs,
        )


SWEEP_DIP_BELOW = 0.7
"""busbw rises with the message size and flattens; a size below this share of both its neighbours is a dip."""


def _busbw_halves(row: BenchRow) -> tuple[float, ...]:
    """Return the out-of-place busbw and, where printed, the in-place one."""
    inplace = row.inplace_busbw_gbps
    return (row.busbw_gbps, inplace) if isinstance(inplace, float) else (row.busbw_gbps,)


@rule(
    Code(
        "bench-sweep-dip",
        "info",
        title="A pasted sweep falls at one message size well below the sizes on either side of it",
        remedy=(
            "Rerun that size alone with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING to see the algorithm and protocol "
            "NCCL picks there; if another size's choice is faster, a tuner plugin (the network plugin's) or "
            "NCCL_ALGO/NCCL_PROTO settle it. A dip that moves between runs is another job or a congested link."
        ),
    ),
    needs=(BENCH,),
)
def sweep_dip(ctx: RuleContext) -> Iterator[Finding]:
    """Report a size whose busbw falls well below both its neighbours in a pasted nccl-tests sweep.

    Bus bandwidth grows with the message size until the links are full, then stays there. A size far below the
    sizes before and after it (in both the out-of-place and the in-place halves) ran another algorithm or protocol
    than its neighbours, or met other traffic: the deployment's messages of that size pay it every time. It informs:
    healthy boxes show it where NCCL switches protocol (a GB300 NVL72 sweep at 64 MiB), so it says how to find the
    choice, not that the box is faulty.
    """
    result = _pasted(ctx)
    if result is None:
        return
    dips: list[tuple[BenchGroup, BenchRow, BenchRow, BenchRow]] = []
    for group in (g for g in result.groups if g.rows):
        rows = sorted((r for r in group.rows if r.size_bytes >= LATENCY_SIZES_BELOW_BYTES), key=lambda r: r.size_bytes)
        for before, row, after in zip(rows, rows[1:], rows[2:], strict=False):
            if after.size_bytes > 4 * before.size_bytes:
                continue  # not neighbours: the sweep skips sizes there
            halves = zip(_busbw_halves(before), _busbw_halves(row), _busbw_halves(after), strict=False)
            if all(mid < SWEEP_DIP_BELOW * min(lo, hi) for lo, mid, hi in halves):
                dips.append((group, before, row, after))
    if not dips:
        return
    _, before, row, after = dips[0]
    ratio = row.busbw_gbps / min(before.busbw_gbps, after.busbw_gbps)
    more = f" ({len(dips) - 1} more size(s) dip the same way)" if len(dips) > 1 else ""
    yield finding(
        "bench-sweep-dip",
        f"The {result.collective} sweep falls at {format_size(row.size_bytes)}: {row.busbw_gbps:g} GB/s busbw, "
        f"{ratio:.0%} of the lower of its neighbours ({before.busbw_gbps:g} and {after.busbw_gbps:g} GB/s){more}. "
        "Bandwidth should grow with the size; that size ran another algorithm or protocol, or met other traffic.",
        dips=[
            {
                "group": g.name,
                "size_bytes": r.size_bytes,
                "busbw_gbps": r.busbw_gbps,
                "before_gbps": b.busbw_gbps,
                "after_gbps": a.busbw_gbps,
            }
            for g, b, r, a in dips
        ],
    )


SWEEP_COLLAPSE_BELOW = 0.5
"""A sweep whose largest sizes all stay below this share of the best a smaller size reached has collapsed."""
SWEEP_COLLAPSE_SIZES = 2
"""The collapse must hold at the sweep's last sizes, this many or more: one slow last size is a dip or a blip."""


@rule(
    Code(
        "bench-sweep-collapse",
        "warn",
        title="A pasted sweep's bandwidth collapses from one message size on and never recovers",
        remedy=(
            "Rerun the largest sizes with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING: a change of algorithm, "
            "channel count or network path at that size shows there. A collapse that holds on every run is a "
            "path that cannot carry large messages (a PCIe or network link below its speed, ACS forcing peer "
            "traffic through the root complex, a congested or flapping port); test that path alone (nvbandwidth, "
            "ib_write_bw) before the deployment runs there."
        ),
    ),
    needs=(BENCH,),
)
def sweep_collapse(ctx: RuleContext) -> Iterator[Finding]:
    """Report a sweep whose busbw falls, from one size on to its end, below half of what smaller sizes reached.

    A sound path carries large messages at least as fast as small ones: busbw grows and flattens. When every size
    from one on stays far below a smaller size's figure, the large messages take a slower path or stall, and a
    deployment's large all-reduces (the ones TP and gradient sync are made of) pay it. No model is needed: the
    sweep is held to its own best figure.
    """
    result = _pasted(ctx)
    if result is None:
        return
    for group in (g for g in result.groups if g.rows):
        rows = sorted((r for r in group.rows if r.size_bytes >= LATENCY_SIZES_BELOW_BYTES), key=lambda r: r.size_bytes)
        collapse = _collapse(rows)
        if collapse is None:
            continue
        best, first = collapse
        tail = rows[rows.index(first) :]
        worst = max(r.busbw_gbps for r in tail)
        yield finding(
            "bench-sweep-collapse",
            f"The {result.collective} sweep collapses at {format_size(first.size_bytes)}: "
            f"{best.busbw_gbps:g} GB/s busbw at {format_size(best.size_bytes)}, then {first.busbw_gbps:g} GB/s, and "
            f"no larger size gets back above {worst:g} GB/s ({len(tail)} sizes up to "
            f"{format_size(tail[-1].size_bytes)}, {worst / best.busbw_gbps:.0%} of the best at most). Large messages "
            "take a slower path, or stall, on this box.",
            group=group.name,
            best_size_bytes=best.size_bytes,
            best_busbw_gbps=best.busbw_gbps,
            from_size_bytes=first.size_bytes,
            largest_after_gbps=worst,
        )
        return


def _collapse(rows: list[BenchRow]) -> tuple[BenchRow, BenchRow] | None:
    """Return the best row before the collapse and the collapse's first row, or None when the sweep holds up."""
    for start in range(1, len(rows) - SWEEP_COLLAPSE_SIZES + 1):
        best = max(rows[:start], key=lambda r: r.busbw_gbps)
        if best.busbw_gbps <= 0:
            continue
        limit = SWEEP_COLLAPSE_BELOW * best.busbw_gbps
        if all(max(_busbw_halves(r)) < limit for r in rows[start:]):
            return best, rows[start]
    return None


@rule(
    Code(
        "bench-single-rank",
        "info",
        title="A pasted run had one rank: nothing crossed a link between GPUs",
        remedy=(
            "Build nccl-tests with MPI (`make MPI=1 MPI_HOME=...`) before starting it with mpirun or srun, or give "
            "one process every GPU (`all_reduce_perf -g 8`); the rank lines (`#  Rank  0 ...`) then list every GPU and "
            "busbw is no longer 0."
        ),
    ),
    needs=(BENCH,),
)
def single_rank(ctx: RuleContext) -> Iterator[Finding]:
    """Say that a pasted run had one rank, so its figures say nothing of the links (and the gate judges none).

    busbw is algbw times 2(n-1)/n (an all-reduce) or (n-1)/n: 0 beside a non-zero algbw is one rank. Pasted with its
    sizes repeated, it is the common slip of nccl-tests built without MPI and started by mpirun: every process ran a
    test of its own GPU.
    """
    result = _pasted(ctx)
    if result is None or not result.one_rank:
        return
    rows = [r for g in result.groups for r in g.rows]
    if not rows:
        return
    repeats = sum(1 for i in ctx.issues if i.action == "ignored" and ONE_RANK_REPEAT in i.message)
    fastest = max(r.algbw_gbps for r in rows)
    also = (
        f"; {repeats} more row(s) repeat a size, each another process's own run: nccl-tests built without MPI and "
        "started by mpirun or srun runs one test per process"
        if repeats
        else ""
    )
    yield finding(
        "bench-single-rank",
        f"The {result.collective} run had one rank: busbw is 0 at every size beside an algbw of up to "
        f"{fastest:g} GB/s (a copy inside one GPU){also}. Nothing crossed a link between GPUs, so the run says "
        "nothing of them.",
        sizes=len(rows),
        repeated_rows=repeats,
    )


def _run_name(group: BenchGroup) -> str:
    return "the first run" if group.name == "all" else group.name


NCCL_BASE_LATENCY_US = 6.6
"""NCCL's model of a ring collective's fixed cost with its low-latency protocol (baseLatencies[Ring][LL], in µs:
NVIDIA/nccl@5067397c2676 src/graph/tuning.cc, unchanged since NCCL 2.5)."""
NCCL_STEP_LATENCY_US = {"NVLink": 0.6, "PCIe": 1.0, "the network": 5.0}
"""NCCL's model of each ring step over NVLink and over PCIe with the low-latency protocol (hwLatencies[NVLINK|PCI]
[Ring][LL], in µs, same source), and of a step between nodes with one GPU each (hwLatencies[NET][Tree][LL]: NCCL
uses the tree's figure for the ring's network steps then, the largest a step between nodes is given)."""
RING_STEPS = {
    "all_reduce": lambda n: 2 * (n - 1),
    "all_gather": lambda n: n - 1,
    "reduce_scatter": lambda n: n - 1,
    "broadcast": lambda n: n - 1,
    "reduce": lambda n: n - 1,
}
"""Steps of a ring over n ranks per collective (NCCL's nsteps; broadcast and reduce chain their channels)."""
SMALL_MESSAGE_BYTES = 1024
LATENCY_ABOVE_MODEL = 5.0
"""Healthy boxes measure 1.5-2.2x NCCL's model for their smallest sizes (nccl-tests fixtures: 8x A100 SXM4 32 µs
and 8x RTX 4090 on PCIe 38.8 µs for an 8-byte all-reduce whose model is 15 and 20.6 µs); five times the model is
a cost outside the links."""


def _link_kind(ctx: RuleContext, ranks: int) -> str:
    """Name the links the run's figure is modelled on.

    NVLink when the catalog says every GPU of the run shares NVLink (an NVSwitch board, a mesh), else PCIe: the
    slower figure, so a run not known to be on NVLink is held to the more lenient one.
    """
    spec = ctx.spec
    if spec is not None and spec.build in ("nvswitch", "mesh") and ranks <= spec.domain_size:
        return "NVLink"
    return "PCIe"


@rule(
    Code(
        "bench-latency-high",
        "warn",
        title="A pasted run's smallest messages take several times NCCL's own latency model for its links",
        remedy=(
            "A cost outside the links delays every small collective: another process on the GPUs or their CPU cores, "
            "GPUs in a low power state or with persistence mode off, a VM's interrupt path, or a transport through "
            "host memory or the network between GPUs of one box (NCCL_DEBUG=INFO shows it); small-message latency is "
            "what tensor-parallel decoding waits on."
        ),
    ),
    needs=(BENCH,),
)
def small_message_latency(ctx: RuleContext) -> Iterator[Finding]:
    """Report small messages far slower than NCCL's own latency model: ten times NVLink's is not a link.

    NCCL models a ring collective's latency as a fixed 6.6 µs plus 0.6 µs per step over NVLink (1.0 µs over PCIe)
    with its low-latency protocol (src/graph/tuning.cc). A 2-rank broadcast of 8 bytes on H800s is then 7.2 µs;
    measured at 127 µs, something outside the links costs every small collective. Judged on the sizes up to 1 KiB,
    for the collectives NCCL models as rings. A run on several hosts, or whose hosts the paste does not name, is
    held to every step crossing the network (5 µs each, as between nodes of one GPU): the most lenient figure NCCL
    has, so 2 ranks at 125 µs are still a transport no RDMA network gives (TCP sockets, a proxy, a VM's path).
    """
    result = _pasted(ctx)
    if result is None or result.collective not in RING_STEPS:
        return
    one_host = len(result.hosts) == 1
    for group in (g for g in result.groups if g.kind == "all"):
        n = len(group.ranks) or (result.world_size if not one_host and group.name == "all" else 0)
        small = [r for r in group.rows if r.size_bytes <= SMALL_MESSAGE_BYTES]
        if n < 2 or not small:
            continue
        times = [(t, r) for r in small for t in (r.time_us, r.inplace_time_us) if isinstance(t, float) and t > 0]
        if not times:
            continue
        fastest, row = min(times, key=lambda item: item[0])
        kind = _link_kind(ctx, n) if one_host else "the network"
        steps = RING_STEPS[result.collective](n)
        model = NCCL_BASE_LATENCY_US + steps * NCCL_STEP_LATENCY_US[kind]
        if fastest < LATENCY_ABOVE_MODEL * model:
            continue
        yield finding(
            "bench-latency-high",
            f"Its smallest messages take {fastest:g} µs ({format_size(row.size_bytes)}, the fastest of "
            f"{len(small)} size(s) up to {format_size(SMALL_MESSAGE_BYTES)}) where NCCL's own latency model puts a "
            f"{n}-rank {result.collective} over {kind} at {model:.1f} µs ({NCCL_BASE_LATENCY_US:g} µs + {steps} "
            f"step(s) x {NCCL_STEP_LATENCY_US[kind]:g} µs, ring with the LL protocol; NVIDIA/nccl "
            f"src/graph/tuning.cc): {fastest / model:.0f} times it, where healthy boxes measure about twice it.",
            group=group.name,
            measured_us=fastest,
            size_bytes=row.size_bytes,
            model_us=round(model, 2),
            link=kind,
            ranks=n,
        )


BUSBW_FLOOR_GBPS = 5.0
"""Below this a collective's bus bandwidth for large messages is slower than any path between GPUs of one box: a PCIe
3.0 x8 link carries about 6.5 GB/s. Copies staged through hosts, or TCP over 40 GbE or slower, move that little."""
NETWORK_FLOOR_GBPS = 10.0
"""Below this a run across nodes moves less than one 100 Gb/s RDMA NIC carries (about 12 GB/s), the slowest a GPU
cluster's fabric is built with since EDR InfiniBand: TCP sockets, a NIC trained slow, or a fault."""
LARGE_MESSAGE_BYTES = 64 * 2**20
FLOOR_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "sendrecv")


@rule(
    Code(
        "bench-busbw-floor",
        "warn",
        title="A pasted run's large messages move less bus bandwidth than any GPU interconnect or RDMA network carries",
        remedy=(
            "Find the path the run took: NCCL_DEBUG=INFO shows each channel's transport (NET/Socket where RDMA was "
            "meant, SHM or a host-staged path between GPUs of one box); check the NICs' link speed (`ibstat`, "
            "`ethtool`) and that NCCL found its RDMA plugin; then rerun and compare with the GPU model's figure "
            "(--gpu-model)."
        ),
    ),
    needs=(BENCH,),
)
def busbw_below_floor(ctx: RuleContext) -> Iterator[Finding]:
    """Report a run whose large messages stay below what any GPU path carries, when no figure judged it.

    Without the GPU model (or the NICs, across nodes) no expected figure holds a pasted run; 4 GB/s busbw at 512 MiB
    is still slow on any box (a PCIe 3.0 x8 link between GPUs carries more), and 5.5 GB/s between nodes is less
    than one 100 Gb/s RDMA NIC carries. Judged on sizes of 64 MiB and up, for the bandwidth-bound collectives, of
    runs of two or more ranks (a busbw above 0 says so); a run is across nodes when it names two hosts or its
    NCCL log beside it connects ranks over a network.
    """
    result = _pasted(ctx)
    if result is None or result.collective not in FLOOR_COLLECTIVES or result.world_size == 1:
        return
    if ctx.expect_busbw_gbps is not None:
        return  # the user's own figure holds it
    view = ctx.nccl if isinstance(ctx.nccl, NcclView) else None
    across = len(result.hosts) > 1 or (view is not None and any(t.kind == "NET" for t in view.transports))
    floor_gbps = NETWORK_FLOOR_GBPS if across else BUSBW_FLOOR_GBPS
    for group in (g for g in result.groups if g.kind == "all" and not isinstance(g.expected_busbw_gbps, float)):
        large = [r for r in group.rows if r.size_bytes >= LARGE_MESSAGE_BYTES and r.busbw_gbps > 0]
        if not large:
            continue
        best = max(large, key=lambda r: r.busbw_gbps)
        if best.busbw_gbps >= floor_gbps:
            continue
        slower = (
            "less than one 100 Gb/s RDMA NIC carries between nodes (about 12 GB/s)"
            if across
            else "less than a PCIe 3.0 x8 link carries between GPUs of one box, or a 100 Gb/s RDMA NIC between boxes"
        )
        yield finding(
            "bench-busbw-floor",
            f"Its largest messages move at most {best.busbw_gbps:g} GB/s busbw ({format_size(best.size_bytes)}, the "
            f"best of {len(large)} size(s) from {format_size(LARGE_MESSAGE_BYTES)}), below {floor_gbps:g} GB/s: "
            f"{slower}. That is TCP over a slow network, copies staged through hosts, or a fault; no figure of the "
            f"GPU model held it ({_why_no_figure(group)}).",
            group=group.name,
            busbw_gbps=best.busbw_gbps,
            size_bytes=best.size_bytes,
            floor_gbps=floor_gbps,
            across_nodes=across,
        )


def _why_no_figure(group: BenchGroup) -> str:
    expected = group.expected_busbw_gbps
    if isinstance(expected, Unsupported | Failed) and not expected.reason.startswith("imported run"):
        return expected.reason
    return "the GPU model is unknown (pass --gpu-model)"


@rule("nccl-env-override", needs=(BENCH,))
def command_line_settings(ctx: RuleContext) -> Iterator[Finding]:
    """Report NCCL variables typed on a pasted nccl-tests command line (``NCCL_P2P_DISABLE=1 ./all_reduce_perf``).

    The run's figures are of the path those variables leave NCCL, not of the box's own. A variable NCCL's log beside
    the run also prints is said once, from the log.
    """
    result = _pasted(ctx)
    if result is None or not result.settings:
        return
    logged = {s.name for s in ctx.nccl.settings} if isinstance(ctx.nccl, NcclView) else set()
    typed = [s for s in result.settings if s.name not in logged]
    version = result.nccl_version if not isinstance(result.nccl_version, Unsupported) else None
    found = settings_finding(
        typed, "The pasted command line", version, find_where=False, nvlink_everywhere=nvlink_everywhere(ctx)
    )
    if found is not None:
        yield found
