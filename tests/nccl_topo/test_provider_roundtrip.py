"""`nccl-topo` from a report of a box whose provider publishes its topology file: the file written reads back to the
groupings of the provider's file (tests/fixtures/captures/provider/groupings.json): the same NUMA nodes, NVLink
domains and GPU-NIC pairs, and the same path class between every two devices (PIX stays PIX, PXB stays PXB)."""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import report_samples as rs
from provider_files import GROUPINGS, PROVIDER, groupings
from topofiles import etree_reads, nccl_reads

from topoaudit.model.machine import Gpu, Host, Link, Machine, Nic, level_from_code
from topoaudit.model.report import SourceInfo
from topoaudit.parse.nccl_xml import parse_nccl_xml, parse_nccl_xml_hosts
from topoaudit.render import render
from topoaudit.topofile.build import from_machine
from topoaudit.topofile.write import topology_xml

Run = Callable[..., tuple[int, str, str]]
FILES = sorted(name for name, hosts in GROUPINGS.items() if hosts[0]["gpus"])
NO_GPU = sorted(name for name, hosts in GROUPINGS.items() if not hosts[0]["gpus"])
NESTED = {
    "oci-bm.gpu4.8-dump-oke.xml": "a second NIC one switch further up is PXB like the one beside the GPU",
    "oci-bm.gpu.a100-v2.8-dump-oke.xml": "a second NIC one switch further up is PXB like the one beside the GPU",
}
"""Files whose switch tree nests deeper than a path class tells: a report keeps PXB, not how many switches up."""
_BUS = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def levels(text: str) -> dict[frozenset[str], str]:
    """The path class between every two PCI devices of a file, by bus id, as topoaudit's reader finds it."""
    machine = parse_nccl_xml(text, "topo.xml").machine
    bus = {g.label: g.pci_bus_id for g in machine.gpus} | {n.label: n.pci_bus_id for n in machine.nics}
    return {
        frozenset((str(bus[link.a]), str(bus[link.b]))): link.level.name
        for link in machine.links
        if isinstance(bus.get(link.a), str) and isinstance(bus.get(link.b), str) and bus[link.a] != bus[link.b]
    }


def expected(name: str, host: int) -> dict[str, Any]:
    """The provider's groupings less what a report cannot place: a NIC with no PCI device (Azure's eth0)."""
    want = json.loads(json.dumps(GROUPINGS[name][host]))
    want["host_hash"] = ""
    want["nics"] = {bus: numa for bus, numa in want["nics"].items() if _BUS.match(bus)}
    want["pairs"] = {gpu: [n for n in nics if _BUS.match(n)] for gpu, nics in want["pairs"].items()}
    return want


def assert_same_groupings(name: str, host: int, provider: str, written: str) -> None:
    want, got = expected(name, host), groupings(written)[0]
    assert (got["gpus"], got["nics"]) == (want["gpus"], want["nics"])
    assert got["nvlink_domains"] == want["nvlink_domains"]
    theirs, ours = levels(provider), levels(written)
    assert ours == {pair: level for pair, level in theirs.items() if pair <= set(want["gpus"]) | set(want["nics"])}
    if name not in NESTED:
        assert got["pairs"] == want["pairs"]
        return
    for gpu, nics in want["pairs"].items():  # the nearest NIC is among those at its path class, and only those
        assert set(nics) <= set(got["pairs"][gpu])
        assert {ours[frozenset((gpu, n))] for n in got["pairs"][gpu]} == {ours[frozenset((gpu, nics[0]))]}


@pytest.mark.parametrize("name", FILES)
def test_a_report_of_the_box_gives_a_file_with_the_providers_groupings(
    run: Run, tmp_path: Path, name: str, nccl_load: Path
) -> None:
    report = tmp_path / "report.json"
    code, _, err = run("analyze", str(PROVIDER / name), "--format", "json", "-o", str(report))
    assert code in (0, 1), err
    code, _, err = run("nccl-topo", str(report), "-o", str(tmp_path / "topo.xml"))
    assert code == 0, err
    written = (tmp_path / "topo.xml").read_text(encoding="utf-8")
    assert_same_groupings(name, 0, (PROVIDER / name).read_text(encoding="utf-8"), written)
    assert nccl_reads(nccl_load, tmp_path / "topo.xml") == etree_reads(written)  # NCCL's own parser reads it
    bus_ids = [e.get("busid") for e in ET.fromstring(written).iter("pci")]
    assert len(bus_ids) == len(set(bus_ids))  # a dual-port NIC is one PCI function: one element


def test_a_dual_port_nic_is_one_element_named_by_either_port(run: Run, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    assert (
        run("analyze", str(PROVIDER / "oci-bm.gpu.h100.8-dump-samples.xml"), "--format", "json", "-o", str(report))[0]
        == 0
    )
    code, written, err = run("nccl-topo", str(report), "--switch", "GPU1,mlx5_1")
    assert code == 0, err
    assert "mlx5_0/mlx5_1 0000:0c:00.0  NUMA 0, under switch ffff:ff:81.0" in written
    assert [e.get("busid") for e in ET.fromstring(written).iter("pci")].count("0000:0c:00.0") == 1


@pytest.mark.parametrize(("name", "host"), [(name, k) for name in FILES for k in range(len(GROUPINGS[name]))], ids=str)
def test_each_host_of_a_dump_gives_a_file_with_its_own_groupings(name: str, host: int) -> None:
    text = (PROVIDER / name).read_text(encoding="utf-8")
    parsed = parse_nccl_xml_hosts(text, name)[host]
    written = topology_xml(from_machine(parsed.machine, name, parsed.topology), [])
    provider = ET.tostring(_host_only(ET.fromstring(text), parsed.host_hash), encoding="unicode")
    assert_same_groupings(name, host, provider, written)


def _host_only(root: ET.Element, host_hash: str) -> ET.Element:
    """The file with only the ``<cpu>`` elements of one host (NCCL writes host_hash on each in a fused dump)."""
    for cpu in [c for c in root if c.tag == "cpu" and host_hash and c.get("host_hash") != host_hash]:
        root.remove(cpu)
    return root


@pytest.mark.parametrize("name", NO_GPU)
def test_a_file_that_names_no_gpu_gives_no_file_but_a_sentence(run: Run, name: str) -> None:
    code, out, err = run("nccl-topo", str(PROVIDER / name))
    assert (code, out) == (4, "")
    assert f"{name} holds no machine (no GPU in it)" in err


def _b300_behind_connectx8() -> Machine:
    """An HGX B300 whose GPUs each reach their own NIC through the ConnectX-8's switch: PXB, not PIX."""
    gpus = tuple(
        Gpu(index=i, name="NVIDIA B300 SXM6 AC", pci_bus_id=f"0000:{0x1B + 0x20 * i:02x}:00.0", numa_nodes=(i // 4,))
        for i in range(8)
    )
    nics = tuple(
        Nic(f"NIC{i}", device=f"mlx5_{i}", pci_bus_id=f"0000:{0x19 + 0x20 * i:02x}:00.0", numa_node=i // 4)
        for i in range(8)
    )
    links = [
        Link(f"GPU{i}", f"GPU{j}", "NV18", *level_from_code("NV18")) for i, j in itertools.combinations(range(8), 2)
    ]
    for i, k in itertools.product(range(8), range(8)):
        code = "PXB" if i == k else ("NODE" if i // 4 == k // 4 else "SYS")
        links.append(Link(f"GPU{i}", f"NIC{k}", code, *level_from_code(code)))
    return Machine("test", gpus, nics, tuple(links), Host(hostname="b300-07"))


def test_a_b300_report_keeps_each_gpu_and_its_nic_pxb_apart(run: Run, tmp_path: Path) -> None:
    """Before, each GPU and its NIC sat under one stand-in switch, so NCCL saw PIX and judged the NIC nearer."""
    report = rs.report_of(_b300_behind_connectx8(), source=SourceInfo("snapshot", "b300-07.json"))
    (tmp_path / "report.json").write_text(render(report, "json"), encoding="utf-8")
    code, written, err = run("nccl-topo", str(tmp_path / "report.json"))
    assert code == 0, err
    found = levels(written)
    gpu0, nic0, nic1 = "0000:1b:00.0", "0000:19:00.0", "0000:39:00.0"
    assert found[frozenset((gpu0, nic0))] == "PXB"
    assert found[frozenset((gpu0, nic1))] == "PHB"  # another GPU's NIC on the same CPU
    assert "GPU0     0000:1b:00.0  NUMA 0, under switch ffff:ff:01.0 / ffff:ff:0a.0" in written
    assert "mlx5_0   0000:19:00.0  NUMA 0, under switch ffff:ff:01.0 / ffff:ff:09.0" in written


def test_a_device_name_with_control_characters_reaches_the_comment_as_text(run: Run, tmp_path: Path) -> None:
    """Before, ESC, BEL and NUL from a saved report went into the comment: no XML parser read the file back, and
    `cat topo.xml` ran the escape sequence."""
    report = tmp_path / "report.json"
    assert (
        run("analyze", str(PROVIDER / "oci-bm.gpu.h100.8-dump-samples.xml"), "--format", "json", "-o", str(report))[0]
        == 0
    )
    data = json.loads(report.read_text(encoding="utf-8"))
    data["nics"][0]["device"] = "mlx5_0\x1b]0;owned\x07\x00 --> <!-- "
    report.write_text(json.dumps(data), encoding="utf-8")
    code, written, err = run("nccl-topo", str(report))
    assert code == 0, err
    assert "mlx5_0\ufffd]0;owned\ufffd\ufffd -> <!- /mlx5_1 0000:0c:00.0" in written
    assert groupings(written)[0]["gpus"] == GROUPINGS["oci-bm.gpu.h100.8-dump-samples.xml"][0]["gpus"]
