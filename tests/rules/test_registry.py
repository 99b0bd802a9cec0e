"""The registry of rules and codes: every code declared once, beside its rule, each with a test, none raised
undeclared; what lists codes (JUnit, the remedy script, policies) reads them from the declarations."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from rulecheck import audit

from topoaudit.model.finding import Finding
from topoaudit.rules import registry
from topoaudit.rules.base import RuleContext, finding
from topoaudit.rules.codes import CODES, Code, declare_code
from topoaudit.rules.families import FAMILIES
from topoaudit.rules.remedies import TEMPLATES, remedy

TESTS = Path(__file__).parents[1]


def test_every_declared_code_is_named_by_a_test() -> None:
    """A declared code with no test is a contract nothing checks; the corpus' label table does not count."""
    texts = "".join(
        p.read_text(encoding="utf-8")
        for p in TESTS.rglob("test_*.py")
        if p.name != "test_registry.py" and "real" not in p.parts
    )
    untested = [code for code in CODES if not re.search(rf"(?<![a-z0-9-]){code}(?![a-z0-9-])", texts)]
    assert untested == []


def test_a_code_raised_but_not_declared_stops_the_judge() -> None:
    def stray(ctx: RuleContext) -> Iterable[Finding]:
        yield finding("nvlink-absent", "a code this rule does not declare")

    entry = registry.register_rule(stray, ["nvlink-split-domain"])
    try:
        with pytest.raises(registry.Undeclared, match="stray raised undeclared code 'nvlink-absent'"):
            audit("topo-h100-8gpu-stas-ht-1.txt")
    finally:
        registry._RULES.remove(entry)
        registry._IN_ORDER.clear()
    with pytest.raises(KeyError):
        finding("no-such-code", "a code nobody declared")


def test_a_code_is_declared_once() -> None:
    known = CODES["nvlink-absent"]
    assert declare_code(known) is known  # the same declaration again (a module imported twice) is no change
    with pytest.raises(ValueError, match="declared twice"):
        declare_code(dataclasses.replace(known, title="another title"))
    with pytest.raises(ValueError, match="kebab-case"):
        declare_code(Code("NotKebab", "warn", title="t", remedy="r"))


def test_every_rule_raises_only_declared_codes_and_names_its_familys_facts() -> None:
    modules = {f.module: f for f in FAMILIES}
    for entry in registry.rules():
        assert entry.module in modules, entry.name
        assert set(entry.codes) <= set(CODES), entry.name
        assert set(modules[entry.module].needs) <= set(entry.needs), (entry.name, entry.needs)
    raised = {code for entry in registry.rules() for code in entry.codes}
    assert [c for c in CODES if c not in raised] == [c for c in CODES if c.startswith("fleet-")]
    assert all(CODES[c].needs for c in CODES if c.startswith("fleet-"))  # judged across nodes only


def test_each_code_is_documented_by_the_rule_that_declares_it() -> None:
    for code in CODES.values():
        assert len(code.doc) > 40, code.code
        assert code.declared_in in {f.module for f in FAMILIES}, code.code
    assert "NVLink SHARP" in CODES["nccl-nvls-off"].doc


def test_the_remedy_templates_a_code_may_print_are_declared_templates() -> None:
    actions = {a for code in CODES.values() for a in code.remedy_actions}
    assert actions <= set(TEMPLATES)
    assert actions == set(TEMPLATES)  # every template is one some code may print


def test_a_finding_carrying_a_command_its_code_does_not_declare_stops_the_judge() -> None:
    """A forgotten ``remedy_actions`` fails where the rule first raises the finding, never silently."""

    def stray(ctx: RuleContext) -> Iterable[Finding]:
        found = finding("nvlink-absent", "no NVLink")
        yield dataclasses.replace(found, remedy_commands=(remedy("module-load", module="nvidia_peermem"),))

    entry = registry.register_rule(stray, ["nvlink-absent"])
    try:
        with pytest.raises(registry.Undeclared, match="'module-load', which nvlink-absent does not declare"):
            audit("topo-h100-8gpu-stas-ht-1.txt")
    finally:
        registry._RULES.remove(entry)
        registry._IN_ORDER.clear()


def test_needs_say_why_a_code_was_not_judged() -> None:
    from topoaudit.render.junit import not_judged

    report = audit("topo-h100-8gpu-stas-ht-1.txt")
    assert not_judged("nvlink-absent", report) == ""  # a topology rule ran on the matrix
    assert "live probe" in not_judged("fabric-not-ready", report)
    assert not_judged("nccl-ring-split", report) == "judged from an NCCL_DEBUG=INFO log; this report has none"
    assert "topoaudit bench" in not_judged("bench-timeout", report)
    assert "across many nodes" in not_judged("fleet-stale-report", report)
