"""The fleet as JUnit XML: one test case per node (failed, errored, or passed), one for the fleet's gate."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from topoaudit.model.fleet import FleetReport
from topoaudit.render import RenderOptions
from topoaudit.render.common import xml_text as x


def render(report: FleetReport, options: RenderOptions) -> str:
    suite = ET.Element("testsuite", {"name": "topoaudit fleet", "timestamp": x(report.generated_at), "time": "0"})
    props = ET.SubElement(suite, "properties")
    for name, value in (("verdict", report.gate.verdict), ("exit_code", report.gate.exit_code)):
        ET.SubElement(props, "property", {"name": name, "value": x(value)})
    failures = errors = 0
    for node in report.nodes:
        case = ET.SubElement(
            suite, "testcase", {"classname": x(f"topoaudit.fleet.{node.group or 'unjudged'}"), "name": x(node.host)}
        )
        case.set("time", "0")
        if node.status == "fail":
            failures += 1
            el = ET.SubElement(case, "failure", {"message": x(node.reason), "type": x(", ".join(node.codes))})
            note = f"\n{node.note}" if node.note else ""
            el.text = x(f"{node.host}: {', '.join(node.codes)}\n{node.reason}\ninput: {node.input}{note}")
        elif node.status in ("error", "missing"):
            errors += 1
            ET.SubElement(case, "error", {"message": x(node.reason), "type": node.status})
        elif node.warnings or node.note:
            out = ET.SubElement(case, "system-out")
            lines = [f"warnings: {', '.join(node.warnings)}"] if node.warnings else []
            out.text = x("\n".join(lines + ([node.note] if node.note else [])))
    gate = ET.SubElement(suite, "testcase", {"classname": "topoaudit.fleet", "name": "gate", "time": "0"})
    if report.gate.exit_code != 0:
        failures += 1
        ET.SubElement(gate, "failure", {"message": x(report.gate.reason), "type": report.gate.verdict})
    tests = len(report.nodes) + 1
    for element in (suite,):
        element.set("tests", str(tests))
        element.set("failures", str(failures))
        element.set("errors", str(errors))
        element.set("skipped", "0")
    root = ET.Element(
        "testsuites",
        {"name": "topoaudit fleet", "tests": str(tests), "failures": str(failures), "errors": str(errors)},
    )
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
