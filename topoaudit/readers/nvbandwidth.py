"""nvbandwidth output: copy bandwidth measured between GPU pairs and the host, one matrix per test."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader, noted

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    head = text[:200_000]
    if "nvbandwidth" not in head and "(row)" not in head:  # cheap test first
        return False
    from topoaudit.parse.nvbandwidth import looks_like_nvbandwidth

    return looks_like_nvbandwidth(text)


def load(text: str, name: str) -> Facts:
    """The GPUs the runs measured; their matrices go to the report's captures, judged pair by pair.

    A run that stopped at a failed test (its pattern check, a CUDA error) or waived one is read as far as it went:
    the failures and waived tests go to the captures beside the matrices, for the rules to judge.
    """
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.report import InputIssue, SourceInfo
    from topoaudit.parse.nvbandwidth import parse_nvbandwidth

    parsed = parse_nvbandwidth(text, name, partial=True)
    if not parsed.gpus and not parsed.matrices and not parsed.failures:
        from topoaudit.errors import NothingToJudge

        what = (
            f"a run of {parsed.stopped_in} cut before its figures"
            if isinstance(parsed.stopped_in, str)
            else "no matrix"
        )
        raise NothingToJudge(f"{name}: nvbandwidth output with {what}: no GPU and no copy to judge")
    version = parsed.version or "version not printed"
    description = f"nvbandwidth output ({version}): {len(parsed.matrices)} matrix(es), {len(parsed.gpus)} GPU(s)"
    outcomes = [f"{len(parsed.failures)} failed test(s)"] if parsed.failures else []
    outcomes += [f"{len(parsed.waived)} waived test(s)"] if parsed.waived else []
    issues = noted(parsed.notes)
    if isinstance(parsed.stopped_in, str):
        outcomes.append(f"stopped in {parsed.stopped_in}")
        started = max(
            (n for n, line in enumerate(text.splitlines(), 1) if f"Running {parsed.stopped_in}." in line), default=0
        )
        issues += (
            InputIssue(
                started,
                "excerpt",
                f"the output stops while {parsed.stopped_in} runs: it hung there, or the paste stops there",
            ),
        )
    return Facts(
        Machine(source="nvbandwidth", gpus=parsed.gpus),
        SourceInfo("nvbandwidth", name, description=description + "".join(f"; {o}" for o in outcomes)),
        issues,
        captures=Captures(bandwidth=parsed.matrices, copy_failures=parsed.failures, waived_tests=parsed.waived),
        used=parsed.used_lines,
        what="nvbandwidth output",
    )


READER = Reader(
    "nvbandwidth",
    60,
    "nvbandwidth output",
    sniff,
    load,
    # an nccl-tests run of the same box is judged as a sweep and against the copies; `topo -m` gives the links
    beside=("nccl-tests", "topo-matrix"),
    joins=("gpu.name",),
    capture=True,
)
