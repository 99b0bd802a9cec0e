"""nccl-tests, rccl-tests or MSCCL++'s mscclpp-test output (all_reduce_perf ...), or the Markdown table of
ml-engineering's all_reduce_bench.py: a sweep of one collective, judged as a bench.

Read as far as it goes: a tail of rows with its footer, a footer alone, a run that printed its parameters and
device lines and then nothing, a run that died on a CUDA or NCCL failure. Several runs pasted one after another
are judged each on its own: a later run of the same collective on the same GPUs is a group of the bench
(``run 2 (line 41)``), one of other GPUs or another collective is said and left to a paste of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import InputIssue
    from topoaudit.parse.nccl_tests import NcclTestsParse

CHEAP_WORDS = ("bus", "_perf", "nThread", "failure", "Out of bounds", "Using devices", "float", "half", "int8", "int32")
"""Words of nccl-tests' own lines, one of which any part of its output holds (a hung run has no bandwidth; a tail of
rows pasted alone has its data type in every row)."""
RUN_STARTS = "another nccl-tests run starts here"
"""The parser's note at the first line of each run after the first (parse.nccl_tests)."""


def sniff(text: str) -> bool:
    head = text[:20000]
    if not any(word in head for word in CHEAP_WORDS) and "Avg bus bandwidth" not in text:
        return False  # cheap test before the parser loads
    from topoaudit.parse.nccl_tests import looks_like_nccl_tests

    return looks_like_nccl_tests(text)


def load(text: str, name: str) -> Facts:
    """The ranks' GPUs (first host) become the machine; the rows become the bench the pipeline judges.

    The run's own lines are not told apart from the rest: an NCCL_DEBUG=INFO log printed beside the table is read
    from the whole paste.
    """
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import InputIssue, SourceInfo
    from topoaudit.parse.nccl_tests import machine_from_result, parse_nccl_tests

    parsed = parse_nccl_tests(text, name)
    result, apart = with_later_runs(parsed)
    ranks = f"{result.world_size} ranks" if result.world_size else "ranks not named"
    runs = f", {len(parsed.runs)} runs" if len(parsed.runs) > 1 else ""
    description = f"{parsed.flavour} {parsed.format} output: {ranks}{runs}"
    return Facts(
        machine_from_result(result),
        SourceInfo("nccl-tests", name, description=description),
        (*dict.fromkeys(InputIssue(i.line, i.action, i.message) for i in parsed.issues), *apart),
        bench=result,
        used=frozenset(),
        what=f"{parsed.flavour} output",
    )


def with_later_runs(parsed: NcclTestsParse) -> tuple[BenchResult, tuple[InputIssue, ...]]:
    """The first run with each later run of the same collective on the same GPUs as a group of its own, and an
    input issue for each later run that is another box's or another collective's (not judged with the first)."""
    import dataclasses

    from topoaudit.model.report import InputIssue

    first, later = parsed.result, parsed.runs[1:]
    if not later:
        return first, ()
    starts = [i.line for i in parsed.issues if i.message.startswith(RUN_STARTS)]
    groups, failures, problems, apart = list(first.groups), list(first.failures), list(first.row_problems), []
    status = first.status
    for k, run in enumerate(later, 2):
        line = starts[k - 2] if k - 2 < len(starts) else 0
        other = _other_run(first, run)
        if other:
            failed = f"; it reports {len(run.failures)} failure(s)" if run.failures else ""
            apart.append(
                InputIssue(
                    line,
                    "recovered",
                    f"run {k} starts here and is {other}: it is not judged with the first run{failed}; paste it alone "
                    "to judge it",
                )
            )
            continue
        ranks = first.groups[0].ranks if first.groups and not run.ranks else run.groups[0].ranks
        groups += [dataclasses.replace(g, name=f"run {k} (line {line})", ranks=ranks) for g in run.groups]
        failures += run.failures
        problems += run.row_problems
        status = "failed" if "failed" in (status, run.status) else status
    last = later[-1].last_output
    merged = dataclasses.replace(
        first,
        groups=tuple(groups),
        failures=tuple(failures),
        row_problems=tuple(problems),
        status=status,
        last_output=last if not apart else first.last_output,
        table_header=later[-1].table_header if not apart else first.table_header,
    )
    return merged, tuple(apart)


def _other_run(first: BenchResult, run: BenchResult) -> str:
    """Why ``run`` is not a run of ``first``'s collective on its GPUs ("" when it is)."""
    if run.collective != first.collective:
        return f"a run of {run.collective}, not {first.collective}"
    mine = [(r.host, r.local_rank, r.name) for r in first.ranks]
    theirs = [(r.host, r.local_rank, r.name) for r in run.ranks]
    if mine and theirs and mine != theirs:
        names = sorted({str(r.name) for r in run.ranks})
        return f"a run on other GPUs ({len(theirs)} rank(s): {', '.join(names[:2])})"
    return ""


READER = Reader("nccl-tests", 90, "nccl-tests output", sniff, load, beside=("nccl-log",))
