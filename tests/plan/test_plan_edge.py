"""A plan at the edge says which limit binds, with its numbers: the NVLink domain (TP takes every GPU of
it), the cards' memory (the share of usable memory each card holds against the 95% edge), or both; and the
plan output states once what a GB is."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from topoaudit.catalog import find_gpu
from topoaudit.model.plan import PlanRequest
from topoaudit.plan.sizing import plan_deployment

Run = Callable[..., tuple[int, str, str]]  # the `run` fixture of tests/conftest.py


def _h200_plan(weights_gb: float):  # type: ignore[no-untyped-def]
    spec = find_gpu("H200")
    assert spec is not None
    return plan_deployment(PlanRequest(weights_gb=weights_gb), spec)


def test_99_percent_of_the_cards_on_the_whole_domain_says_both_limits_bind() -> None:
    plan = _h200_plan(880)  # 1,100 GB over 8 cards of 139 GB usable
    fit = plan.standard_node
    assert plan.verdict == "at-edge-of-domain" and plan.tp_size == 8
    assert "both limits bind" in fit.verdict
    assert "TP8 takes all 8 GPUs of the domain" in fit.verdict
    assert "137.5 of 139 GB usable (99%, at or over the 95% memory edge)" in fit.verdict


def test_76_percent_of_the_cards_on_the_whole_domain_says_the_domain_binds_not_memory() -> None:
    plan = _h200_plan(680)  # 850 GB: 7 cards by memory, TP rounded up to 8
    fit = plan.standard_node
    assert plan.verdict == "at-edge-of-domain" and plan.tp_size == 8
    assert "at the edge of the domain, not of memory" in fit.verdict
    assert "106.2 of 139 GB usable (76%, under the 95% memory edge)" in fit.verdict


def test_full_cards_inside_a_roomy_domain_say_memory_binds_not_the_domain() -> None:
    plan = _h200_plan(440)  # 550 GB over 4 cards: 137.5 GB each, TP4 of an 8-GPU domain
    fit = plan.standard_node
    assert plan.verdict == "at-edge-of-domain" and plan.tp_size == 4
    assert "at the edge of memory, not of the domain" in fit.verdict
    assert "137.5 of 139 GB usable (99%, at or over the 95% memory edge)" in fit.verdict
    assert "TP4 of 8 GPUs" in fit.verdict


def test_a_plan_with_room_on_both_says_nothing_of_an_edge() -> None:
    plan = _h200_plan(400)  # 500 GB over 4 cards: 90%, TP4 of 8
    assert plan.verdict == "fits-one-domain" and "edge" not in plan.standard_node.verdict


@pytest.mark.parametrize("fmt", ["console", "markdown"])
def test_the_plan_output_says_once_what_a_gb_is(run: Run, fmt: str) -> None:
    code, out, _ = run("plan", "--weights-gb", "680", "--gpu", "H200", "--format", fmt, "--no-color")
    assert code == 0
    assert len(re.findall(r"GB = 10\^9 bytes", out)) == 1
    assert "141 GB = 131.3 GiB" in out  # the card's memory in both units: 141e9 / 2**30


def test_the_binding_limit_reaches_the_console_and_json(run: Run) -> None:
    code, out, _ = run("plan", "--weights-gb", "680", "--gpu", "H200", "--format", "json")
    assert code == 0
    assert "at the edge of the domain, not of memory" in json.loads(out)["plan"]["standard_node"]["verdict"]
    code, out, _ = run("plan", "--weights-gb", "680", "--gpu", "H200", "--no-color")
    assert "at the edge of the domain, not of memory" in " ".join(out.split())
