"""Health checkers' and the kernel's failure lines become events naming the check or Xid, the GPU and its links."""

from __future__ import annotations

from pathlib import Path

from topoaudit.model.finding import Severity
from topoaudit.model.values import Failed, Unsupported
from topoaudit.parse.health_lines import WATCHED_XIDS, kernel_events, read_health_lines, xid_meaning
from topoaudit.parse.signatures import catalog
from topoaudit.probe import kernel_log

PASTES = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"

# The kernel log the probe tests feed the fake box (tests/probe/test_host_checks.py).
XID_LOG = """\
[  812.113402] NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[  812.113433] NVRM: GPU 0000:2a:00.0: GPU has fallen off the bus.
[  903.000001] NVRM: Xid (PCI:0000:9a:00): 145, pid=2211, name=python, NVLink: link 4 fatal error
[  903.500001] NVRM: Xid (PCI:0000:ab:00): 13, pid=2211, name=python, Graphics Exception
[ 1000.000002] NVRM: nvlink: GPU 0000:ba:00.0 link 7: training failed at post RX detect
"""


def _summary(text: str) -> list[tuple[int, str, str, object, object]]:
    return [(e.line, e.check, e.severity.value, e.gpu, e.pci_bus_id) for e in read_health_lines(text)]


def test_kernel_lines_name_the_xid_the_gpu_and_what_it_means() -> None:
    events = read_health_lines(XID_LOG)
    assert [(e.line, e.check, e.severity, e.pci_bus_id, e.xid) for e in events] == [
        (1, "xid-79", Severity.FAIL, "0000:2a:00.0", 79),
        (2, "fallen-off-bus", Severity.FAIL, "0000:2a:00.0", Unsupported("health lines", "not an Xid line")),
        (3, "xid-145", Severity.FAIL, "0000:9a:00.0", 145),
        (4, "xid-13", Severity.WARN, "0000:ab:00.0", 13),
        (5, "nvlink-training-failed", Severity.FAIL, "0000:ba:00.0", Unsupported("health lines", "not an Xid line")),
    ]
    assert events[0].meaning == catalog().get("xid-79").meaning
    assert events[2].links == (4,)
    assert events[4].links == (7,)


def test_an_xid_meaning_comes_from_the_signature_catalog() -> None:
    assert xid_meaning(79) == catalog().get("xid-79").meaning
    assert xid_meaning(147) == catalog().get("xid-144-150-fatal").meaning
    assert xid_meaning(13) == catalog().get("xid").meaning  # an application error: the generic sentence


def test_the_probe_still_watches_the_xids_it_watched() -> None:
    events = kernel_log.signatures(XID_LOG)
    assert kernel_log.signatures is kernel_events
    assert [(e.signature, e.pci_bus_id) for e in events] == [
        ("xid-79", "0000:2a:00.0"),
        ("fallen-off-bus", "0000:2a:00.0"),
        ("xid-145", "0000:9a:00.0"),
        ("nvlink-training-failed", "0000:ba:00.0"),
    ]
    assert frozenset({74, 79, 144, 145, 146, 147, 148, 149, 150}) == WATCHED_XIDS
    bad = kernel_events("NVRM: Xid (PCI:zz:9a:00): 79, GPU has fallen off the bus.")
    assert bad == ()  # not a bus id the pattern reads: the line is not taken


def test_a_blackwell_nvlink_xid_with_an_elided_bus_id_is_read() -> None:
    events = read_health_lines((PASTES / "nccl-2241-b200-xid145-137.txt").read_text())
    assert [(e.line, e.check, e.severity, e.links) for e in events] == [
        (2, "xid-145", Severity.WARN, (11,)),  # Nonfatal: the link logs errors, traffic continues
        (3, "xid-137", Severity.WARN, (11,)),
    ]
    assert events[0].pci_bus_id == Unsupported("health lines", "the line names no PCI bus id")


def test_fallen_off_the_bus_takes_its_bus_id_from_the_first_line_of_the_drivers_message() -> None:
    events = read_health_lines((PASTES / "nvsentinel-155-fallen-off-bus-no-xid.txt").read_text())
    assert [(e.line, e.check, e.pci_bus_id) for e in events] == [
        (3, "fallen-off-bus", "0000:b3:00.0"),
        (4, "probe-failed", Unsupported("health lines", "the line names no PCI bus id")),
    ]


def test_driver_init_failures_and_iommu_faults_name_their_gpu() -> None:
    init = read_health_lines((PASTES / "illinois-76-titanv-rminitadapter-failed.txt").read_text())
    assert {(e.check, e.pci_bus_id, e.severity) for e in init} == {("rm-init-failed", "0000:81:00.0", Severity.FAIL)}
    iommu = read_health_lines((PASTES / "pytorch-13045-amdvi-io-page-fault-dp.txt").read_text())
    assert {(e.check, e.pci_bus_id) for e in iommu} == {("iommu-fault", "0000:0a:00.0")}
    dmar = read_health_lines(
        "DMAR: [DMA Write NO_PASID] Request device [c1:00.0] fault addr 0xf8000000 [fault reason 0x05]"
    )
    assert [(e.check, e.pci_bus_id) for e in dmar] == [("iommu-fault", "0000:c1:00.0")]


def test_an_nvswitch_sxid_is_a_failure_only_when_fatal() -> None:
    text = (
        "nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 44 egress non-posted PRIV error\n"
        "nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 20034, Fatal, Link 12 LTSSM Fault Up\n"
    )
    assert [(e.check, e.severity, e.links) for e in read_health_lines(text)] == [
        ("sxid-12028", Severity.WARN, (44,)),
        ("sxid-20034", Severity.FAIL, (12,)),
    ]


def test_nhc_failures_name_the_check_the_gpu_and_the_inactive_links() -> None:
    text = "\n".join(
        [
            "ERROR:  nhc:  Health check failed:  check_nvlink_status: GPU 2 has nvlinks inactive: \t Link 4: Inactive",
            "    Link 5: Inactive",
            "mynode-066 | ERROR: nhc: Health check failed: check_gpu_xid: GPU Xid errors detected: [ 3606.832215] "
            "NVRM: Xid (PCI:0002:00:00): 119, pid=67769, name=nvidia-smi, Timeout after 6s of waiting for RPC",
            "WARNING:  nhc:  Nearing a failure threshold:  check_gpu_bw: P2P test on GPU 2 to GPU 5 has a bandwidth of "
            "354.02 GB/s. Expected threshold 350 GB/s.",
            "SUCCESS:  nhc:  Health check passed:  check_nvlink_status: GPU 0 has all nvlinks active.",
            "ERROR:  nhc:  Health check failed:  check_fs_mount:  /mnt/resource not mounted",
        ]
    )
    events = read_health_lines(text)
    assert [(e.source, e.check, e.severity, e.gpu, e.links) for e in events] == [
        ("nhc", "check_nvlink_status", Severity.FAIL, 2, (4, 5)),
        ("kernel", "xid-119", Severity.FAIL, Unsupported("health lines", "the line names no GPU index"), ()),
        ("nhc", "check_gpu_bw", Severity.WARN, 2, ()),
        ("nhc", "check_nvlink_status", Severity.INFO, 0, ()),
        ("nhc", "check_fs_mount", Severity.FAIL, Unsupported("health lines", "the line names no GPU index"), ()),
    ]
    assert events[1].pci_bus_id == "0002:00:00.0" and events[1].xid == 119


def test_nhc_log_line_for_a_failed_check_is_read_as_its_error_line() -> None:
    # NHC's log (or `nhc -l -`) names the failed check before its ERROR line; a paste may keep only the log line
    events = read_health_lines(
        "Found XID errors: 63\nNode Health Check failed.  Check check_xid_errors returned 1\n"
        "Node Health Check failed.  Check check_fs_mount returned 1\n"
    )
    assert [(e.line, e.check, e.severity, e.cause) for e in events] == [
        (2, "check_xid_errors", Severity.FAIL, "xid"),
        (3, "check_fs_mount", Severity.FAIL, ""),
    ]


def test_an_nhc_bandwidth_failure_names_the_first_gpu_of_the_pair() -> None:
    events = read_health_lines((PASTES / "azhc-162-ncv5-gpu-bw-by-design.txt").read_text())
    assert [(e.line, e.check, e.severity, e.gpu) for e in events] == [
        (1, "check_gpu_bw", Severity.FAIL, 1),
        (3, "check_gpu_bw", Severity.FAIL, 0),
    ]
    assert events[0].text.startswith("P2P test on GPU 1 to GPU 0 failed. Bandwidth 256.63 is less than 335.")


def test_a_dcgmi_health_table_names_the_subsystem_its_gpu_and_the_links_down() -> None:
    events = read_health_lines((PASTES / "nvsentinel-1481-dcgm-nvlink-down-pcie.txt").read_text())
    assert len(events) == 1
    (e,) = events
    assert (e.line, e.source, e.check, e.severity, e.gpu, e.links) == (
        3,
        "dcgm",
        "NVLINK system",
        Severity.FAIL,
        0,
        (0, 1),
    )
    assert "GPU 0's NvLink link 1 is currently down" in e.text


def test_a_dcgmi_diag_table_attaches_its_warning_rows_to_the_failing_test() -> None:
    text = """\
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
| NVML Library              | Pass                                           |
| PCIe                      | Fail - All                                     |
| Warning                   | GPU 2 has a PCIe link width of 8, expected 16  |
| NVLink                    | Skip - All                                     |
"""
    events = read_health_lines(text)
    assert [(e.check, e.severity, e.gpu) for e in events] == [("PCIe", Severity.FAIL, 2)]
    assert "PCIe link width of 8" in events[0].text


def test_a_dcgm_failure_reason_names_its_gpu_and_bus() -> None:
    events = read_health_lines((PASTES / "aicr-2641-gb300-imex-not-ready-idle.txt").read_text())
    assert [(e.check, e.gpu, e.pci_bus_id, e.severity) for e in events] == [
        ("DCGM_FR_IMEX_UNHEALTHY", 0, "0000:9d:00.0", Severity.WARN)
    ]


def test_a_damaged_bus_id_is_failed_with_its_text() -> None:
    (e,) = read_health_lines("nvidia-nvswitch0: SXid (PCI:12:zz): 12028, Non-fatal, Link 1 error")
    assert e.pci_bus_id == Failed("health lines", "not a PCI bus id: '12:zz'")


def test_lines_of_other_tools_are_not_events() -> None:
    text = (PASTES / "nccl-1676-dgx-gdr-disabled-lines.txt").read_text()
    assert read_health_lines(text) == ()
    assert read_health_lines("| GPU  Name                 Persistence-M | Bus-Id          Disp.A |") == ()


def test_an_xid_45_is_judged_by_the_earlier_xid_it_names() -> None:
    """Before: warn (the generic Xid). Xid 45 tears a channel down after an earlier error; the NVLink Xid 149 it
    names (NVIDIA/open-gpu-kernel-modules#1150) is the cause, and fatal."""
    text = (
        "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149\n"
        "kernel: NVRM: Xid (PCI:0000:ab:00): 45, pid=2211, name=python, Ch 00000002 caused by previous Xid 13\n"
        "kernel: NVRM: Xid (PCI:0000:ab:00): 45, pid=2211, name=python, Ch 00000002\n"
    )
    events = read_health_lines(text)
    assert [(e.check, e.severity) for e in events] == [
        ("xid-45", Severity.FAIL),
        ("xid-45", Severity.WARN),
        ("xid-45", Severity.WARN),
    ]
    assert events[0].meaning == catalog().get("xid-144-150-fatal").meaning
