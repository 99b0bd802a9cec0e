"""Input that holds no machine NCCL could match exits 4 with one sentence; bad switch groups are usage errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., tuple[int, str, str]]
FIXTURES = Path(__file__).parents[1] / "fixtures"


def _one_sentence(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("topoaudit: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "capture",
    [
        "captures/nvbandwidth-8gpu-d2d-ce-readme-example-1.txt",  # GPUs, no bus ids
        "probe/smi/topo-h100-8gpu-stas-ht-1.txt",  # topo -m: GPUs, no bus ids
        "captures/ncclxml-azure-ncv4-a100pcie-graph-file-1.txt",  # a graph dump: channels, no devices
    ],
)
def test_a_capture_without_bus_ids_exits_4_naming_what_is_missing(run: Run, capture: str) -> None:
    code, out, err = run("nccl-topo", str(FIXTURES / capture))
    assert code == 4
    assert out == ""
    line = _one_sentence(err)
    assert "names no PCI bus id" in line and "topoaudit probe -o snapshot.json" in line


def test_a_report_without_a_machine_exits_4(run: Run, tmp_path: Path) -> None:
    code, report, _ = run("plan", "--params", "70B", "--precision", "bf16", "--gpu", "H100", "--format", "json")
    assert code == 0
    (tmp_path / "plan.json").write_text(report, encoding="utf-8")
    code, out, err = run("nccl-topo", str(tmp_path / "plan.json"))
    assert code == 4 and out == ""
    assert "holds no machine (no GPU in it)" in _one_sentence(err)


def test_a_snapshot_without_gpus_exits_4(run: Run, tmp_path: Path) -> None:
    """The real VM snapshot with its GPU taken out (a container that mounts none records the same)."""
    snapshot = json.loads((FIXTURES / "nccl_topo" / "snapshot-h200-vm-1gpu.json").read_text(encoding="utf-8"))
    snapshot.update(gpus=[], pci_devices=[], pairs=[])
    (tmp_path / "s.json").write_text(json.dumps(snapshot), encoding="utf-8")
    code, out, err = run("nccl-topo", str(tmp_path / "s.json"))
    assert code == 4 and out == ""
    assert "holds no GPU with a PCI bus id" in _one_sentence(err)


def test_text_that_is_no_capture_exits_4(run: Run, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    code, _, err = run("nccl-topo", str(tmp_path / "notes.txt"))
    assert code == 4
    _one_sentence(err)


@pytest.mark.parametrize(
    ("group", "says"),
    [
        ("GPU0,GPU9", "'GPU9' is no GPU or RDMA NIC of this machine"),
        ("GPU0", "name at least two devices"),
        ("GPU0,GPU4", "on NUMA nodes 0, 1; one PCIe switch hangs off one CPU"),
    ],
)
def test_bad_switch_groups_are_usage_errors(box: Callable[[str], Path], run: Run, group: str, says: str) -> None:
    root = box("azure-ndv5-flat-vm")
    code, out, err = run("nccl-topo", "--sysfs-root", str(root), "--switch", group)
    assert code == 2 and out == ""
    assert says in " ".join(err.split())


def test_a_device_in_two_groups_is_a_usage_error(box: Callable[[str], Path], run: Run) -> None:
    root = box("azure-ndv5-flat-vm")
    code, _, err = run("nccl-topo", "--sysfs-root", str(root), "--switch", "GPU0,mlx5_ib0", "--switch", "GPU0,GPU1")
    assert code == 2
    assert "named in two switch groups" in err


def test_an_output_path_that_cannot_be_written_exits_4(box: Callable[[str], Path], run: Run, tmp_path: Path) -> None:
    root = box("azure-ndv5")
    code, out, err = run("nccl-topo", "--sysfs-root", str(root), "-o", str(tmp_path / "missing" / "topo.xml"))
    assert code == 4 and out == ""
    assert str(tmp_path / "missing") in err


def _damaged(data: dict, where: str, value: object) -> dict:  # type: ignore[type-arg]
    section, index, key = where.split(".")
    data[section][int(index)][key] = value
    return data


@pytest.mark.parametrize(
    ("where", "value", "says"),
    [
        ("gpus.0.pci_bus_id", "0000:18:00:00:00.0", "GPU0 ('0000:18:00:00:00.0') has no PCI bus id NCCL can match"),
        ("gpus.0.pci_bus_id", '"><evil a="', "GPU0 ('\"><evil a=\"') has no PCI bus id NCCL can match"),
        (
            "nics.0.pci_bus_id",
            '0000:0c:00.0"/><pci busid="x',
            "mlx5_0 ('0000:0c:00.0\"/><pci busid=\"x') has no PCI bus id NCCL can match",
        ),
        ("gpus.1.pci_bus_id", "0000:0f:00.0", "GPU1 ('0000:0f:00.0') has the bus id of GPU0"),
        ("gpus.0.numa_nodes", [2**40], "NUMA node 1099511627776 is none a machine has"),
        ("gpus.0.cpu_affinity", [2**20], "NUMA node 0 lists a CPU no machine has"),
    ],
)
def test_a_report_naming_what_no_machine_has_gets_no_file_but_a_sentence(
    run: Run, tmp_path: Path, where: str, value: object, says: str
) -> None:
    """Before, each went into the file as it was: NCCL would have matched no device, or the wrong one."""
    provider = FIXTURES / "captures" / "provider" / "oci-bm.gpu.h100.8-dump-samples.xml"
    assert run("analyze", str(provider), "--format", "json", "-o", str(tmp_path / "r.json"))[0] == 0
    data = _damaged(json.loads((tmp_path / "r.json").read_text()), where, value)
    (tmp_path / "r.json").write_text(json.dumps(data))
    code, out, err = run("nccl-topo", str(tmp_path / "r.json"), "-o", str(tmp_path / "topo.xml"))
    assert (code, out) == (4, "")
    assert _one_sentence(err) == f"topoaudit: error: {tmp_path / 'r.json'}: {says}; the input is damaged"
    assert not (tmp_path / "topo.xml").exists()


def test_a_dumped_nvlink_no_gpu_has_gets_no_file_but_a_sentence(run: Run, tmp_path: Path) -> None:
    provider = FIXTURES / "captures" / "provider" / "oci-bm.gpu.h100.8-dump-samples.xml"
    assert run("analyze", str(provider), "--format", "json", "-o", str(tmp_path / "r.json"))[0] == 0
    data = json.loads((tmp_path / "r.json").read_text())
    data["captures"]["nccl_topology"]["gpus"][0]["nvlinks"][0]["count"] = 10**6
    (tmp_path / "r.json").write_text(json.dumps(data))
    code, _, err = run("nccl-topo", str(tmp_path / "r.json"))
    assert code == 4
    assert _one_sentence(err).endswith(
        "GPU0 ('0000:0f:00.0') has 1000000 NVLink(s) to '0000:1c:00.0', which no GPU has; the input is damaged"
    )
