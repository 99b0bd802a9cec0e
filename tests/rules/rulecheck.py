"""The rule-test helper, in yamllint's style: ``check(rule_or_codes, input, **options) -> set of codes``.

``input`` is a real capture's file name under ``tests/fixtures/rules/`` (see its PROVENANCE.tsv), the text
of a pasted ``nvidia-smi topo -m``, or a :class:`Machine`; ``options`` are :class:`AuditOptions` fields
(``gpu_model``, ``tp``, ``expect_domain`` ...). ``damage`` rewrites cells of a real paste, the way a box
that lost links prints it, so each rule is tested on what a user would paste.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from topoaudit.model.finding import Finding
from topoaudit.model.machine import Machine
from topoaudit.model.report import AuditOptions, Report, SourceInfo
from topoaudit.pipeline import analyze
from topoaudit.readers import load_text
from topoaudit.rules.base import Rule, RuleContext, context_of_report

FIXTURES = Path(__file__).parents[1] / "fixtures" / "rules"

Input = str | Machine


def real(name: str) -> str:
    """The text of a real capture kept in ``tests/fixtures/rules/``."""
    return (FIXTURES / name).read_text(encoding="utf-8")


def damage(text: str, cells: dict[tuple[int, int], str]) -> str:
    """``text`` with the GPU-GPU cells ``(i, j)`` (and their mirrors ``(j, i)``) replaced; spacing is kept."""
    wanted = {**cells, **{(j, i): code for (i, j), code in cells.items()}}
    out = []
    for line in text.splitlines(keepends=True):
        parts = re.split(r"(\s+)", line)
        tokens = [k for k, part in enumerate(parts) if part and not part.isspace()]
        row = re.fullmatch(r"GPU(\d+)", parts[tokens[0]]) if tokens else None
        if row and len(tokens) > 1 and not parts[tokens[1]].startswith("GPU"):
            i = int(row.group(1))
            for (a, b), code in wanted.items():
                if a == i and b + 1 < len(tokens):
                    old = parts[tokens[b + 1]]
                    parts[tokens[b + 1]] = code.ljust(len(old))
        out.append("".join(parts))
    return "".join(out)


def audit(source: Input, **options: object) -> Report:
    """The whole pipeline (collect -> model -> judge -> report) on ``source`` under ``options``."""
    opts = AuditOptions(**options)  # type: ignore[arg-type]
    if isinstance(source, Machine):
        return analyze(source, source=SourceInfo("test", "machine"), options=opts)
    text = source if "\n" in source else real(source)
    loaded = load_text(text, "paste.txt")
    return analyze(loaded.machine, source=loaded.source, input_issues=loaded.issues, options=opts)


def findings(source: Input, **options: object) -> list[Finding]:
    """Every finding the judge reports on ``source``, worst first."""
    return list(audit(source, **options).findings)


def check(rule_or_codes: Rule | str | Iterable[str] | None, source: Input, **options: object) -> set[str]:
    """The finding codes on ``source``: of one rule alone (a rule function), or of the whole judge limited
    to the codes named (one code, several, or ``None`` for every code)."""
    report = audit(source, **options)
    if callable(rule_or_codes):
        return {item.code for item in _run_one(rule_or_codes, report) if isinstance(item, Finding)}
    found = {f.code for f in report.findings}
    if rule_or_codes is None:
        return found
    wanted = {rule_or_codes} if isinstance(rule_or_codes, str) else set(rule_or_codes)
    return found & wanted


def _run_one(rule: Callable[[RuleContext], Iterable[object]], report: Report) -> list[object]:
    return list(rule(context_of_report(report)))
