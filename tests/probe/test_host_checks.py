"""What on the host blocks the fast path, through the whole live audit on fake boxes (fake NVML, fake sysfs,
fake kernel-log tools): P2P explained per pair, virtual machines, RDMA ports and GPUDirect RDMA, every PCIe
hop up to the root port with AER, kernel-log signatures and NVLink fabric health."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fakebox import make_box
from fakenvml import Scenario
from test_scenarios import audit, run

from topoaudit.model.host_checks import decode_health_mask
from topoaudit.parse.signatures import match_text
from topoaudit.probe import kernel_log
from topoaudit.probe.collect import probe
from topoaudit.probe.snapshot import snapshot_from_json, snapshot_to_json

REAL = Path(__file__).parents[1] / "fixtures" / "probe" / "real"


def codes(report: dict) -> dict[str, str]:
    return {f["code"]: f["severity"] for f in report["findings"]}


def finding(report: dict, code: str) -> dict:
    return next(f for f in report["findings"] if f["code"] == code)


# --- 1. P2P blockers, one explanation per pair; virtual machines ---------------------------------------


def test_every_blocked_pair_gets_its_status_meaning_cause_and_remedy(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("p2p-acs", tmp_path, monkeypatch)
    _, report, _ = audit(capsys, box.root)
    pairs = finding(report, "p2p-unavailable")["evidence"]["pairs"]
    assert pairs and all(p["status"] == "topology-not-supported" for p in pairs)
    first = pairs[0]
    assert (
        first["explanation"].startswith("TNS: ")
        and "ACS P2P redirect is on for bridge(s) 00ff:" in first["explanation"]
    )
    assert "setpci -s BDF ECAP_ACS+6.w=0000" in first["remedy"]
    assert report["host"]["checks"]["virtualization"] == "bare-metal"
    assert "host-virtual-machine" not in codes(report)


def test_a_vm_is_named_as_the_p2p_cause_and_gets_its_own_finding(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"].update(acs_redirect=False, iommu="off", virtual=True)
        sc.p2p_default = sc.p2p_sys = "NOT_SUPPORTED"

    box = make_box("p2p-acs", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    p2p = finding(report, "p2p-unavailable")
    assert "virtual machine" in p2p["evidence"]["likely_cause"] and p2p["evidence"]["virtualization"] == "vm"
    assert p2p["evidence"]["pairs"][0]["explanation"] == (
        "NS: the driver reports P2P as not supported on this path; this is a virtual machine"
    )
    assert "P2P-enabled passthrough" in p2p["evidence"]["pairs"][0]["remedy"]
    vm = finding(report, "host-virtual-machine")
    assert vm["severity"] == "info" and "cpu flag hypervisor" in vm["message"] and "'QEMU'" in vm["message"]


def test_a_registry_key_is_explained_as_such_whatever_the_host(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.p2p_default = sc.p2p_sys = "DISABLED_BY_REGKEY"

    box = make_box("p2p-acs", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    pair = finding(report, "p2p-unavailable")["evidence"]["pairs"][0]
    assert pair["explanation"] == "DR: a driver registry key turns P2P off"
    assert "NVreg_RegistryDwords" in pair["remedy"]


# --- 2. NIC readiness for multi-node --------------------------------------------------------------------


def _nic_ports(**ports: list[dict]) -> object:
    def tweak(sc: Scenario) -> None:
        for nic in sc.raw["nics"]:
            if nic["name"] in ports:
                nic["ports"] = ports[nic["name"]]

    return tweak


def test_healthy_rdma_ports_with_peermem_say_nothing(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    _, report, _ = audit(capsys, box.root)
    found = codes(report)
    assert not [c for c in found if c.startswith(("rdma-", "gpudirect-"))]
    checks = report["host"]["checks"]
    assert checks["gpudirect_rdma"] == "nvidia_peermem"
    port = checks["rdma_ports"][0]
    assert (port["device"], port["state"], port["phys_state"], port["rate_gbps"]) == (
        "mlx5_0",
        "ACTIVE",
        "LinkUp",
        400.0,
    )
    assert (port["link_layer"], port["link_downed"], port["symbol_error"]) == ("InfiniBand", 0, 0)


def test_a_disabled_port_is_down(tmp_path, monkeypatch, capsys) -> None:
    tweak = _nic_ports(mlx5_3=[{"state": "1: DOWN", "phys_state": "3: Disabled"}])
    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    code, report, _ = audit(capsys, box.root, "--fail-on", "warn")
    f = finding(report, "rdma-port-down")
    assert "mlx5_3/1 DOWN (Disabled)" in f["message"] and f["severity"] == "warn" and code == 1
    assert "ibstat" in f["remedy"]


def test_a_200g_cable_on_a_400g_nic_is_slow(tmp_path, monkeypatch, capsys) -> None:
    tweak = _nic_ports(mlx5_2=[{"rate": "200 Gb/sec (4X HDR)"}])
    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "rdma-port-slow")
    assert "mlx5_2/1 at 200 Gb/s of 400" in f["message"]
    assert f["evidence"]["ports"] == [{"device": "mlx5_2", "port": 1, "rate_gbps": 200.0, "sibling_rate_gbps": 400.0}]


def test_mixed_infiniband_and_ethernet_and_link_errors(tmp_path, monkeypatch, capsys) -> None:
    tweak = _nic_ports(mlx5_1=[{"link_layer": "Ethernet", "link_downed": 3, "symbol_error": 117}])
    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    assert "Ethernet: mlx5_1/1" in finding(report, "rdma-link-layer-mixed")["message"]
    assert "mlx5_1/1 link_downed=3 symbol_error=117" in finding(report, "rdma-port-errors")["message"]
    assert "rdma-port-slow" not in codes(report)  # rates are compared within one link layer


def test_no_peermem_names_the_close_gpu_nic_pairs(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["peermem"] = False

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "gpudirect-rdma-unavailable")
    assert "nvidia_peermem not loaded; proprietary NVIDIA kernel module" in f["message"]
    assert "GPU0-mlx5_0 PIX" in f["evidence"]["close_pairs"]
    assert "modprobe nvidia_peermem" in f["remedy"]


def test_open_kernel_module_on_a_new_kernel_is_dma_buf(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"].update(peermem=False, open_kernel_module=True)

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    assert report["host"]["checks"]["gpudirect_rdma"] == "dma-buf"
    assert "gpudirect-rdma-unavailable" not in codes(report)


# --- 3. The whole PCIe path ---------------------------------------------------------------------------


def test_a_switch_uplink_at_x8_is_named_though_every_gpu_link_is_full(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["uplinks"] = {"sw1": [5, 8]}
        for gpu in sc.gpus:
            gpu.pcie = (5, 5, 16, 16)

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    assert "pcie-link-degraded" not in codes(report)  # NVML's per-GPU figures see nothing
    f = finding(report, "pcie-path-degraded")
    assert f["severity"] == "warn" and "x8 of x16" in f["message"] and "GPU1, mlx5_1" in f["message"]
    (hop,) = f["evidence"]["hops"]
    assert hop["behind"] == "GPU1, mlx5_1" and hop["current_gbps"] == 31.5


def test_an_x8_nic_in_an_x16_switch_port_is_not_a_degraded_hop(tmp_path, monkeypatch, capsys) -> None:
    """The lower of the two ends' maxima is the bar, and a switch's internal hop is no link."""

    def tweak(sc: Scenario) -> None:
        sc.raw["nics"][0]["pcie"] = [4, 4, 8, 8]
        for gpu in sc.gpus:
            gpu.pcie = (5, 5, 16, 16)

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root, "--strict")
    assert "pcie-path-degraded" not in codes(report) and not report["skipped"]
    hops = report["host"]["checks"]["pcie_hops"]
    nic_hop = next(h for h in hops if h["device"] == "0000:19:00.0")
    assert (nic_hop["width_current"], nic_hop["width_max"], nic_hop["speed_max_gts"]) == (8, 8, 16.0)
    uplinks = [h for h in hops if h["upstream"] in {h2["upstream"] for h2 in hops} and len(h["endpoints"]) > 1]
    assert uplinks and all(h["width_current"] == h["width_max"] == 16 for h in uplinks)  # shared by GPU and NIC


def test_a_generation_drop_behind_idle_gpus_is_info_and_says_so(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["uplinks"] = {"sw0": [3, 16]}
        sc.raw["nics"] = [n for n in sc.raw["nics"] if n["name"] != "mlx5_0"]  # only GPUs behind the switch

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "pcie-path-degraded")
    assert f["severity"] == "info" and "8 of 32 GT/s (idle GPUs: may be power saving)" in f["message"]


def test_aer_counters_fatal_warn_correctable_only_info(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["aer"] = {"0000:18:00.0": [12, 0, 0]}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "pcie-aer-errors")
    assert f["severity"] == "info" and "GPU0 correctable=12 nonfatal=0 fatal=0" in f["message"]

    def worse(sc: Scenario) -> None:
        sc.raw["host"]["aer"] = {"0000:19:00.0": [0, 2, 1]}

    box = make_box("hgx-h100", tmp_path / "b", monkeypatch, worse)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "pcie-aer-errors")
    assert f["severity"] == "warn" and "mlx5_0 correctable=0 nonfatal=2 fatal=1" in f["message"]


# --- 4. Kernel-log signatures ---------------------------------------------------------------------------

# Constructed in the NVIDIA driver's printed forms ("NVRM: Xid (PCI:dddd:bb:dd): N, pid=..., name=..., text"
# and "NVRM: GPU dddd:bb:dd.f: GPU has fallen off the bus."); the bus ids are GPUs of the hgx-h100 scenario.
XID_LOG = """\
[  812.113402] NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[  812.113433] NVRM: GPU 0000:2a:00.0: GPU has fallen off the bus.
[  903.000001] NVRM: Xid (PCI:0000:9a:00): 145, pid=2211, name=python, NVLink: link 4 fatal error
[  903.500001] NVRM: Xid (PCI:0000:ab:00): 13, pid=2211, name=python, Graphics Exception
[ 1000.000002] NVRM: nvlink: GPU 0000:ba:00.0 link 7: training failed at post RX detect
"""


def test_kernel_log_xids_are_mapped_to_gpus(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["kernel_log"] = {"dmesg": XID_LOG}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    code, report, _ = audit(capsys, box.root)
    f = finding(report, "kernel-gpu-error")
    assert f["evidence"]["gpus"] == {
        "GPU1": ["xid-79 (fell off the bus)", "fallen-off-bus (fell off the bus)"],
        "GPU4": ["xid-145 (NVLink error)"],
        "GPU6": ["nvlink-training-failed (NVLink training failed)"],
    }  # Xid 13 is an application fault, not the fabric's
    assert f["severity"] == "fail" and code == 1


def test_an_unreadable_kernel_log_is_unsupported_with_the_reason(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["kernel_log"] = {"denied": True}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    snap = probe(box.root, run_nvidia_smi=False)
    events = snap.os.kernel_events
    assert events.status == "unsupported"  # type: ignore[union-attr]
    assert "dmesg: reading the kernel log is not permitted (dmesg: read kernel buffer failed" in events.reason  # type: ignore[union-attr]
    _, report, _ = audit(capsys, box.root, "--strict")
    assert "kernel-gpu-error" not in codes(report) and not report["skipped"]


def test_the_kernel_log_reader_is_bounded_in_time_and_size(tmp_path) -> None:
    slow = tmp_path / "journalctl"
    slow.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(30)\n")
    big = tmp_path / "dmesg"  # 6 MiB of log, then the one line that matters: the newest lines are kept
    big.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdout.write('filler line of the kernel log\\n' * 200000)\n"
        "print('NVRM: Xid (PCI:0000:18:00): 74, pid=1, name=x, NVLink: fatal')\n"
    )
    for script in (slow, big):
        script.chmod(0o755)
    env = {"PATH": str(tmp_path)}
    events = kernel_log.read_kernel_log(timeout_s=1.0, max_bytes=64 * 1024, env=env)
    assert [e.signature for e in events] == ["xid-74"]  # type: ignore[union-attr]
    assert kernel_log._run_bounded([str(slow)], 0.5, 1024, env)[1] == "journalctl did not finish within 0.5 s"


# --- 5. Fabric health -----------------------------------------------------------------------------------


def test_health_mask_decodes_every_nvml_field() -> None:
    assert decode_health_mask(0) == ()
    assert decode_health_mask(0b10_10_10_10) == ()  # every field "false"
    assert decode_health_mask(0x1 | 0x1 << 2 | 0x1 << 4 | 0x1 << 6) == (
        "degraded-bandwidth",
        "route-recovery",
        "route-unhealthy",
        "access-timeout-recovery",
    )
    assert decode_health_mask(5 << 8) == ("incorrect-configuration: insufficient-nvlinks",)
    assert decode_health_mask(1 << 8) == ()  # configuration "none"


def _fabric(**fields: object) -> object:
    def tweak(sc: Scenario) -> None:
        for gpu in sc.gpus:
            gpu.fabric = dict(gpu.fabric or {}, **fields)

    return tweak


def test_unhealthy_summary_under_a_completed_state_fails(tmp_path, monkeypatch, capsys) -> None:
    tweak = _fabric(health_summary=2, health_mask=1 << 4, cluster_uuid="11" * 16, clique_id=32766)
    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    code, report, _ = audit(capsys, box.root)
    f = finding(report, "fabric-unhealthy")
    assert f["severity"] == "fail" and f["evidence"]["gpus"]["GPU0"] == ["summary unhealthy", "route-unhealthy"]
    assert f["evidence"]["cliques"] == ["11111111-1111-1111-1111-111111111111/32766"]
    assert "fabric-not-ready" not in codes(report) and code == 1
    gpu0 = report["gpus"][0]["fabric"]
    assert (gpu0["state"], gpu0["status"], gpu0["clique_id"]) == ("completed", "SUCCESS", 32766)


def test_a_healthy_gpu_with_an_all_zero_cluster_uuid_fails_and_limited_capacity_warns(
    tmp_path, monkeypatch, capsys
) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch, _fabric(health_summary=1))
    _, report, _ = audit(capsys, box.root)
    assert finding(report, "fabric-unhealthy")["evidence"]["gpus"]["GPU3"] == ["all-zero cluster UUID"]

    box = make_box("hgx-h100", tmp_path / "b", monkeypatch, _fabric(health_summary=3, cluster_uuid="22" * 16))
    _, report, _ = audit(capsys, box.root)
    assert finding(report, "fabric-unhealthy")["severity"] == "warn"


def test_h100_without_fabric_health_stays_quiet(tmp_path, monkeypatch, capsys) -> None:
    """HGX H100 answers v3 with health NOT_SUPPORTED and a zero UUID: normal, not a finding."""
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    _, report, _ = audit(capsys, box.root)
    assert "fabric-unhealthy" not in codes(report)
    health = report["host"]["checks"]["fabric_health"][0]
    assert (health["health_mask"], health["summary"]) == (0, "not-supported")


def test_a_driver_without_fabric_info_v3_falls_back_to_v2(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch, _fabric(v3=False, health_mask=1))
    snap = probe(box.root, run_nvidia_smi=False)
    gpu = snap.gpus[0]
    assert gpu.fabric_state == "completed" and gpu.fabric_health_mask == 1
    assert gpu.fabric_health_summary.reason.startswith("fabric info v3")  # type: ignore[union-attr]
    _, report, _ = audit(capsys, box.root)
    assert finding(report, "fabric-unhealthy")["evidence"]["gpus"]["GPU0"] == ["degraded-bandwidth"]


# --- the snapshot ---------------------------------------------------------------------------------------


def test_a_schema_1_snapshot_still_loads_with_the_host_checks_absent_for_that_reason(capsys) -> None:
    text = (REAL / "snapshot-h200-vm-1gpu.json").read_text(encoding="utf-8")
    assert json.loads(text)["schema_version"] == 1
    snap = snapshot_from_json(text)
    assert snap.schema_version == 2
    for value in (snap.os.rdma_ports, snap.os.kernel_events, snap.pci_bridges, snap.gpus[0].fabric_health_summary):
        assert value.reason == "not recorded by snapshot schema 1"  # type: ignore[union-attr]
    code, out, _ = run(capsys, "analyze", str(REAL / "snapshot-h200-vm-1gpu.json"), "--format", "json")
    assert (
        code == 0 and json.loads(out)["host"]["checks"]["rdma_ports"]["reason"] == "not recorded by snapshot schema 1"
    )


def test_the_host_checks_survive_a_saved_snapshot(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["kernel_log"] = {"journal": XID_LOG}
        sc.raw["host"]["uplinks"] = {"sw1": [5, 8]}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    snap = probe(box.root, run_nvidia_smi=False)
    assert snapshot_from_json(snapshot_to_json(snap)) == snap
    path = tmp_path / "snap.json"
    path.write_text(snapshot_to_json(snap))
    _, out, _ = run(capsys, "analyze", str(path), "--format", "json")
    assert {"kernel-gpu-error", "pcie-path-degraded"} <= codes(json.loads(out)).keys()


def test_nccls_mnnvl_line_is_unhealthy_exactly_when_the_decoded_mask_names_a_problem() -> None:
    """The catalog reads NCCL's `healthMask 0x..` with a regex; for every 12-bit mask it must agree with the decoder
    the live probe uses (0x80 and 0xaa are healthy: their fields say "false")."""
    line = "host:1:2 [0] NCCL INFO MNNVL busId 0x6d000 fabric UUID 0.0 cliqueId 0x0 state 3 healthMask {:#x}"
    for mask in range(0x1000):
        flagged = any(h.signature == "nccl-mnnvl-fabric-unhealthy" for h in match_text(line.format(mask)))
        assert flagged == bool(decode_health_mask(mask)), hex(mask)
