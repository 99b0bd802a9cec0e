"""The ``pcie-link-degraded`` message on a box where many GPUs share one problem reads as a person would
write it: GPUs with the same problem named together, one bracket-free note about idle links, and a long
list that says how many it leaves out."""

from __future__ import annotations

import dataclasses

from builders import machine
from test_finding_text import untidy

from topoaudit.model.machine import PcieLink
from topoaudit.model.report import SourceInfo
from topoaudit.pipeline import analyze


def _degraded_message(links: dict[int, PcieLink], n: int = 8) -> str:
    base = machine(n, lambda i, j: "NV18")
    gpus = tuple(dataclasses.replace(g, pcie=links.get(g.index, PcieLink(4, 4, 16, 16, False))) for g in base.gpus)
    probed = dataclasses.replace(base, source="nvml", gpus=gpus)
    report = analyze(probed, source=SourceInfo("test", "box"))
    (degraded,) = (f for f in report.findings if f.code == "pcie-link-degraded")
    return degraded.message


def test_eight_idle_gpus_with_one_problem_are_named_once_with_one_note() -> None:
    message = _degraded_message({i: PcieLink(1, 4, 16, 16, False) for i in range(8)})
    assert message.count("Gen1 of Gen4") == 1
    assert "GPU0, GPU1, GPU2, GPU3 and 4 more Gen1 of Gen4 while idle" in message
    assert "rerun under load" in message and not untidy(message)


def test_a_narrow_link_beside_an_idle_one_keeps_a_single_level_of_brackets() -> None:
    message = _degraded_message({0: PcieLink(1, 4, 16, 16, False), 5: PcieLink(4, 4, 8, 16, False)})
    assert "GPU0 Gen1 of Gen4 while idle" in message and "GPU5 x8 of x16" in message
    assert not untidy(message)


def test_more_than_eight_different_problems_say_how_many_are_left_out() -> None:
    links = {i: PcieLink(4, 5, 16 - i, 16, True) for i in range(10)}
    message = _degraded_message(links, n=10)
    assert message.startswith("10 GPU PCIe link(s) below maximum")
    assert "and 2 more" in message and not untidy(message)
