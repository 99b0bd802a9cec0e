"""NCCL topology XML damaged or edited: a GPU is read wherever NCCL reads one, a count no hardware has is damage
read around (never zero links, never a trillion), and no attribute can make the reader slow or crash."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cli_runner import Run

from topoaudit.errors import InputError
from topoaudit.model.nccl_bandwidth import NET_UNKNOWN_SPEED_MBPS
from topoaudit.model.nccl_topo import NcclTopology
from topoaudit.parse.nccl_xml import parse_nccl_xml

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"
HEALTHY = (CAPTURES / "ncclxml-8xh100-hgx-healthy-constructed.xml").read_text(encoding="utf-8")
GPU5_17 = (CAPTURES / "ncclxml-8xh100-hgx-gpu5-17links-constructed.xml").read_text(encoding="utf-8")
GPU5 = '<pci busid="0000:68:00.0" class="0x030200"'
FIRST_COUNT = '<nvlink target="0000:06:00.0" count="5" tclass="0x068000"/>'


def _analyze(run: Run, tmp_path: Path, text: str) -> dict:  # type: ignore[type-arg]
    path = tmp_path / "topo.xml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run("analyze", str(path), "--format", "json")
    assert code in (0, 1), err
    return json.loads(out)


def test_a_gpu_under_a_pci_bridge_is_read_as_nccl_reads_it(run: Run, tmp_path: Path) -> None:
    """topo.cc ncclTopoAddPci takes every <gpu> child of a <pci>, whatever the <pci>'s class."""
    assert GPU5 in GPU5_17
    text = GPU5_17.replace(GPU5, '<pci busid="0000:68:00.0" class="0x060400"')
    report = _analyze(run, tmp_path, text)
    assert len(report["gpus"]) == 8  # 7 before: GPU5 was dropped, and its 17 links with it
    assert report["gate"]["verdict"] == "fail"  # PASS before
    assert {"nvlink-degraded", "nccl-topo-nvlinks-low"} <= {f["code"] for f in report["findings"]}


@pytest.mark.parametrize(
    ("count", "said"),
    [
        ('count="999999999999999999999"', 'has count="999999999999999999999"'),
        ("", "has no count"),
        ('count="0"', 'has count="0"'),
        ('count="five"', 'has count="five"'),
        ('count="19"', 'has count="19"'),
    ],
    ids=["huge", "missing", "zero", "word", "nineteen"],
)
def test_an_nvlink_count_no_hardware_has_is_damage_read_around(count: str, said: str) -> None:
    text = HEALTHY.replace(FIRST_COUNT, FIRST_COUNT.replace('count="5"', count), 1)
    parsed = parse_nccl_xml(text, "topo.xml")
    assert parsed.damage and parsed.notes[0] == parsed.damage[0]
    line, note = parsed.damage[0]
    assert line == 7 and note.startswith(f"GPU0's <nvlink> to 0000:06:00.0 {said}; NCCL requires a count")
    assert note.endswith("so GPU-to-GPU NVLink paths are not judged from it")
    topology = parsed.topology
    assert isinstance(topology, NcclTopology) and not topology.describes_nvlink  # so no rule counts links from it
    assert not [lk for lk in parsed.machine.links if lk.a.startswith("GPU") and lk.b.startswith("GPU")]
    assert [i.action for i in parsed.input_issues()] == ["recovered"]


def test_counts_adding_up_past_18_on_one_gpu_are_damage() -> None:
    text = HEALTHY.replace(FIRST_COUNT, FIRST_COUNT.replace('count="5"', 'count="18"'), 1)
    parsed = parse_nccl_xml(text, "topo.xml")
    assert parsed.damage[0][1].startswith("GPU0's NVLink counts add up to 31, more than any GPU has (18)")
    assert not parsed.topology.describes_nvlink


def test_a_missing_count_is_not_a_fault_of_the_box(run: Run, tmp_path: Path) -> None:
    """Read as zero links, a missing count made NCCL's view 'fewer NVLinks than expected' and the box FAIL."""
    report = _analyze(run, tmp_path, HEALTHY.replace(' count="5" tclass', " tclass", 1))
    assert report["gate"]["verdict"] != "fail"
    assert not {"nccl-topo-nvlinks-low", "nvlink-degraded", "nvlink-absent"} & {f["code"] for f in report["findings"]}
    assert any("has no count" in i["message"] for i in report["input_issues"])


def test_a_damaged_count_makes_the_audit_incomplete_and_warns(run: Run, tmp_path: Path) -> None:
    report = _analyze(run, tmp_path, HEALTHY.replace(' count="5" tclass', " tclass", 1))
    assert report["gate"]["verdict"] == "warn" and report["gate"]["incomplete"]
    assert "input-recovered" in {f["code"] for f in report["findings"]}


def test_a_c2c_link_and_a_nic_speed_no_hardware_has_are_not_read() -> None:
    gb200 = (CAPTURES / "ncclxml-gb200-tray-4gpu-c2c-constructed.xml").read_text(encoding="utf-8")
    parsed = parse_nccl_xml(gb200.replace('<c2c bw="45000" count="10"/>', '<c2c bw="9e99" count="10"/>', 1), "t.xml")
    assert parsed.topology.gpus[0].c2c_gbps.reason == "the <c2c> link's count or bw cannot be read"  # type: ignore[union-attr]
    assert parsed.topology.gpus[1].c2c_gbps == 450.0
    assert parsed.damage[0][1].startswith('GPU0\'s <c2c> link has count="10" and bw="9e99"')
    fast = HEALTHY.replace('speed="400000"', 'speed="99999999999"', 1)
    net = parse_nccl_xml(fast, "t.xml").topology.nets[0]
    assert not isinstance(net.speed_megabits_per_s, int)
    assert net.net_gbps == NET_UNKNOWN_SPEED_MBPS / 8000  # the figure NCCL gives a NIC of unknown speed


def test_attributes_past_what_hardware_has_cannot_make_the_reader_slow() -> None:
    text = HEALTHY.replace('affinity="00000000,ffffffff"', f'affinity="{"f" * 200_000}"', 1)
    text = text.replace('dev="0"', 'dev="99999999999999999999"', 1)
    text = text.replace('link_width="16"', 'link_width="1000000"', 1)
    started = time.perf_counter()
    parsed = parse_nccl_xml(text, "t.xml")
    assert time.perf_counter() - started < 2
    gpu = parsed.machine.gpus[0]
    assert gpu.cpu_affinity.reason.startswith("an affinity mask of 200000 hex digits")  # type: ignore[union-attr]
    assert [g.index for g in parsed.machine.gpus] == list(range(8))  # a dev no host has: its place in the file


def test_a_graph_speed_that_is_not_finite_is_not_a_speed() -> None:
    text = '<graphs version="1"><graph id="0" pattern="4" nchannels="1" speedintra="inf" speedinter="nan"/></graphs>'
    (graph,) = parse_nccl_xml(text, "g.xml").topology.graphs
    assert not isinstance(graph.speed_intra_gbps, float) and not isinstance(graph.speed_inter_gbps, float)


def test_a_root_other_than_nccls_is_named_briefly_and_printably() -> None:
    with pytest.raises(InputError) as refused:
        parse_nccl_xml(f"<system{'x' * 500}/>", "t.xml")
    assert len(str(refused.value)) < 200


def test_a_dump_cut_inside_a_comment_is_refused_once_not_closed_forever(run: Run, tmp_path: Path) -> None:
    """The closing tags added to a cut dump fell inside the open comment; the closed text was then taken for a cut
    dump again, and again, until Python's recursion limit (exit 5). Closed once, it is damage: exit 4."""
    text = '<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:01:00.0">\n<!-- a note > unfinished'
    with pytest.raises(InputError, match="not well-formed XML"):
        parse_nccl_xml(text, "topo.xml")
    (tmp_path / "topo.xml").write_text(text)
    code, _, err = run("analyze", str(tmp_path / "topo.xml"))
    assert code == 4 and "Traceback" not in err
