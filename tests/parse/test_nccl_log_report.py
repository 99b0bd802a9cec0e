"""NCCL's view in every format: the transport matrix (console, Markdown, HTML coloured like the link
matrix), the rank pairs beside the link topoaudit sees, channel counts, NVLS and GPUDirect RDMA."""

from __future__ import annotations

import json
from pathlib import Path

from topoaudit.model.report import Report, report_from_dict, report_to_dict
from topoaudit.pipeline import analyze
from topoaudit.readers import load_text
from topoaudit.render import RenderOptions, render
from topoaudit.render.rows import view

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl"
LOG = (
    "NCCL version 2.19.3+cuda12.3\n"
    "hgx:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0\n"
    "hgx:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
    "hgx:1:3 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[2] via P2P/CUMEM\n"
    "hgx:1:2 [0] NCCL INFO 24 coll channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer\n"
)


def report_of(capture: str) -> Report:
    loaded = load_text(capture, "paste.txt")
    return analyze(loaded.machine, source=loaded.source, input_issues=loaded.issues, nccl=loaded.nccl)


def beside_h100_matrix() -> Report:
    return report_of((FIXTURES / "topo-h100-8gpu-stas-ht-1.txt").read_text(encoding="utf-8") + LOG)


def test_pairs_table_puts_nccls_transport_beside_the_topology_link() -> None:
    section = view(beside_h100_matrix()).nccl
    assert section is not None and section.pairs is not None
    rows = {row[0].text: [c.text for c in row] for row in section.pairs.rows}
    assert rows["0-1"][1:5] == ["hgx:GPU0 / hgx:GPU1", "SHM", "SHM/direct/direct (0->1, 1 ch)", "NV18"]
    assert rows["1-2"][2] == "P2P" and rows["1-2"][4] == "NV18"


def test_transport_matrix_is_coloured_like_the_link_matrix() -> None:
    section = view(beside_h100_matrix()).nccl
    assert section is not None and section.matrix is not None
    cells = {(row[0].text, k): c for row in section.matrix.rows for k, c in enumerate(row[1:])}
    assert (cells[("rank 0", 1)].text, cells[("rank 0", 1)].tone) == ("SHM", "host-bridge")
    assert (cells[("rank 1", 2)].text, cells[("rank 1", 2)].tone) == ("P2P", "nvlink")
    assert cells[("rank 0", 2)].text == "-" and cells[("rank 0", 0)].text == "X"
    html = render(beside_h100_matrix(), "html", RenderOptions())
    assert '<h3 id="nccl-matrix">NCCL transport matrix</h3>' in html
    assert '<td class="lv-phb" title="SHM/direct/direct">SHM</td>' in html
    assert '<td class="lv-nv" title="P2P/CUMEM">P2P</td>' in html


def test_console_and_markdown_show_the_matrix_and_facts() -> None:
    report = beside_h100_matrix()
    console = render(report, "console", RenderOptions(width=160))
    assert "NCCL transport matrix" in console and "NCCL transports per rank pair" in console
    assert "24 coll, collnet not printed, 0 NVLS, 32 p2p (line 14)" in console
    assert "not available on dev 0" in console
    markdown = render(report, "markdown", RenderOptions())
    assert "### NCCL transport matrix" in markdown
    assert "| **rank 0** | X | SHM | - |" in markdown
    assert "| **0-1** | hgx:GPU0 / hgx:GPU1 | SHM |" in markdown


def test_gdr_per_hca_and_hosts_of_a_two_node_log() -> None:
    report = report_of((FIXTURES / "constructed-2.21-two-nodes-slurm-prefix-gdr-off.txt").read_text(encoding="utf-8"))
    section = view(report).nccl
    assert section is not None
    facts = {row[0].text: [] for row in section.facts.rows}
    for row in section.facts.rows:
        facts[row[0].text].append((row[1].text, row[1].tone))
    assert facts["GPUDirect RDMA"] == [
        ("n001: HCA 0 'mlx5_0': disabled (line 5)", "warn"),
        ("n002: HCA 0 'mlx5_0': disabled (line 6)", "warn"),
    ]
    assert facts["Hosts"] == [("n001, n002", "")]
    assert section.pairs is not None
    topology = {row[0].text: row[4].text for row in section.pairs.rows}
    assert topology["1-2"] == "not known from this source"  # a log alone names no links


def test_json_report_round_trips_nccls_view() -> None:
    data = report_to_dict(beside_h100_matrix())
    nccl = data["nccl"]
    assert nccl["version"] == "2.19.3" and nccl["bracket_value"] == "device-index"
    assert nccl["channel_counts"][0]["nvls"] == 0
    assert nccl["channel_counts"][0]["collnet"]["status"] == "unsupported"
    again = report_from_dict(json.loads(json.dumps(data)))
    assert report_to_dict(again) == data
    assert view(again).nccl == view(beside_h100_matrix()).nccl


def test_a_report_without_a_log_says_why_and_shows_no_section() -> None:
    report = report_of((FIXTURES / "topo-h100-8gpu-stas-ht-1.txt").read_text(encoding="utf-8"))
    assert report_to_dict(report)["nccl"] == {
        "status": "unsupported",
        "source": "nccl-log",
        "reason": "no NCCL_DEBUG=INFO log in the input",
    }
    assert view(report).nccl is None
    assert "NCCL transport matrix" not in render(report, "markdown", RenderOptions())


def test_graph_patterns_are_shown_with_their_path_types() -> None:
    capture = (
        "NCCL version 2.23.4+cuda12.6\n"
        "host-e:3884:3890 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 24.000000/24.000000, type SYS/PIX, "
        "sameChannels 1\n"
        "host-e:3884:3890 [0] NCCL INFO Channel 00 : 3[3] -> 4[4] via SHM/direct/direct\n"
    )
    section = view(report_of(capture)).nccl
    assert section is not None
    facts = {row[0].text: row[1] for row in section.facts.rows}
    ring = facts["NCCL's ring graph"]
    assert ring.text == "2 channel(s) at 24/24 GB/s, path SYS inside a node, PIX between nodes (line 2)"
    assert ring.tone == "warn"
