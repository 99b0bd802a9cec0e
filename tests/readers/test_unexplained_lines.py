"""Pastes whose lines are recognisably about the GPU stack but that no entry of the catalog explains: read and said
"not judged", never refused and never PASS; JSON-looking log lines are read as a paste, not refused as a damaged
report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import Run
from parse.dev_pastes import dev_paste


def analyzed(run: Run, tmp_path: Path, text: str, *args: str) -> tuple[int, dict[str, Any]]:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    code, out, err = run("analyze", str(paste), "--format", "json", *args)
    assert code in (0, 1), err
    return code, json.loads(out)


@pytest.mark.parametrize(
    "text",
    [
        # an NCCL warning the catalog has no entry for: before, PASS ("1 known message")
        "node1:1:1 [0] misc/odd.cc:12 NCCL WARN Something odd happened here\n",
        # aws-ofi-nccl's own WARN format (aws/aws-ofi-nccl#22, whose AV failure the catalog now names) with one of the
        # plugin's messages the catalog has no entry for (src/nccl_ofi_rdma.cpp): before, refused
        "WARN: Function: platform_config_endpoint Line: 438: NET/OFI Couldn't get FI_OPT_EFA_EMULATED_WRITE. RC: -22, "
        "ERROR: Invalid argument\n",
        # PyTorch's wrapper naming no cause (modelscope/ms-swift#1233): before, FAIL; the threads' experts judge nothing
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.6 ncclSystemError: System "
        "call (e.g. socket, malloc) or external library call failed or device error.\n",
        # an NVSHMEM error the catalog has no entry for: before, refused
        "/repo/nvshmem_src/src/host/init/init.cu:nvshmemi_common_init:1012: nvshmem setup heap failed\n",
    ],
)
def test_an_error_line_without_an_entry_is_not_judged_and_says_so(run: Run, tmp_path: Path, text: str) -> None:
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert "error or warning line(s) that name no cause topoaudit can judge" in report["gate"]["reason"]
    (unexplained,) = [f for f in report["findings"] if f["code"] == "run-failed"]
    assert unexplained["severity"] == "info" and unexplained["message"].startswith(("An error", "A warning", "PyTorch"))


@pytest.mark.parametrize(
    ("text", "signature"),
    [
        ("torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.\n",
         "torch-store-clients-missing"),
        ("torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
         "to (172.17.0.9, 46229).\n", "torch-store-connect-timeout"),
        ("ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!\n", "torch-no-gpu-visible"),
        # NVIDIA/nccl#1538: UCX's handler on a segfault, its frames under it
        ("[worker-0:4682 :0:4682] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))"
         "\n==== backtrace (tid:   4677) ====\n 0 0x0000000000042520 __sigaction()  ???:0\n"
         " 4 0x000000000004c818 ncclRecv()  ???:0\n", "process-crashed-signal"),
    ],
)  # fmt: skip
def test_a_run_that_never_reached_the_gpus_is_named_and_not_judged(
    run: Run, tmp_path: Path, text: str, signature: str
) -> None:
    """A rendezvous that never completed, a process that saw no GPU or crashed where the paste does not say: the
    message is named, and the box is not judged (a known message of this kind used to make a PASS, a crash was
    refused)."""
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    (named,) = [f for f in report["findings"] if f["code"] == "run-failed"]
    assert named["severity"] == "info" and named["evidence"]["signatures"] == [signature]


def test_a_kernel_line_keeps_its_own_reading_and_is_not_said_twice(run: Run, tmp_path: Path) -> None:
    """The kernel-log reader judges an NVRM line; the catalog's fallback stands only on lines no reader judged."""
    text = (
        "Jul 09 10:42:47 node kernel: NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask "
        "failed!\n"
    )
    code, report = analyzed(run, tmp_path, text)
    assert code == 1 and [f["code"] for f in report["findings"] if f["severity"] != "info"] == ["kernel-gpu-error"]
    assert "run-failed" not in {f["code"] for f in report["findings"]}


def test_json_log_lines_of_a_node_agent_are_read_as_a_paste(run: Run, tmp_path: Path) -> None:
    """Before: refused as "invalid JSON ... a truncated or edited file?" (gpud's log, leptonai/gpud#1108)."""
    text = (
        '{"level":"warn","ts":"2025-10-16T10:34:29.644Z","caller":"fabric-manager/component.go:378","msg":"fabric '
        'state is not healthy","reason":"GPU GPU-1182579c: state=Not Supported; GPU GPU-3aead50c: state=Not '
        'Supported"}\n'
        "\u2714 NVIDIA-GB200 checked fabric state\n"
    )
    _, report = analyzed(run, tmp_path, text)
    (state,) = [f for f in report["findings"] if f["code"] == "fabric-not-ready"]
    assert state["severity"] == "warn"  # a GB200 (named hyphenated, as the agent prints it) outside its NVLink domain
    assert report["identified"]["model"] == "NVIDIA-GB200"
    _, pcie = analyzed(run, tmp_path, text.replace("GB200", "H100-PCIe"))
    assert pcie["gate"]["verdict"] == "pass"  # fabric state Not Supported is what PCIe cards report


def test_a_damaged_report_is_still_refused_where_its_json_breaks(run: Run, tmp_path: Path) -> None:
    paste = tmp_path / "report.json"
    paste.write_text('{"schema_version": "1", "gate": {"verdict": "pass"', encoding="utf-8")
    code, _, err = run("analyze", str(paste))
    assert code == 4 and "not JSON (line 1" in err and "report.json" in err


def test_a_bandwidth_stated_in_words_is_recognised_and_held_to_its_tools_own_figures(run: Run, tmp_path: Path) -> None:
    """Before: refused. DeepEP's tuning result (deepseek-ai/DeepEP#344) names what it measured over RDMA and NVLink:
    near DeepEP's own figures (43 GB/s over RDMA, 153 over NVLink on H800), it holds."""
    text = "[tuning] Best dispatch (BF16): SMs 24, NVL chunk 12, RDMA chunk 32: 42.36 GB/s (RDMA), 138.25 GB/s (NVL)\n"
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["gate"]["verdict"] == "pass"
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("deepep-test-result", "info")]
    assert [p["kind"] for p in report["source"]["parts"]] == ["bandwidth-note"]


def test_prose_with_nothing_recognisable_is_still_refused(run: Run, tmp_path: Path) -> None:
    paste = tmp_path / "notes.txt"
    paste.write_text("we bought new servers last week and they are fast\n", encoding="utf-8")
    code, _, err = run("analyze", str(paste))
    assert code == 4 and "not a format topoaudit reads" in err


def test_an_nccl_1_run_that_stopped_after_its_header_hung(run: Run, tmp_path: Path) -> None:
    """Before: refused, "no nccl-tests data row, rank line or failure found" (NVIDIA/nccl#85)."""
    code, report = analyzed(run, tmp_path, dev_paste("nccl-85-p100-hang-after-header"))
    (hung,) = [f for f in report["findings"] if f["code"] == "bench-run-hung"]
    assert code == 1 and hung["message"].startswith("The run on 2 rank(s) printed its setup and then nothing")


def test_text_only_interconnect_tools_print_is_recognised_not_refused(run: Run, tmp_path: Path) -> None:
    """Before: refused with the `topo -m` hint. `fi_info -p efa` names the EFA provider; nothing in it is judged."""
    text = "provider: efa\n    fabric: efa\n    domain: rdmap16s27-rdm\n    type: FI_EP_RDM\n"
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert [(p["kind"], p["first_line"]) for p in report["source"]["parts"]][:1] == [("gpu-text", 1)]


def test_an_ibstat_port_that_is_not_active_warns(run: Run, tmp_path: Path) -> None:
    text = (
        "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Down\n"
        "\t\tPhysical state: Disabled\n\t\tLink layer: InfiniBand\n"
    )
    code, report = analyzed(run, tmp_path, text)
    (down,) = [f for f in report["findings"] if f["code"] == "rdma-port-down"]
    assert code == 0 and report["gate"]["verdict"] == "warn" and down["evidence"]["lines"] == [5]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("bidirectional \nGPU0-GPU0 = 2959.19 GB/s\nGPU0-GPU1 = 260.89 (GB/s) \n", "bandwidth-note"),
        ("(head, rank=0, pid=22828) [node:0]: busbw: 18.973 GBps (151.8 Gbps)\n", "bandwidth-note"),
        ("Bidirectional P2P=Enabled (before fix):\nGPU4\u2194GPU5: 13.5 GB/s\n", "bandwidth-note"),
        ("Uplink 20:01.1\u2192Gen2: PIX GPU0\u21921 = 54.2 GB/s   NODE GPU0\u21924 = 7.0 GB/s\n", "bandwidth-note"),
        (
            "$ srun -n 2 -c 18 --gpus-per-task 1 python3 bench.py --use-ddp\nIter #0: 687.1 img/sec per GPU\n",
            "gpu-text",
        ),
        (
            "Device 0 [GeForce GTX 1080 Ti] PCIe GEN 3@16x \nDevice 1 [GeForce GTX 1080 Ti] PCIe GEN 1@16x \n",
            "gpu-text",
        ),
        ("INFO 07-20 17:27:20 pynccl.py:63] vLLM is using nccl==2.21.5\n", "gpu-text"),
        ("    return torch._C._cuda_getDeviceCount() > 0\ngpu count: 0\n", "gpu-text"),
        ("\u2714 fabric manager found and active\nfabric manager is active\n", "gpu-text"),  # gpud
        (
            "ERROR [3468:4824] ReadNvSwitchStatusAllSwitches() returned No data is available "
            "[/workspaces/dcgm/modules/nvswitch/DcgmModuleNvSwitch.cpp:372] [DcgmNs::DcgmModuleNvSwitch::RunOnce]\n",
            "gpu-text",
        ),  # DCGM's own log
        ("INFO 05-02 11:08:45 [parallel_state.py:1004] rank 0 in world size 4 is assigned as TP rank 0\n", "gpu-text"),
        ("world_size=8, the model loads and then nothing happens\n", "gpu-text"),
        (
            "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks "
            "and are waiting for remainder of ranks for more than 60 seconds. Stalled ops: HorovodBroadcast_fc1_0\n",
            "gpu-text",
        ),
        (
            "+--------------+---------+\n|              |   bandwidth (MB/s)  |\n"
            "            85     0.000 11780.587 11780.587     339.54     339.54          85          85\n"
            "$ UCX_TLS=tcp,cuda_copy,cuda_ipc ucx_perftest dgx202 -t tag_bw -m cuda\n",
            "gpu-text",
        ),
        ("[Vector addition of 500 elements] Failed to allocate B (error code initialization error)!\n", "gpu-text"),
        ("Assertion failed: csrc/deep_ep.cpp:52 'num_ranks <= NUM_MAX_NVL_PEERS'\n", "gpu-text"),
        ("[rank0] skipping fuse_all_gather_matmul: no consumer matmul found for all gather\n", "gpu-text"),
        ("nvmlDeviceGetHandleByIndex returned NVML_ERROR_SYSTEM_NOT_READY\n", "gpu-text"),
        ("shm  64M     0   64M   0% /dev/shm\ntmpfs  252G   12K  252G   1% /proc/driver/nvidia\n", "gpu-text"),
        ("maxBw 721.8\n", "gpu-text"),  # NCCL's "=== System : maxBw %2.1f totalBw %2.1f ===", cut
        ("[2025-03-10 16:21:32 TP0] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0\n", "gpu-text"),
        (
            "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error "
            "code 2. End of file.\n",
            "gpu-text",
        ),
        ("# gdrcopy_sanity\nRunning 28 tests\n", "gpu-text"),  # its summary line is a known message
        ("/dev/infiniband:\ntotal 0\ncrw-rw-rw- 1 root root 231, 192 Mar  6 04:13 uverbs0\n", "gpu-text"),
        # the kernel's APEI report of a corrected PCIe error, and the NVLink subnet manager of a B200 NVL rack
        ("{8}[Hardware Error]:  fru_text: PcieError\n{8}[Hardware Error]:   section_type: PCIe error\n", "gpu-text"),
        ("10.10.10.10: nvlsm: OpenSM 2025.06.5_eb3b4ba_df9bb3c_ae214d2\n", "gpu-text"),
        # ibstat's port fields, Azure's PKEY lines, gpu_burn's failure, CUDA driver calls, topo -p2p's legend
        ("        Rate: 10\n        Base lid: 868\n        SM lid: 334\n        Port GUID: ...\n", "gpu-text"),
        ("PKEY for mlx5_ib0: 0x8001\nPKEY for mlx5_ib1: 0x8001\n", "gpu-text"),
        ("  what():  Error (gpu_burn-drv.cpp:298): OS call failed or operation not supported on this OS\n", "gpu-text"),
        ("dlsym: cuDriverGetVersion - 0x7f928be76e20\ndlsym: cuDeviceGetCount - 0x7f928be76e60\n", "gpu-text"),
        (
            "Legend:\n\n  X    = Self\n  OK   = Status Ok\n  CNS  = Chipset not supported\n"
            "  GNS  = GPU not supported\n",
            "gpu-text",
        ),
        # ucx_perftest's table of a tag_bw run
        (
            "=========== tag_bw ===========\n|    Stage     | # iterations | 50.0%ile | average | overall |\n"
            "Final:                  1000      0.240  1675.942  1671.351    46615.58   46743.62\n",
            "gpu-text",
        ),
        # show_gids (Mellanox's mlnx-tools): the RoCE GIDs of each port
        (
            "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
            "mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv2\tens1f0\n",
            "gpu-text",
        ),
        # rdma-core naming a provider library it lists and cannot load (NVIDIA/nccl#1044: not NCCL's, and harmless)
        (
            "libibverbs: Warning: couldn't load driver 'libipathverbs-rdmav25.so': libipathverbs-rdmav25.so: cannot "
            "open shared object file: No such file or directory\n",
            "gpu-text",
        ),
        ("distributed_backend=nccl\nAll distributed processes registered. Starting with 32 processes\n", "gpu-text"),
        # gdrcopy's test harness, horovodrun --check-build, JAX's device count (gdrcopy#224, horovod#2077, flax#4942)
        ("Running suite(s): Sanity\n&&&& RUNNING basic_cumemalloc\nbuffer size: 327680\n", "gpu-text"),
        ("    [X] PyTorch\n    [ ] MXNet\n\nAvailable Controllers:\n    [X] MPI\n", "gpu-text"),
        ("INFO:absl:JAX local device count: 2\nINFO:absl:JAX process index: 0\n", "gpu-text"),
        # a Slurm step killed, the kernel's out-of-memory kill: the job's end, nothing of its links
        ("srun: error: node01: task 3: Killed\nsrun: Terminating StepId=1234.0\n", "gpu-text"),
        (
            "[12345.678901] Out of memory: Killed process 4242 (python) total-vm:123456kB, anon-rss:98765kB\n",
            "gpu-text",
        ),
        # PyTorch naming its flight recorder off (Crusoe's guide to collective timeouts)
        (
            "Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can "
            "enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.\n",
            "gpu-text",
        ),
        # lspci -vvv's link and ATS lines at full speed (ilya-zlobintsev/LACT#334, NVIDIA/nccl-tests#256)
        (
            "LnkSta: Speed 16GT/s, Width x16\nLnkCap2: Supported Link Speeds: 2.5-16GT/s, Crosslink- Retimer+\n",
            "gpu-text",
        ),
        (
            "\tCapabilities: [480 v1] Address Translation Service (ATS)\n"
            "\t\tATSCtl:\tEnable+, Smallest Translation Unit: 00\n",
            "gpu-text",
        ),
    ],
)
def test_words_about_gpus_and_their_links_are_recognised(run: Run, tmp_path: Path, text: str, kind: str) -> None:
    """Before: refused with the `topo -m` hint; each is recognisably about GPUs, and says nothing judged."""
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert kind in [p["kind"] for p in report["source"]["parts"]]


def test_lspci_acs_control_lines_warn_when_a_bridge_redirects_peer_traffic(run: Run, tmp_path: Path) -> None:
    """Before: refused. `sudo lspci -vvv | grep ACSCtl`, the check NCCL's troubleshooting guide gives."""
    on = "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n"
    code, report = analyzed(run, tmp_path, on)
    assert code == 0 and report["gate"]["verdict"] == "warn"
    assert [f["code"] for f in report["findings"] if f["severity"] == "warn"] == ["pcie-acs-redirect"]
    code, report = analyzed(run, tmp_path, on.replace("+", "-"))
    assert code == 0 and report["gate"]["verdict"] == "not judged"


def test_cuda_samples_simple_p2p_says_which_pairs_have_peer_access(run: Run, tmp_path: Path) -> None:
    """Before: refused. simpleP2P prints cudaDeviceCanAccessPeer for each pair."""
    yes = (
        "> Peer access from NVIDIA A100-SXM4-80GB (GPU0) -> NVIDIA A100-SXM4-80GB (GPU1) : Yes\n"
        "> Peer access from NVIDIA A100-SXM4-80GB (GPU1) -> NVIDIA A100-SXM4-80GB (GPU0) : Yes\n"
    )
    code, report = analyzed(run, tmp_path, yes)
    assert code == 0 and report["gate"]["verdict"] == "pass"
    assert "p2p-available" in [f["code"] for f in report["findings"]]
    code, report = analyzed(run, tmp_path, yes.replace("A100-SXM4-80GB", "L4").replace(": Yes", ": No"))
    assert report["gate"]["verdict"] == "warn"
    assert [f["code"] for f in report["findings"] if f["severity"] == "warn"] == ["p2p-unavailable"]


def test_iblinkinfo_link_lines_are_read_not_refused(run: Run, tmp_path: Path) -> None:
    """NVIDIA/nccl-tests#71: iblinkinfo of a small RoCE fabric, every link Active; before, refused."""
    up = (
        "CA: gpu-v100-0 HCA-1:\n"
        "      0xb88303ffff9f4f6c      1    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    1[  ] "
        '"MF0;ibswitch254:MQM8700/U1" ( )\n'
    )
    code, report = analyzed(run, tmp_path, up)
    assert code == 0 and report["gate"]["verdict"] == "pass"
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("rdma-links-up", "info")]
    down = up + '           3   17[  ] ==(                Down/ Polling)==>             [  ] "" ( )\n'
    _, unused = analyzed(run, tmp_path, down)
    assert {f["code"]: f["severity"] for f in unused["findings"]}["rdma-port-down"] == "info"  # a switch's spare port


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # nvbandwidth's banner and device list, the results cut off: before, refused
        ("nvbandwidth Version: v0.8\nBuilt from Git version: v0.8\n\nDevice 0: NVIDIA H100 80GB HBM3\n", "nvbandwidth"),
        # the header line of a p2pBandwidthLatencyTest matrix, cut before its rows: before, refused
        ("   D\\D     0      1      2      3\n", "p2pBandwidthLatencyTest"),
    ],
)
def test_a_tools_output_with_nothing_to_judge_is_not_judged_and_named(
    run: Run, tmp_path: Path, text: str, said: str
) -> None:
    """An excerpt a reader recognises as its tool's output but that holds nothing it can judge is read as that
    output and said "not judged", naming it: a refusal is for text with nothing recognisable in it."""
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert any(said in issue["message"] for issue in report["input_issues"])


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # nvbandwidth's title and column header with the rows cut off (before: refused, "no GPUs in the input")
        (
            "0     35.19     35.25     35.30     35.03\n\n> Running device_to_host_memcpy_sm.\n"
            "memcpy SM CPU(row) <- GPU(column) bandwidth (GB/s)\n0         1         2         3\n",
            "nvbandwidth",
        ),
        # `topo -m`'s NIC rows and legend without the GPU rows (before: refused, "no GPU rows under it")
        (
            "NIC1\tNODE\tNODE\tNODE\t X \tNODE\tSYS\tSYS\nNIC2\tPXB\tPXB\tNODE\tNODE\t X \tSYS\tSYS\n\nLegend:\n\n"
            "  X    = Self\n",
            "nvidia-smi topo -m",
        ),
        # `nvidia-smi -q`'s memory, compute mode and utilization fields without the GPU's header (before: refused)
        (
            "        Total                       : 256 MiB\n        Used                        : 3 MiB\n"
            "    Compute Mode                    : Default\n    Utilization\n"
            "        Gpu                         : 0 %\n",
            "nvidia-smi-q",
        ),
        # its ECC block alone
        (
            "    ECC Errors\n        Volatile\n            SRAM Correctable        : N/A\n"
            "            SRAM Uncorrectable      : N/A\n",
            "nvidia-smi-q",
        ),
        # Open MPI's notice that a process of the job failed
        (
            "Primary job  terminated normally, but 1 process returned\n"
            "a non-zero exit code. Per user-direction, the job has been aborted.\n",
            "",
        ),
        # Open MPI's notice that a peer process went away (before: refused)
        (
            "An MPI communication peer process has unexpectedly disconnected.  This\nusually indicates a failure in "
            "the peer process (e.g., a crash or\notherwise exiting without calling MPI_FINALIZE first).\n",
            "",
        ),
    ],
)
def test_an_excerpt_cut_before_anything_to_judge_is_not_judged(run: Run, tmp_path: Path, text: str, said: str) -> None:
    """Windows of real pastes cut where people cut them: recognised, nothing in them to judge, so not refused."""
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert said in json.dumps(report["source"])


def test_the_pci_block_of_nvidia_smi_q_without_its_gpu_header_judges_the_link(run: Run) -> None:
    """Before: not judged (no reader took it). One GPU passed through to a VM at x8 of x16
    (NVIDIA/nvidia-container-toolkit#236): the link is judged from the block alone."""
    paste = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"
    code, out, _ = run(
        "analyze", str(paste / "nvidia-container-toolkit-236-smi-q-pcie-x8-passthrough.txt"), "--format", "json"
    )
    report = json.loads(out)
    (link,) = [f for f in report["findings"] if f["code"] == "pcie-link-degraded"]
    assert code == 0 and link["severity"] == "warn" and "0000:01:00.0 x8 of x16" in link["message"]


def test_the_nvlink_answer_of_topo_p2p_alone_is_judged_as_gpus_without_nvlink(run: Run, tmp_path: Path) -> None:
    """Before: PASS with nothing judged (the pair shown as "?"). `nvidia-smi topo -p2p n` answers "NVLink between
    the pair", NS for no (axolotl-ai-cloud/axolotl#3132, a RunPod pod): what the model decides, as with `topo -m`."""
    matrix = "        GPU0    GPU1\n GPU0   X       {cell}\n GPU1   {cell}      X\n"
    text = "$ nvidia-smi topo -p2p n\n" + matrix.format(cell="NS")
    code, report = analyzed(run, tmp_path, text)
    (absent,) = [f for f in report["findings"] if f["code"] == "nvlink-absent"]
    assert code == 0 and report["verdict"] == "warn" and absent["severity"] == "warn"
    assert "GPU0-GPU1" in absent["message"] and "-p2p r" in absent["message"]
    code, report = analyzed(run, tmp_path, text, "--gpu-model", "L40S")  # PCIe cards: no NVLink by design
    assert report["verdict"] == "pass" and [
        f["severity"] for f in report["findings"] if f["code"] == "nvlink-absent"
    ] == ["info"]
    code, report = analyzed(run, tmp_path, "$ nvidia-smi topo -p2p n\n" + matrix.format(cell="OK"))
    assert "nvlink-absent" not in [f["code"] for f in report["findings"]]


@pytest.mark.parametrize(
    "header",
    [
        ">                                                 out-of-place                    in-place\n"
        ">      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n",
        "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
        "--------------------------------------------------------------------------------------------------------\n",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw"
        " #wrong\n",
    ],
)
def test_a_table_header_and_nothing_after_it_is_a_hung_run(run: Run, tmp_path: Path, header: str) -> None:
    """nccl-tests' column names with no row under them, today's or 1.x's, with or without the line above: the run
    stalled after printing its header (NVIDIA/nccl#104: ACS blocked the peer copies). Before: 1.x's not judged,
    the column names alone refused."""
    code, report = analyzed(run, tmp_path, header)
    assert code == 1 and [f["code"] for f in report["findings"] if f["severity"] == "fail"] == ["bench-run-hung"]


def test_a_program_s_table_is_not_judged_and_says_what_it_was(run: Run, tmp_path: Path) -> None:
    """A Ray Tune table of failed trials (ray-project/ray#30333): before, refused as "not a format topoaudit reads"
    with a hint to capture topo -m; it is a program's output with nothing about the interconnect in it."""
    text = (
        "| Trial name               |   # failures | error file |\n"
        "|--------------------------+--------------+------------|\n"
        "| TorchTrainer_96bfe_00000 |            1 | error.txt  |\n"
    )
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert [(p["kind"], p["read_by"]) for p in report["source"]["parts"]] == [("program-output", "")]
    assert report["findings"] == []


def test_an_all_reduce_bench_table_is_read_and_its_collapse_warned(run: Run, tmp_path: Path) -> None:
    """Before: not judged, a table no reader read. ml-engineering's all_reduce_bench.py prints its sweep as a Markdown
    table; read as a sweep, it is held to itself: busbw that falls from 1 GiB on to a fifth of its best is a path
    that cannot carry large messages, whatever the box."""
    table = (
        "| payload |    busbw   |    algbw   |\n| ------: | ---------: | ---------: |\n"
        "|    1MiB |  39.93GBps |  22.82GBps |\n|  256MiB | 436.15GBps | 249.23GBps |\n"
        "|    1GiB |  80.11GBps |  45.78GBps |\n|    4GiB |  81.20GBps |  46.40GBps |\n"
    )
    code, report = analyzed(run, tmp_path, table)
    assert code == 0 and report["gate"]["verdict"] == "warn"
    assert [p["kind"] for p in report["source"]["parts"]] == ["nccl-tests"]
    assert {f["code"] for f in report["findings"] if f["severity"] == "warn"} == {"bench-sweep-collapse"}
