"""Known messages on pasted lines become findings: one per code, quoting the lines, with the message's meaning and
fix; the rule that read a line's facts owns its code; what the box is decides what a message means."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import Run

FIXTURES = Path(__file__).parents[1] / "fixtures"
REAL = FIXTURES / "real" / "pastes"  # the corpus's dev part


def judged(run: Run, tmp_path: Path, text: str, *args: str) -> tuple[int, dict[str, Any]]:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    code, out, err = run("analyze", str(paste), "--format", "json", *args)
    assert code in (0, 1), err
    return code, json.loads(out)


def by_code(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for f in report["findings"]:
        assert f["code"] not in found, f"{f['code']} said twice"
        found[f["code"]] = f
    return found


def verdict_and_severity(run: Run, tmp_path: Path, text: str, code: str) -> tuple[str, str | None]:
    """The paste's verdict, and the severity of its finding with that code (None when it has none)."""
    _, report = judged(run, tmp_path, text)
    found = by_code(report).get(code)
    return report["verdict"], found["severity"] if found else None


def test_one_finding_per_code_quotes_the_first_lines_and_counts_the_rest(run: Run, tmp_path: Path) -> None:
    """Before: PASS. Five lines of two messages meaning one thing (no P2P between the GPUs) are one finding."""
    ipc = "transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between"
    lines = [f"box:1:1 [{g}] {ipc} these two devices" for g in range(4)]
    lines.append("box:1:1 [0] NCCL WARN Cuda failure 'peer access is not supported between these two devices'")
    code, report = judged(run, tmp_path, "\n".join(lines) + "\n")
    found = by_code(report)["p2p-unavailable"]
    assert code == 1 and found["severity"] == "fail" and report["verdict"] == "fail"
    assert found["evidence"]["lines"] == [1, 2, 3, 4, 5]
    assert [q["line"] for q in found["evidence"]["quoted"]] == [1, 2, 3]
    assert "and 2 more line(s)" in found["message"]
    assert set(found["evidence"]["signatures"]) == {"nccl-p2p-ipc-open-failed", "cuda-217-peer-access-unsupported"}


def test_a_known_message_names_its_class_of_cause(run: Run, tmp_path: Path) -> None:
    """The finding a message raises says what class of cause its catalog entry declares: two ranks on one GPU is a
    launch configuration fault, though NCCL words it as an invalid usage that stops the run."""
    text = "box:59:59 [1] init.cc:573 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 3000\n"
    _, report = judged(run, tmp_path, text)
    found = by_code(report)["run-failed"]
    assert found["evidence"]["causes"] == ["config-override"]


def test_a_variable_the_log_shows_set_is_said_once_from_the_log(run: Run, tmp_path: Path) -> None:
    """The log's rule owns nccl-env-override: the catalog's messages for the same lines are not said again."""
    lines = [f"box:1:1 [{g}] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC" for g in range(4)]
    lines.append("box:1:1 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.")
    code, report = judged(run, tmp_path, "\n".join(lines) + "\n")
    found = by_code(report)["nccl-env-override"]
    assert code == 0 and found["severity"] == "warn" and report["verdict"] == "warn"
    assert "NCCL_P2P_LEVEL=LOC" in found["message"] and "NCCL_SHM_DISABLE=1" in found["message"]
    assert "signatures" not in found["evidence"]
    assert "NCCL_P2P_LEVEL" in found["remedy"]


def test_a_setting_that_only_changes_what_nccl_prints_is_not_a_finding(run: Run, tmp_path: Path) -> None:
    text = "box:1:1 [0] NCCL INFO NCCL_DEBUG_SUBSYS set by environment to INIT,GRAPH\n"
    _, report = judged(run, tmp_path, text)
    assert "nccl-env-override" not in by_code(report)


def test_the_rule_that_read_the_line_owns_its_code(run: Run) -> None:
    """CUDA error 802 in a parsed NCCL WARN, and a ``#wrong`` count the sweep read, are each said once: by the
    NCCL log's rule and by the sweep's, with their structured evidence."""
    code, out, _ = run(
        "analyze", str(FIXTURES / "nccl" / "constructed-2.26-warn-timestamps-fm-down.txt"), "--format", "json"
    )
    fm = by_code(json.loads(out))["nccl-fabric-manager-down"]
    assert code == 1 and "log_lines" in fm["evidence"] and "signatures" not in fm["evidence"]
    code, out, _ = run("analyze", str(FIXTURES / "nccltests" / "derived-gh200-wrong-elements.txt"), "--format", "json")
    wrong = by_code(json.loads(out))["bench-data-corruption"]
    assert code == 1 and "signatures" not in wrong["evidence"]


def test_refused_peer_access_a_program_only_warns_of_is_a_warning(run: Run, tmp_path: Path) -> None:
    """kmcuda (src2/kmcuda#80) prints 'warning: failed to enable p2p ...' and goes on without peer access: a slower
    path, not a stopped run. Before: FAIL. The same message as an error stays a failure."""
    warned = "warning: failed to enable p2p on gpu #0: peer access is not supported between these two devices\n"
    _, report = judged(run, tmp_path, warned)
    assert report["verdict"] == "warn" and by_code(report)["p2p-unavailable"]["severity"] == "warn"
    raised = "RuntimeError: CUDA error: peer access is not supported between these two devices\n"
    _, report = judged(run, tmp_path, raised)
    assert report["verdict"] == "fail" and by_code(report)["p2p-unavailable"]["severity"] == "fail"


def test_a_failed_call_quoted_as_the_last_warning_of_a_failed_collective_fails(run: Run, tmp_path: Path) -> None:
    """XLA's failed NCCL call quotes NCCL's last warning (NVIDIA/JAX-Toolbox#740): the run stopped on it. The same
    warning in an NCCL log, which NCCL may recover from, stays a warning."""
    quoted = (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/runtime/nccl_api.cc:512: NCCL "
        "operation ncclGroupEnd() failed: unhandled system error (run with NCCL_DEBUG=INFO for details). Last NCCL "
        "warning(error) log entry (may be unrelated) 'Call to ibv_set_ece failed with error Invalid argument "
        "errno 22'.\n"
    )
    code, report = judged(run, tmp_path, quoted)
    assert code == 1 and by_code(report)["run-failed"]["severity"] == "fail"
    logged = (
        "node1:2345:2360 [0] misc/ibvwrap.cc:300 NCCL WARN Call to ibv_set_ece failed with error Invalid argument\n"
    )
    code, report = judged(run, tmp_path, logged)
    assert code == 0 and by_code(report)["run-failed"]["severity"] == "warn"


IMEX_STATUS = """Connectivity Table Legend:
I - Invalid - Node wasn't reachable, no connection status available
N - Never Connected
C - Connected - Ready for operation

3/25/2025 10:39:43.659
Nodes:
Node #0   - 10.136.206.48   - READY
Node #1   - 10.136.206.49   - {second}

 Nodes From\\To  0   1
       0        C   {link}
       1        {link}   C
Domain State: {state}
"""


@pytest.mark.parametrize(
    ("second", "link", "state", "verdict"),
    [("READY", "C", "UP", "pass"), ("UNAVAILABLE", "N", "DEGRADED", "warn"), ("UNAVAILABLE", "I", "DOWN", "fail")],
)
def test_the_imex_domain_state_is_judged_as_nvidia_imex_ctl_prints_it(
    run: Run, tmp_path: Path, second: str, link: str, state: str, verdict: str
) -> None:
    """`nvidia-imex-ctl -N`: a domain up is a checked, healthy IMEX (imex-domain-up); a node not READY and a degraded
    or down domain mean GPU memory cannot be shared over NVLink with some nodes (DCGM's DcgmImexManager states)."""
    _, report = judged(run, tmp_path, IMEX_STATUS.format(second=second, link=link, state=state))
    assert report["verdict"] == verdict
    codes = by_code(report)
    if verdict == "pass":
        assert codes["imex-domain-up"]["severity"] == "info" and "fabric-unhealthy" not in codes
    else:
        assert codes["fabric-unhealthy"]["severity"] == verdict
        assert f"Domain State: {state}" in json.dumps(codes["fabric-unhealthy"]["evidence"])


def test_open_mpi_without_cuda_support_warns_only_where_it_found_the_driver(run: Run, tmp_path: Path) -> None:
    """Open MPI's help texts (help-mpi-common-cuda.txt): a libcuda.so.1 missing a function it needs turns CUDA-aware
    support off on a GPU node (open-mpi/ompi#13326): a warning. No libcuda.so.1 at all is what every CPU node
    prints: it judges nothing by itself."""
    symbol = (
        "An error occurred while trying to map in the address of a function.\n"
        "  Function Name: cuIpcOpenMemHandle_v2\n"
        "  Error string:  /lib64/libcuda.so.1: undefined symbol: cuIpcOpenMemHandle_v2\n"
        "CUDA-aware support is disabled.\n"
    )
    assert verdict_and_severity(run, tmp_path, symbol, "gpu-rdma-setup-failed") == ("warn", "warn")
    library = (
        "The library attempted to open the following supporting CUDA libraries,\n"
        "but each of them failed.  CUDA-aware support is disabled.\n"
        "libcuda.so.1: cannot open shared object file: No such file or directory\n"
    )
    assert verdict_and_severity(run, tmp_path, library, "gpu-rdma-setup-failed") == ("not judged", "info")


SMI_TABLE_ROWS = """+-------------------------------+----------------------+----------------------+
|   0  {name}          On   | 00000000:19:00.0 Off |                    0 |
|{sensors} |      0MiB / 46068MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""


@pytest.mark.parametrize(
    ("name", "sensors", "verdict"),
    [
        ("ERR!      ", "ERR!  ERR! ERR!    ERR! / ERR!", "fail"),  # NVIDIA/gpu-operator#559: the GPU stopped answering
        ("NVIDIA A40", "  0%   26C    P8   ERR! / 300W", "not judged"),  # Azure/azhpc-diagnostics#77: a transient read
    ],
)
def test_a_gpu_nvidia_smi_cannot_read_fails_and_one_failed_sensor_read_judges_nothing(
    run: Run, tmp_path: Path, name: str, sensors: str, verdict: str
) -> None:
    _, report = judged(run, tmp_path, SMI_TABLE_ROWS.format(name=name, sensors=sensors))
    assert report["verdict"] == verdict
    assert ("gpu-lost" in by_code(report)) is (verdict == "fail")


@pytest.mark.parametrize(
    "text",
    [
        "NVLS multicast support is not available on dev 0\nNVLS multicast support is not available on dev 1\n",
        "WARNING [symm_mem.py:67] SymmMemCommunicator: symmetric memory multicast operations are not supported.\n",
    ],
    ids=["nccl", "vllm-symmetric-memory"],
)
def test_nvls_not_available_is_normal_on_a100_and_a_warning_on_an_nvswitch_hopper(
    run: Run, tmp_path: Path, text: str
) -> None:
    _, a100 = judged(run, tmp_path, text, "--gpu-model", "A100-SXM4-80GB")
    assert by_code(a100)["nccl-nvls-off"]["severity"] == "info" and a100["verdict"] == "pass"
    _, unknown = judged(run, tmp_path, text)
    assert by_code(unknown)["nccl-nvls-off"]["severity"] == "info"
    _, h100 = judged(run, tmp_path, text, "--gpu-model", "H100 80GB HBM3")
    assert h100["verdict"] == "warn" and by_code(h100)["nccl-nvls-off"]["severity"] == "warn"


def test_an_inactive_nvlink_line_warns_only_where_every_link_is_wired(run: Run, tmp_path: Path) -> None:
    text = "         Link 4: <inactive>\n         Link 5: <inactive>\n"
    _, unknown = judged(run, tmp_path, text)
    assert by_code(unknown)["nvlink-link-down"]["severity"] == "info"
    # Not a PASS: only the model decides, and nothing names it; the gate asks for it.
    assert unknown["verdict"] == "not judged" and "--gpu-model" in unknown["gate"]["to_judge"]
    _, nvl = judged(run, tmp_path, text, "--gpu-model", "H100 NVL")  # 12 of its 18 links are bridged by design
    assert nvl["verdict"] == "pass"
    _, sxm = judged(run, tmp_path, text, "--gpu-model", "H100 80GB HBM3")
    assert by_code(sxm)["nvlink-link-down"]["severity"] == "warn"


def test_sockets_instead_of_infiniband_cost_nothing_on_one_node_and_warn_across_nodes(run: Run, tmp_path: Path) -> None:
    one = "\n".join(
        [
            "node1:10:10 [0] NCCL INFO NET/IB : No device found.",
            "node1:10:10 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
            "node1:10:10 [0] NCCL INFO Using network Socket",
        ]
    )
    _, single = judged(run, tmp_path, one + "\n")
    assert by_code(single)["nccl-net-socket-fallback"]["severity"] == "info"
    assert single["verdict"] == "not judged"  # they judge nothing of the box (before: PASS, "3 known messages")
    _, channels = judged(run, tmp_path, one + "\nnode1:10:10 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n")
    assert channels["verdict"] == "pass"  # the transport between the ranks is what was judged
    two = one + "\nnode2:20:20 [0] NCCL INFO Using network Socket\n"
    _, multi = judged(run, tmp_path, two)
    found = by_code(multi)["nccl-net-socket-fallback"]
    assert found["severity"] == "warn" and multi["verdict"] == "warn"
    assert "line 1: 'node1:10:10 [0] NCCL INFO NET/IB : No device found.'" in found["message"]


def test_sockets_on_a_node_with_a_nic_for_every_gpu_pair_warn_on_one_node(run: Run, tmp_path: Path) -> None:
    """NVIDIA/nccl#1519: one H100 node, NET/IB finds no device and sockets list eight data NICs: its RDMA is gone."""
    nics = " ".join(f"[{k}]enp{6 + k}s0f0:10.0.{k}.4<0>" for k in range(8))
    text = (
        "node1:10:10 [0] NCCL INFO NET/IB : No device found.\n"
        f"node1:10:10 [0] NCCL INFO NET/Socket : Using {nics}\n"
        "node1:10:10 [0] NCCL INFO Using network Socket\n"
    )
    _, eight = judged(run, tmp_path, text)
    assert by_code(eight)["nccl-net-socket-fallback"]["severity"] == "warn" and eight["verdict"] == "warn"
    virtual = " ".join(f"[{k}]cali{k}abc:fe80::ecee:eeff:feee:eeee%cali{k}abc<0>" for k in range(8))  # Calico's
    _, overlay = judged(run, tmp_path, text.replace(nics, "[0]eth0:10.0.0.1<0> " + virtual))
    assert by_code(overlay)["nccl-net-socket-fallback"]["severity"] == "info"
    # google-research/t5x#832: a p4d's four interfaces, the line wrapped by the issue page inside the last address
    four = "[0]eth0:172.31.224.130<0> [1]eth1:172.31.236.189<0> [2]eth2:172.31.232.164<0> [3]eth3:172.31\n.236.136<0>"
    _, wrapped = judged(run, tmp_path, text.replace(nics, four))
    assert by_code(wrapped)["nccl-net-socket-fallback"]["severity"] == "warn"


def test_ranks_without_a_host_that_use_one_address_are_one_node(run: Run, tmp_path: Path) -> None:
    """NVIDIA/nccl#417: lines carry only the rank ('[1] NCCL INFO ...'); both ranks' sockets use 172.17.6.148."""
    lines = [
        "[0] NCCL INFO Bootstrap : Using [0]enp68s0f0:172.17.6.148<0>",
        "[0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
        "[0] NCCL INFO NET/Socket : Using [0]enp68s0f0:172.17.6.148<0>",
        "[1] NCCL INFO Bootstrap : Using [0]enp68s0f0:172.17.6.148<0>",
        "[1] NCCL INFO NET/Socket : Using [0]enp68s0f0:172.17.6.148<0>",
    ]
    _, one = judged(run, tmp_path, "\n".join(lines) + "\n")
    assert by_code(one)["nccl-net-socket-fallback"]["severity"] == "info" and one["verdict"] == "not judged"
    _, two = judged(
        run,
        tmp_path,
        "\n".join(lines).replace(
            "[1] NCCL INFO Bootstrap : Using [0]enp68s0f0:172.17.6.148",
            "[1] NCCL INFO Bootstrap : Using [0]enp68s0f0:172.17.6.149",
        )
        + "\n",
    )
    assert by_code(two)["nccl-net-socket-fallback"]["severity"] == "warn"  # two addresses: two hosts
    _, alone = judged(run, tmp_path, lines[2] + "\n")
    assert by_code(alone)["nccl-net-socket-fallback"]["severity"] == "warn"  # one rank says nothing of the others


def test_the_loopback_interface_fails_a_job_across_hosts_and_is_harmless_on_one(run: Run, tmp_path: Path) -> None:
    """horovod/horovod#789: NCCL 2.3 in two containers on two servers chose lo:127.0.0.1; the job hung."""
    one = "node1:10:10 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>\nnode1:10:10 [0] NCCL INFO rank 0 nranks 2\n"
    _, single = judged(run, tmp_path, one)
    assert by_code(single)["nccl-net-error"]["severity"] == "info" and single["verdict"] == "not judged"
    _, multi = judged(run, tmp_path, one + "node2:20:20 [1] NCCL INFO rank 1 nranks 2\n")
    found = by_code(multi)["nccl-net-error"]
    assert found["severity"] == "fail" and multi["verdict"] == "fail"
    assert "the address it tells the other ranks is 127.0.0.1" in found["message"]


def test_sockets_in_a_communicator_larger_than_a_node_warn_though_one_host_is_shown(run: Run, tmp_path: Path) -> None:
    """Before: info. One host's lines of a 16-rank job (sgl-project/sglang#3398, TP=16 over two 8-GPU nodes)."""
    lines = [
        "node1:10:10 [1] NCCL INFO NET/IB : No device found.",
        "node1:10:10 [1] NCCL INFO Using network Socket",
        "node1:10:10 [1] NCCL INFO ncclCommInitRank comm 0xb9c26e0 rank 1 nranks {n} cudaDev 1 nvmlDev 1 busId 7e000 "
        "commId 0x898b6d578585998c - Init START",
    ]
    severities = {}
    for n in (8, 16):
        _, report = judged(run, tmp_path, "\n".join(lines).format(n=n) + "\n")
        severities[n] = by_code(report)["nccl-net-socket-fallback"]["severity"]
    assert severities == {8: "info", 16: "warn"}


def test_a_real_pasted_nccl_tests_failure_names_the_fabric_manager(run: Run) -> None:
    """nccl-tests that died at CUDA error 802 under mpirun (NVIDIA/nccl-tests#338): before, refused with a hint about
    JSON reports."""
    code, out, _ = run("analyze", str(REAL / "nccltests-338-h20-802-mpi-abort.txt"), "--format", "json")
    found = by_code(json.loads(out))
    assert code == 1 and found["nccl-fabric-manager-down"]["severity"] == "fail"
    assert "system not yet initialized" in found["nccl-fabric-manager-down"]["message"]


def test_a_run_that_failed_says_so_and_what_it_printed(run: Run) -> None:
    """ncclInternalError at a proxy connect (ray-project/ray#40758): run-failed, the NCCL message quoted."""
    code, out, _ = run("analyze", str(REAL / "ray-40758-proxy-call-rank0-connect.txt"), "--format", "json")
    found = by_code(json.loads(out))["run-failed"]
    assert code == 1 and found["severity"] == "fail"
    assert "nccl-proxy-failed" in found["evidence"]["signatures"]


def test_infiniband_errors_during_the_run_are_a_network_failure(run: Run) -> None:
    code, out, _ = run("analyze", str(REAL / "nccl-733-ib-completion-error12.txt"), "--format", "json")
    found = by_code(json.loads(out))["nccl-net-error"]
    assert code == 1 and found["severity"] == "fail" and "ibstat" in found["remedy"]


def test_a_gpu_memory_error_is_a_hardware_error(run: Run, tmp_path: Path) -> None:
    text = "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    code, report = judged(run, tmp_path, text)
    assert code == 1 and by_code(report)["gpu-hardware-error"]["severity"] == "fail"


def test_a_failure_the_log_rule_calls_tuning_still_fails(run: Run, tmp_path: Path) -> None:
    """The log's rule calls NCCL_SOCKET_IFNAME tuning (info); NCCL's own message says it matches no interface and
    NCCL could not start: that is the run's cause, a fail of the same code, not left out as said already."""
    text = (
        "node1:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth9\n"
        "node1:1:1 [0] bootstrap.cc:126 NCCL WARN Bootstrap : no socket interface found\n"
    )
    code, report = judged(run, tmp_path, text)
    severities = sorted(f["severity"] for f in report["findings"] if f["code"] == "nccl-env-override")
    assert code == 1 and report["verdict"] == "fail" and severities == ["fail", "info"]
    failed = next(f for f in report["findings"] if f["code"] == "nccl-env-override" and f["severity"] == "fail")
    assert failed["message"].startswith("No IP interface matches NCCL_SOCKET_IFNAME")
    assert "run-failed" not in {f["code"] for f in report["findings"]}


def test_a_running_fabric_manager_service_is_what_the_paste_shows(run: Run, tmp_path: Path) -> None:
    """Before: refused with a hint to capture `topo -m`. `systemctl status nvidia-fabricmanager` of a running
    service names its main process."""
    text = (
        "nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
        "     Active: active (running) since Thu 2024-05-16 23:22:02 UTC; 7s ago\n"
        "   Main PID: 128549 (nv-fabricmanage)\n"
    )
    code, report = judged(run, tmp_path, text)
    assert code == 0 and report["verdict"] == "pass"
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("fabric-manager-running", "info")]


def test_cuda_gdbs_report_of_peer_access_already_enabled_is_no_fault(run: Run, tmp_path: Path) -> None:
    """Before: refused. cuda-gdb reports every API error; 0x2c0 (704) says peer access was on already."""
    text = "warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)\n" * 2
    code, report = judged(run, tmp_path, text)
    assert code == 0 and report["verdict"] == "pass"
    assert {(f["code"], f["severity"]) for f in report["findings"]} == {("p2p-unavailable", "info")}


FABRIC_MANAGER_WITHOUT_SWITCHES = (
    "Sep 18 03:19:01 box nvidia-fabricmanager-start.sh[4756]: request to query NVSwitch device information from "
    "NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n"
    'Sep 18 03:19:01 box nvidia-fabricmanager-start.sh[4753]: "/usr/bin/nv-fabricmanager -c '
    '/usr/share/nvidia/nvswitch/fabricmanager.cfg" failed! Exit code: 1\n'
    "Sep 18 03:19:01 box systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, "
    "status=1/FAILURE\n"
)


def test_a_fabric_manager_that_finds_no_nvswitch_matters_only_where_there_are_nvswitches(
    run: Run, tmp_path: Path
) -> None:
    """Before: FAIL on a 2x RTX 4090 box (NVIDIA/gpu-operator#610): the service has nothing to manage there."""
    answers = {}
    for model in ("RTX 4090", "A100 PCIe", "", "H100"):
        code, report = judged(
            run, tmp_path, FABRIC_MANAGER_WITHOUT_SWITCHES, *(["--gpu-model", model] if model else [])
        )
        (found,) = [f for f in report["findings"] if f["code"] == "fabric-not-ready"]
        answers[model] = (code, report["verdict"], found["severity"])
        assert found["message"].startswith("The fabric manager found no NVSwitch and exits")
    assert answers == {
        "RTX 4090": (0, "pass", "info"),
        "A100 PCIe": (0, "pass", "info"),
        "": (0, "pass", "info"),  # most boxes whose fabric manager finds nothing to do have no NVSwitch
        "H100": (1, "fail", "fail"),
    }


FABRIC_MANAGER_JOB_FAILED = (
    "# systemctl start nvidia-fabricmanager\n"
    "Job for nvidia-fabricmanager.service failed because the control process exited with error code.\n"
)


def test_a_fabric_manager_that_would_not_start_fails_unless_the_paste_names_a_geforce_card(
    run: Run, tmp_path: Path
) -> None:
    """systemd's "Job for nvidia-fabricmanager.service failed" (NVIDIA/nvtrust#128, 8x H20): the fabric is down. On
    a GeForce box (NVIDIA/gpu-operator#356, whose nvidia-smi table shows "NVIDIA GeForce ...") there is no NVSwitch
    for it to manage, so its failure changes nothing."""
    code, report = judged(run, tmp_path, FABRIC_MANAGER_JOB_FAILED)
    assert (code, report["verdict"], by_code(report)["fabric-not-ready"]["severity"]) == (1, "fail", "fail")
    geforce = (
        FABRIC_MANAGER_JOB_FAILED + "|   0  NVIDIA GeForce ...  Off  | 00000000:05:00.0 Off |                  N/A |\n"
    )
    code, report = judged(run, tmp_path, geforce)
    assert code == 0 and by_code(report)["fabric-not-ready"]["severity"] == "info"


DCGMI_LINK_STATUS = """+----------------------+
|  NvLink Link Status  |
+----------------------+
GPUs:
    gpuId 0:
        {gpu0}
    gpuId 1:
        U U U U U U U U U U U U _ _ _ _ _ _
NvSwitches:
    No NvSwitches found.

Key: Up=U, Down=D, Disabled=X, Not Supported=_
"""


def test_dcgmi_link_status_names_links_down_and_judges_links_up(run: Run, tmp_path: Path) -> None:
    """Before: refused. `dcgmi nvlink --link-status` of 2x H100 NVL whose 18 links read D (NVIDIA/DCGM#198)."""
    code, report = judged(run, tmp_path, DCGMI_LINK_STATUS.format(gpu0=" ".join("D" * 18)))
    down = by_code(report)["nvlink-link-down"]
    assert code == 0 and report["verdict"] == "warn" and down["severity"] == "warn"
    assert down["evidence"]["lines"] == [6]
    code, report = judged(run, tmp_path, DCGMI_LINK_STATUS.format(gpu0=" ".join("U" * 18)))
    assert code == 0 and report["verdict"] == "pass"
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("nvlink-links-up", "info")]


def test_vllms_custom_allreduce_without_p2p_is_by_design_only_on_geforce(run: Run, tmp_path: Path) -> None:
    text = (
        "WARNING 05-25 00:00:25 custom_all_reduce.py:74] Custom allreduce is disabled because your platform lacks "
        "GPU P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True "
        "explicitly.\n"
    )
    severities = {}
    for model in ("RTX 4090", "L40S", ""):
        _, report = judged(run, tmp_path, text, *(["--gpu-model", model] if model else []))
        severities[model] = by_code(report)["p2p-unavailable"]["severity"]
    assert severities == {"RTX 4090": "info", "L40S": "warn", "": "warn"}


def test_sockets_where_the_settings_ask_for_infiniband_warn_on_one_host(run: Run, tmp_path: Path) -> None:
    """Before: info, so PASS. NCCL_IB_DISABLE=0 says InfiniBand was wanted (pytorch/pytorch#111424: the container
    lacked /dev/infiniband)."""
    text = (
        "node013:37715:38896 [0] NCCL INFO NET/IB : No device found.\n"
        "node013:37715:38896 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n"
    )
    _, report = judged(run, tmp_path, text)
    assert by_code(report)["nccl-net-socket-fallback"]["severity"] == "warn" and report["verdict"] == "warn"
    _, alone = judged(run, tmp_path, text.splitlines()[0] + "\n")
    assert by_code(alone)["nccl-net-socket-fallback"]["severity"] == "info"


def test_the_socket_transports_setup_beside_infiniband_in_use_is_no_fallback(run: Run, tmp_path: Path) -> None:
    """NCCL 2.4 prints `NET/Socket : Using [0]ib0:...` while it sets the socket transport up, then `NET/IB : Using
    [0]mlx5_0:1/IB` for the one it uses (Mellanox/nv_peer_memory#56): InfiniBand carries the traffic."""
    text = (REAL / "nv-peer-memory-56-ib-no-gdrdma-init-log.txt").read_text(encoding="utf-8")
    _, report = judged(run, tmp_path, text)
    assert by_code(report)["nccl-net-socket-fallback"]["severity"] == "info" and report["verdict"] != "warn"
    without_ib = "\n".join(line for line in text.splitlines() if "NET/IB : Using" not in line) + "\n"
    _, sockets = judged(run, tmp_path, without_ib)  # two hosts, sockets only: the fallback warns
    assert by_code(sockets)["nccl-net-socket-fallback"]["severity"] == "warn"


@pytest.mark.parametrize(
    "paste",
    [
        "aws-ofi-nccl-803-p4d-container-tcp-provider",  # NET/OFI Selected Provider is tcp (found 1 nics)
        "aws-ofi-nccl-67-p4d-no-optimal-provider",  # NET/OFI Couldn't find any optimal provider, under pdsh's one host
    ],
)
def test_a_network_plugin_for_efa_on_tcp_or_none_warns_on_one_host(run: Run, tmp_path: Path, paste: str) -> None:
    """The OFI plugin was loaded for EFA: a software provider or none says EFA is missing, wherever the paste shows
    one host (before: info, so not judged)."""
    _, report = judged(run, tmp_path, (REAL / f"{paste}.txt").read_text(encoding="utf-8"))
    assert by_code(report)["nccl-net-socket-fallback"]["severity"] == "warn" and report["verdict"] == "warn"


def test_sockets_on_a_log_that_names_no_host_but_keeps_its_channels_inside_one(run: Run, tmp_path: Path) -> None:
    """Before: warn. An mpirun-prefixed log whose host names were cut (NVIDIA/nccl#939): its channels run over P2P,
    none over the network, so sockets carry nothing."""
    text = (
        "[0]<stdout>[0] NCCL INFO Failed to open libibverbs.so[.1]\n"
        "[0]<stdout>[0] NCCL INFO NET/Socket : Using [0]eth0:100.99.84.104<0>\n"
        "[0]<stdout>[0] NCCL INFO Using network Socket\n"
        "[0]<stdout>[0] NCCL INFO Channel 01 : 0[7000] -> 1[a000] via P2P/IPC/read\n"
    )
    _, report = judged(run, tmp_path, text)
    assert by_code(report)["nccl-net-socket-fallback"]["severity"] == "info" and report["verdict"] == "pass"
    _, across = judged(run, tmp_path, text.replace("via P2P/IPC/read", "[send] via NET/Socket/0"))
    assert by_code(across)["nccl-net-socket-fallback"]["severity"] == "warn"


def test_a_warning_nccl_unwound_as_an_error_is_the_failed_runs_cause(run: Run, tmp_path: Path) -> None:
    """Before: PASS. NCCL could not resolve the GPU's sysfs path and unwound error 2 up to init (NVIDIA/nccl#573):
    the communicator never started. The chain alone is not the cause: the WARN above it is quoted first."""
    text = (
        "host:92777:92889 [0] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../..\n"
        "host:92777:92889 [0] NCCL INFO graph/xml.cc:469 -> 2\n"
        "host:92777:92889 [0] NCCL INFO init.cc:581 -> 2\n"
        "host:92777:92889 [0] NCCL INFO group.cc:73 -> 2 [Async thread]\n"
    )
    code, report = judged(run, tmp_path, text)
    found = by_code(report)["run-failed"]
    assert code == 1 and report["verdict"] == "fail" and found["severity"] == "fail"
    assert found["evidence"]["quoted"][0]["line"] == 1
    assert "Could not find real path" in found["message"]
    _, warned_only = judged(run, tmp_path, text.splitlines()[0] + "\n")
    assert warned_only["verdict"] == "not judged"


def test_an_error_chain_under_a_message_that_names_the_cause_is_not_said_again(run: Run, tmp_path: Path) -> None:
    """The NVLS message says why init failed; the calls NCCL unwound after it add nothing."""
    text = (
        "h:1:1 [0] transport/nvls.cc:153 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present "
        "state'\n"
        "h:1:1 [0] NCCL INFO transport/nvls.cc:170 -> 1\n"
        "h:1:1 [0] NCCL INFO init.cc:1210 -> 1\n"
    )
    _, report = judged(run, tmp_path, text)
    assert report["verdict"] == "fail" and "run-failed" not in by_code(report)


def test_a_health_checker_that_stopped_judges_nothing_about_the_box(run: Run, tmp_path: Path) -> None:
    """Before: FAIL. NHC's own timeout (mej/nhc#161: a hung `scontrol` in node-mark-online) and a check whose tools
    were not set up (Azure/azurehpc-health-checks#72) say nothing about the GPUs: "not judged", with why."""
    text = (
        "2025-06-11T19:12:23.050922+00:00 cpu001 nhc[1013622]: Health check failed:  Script timed out.\n"
        "[1705939176] - ERROR:  nhc:  Health check failed:  check_all_reduce_dependencies: HPCX_DIR is not set.\n"
    )
    code, report = judged(run, tmp_path, text)
    assert code == 0 and report["verdict"] == "not judged"
    assert by_code(report)["run-failed"]["severity"] == "info"
    xid = "ERROR:  nhc:  Health check failed:  check_gpu_xid: GPU Xid errors detected\n"
    assert judged(run, tmp_path, xid)[1]["verdict"] == "fail"


def test_efa_that_cannot_register_gpu_memory_or_is_not_visible_fails_the_network(run: Run, tmp_path: Path) -> None:
    """aws-ofi-nccl#584 (NCCL 2.19+ with an old EFA installer) and #879 (a container without the EFA devices)."""
    register = "NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument\n"
    assert by_code(judged(run, tmp_path, register)[1])["run-failed"]["severity"] == "fail"
    _, report = judged(run, tmp_path, "fi_info -p efa\nfi_getinfo: -61 (No data available)\n")
    assert by_code(report)["nccl-net-socket-fallback"]["severity"] == "warn" and report["verdict"] == "warn"


def test_a_path_setting_on_a_command_line_that_runs_one_gpu_judges_nothing(run: Run, tmp_path: Path) -> None:
    """Before: WARN. Each GPU tested alone (NVIDIA/nccl-tests#131): with one GPU there is no path for
    NCCL_P2P_DISABLE to change; on two GPUs it warns."""
    one = "CUDA_VISIBLE_DEVICES=1 NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 1\n"
    code, report = judged(run, tmp_path, one)
    assert code == 0 and report["verdict"] == "not judged" and "nccl-env-override" not in by_code(report)
    _, two = judged(run, tmp_path, one.replace("-g 1", "-g 2").replace("DEVICES=1", "DEVICES=0,1"))
    assert by_code(two)["nccl-env-override"]["severity"] == "warn"


def test_gdrcopy_or_ibgda_that_cannot_reach_gpu_memory_warns(run: Run, tmp_path: Path) -> None:
    """Before: not judged. gdrcopy_sanity failing to pin GPU memory (NVIDIA/gdrcopy#305) and NVSHMEM's IBGDA
    transport not starting (deepseek-ai/DeepEP#139) both cost the GPUDirect path."""
    for text in (
        'Assertion "(gdr_pin_buffer(g, d_A, A_size, 0, 0, &A_mh)) == (0)" failed at sanity.cpp:344\n',
        "/repo/nvshmem_src/src/host/transport/transport.cpp:nvshmemi_transport_init:275: init failed for transport: "
        "IBGDA\n",
    ):
        _, report = judged(run, tmp_path, text)
        assert by_code(report)["gpu-rdma-setup-failed"]["severity"] == "warn" and report["verdict"] == "warn"


def test_nccl_refusing_p2p_between_nvlink_connected_gpus_names_a_link_fault(run: Run, tmp_path: Path) -> None:
    """NCCL's own reading ('probably due to a hardware issue') is the finding's class of cause, beside the code."""
    text = (
        "node7:1234:1290 [3] graph/paths.cc:396 NCCL WARN P2P is disabled between NVLINK connected GPUs 1 and 5. This "
        "should not be the case given their connectivity, and is probably due to a hardware issue.\n"
    )
    _, report = judged(run, tmp_path, text)
    found = by_code(report)["nccl-p2p-disabled"]
    assert found["severity"] == "fail" and found["evidence"]["causes"] == ["nvlink-down"]


DEEPEP_LOW_LATENCY = """\
[rank 0] Dispatch + combine bandwidth: {gbps} GB/s, avg_t=83610.61 us, min_t=924.03 us, max_t=377962.68 us
[rank 1] Dispatch + combine bandwidth: 41.20 GB/s, avg_t=873.03 us, min_t=717.92 us, max_t=928.10 us
"""


def test_deepeps_bandwidth_below_its_own_figures_warns(run: Run, tmp_path: Path) -> None:
    """Below four fifths of DeepEP's lowest published low-latency figure (39 GB/s on H800 with CX7) is a slower path
    than its box's: 0.26 GB/s, and 25-27 GB/s that DeepEP's threads call low (deepseek-ai/DeepEP#75, #183) warn;
    42 GB/s (#28) holds."""
    for gbps in ("0.26", "27.38"):
        _, slow = judged(run, tmp_path, DEEPEP_LOW_LATENCY.format(gbps=gbps))
        found = by_code(slow)["deepep-test-result"]
        assert found["severity"] == "warn" and slow["verdict"] == "warn"
        assert f"line 1: '[rank 0] Dispatch + combine bandwidth: {gbps} GB/s" in found["message"]
    _, sound = judged(run, tmp_path, DEEPEP_LOW_LATENCY.format(gbps="42.24"))
    assert by_code(sound)["deepep-test-result"]["severity"] == "info" and sound["verdict"] == "pass"
    tuning = (
        "[tuning] Best dispatch (BF16): SMs 24, NVL chunk 20, RDMA chunk 32: {rdma} GB/s (RDMA), {nvl} GB/s (NVL)\n"
    )
    _, rdma = judged(run, tmp_path, tuning.format(rdma="25.80", nvl="138.25"))
    assert by_code(rdma)["deepep-test-result"]["severity"] == "warn"  # RDMA below four fifths of 43 GB/s
    _, nvlink = judged(run, tmp_path, tuning.format(rdma="42.36", nvl="76.50"))
    assert by_code(nvlink)["deepep-test-result"]["severity"] == "warn"  # NVLink below four fifths of 153 GB/s
    _, held = judged(run, tmp_path, tuning.format(rdma="42.36", nvl="138.25"))
    assert by_code(held)["deepep-test-result"]["severity"] == "info" and held["verdict"] == "pass"


def test_collnet_asked_for_and_not_set_up_warns_that_reductions_run_without_the_switches(
    run: Run, tmp_path: Path
) -> None:
    """NCCL_COLLNET_ENABLE=1 and a communicator that could not set CollNet up: the run goes on over the plain network,
    so the figures are not those of SHARP; a warning, not a failure."""
    log = (
        "node1:4021:4021 [0] NCCL INFO NCCL_COLLNET_ENABLE set by environment to 1.\n"
        "node1:4021:4090 [0] NCCL WARN Cannot initialize CollNet, using point-to-point network instead\n"
    )
    code, report = judged(run, tmp_path, log)
    found = by_code(report)["nccl-collnet-unavailable"]
    assert code == 0 and found["severity"] == "warn" and report["verdict"] == "warn"
    assert "point-to-point network" in found["message"] + json.dumps(found["evidence"])


def test_an_error_nccl_unwinds_and_then_sets_its_communicator_up_is_no_failed_run(run: Run, tmp_path: Path) -> None:
    """Before: FAIL. Without libibverbs (WSL, deepspeedai/DeepSpeed#8248) NCCL warns, unwinds error 3 from its
    GPUDirect RDMA probe, and goes on with sockets: the same process then sets its channels up. The same chain
    with nothing after it is still the failed run's cause."""
    head = (
        "DESKTOP:2129:2129 [0] misc/ibvwrap.cc:173 NCCL WARN lib wrapper not initialized.\n"
        "DESKTOP:2129:2129 [0] NCCL INFO transport/net_ib/gdr.cc:56 -> 3\n"
    )
    went_on = (
        "DESKTOP:2129:2129 [0] NCCL INFO Using network Socket\n"
        "DESKTOP:2129:2129 [0] NCCL INFO comm 0x641a32ed9550 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0\n"
        "DESKTOP:2129:2129 [0] NCCL INFO Channel 00/02 : 0 1\n"
    )
    code, report = judged(run, tmp_path, head + went_on)
    assert code == 0 and report["verdict"] != "fail"
    assert all(f["severity"] == "info" for f in report["findings"] if f["code"] == "run-failed")
    elsewhere = went_on.replace("DESKTOP:2129:", "DESKTOP:4242:")  # another process going on proves nothing
    code, report = judged(
        run,
        tmp_path,
        head.replace("misc/ibvwrap.cc:173 NCCL WARN lib wrapper", "misc/x.cc:1 NCCL WARN odd") + elsewhere,
    )
    assert code == 1 and by_code(report)["run-failed"]["severity"] == "fail"


def test_deepeps_low_latency_phases_timed_apart_are_held_to_its_figures(run: Run, tmp_path: Path) -> None:
    """test_low_latency.py also prints dispatch and combine apart on one line: 0.11 GB/s is far below four fifths of
    DeepEP's lowest low-latency figure (39 GB/s), 98 and 120 GB/s are near its own."""
    line = "[rank {r}] Dispatch bandwidth: {d} GB/s, avg_t=75.00 us | Combine bandwidth: {c} GB/s, avg_t=120.00 us\n"
    _, slow = judged(run, tmp_path, line.format(r=7, d="0.11", c="0.88"))
    assert by_code(slow)["deepep-test-result"]["severity"] == "warn" and slow["verdict"] == "warn"
    _, sound = judged(run, tmp_path, line.format(r=0, d="98.20", c="120.50"))
    assert by_code(sound)["deepep-test-result"]["severity"] == "info" and sound["verdict"] == "pass"


def test_gdrcopy_copies_through_the_bar_judge_the_mapping_and_efa_without_gpudirect_warns(
    run: Run, tmp_path: Path
) -> None:
    """gdrcopy's copybw printing its rates (NVIDIA/gdrcopy#72, a K80) shows the mapping works; the EFA provider of
    libfabric saying FI_HMEM_CUDA has no P2P (ofiwg/libfabric#11256) is EFA without GPUDirect RDMA."""
    code, report = judged(run, tmp_path, "writing test, size=131072 offset=0 num_iters=10000\nwrite BW: 9437.68MB/s\n")
    assert code == 0 and report["verdict"] == "pass"
    assert by_code(report)["gdrcopy-test-result"]["severity"] == "info"
    efa = "libfabric:151205:1753871244::efa:core:efa_hmem_info_init_iface():298<info> FI_HMEM_CUDA P2P support is"
    efa += " not available.\n"
    code, report = judged(run, tmp_path, efa)
    assert report["verdict"] == "warn" and by_code(report)["gpu-rdma-setup-failed"]["severity"] == "warn"


def test_a_small_dev_shm_warns_and_the_sigbus_it_causes_fails_the_run(run: Run, tmp_path: Path) -> None:
    """vllm-project/vllm#1111: Ray finds 45 MB in /dev/shm, then a TP=2 worker dies on SIGBUS; a /dev/shm of
    several GB is no finding."""
    ray = (
        "2023-09-20 11:37:58,722\tWARNING services.py:1889 -- WARNING: The object store is using /tmp instead of "
        "/dev/shm because /dev/shm has only {} bytes available. This will harm performance!\n"
    )
    code, report = judged(
        run, tmp_path, ray.format(46972928) + "(RayWorker pid=4856) *** SIGBUS received at time=1 ***\n"
    )
    assert code == 1 and by_code(report)["shared-memory-small"]["severity"] == "warn"
    assert by_code(report)["run-failed"]["severity"] == "fail"
    _, roomy = judged(run, tmp_path, ray.format(6541639680) + "node1:4856:4856 [0] NCCL INFO NCCL version 2.18.1\n")
    assert "shared-memory-small" not in by_code(roomy)


def test_dcgm_naming_an_nvlink_port_down_is_judged_by_the_model(run: Run, tmp_path: Path) -> None:
    """DCGM_FR_NVLINK_DOWN's message: a fault on a GPU whose every port is wired, not judged without the model."""
    text = 'message: "GPU 3\'s NvLink link 16 is currently down ... link 17 is currently down"\n'
    _, unknown = judged(run, tmp_path, text)
    assert unknown["verdict"] == "not judged" and "--gpu-model" in unknown["gate"]["to_judge"]
    _, rack = judged(run, tmp_path, text, "--gpu-model", "GB200")
    assert rack["verdict"] == "warn" and by_code(rack)["nvlink-link-down"]["severity"] == "warn"


def test_lspci_links_at_full_speed_and_width_pass_and_a_downgraded_one_warns(run: Run, tmp_path: Path) -> None:
    """`lspci -vv | grep Spee` of a 2x H100 PCIe box (openucx/ucx#9462): Gen5 x16 '(ok)' on both ends. Before: not
    judged. A second GPU whose width is downgraded beside it makes it a warning."""
    text = (REAL / "ucx-9462-ref-h100-pcie-lspci-gen5-x16-ok.txt").read_text(encoding="utf-8")
    _, report = judged(run, tmp_path, text)
    assert report["verdict"] == "pass" and by_code(report)["pcie-links-full"]["severity"] == "info"
    narrow = text + "\t\tLnkSta:\tSpeed 32GT/s (ok), Width x8 (downgraded)\n"
    _, report = judged(run, tmp_path, narrow)
    assert report["verdict"] == "warn" and by_code(report)["pcie-link-degraded"]["severity"] == "warn"


def test_too_many_peers_is_by_design_unless_the_program_died_of_it(run: Run, tmp_path: Path) -> None:
    """CUDA error 711 on a box of more than nine GPUs: some pairs are refused peer access by design (warn); llama.cpp
    asking for every pair of ten P40s aborted on it (ggml-org/llama.cpp#21883): the run failed."""
    line = "CUDA error: peer mapping resources exhausted\n"
    _, report = judged(run, tmp_path, line)
    assert report["verdict"] == "warn" and by_code(report)["p2p-unavailable"]["severity"] == "warn"
    _, report = judged(run, tmp_path, line + "  cudaDeviceEnablePeerAccess(id_other, 0)\nAborted (core dumped)\n")
    assert report["verdict"] == "fail" and by_code(report)["p2p-unavailable"]["severity"] == "fail"


def test_an_iperf_run_under_10_gbits_warns_that_the_network_is_too_slow(run: Run, tmp_path: Path) -> None:
    """iperf prints Mbits/sec below 1 Gb/s (horovod/horovod#992: 95 Mbit/s between two training nodes): a network
    slower than multi-node GPU training runs on. 39 Gb/s says nothing of the NICs and is no finding."""
    slow = "[  3]  0.0-10.0 sec   113 MBytes  95.1 Mbits/sec\n[  3] 10.0-20.0 sec   114 MBytes  95.2 Mbits/sec\n"
    _, report = judged(run, tmp_path, slow)
    assert report["verdict"] == "warn" and by_code(report)["network-throughput-low"]["severity"] == "warn"
    fast = "[  5]   0.00-10.00  sec  45.9 GBytes  39.4 Gbits/sec    0             sender\n"
    _, report = judged(run, tmp_path, fast)
    assert "network-throughput-low" not in by_code(report)


OSU_DD = "# OSU MPI-CUDA Bandwidth Test v7.2\n# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)\n"


@pytest.mark.parametrize(
    ("rows", "verdict", "severity", "says"),
    [
        ("1048576             73675.19\n33554432            93130.52\n", "pass", "info", "NVLink carried it"),
        ("131072                330.16\n262144                325.06\n", "warn", "warn", "slower than any healthy"),
        ("4194304              11893.40\n", "not judged", "info", "cannot hold to a path"),  # PCIe or a NIC?
        ("1024                  316.41\n2048                  354.13\n", "not judged", "info", "at 2 KiB"),  # too small
    ],
    ids=["over-pcie", "under-1gbs", "between", "small-messages-only"],
)
def test_an_osu_bandwidth_table_is_judged_by_its_largest_message(
    run: Run, tmp_path: Path, rows: str, verdict: str, severity: str, says: str
) -> None:
    """osu_bw's last row is its plateau: over 60 GB/s only NVLink carries (EESSI/software-layer#716, two A100 over
    NV4: 93 GB/s), under 1 GB/s no healthy path is that slow (openucx/ucx#3984: no GPUDirect RDMA, 325 MB/s); between,
    or before 256 KiB, the figure is named and judges nothing without the path."""
    _, report = judged(run, tmp_path, OSU_DD + "# Size      Bandwidth (MB/s)\n" + rows)
    assert report["verdict"] == verdict
    found = by_code(report)["transfer-test-result"]
    assert found["severity"] == severity and says in found["message"]


def test_ucx_perftest_and_perftest_tables_are_read_from_their_last_row(run: Run, tmp_path: Path) -> None:
    """ucx_perftest's overall bandwidth of 339 MB/s on GPU memory (openucx/ucx#3956) warns; perftest's 132 Gb/s over
    an EFA port is no figure any NIC forbids: not judged."""
    ucx = (
        "+--------------+---------+---------+---------+----------+----------+-----------+-----------+\n"
        "|              |       latency (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |\n"
        "+--------------+---------+---------+---------+----------+----------+-----------+-----------+\n"
        "| # iterations | typical | average | overall |  average |  overall |   average |   overall |\n"
        "+--------------+---------+---------+---------+----------+----------+-----------+-----------+\n"
        "            85     0.000 11780.587 11780.587     339.54     339.54          85          85\n"
        "           170     0.000 11880.423 11830.505     336.69     338.11          84          85\n"
    )
    _, report = judged(run, tmp_path, ucx)
    assert report["verdict"] == "warn"
    assert "0.338 GB/s" in by_code(report)["transfer-test-result"]["message"]
    perftest = (
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        " 8192       30000            170.04             132.18               2.016966\n"
    )
    _, report = judged(run, tmp_path, perftest)
    assert report["verdict"] == "not judged"
    _, report = judged(run, tmp_path, perftest.replace("132.18", "8.35"))
    assert report["verdict"] == "warn"
    # linux-rdma/perftest#132: `ib_write_bw -a` pasted up to 8 bytes, 0.17 Gb/s at 2.6 Mpps: the message rate's bound
    tiny = perftest.replace(
        " 8192       30000            170.04             132.18 ",
        " 8          5000             0.17               0.17 ",
    )
    _, report = judged(run, tmp_path, tiny)
    assert report["verdict"] == "not judged"


def test_bandwidth_test_between_host_and_gpu_under_3_gbs_warns(run: Run, tmp_path: Path) -> None:
    """CUDA's bandwidthTest from the far NUMA node (psteinb/gearshifft#82: 2.5 GB/s device to host on a P100 that does
    12.9 GB/s from its own node) is less than a PCIe Gen3 x4 link carries; its own node's figure says nothing."""
    section = (
        " Device to Host Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n"
        "   Transfer Size (Bytes)        {}\n   33554432                     {}\n"
    )
    _, report = judged(run, tmp_path, section.format("Bandwidth(MB/s)", "2539.2"))
    assert report["verdict"] == "warn" and "2.54 GB/s" in by_code(report)["transfer-test-result"]["message"]
    _, report = judged(run, tmp_path, section.format("Bandwidth(GB/s)", "12.9"))
    assert report["verdict"] == "not judged"


def test_a_watchdog_timeout_set_below_a_second_judges_nothing(run: Run, tmp_path: Path) -> None:
    """instructlab/training#520 sets the process group's timeout to 1 ms on purpose: the watchdog's timeout says
    nothing of the links then. The default 10 minutes running out is a collective that never finished."""
    line = (
        "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)={}) ran for 90 milliseconds before timing out.\n"
    )
    _, report = judged(run, tmp_path, line.format(1))
    assert report["verdict"] == "not judged" and by_code(report)["bench-timeout"]["severity"] == "info"
    _, report = judged(run, tmp_path, line.format(600000))
    assert report["verdict"] == "fail" and by_code(report)["bench-timeout"]["severity"] == "fail"


def test_a_notice_its_entry_says_judges_nothing_is_named_and_not_judged(run: Run, tmp_path: Path) -> None:
    """vLLM's wait for a worker prints the same words for a hang and for a long compilation (its own message says
    so): alone it is shown at information and the paste is not judged; beside a failure it changes nothing."""
    wait = (
        "No available shared memory broadcast block found in 60 seconds. This typically happens when some processes "
        "are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n"
    )
    _, report = judged(run, tmp_path, wait)
    assert report["verdict"] == "not judged" and by_code(report)["bench-timeout"]["severity"] == "info"
    _, report = judged(run, tmp_path, wait + "torch.distributed.DistBackendError: NCCL error: unhandled cuda error\n")
    assert report["verdict"] != "pass"


def test_error_802_under_a_symmetric_memory_rendezvous_is_its_multicast_not_a_fabric_manager_down(
    run: Run, tmp_path: Path
) -> None:
    """vLLM's symmetric-memory all-reduce fails at start-up with 'system not yet initialized' from its multicast
    object (vllm-project/vllm#26922, vllm-omni#241; fixed by turning it off): CUDA had started, so the fabric manager
    is not named as down; alone, the same error still is."""
    tail = "RuntimeError: CUDA driver error: system not yet initialized\n"
    frame = "    handle = torch_symm_mem.rendezvous(self.buffer, self.group.group_name)\n"
    _, report = judged(run, tmp_path, frame + tail)
    assert report["verdict"] == "fail" and by_code(report)["nccl-nvls-failed"]["severity"] == "fail"
    assert by_code(report)["nccl-fabric-manager-down"]["severity"] == "info"
    _, report = judged(run, tmp_path, tail)
    assert by_code(report)["nccl-fabric-manager-down"]["severity"] == "fail"


def test_a_peer_memory_free_callback_diagnostic_warns_of_the_driver_and_fails_nothing(run: Run, tmp_path: Path) -> None:
    """nvidia-peermem's 'detected invalid context' is a harmless diagnostic of an R535 mitigation
    (Mellanox/nv_peer_memory#120): named as the driver's, at warning, never as a failed run."""
    line = (
        "[25033.2] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, "
        "skipping further processing\n"
    )
    code, report = judged(run, tmp_path, line * 3)
    found = by_code(report)
    assert code == 0 and report["verdict"] == "warn"
    assert found["peer-memory-driver-diagnostic"]["severity"] == "warn" and "run-failed" not in found


def test_ucx_missing_one_peer_memory_file_warns_unless_another_path_gives_gpu_memory(run: Run, tmp_path: Path) -> None:
    """UCX checks the peer-memory files in turn and then DMA-BUF: 'not detected' lines alone mean no GPUDirect RDMA
    (openucx/ucx#10966); followed by 'dmabuf is supported' the NIC reaches GPU memory all the same."""
    missing = (
        "[1.1] [pod:29 :0] ib_md.c:1222 UCX  DEBUG rdmap183s0: cuda GPUDirect RDMA is not detected by checking "
        "/sys/kernel/mm/memory_peers/nv_mem/version\n"
        "[1.2] [pod:29 :0] ib_md.c:1222 UCX  DEBUG rdmap183s0: cuda GPUDirect RDMA is not detected by checking "
        "/sys/module/nvidia_peermem/version\n"
    )
    assert verdict_and_severity(run, tmp_path, missing, "gpu-rdma-setup-failed") == ("warn", "warn")
    dmabuf = missing + "[1.3] [pod:29 :0] ib_md.c:1338 UCX  DEBUG rdmap183s0: dmabuf is supported\n"
    verdict, severity = verdict_and_severity(run, tmp_path, dmabuf, "gpu-rdma-setup-failed")
    assert severity == "info" and verdict != "warn"


def test_a_finite_locked_memory_limit_in_ulimit_warns_and_unlimited_judges_nothing(run: Run, tmp_path: Path) -> None:
    """Inside a Slurm step the limit was 64 KiB where the login shell had unlimited (NVIDIA/pyxis#60): RDMA NICs
    cannot pin buffers past it. The same listing with 'unlimited' is a program's output that judges nothing."""
    listing = "core file size          (blocks, -c) 0\nmax locked memory       (kbytes, -l) {}\nopen files (-n) 1024\n"
    _, report = judged(run, tmp_path, listing.format(64))
    assert report["verdict"] == "warn" and by_code(report)["memlock-limited"]["severity"] == "warn"
    _, report = judged(run, tmp_path, listing.format("unlimited"))
    assert report["verdict"] == "not judged" and report["findings"] == []


def test_a_launcher_that_found_p2p_working_is_a_judged_healthy_p2p(run: Run, tmp_path: Path) -> None:
    """club-3090's launcher (noonghunna/club-3090#939) reports P2P OK over PHB and turns it on: checked and held
    (p2p-enabled), not "not judged"; its P2P DISABLED line with NCCL_P2P_DISABLE=1 still warns."""
    enabled = (
        "[nvlink] PCIe topology (PHB) but nvidia-smi reports P2P=OK (patched driver / shared root complex)\n"
        "[nvlink] P2P ENABLED \u2014 NCCL_P2P_LEVEL=PHB, custom all-reduce ON\n"
    )
    _, report = judged(run, tmp_path, enabled)
    assert report["verdict"] == "pass" and by_code(report)["p2p-enabled"]["severity"] == "info"
    _, report = judged(run, tmp_path, "[nvlink] P2P DISABLED \u2014 NCCL_P2P_DISABLE=1, custom all-reduce OFF\n")
    assert report["verdict"] == "warn" and "p2p-enabled" not in by_code(report)


def test_amd_rocm_smi_tables_are_named_and_judge_nothing(run: Run, tmp_path: Path) -> None:
    """vllm-project/vllm#29076 pasted rocm-smi's weight table between eight AMD GPUs where an NVIDIA box's matrix
    would be: before, refused as text topoaudit does not know; it is another vendor's GPUs, not judged."""
    table = (
        "  ============================ ROCm System Management Interface ============================\n"
        "================================ Weight between two GPUs =================================\n"
        "       GPU0         GPU1\n"
        "GPU0   0            40\n"
        "GPU1   40           0\n"
    )
    code, report = judged(run, tmp_path, table)
    assert code == 0 and report["verdict"] == "not judged"
    assert by_code(report)["other-vendor-gpus"]["severity"] == "info"
