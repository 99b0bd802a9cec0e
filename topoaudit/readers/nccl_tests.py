"""nccl-tests or rccl-tests output (all_reduce_perf ...): a sweep of one collective, judged as a bench."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    if "bus" not in text[:20000] and "Avg bus bandwidth" not in text:  # cheap test before the parser loads
        return False
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
    description = f"{parsed.flavour} {parsed.format} output: {parsed.result.world_size} ranks"
    return Facts(
        machine_from_result(parsed.result),
        SourceInfo("nccl-tests", name, description=description),
        tuple(InputIssue(i.line, i.action, i.message) for i in parsed.issues),
        bench=parsed.result,
        used=frozenset(),
        what=f"{parsed.flavour} output",
    )


READER = Reader("nccl-tests", 90, "nccl-tests output", sniff, load, beside=("nccl-log",))
