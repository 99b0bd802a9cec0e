"""ACS on the bridges above GPUs and RDMA NICs, through the whole live audit on fake boxes: a finding of its own
even when NVML reports P2P OK (ACS changes the route, not the capability), warn on bare metal with the setpci
line per bridge, info in a virtual machine, and an unprivileged probe that records why it could not tell."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fakebox import make_box
from fakenvml import Scenario
from test_host_checks import codes, finding
from test_scenarios import audit, run

from topoaudit.model.host_checks import acs_flags
from topoaudit.probe.collect import probe
from topoaudit.probe.snapshot import snapshot_from_json, snapshot_to_json
from topoaudit.probe.sysfs import ACS_ROOT_ONLY, acs_bridges

# The fake tree numbers its bridges in the order it meets them: the root port above the switch, the switch's
# upstream port (no ACS capability), then one downstream port per GPU.
ROOT_PORT, UPSTREAM = "00ff:01:00.0", "00ff:02:00.0"
DOWNSTREAM = ["00ff:03:00.0", "00ff:04:00.0", "00ff:05:00.0", "00ff:06:00.0"]


def test_acs_redirect_under_p2p_ok_is_a_warning_naming_bridges_and_gpus(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("acs-plx-4gpu", tmp_path, monkeypatch)
    code, report, _ = audit(capsys, box.root, "--strict")
    assert all(p["read"] == "ok" and p["write"] == "ok" for p in report["p2p"])  # NVML sees nothing wrong
    assert "p2p-unavailable" not in codes(report)
    f = finding(report, "pcie-acs-redirect")
    assert f["severity"] == "warn" and code == 0 and not report["skipped"]
    assert f"{ROOT_PORT} (SrcValid ReqRedir CmpltRedir UpstreamFwd) above GPU0, GPU1, GPU2, GPU3" in f["message"]
    assert f"{DOWNSTREAM[0]} (SrcValid ReqRedir CmpltRedir UpstreamFwd) above GPU0;" in f["message"]
    assert "although NVML reports P2P OK" in f["message"]
    bridges = {b["bridge"]: b for b in f["evidence"]["bridges"]}
    assert sorted(bridges) == [ROOT_PORT, *DOWNSTREAM]  # the upstream port has no ACS capability
    assert bridges[DOWNSTREAM[3]]["below"] == ["GPU3"] and bridges[ROOT_PORT]["control"] == "0x001d"
    commands = [(c["command"], c["undo"]) for c in f["remedy_commands"]]
    assert commands == [
        (f"setpci -s {b} ECAP_ACS+0x6.w=0000", f"setpci -s {b} ECAP_ACS+0x6.w=001d  # or reboot")
        for b in [ROOT_PORT, *DOWNSTREAM]
    ]
    acs = {b["bridge"]: b for b in report["host"]["checks"]["acs"]}
    assert acs[UPSTREAM]["control"]["reason"] == "no ACS capability"


def test_the_bridge_above_an_rdma_nic_names_the_nic(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["acs_redirect"] = True

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "pcie-acs-redirect")
    above_nic = [b for b in f["evidence"]["bridges"] if "mlx5_0" in b["below"]]
    assert above_nic and above_nic[0]["below"] == ["GPU0", "mlx5_0"]  # the root port above switch sw0
    assert ["GPU0"] in [b["below"] for b in f["evidence"]["bridges"]]
    assert "mlx5_0" in f["message"]


def test_in_a_virtual_machine_acs_is_information_with_nothing_to_run(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["virtual"] = True

    box = make_box("acs-plx-4gpu", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "pcie-acs-redirect")
    assert f["severity"] == "info" and f["remedy_commands"] == []
    assert "the hypervisor needs ACS for passthrough" in f["message"]
    assert f["evidence"]["virtualization"] == "vm"


def test_source_validation_alone_is_no_redirect(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["acs_control"] = 0x01  # ACSCtl: SrcValid+ ReqRedir- CmpltRedir-

    box = make_box("acs-plx-4gpu", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    assert "pcie-acs-redirect" not in codes(report)
    assert {b["control"] for b in report["host"]["checks"]["acs"] if isinstance(b["control"], int)} == {1}


def test_a_user_who_is_not_root_gets_the_reason_not_a_verdict(tmp_path, monkeypatch, capsys) -> None:
    """sysfs shows the first 64 bytes of config space to other users; the ACS capability lies beyond 256."""

    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["acs_unreadable"] = True

    box = make_box("acs-plx-4gpu", tmp_path, monkeypatch, tweak)
    snap = probe(box.root, run_nvidia_smi=False)
    assert snap.os.acs_bridges.reason == ACS_ROOT_ONLY  # type: ignore[union-attr]
    assert "run the probe as root" in ACS_ROOT_ONLY and "lspci -vvv | grep ACSCtl" in ACS_ROOT_ONLY
    code, report, _ = audit(capsys, box.root, "--strict")
    assert "pcie-acs-redirect" not in codes(report) and not report["skipped"] and code == 0
    assert report["host"]["checks"]["acs"]["reason"] == ACS_ROOT_ONLY


def test_acs_survives_a_saved_snapshot_and_an_older_one_says_it_was_not_recorded(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("acs-plx-4gpu", tmp_path, monkeypatch)
    snap = probe(box.root, run_nvidia_smi=False)
    assert snapshot_from_json(snapshot_to_json(snap)) == snap
    doc = json.loads(snapshot_to_json(snap))
    del doc["os"]["acs_bridges"], doc["os"]["pci_slots"]  # a schema-2 snapshot from before both were read
    older = tmp_path / "older.json"
    older.write_text(json.dumps(doc))
    _, out, _ = run(capsys, "analyze", str(older), "--format", "json")
    report = json.loads(out)
    assert "pcie-acs-redirect" not in codes(report)
    assert report["host"]["checks"]["acs"]["reason"] == "ACS per bridge not recorded in this snapshot"
    assert report["host"]["checks"]["pcie_slots"]["reason"] == "PCIe slot names not recorded in this snapshot"


def test_acs_control_bits_are_named_as_lspci_prints_them() -> None:
    assert acs_flags(0x1D) == ("SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd")
    assert acs_flags(0x7F) == ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl",
                               "DirectTrans")  # fmt: skip
    assert acs_flags(0) == ()


# --- real config space: lspci's own test dumps, where lspci decoded the ACSCtl line beside the bytes -------

REAL = Path(__file__).parents[1] / "fixtures" / "probe" / "real"


def _config_bytes(text: str) -> bytes:
    """The bytes of the first device of an ``lspci -xxxx`` dump ("100: 0d 00 01 14 ..." lines)."""
    data = bytearray()
    for line in text.splitlines():
        if m := re.fullmatch(r"([0-9a-f]{2,3}): ((?:[0-9a-f]{2} ?){16})", line.strip()):
            if int(m.group(1), 16) != len(data):  # the next device's dump starts again at 00
                break
            data += bytes(int(x, 16) for x in m.group(2).split())
    return bytes(data)


def _acsctl_on(text: str) -> tuple[str, ...] | None:
    """The bits lspci -vvv marks with + on the first ACSCtl line; None when the text has no such line."""
    m = re.search(r"ACSCtl:\s*(.*)", text)
    return None if m is None else tuple(w[:-1] for w in m.group(1).split() if w.endswith("+"))


@pytest.mark.parametrize(
    ("name", "control"),
    [
        ("lspci-vvvxxxx-haswell-e-root-port-acs-on.txt", 0x1F),
        ("lspci-vvvxxxx-x58-root-port-acs-off.txt", 0x00),
        ("lspci-xxxx-plx-8796-no-acs.txt", None),
    ],
)
def test_the_acs_control_of_real_config_space_reads_as_lspci_decodes_it(
    name: str, control: int | None, tmp_path: Path
) -> None:
    text = (REAL / name).read_text(encoding="utf-8")
    bridge = "0000:" + text.split()[0]  # "00:02.0 PCI bridge: ..." -> "0000:00:02.0"
    config = _config_bytes(text)
    assert len(config) == 4096
    folder = tmp_path / "sys/bus/pci/devices" / bridge
    folder.mkdir(parents=True)
    (folder / "config").write_bytes(config)
    (record,) = acs_bridges(tmp_path, [("pci0000:00", bridge, "0000:01:00.0")])  # type: ignore[misc]
    if control is None:
        assert record.control.reason == "no ACS capability"  # type: ignore[union-attr]
        assert _acsctl_on(text) is None
        return
    assert record.control == control
    assert acs_flags(record.control) == _acsctl_on(text)  # the names lspci printed from the same bytes
    (folder / "config").write_bytes(config[:64])  # what a user who is not root reads
    assert acs_bridges(tmp_path, [("pci0000:00", bridge, "0000:01:00.0")]).reason == ACS_ROOT_ONLY  # type: ignore[union-attr]


def test_a_tree_without_config_files_says_so_not_that_root_is_needed(tmp_path: Path) -> None:
    (tmp_path / "sys/bus/pci/devices/0000:00:01.0").mkdir(parents=True)  # a sandbox that hides config space
    answer = acs_bridges(tmp_path, [("pci0000:00", "0000:00:01.0", "0000:01:00.0")])
    assert answer.reason == "no bridge's config space readable: no config file"  # type: ignore[union-attr]
