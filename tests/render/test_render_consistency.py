"""The same facts in every human format: counts, codes, sections, labels."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

import pytest
import report_samples as rs
from report_samples import example_report
from test_render_html import parse

from topoaudit.examples import examples
from topoaudit.model.machine import Host, Machine
from topoaudit.render import RenderOptions, render
from topoaudit.render.common import summary
from topoaudit.render.rows import not_available
from topoaudit.render.svg_topology import topology_svg


@pytest.mark.parametrize("name", sorted(examples()))
def test_every_format_states_the_same_facts(name: str) -> None:
    report = example_report(name)
    facts = len(not_available(report))
    assert facts > 0  # topo -m text never carries serials or UUIDs
    console = render(report, "console", RenderOptions(width=120))
    markdown = render(report, "markdown")
    html = render(report, "html")
    for text in (console, markdown, html):
        assert f"{facts} fact(s) not available from this source" in text
        for f in report.findings:
            assert f.code in text
        assert report.gate.verdict.upper() in text
    assert summary(report) in " ".join(parse(html).text)
    assert len(re.findall(r'<div class="finding ', html)) == len(report.findings)
    domains = re.search(r'<h2 id="domains">.*?<tbody>(.*?)</tbody>', html, re.S)
    assert domains and len(re.findall("<tr>", domains.group(1))) == len(report.domains)
    assert markdown.count("\n| ") >= len(report.domains)
    # the section the placements point at ("see bottleneck") exists in every format
    if any("see bottleneck" in a for p in report.placements for a in p.alternatives):
        assert 'id="bottleneck"' in html and "## Bottleneck" in markdown and "Bottleneck" in console


def test_summary_sentence_is_identical_in_console_markdown_and_html() -> None:
    report = example_report("h200-nvl-split")
    sentence = summary(report)
    assert f"**{sentence}**" in render(report, "markdown").replace("\\", "")
    assert sentence in " ".join(parse(render(report, "html")).text)
    console = " ".join(render(report, "console", RenderOptions(width=200)).split())
    assert " ".join(sentence.split()) in console


def test_html_legend_names_every_path_level() -> None:
    html = render(example_report("h200-nvl-split"), "html")
    legend = re.search(r'<p class="legend">(.*?)</p>', html, re.S)
    assert legend is not None
    labels = re.findall(r'<span class="(lv-[a-z]+)">([^<]+)</span>', legend.group(1))
    names = [label for _, label in labels]
    for level in ("NVLink", "(PIX)", "(PXB)", "(PHB)", "(NODE)", "(SYS)", "unknown"):
        assert any(level in n for n in names), level
    # the legend colours are the matrix colours
    cells = dict(re.findall(r'<td class="(lv-[a-z]+)" title="([^"]+)">', html))
    for css, label in labels:
        if label in cells.values():
            assert css == next(c for c, t in cells.items() if t == label)


def test_demo_picture_carries_the_demo_label() -> None:
    report = example_report("hgx-h100")
    assert report.source.demo
    svg = topology_svg(report, standalone=True)
    root = ET.fromstring(svg.split("\n", 1)[1])
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(t.startswith("DEMO") for t in texts)
    assert (root.findtext("{http://www.w3.org/2000/svg}title") or "").startswith("DEMO")


def test_cpu_only_bench_has_no_empty_topology_sections() -> None:
    report = rs.report_of(Machine("test", (), (), (), Host()), tp=1)
    report = dataclasses.replace(report, bench=rs.bench_result(n=2, host="cpu-box"))
    html = render(report, "html")
    for anchor in ("domains", "matrix", "placements", "topology", "bottleneck"):
        assert f'id="{anchor}"' not in html, anchor
    assert "No GPUs in this report" in html and 'id="bench"' in html
    markdown = render(report, "markdown")
    assert "## Link matrix" not in markdown and "## NVLink domains" not in markdown
    assert "No GPUs in this report" in markdown and "## All-reduce bench" in markdown
    console = render(report, "console", RenderOptions(width=100))
    assert "Link matrix" not in console and "NVLink domains" not in console
    assert "No GPUs in this report" in console


def test_absent_values_read_as_their_reason() -> None:
    report = example_report("hgx-h100")  # topo -m text: no host, driver, serials
    for text in (
        render(report, "markdown"),
        render(report, "html"),
        render(report, "console", RenderOptions(verbose=True)),
    ):
        assert "unsupported (" not in text
        assert "not provided by this source" in text
        doubled = re.search(r".{0,40}(\)\)\.|\.\)\.|[^.]\.\.(?!\.)).{0,10}", text.replace("...", ""))
        assert doubled is None, doubled
