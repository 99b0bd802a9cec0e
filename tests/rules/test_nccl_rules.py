"""NCCL's view judged: each nccl-* code on the log that shows it, with its evidence lines quoted, and silent
on the logs that do not (every real ncclinfo log included)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from parse.dev_pastes import dev_paste

from topoaudit.model.finding import Finding, Severity
from topoaudit.model.report import AuditOptions, Report
from topoaudit.pipeline import analyze
from topoaudit.readers import load_text

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl"


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def judged(capture: str, gpu_model: str | None = None) -> Report:
    loaded = load_text(capture, "capture")
    options = AuditOptions(gpu_model=gpu_model) if gpu_model else AuditOptions()
    return analyze(loaded.machine, source=loaded.source, options=options, input_issues=loaded.issues, nccl=loaded.nccl)


def nccl_findings(report: Report) -> dict[str, Finding]:
    return {f.code: f for f in report.findings if f.code.startswith("nccl-")}


def log(*lines: str, version: str = "2.19.3") -> str:
    return f"NCCL version {version}+cuda12.3\n" + "".join(f"box:1:2 [0] NCCL INFO {line}\n" for line in lines)


REAL_LOGS = sorted(p.name for p in FIXTURES.glob("ncclinfo-*.txt"))


@pytest.mark.parametrize("name", REAL_LOGS)
def test_real_logs_show_no_nccl_fault(name: str) -> None:
    """The public logs are of working runs (their faults are elsewhere: a slow plugin, a RoCE port in the list).

    A tuning variable they set is said (info), never a fault.
    """
    found = nccl_findings(judged(text(name)))
    assert {code: f for code, f in found.items() if f.severity != Severity.INFO} == {}


def test_shm_between_nvlink_peers_fails_with_the_line_quoted() -> None:
    capture = text("topo-h100-8gpu-stas-ht-1.txt") + log(
        "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct",
        "Channel 00/0 : 1[1] -> 2[2] via P2P/CUMEM",
    )
    report = judged(capture)
    found = nccl_findings(report)["nccl-transport-below-topology"]
    assert found.severity == Severity.FAIL and report.gate.exit_code == 1
    assert found.evidence["pairs"] == [
        {"ranks": [0, 1], "transports": ["SHM/direct/direct"], "gpus": [0, 1], "link": "NV18", "host": "box"}
    ]
    assert found.message == (
        "NCCL avoids NVLink between 1 rank pair(s) whose GPUs are NVLink peers: "
        "rank 0 (GPU0) - rank 1 (GPU1) via SHM/direct/direct (NV18)."
    )
    offset = len(text("topo-h100-8gpu-stas-ht-1.txt").splitlines())
    assert found.evidence["log_lines"] == [
        f"line {offset + 2}: box:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct"
    ]
    assert "NCCL_P2P_DISABLE" in found.remedy


def test_shm_between_pcie_switch_peers_warns_and_across_sockets_is_expected() -> None:
    pix = judged(
        text("topo-4x2080ti-pix-one-switch-lmdeploy-1.txt") + log("Channel 00 : 2[2] -> 3[3] via SHM/direct/direct")
    )
    found = nccl_findings(pix)["nccl-transport-below-topology"]
    assert found.severity == Severity.WARN and found.evidence["pairs"][0]["link"] == "PIX"
    sys_only = judged(text("topo-8x4090-pcie-sys-nics-1.txt") + log("Channel 00 : 3[3] -> 4[4] via SHM/direct/direct"))
    assert nccl_findings(sys_only) == {}


def test_peer_access_between_nvlink_peers_is_not_a_finding() -> None:
    report = judged(text("topo-h100-8gpu-stas-ht-1.txt") + log("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"))
    assert nccl_findings(report) == {}


def test_network_between_ranks_of_one_host_warns_without_a_topology() -> None:
    capture = (
        log(
            "comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
            "Channel 00/0 : 1[1] -> 0[0] [receive] via NET/IB/0/GDRDMA",
        )
        + "box:1:3 [1] NCCL INFO comm 0x2 rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 MNNVL 0\n"
    )
    found = nccl_findings(judged(capture))["nccl-transport-below-topology"]
    assert found.severity == Severity.WARN and found.evidence["pairs"] == [
        {"ranks": [0, 1], "transports": ["NET/IB/0/GDRDMA"], "host": "box"}
    ]
    assert found.evidence["log_lines"][0].startswith("line 3: ")


def test_p2p_disabled_between_connected_gpus_warns() -> None:
    found = nccl_findings(judged(text("constructed-2.17-channel-conn-busid-pcie.txt")))["nccl-p2p-disabled"]
    assert found.severity == Severity.WARN and found.evidence["gpu_pairs"] == [[0, 1]]
    assert found.evidence["log_lines"][0].startswith("line 4: pcie-box:900:950 [0] NCCL INFO P2P is disabled")


def test_p2p_disabled_between_nvlink_connected_gpus_fails() -> None:
    report = judged(text("constructed-2.30.7-shm-direct-warn-function.txt"))
    found = nccl_findings(report)["nccl-p2p-disabled"]
    assert found.severity == Severity.FAIL and report.gate.exit_code == 1
    assert found.evidence["log_lines"][0].startswith("line 7: l40s-box")  # the collector's timestamp taken off


def test_nvls_off_on_an_nvswitch_hopper_box_only() -> None:
    capture = text("constructed-2.19-hgx-h100-cumem-nvls-off.txt")
    found = nccl_findings(judged(capture, gpu_model="H100 80GB HBM3"))["nccl-nvls-off"]
    assert found.severity == Severity.WARN and "NVIDIA H100 SXM5" in found.message
    assert [line.split(":")[0] for line in found.evidence["log_lines"]] == ["line 2", "line 3", "line 9"]
    assert "nccl-nvls-off" not in nccl_findings(judged(capture))  # model unknown: nothing to expect NVLS from
    a100 = text("ncclinfo-a100sxm4-4gpu-init-trees-rings-container-1.txt")
    assert "nccl-nvls-off" not in nccl_findings(judged(a100, gpu_model="NVIDIA A100-SXM4-80GB"))


def test_nvls_on_is_not_a_finding() -> None:
    capture = log(
        "NVLS multicast support is available on dev 0",
        "comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0",
        "24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer",
    )
    assert nccl_findings(judged(capture, gpu_model="H100 80GB HBM3")) == {}


def test_gdr_disabled_between_nodes_per_hca_and_in_the_older_per_gpu_form() -> None:
    found = nccl_findings(judged(text("constructed-2.21-two-nodes-slurm-prefix-gdr-off.txt")))["nccl-gdr-disabled"]
    assert found.evidence["hcas"] == ["0 'mlx5_0'"]
    assert [line.split(":")[0] for line in found.evidence["log_lines"]][:2] == ["line 5", "line 6"]
    legacy = nccl_findings(judged(text("constructed-2.4-ring-busid-shm-net.txt")))["nccl-gdr-disabled"]
    assert legacy.evidence["hcas"] == ["0"]
    single_node = log(
        "comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
        "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
        "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
    )
    assert nccl_findings(judged(single_node)) == {}  # one node: no traffic leaves it


def test_gdr_disabled_per_hca_lines_alone_say_the_nics_cannot_reach_gpu_memory() -> None:
    """Four lines pasted from a DGX after an OS upgrade (NVIDIA/nccl#1676): no multi-node header, no channel."""
    lines = "".join(
        f"learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA {k} 'mlx5_{k}'\n"
        for k in range(4)
    )
    report = judged(lines)
    found = nccl_findings(report)["nccl-gdr-disabled"]
    assert found.severity == Severity.WARN and report.gate.verdict == "warn"
    assert found.evidence["hcas"] == [f"{k} 'mlx5_{k}'" for k in range(4)]
    assert "the NICs cannot read or write GPU memory (no nvidia-peermem or DMA-BUF)" in found.message
    assert [c.command for c in found.remedy_commands] == [
        "modprobe nvidia_peermem",
        "echo nvidia_peermem > /etc/modules-load.d/nvidia-peermem.conf",
    ]
    enabled_too = lines + "learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
    assert nccl_findings(judged(enabled_too))["nccl-gdr-disabled"].evidence["hcas"] == ["1 'mlx5_1'", "2 'mlx5_2'",
                                                                                       "3 'mlx5_3'"]  # fmt: skip


def test_the_socket_transports_gdr_line_is_no_finding_of_its_own() -> None:
    """NCCL prints 'GPU Direct RDMA Disabled' for each socket interface too (huggingface/accelerate#2183): sockets
    never use GPUDirect RDMA, so the line is the socket fallback's, not a NIC that cannot reach GPU memory."""
    lines = (
        "axon:5022:5089 [3] NCCL INFO NET/Socket : Using [0]enp1s0f0:10.144.220.24<0>\n"
        "axon:5022:5089 [3] NCCL INFO Using network Socket\n"
        "axon:5022:5089 [3] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'enp1s0f0'\n"
    )
    assert "nccl-gdr-disabled" not in {f.code for f in judged(lines).findings}
    infiniband = lines.replace("NET/Socket : GPU Direct", "NET/IB : GPU Direct")
    assert "nccl-gdr-disabled" in {f.code for f in judged(infiniband).findings}


def test_known_warn_signatures_fail_with_their_remedies() -> None:
    report = judged(text("constructed-2.26-warn-timestamps-fm-down.txt"))
    found = nccl_findings(report)
    assert set(found) == {"nccl-fabric-manager-down", "nccl-nvls-invalid-argument"}
    assert found["nccl-fabric-manager-down"].evidence["log_lines"] == [
        "line 3: hgx-9:6100:6160 [0] init.cc:412 NCCL WARN Cuda failure 802 'system not yet initialized'"
    ]
    assert "nvidia-fabricmanager" in found["nccl-fabric-manager-down"].remedy
    assert "reboot" in found["nccl-nvls-invalid-argument"].remedy
    assert report.gate.exit_code == 1


def test_an_unrelated_warn_is_not_a_known_signature() -> None:
    assert nccl_findings(judged(text("ncclinfo-hgx-a100-topo-system-tree-print-1.txt"))) == {}


def test_shm_inside_a_catalog_nvswitch_node_warns_without_a_matrix() -> None:
    capture = text("constructed-2.13-channel-busid-shm.txt")
    report = judged(capture, gpu_model="H100 80GB HBM3")
    found = [f for f in report.findings if f.code == "nccl-transport-below-topology"]
    assert len(found) == 1 and found[0].severity == Severity.WARN
    assert [p["ranks"] for p in found[0].evidence["pairs"]] == [[0, 3], [1, 2]]  # the two SHM hops of the ring
    assert found[0].evidence["link"] == "NVSwitch (catalog: H100-SXM)"
    assert [line.split(":")[0] for line in found[0].evidence["log_lines"]] == ["line 6", "line 8"]
    assert "nccl-transport-below-topology" not in nccl_findings(judged(capture, gpu_model="NVIDIA L4"))


def test_nvls_off_beside_an_nv18_matrix_without_a_model() -> None:
    capture = text("topo-h100-8gpu-stas-ht-1.txt") + log(
        "NVLS multicast support is not available on dev 0",
        "comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0",
        "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
    )
    found = nccl_findings(judged(capture))
    assert set(found) == {"nccl-nvls-off"} and "an NVSwitch box" in found["nccl-nvls-off"].message


def test_log_codes_are_every_code_the_rules_emit_and_junit_skips_them_without_a_log() -> None:
    import xml.etree.ElementTree as ET

    from topoaudit.render import RenderOptions, render
    from topoaudit.rules.codes import CODES
    from topoaudit.rules.registry import codes_raised_in

    LOG_CODES = codes_raised_in("topoaudit.rules.nccl_rules")

    assert set(CODES) >= LOG_CODES
    emitted = {
        f.code
        for name in (
            "constructed-2.17-channel-conn-busid-pcie.txt",
            "constructed-2.21-two-nodes-slurm-prefix-gdr-off.txt",
            "constructed-2.26-warn-timestamps-fm-down.txt",
            "constructed-2.19-hgx-h100-cumem-nvls-off.txt",
            "constructed-2.13-channel-busid-shm.txt",
            "constructed-2.19-h100-vm-graph-over-sys.txt",
        )
        for f in judged(text(name), gpu_model="H100 80GB HBM3").findings
        if f.code.startswith("nccl-")
    }
    emitted |= {f.code for f in judged(log("NCCL_P2P_DISABLE set by environment to 1")).findings}
    shm_only = ("Channel 00 : 0[0] -> 1[1] via SHM/direct/direct", "Channel 00 : 1[1] -> 0[0] via SHM/direct/direct")
    emitted |= {f.code for f in judged(log(*shm_only, "Connected all rings")).findings}
    assert {c for c in emitted if c.startswith("nccl-")} == LOG_CODES

    def cases(report: Report) -> dict[str, ET.Element]:
        root = ET.fromstring(render(report, "junit", RenderOptions()))
        return {tc.get("name", ""): tc for tc in root.iter("testcase") if tc.get("name") in LOG_CODES}

    without_log = cases(judged(text("topo-h100-8gpu-stas-ht-1.txt")))
    assert set(without_log) == LOG_CODES
    # a probe judges nccl-env-override as well, and a pasted run its command line and its CUDA error 802
    elsewhere = codes_raised_in("topoaudit.rules.probe_rules") | codes_raised_in("topoaudit.rules.run_rules")
    for code, tc in without_log.items():
        skipped = tc.find("skipped")
        assert skipped is not None and skipped.get("message", ""), code
        assert code in elsewhere or "NCCL_DEBUG=INFO log" in skipped.get("message", ""), code
    with_log = cases(judged(text("constructed-2.17-channel-conn-busid-pcie.txt")))
    assert with_log["nccl-gdr-disabled"].find("skipped") is None
    assert with_log["nccl-p2p-disabled"].find("system-out") is not None  # a warn below --fail-on fail


def test_network_between_gpus_of_one_pasted_host_warns_even_across_sockets() -> None:
    capture = text("topo-8x4090-pcie-sys-nics-1.txt") + log("Channel 00/0 : 3[3] -> 4[4] [send] via NET/Socket/0")
    found = nccl_findings(judged(capture))["nccl-transport-below-topology"]
    assert found.severity == Severity.WARN and found.evidence["pairs"][0]["link"] == "SYS"
    assert "rank 3 (GPU3) - rank 4 (GPU4) via NET/Socket/0 (SYS)" in found.message


def test_a_split_box_is_one_finding_naming_every_pair() -> None:
    hops = [f"Channel 00/0 : {r}[{r}] -> {r + 1}[{r + 1}] via SHM/direct/direct" for r in range(7)]
    report = judged(text("topo-h100-8gpu-stas-ht-1.txt") + log(*hops))
    found = [f for f in report.findings if f.code == "nccl-transport-below-topology"]
    assert len(found) == 1 and len(found[0].evidence["pairs"]) == 7
    assert found[0].message.endswith("; and 1 more.")
    assert found[0].evidence["log_lines"][-1] == "... and 1 more line(s)"


# Two ranks placed on GPU0 and GPU1 by their channel lines, and the graph NCCL searched for them.
PLACED = ("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM", "Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM")


def pattern(intra: str, number: int = 4) -> str:
    return f"Pattern {number}, crossNic 0, nChannels 2, bw 24.000000/24.000000, type {intra}/PIX, sameChannels 1"


def test_a_graph_over_sys_between_nvlink_peers_fails_though_every_transport_says_p2p() -> None:
    """P2P transports hide whether peer access uses NVLink; the graph's path type does not."""
    capture = text("topo-h100-8gpu-stas-ht-1.txt") + log(*PLACED, pattern("SYS"), pattern("PHB", 3))
    report = judged(capture)
    found = nccl_findings(report)
    assert set(found) == {"nccl-graph-below-topology"}  # the transports alone look healthy
    graph = found["nccl-graph-below-topology"]
    assert graph.severity == Severity.FAIL and report.gate.exit_code == 1
    offset = len(text("topo-h100-8gpu-stas-ht-1.txt").splitlines())
    assert graph.message == (
        "NCCL's graphs inside the node leave NVLink although GPUs {0,1} share one NVLink domain (nvswitch): "
        f"ring over SYS (2 channel(s) at 24 GB/s, line {offset + 4}); tree over PHB (2 channel(s) at 24 GB/s, "
        f"line {offset + 5})."
    )
    assert [p["path"] for p in graph.evidence["patterns"]] == ["SYS", "PHB"]
    assert graph.evidence["log_lines"][0].startswith(f"line {offset + 4}: box:1:2 [0] NCCL INFO Pattern 4")


def test_eight_ranks_on_p2p_whose_graph_runs_over_sys_name_the_whole_domain() -> None:
    report = judged(text("constructed-2.19-h100-vm-graph-over-sys.txt"))
    found = nccl_findings(report)
    assert set(found) == {"nccl-graph-below-topology", "nccl-nvls-off"}  # "0 nvls channels" on an NVSwitch box
    assert found["nccl-graph-below-topology"].evidence["gpus"] == list(range(8))
    assert "GPUs {0-7} share one NVLink domain (nvswitch): ring over SYS" in found["nccl-graph-below-topology"].message
    assert "balanced tree over SYS" in found["nccl-graph-below-topology"].message


@pytest.mark.parametrize(
    ("topology", "intra"),
    [
        ("topo-h100-8gpu-stas-ht-1.txt", "NVL"),  # the graph stays on NVLink
        ("topo-h100-8gpu-stas-ht-1.txt", "NVB"),  # NVLink through a GPU in between
        ("topo-8x4090-pcie-sys-nics-1.txt", "SYS"),  # no NVLink: PCIe and the CPU are all the box has
    ],
)
def test_a_graph_on_the_best_path_the_box_has_is_no_finding(topology: str, intra: str) -> None:
    assert "nccl-graph-below-topology" not in nccl_findings(judged(text(topology) + log(*PLACED, pattern(intra))))


def test_without_a_topology_the_graph_is_shown_not_judged() -> None:
    """A log alone names no links: NCCL's SYS graph is in the report's NCCL section, not a finding."""
    report = judged(log(*PLACED, pattern("SYS")))
    assert "nccl-graph-below-topology" not in nccl_findings(report)
    assert [p.intra_path for p in report.nccl.patterns] == ["SYS"]  # type: ignore[union-attr]


@pytest.mark.parametrize(("probed_name", "placed"), [("box", True), ("box.cluster.example", True), ("boxer", False)])
def test_a_probed_fully_qualified_host_name_places_the_log_s_short_one(probed_name: str, placed: bool) -> None:
    """NCCL prints the host name cut at its first dot; a probe keeps it whole. The log's `box` is the probed
    `box.cluster.example` (so its ranks land on the box's GPUs and are judged), never `boxer`."""
    loaded = load_text(text("topo-h100-8gpu-stas-ht-1.txt") + log(*PLACED, pattern("SYS")), "capture")
    machine = dataclasses.replace(loaded.machine, host=dataclasses.replace(loaded.machine.host, hostname=probed_name))
    report = analyze(machine, source=loaded.source, options=AuditOptions(), nccl=loaded.nccl)
    assert ("nccl-graph-below-topology" in nccl_findings(report)) is placed


# --- variables the log shows set --------------------------------------------------------------------------


def test_p2p_off_and_shm_off_in_the_log_warn_and_find_where_they_are_set() -> None:
    """NCCL_P2P_LEVEL=LOC with NCCL_SHM_DISABLE=1: two NVLink-connected GPUs talk through the NICs."""
    report = judged(
        "node1:1234:1234 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\n"
        "node1:1234:1234 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.\n"
        "node1:1234:1234 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
    )
    found = nccl_findings(report)["nccl-env-override"]
    assert found.severity == Severity.WARN and report.gate.verdict == "warn"
    assert found.message.startswith("NCCL's log shows 2 NCCL setting(s) that change the path NCCL takes: ")
    assert "NCCL before 2.23.4 prints NCCL_P2P_DISABLE=1 this way; line 1)" in found.message
    assert found.message.endswith("; also set: NCCL_SOCKET_IFNAME=eth0.")
    assert [(s["name"], s["value"], s["origin"]) for s in found.evidence["settings"]] == [
        ("NCCL_P2P_LEVEL", "LOC", "environment"),
        ("NCCL_SHM_DISABLE", "1", "environment"),
        ("NCCL_SOCKET_IFNAME", "eth0", "environment"),
    ]
    assert [c.action for c in found.remedy_commands] == ["environment-find", "environment-find"]
    assert not any("unset" in c.command for c in found.remedy_commands)
    assert found.remedy_commands[0].command.startswith("grep -rnw -e NCCL_P2P_LEVEL /etc/environment")


@pytest.mark.parametrize(
    ("setting", "classes"),
    [
        ("NCCL_IB_DISABLE set by environment to 1.", ["config-override", "net-fallback"]),
        ("NCCL_NET set by environment to Socket", ["config-override", "net-fallback"]),
        ("NCCL_NET_GDR_LEVEL set by environment to LOC", ["config-override", "gdr-disabled"]),
        ("NCCL_P2P_DISABLE set by environment to 1.", ["config-override"]),
    ],
)
def test_a_setting_names_itself_as_the_cause_and_the_fallback_it_makes(setting: str, classes: list[str]) -> None:
    """NCCL_IB_DISABLE sends traffic between nodes over sockets by itself: the finding names the setting (the cause)
    and the network fallback it makes, so a thread that calls it either is answered. Peer access switched off is the
    setting's doing only: whether the box has P2P is not what it shows."""
    found = nccl_findings(judged(log(setting)))["nccl-env-override"]
    assert found.severity == Severity.WARN and found.evidence["causes"] == classes


def test_a_p2p_disable_named_by_nccl_2_23_is_not_called_loc_in_disguise() -> None:
    found = nccl_findings(judged(log("NCCL_P2P_LEVEL set by environment to LOC", version="2.26.5")))
    assert "prints NCCL_P2P_DISABLE=1 this way" not in found["nccl-env-override"].message


def test_the_log_of_a_run_with_p2p_and_cumem_off() -> None:
    found = nccl_findings(judged(dev_paste("vllm-19204-p2p-disable-env-shm-2gpu")))["nccl-env-override"]
    assert found.severity == Severity.WARN
    assert [s["name"] for s in found.evidence["settings"]] == ["NCCL_CUMEM_ENABLE", "NCCL_P2P_DISABLE"]
    assert "NCCL_P2P_DISABLE=1 (CUDA peer access (NVLink and PCIe P2P) is off" in found.message


def test_variables_typed_on_the_command_above_the_log_are_said_apart() -> None:
    """NVIDIA/nccl#2057: `NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 ... ./a.out`, which NCCL's log never echoes."""
    report = judged(dev_paste("nccl-2057-p2p-shm-disabled-socket-only"))
    found = nccl_findings(report)["nccl-env-override"]
    assert found.severity == Severity.WARN and report.gate.verdict == "warn"
    assert found.message.startswith("The pasted command line shows 2 NCCL setting(s) that change the path")
    assert {(s["name"], s["origin"], s["line"]) for s in found.evidence["settings"]} >= {
        ("NCCL_P2P_DISABLE", "command line", 1),
        ("NCCL_SHM_DISABLE", "command line", 1),
    }
    assert found.remedy_commands == ()  # typed where it is seen: nothing to find


def test_peer_access_kept_to_nvlink_changes_nothing_on_an_nvswitch_board() -> None:
    """`-x NCCL_P2P_LEVEL=NVL` on two HGX H100 nodes (NVIDIA/nccl-tests#309, 469 GB/s): every pair is on NVLink."""
    found = nccl_findings(judged(dev_paste("nccltests-309-a-2node-h100-hgx-469")))["nccl-env-override"]
    assert found.severity == Severity.INFO
    assert "NCCL_P2P_LEVEL=NVL (peer access only over NVLink, level NVL: every GPU pair of this box is on NVLink" in (
        found.message
    )
    pcie = nccl_findings(judged(log("NCCL_P2P_LEVEL set by environment to NVL"), gpu_model="NVIDIA L40S"))
    assert pcie["nccl-env-override"].severity == Severity.WARN  # PCIe cards: P2P is off for every pair


def test_a_level_typed_as_a_number_is_read_as_the_old_level() -> None:
    """NCCL 2.5 echoed NCCL_P2P_LEVEL=NVL as 0, which is LOC: P2P off (NVIDIA/nccl#332)."""
    report = judged(dev_paste("nccl-332-p2p-level-nvl-parsed-as-0"))
    found = nccl_findings(report)["nccl-env-override"]
    assert found.severity == Severity.WARN and "NCCL before 2.6 read a name it did not know, such as NVL, as 0" in (
        found.message
    )


@pytest.mark.parametrize(
    ("setting", "severity"),
    [
        ("NCCL_IB_DISABLE set by environment to 0.", Severity.INFO),  # its default
        ("NCCL_P2P_LEVEL set by environment to SYS", Severity.INFO),  # wider than the default
        ("NCCL_BUFFSIZE set by environment to 8388608.", Severity.INFO),
        ("NCCL_NVLS_ENABLE set by environment to 0.", Severity.WARN),
        ("NCCL_ALGO set by environment to Ring", Severity.INFO),  # a choice of algorithm, often to measure
        ("NCCL_PROTO set by environment to LL128", Severity.INFO),
        ("NCCL_CUMEM_ENABLE set by environment to 0.", Severity.WARN),
        ("NCCL_NET_GDR_LEVEL set by environment to LOC", Severity.WARN),
        ("NCCL_IB_DISABLE set by environment to 1.", Severity.WARN),
        ("NCCL_P2P_DISABLE set by environment to 1", Severity.WARN),
        ("NCCL_IB_HCA set to mlx5_0,mlx5_1", Severity.INFO),
        ("NCCL_IB_HCA set to rxe0", Severity.WARN),  # soft-RoCE: the kernel emulates RDMA (NVIDIA/nccl#1297)
        ("NCCL_IB_HCA set by environment to =mlx5_0,siw0:1", Severity.WARN),
        ("NCCL_IB_HCA set to ^rxe0", Severity.INFO),  # '^' excludes what it names
    ],
)
def test_path_changing_variables_warn_and_tuning_ones_are_info(setting: str, severity: Severity) -> None:
    assert nccl_findings(judged(log(setting)))["nccl-env-override"].severity == severity


def test_debug_variables_say_nothing_about_the_path() -> None:
    assert "nccl-env-override" not in nccl_findings(judged(log("NCCL_DEBUG_SUBSYS set by environment to INIT,GRAPH")))


def test_ranks_are_named_as_a_run_or_a_list_whatever_their_size() -> None:
    """A damaged log's rank of hundreds of digits made the run check build a range that long (OverflowError, exit
    5, found by the damaged-capture property test)."""
    from topoaudit.rules.nccl_rules import format_ranks

    assert format_ranks([0, 1, 2, 3]) == "0-3" and format_ranks([0, 2, 5]) == "0,2,5"
    huge = int("9" * 400)
    assert format_ranks([0, 1, huge]) == f"0,1,{huge}"


@pytest.mark.parametrize(("value", "severity"), [("4", Severity.WARN), ("16", Severity.WARN), ("32", Severity.INFO)])
def test_a_channel_cap_warns_only_below_the_rings_nccl_builds(value: str, severity: Severity) -> None:
    """NCCL builds at most 32 ring channels: NCCL_MAX_CTAS=32 (NIXL's nccl-tests baseline) takes none away."""
    found = nccl_findings(judged(log(f"NCCL_MAX_CTAS set by environment to {value}", version="2.26.5")))
    assert found["nccl-env-override"].severity == severity


def test_a_tree_line_damaged_in_its_ranks_is_read_around() -> None:
    """'1/2/--1->0->-1' (a copy doubled a minus sign): the damaged rank is no hop, not a crash (found by the
    damaged-paste fuzzing: ValueError, exit 5); the sound ranks of the line still are."""
    report = judged(
        log(
            "Trees [0] 1/2/--1->0->-1 [1] 1/-1/-1->0->2",
            "Channel 00/0 : 3[87000] -> 0[a000] [receive] via NET/IB/0/GDRDMA",
            "Channel 00 : 0[a000] -> 1[47000] via P2P/IPC/read",
        )
    )
    assert "nccl-ring-split" not in nccl_findings(report)  # ranks 0-1 on P2P, 3 -> 0 over the network: no split
