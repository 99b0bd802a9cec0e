"""Pasted NHC, DCGM and kernel lines: a failed check names the check and the GPU, an Xid line is a kernel GPU error
with what it means, and a line the catalog names more precisely is left to that code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runner import Run

REAL = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"  # the corpus's dev part


def judged(run: Run, path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run("analyze", str(path), "--format", "json", *args)
    assert code in (0, 1), err
    return code, json.loads(out)


def codes(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for f in report["findings"]:
        assert f["code"] not in found, f"{f['code']} said twice"
        found[f["code"]] = f
    return found


def test_a_failed_nhc_check_names_the_check_and_the_gpu(run: Run, tmp_path: Path) -> None:
    paste = tmp_path / "nhc.txt"
    paste.write_text(
        "ERROR:  nhc:  Health check failed:  check_ecc: GPU id 4: Row remap pending. FaultCode: NHC2007\n"
        "SUCCESS: nhc: Health check passed: check_hw_ib\n"
    )
    code, report = judged(run, paste)
    found = codes(report)
    assert code == 1 and "health-check-failed" not in found  # ECC is the catalog's: a GPU hardware error
    assert found["gpu-hardware-error"]["severity"] == "fail"
    paste.write_text("ERROR:  nhc:  Health check failed:  check_hw_eth: No Ethernet device eth1 found\n")
    code, report = judged(run, paste)
    check = codes(report)["health-check-failed"]
    assert code == 1 and check["severity"] == "fail"
    assert check["message"].startswith("1 health check(s) failed: NHC check_hw_eth on a GPU the line does not name")
    assert check["evidence"]["checks"][0]["line"] == 1


def test_a_failed_nhc_check_of_the_host_itself_is_said_and_judges_nothing(run: Run, tmp_path: Path) -> None:
    """Azure/azurehpc-health-checks#14: NDv4's RAM size checked on an NDv5 (check_hw_physmem), before a FAIL. The
    host's memory, CPUs or file systems are not its GPUs or their links: said at info, and not judged."""
    paste = tmp_path / "nhc.txt"
    paste.write_text(
        "ERROR:  nhc:  Health check failed:  check_hw_physmem:  Actual RAM size (1961032660 kB) greater than maximum"
        " allowed (928858388 kB).\n"
    )
    code, report = judged(run, paste)
    check = codes(report)["health-check-failed"]
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert check["severity"] == "info" and "not of its GPUs or their links" in check["message"]


def test_an_xid_line_is_a_kernel_gpu_error_with_its_meaning_said_once(run: Run) -> None:
    """A GPU fallen off the bus, its bus id on the first of the driver's three lines (NVIDIA/NVSentinel#155):
    before, refused."""
    code, report = judged(run, REAL / "nvsentinel-155-fallen-off-bus-no-xid.txt")
    found = codes(report)["kernel-gpu-error"]
    assert code == 1 and found["severity"] == "fail"
    assert "0000:b3:00.0: fallen-off-bus (The GPU disappeared from PCIe" in found["message"]
    assert "signatures" not in found["evidence"]  # the health rule's, not the catalog's second copy


def test_an_uncorrectable_pcie_error_the_kernel_could_not_recover_fails(run: Run, tmp_path: Path) -> None:
    """A GPU's root port logging a fatal AER error and failing recovery (rwth-i6/returnn#1500: the job hung, "just a
    hardware issue"): before, not judged. A non-fatal one alone warns."""
    code, report = judged(run, REAL / "returnn-1500-pcie-aer-fatal-gpu-hang.txt")
    found = codes(report)["pcie-bus-error"]
    assert code == 1 and found["severity"] == "fail"
    paste = tmp_path / "aer.txt"
    paste.write_text(
        "pcieport 0000:00:01.1: AER: Uncorrectable (Non-Fatal) error message received from 0000:01:00.0\n"
        "nvidia 0000:01:00.0: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, "
        "(Requester ID)\n"
    )
    code, report = judged(run, paste)
    assert code == 0 and codes(report)["pcie-bus-error"]["severity"] == "warn"


def test_blackwell_nvlink_xids_warn_when_the_driver_says_nonfatal(run: Run) -> None:
    code, report = judged(run, REAL / "nccl-2241-b200-xid145-137.txt")
    found = codes(report)["kernel-gpu-error"]
    assert code == 0 and found["severity"] == "warn" and "xid-145" in found["message"]


def test_a_dcgm_nvlink_failure_on_a_card_without_a_bridge_is_not_a_failure(run: Run) -> None:
    """DCGM's NVLink check fails on an A100 PCIe with no bridge fitted (NVIDIA/NVSentinel#1481): a warning that
    says why, and on a card with no NVLink at all only information."""
    paste = REAL / "nvsentinel-1481-dcgm-nvlink-down-pcie.txt"
    code, report = judged(run, paste, "--gpu-model", "A100 80GB PCIe")
    check = codes(report)["health-check-failed"]
    assert code == 0 and check["severity"] == "warn" and "only through a bridge" in check["message"]
    assert "DCGM NVLINK system on GPU 0" in check["message"]
    code, report = judged(run, paste, "--gpu-model", "L40S")
    assert code == 0 and report["verdict"] == "pass" and codes(report)["health-check-failed"]["severity"] == "info"
    code, report = judged(run, paste, "--gpu-model", "H100 80GB HBM3")
    assert code == 1 and codes(report)["health-check-failed"]["severity"] == "fail"


def test_a_line_the_catalog_names_precisely_is_left_to_that_code(run: Run) -> None:
    """An IOMMU page fault blocks peer access (pytorch/pytorch#13045); NHC's GPU bandwidth check on a VM size
    whose GPUs are not NVLink peers (Azure/azurehpc-health-checks#162) is a slow pair, by design a warning."""
    code, report = judged(run, REAL / "pytorch-13045-amdvi-io-page-fault-dp.txt")
    assert code == 1 and set(codes(report)) == {"p2p-unavailable"}
    code, report = judged(run, REAL / "azhc-162-ncv5-gpu-bw-by-design.txt", "--gpu-model", "H100 PCIe")
    assert code == 0 and "health-check-failed" not in codes(report)
    assert codes(report)["nvbandwidth-pair-low"]["severity"] == "warn"


def causes_named(run: Run, paste: Path, text: str, code: str) -> tuple[int, list[str]]:
    """The exit code of analyzing ``text``, and the classes of cause the finding ``code`` names."""
    paste.write_text(text)
    exit_code, report = judged(run, paste)
    return exit_code, codes(report)[code]["evidence"]["causes"]


def test_a_kernel_error_names_the_class_of_cause_its_lines_show(run: Run, tmp_path: Path) -> None:
    """An Xid 74 or a failed NVLink training is a link that is down, though the code is the kernel log's."""
    for line in (
        "[ 812.1] NVRM: Xid (PCI:0000:18:00): 74, pid=1234, name=python, NVLink: fatal error detected\n",
        "kernel: NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!\n",
    ):
        assert causes_named(run, tmp_path / "dmesg.txt", line, "kernel-gpu-error") == (1, ["nvlink-down"])


def test_passes_of_checks_that_say_nothing_about_the_links_judge_nothing(run: Run, tmp_path: Path) -> None:
    """Azure NHC's passes with their messages lost (azurehpc-health-checks#139) and an ECC pass: the interconnect
    was not shown, so the paste is not judged; an NVLink check's pass is judged."""
    paste = tmp_path / "nhc.txt"
    lines = ["SUCCESS:  nhc:  Health check passed:  check_gpu_ecc: ECC checks passed"]
    paste.write_text("\n".join(lines + ["SUCCESS:  nhc:  Health check passed:  "] * 4) + "\n")
    code, report = judged(run, paste)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    paste.write_text(
        "\n".join(lines + ["SUCCESS:  nhc:  Health check passed:  check_nvlink_status: GPU 0 has all nvlinks active."])
    )
    code, report = judged(run, paste)
    assert code == 0 and report["gate"]["verdict"] == "pass"
    assert any("1 health line" in j for j in report["gate"]["judged"])


NODE = """\
Capacity:
  cpu:                        128
  memory:                     2113276288Ki
  nvidia.com/gpu:             8
  pods:                       110
Allocatable:
  cpu:                        128
  memory:                     2062682496Ki
  nvidia.com/gpu:             {allocatable}
  pods:                       110
Allocated resources:
  Resource           Requests  Limits
  nvidia.com/gpu     0         0
"""


def test_a_kubernetes_node_offering_fewer_gpus_than_it_has_warns(run: Run, tmp_path: Path) -> None:
    """`kubectl describe node` with 7 of 8 GPUs allocatable: the device plugin withholds one it found unhealthy."""
    paste = tmp_path / "node.txt"
    paste.write_text(NODE.format(allocatable=7))
    code, report = judged(run, paste)
    check = codes(report)["health-check-failed"]
    assert code == 0 and report["verdict"] == "warn" and check["severity"] == "warn"
    assert "capacity 8, allocatable 7" in check["message"] and "withholds 1 of the node's 8 GPUs" in check["message"]
    assert check["evidence"]["checks"] == [{"line": 9, "source": "kubernetes", "check": "gpu-allocatable",
                                            "gpu": "the node"}]  # fmt: skip
    assert check["evidence"]["causes"] == ["xid"]
    paste.write_text(NODE.format(allocatable=8))  # every GPU offered: nothing withheld, and nothing else to judge
    code, report = judged(run, paste)
    assert code == 0 and "health-check-failed" not in codes(report) and report["verdict"] == "not judged"


def test_the_catalog_and_the_rule_agree_on_which_nhc_checks_are_the_host_s() -> None:
    """The host-only checks are listed twice (the health model's pattern, the catalog's entry): the line a user
    pastes must be told the same by both, or one of them would fail what the other says judges nothing."""
    from topoaudit.model.health import HOST_ONLY_CHECKS
    from topoaudit.parse.signatures import match_text

    for check in ("check_hw_physmem", "check_hw_swap_free", "check_fs_mount", "check_ps_service", "check_hw_ib",
                  "check_gpu_bw", "check_nvlink_status", "check_hw_eth"):  # fmt: skip
        line = f"ERROR:  nhc:  Health check failed:  {check}:  something is off"
        said = {hit.signature for hit in match_text(line)}
        host_only = bool(HOST_ONLY_CHECKS.fullmatch(check))
        assert ("nhc-host-check-failed" in said) == host_only, check
        assert not (host_only and "nhc-check-failed" in said), check


def test_a_site_s_own_xid_check_failing_names_the_xid_class(run: Run, tmp_path: Path) -> None:
    """NHC's own line for a site's check that returned non-zero ("Check check_xid_errors returned 1") is a failed
    check whose cause is a GPU's Xid, as Azure's check_gpu_xid is; a check of something else names no class."""
    failed = "ERROR:  nhc:  Health check failed:  Check {} returned 1\n"
    paste = tmp_path / "nhc.txt"
    assert causes_named(run, paste, failed.format("check_xid_errors"), "health-check-failed") == (1, ["xid"])
    assert causes_named(run, paste, failed.format("check_ib_ports"), "health-check-failed") == (1, [])
