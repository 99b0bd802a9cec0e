"""JUnit XML: CI shows the gate natively -- one test case per rule code, failures for fail findings."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import report_samples as rs
from report_samples import example_report

from topoaudit.model.finding import Severity, Skipped
from topoaudit.model.network import parse_nics
from topoaudit.model.report import AuditOptions
from topoaudit.pipeline import analyze
from topoaudit.readers import load_example
from topoaudit.render import render
from topoaudit.rules.codes import CODES
from topoaudit.rules.needs import PROBE_SOURCES
from topoaudit.rules.registry import codes_raised_in

PROBE_ONLY_CODES = codes_raised_in("topoaudit.rules.probe_rules")  # each judged from a probe's facts
PROBED_SOURCES = frozenset(PROBE_SOURCES)


def _suite(report: object) -> ET.Element:
    root = ET.fromstring(render(report, "junit").split("\n", 1)[1])  # type: ignore[arg-type]
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    return suite


def _cases(suite: ET.Element) -> dict[str, ET.Element]:
    return {tc.get("name", ""): tc for tc in suite.iter("testcase")}


def test_one_case_per_registered_code_and_a_gate() -> None:
    suite = _suite(example_report("hgx-h100"))
    cases = _cases(suite)
    assert set(CODES) <= set(cases)
    assert "gate" in cases
    assert suite.get("failures") == "0" and suite.get("tests") == str(len(cases))
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "pass" and props["exit_code"] == "0"


def test_fail_findings_are_failures_and_the_gate_fails() -> None:
    report = example_report("h200-nvl-split")  # TP=8 on two 4-GPU domains
    suite = _suite(report)
    cases = _cases(suite)
    failure = cases["tp-group-crosses-domain"].find("failure")
    assert failure is not None and "TP=8 cannot stay on NVLink" in failure.get("message", "")
    assert "remedy:" in (failure.text or "")
    assert cases["gate"].find("failure") is not None
    fail_codes = {f.code for f in report.findings if f.severity == Severity.FAIL}
    assert int(suite.get("failures", "0")) == len(fail_codes) + 1
    # an info finding passes, with its message kept for the reader
    out = cases["nvlink-split-domain"].find("system-out")
    assert out is not None and "[info]" in (out.text or "")
    assert cases["nvlink-split-domain"].find("failure") is None


def test_fail_on_warn_turns_warnings_into_failures() -> None:
    loaded = load_example("dgx1-cube-mesh")  # judged for runs across nodes: its NICs far from six GPUs warn
    report = analyze(loaded.machine, source=loaded.source, options=AuditOptions(nics=parse_nics("1x100")))
    warn_codes = {f.code for f in report.findings if f.severity == Severity.WARN}
    assert warn_codes
    stricter = dataclasses.replace(report, options=dataclasses.replace(report.options, fail_on=Severity.WARN))
    cases = _cases(_suite(stricter))
    for code in warn_codes:
        assert cases[code].find("failure") is not None


def test_bench_codes_skipped_without_a_bench_and_run_with_one() -> None:
    report = rs.report_of(rs.split_machine())
    cases = _cases(_suite(report))
    bench_codes = [c for c in CODES if c.startswith("bench-")]
    assert bench_codes
    for code in bench_codes:
        assert cases[code].find("skipped") is not None
    with_bench = dataclasses.replace(report, bench=rs.bench_result())
    cases = _cases(_suite(with_bench))
    assert all(cases[c].find("skipped") is None for c in bench_codes)


def test_skipped_rules_are_skipped_cases() -> None:
    report = dataclasses.replace(
        rs.report_of(rs.split_machine(), tp=4), skipped=(Skipped("nvlink-errors", "topo -m has no error counters"),)
    )
    suite = _suite(report)
    case = _cases(suite)["nvlink-errors"]
    skipped = case.find("skipped")
    assert skipped is not None and "error counters" in skipped.get("message", "")
    assert int(suite.get("skipped", "0")) >= 1


def test_hostile_strings_keep_the_xml_well_formed() -> None:
    report = rs.hostile_report()
    suite = _suite(report)
    assert suite.get("hostname", "").startswith("<script>")  # data, parsed back as text
    assert AuditOptions().fail_on == Severity.FAIL


def _verdicts(suite: ET.Element) -> dict[str, str]:
    """Each test case's outcome by name; a name that appears twice is an error in the file."""
    outcomes: dict[str, str] = {}
    for tc in suite.iter("testcase"):
        name = tc.get("name", "")
        assert name not in outcomes, f"two test cases named {name}"
        outcomes[name] = next((child.tag for child in tc if child.tag in ("failure", "skipped")), "passed")
    return outcomes


def test_probe_only_rules_on_a_pasted_matrix_are_skipped_with_the_reason_never_passed() -> None:
    report = example_report("h200-nvl-split")
    assert report.machine.source == "topo-matrix"
    suite = _suite(report)
    outcomes = _verdicts(suite)
    for code in PROBE_ONLY_CODES:
        assert outcomes[code] == "skipped", code
        message = _cases(suite)[code].find("skipped").get("message", "")  # type: ignore[union-attr]
        assert "live probe" in message and "topo-matrix" in message
    assert outcomes["nvlink-absent"] == "passed"  # a topology rule did run on the matrix
    assert int(suite.get("skipped", "")) == sum(v == "skipped" for v in outcomes.values())
    assert int(suite.get("tests", "")) == len(outcomes)


def test_probe_only_rules_on_a_probed_machine_are_judged() -> None:
    machine = dataclasses.replace(rs.split_machine(), source="nvml")
    report = rs.report_of(machine)
    suite = _suite(report)
    outcomes = _verdicts(suite)
    judge_skipped = {s.rule for s in report.skipped}
    judged = {code for code in PROBE_ONLY_CODES if outcomes[code] != "skipped"}
    assert judged == PROBE_ONLY_CODES - judge_skipped and len(judged) >= 4, outcomes
    for code in PROBE_ONLY_CODES & judge_skipped:  # skipped by the judge, for its own reason
        message = _cases(suite)[code].find("skipped").get("message", "")  # type: ignore[union-attr]
        assert "live probe" not in message


def test_the_probe_only_list_matches_what_the_probe_rules_emit() -> None:
    import ast
    import inspect

    from topoaudit.rules import probe_rules

    tree = ast.parse(inspect.getsource(probe_rules))
    emitted = {
        call.args[0].value
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and getattr(call.func, "id", "") in ("finding", "Skipped")
        and call.args
        and isinstance(call.args[0], ast.Constant)
    }
    assert emitted == PROBE_ONLY_CODES
    assert set(probe_rules.PROBE_SOURCES) == PROBED_SOURCES


def test_a_code_the_judge_skipped_is_one_skipped_case_not_also_a_passed_one() -> None:
    report = dataclasses.replace(
        rs.report_of(rs.split_machine(), tp=4),
        skipped=(
            Skipped("nvlink-absent", "the nccl-tests source describes no GPU-to-GPU links"),
            Skipped("custom-check", "needs a fact this source lacks"),
        ),
    )
    suite = _suite(report)
    outcomes = _verdicts(suite)
    assert outcomes["nvlink-absent"] == "skipped" and outcomes["custom-check"] == "skipped"
    message = _cases(suite)["nvlink-absent"].find("skipped").get("message", "")  # type: ignore[union-attr]
    assert message == "the nccl-tests source describes no GPU-to-GPU links"
