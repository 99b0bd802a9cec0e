"""The HTML report: self-contained, readable, the topology drawn, and every machine string inert."""

from __future__ import annotations

import dataclasses
import itertools
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
import report_samples as rs
from builders import machine
from report_samples import example_report

from topoaudit.examples import examples
from topoaudit.model.report import SourceInfo
from topoaudit.pipeline import analyze
from topoaudit.render import FORMATS, render
from topoaudit.render.common import summary
from topoaudit.render.svg_topology import topology_svg

SVG = "{http://www.w3.org/2000/svg}"


class Page(HTMLParser):
    """Every element and attribute of a page, and its visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def assert_inert(html: str) -> Page:
    """No script, no active element, no event handler, nothing fetched from anywhere."""
    page = parse(html)
    for tag, attrs in page.tags:
        assert tag not in {"script", "img", "iframe", "object", "embed", "link", "base", "form", "image", "use"}, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name not in {"src", "href", "xlink:href", "srcset", "action"}, (tag, name)
            if value and name != "xmlns":
                assert "http:" not in value and "https:" not in value, (tag, name, value)
    return page


def test_html_is_registered_and_self_contained() -> None:
    assert "html" in FORMATS and "junit" in FORMATS
    html = render(example_report("h200-nvl-split"), "html")
    assert html.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    page = assert_inert(html)
    tags = [t for t, _ in page.tags]
    assert "svg" in tags and "style" in tags
    text = " ".join(page.text)
    # the sentence a support engineer acts on, and the sections of the issue
    assert "2 NVLink domains {0-3} {4-7}" in text and "TP=8 cannot stay on NVLink" in text
    for heading in ("Machine", "Topology", "Findings", "NVLink domains", "Tensor-parallel placements", "Link matrix"):
        assert heading in text
    assert "Remedy:" in text and "Evidence" in text
    assert "What could not be probed" in text


@pytest.mark.parametrize("name", sorted(examples()))
def test_every_example_renders_a_picture_with_every_gpu(name: str) -> None:
    report = example_report(name)
    svg = ET.fromstring(topology_svg(report, standalone=True).split("\n", 1)[1])
    labels = {t.text for t in svg.iter(f"{SVG}text")}
    for gpu in report.machine.gpus:
        assert gpu.label in labels
    assert len([g for g in svg.iter(f"{SVG}g") if g.get("class") == "gpu"]) == len(report.machine.gpus)
    page = assert_inert(render(report, "html"))
    text = " ".join(page.text)
    assert summary(report) in text and f"Exit {report.gate.exit_code}:" in text
    for gpu in report.machine.gpus:
        assert gpu.label in text  # every GPU in the identity table and the matrix


def test_link_matrix_cells_are_coloured_by_path() -> None:
    html = render(example_report("h200-nvl-split"), "html")
    assert '<td class="lv-nv" title="NVLink">NV6</td>' in html
    assert '<td class="lv-sys" title="cross-socket SMP link (SYS)">SYS</td>' in html


def test_hostile_strings_stay_text() -> None:
    report = rs.hostile_report()
    html = render(report, "html")
    page = assert_inert(html)
    text = "".join(page.text)
    assert "<script>alert('x')</script>" in text  # shown to the reader, as text
    assert "<script" not in html.lower().split("<style>")[0] + html.lower().split("</style>")[1]
    assert "\x07" not in html  # a control character from the machine becomes U+FFFD


def _outside_code(md: str) -> str:
    """Markdown with fenced blocks and inline code spans removed (CommonMark shows those literally)."""
    out, fence = [], ""
    for line in md.splitlines():
        if fence:
            if line.strip() == fence:
                fence = ""
            continue
        m = re.match(r"^(`{3,}|~{3,})", line.strip())
        if m:
            fence = m.group(1)
            continue
        out.append(re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", line))
    return "\n".join(out)


def test_hostile_strings_in_markdown_are_escaped() -> None:
    md = render(rs.hostile_report(), "markdown")
    text = _outside_code(md)
    assert rs.HOSTILE[:20] not in text  # never verbatim outside code
    assert "<script" not in text and "<img" not in text
    assert re.search(r"(?<!\\)!(?<!\\)\[", text) is None  # no image syntax survives
    assert re.search(r"(?<!\\)\]\(http", text) is None  # no link syntax survives
    assert "&lt;script&gt;" in md  # the reader still sees what the machine said


def test_hostile_strings_in_svg_and_junit_stay_well_formed() -> None:
    report = rs.hostile_report()
    svg = topology_svg(report, standalone=True)
    root = ET.fromstring(svg.split("\n", 1)[1])
    assert not [el for el in root.iter() if el.tag.endswith("script")]
    junit = render(report, "junit")
    ET.fromstring(junit.split("\n", 1)[1])


def test_identity_lists_serials_and_bus_ids_when_known() -> None:
    html = render(rs.identity_report(), "html")
    assert rs.SERIALS[3] in html and rs.UUIDS[5] in html and "00000000:1a:00.0" in html
    assert rs.HOSTNAME in html and "550.54.15" in html
    # topo -m text has no serials: the column is left out, and the absence is listed once
    plain = render(example_report("hgx-h100"), "html")
    assert "<th>Serial</th>" not in plain


def _gpu_boxes(svg_text: str) -> list[tuple[float, float, float, float]]:
    root = ET.fromstring(svg_text)
    boxes = []
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "gpu":
            r = g.find(f"{SVG}rect")
            assert r is not None
            boxes.append(
                (float(r.get("x", 0)), float(r.get("y", 0)), float(r.get("width", 0)), float(r.get("height", 0)))
            )
    return boxes


@pytest.mark.parametrize(
    ("n", "code"),
    [
        (8, lambda i, j: "NV18"),
        (8, lambda i, j: "NV6" if i // 4 == j // 4 else "SYS"),
        (8, lambda i, j: "NV12" if i // 2 == j // 2 else "SYS"),
        (8, lambda i, j: "PHB" if i // 4 == j // 4 else "SYS"),
        (16, lambda i, j: "NV18"),
        (16, lambda i, j: "NV18" if i // 8 == j // 8 else "SYS"),
        (72, lambda i, j: "NV18"),
    ],
)
def test_layout_stays_readable(n: int, code: object) -> None:
    """Every GPU drawn once, no two boxes overlap, and the picture fits a page width."""
    report = analyze(machine(n, code), source=SourceInfo("test", "layout"))  # type: ignore[arg-type]
    svg = topology_svg(report)
    boxes = _gpu_boxes(svg)
    assert len(boxes) == n
    for (ax, ay, aw, ah), (bx, by, bw, bh) in itertools.combinations(boxes, 2):
        assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay
    width = float(ET.fromstring(svg).get("width", "0"))
    assert width <= 1250


def test_bench_plots_and_heatmap_when_the_report_has_a_bench() -> None:
    report = dataclasses.replace(rs.report_of(rs.split_machine()), bench=rs.bench_result())
    html = render(report, "html")
    page = assert_inert(html)
    classes = [a.get("class") for t, a in page.tags if t == "svg"]
    assert classes.count("plot") == 2 and "heatmap" in classes
    expected = [a for t, a in page.tags if t == "line" and a.get("class") == "expected"]
    assert len(expected) == 2  # each group's expected busbw drawn as a line
    text = " ".join(page.text)
    assert "Measured all-reduce" in text and "Pairwise" in text


def test_html_without_bench_has_no_bench_section() -> None:
    html = render(rs.report_of(rs.split_machine()), "html")
    assert 'id="bench"' not in html
