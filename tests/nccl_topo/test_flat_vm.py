"""A VM whose probe sees a flat PCIe tree: the file says the grouping is unknown and what to supply; with the
switch groups given on the command line it matches the provider's file."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from topofiles import gpu_nic_pairs, numa_of_devices, provider_text, switch_groups

Run = Callable[..., tuple[int, str, str]]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl_topo"


def _comment(text: str) -> str:
    start = text.index("<!--")
    return " ".join(text[start : text.index("-->", start)].split())


def test_a_flat_vm_is_told_the_grouping_is_unknown_and_what_to_supply(
    box: Callable[[str], Path], run: Run, tmp_path: Path
) -> None:
    root = box("azure-ndv5-flat-vm")
    code, _, err = run("nccl-topo", "--sysfs-root", str(root), "-o", str(tmp_path / "topo.xml"))
    assert code == 0
    written = (tmp_path / "topo.xml").read_text(encoding="utf-8")
    err_text = " ".join(err.split())
    assert "PCIe tree of this virtual machine is flat" in err_text
    assert "which GPUs and NICs share a switch is unknown" in err_text
    assert "--switch GPU0,mlx5_ib0" in err_text and "provider's topology file" in err_text
    comment = _comment(written)
    assert "WARNING" in comment and "share a switch is unknown" in comment and "provider's topology file" in comment
    assert switch_groups(written) == set()  # nothing invented
    assert numa_of_devices(written) == numa_of_devices(provider_text("azure-ndv5"))  # NUMA is still known
    ET.fromstring(written)  # the comment holds no "--": the file is still XML


def test_switch_groups_given_for_a_flat_vm_give_the_providers_file(
    box: Callable[[str], Path], run: Run, tmp_path: Path
) -> None:
    root = box("azure-ndv5-flat-vm")
    provider = provider_text("azure-ndv5")
    groups = [",".join(sorted(group)) for group in switch_groups(provider)]  # as a user copies them from it
    options = [arg for group in groups for arg in ("--switch", group)]
    code, written, err = run("nccl-topo", "--sysfs-root", str(root), *options)
    assert code == 0
    assert "unknown" not in err
    assert switch_groups(written) == switch_groups(provider)
    assert gpu_nic_pairs(written) == gpu_nic_pairs(provider) and len(gpu_nic_pairs(written)) == 8


def test_switch_groups_take_gpu_labels_and_rdma_names(box: Callable[[str], Path], run: Run) -> None:
    root = box("azure-ndv5-flat-vm")
    code, written, _ = run(
        "nccl-topo", "--sysfs-root", str(root), "--switch", "GPU0,mlx5_ib0", "--switch", "GPU7,mlx5_ib7"
    )
    assert code == 0
    assert switch_groups(written) == {
        frozenset({"0001:00:00.0", "0101:00:00.0"}),
        frozenset({"000c:00:00.0", "0108:00:00.0"}),
    }


def test_a_switch_group_with_one_device_of_unknown_numa_node_is_placed_on_the_others_node(
    box: Callable[[str], Path], run: Run, tmp_path: Path
) -> None:
    """A NIC whose sysfs numa_node is -1, in a saved report: no node of its own, so no conflict with GPU0's."""
    root = box("azure-ndv5-flat-vm")
    (root / "sys/bus/pci/devices/0101:00:00.0/numa_node").write_text("-1\n")  # mlx5_ib0
    report = tmp_path / "report.json"
    code, _, _ = run("audit", "--sysfs-root", str(root), "--format", "json", "-o", str(report))
    assert code in (0, 1)
    code, written, err = run("nccl-topo", str(report), "--switch", "GPU0,mlx5_ib0")
    assert code == 0, err
    assert switch_groups(written) == {frozenset({"0001:00:00.0", "0101:00:00.0"})}
    assert numa_of_devices(written)["0101:00:00.0"] == 0
    assert "mlx5_ib0 0101:00:00.0  NUMA 0, under switch ffff:ff:81.0" in written


def test_bare_metal_without_switches_is_no_warning(box: Callable[[str], Path], run: Run) -> None:
    """NDv2's GPUs hang off the CPUs with no switch: on bare metal that is the layout, not a flattened view."""
    root = box("azure-ndv2")
    code, _, err = run("nccl-topo", "--sysfs-root", str(root))
    assert code == 0
    assert "warning" not in err


def test_the_real_h200_vm_snapshot_gives_its_gpu_on_numa_node_0(run: Run) -> None:
    """A real probe of a one-GPU VM: sysfs gives no NUMA node (-1), NVML's memory affinity and the one node do."""
    code, written, err = run("nccl-topo", str(FIXTURES / "snapshot-h200-vm-1gpu.json"))
    assert code == 0
    assert "warning" not in err  # one GPU, no NIC: nothing to group
    cpu = ET.fromstring(written).find("cpu")
    assert cpu is not None and cpu.get("numaid") == "0" and cpu.get("affinity") == "0000ffff"
    gpu = cpu.find("pci")
    assert gpu is not None
    assert gpu.attrib == {"busid": "0000:00:06.0", "class": "0x030200", "vendor": "0x10de", "device": "0x2335",
                          "link_speed": "32.0 GT/s PCIe", "link_width": "16"}  # fmt: skip
    assert gpu.find("gpu") is None  # NVLink NOT_SUPPORTED: left to NCCL


def test_no_nvlinks_leaves_nvlink_detection_to_nccl(box: Callable[[str], Path], run: Run) -> None:
    root = box("azure-ndv4")
    code, with_links, _ = run("nccl-topo", "--sysfs-root", str(root))
    assert code == 0 and len(ET.fromstring(with_links).findall(".//nvlink")) == 8 * 6
    code, without, _ = run("nccl-topo", "--sysfs-root", str(root), "--no-nvlinks")
    assert code == 0 and ET.fromstring(without).findall(".//gpu") == []
    assert switch_groups(without) == switch_groups(with_links)


def _port(link: int, remote: str, kind: str) -> dict[str, object]:
    return {"link": link, "state": "active", "version": "4.0", "remote_device_type": kind, "remote_pci_bus_id": remote}


def test_nvlinks_are_written_per_target_and_not_at_all_when_one_far_end_is_unknown(run: Run, tmp_path: Path) -> None:
    """NCCL takes a GPU's <nvlink> list as complete (it then skips NVML): a list with a gap is not written."""
    snapshot = json.loads((FIXTURES / "snapshot-h200-vm-1gpu.json").read_text(encoding="utf-8"))
    snapshot["gpus"][0]["nvlinks"] = [_port(0, "0000:05:00.0", "switch"), _port(1, "0000:05:00.0", "switch")]
    (tmp_path / "known.json").write_text(json.dumps(snapshot), encoding="utf-8")
    code, written, _ = run("nccl-topo", str(tmp_path / "known.json"))
    assert code == 0
    links = ET.fromstring(written).findall(".//gpu/nvlink")
    assert [link.attrib for link in links] == [{"target": "0000:05:00.0", "count": "2", "tclass": "0x068000"}]
    snapshot["gpus"][0]["nvlinks"].append(_port(2, "0000:06:00.0", "unknown"))
    (tmp_path / "gap.json").write_text(json.dumps(snapshot), encoding="utf-8")
    code, written, _ = run("nccl-topo", str(tmp_path / "gap.json"))
    assert code == 0
    assert ET.fromstring(written).findall(".//gpu") == []
