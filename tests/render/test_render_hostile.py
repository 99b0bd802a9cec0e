"""A report hostile in every string field, found by reflection, rendered in every format.

Every ``str`` reachable from ``Report`` (machine, findings, bench, plan, policy, input issues, extras, absent
values' reasons, dictionary keys) is replaced by markup, an attribute break-out, a CDATA end, terminal
escape sequences and Markdown table pipes. A new field is covered the day it is added: the walk finds it.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import jinja2
import pytest
import report_samples as rs
from test_render_html import _outside_code, parse

from topoaudit.catalog import find_gpu
from topoaudit.model.bench import RankError, SkippedSize
from topoaudit.model.finding import Finding, Severity, Skipped
from topoaudit.model.host_checks import AerCounters, FabricHealth, HostChecks, KernelEvent, PcieHop, RdmaPort
from topoaudit.model.machine import P2PStatus
from topoaudit.model.nccl_topo import (
    BandwidthMatrix,
    Captures,
    NcclGpu,
    NcclGraph,
    NcclNet,
    NcclNvlink,
    NcclTopology,
)
from topoaudit.model.plan import Alternative, PlanRequest
from topoaudit.model.policy import (
    BusbwExpectation,
    IgnoredFinding,
    IgnoreRule,
    Policy,
    PolicyOutcome,
    SeverityChange,
)
from topoaudit.model.report import InputIssue, Report, SourceInfo, report_from_dict
from topoaudit.model.values import Failed, Unsupported
from topoaudit.plan.sizing import plan_deployment
from topoaudit.render import RenderOptions, render
from topoaudit.render import html as html_renderer
from topoaudit.render.svg_topology import topology_svg

EVIL = (
    "<script>alert(1)</script>\"><img src=x onerror=alert(2)>']]>"
    "\x1b]0;owned\x07\x1b[2J\x1b[31mred|pipe|cell|`tick`*em*[l](http://evil.example/)"
    "[bold]rich[/bold] at [/workspace/nccl_helper.h:93]"
)

SAFE_HTML_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "p", "span", "strong", "table",
    "caption", "thead", "tbody", "tr", "th", "td", "div", "code", "pre", "ul", "ol", "li", "footer",
}  # fmt: skip
SAFE_SVG_TAGS = {"svg", "title", "g", "rect", "line", "text", "polyline", "circle"}


def hostile(value: Any) -> Any:
    """``value`` with every string, at any depth and in any dataclass, replaced by :data:`EVIL`."""
    if isinstance(value, (bool, int, float, enum.Enum)) or value is None:
        return value  # enums (severities, path levels) are the model's own vocabulary, not free text
    if isinstance(value, str):
        return EVIL
    if isinstance(value, tuple):
        return tuple(hostile(v) for v in value)
    if isinstance(value, list):
        return [hostile(v) for v in value]
    if isinstance(value, dict):
        out = {hostile(k): hostile(v) for k, v in value.items()}
        out.update({k: hostile(v) for k, v in value.items()})  # known keys too (redaction, evidence...)
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value)(**{f.name: hostile(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init})
    raise TypeError(f"no hostile form for {type(value).__name__}")


def strings(value: Any, path: str = "report") -> list[tuple[str, str]]:
    """(path, text) of every string reachable from ``value``."""
    if isinstance(value, enum.Enum):
        return []
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, (tuple, list)):
        return [s for k, v in enumerate(value) for s in strings(v, f"{path}[{k}]")]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [(f"{path}.key", str(k)), *strings(v, f"{path}.{k}")]]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in strings(getattr(value, f.name), f"{path}.{f.name}")]
    return []


def full_report() -> Report:
    """A report in which every section and every optional dataclass is present."""
    base = rs.report_of(rs.split_machine(with_ids=True), extras={"note": "n", "redaction": {"note": "r"}})
    spec = find_gpu("H200")
    assert spec is not None
    plan = plan_deployment(PlanRequest(params_b=1600, precision="int4"), spec)
    plan = dataclasses.replace(plan, alternatives=(Alternative("cross-node-tp", "s", "H200", 16, 16, 1, False, "c"),))
    bench = dataclasses.replace(
        rs.bench_result(),
        errors=(RankError(3, "timeout", "rank 3 stopped", group="all", size_bytes=2**20),),
        notes=("a note",),
        environment={"NCCL_DEBUG": "INFO"},
        version="v",
    )
    groups = (dataclasses.replace(bench.groups[0], skipped_sizes=(SkippedSize(2**31, "no memory"),), error="e"),)
    bench = dataclasses.replace(bench, groups=groups + bench.groups[1:])
    finding = Finding("tp-group-crosses-domain", Severity.FAIL, "m", {"k": "v", "n": [1, "s"]}, "remedy")
    policy = Policy(
        "p", "s", "h", "d", gpu_models=("H200",), busbw=(BusbwExpectation("all", 1.0),),
        ignore=(IgnoreRule("c", "r", "m"),), latency_group="all",
    )  # fmt: skip
    outcome = PolicyOutcome(
        "p", "s", "0123456789abcdef", "d", ("met",), ("not met",), ("not checked",),
        (SeverityChange("c", Severity.WARN, Severity.INFO, 1),), (IgnoredFinding(finding, "why"),),
    )  # fmt: skip
    gpus = list(base.machine.gpus)
    gpus[5] = dataclasses.replace(gpus[5], status=Failed("nvml", "GPU is lost"), serial=Unsupported("nvml", "why"))
    host = dataclasses.replace(base.machine.host, checks=_host_checks())
    p2p = (P2PStatus(0, 1, read="chipset-not-supported", write="ok"), P2PStatus(0, 2, read="ok", write="ok"))
    machine = dataclasses.replace(base.machine, gpus=tuple(gpus), host=host, p2p=p2p)
    return dataclasses.replace(
        base,
        machine=machine,
        source=SourceInfo("topo-matrix", "file.txt", demo=True, description="desc"),
        options=dataclasses.replace(base.options, policy=policy),
        findings=(finding, *base.findings),
        skipped=(Skipped("rule", "reason"),),
        input_issues=(InputIssue(3, "recovered", "message"),),
        plan=plan,
        bench=bench,
        policy=outcome,
        captures=_captures(),
    )


DIAGONAL = Unsupported("nvbandwidth", "a GPU to itself")


def _captures() -> Captures:
    """An NCCL topology dump with a GPU, a NIC and a graph, and one measured matrix."""
    gpu = NcclGpu(
        0, "0000:18:00.0", 90, 0, True, 0, "32.0 GT/s PCIe", 16, 48.0,
        (NcclNvlink("0000:05:00.0", 18, "0x068000", "nvswitch"),), 370.8, "sm90", 10, 450.0,
    )  # fmt: skip
    net = NcclNet("NIC0", "mlx5_0", "0000:19:00.0", 400000, 50.0, True)
    graph = NcclGraph(0, "ring", 24, 40.0, 25.0, "NVL", "NET", (("GPU0", "NET0"),))
    topology = NcclTopology("topology", "1", "nccl", (gpu,), (net,), (0,), (graph,), True)
    matrix = BandwidthMatrix(
        "device_to_device_memcpy_read_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
        ("GPU0", "GPU1"), ("GPU0", "GPU1"), ((DIAGONAL, 300.0), (299.0, DIAGONAL)),
    )  # fmt: skip
    return Captures(topology, (matrix,))


def _host_checks() -> HostChecks:
    """Every host check read: a VM, one RDMA port, a trained-down PCIe hop, AER, a kernel-log line, fabric."""
    return HostChecks(
        virtualization="vm",
        virtualization_evidence="DMI sys_vendor QEMU",
        rdma_ports=(RdmaPort("mlx5_0", 1, "DOWN", "Disabled", 400.0, "InfiniBand", 3, 0, "0000:19:00.0"),),
        gpudirect_rdma="none",
        gpudirect_rdma_evidence="no nvidia_peermem",
        pcie_hops=(PcieHop("0000:18:00.0", "0000:17:00.0", 16.0, 32.0, 8, 16, ("0000:18:00.0",)),),
        aer=(AerCounters("0000:18:00.0", 3, 0, 0),),
        kernel_events=(KernelEvent("xid-79", "0000:18:00.0", "NVRM: Xid 79, GPU has fallen off the bus"),),
        fabric_health=(FabricHealth(0, 1, ("degraded-bandwidth",), "unhealthy"),),
    )


@pytest.fixture(scope="module")
def evil() -> Report:
    return hostile(full_report())


def test_every_string_of_the_report_is_hostile(evil: Report) -> None:
    found = strings(evil)
    assert len(found) > 300  # machine, findings, bench, plan and policy all reached
    plain = [path for path, text in found if text != EVIL and not path.endswith(".key")]
    assert not plain, plain[:10]
    assert any(path.endswith(".key") and text == EVIL for path, text in found)  # hostile keys beside known ones
    paths = " ".join(p for p, _ in found)
    sections = (
        "machine.gpus", "bench.groups", "bench.errors", "plan.alternatives", "policy.ignored",
        "options.policy.ignore", "input_issues", "skipped", "findings", "extras", "source.description",
        "captures.nccl_topology.gpus", "captures.nccl_topology.nets", "captures.nccl_topology.graphs",
        "captures.bandwidth", "machine.p2p", "machine.host.checks.rdma_ports", "machine.host.checks.pcie_hops",
        "machine.host.checks.kernel_events", "machine.host.checks.fabric_health",
    )  # fmt: skip
    for part in sections:
        assert f"report.{part}" in paths, part


def check_html(page: str) -> None:
    """Only the page's own elements, no handler or link attribute, the hostile text visible as text."""
    parser = parse(page)
    allowed = SAFE_HTML_TAGS | SAFE_SVG_TAGS
    for tag, attrs in parser.tags:
        assert tag in allowed, f"live markup <{tag}> in the page"
        for name in attrs:
            assert not name.startswith("on") and name not in {"src", "href", "xlink:href", "srcset"}, (tag, name)
    text = "".join(parser.text)
    assert "<script>alert(1)</script>" in text  # the reader sees what the report said
    assert "\x1b" not in page and "\x07" not in page


def check_svg(svg: str) -> None:
    root = ET.fromstring(svg.removeprefix('<?xml version="1.0" encoding="UTF-8"?>\n'))
    for el in root.iter():
        assert el.tag.split("}")[-1] in SAFE_SVG_TAGS, el.tag
        assert not any(name.startswith("on") or "href" in name for name in el.attrib), el.attrib
    assert "\x1b" not in svg


@pytest.mark.parametrize("fmt", ["console", "markdown", "html"])
def test_captured_and_probed_facts_are_rendered_from_the_hostile_report(evil: Report, fmt: str) -> None:
    page = render(evil, fmt)
    for title in ("GPUs as NCCL saw them", "Channels NCCL built per pattern", "P2P status per GPU pair", "Host checks"):
        assert title in page, title


def test_html_has_no_live_markup(evil: Report) -> None:
    check_html(render(evil, "html"))


def test_html_check_catches_a_field_left_unescaped(evil: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above is not vacuous: with autoescape off the same report fails it."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("topoaudit.render", "templates"), autoescape=False)
    monkeypatch.setattr(html_renderer, "_template", lambda: env.get_template("report.html.j2"))
    with pytest.raises(AssertionError):
        check_html(render(evil, "html"))


def test_svg_pictures_parse_and_stay_inert(evil: Report) -> None:
    check_svg(topology_svg(evil, standalone=True))
    page = render(evil, "html")
    for svg in re.findall(r"<svg .*?</svg>", page, flags=re.S):
        check_svg(svg)


def test_console_carries_no_escape_codes_from_the_report(evil: Report) -> None:
    for width in (80, 120):
        plain = render(evil, "console", RenderOptions(width=width, verbose=True))
        assert "\x1b" not in plain and "\x07" not in plain
        assert "<script>alert(1)</script>" in plain.replace("\n", "") or "alert(1)" in plain
        # rich's markup in a quoted paste is text: "[/path]" used to end the run (exit 5), "[bold]" to style it
        assert "[bold]" in plain
    coloured = render(evil, "console", RenderOptions(width=120, color=True, verbose=True))
    # rich's own colours are SGR sequences; the report's clear-screen and title sequences are not
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured).count("\x1b") == 0


def test_json_round_trip_keeps_every_hostile_string(evil: Report) -> None:
    # the verdict is the gate's vocabulary, read back only when the findings make it (test_report_gate)
    kept = dataclasses.replace(evil, gate=dataclasses.replace(evil.gate, verdict=full_report().gate.verdict))
    text = render(kept, "json")
    assert report_from_dict(json.loads(text)) == kept


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", re.sub(r"`[^`]*`", "", line)))


def test_markdown_tables_keep_their_columns(evil: Report) -> None:
    md = render(evil, "markdown")
    lines = md.splitlines()
    tables = 0
    for k, line in enumerate(lines):
        if line.startswith("|---"):
            tables += 1
            header = lines[k - 1]
            width = _unescaped_pipes(header)
            body = itertools.takewhile(lambda row: row.startswith("|"), lines[k + 1 :])
            for row in body:
                assert _unescaped_pipes(row) == width, (header, row)
    assert tables >= 10  # identity, GPUs, domains, matrix, bench, plan... all exercised
    outside = _outside_code(md)  # CommonMark shows code spans literally
    assert "<script" not in outside and "<img" not in outside and "\x1b" not in md


def test_junit_parses(evil: Report) -> None:
    text = render(evil, "junit")
    root = ET.fromstring(text.split("\n", 1)[1])
    assert root.iter("testcase")
    assert "\x1b" not in text


def test_gpu_model_absent_reads_cleanly() -> None:
    """An absent value reads as its reason, never 'unsupported (...)' nested in another sentence."""
    machine = rs.split_machine()
    machine = dataclasses.replace(
        machine,
        gpus=tuple(
            dataclasses.replace(g, name=Unsupported("topo", "the source does not name it")) for g in machine.gpus
        ),
    )
    report = rs.report_of(machine)
    assert isinstance(report.gpu_model, (Unsupported, Failed))
    for fmt in ("console", "markdown", "html"):
        text = render(report, fmt, RenderOptions(width=200, verbose=True))
        # a finding's evidence is data for machines (JSON values), shown verbatim
        text = re.sub(r"<pre>.*?</pre>|  - evidence: .*", "", text, flags=re.S if fmt == "html" else 0)
        assert "unsupported (" not in text, fmt
        assert "))." not in text and ".)." not in text and ".." not in text.replace("...", ""), fmt
