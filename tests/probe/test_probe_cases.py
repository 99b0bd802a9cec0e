"""One test per probe finding code and per probe failure mode, as variants of the scenario boxes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fakebox import make_box
from fakenvml import Scenario
from test_scenarios import audit, run

from topoaudit.errors import InputError
from topoaudit.probe.collect import probe
from topoaudit.probe.crosscheck import link_states as parse_nvlink_status
from topoaudit.probe.snapshot import (
    SNAPSHOT_SCHEMA_VERSION,
    snapshot_from_json,
    snapshot_to_dict,
    snapshot_to_json,
)
from topoaudit.units import normalize_bus_id

SMI = Path(__file__).parents[1] / "fixtures" / "probe" / "smi"


def codes(report: dict) -> dict[str, str]:
    return {f["code"]: f["severity"] for f in report["findings"]}


def finding(report: dict, code: str) -> dict:
    return next(f for f in report["findings"] if f["code"] == code)


# --- finding codes -----------------------------------------------------------------------------------


def test_nccl_env_override_names_the_variable_and_its_origin(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["environ"] = {"NCCL_P2P_DISABLE": "1", "NCCL_DEBUG": "INFO"}
        sc.raw["host"]["nccl_conf"] = "# site defaults\nNCCL_IB_HCA=mlx5_0\n"

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    code, report, _ = audit(capsys, box.root)
    f = finding(report, "nccl-env-override")
    assert f["severity"] == "warn" and "NCCL_P2P_DISABLE=1 (environment)" in f["message"]
    assert {s["name"] for s in f["evidence"]["settings"]} == {"NCCL_P2P_DISABLE", "NCCL_IB_HCA"}  # NCCL_DEBUG is quiet
    assert code == 0
    assert run_fail_on_warn(capsys, box.root) == 1


def run_fail_on_warn(capsys, root: Path) -> int:
    code, _, _ = audit(capsys, root, "--fail-on", "warn")
    return code


def test_gpu_visibility_restricted_by_container_and_by_cuda_visible_devices(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"]["hidden_gpus"] = ["0000:f1:00.0", "0000:f2:00.0"]  # on the bus, not given to NVML
        sc.raw["host"]["environ"] = {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "gpu-visibility-restricted")
    assert "NVML sees 8 of the 10 NVIDIA GPUs" in f["message"]
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3 exposes 4 of 8" in f["message"]


def test_probe_sources_disagree_when_topo_text_is_from_another_box(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["smi"]["topo_m"] = "topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt"

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "probe-sources-disagree")
    first = f["evidence"]["disagreements"][0]
    assert first == {"subject": "GPU0-GPU1", "nvml": "NV18", "other": "NV12", "other_source": "nvidia-smi topo -m"}
    assert report["domains"][0]["gpus"] == list(range(8))  # NVML is trusted; the text only cross-checks


def test_nvlink_status_text_disagreeing_with_nvml_is_a_finding(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:  # the text says GPU3 links 3 and 5 are down; NVML says all are up
        sc.raw["smi"] = {"nvlink_s": "nvlink-v100-ndv2-gpu3-two-links-inactive-1.txt"}

    box = make_box("dgx1-cube-mesh", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    subjects = [d["subject"] for d in finding(report, "probe-sources-disagree")["evidence"]["disagreements"]]
    assert subjects == ["GPU3 NVLink 3", "GPU3 NVLink 5"]


def test_pcie_link_degraded_width_under_load_fails(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.gpus[6].pcie = (5, 5, 8, 16)
        sc.gpus[6].utilization = 97

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    code, report, _ = audit(capsys, box.root)
    f = finding(report, "pcie-link-degraded")
    assert f["severity"] == "fail" and "GPU6 x8 of x16" in f["message"]
    assert code == 1


def test_pcie_generation_drop_at_idle_is_only_info(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    code, report, _ = audit(capsys, box.root)
    f = finding(report, "pcie-link-degraded")
    assert f["severity"] == "info" and "power saving" in f["message"] and code == 0


def test_p2p_unavailable_names_acs(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("p2p-acs", tmp_path, monkeypatch)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "p2p-unavailable")
    assert "ACS P2P redirect" in f["evidence"]["likely_cause"]
    assert len(f["evidence"]["pairs"]) == 12  # the PHB pairs of both sockets; SYS pairs are not expected to P2P
    assert report["host"]["iommu"] == "translating"


def test_p2p_disabled_on_an_nvlink_pair_fails(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.p2p_overrides[(0, 1)] = sc.p2p_overrides[(1, 0)] = {
            "read": "DISABLED_BY_REGKEY",
            "write": "DISABLED_BY_REGKEY",
        }

    box = make_box("h100-nvl-pairs", tmp_path, monkeypatch, tweak)
    code, report, _ = audit(capsys, box.root)
    f = finding(report, "p2p-unavailable")
    assert f["severity"] == "fail" and "GPU0-GPU1 disabled-by-regkey over NVLink" in f["message"]
    assert code == 1


def test_nvlink_link_down_on_an_unknown_model_compares_siblings(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        for g in sc.gpus:
            g.name = "NVIDIA Experimental X1"
        sc.gpus[2].ports[7].active = False

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    f = finding(report, "nvlink-link-down")
    assert f["severity"] == "warn" and f["evidence"]["gpus"] == {
        "GPU2": {"active": 17, "expected": 18, "down_links": [7]}
    }


def test_h100_nvl_six_inactive_ports_are_by_design(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("h100-nvl-pairs", tmp_path, monkeypatch)
    _, report, _ = audit(capsys, box.root)
    ports = report["gpus"][0]["nvlink_ports"]
    assert len(ports) == 18 and sum(p["state"] == "active" for p in ports) == 12
    assert "nvlink-link-down" not in codes(report)


def test_fabric_completed_with_an_error_status_is_not_ready(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:  # Azure/azhpc-images#506: State Completed, Status Insufficient Resources
        for g in sc.gpus:
            g.fabric = {"state": 3, "status": "INSUFFICIENT_RESOURCES", "clique_id": 0}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    code, report, _ = audit(capsys, box.root)
    assert "status INSUFFICIENT_RESOURCES" in finding(report, "fabric-not-ready")["message"]
    assert code == 1


# --- what the hardware or driver does not support: recorded, and a skip only where a rule needs it ------


def test_missing_fabric_symbol_is_unsupported_and_skips_only_the_fabric_rule(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:  # an old driver: neither fabric function exists
        sc.missing |= {"nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo"}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    code, report, _ = audit(capsys, box.root)
    assert code == 0
    assert [s["rule"] for s in report["skipped"]] == ["fabric-not-ready"]
    state = report["gpus"][0]["fabric"]["state"]
    assert state["status"] == "unsupported" and "FUNCTION_NOT_FOUND" in state["reason"]
    assert any("nvmlDeviceGetGpuFabricInfo" in n for n in report["extras"]["probe"]["notes"])
    strict, _, _ = audit(capsys, box.root, "--strict")
    assert strict == 3


def test_pcie_only_box_skips_nothing(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("pcie-l40s", tmp_path, monkeypatch)
    code, report, _ = audit(capsys, box.root, "--strict")
    assert code == 0 and report["skipped"] == []
    assert report["gpus"][0]["nvlink_ports"] == {
        "status": "unsupported",
        "source": "nvmlDeviceGetNvLinkState",
        "reason": "NOT_SUPPORTED",
    }


def test_blackwell_style_missing_error_counters_skip_the_counter_rule(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.errors.append({"function": "nvmlDeviceGetNvLinkErrorCounter", "code": "NOT_SUPPORTED"})

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    assert [s["rule"] for s in report["skipped"]] == ["nvlink-errors"]


# --- timeouts: a hung call cannot hang the audit ------------------------------------------------------


def test_a_hung_nvml_call_times_out_and_the_rest_is_not_asked(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.hang = {"function": "nvmlDeviceGetP2PStatus", "seconds": 3}

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    start = time.monotonic()
    snapshot = probe(box.root, call_timeout_s=0.3, smi_timeout_s=2)
    assert time.monotonic() - start < 2.5
    first = snapshot.pairs[0]
    assert "TIMEOUT" in str(first.p2p_read)
    assert "hung earlier" in str(snapshot.pairs[-1].p2p_atomics)
    assert any("stopped answering" in n for n in snapshot.notes)


def test_a_hung_nvidia_smi_is_a_failed_probe_not_a_hung_audit(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("nvlink-down", tmp_path, monkeypatch)  # its topo -m hangs
    start = time.monotonic()
    snapshot = probe(box.root, smi_timeout_s=1)
    assert time.monotonic() - start < 5
    topo = snapshot.commands[0]
    assert topo.command == "nvidia-smi topo -m" and "timed out after 1 s" in str(topo.text)
    assert isinstance(snapshot.commands[1].text, str)


def test_nvidia_smi_failing_is_recorded_with_its_words(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:
        sc.raw["smi"] = {}  # installed, but topo -m says "Failed to run topology matrix" (gVisor)

    box = make_box("hgx-h100", tmp_path, monkeypatch, tweak)
    snapshot = probe(box.root)
    assert "exit 255: Failed to run topology matrix" in str(snapshot.commands[0].text)


# --- no driver, exit 4 with one sentence -------------------------------------------------------------


@pytest.mark.parametrize("command", ["probe", "audit"])
def test_no_driver_is_one_sentence_and_exit_4(command, tmp_path, monkeypatch, capsys) -> None:
    make_box("no-driver", tmp_path, monkeypatch)
    code, out, err = run(capsys, command)
    assert code == 4 and out == ""
    lines = err.strip().splitlines()
    assert lines[0].startswith("topoaudit: error: the NVML library (libnvidia-ml.so.1) is missing")
    assert "topoaudit audit --demo" in lines[1] and "analyze" in lines[1]


def test_demo_needs_no_driver_and_says_it_is_a_demo(tmp_path, monkeypatch, capsys) -> None:
    make_box("no-driver", tmp_path, monkeypatch)
    code, out, _ = run(capsys, "audit", "--demo", "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["source"]["demo"] is True and report["source"]["kind"] == "example"


# --- the snapshot document ---------------------------------------------------------------------------


def test_snapshot_round_trips_exactly(tmp_path, monkeypatch) -> None:
    box = make_box("nvlink-down", tmp_path, monkeypatch)
    snapshot = probe(box.root, smi_timeout_s=0.5)
    again = snapshot_from_json(snapshot_to_json(snapshot))
    assert again == snapshot


def test_newer_snapshot_schema_is_refused_with_a_sentence(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("pcie-l40s", tmp_path, monkeypatch)
    doc = snapshot_to_dict(probe(box.root))
    doc["schema_version"] = SNAPSHOT_SCHEMA_VERSION + 1
    path = tmp_path / "future.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, "analyze", str(path))
    assert code == 4 and "newer than this topoaudit reads" in err and "upgrade topoaudit" in err
    doc["schema_version"] = 0
    with pytest.raises(InputError, match="not a version topoaudit ever wrote"):
        snapshot_from_json(json.dumps(doc))


def test_damaged_snapshot_names_the_field(tmp_path, monkeypatch) -> None:
    box = make_box("pcie-l40s", tmp_path, monkeypatch)
    doc = snapshot_to_dict(probe(box.root))
    doc["gpus"][3]["memory_total_bytes"] = "lots"
    with pytest.raises(InputError, match=r"damaged: .*gpus\[3\]\.memory_total_bytes"):
        snapshot_from_json(json.dumps(doc))


# --- small pieces --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("00000000:07:00.0", "0000:07:00.0"),  # NVML
        ("0000:07:00.0", "0000:07:00.0"),  # sysfs, torch
        ("00000008:01:00.0", "0008:01:00.0"),  # GB200: non-zero domain
        ("07:00.0", "0000:07:00.0"),
        ("FFFFFFFF:FF:FF.0", "ffffffff:ff:ff.0"),  # an NVSwitch that is not a PCI device (B200)
    ],
)
def test_bus_ids_are_normalised(text: str, normal: str) -> None:
    assert normalize_bus_id(text) == normal


def test_nvlink_status_parser_reads_real_captures() -> None:
    v100 = parse_nvlink_status((SMI / "nvlink-v100-ndv2-gpu3-two-links-inactive-1.txt").read_text())
    assert v100 == {3: {0: "active", 1: "active", 2: "active", 3: "inactive", 4: "active", 5: "inactive"}}
    b200 = parse_nvlink_status((SMI / "nvlink-b200-gpu2-all-links-inactive-nvml-error-1.txt").read_text())
    assert b200 == {2: {-1: "inactive"}}  # "all links are inActive": every link of GPU 2
    h100 = parse_nvlink_status((SMI / "nvlink-h100-status-elided-stas-1.txt").read_text())
    assert h100 == {0: {0: "active", 17: "active"}}  # elided lines are not claims


def test_gpu_to_nic_distance_is_computed_from_sysfs(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    _, report, _ = audit(capsys, box.root)
    links = {(lk["a"], lk["b"]): lk["code"] for lk in report["links"]}
    assert links[("GPU0", "NIC0")] == "PIX" and links[("GPU0", "NIC1")] == "NODE" and links[("GPU0", "NIC4")] == "SYS"
    nic = report["nics"][0]
    assert (nic["device"], nic["netdev"], nic["link_rate_gbps"]) == ("mlx5_0", "ibp25s0", 400.0)
    assert "nic-not-local" not in codes(report)


# --- the real device run (1x H200 VM) ----------------------------------------------------------------

REAL = Path(__file__).parents[1] / "fixtures" / "probe" / "real"


def test_real_h200_vm_snapshot_passes_even_under_strict(capsys) -> None:
    """What NVML really answered on the device box: NVLink NOT_SUPPORTED on a lone H200 (not a skip: one GPU
    has nothing to link to), fabric state not-supported, sysfs numa_node -1."""
    code, out, _ = run(capsys, "analyze", str(REAL / "snapshot-h200-vm-1gpu.json"), "--format", "json", "--strict")
    report = json.loads(out)
    assert code == 0 and report["verdict"] == "pass" and report["skipped"] == []
    assert report["gpu_model"] == "NVIDIA H200" and report["source"]["kind"] == "snapshot"
    assert report["host"]["disagreements"] == []  # the ANSI-underlined topo -m header still parses and agrees


def test_real_topo_text_with_ansi_header_cross_checks(tmp_path, monkeypatch, capsys) -> None:
    def tweak(sc: Scenario) -> None:  # a one-GPU box printing the real device capture
        sc.gpus[:] = sc.gpus[:1]
        sc.raw["smi"] = {"topo_m": "topo-h200-vm-1gpu-ansi-device.txt"}

    box = make_box("pcie-l40s", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    assert report["host"]["disagreements"] == [] and len(report["gpus"]) == 1


def test_every_format_renders_a_probed_box(tmp_path, monkeypatch, capsys) -> None:
    box = make_box("nvlink-down", tmp_path, monkeypatch)
    for fmt in ("console", "markdown", "html", "junit"):
        code, out, _ = run(
            capsys, "audit", "--format", fmt, "-v", "--sysfs-root", str(box.root), "--smi-timeout", "0.5"
        )
        assert code == 1 and "nvlink-link-down" in out, fmt


def test_analyzing_a_snapshot_imports_neither_pynvml_nor_torch() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from topoaudit.readers import load_path\n"
        "from topoaudit.pipeline import analyze\n"
        f"l = load_path({str(REAL / 'snapshot-h200-vm-1gpu.json')!r})\n"
        "analyze(l.machine, source=l.source)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'pynvml'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_p2p_unavailable_with_the_fabric_manager_down_names_the_fabric_not_acs(tmp_path, monkeypatch, capsys) -> None:
    """On an NVSwitch box whose fabric manager is not running, GPUs cannot reach each other: the remedy is the
    fabric manager, and neither ACS nor the IOMMU is offered as the cause or the cure."""

    def tweak(sc: Scenario) -> None:
        sc.p2p_overrides[(0, 1)] = sc.p2p_overrides[(1, 0)] = {"read": "NOT_SUPPORTED", "write": "NOT_SUPPORTED"}

    box = make_box("fm-not-started", tmp_path, monkeypatch, tweak)
    _, report, _ = audit(capsys, box.root)
    assert "fabric-not-ready" in codes(report)
    f = finding(report, "p2p-unavailable")
    assert f["evidence"]["likely_cause"].startswith("the fabric manager is not running")
    assert f["remedy"].startswith("Start the fabric manager that matches the driver")
    assert "ACS" not in f["message"] and "Disable ACS" not in f["remedy"] and "iommu=pt" not in f["remedy"]
    assert all(p["remedy"] == f["remedy"] for p in f["evidence"]["pairs"])
    assert [c["action"] for c in f["remedy_commands"]] == ["service-start", "service-enable"]
