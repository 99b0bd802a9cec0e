"""Reading topology files the way the tests compare them: which devices share a switch, on which NUMA node."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from topoaudit.model.machine import PathLevel
from topoaudit.model.topology import nvlink_domains
from topoaudit.parse.nccl_xml import parse_nccl_xml

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"

PROVIDER_FILES = {
    "azure-ndv4": "ncclxml-azure-nda100v4-static-topofile-1.txt",
    "azure-ndv5": "ncclxml-azure-ndh100v5-static-topofile-1.txt",
    "azure-ndv2": "ncclxml-azure-ndv2-v100-static-topofile-1.txt",
    "aws-p4d": "ncclxml-p4d24xl-static-topofile-awsofi-1.txt",
    "aws-p5": "ncclxml-p5-48xl-static-topofile-awsofi-1.txt",
}


def provider_text(vm: str) -> str:
    return (CAPTURES / PROVIDER_FILES[vm]).read_text(encoding="utf-8")


def _is_bridge(element: ET.Element) -> bool:
    return element.get("class", "").startswith("0x0604")


def _endpoints_below(element: ET.Element) -> frozenset[str]:
    return frozenset(e.get("busid", "").lower() for e in element.iter("pci") if not _is_bridge(e))


def switch_groups(text: str) -> set[frozenset[str]]:
    """For every switch in the file, the GPUs and NICs below it (by bus id), whatever the switch is called."""
    root = ET.fromstring(text)
    return {_endpoints_below(e) for e in root.iter("pci") if _is_bridge(e)}


def numa_of_devices(text: str) -> dict[str, int]:
    """Each GPU's and NIC's NUMA node: the ``<cpu>`` it hangs off."""
    root = ET.fromstring(text)
    return {bus: int(cpu.get("numaid", "-1")) for cpu in root.iter("cpu") for bus in _endpoints_below(cpu)}


def gpu_nic_pairs(text: str, level: PathLevel = PathLevel.PIX) -> set[tuple[str, str]]:
    """The GPU-NIC pairs topoaudit's own NCCL XML reader finds one switch apart, by bus id."""
    machine = parse_nccl_xml(text, "topo.xml").machine
    gpus = {g.label: g.pci_bus_id for g in machine.gpus}
    nics = {n.label: n.pci_bus_id for n in machine.nics}
    return {
        (str(gpus[link.a]), str(nics[link.b]))
        for link in machine.links
        if link.a in gpus and link.b in nics and link.level == level
    }


def nvlink_domains_by_bus(text: str) -> set[frozenset[str]]:
    """The NVLink domains topoaudit's XML reader finds in a file, each as the bus ids of its GPUs."""
    machine = parse_nccl_xml(text, "topo.xml").machine
    bus = {g.index: str(g.pci_bus_id) for g in machine.gpus}
    return {frozenset(bus[i] for i in d.gpus) for d in nvlink_domains(machine)}


# --- NCCL's own parser (src/graph/xml.cc), compiled from the verbatim excerpt in tests/fixtures/nccl_topo/nccl ---

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_topo" / "nccl"


def compile_nccl_parser(folder: Path) -> Path | None:
    """Build the loader into ``folder``; None where there is no C++ compiler."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        return None
    binary = folder / "load_topo_file"
    subprocess.run([compiler, "-std=c++17", "-O1", f"-I{NCCL}", "-o", str(binary), str(NCCL / "load_topo_file.cc")],
                   check=True, capture_output=True)  # fmt: skip
    return binary


def nccl_reads(binary: Path, path: Path) -> list[tuple[int, str, dict[str, str]]]:
    """(depth, element, attributes) as NCCL's parser stores them; AssertionError with NCCL's WARN when it refuses."""
    done = subprocess.run([str(binary), str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = []
    for line in done.stdout.splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name, *pairs = line.strip(" ").split("\t")
        attrs = dict(pair.partition("=")[::2] for pair in pairs)
        rows.append((depth, name, attrs))
    return rows


def etree_reads(text: str) -> list[tuple[int, str, dict[str, str]]]:
    """(depth, element, attributes) as any XML parser reads them."""
    rows: list[tuple[int, str, dict[str, str]]] = []

    def walk(element: ET.Element, depth: int) -> None:
        rows.append((depth, element.tag, dict(element.attrib)))
        for child in element:
            walk(child, depth + 1)

    walk(ET.fromstring(text), 0)
    return rows
