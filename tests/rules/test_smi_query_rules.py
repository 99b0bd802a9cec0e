"""A pasted ``nvidia-smi -q`` (whole, or grep's pieces of its Fabric block) is judged for the NVLink fabric: a GPU
not registered is fabric-not-ready with the platform's remedy, an unhealthy fabric is fabric-unhealthy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runner import Run

REAL = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"  # the corpus's dev part


def fabric(state: str, status: str, summary: str = "Healthy", bandwidth: str = "Full") -> str:
    return (
        "    Fabric\n"
        f"        State                             : {state}\n"
        f"        Status                            : {status}\n"
        "        CliqueId                          : 1\n"
        "        ClusterUUID                       : 3f1c9a0d-5e7b-4a68-9d2c-1b7e4f0a6c35\n"
        "        Health\n"
        f"            Summary                       : {summary}\n"
        f"            Bandwidth                     : {bandwidth}\n"
    )


def judged(run: Run, path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run("analyze", str(path), "--format", "json", *args)
    assert code in (0, 1), err
    return code, json.loads(out)


def codes(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["code"]: f for f in report["findings"]}


def test_a_grep_of_fabric_blocks_in_progress_is_not_ready_with_the_fabric_manager_commands(run: Run) -> None:
    """``nvidia-smi -q | grep -A2 Fabric`` pieces, no GPU header (the fabric manager guide's example): before,
    refused with "capture it with nvidia-smi topo -m"."""
    code, report = judged(run, REAL / "do-fm-doc-fabric-in-progress-grep.txt")
    found = codes(report)["fabric-not-ready"]
    assert code == 1 and found["severity"] == "fail"
    assert (
        found["message"].startswith("3 of 3 GPU(s) the paste shows are not registered")
        and "In Progress" in (found["message"])
    )
    assert [c["action"] for c in found["remedy_commands"]] == ["service-start", "service-enable"]
    assert report["source"]["parts"][0]["read_by"] == "nvidia-smi-q"


def test_on_blackwell_the_remedy_starts_the_nvlink_subnet_manager_first(run: Run, tmp_path: Path) -> None:
    paste = tmp_path / "q.txt"
    paste.write_text(fabric("Not Started", "N/A"))
    _, report = judged(run, paste, "--gpu-model", "B200")
    actions = [c["action"] for c in codes(report)["fabric-not-ready"]["remedy_commands"]]
    assert actions[:3] == ["package-check", "module-load", "module-load-at-boot"]


def test_a_completed_registration_with_an_error_status_is_not_ready(run: Run) -> None:
    """Azure's ND GB200 image, ``Status : Insufficient Resources``: one finding, not a second for the same line."""
    code, report = judged(run, REAL / "azimg-506-fabric-insufficient-resources.txt")
    assert code == 1 and [f["code"] for f in report["findings"]] == ["fabric-not-ready"]
    assert "status Insufficient Resources" in report["findings"][0]["message"]


def test_an_unhealthy_summary_fails_and_limited_capacity_warns(run: Run, tmp_path: Path) -> None:
    code, report = judged(run, REAL / "dra-626-fabric-summary-unhealthy.txt")
    found = codes(report)["fabric-unhealthy"]
    assert code == 1 and found["severity"] == "fail" and "summary Unhealthy" in found["message"]
    paste = tmp_path / "q.txt"
    paste.write_text(fabric("Completed", "Success", summary="Limited Capacity"))
    code, report = judged(run, paste)
    assert code == 0 and codes(report)["fabric-unhealthy"]["severity"] == "warn"
    paste.write_text(fabric("Completed", "Success", bandwidth="Degraded"))
    code, report = judged(run, paste)
    assert code == 1 and "bandwidth Degraded" in codes(report)["fabric-unhealthy"]["message"]


def test_a_registered_healthy_fabric_passes(run: Run, tmp_path: Path) -> None:
    paste = tmp_path / "q.txt"
    paste.write_text(
        "GPU 00000000:18:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n"
        + fabric("Completed", "Success")
    )
    code, report = judged(run, paste)
    assert code == 0 and not {"fabric-not-ready", "fabric-unhealthy"} & set(codes(report))


def test_a_gpu_built_without_nvswitches_is_not_judged_for_a_fabric(run: Run, tmp_path: Path) -> None:
    paste = tmp_path / "q.txt"
    paste.write_text(fabric("In Progress", "N/A"))
    code, report = judged(run, paste, "--gpu-model", "L40S")
    assert code == 0 and "fabric-not-ready" not in codes(report)


def gpu_link_info(bus: str, gen: int, gen_max: int, width: int, width_max: int) -> str:
    return (
        f"GPU 00000000:{bus}:00.0\n"
        "    Product Name                          : NVIDIA L40S\n"
        "    PCI\n"
        f"        Bus                               : 0x{bus}\n"
        "        GPU Link Info\n"
        "            PCIe Generation\n"
        f"                Max                       : {gen_max}\n"
        f"                Current                   : {gen}\n"
        "            Link Width\n"
        f"                Max                       : {width_max}x\n"
        f"                Current                   : {width}x\n"
    )


def test_a_narrow_pcie_link_warns_and_an_idle_lower_generation_does_not(run: Run, tmp_path: Path) -> None:
    """Before: PASS on a GPU running x4 of x16. Width does not drop to save power; generation does."""
    header = "==============NVSMI LOG==============\n\nAttached GPUs                             : 2\n"
    paste = tmp_path / "smi.txt"
    paste.write_text(header + gpu_link_info("41", 4, 4, 4, 16) + gpu_link_info("81", 1, 4, 16, 16), encoding="utf-8")
    code, report = judged(run, paste)
    link = codes(report)["pcie-link-degraded"]
    assert code == 0 and report["verdict"] == "warn" and link["severity"] == "warn"
    assert link["evidence"]["narrow"] == ["0000:41:00.0 x4 of x16"]
    assert link["evidence"]["slower_generation"] == ["0000:81:00.0 Gen1 of Gen4"]
    paste.write_text(header + gpu_link_info("81", 1, 4, 16, 16), encoding="utf-8")
    code, report = judged(run, paste)
    assert code == 0 and report["verdict"] == "pass" and codes(report)["pcie-link-degraded"]["severity"] == "info"


H200_Q = Path(__file__).parents[1] / "fixtures" / "h200-device" / "nvidiasmi_q.txt"  # a real H200's nvidia-smi -q


def test_a_pending_row_remap_warns_and_a_failed_one_fails(run: Run, tmp_path: Path) -> None:
    """A remap of rows with uncorrectable ECC errors takes effect at the next reset (gpud's PR 80 pasted the block:
    "this GPU requires a reset"); a failed remap means the GPU is to be replaced. The real H200's block (no row
    remapped, nothing pending) is healthy."""
    _, healthy = judged(run, H200_Q)
    assert "gpu-hardware-error" not in codes(healthy)
    text = H200_Q.read_text()
    pending = tmp_path / "pending.txt"
    pending.write_text(
        text.replace(
            "Uncorrectable Error                            : 0",
            "Uncorrectable Error                            : 2",
            1,
        ).replace(
            "Pending                                        : No",
            "Pending                                        : Yes",
            1,
        )
    )
    code, report = judged(run, pending)
    found = codes(report)["gpu-hardware-error"]
    assert code == 0 and found["severity"] == "warn" and report["verdict"] == "warn"
    assert "00000000:" in found["message"] or "0000:" in found["message"]
    assert "2 row(s) with uncorrectable errors" in found["message"] and "next GPU reset" in found["message"]
    failed = tmp_path / "failed.txt"
    failed.write_text(
        text.replace(
            "Remapping Failure Occurred                     : No",
            "Remapping Failure Occurred                     : Yes",
        )
    )
    code, report = judged(run, failed)
    assert code == 1 and codes(report)["gpu-hardware-error"]["severity"] == "fail"
    _, grepped = judged(run, REAL / "gpud-pr80-remapped-rows-pending-smi-q.txt")  # the block alone, as pasted
    assert codes(grepped)["gpu-hardware-error"]["severity"] == "warn"
