"""GPUs behind PCIe switches (PIX: one switch, PXB: several) are close on PCIe, never an NVLink domain: a TP
group there runs its all-reduce over PCIe. ``--tp 2`` fails while the GPUs could be an NVLink board whose links are
all down (the model unknown), and warns of the cost when the box is known to be PCIe cards (their model, or a
layout no NVLink board has). Real captures, and the same box through the live audit on a fake NVML."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from rulecheck import audit, check

from topoaudit.model.machine import PathLevel
from topoaudit.model.topology import bottleneck, nvlink_domains

sys.path.insert(0, str(Path(__file__).parents[1] / "probe"))
from fakebox import make_box  # the fake NVML box lives with the probe tests

ONE_SWITCH = "topo-4x2080ti-pix-one-switch-lmdeploy-1.txt"  # 4 GPUs, every pair PIX
TWO_SWITCHES = "topo-8xp40-pix-pxb-two-switches-paddle-1.txt"  # 2 x 4 GPUs: PIX inside, PXB across
NVL_PAIRS = (Path(__file__).parents[2] / "topoaudit" / "examples" / "h100-nvl-pairs.txt").read_text()  # 4 NV12 pairs


@pytest.mark.parametrize("name", [ONE_SWITCH, TWO_SWITCHES])
def test_gpus_behind_pcie_switches_are_never_an_nvlink_domain(name: str) -> None:
    report = audit(name)
    assert [d.gpus for d in report.domains] == [(g.index,) for g in report.machine.gpus]
    assert {d.build for d in report.domains} == {"single"}
    assert [d.gpus for d in nvlink_domains(report.machine)] == [(g.index,) for g in report.machine.gpus]
    assert check(None, name) >= {"nvlink-absent"}
    assert "nvlink-degraded" not in check(None, name)


def test_the_switch_paths_are_read_as_pcie_levels() -> None:
    machine = audit(TWO_SWITCHES).machine
    assert bottleneck(machine, (0, 1, 2, 3)).level == PathLevel.PIX
    assert bottleneck(machine, range(8)).level == PathLevel.PXB
    assert bottleneck(audit(ONE_SWITCH).machine, range(4)).level == PathLevel.PIX


@pytest.mark.parametrize(
    ("name", "tp", "severity", "exit_code"),
    [(ONE_SWITCH, 2, "fail", 1), (ONE_SWITCH, 4, "fail", 1), (TWO_SWITCHES, 2, "warn", 0)],
)
def test_tensor_parallelism_on_a_pcie_switch_box_fails_unless_it_is_known_to_be_pcie_cards(
    name: str, tp: int, severity: str, exit_code: int
) -> None:
    """Four GPUs under one switch fit an NVLink board with dead links as well as PCIe cards: the group fails and
    the finding says how to tell. Eight GPUs with no NIC beside any is a layout no NVLink baseboard has (nvlink-absent
    says so), so the group's cost is a warning."""
    report = audit(name, tp=tp)
    (crosses,) = [f for f in report.findings if f.code == "tp-group-crosses-domain"]
    assert crosses.severity.value == severity and report.gate.exit_code == exit_code
    if severity == "fail":
        assert "the GPU model is not known" in crosses.message and "--gpu-model" in crosses.message
    else:
        assert "every TP size runs its all-reduce over PCIe" in crosses.message
    (placement,) = [p for p in report.placements if p.tp == tp]
    assert placement.groups == () and not placement.fits


def test_a_group_on_bridged_cards_without_any_bridge_warns_of_pcie_and_on_bridged_islands_fails() -> None:
    """TP=8 on RTX 3090s with no bridge runs over PCIe on any box of them: their bridges join pairs. Before: FAIL,
    as for NVLink islands (a genesis-vllm user's 8x3090 box at TP=8). A box of H100 NVL pairs still fails TP=8:
    TP=2 inside each pair, with replicas, fits it."""
    report = audit(TWO_SWITCHES, tp=8, gpu_model="RTX 3090")
    (crosses,) = [f for f in report.findings if f.code == "tp-group-crosses-domain"]
    assert crosses.severity.value == "warn", crosses.message
    assert "no bridge joins these GPUs, and NVLink bridges join at most 2" in crosses.message
    (islands,) = [
        f for f in audit(NVL_PAIRS, tp=8, gpu_model="H100 NVL").findings if f.code == "tp-group-crosses-domain"
    ]
    assert islands.severity.value == "fail"
    assert "tp-group-crosses-domain" not in {f.code for f in audit(NVL_PAIRS, tp=2, gpu_model="H100 NVL").findings}


def test_the_live_audit_of_pcie_cards_behind_one_switch_warns_of_tp2_over_pcie(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from topoaudit.cli import main

    box = make_box("pcie-switch-4gpu", tmp_path, monkeypatch)
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--format", "json", "--sysfs-root", str(box.root), "--smi-timeout", "2", "--tp", "2"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert exc.value.code == 0, err
    assert [d["gpus"] for d in report["domains"]] == [[0], [1], [2], [3]]
    gpu_pairs = [lk for lk in report["links"] if lk["a"].startswith("GPU") and lk["b"].startswith("GPU")]
    assert len(gpu_pairs) == 6 and {lk["level"] for lk in gpu_pairs} == {"PIX"}
    (crosses,) = [f for f in report["findings"] if f["code"] == "tp-group-crosses-domain"]
    assert crosses["severity"] == "warn" and "runs its all-reduce over PCIe" in crosses["message"]


@pytest.mark.parametrize(
    ("name", "beyond"), [(ONE_SWITCH, 0), (TWO_SWITCHES, 0), ("topo-4xa10-vm-all-sys-single-numa-1.txt", 6)]
)
def test_pairs_past_a_pcie_switch_are_said_to_exchange_through_host_memory(name: str, beyond: int) -> None:
    """NCCL's default peer-access level stops at PXB (NVIDIA/nccl src/graph/paths.cc): GPUs under switches use peer
    access, pairs across a host bridge or socket (a VM's flattened PCIe, two sockets) go through host memory, which
    ray-project/ray#15495's four T4s at PHB met."""
    text = (Path(__file__).parents[1] / "fixtures" / "topo" / name).read_text() if "a10-vm" in name else name
    (absent,) = [f for f in audit(text).findings if f.code == "nvlink-absent"]
    if beyond:
        assert (
            absent.evidence["causes"] == ["p2p-unsupported"] and absent.evidence["pairs_without_peer_access"] == beyond
        )
        assert f"{beyond} of the {beyond} pairs are past a PCIe switch (SYS)" in absent.message
    else:
        assert "causes" not in absent.evidence and "past a PCIe switch" not in absent.message
