"""JUnit XML, so CI systems show the gate natively.

One ``<testcase>`` per registered finding code (``classname`` ``topoaudit.<area>``), in the order the judge runs
its rules: a ``<failure>`` for every finding at or above ``--fail-on`` (``fail`` by default), passed with the
message in ``<system-out>`` for a finding below it, passed and empty when the code was judged and did not fire,
and ``<skipped>`` with the reason when it could not be judged: the judge skipped its rule, or the input lacks
the facts its rules need (:mod:`topoaudit.rules.needs`: bench codes without a bench, probe-only codes on a
pasted matrix). A code is never "passed" without having been judged. Plus a test case for each skipped rule
that is not a code, and a ``gate`` test case that fails exactly when the exit code is not 0, and is skipped with
the gate's reason when nothing could be judged (verdict "not judged"): a verdict over no evidence is no pass.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from topoaudit.model.finding import Finding
from topoaudit.model.report import NOT_JUDGED, Report
from topoaudit.render import RenderOptions
from topoaudit.render.common import xml_text as x
from topoaudit.rules.base import RuleContext, context_of_report
from topoaudit.rules.codes import CODES
from topoaudit.rules.registry import judgement

_BENCH_PREFIXES = ("bench-", "measured-")


def area_of(code: str) -> str:
    return "bench" if code.startswith(_BENCH_PREFIXES) else "topology"


def _detail(f: Finding) -> str:
    lines = [f.message]
    if f.evidence:
        lines.append("evidence: " + json.dumps(f.evidence, sort_keys=True, ensure_ascii=False, default=str))
    if f.remedy:
        lines.append("remedy: " + f.remedy)
    return "\n".join(lines)


def render(report: Report, options: RenderOptions) -> str:
    by_code: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_code.setdefault(f.code, []).append(f)
    codes = list(CODES) + sorted(c for c in by_code if c not in CODES)
    ctx = context_of_report(report)
    skip_reasons: dict[str, list[str]] = {}
    for s in report.skipped:
        skip_reasons.setdefault(s.rule, []).append(s.reason)
    threshold = report.options.fail_on.rank
    suite = ET.Element(
        "testsuite",
        {
            "name": x(f"topoaudit {report.source.kind} {report.source.name}"),
            "timestamp": x(report.generated_at),
            "time": "0",
        },
    )
    host = report.machine.host.hostname
    if isinstance(host, str):
        suite.set("hostname", x(host))
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("verdict", report.gate.verdict),
        ("exit_code", report.gate.exit_code),
        ("judged", "; ".join(report.gate.judged)),
        ("fail_on", report.options.fail_on.value),
        ("gpu_model", report.gpu_model),
        ("summary", _summary(report)),
        ("tool_version", report.tool_version),
    ):
        ET.SubElement(props, "property", {"name": name, "value": x(value)})
    tests = failures = skipped = 0

    def case(classname: str, name: str) -> ET.Element:
        nonlocal tests
        tests += 1
        return ET.SubElement(suite, "testcase", {"classname": x(classname), "name": x(name), "time": "0"})

    for code in codes:
        area = area_of(code)
        tc = case(f"topoaudit.{area}", code)
        found = by_code.get(code, [])
        failing = [f for f in found if f.severity.rank >= threshold]
        passing = [f for f in found if f.severity.rank < threshold]
        if failing:
            failures += 1
            first = failing[0]
            el = ET.SubElement(tc, "failure", {"message": x(first.message), "type": first.severity.value})
            el.text = x("\n\n".join(_detail(f) for f in failing))
        elif not found and (reason := _not_judged(code, ctx, skip_reasons)):
            skipped += 1
            ET.SubElement(tc, "skipped", {"message": x(reason)})
        if passing:
            out = ET.SubElement(tc, "system-out")
            out.text = x("\n\n".join(f"[{f.severity.value}] {_detail(f)}" for f in passing))
    for rule, reasons in skip_reasons.items():
        if rule in codes:
            continue
        tc = case("topoaudit.rules", rule)
        skipped += 1
        ET.SubElement(tc, "skipped", {"message": x("; ".join(reasons))})
    gate = case("topoaudit", "gate")
    if report.gate.exit_code != 0:
        failures += 1
        el = ET.SubElement(gate, "failure", {"message": x(report.gate.reason), "type": x(report.gate.verdict)})
        el.text = x(f"exit {report.gate.exit_code}: {report.gate.reason}")
    elif report.gate.verdict == NOT_JUDGED:
        skipped += 1
        ET.SubElement(gate, "skipped", {"message": x(report.gate.reason)})
    elif report.gate.judged:
        out = ET.SubElement(gate, "system-out")
        out.text = x("judged: " + "; ".join(report.gate.judged))
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    root = ET.Element(
        "testsuites",
        {"name": "topoaudit", "tests": str(tests), "failures": str(failures), "errors": "0", "skipped": str(skipped)},
    )
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def not_judged(code: str, report: Report) -> str:
    """Why ``code`` could not be judged on ``report`` ("" when it was): what its skipped case says."""
    skip_reasons: dict[str, list[str]] = {}
    for s in report.skipped:
        skip_reasons.setdefault(s.rule, []).append(s.reason)
    return _not_judged(code, context_of_report(report), skip_reasons)


def _not_judged(code: str, ctx: RuleContext, skip_reasons: dict[str, list[str]]) -> str:
    """Why ``code`` could not be judged on this report ("" when it was judged)."""
    if code in skip_reasons:
        return "; ".join(skip_reasons[code])
    return judgement(code, ctx) if code in CODES else ""


def _summary(report: Report) -> str:
    from topoaudit.render.common import summary

    return summary(report)
