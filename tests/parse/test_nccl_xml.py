"""NCCL's XML topology and graph dumps: every real file read, the machine it describes, and hostile XML refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topoaudit.app.analyze import AnalyzeRequest, analyze_input
from topoaudit.app.common import MachineInput
from topoaudit.errors import InputError
from topoaudit.model.machine import PathLevel
from topoaudit.model.nccl_topo import Captures, NcclTopology
from topoaudit.model.report import Report, report_from_dict
from topoaudit.model.values import Unsupported
from topoaudit.parse.nccl_xml import nccl_pci_gbps, parse_nccl_xml
from topoaudit.readers import load_path
from topoaudit.render import render

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"
REAL_XML = sorted(CAPTURES.glob("ncclxml-*-1.txt"))
REAL = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"  # the corpus's dev part


def _analyze(name: str) -> Report:
    return analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES / name)))).report


def _topology(report: Report) -> NcclTopology:
    assert isinstance(report.captures, Captures) and isinstance(report.captures.nccl_topology, NcclTopology)
    return report.captures.nccl_topology


def _levels(report: Report, kind: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for link in report.machine.links:
        if (link.a[:3] + link.b[:3]) == kind:
            counts[link.code] = counts.get(link.code, 0) + 1
    return counts


def test_all_eight_real_files_are_kept() -> None:
    assert len(REAL_XML) == 8


@pytest.mark.parametrize("path", REAL_XML, ids=lambda p: p.stem)
def test_every_real_file_is_read_rendered_and_round_trips(path: Path) -> None:
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report
    assert report.source.kind == "nccl-xml"
    for fmt in ("console", "json", "markdown"):
        assert render(report, fmt)
    assert report_from_dict(json.loads(render(report, "json"))) == report


def test_a100_dump_excerpt_one_gpu_twelve_links_over_six_switches_nic_behind_bridges() -> None:
    report = _analyze("ncclxml-a100-nvswitch-dump-excerpt-1gpu-1nic-1.txt")
    (gpu,) = _topology(report).gpus
    assert [n.count for n in gpu.nvlinks] == [2] * 6 and {n.target_kind for n in gpu.nvlinks} == {"nvswitch"}
    assert gpu.nvlink_count == 12 and gpu.nvlink_gbps == 240.0  # NCCL: 12 x 20 GB/s on sm80
    assert report.machine.gpus[0].architecture == "Ampere"
    assert [n.device for n in report.machine.nics] == ["mlx5_0"]
    assert report.machine.nics[0].link_rate_gbps == 100.0
    # GPU behind three nested bridges, the NIC under the outermost one: PXB, as topo -m says
    assert report.machine.link("GPU0", "NIC0").level == PathLevel.PXB  # type: ignore[union-attr]
    assert len(report.machine.nvswitches) == 6


def test_graph_dump_gives_channels_per_pattern() -> None:
    report = _analyze("ncclxml-azure-ncv4-a100pcie-graph-file-1.txt")
    topology = _topology(report)
    assert topology.kind == "graph"
    assert [(g.pattern, g.channels) for g in topology.graphs] == [("ring", 2), ("balanced tree", 4), ("tree", 4)]
    assert topology.graphs[0].orders == (("GPU0", "GPU1", "GPU2", "GPU3"), ("GPU0", "GPU3", "GPU2", "GPU1"))
    assert topology.graphs[0].type_intra == "SYS" and topology.graphs[0].speed_intra_gbps == 12.0
    assert [g.index for g in report.machine.gpus] == [0, 1, 2, 3]
    assert not report.machine.links  # a graph names channels, not links: nothing judged about the fabric


def test_self_loop_nvlinks_are_not_read_as_peers() -> None:
    """Azure's NC A100 v4 file points each GPU's 12 NVLinks at itself: no peer can be told, so no verdict on it."""
    report = _analyze("ncclxml-azure-ncv4-a100pcie-selfloop-nvlink-topofile-1.txt")
    assert [g.nvlinks[0].target_kind for g in _topology(report).gpus] == ["self"] * 4
    assert _levels(report, "GPUGPU") == {}
    assert "nvlink-absent" in {s.rule for s in report.skipped}
    assert any("is the GPU itself" in i.message for i in report.input_issues)
    assert {g.name for g in report.machine.gpus} == {"NVIDIA A100 80GB PCIe"}
    assert "nvlink-absent" not in {f.code for f in report.findings}


@pytest.mark.parametrize(
    ("name", "gpus", "nics", "gpu_nic"),
    [
        ("ncclxml-azure-nda100v4-static-topofile-1.txt", 8, 8, {"PIX": 16, "SYS": 48}),
        ("ncclxml-azure-ndh100v5-static-topofile-1.txt", 8, 8, {"PIX": 8, "PHB": 24, "SYS": 32}),
        ("ncclxml-azure-ndv2-v100-static-topofile-1.txt", 8, 1, {"PHB": 4, "SYS": 4}),
        ("ncclxml-p4d24xl-static-topofile-awsofi-1.txt", 8, 4, {"PIX": 8, "PHB": 8, "SYS": 16}),
        ("ncclxml-p5-48xl-static-topofile-awsofi-1.txt", 8, 32, {"PIX": 32, "PHB": 224}),
    ],
)
def test_hand_written_topology_files_give_pcie_facts_but_no_verdict_on_nvlink(
    name: str, gpus: int, nics: int, gpu_nic: dict[str, int]
) -> None:
    """No <nvlink> in a static NCCL_TOPO_FILE: NCCL adds what it detects, so p5 (NVSwitch) is not called PCIe-only."""
    report = _analyze(name)
    assert len(report.machine.gpus) == gpus and len(report.machine.nics) == nics
    assert _levels(report, "GPUNIC") == gpu_nic
    assert _levels(report, "GPUGPU") == {}
    codes = {f.code for f in report.findings}
    assert not codes & {"nvlink-absent", "nvlink-split-domain", "nvlink-degraded"}
    assert "nvlink-absent" in {s.rule for s in report.skipped}
    assert any("names no NVLink" in i.message for i in report.input_issues)


def test_p4d_file_names_a100_and_its_efa_nics_per_switch() -> None:
    report = _analyze("ncclxml-p4d24xl-static-topofile-awsofi-1.txt")
    assert {g.name for g in report.machine.gpus} == {"NVIDIA A100-SXM4-40GB"}
    assert [g.pci_bus_id for g in report.machine.gpus[:2]] == ["0000:10:1c.0", "0000:10:1d.0"]
    assert report.machine.link("GPU0", "NIC0").level == PathLevel.PIX  # type: ignore[union-attr]
    assert report.machine.link("GPU0", "NIC2").level == PathLevel.SYS  # type: ignore[union-attr]


def test_p5_file_reads_gpu_sm_and_nccl_bandwidths() -> None:
    topology = _topology(_analyze("ncclxml-p5-48xl-static-topofile-awsofi-1.txt"))
    assert {g.sm for g in topology.gpus} == {90}
    assert {g.pci_gbps for g in topology.gpus} == {48.0}  # Gen5 x16, NCCL's own figure
    assert {n.net_gbps for n in topology.nets} == {12.5}  # 100000 Mb/s / 8000
    assert topology.nets[0].name == "rdmap79s0"


def test_healthy_hgx_h100_dump_is_one_nvswitch_domain_and_passes() -> None:
    report = _analyze("ncclxml-8xh100-hgx-healthy-constructed.xml")
    assert _levels(report, "GPUGPU") == {"NV18": 28}
    assert [d.size for d in report.domains] == [8]
    assert {g.nvlink_gbps for g in _topology(report).gpus} == {370.8}  # NCCL: 18 x 20.6 on sm90
    assert report.gate.verdict == "pass", [f.code for f in report.findings]
    assert len(report.machine.nvswitches) == 4


def test_nccl_pci_arithmetic() -> None:
    assert nccl_pci_gbps("32.0 GT/s PCIe", 16) == 48.0
    assert nccl_pci_gbps("16 GT/s", 16) == 24.0
    assert nccl_pci_gbps("", 0) == 12.0  # unknown: 16 lanes at NCCL's default 60


def test_billion_laughs_is_refused_with_exit_4() -> None:
    text = (CAPTURES / "billion-laughs-constructed.xml").read_text()
    with pytest.raises(InputError, match="declares a document type"):
        parse_nccl_xml(text, "laughs.xml")
    with pytest.raises(InputError) as caught:
        load_path(str(CAPTURES / "billion-laughs-constructed.xml"))
    assert caught.value.exit_code == 4


def test_malformed_xml_names_the_line() -> None:
    with pytest.raises(InputError, match="not well-formed XML at line 3"):
        parse_nccl_xml('<system version="1">\n  <cpu numaid="0">\n  </gpu>\n</system>\n', "bad.xml")


def test_a_dump_pasted_in_part_is_read_as_far_as_it_goes() -> None:
    """A graph dump cut after its channels (NVIDIA/nccl#713): its elements are closed where the paste stops, and
    the reading says so as an excerpt, not as damage; a tag cut in its middle is dropped."""
    text = (
        '<graphs version="1">\n  <graph id="0" pattern="4" nchannels="6" speedintra="22" typeintra="NVL">\n'
        '    <channel>\n      <gpu dev="0"/>\n      <gpu dev="1"/>\n    </channel>\n    <chan'
    )
    parsed = parse_nccl_xml(text, "graph.xml")
    assert [(i.line, i.action) for i in parsed.input_issues()][:1] == [(6, "excerpt")]
    assert "stops at line 6 before its closing tags" in parsed.input_issues()[0].message


def test_a_dump_cut_inside_a_gpu_does_not_count_that_gpu_s_links() -> None:
    """NVIDIA/nccl#671: a DGX-1's dump pasted as far as GPU1's second <nvlink>: GPU1 shows 4 of its 6 links because
    the paste stops there, not because two are down. Closed where it stops, the same GPU with 4 links is low."""
    text = (REAL / "nccl-671-dgx1-v100-topo-xml-nvlink-counts.txt").read_text()
    cut = analyze_input(AnalyzeRequest(MachineInput(path=str(REAL / "nccl-671-dgx1-v100-topo-xml-nvlink-counts.txt"))))
    assert "nccl-topo-nvlinks-low" not in {f.code for f in cut.report.findings}
    assert any("stops inside GPU1's element" in i.message for i in cut.report.input_issues)
    closed = text.rstrip() + "\n        </gpu>\n      </pci>\n    </pci>\n  </cpu>\n</system>\n"
    whole = parse_nccl_xml(closed, "dgx1.xml")
    assert whole.topology.cut_inside_gpu is None
    assert {g.index: g.nvlink_count for g in whole.topology.gpus} == {0: 6, 1: 4}


def test_other_xml_roots_are_not_taken_for_nccl() -> None:
    """``nvidia-smi -q -x`` is XML too: read as nvidia-smi's, never as NCCL's topology; another document is a
    program's output that judges nothing."""
    from topoaudit.readers import load_text

    smi = '<?xml version="1.0"?>\n<nvidia_smi_log>\n<driver_version>580.159.04</driver_version>\n</nvidia_smi_log>\n'
    facts = load_text(smi, "smi.xml")
    assert facts.source.kind == "nvidia-smi-q" and isinstance(facts.captures, Unsupported)
    facts = load_text('<?xml version="1.0"?>\n<config>\n  <threads>8</threads>\n</config>\n', "app.xml")
    assert [p.kind for p in facts.source.parts] == ["program-output"] and facts.machine.gpus == ()


def test_notes_point_at_the_line_they_are_about() -> None:
    report = _analyze("ncclxml-azure-ncv4-a100pcie-selfloop-nvlink-topofile-1.txt")
    (issue,) = [i for i in report.input_issues if "is the GPU itself" in i.message]
    assert issue.line == 5  # <nvlink target="0001:00:00.0" ...> of GPU0
    static = _analyze("ncclxml-p4d24xl-static-topofile-awsofi-1.txt")
    # the <system> line, after the file's licence comment
    assert [i.line for i in static.input_issues if "names no NVLink" in i.message] == [15]


def test_cpu_affinity_comes_from_the_cpu_mask() -> None:
    """'00000000,0000000f,ffff0000,00000000,000fffff': words most significant first, as Linux prints cpumasks."""
    gpu = _analyze("ncclxml-a100-nvswitch-dump-excerpt-1gpu-1nic-1.txt").machine.gpus[0]
    assert gpu.cpu_affinity == (*range(20), *range(80, 100))
    assert gpu.numa_nodes == (0,)


# The shape of ROCm/rccl#1185 (an RCCL dump: version 2, AMD class 0x038000, gcn/arch attributes) with the
# <xgmi target count> children RCCL's xml.cc writes between GPUs; constructed, two GPUs.
RCCL_DUMP = """<system version="2">
  <cpu numaid="3" affinity="00000000,ff000000" arch="x86_64" vendor="AMD" familyid="159" modelid="2">
    <pci busid="0000:31:00.0" class="0x060400" vendor="0x1000" link_speed="16.0 GT/s PCIe" link_width="16">
      <pci busid="0000:37:00.0" class="0x038000" vendor="0x1d94" link_speed="16.0 GT/s PCIe"
      link_width="16">
        <gpu dev="0" sm="90" gcn="gfx928" arch="38911" rank="0" gdr="1">
          <xgmi target="0000:3a:00.0" count="7"/>
        </gpu>
      </pci>
      <pci busid="0000:3a:00.0" class="0x038000" vendor="0x1d94" link_speed="16.0 GT/s PCIe"
      link_width="16">
        <gpu dev="1" sm="90" gcn="gfx928" arch="38911" rank="1" gdr="1">
          <xgmi target="0000:37:00.0" count="7"/>
        </gpu>
      </pci>
    </pci>
  </cpu>
</system>
"""


def test_rccl_dump_keeps_xgmi_links_without_judging_them_as_nvlink(tmp_path: Path) -> None:
    path = tmp_path / "rccl-topo.xml"
    path.write_text(RCCL_DUMP)
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report
    topology = _topology(report)
    assert topology.flavour == "rccl" and topology.version == "2"
    assert [(n.target, n.count, n.target_kind) for n in topology.gpus[0].nvlinks] == [("0000:3a:00.0", 7, "gpu")]
    assert not isinstance(topology.gpus[0].nvlink_gbps, float)  # RCCL's sm is not an NVIDIA generation
    assert report.machine.gpus[0].architecture == "gfx928"  # RCCL's gcn name, never "Hopper" from sm=90
    assert _levels(report, "GPUGPU") == {}
    assert any("RCCL (AMD) topology" in i.message for i in report.input_issues)
    assert not {f.code for f in report.findings} & {"nccl-topo-nvlinks-low", "nvlink-absent"}


def test_gb200_tray_gpus_share_the_invisible_switch_and_keep_their_c2c_links() -> None:
    report = _analyze("ncclxml-gb200-tray-4gpu-c2c-constructed.xml")
    topology = _topology(report)
    assert {(g.c2c_links, g.c2c_gbps) for g in topology.gpus} == {(10, 450.0)}  # 10 x 45000 MB/s
    assert {g.nvlink_gbps for g in topology.gpus} == {721.8}  # NCCL: 18 x 40.1 on sm100
    assert _levels(report, "GPUGPU") == {"NV18": 6}
    assert [d.size for d in report.domains] == [4]
    assert report.machine.nvswitches == ()  # the switch is not visible from a tray
    assert {g.architecture for g in report.machine.gpus} == {"Blackwell"}
    assert "nccl-topo-flattened" not in {f.code for f in report.findings}  # hidden switch alone is normal here


def test_pcie_link_maximum_as_nccl_records_it() -> None:
    gpu = _analyze("ncclxml-8xh100-hgx-healthy-constructed.xml").machine.gpus[0]
    assert (gpu.pcie.gen_max, gpu.pcie.width_max) == (5, 16)
    assert not isinstance(gpu.pcie.gen_current, int)  # NCCL does not record the trained state
    vm = _analyze("ncclxml-vm-flattened-2xa100-constructed.xml").machine.gpus[0]
    assert not isinstance(vm.pcie.gen_max, int) and not isinstance(vm.pcie.width_max, int)
    old = _analyze("ncclxml-azure-ndv2-v100-static-topofile-1.txt").machine.gpus[0]
    assert old.pcie.gen_max == 4  # "16 GT/s", older kernels' form without "PCIe"
