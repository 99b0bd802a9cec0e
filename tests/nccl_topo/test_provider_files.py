"""`nccl-topo` on the cloud VMs whose providers publish a static NCCL_TOPO_FILE: the file it writes from a probe
of the box groups GPUs and NICs under the same PCIe switches, on the same NUMA nodes, as the provider's file,
and topoaudit's own NCCL XML reader reads it back to the same NVLink domains and GPU-NIC pairs."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from topofiles import (
    PROVIDER_FILES,
    gpu_nic_pairs,
    numa_of_devices,
    nvlink_domains_by_bus,
    provider_text,
    switch_groups,
)

from topoaudit.model.topology import nvlink_domains
from topoaudit.readers import load_path

Run = Callable[..., tuple[int, str, str]]
VMS = sorted(PROVIDER_FILES)


def _live(box: Callable[[str], Path], run: Run, tmp_path: Path, vm: str) -> tuple[str, str, str]:
    root = box(vm)
    out_file = tmp_path / "topo.xml"
    code, out, err = run("nccl-topo", "--sysfs-root", str(root), "-o", str(out_file))
    assert code == 0, err
    return out_file.read_text(encoding="utf-8"), out, err


@pytest.mark.parametrize("vm", VMS)
def test_the_file_groups_gpus_and_nics_under_the_switches_of_the_providers_file(
    box: Callable[[str], Path], run: Run, tmp_path: Path, vm: str
) -> None:
    written, _, _ = _live(box, run, tmp_path, vm)
    provider = provider_text(vm)
    assert switch_groups(written) == switch_groups(provider)
    assert numa_of_devices(written) == numa_of_devices(provider)


@pytest.mark.parametrize("vm", VMS)
def test_the_reader_finds_the_providers_gpu_nic_pairs_in_the_written_file(
    box: Callable[[str], Path], run: Run, tmp_path: Path, vm: str
) -> None:
    written, _, _ = _live(box, run, tmp_path, vm)
    provider = provider_text(vm)
    assert gpu_nic_pairs(written) == gpu_nic_pairs(provider)
    if vm != "azure-ndv2":  # NDv2's one NIC hangs off the CPU beside four GPUs: no switch pair at all
        assert gpu_nic_pairs(written)


@pytest.mark.parametrize("vm", VMS)
def test_the_reader_finds_the_probed_nvlink_domains_in_the_written_file(
    box: Callable[[str], Path], run: Run, tmp_path: Path, vm: str
) -> None:
    root = box(vm)
    code, snapshot, _ = run("probe", "--sysfs-root", str(root))
    assert code == 0
    (tmp_path / "snapshot.json").write_text(snapshot, encoding="utf-8")
    probed = load_path(str(tmp_path / "snapshot.json")).machine
    expected = {frozenset(str(probed.gpus[i].pci_bus_id) for i in d.gpus) for d in nvlink_domains(probed)}
    code, _, err = run("nccl-topo", str(tmp_path / "snapshot.json"), "-o", str(tmp_path / "topo.xml"))
    assert code == 0, err
    written = (tmp_path / "topo.xml").read_text(encoding="utf-8")
    assert nvlink_domains_by_bus(written) == expected
    assert len(expected) == 1 and len(next(iter(expected))) == 8  # all eight GPUs on one fabric, as probed


def test_each_device_link_is_the_slower_of_the_device_and_the_port_above_it(
    box: Callable[[str], Path], run: Run, tmp_path: Path
) -> None:
    """As NCCL records it: A100s (Gen4) under Gen5 switch ports are 16 GT/s; one port capped at Gen3 caps its GPU."""
    root = box("azure-ndv4")
    port = (root / "sys/bus/pci/devices/0001:00:00.0").resolve().parent
    (port / "max_link_speed").write_text("8.0 GT/s PCIe\n")
    (port / "current_link_speed").write_text("8.0 GT/s PCIe\n")
    code, written, err = run("nccl-topo", "--sysfs-root", str(root))
    assert code == 0, err
    speed = {e.get("busid"): e.get("link_speed") for e in ET.fromstring(written).iter("pci")}
    assert speed["0001:00:00.0"] == "8.0 GT/s PCIe"
    assert speed["0002:00:00.0"] == "16.0 GT/s PCIe"


def test_a_snapshot_gives_the_file_a_live_probe_gives(box: Callable[[str], Path], run: Run, tmp_path: Path) -> None:
    live, _, _ = _live(box, run, tmp_path, "azure-ndv4")
    root = tmp_path / "root"
    code, snapshot, _ = run("probe", "--sysfs-root", str(root))
    assert code == 0
    (tmp_path / "snapshot.json").write_text(snapshot, encoding="utf-8")
    code, from_file, _ = run("nccl-topo", str(tmp_path / "snapshot.json"))
    assert code == 0
    # the comment names the source; the elements are the same
    assert ET.tostring(ET.fromstring(from_file)) == ET.tostring(ET.fromstring(live))


@pytest.mark.parametrize("vm", ["azure-ndv4", "aws-p4d", "aws-p5"])
def test_a_saved_report_of_the_probe_gives_the_providers_grouping(
    box: Callable[[str], Path], run: Run, tmp_path: Path, vm: str
) -> None:
    root = box(vm)
    code, _, _ = run("audit", "--sysfs-root", str(root), "--format", "json", "-o", str(tmp_path / "report.json"))
    assert code in (0, 1)
    code, written, err = run("nccl-topo", str(tmp_path / "report.json"))
    assert code == 0, err
    assert switch_groups(written) == switch_groups(provider_text(vm))
    assert gpu_nic_pairs(written) == gpu_nic_pairs(provider_text(vm))
    assert "ffff:ff:" in written  # stand-in switches: a report keeps paths, not the bridges' bus ids


def test_prints_the_nccl_topo_file_line_with_the_absolute_path(
    box: Callable[[str], Path], run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = box("azure-ndv5")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("nccl-topo", "--sysfs-root", str(root), "-o", "topo.xml")
    assert code == 0
    assert out == f"NCCL_TOPO_FILE={tmp_path / 'topo.xml'}\n"
    assert "8 GPU(s) and 8 RDMA NIC(s) under 8 PCIe switch(es) on 2 NUMA node(s)" in err
    assert f"NCCL_TOPO_FILE={tmp_path / 'topo.xml'}" in (tmp_path / "topo.xml").read_text(encoding="utf-8")
