"""Finding text reads cleanly: one level of parentheses, every one closed, no doubled punctuation.

Every finding the judge produces for every real capture in ``tests/fixtures/topo/`` and every bundled
example is checked, as the box is (GPU model unknown) and judged as each catalog model, with the TP
sizes and expectations people ask for.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from builders import machine

from topoaudit import examples
from topoaudit.catalog import all_gpus
from topoaudit.model.machine import P2PStatus
from topoaudit.model.report import AuditOptions, SourceInfo
from topoaudit.pipeline import analyze
from topoaudit.readers import load_path
from topoaudit.rules.base import first_few

TOPO = Path(__file__).parents[1] / "fixtures" / "topo"
EXAMPLES = Path(examples.__file__).parent
CAPTURES = sorted(TOPO.glob("topo-*.txt")) + sorted(EXAMPLES.glob("*.txt"))
OPTIONS: list[dict[str, object]] = [
    {},
    {"tp": 4},
    {"tp": 16},
    {"expect_gpus": 16, "expect_domain": 8},
]
OPTIONS += [{"gpu_model": spec.name} for spec in all_gpus()]
# "..", ".).", ";.", ", .", "?." -- but not "e.g." or "(width?):"
DOUBLED = re.compile(r"[.;:,]\)?\s*[.;:,!?]|[!?]\s*[.!?]")


def untidy(message: str) -> list[str]:
    """What a careful reader would correct in ``message`` (empty when it reads cleanly)."""
    problems = []
    depth = deepest = 0
    for char in message:
        depth += (char == "(") - (char == ")")
        deepest = max(deepest, depth)
        if depth < 0:
            problems.append("a ')' closes nothing")
            depth = 0
    if depth > 0:
        problems.append("a '(' is never closed")
    if deepest > 1:
        problems.append("parentheses inside parentheses")
    if ") (" in message:
        problems.append("two parentheses side by side")
    if doubled := DOUBLED.search(message):
        problems.append(f"doubled punctuation {doubled.group()!r}")
    if re.search(r"\s[.;:,]", message):
        problems.append("a space before punctuation")
    if not message.endswith("."):
        problems.append("no full stop at the end")
    return problems


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_every_finding_on_every_capture_reads_cleanly(path: Path) -> None:
    loaded = load_path(str(path))
    bad = {}
    for options in OPTIONS:
        report = analyze(
            loaded.machine,
            source=loaded.source,
            input_issues=loaded.issues,
            options=AuditOptions(**options),  # type: ignore[arg-type]
        )
        for found in report.findings:
            if problems := untidy(found.message):
                bad[found.message] = (found.code, options, problems)
    assert not bad, "\n".join(f"{code} {options}: {problems}\n  {m}" for m, (code, options, problems) in bad.items())


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ("runs over SYS (by design for NVIDIA H200 NVL (NVLink bridges join 2 or 4 GPUs)).", "parentheses inside"),
        ("slowest path: cross-socket SMP link (SYS) (GPU model unknown).", "side by side"),
        ("recovered (first: line 3: read as SYS.).", "doubled punctuation"),
        ("GPU0-GPU1 NV12, GPU0-GPU2 NV12 ....", "doubled punctuation"),
        ("GPUs {0,1} (no bridge", "never closed"),
        ("GPUs {0,1} have no bridge", "full stop"),
    ],
)
def test_the_checker_catches_what_a_reader_would(message: str, problem: str) -> None:
    assert any(problem in p for p in untidy(message))


def test_long_lists_say_how_many_are_left_out() -> None:
    assert first_few(["GPU0", "GPU1", "GPU2"], 2) == "GPU0, GPU1 and 1 more"
    assert first_few(["GPU0", "GPU1"], 2) == "GPU0, GPU1"
    m = machine(8, lambda i, j: "NV12")
    report = analyze(m, source=SourceInfo("test", "box"), options=AuditOptions(gpu_model="NVIDIA H100 SXM5"))
    (degraded,) = (f for f in report.findings if f.code == "nvlink-degraded")
    assert degraded.message.endswith("GPU0-GPU6 NV12 and 22 more.") and not untidy(degraded.message)


def test_p2p_finding_on_many_pairs_reads_cleanly() -> None:
    base = machine(8, lambda i, j: "PIX")
    pairs = tuple(P2PStatus(i, j, read="chipset-not-supported", write="ok") for i in range(8) for j in range(i + 1, 8))
    probed = type(base)("nvml", base.gpus, base.nics, base.links, p2p=pairs)
    report = analyze(probed, source=SourceInfo("test", "box"))
    (p2p,) = (f for f in report.findings if f.code == "p2p-unavailable")
    assert "and 22 more" in p2p.message and not untidy(p2p.message)
