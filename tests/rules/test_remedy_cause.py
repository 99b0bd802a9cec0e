"""A remedy names the cause the evidence shows: a bridge to reseat only on PCIe cards (an SXM/HGX board has a
baseboard, a fabric manager, a GPU tray), TP advice only about domains the box has, and NIC locality as a Grace
tray is built. Real pastes, damaged the way a box that lost links prints them."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import Run
from rulecheck import audit, damage, real

from topoaudit.model.finding import Severity
from topoaudit.model.network import parse_nics

FIXTURES = Path(__file__).parents[1] / "fixtures"
H100 = "topo-h100-8gpu-stas-ht-1.txt"  # HGX H100: every pair NV18
NV12_PAIRS = (FIXTURES / "topo" / "topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt").read_text(encoding="utf-8")
V100 = (FIXTURES / "topo" / "topo-v100-sxm2-8gpu-hybridcubemesh-modern-lmdeploy-1.txt").read_text(encoding="utf-8")
B200_DOWN = (FIXTURES / "captures" / "nvlink-b200-gpu2-all-links-inactive-nvml-error-1.txt").read_text(encoding="utf-8")


def remedies(text: str, code: str, **options: object) -> list[str]:
    return [f.remedy for f in audit(text, **options).findings if f.code == code]


def judged(run: Run, text: str, tmp_path: Path) -> dict:  # type: ignore[type-arg]
    """The report of ``analyze`` on ``text`` as a user runs it (the nvlink -s captures ride with the machine)."""
    paste = tmp_path / "paste.txt"
    paste.write_text(text)
    data: dict = json.loads(run("analyze", str(paste), "--format", "json")[1])  # type: ignore[type-arg]
    return data


def test_an_nvswitch_board_gets_its_baseboard_and_fabric_manager_not_a_bridge() -> None:
    low = damage(real(H100), {(2, 5): "NV16"})
    for gpu_model in (None, "NVIDIA H100 80GB HBM3"):
        (remedy,) = remedies(low, "nvlink-degraded", **({"gpu_model": gpu_model} if gpu_model else {}))
        assert "reseat" not in remedy.lower()
        assert remedy.startswith("These GPUs sit on an NVSwitch baseboard, not on NVLink bridges")
        assert "nvidia-fabricmanager" in remedy and "GPU tray or the baseboard needs service" in remedy


def test_bridged_pcie_cards_get_the_bridge_to_reseat() -> None:
    low = damage(NV12_PAIRS, {(2, 3): "NV6"})
    (remedy,) = remedies(low, "nvlink-degraded")
    assert remedy.startswith("A bridge link did not train or a bridge is unseated")
    assert "reseat or replace the NVLink bridge" in remedy


def test_a_dgx1_cube_mesh_gets_its_sxm_baseboard() -> None:
    (remedy,) = remedies(damage(V100, {(0, 3): "NV1"}), "nvlink-degraded")
    assert remedy.startswith("These GPUs are linked on an SXM baseboard, not by NVLink bridges")


def test_links_down_on_a_b200_board_name_the_baseboard_not_a_bridge(run: Run, tmp_path: Path) -> None:
    (down,) = [f for f in judged(run, B200_DOWN, tmp_path)["findings"] if f["code"] == "nvlink-link-down"]
    assert down["severity"] == "fail"
    assert "reseat" not in down["remedy"].lower() and "NVSwitch baseboard" in down["remedy"]


def test_pcie_cards_without_a_bridge_are_not_a_link_down(run: Run, tmp_path: Path) -> None:
    """Two A100 PCIe cards, no bridge fitted: NVML says every link is inactive, and that is the build."""
    text = (FIXTURES / "real" / "pastes" / "hpejp-dl380-2xa100pcie-nvlink-s-all-inactive.txt").read_text()
    data = judged(run, text, tmp_path)
    (down,) = [f for f in data["findings"] if f["code"] == "nvlink-link-down"]
    assert down["severity"] == "info" and "no NVLink bridge is fitted" in down["message"]
    assert data["verdict"] == "pass"


def test_tp_advice_names_the_one_domain_the_box_has() -> None:
    """Four GPUs keep NV18, four lost every NVLink: there is one 4-GPU domain, not "each domain", and no second
    domain to put a pipeline stage on."""
    half = damage(
        real(H100),
        {
            **{(i, j): "SYS" for i in range(4) for j in range(4, 8)},
            **{(i, j): "NODE" for i in range(4, 8) for j in range(i + 1, 8)},
        },
    )
    (tp,) = [f for f in audit(half, tp=8).findings if f.code == "tp-group-crosses-domain"]
    advice = tp.evidence["alternatives"]
    assert advice[0] == "TP=4 inside NVLink domain {0-3}, the only one of 4 GPUs: one replica."
    assert not any("each" in a or "PP=2" in a for a in advice)


def test_tp_advice_over_two_domains_says_each_and_pipelines_across_them() -> None:
    halves = damage(real(H100), {(i, j): "SYS" for i in range(4) for j in range(4, 8)})
    (tp,) = [f for f in audit(halves, tp=8).findings if f.code == "tp-group-crosses-domain"]
    assert tp.evidence["alternatives"][:2] == [
        "TP=4 inside each of the 2 NVLink domains of 4 GPUs, data parallel over 2 replicas.",
        "TP=4 inside a domain x PP=2 across 2 domains (pipeline stages cross PCIe/SYS once per micro-batch instead of "
        "every layer).",
    ]


GRACE_TRAY = """\
        GPU0    GPU1    GPU2    GPU3    NIC0    NIC1    NIC2    NIC3    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    NV18    NV18    NODE    NODE    SYS     SYS     0-71    0       2
GPU1    NV18     X      NV18    NV18    NODE    NODE    SYS     SYS     0-71    0       10
GPU2    NV18    NV18     X      NV18    SYS     SYS     NODE    NODE    72-143  1       18
GPU3    NV18    NV18    NV18     X      SYS     SYS     NODE    NODE    72-143  1       26
NIC0    NODE    NODE    SYS     SYS      X      NODE    SYS     SYS
NIC1    NODE    NODE    SYS     SYS     NODE     X      SYS     SYS
NIC2    SYS     SYS     NODE    NODE    SYS     SYS      X      NODE
NIC3    SYS     SYS     NODE    NODE    SYS     SYS     NODE     X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  NV#  = Connection traversing a bonded set of # NVLinks
"""
"""A GB200 compute tray's shape (four NV18 GPUs, two per Grace, NICs on the Grace side), typed for this test."""


def test_a_grace_tray_reaches_its_nics_through_the_cpu_by_design() -> None:
    (local,) = [f for f in audit(GRACE_TRAY, gpu_model="NVIDIA GB200").findings if f.code == "nic-not-local"]
    assert local.severity == Severity.INFO
    assert "by design for NVIDIA GB200: a Grace tray reaches its NICs through the Grace CPU" in local.message
    (unnamed,) = [f for f in audit(GRACE_TRAY).findings if f.code == "nic-not-local"]
    assert unnamed.severity == Severity.INFO  # unnamed, but each GPU's own NUMA node shows a Grace CPU's memory
    assert "by design for a Grace superchip (each GPU has a GPU NUMA ID" in unnamed.message
    x86 = GRACE_TRAY.replace("       2\n", "       N/A\n").replace("       10\n", "       N/A\n")
    (generic,) = [f for f in audit(x86, nics=parse_nics("4x400")).findings if f.code == "nic-not-local"]
    assert generic.severity == Severity.WARN  # an unnamed 4-GPU NV18 box without them: no design to excuse it
