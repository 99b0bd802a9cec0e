"""A mixed paste is split into parts of one kind each, with their line ranges, so each can be read by its reader."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from topoaudit.parse.paste_parts import KINDS, Part, part_text, split_parts
from topoaudit.parse.prefixes import strip_prefixes

PASTES = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"

# Real pastes of the corpus's dev part and the parts they hold: (kind, first line, last line).
REAL = [
    ("accelerate-1317-pdsh-multinode-net-socket", [("nccl-log", 1, 13)]),
    ("aikitoria-12-2x5070-topo-phb-cmdline", [("topo-matrix", 1, 5)]),
    ("azhc-142-h200-vm-allreduce-480", [("nccl-tests", 1, 19)]),
    ("azhc-162-ncv5-gpu-bw-by-design", [("nhc", 1, 3)]),
    ("club3090-1130-2x5090-p2p-gns-spaces", [("p2p-matrix", 1, 14)]),
    ("do-fm-doc-fabric-in-progress-grep", [("nvidia-smi-q", 2, 12)]),
    ("dra-626-fabric-summary-unhealthy", [("nvidia-smi-q", 1, 9)]),
    ("hpejp-dl380-2xa100pcie-smi-table", [("gpu-text", 1, 2), ("nvidia-smi-table", 3, 25)]),
    ("illinois-76-titanv-rminitadapter-failed", [("kernel-log", 1, 4)]),
    ("nccl-1197-hopper-graph-nvs-4pcisw", [("nccl-log", 1, 31)]),
    ("nccl-1412-ib-no-gdrdma-tail-33gbs", [("nccl-log", 1, 2), ("nccl-tests", 3, 5)]),
    ("nccl-1608-h100nvl-nvlink-status-12of18", [("nvlink-status", 1, 20)]),
    ("nccl-749-topofile-pci-bottleneck-line", [("nccl-xml", 1, 1)]),
    ("nccl-1939-gdr-disabled-hca0", [("nccl-log", 1, 1)]),
    ("nccl-199-gdb-bt-hang-v100", [("other", 1, 1), ("stack", 2, 8)]),
    ("nccltests-68-c4140-4xv100-nv2-mlx5col", [("topo-matrix", 2, 18)]),
    ("nccltests-296-2x5090-nvidia-smi-table", [("nvidia-smi-table", 1, 15)]),
    ("nccltests-6-unhandled-cuda-one-line", [("nccl-tests", 1, 2)]),
    ("nvbw-34-pattern-assert-8xa100", [("nvbandwidth", 1, 20)]),
    ("nvsentinel-1481-dcgm-nvlink-down-pcie", [("dcgm", 1, 6)]),
    ("pytorch-121209-torchrun-elastic-summary-only", [("traceback", 1, 29)]),
    ("pytorch-130113-nvls-init-error-3-ddp", [("nccl-log", 1, 13), ("traceback", 14, 18)]),
    ("pytorch-177472-aws-h100-nvls-bind-401-traceback", [("traceback", 1, 6)]),
    ("pytorch-1637-p2pbw-1080ti-hangs", [("p2p-matrix", 1, 29)]),
    ("ray-16979-raysgd-ipc-217-visible-devices", [("traceback", 1, 1), ("nccl-log", 2, 10)]),
    ("ray-40758-proxy-call-rank0-connect", [("traceback", 1, 16)]),
    ("vllm-5484-trace-log-before-hang-bootstrap", [("gpu-text", 1, 6), ("nccl-log", 7, 15)]),
    ("vllm-19607-topo-2gpu-nv12-8nic", [("topo-matrix", 1, 17)]),
    ("torchtitan-708-multinode-wps-log", [("gpu-text", 1, 5)]),  # torchrun's [rank0]: a multi-GPU job's lines
    ("deepspeed-7044-zero2-hang-step-trace-log", [("gpu-text", 1, 26)]),  # its own prints, naming devices 0 to 7
    ("tf-48502-xla-ncclallreduce-unsupported-op", [("gpu-text", 2, 12)]),  # TensorFlow's NcclAllReduce op
    ("trtllm-1240-a100-pcie-benchmark-tail", [("gpu-text", 1, 15)]),  # TensorRT-LLM's tokensPerSec lines
    ("nccl-tests-26-mpi-orted-debug-hang", [("gpu-text", 1, 3)]),  # Open MPI's runtime: [[jobid,0],rank] names
    ("llamafactory-4620-2node-a10-trainer-banner", [("gpu-text", 1, 13)]),  # DeepSpeed's ZeRO-3 settings, a trainer
    ("yolox-646-best-guess-gpu-barrier-terminated", [("gpu-text", 1, 5)]),  # the [W ProcessGroupNCCL.cpp:N] prefix
    ("apollo-4-fairseq-nmt-reference-log-dist-init", [("gpu-text", 1, 12)]),  # fairseq: distributed init (rank 3)
    ("slurm-job-exporter-4-dcgmi-field-list", [("gpu-text", 1, 17)]),  # dcgmi's field names (xid_errors, pcie_...)
    ("mxnet-4062-kvstore-device-2gpu-2p3gbs", [("gpu-text", 1, 9)]),  # MXNet's kvstore bandwidth tool
    ("onecat-vllm-6-v100-banner-not-judged", [("gpu-text", 1, 6)]),  # vLLM's banner, its (APIServer pid=1) prefix
]


@pytest.mark.parametrize(("paste", "expected"), REAL, ids=[row[0] for row in REAL])
def test_a_real_paste_splits_into_its_parts(paste: str, expected: list[tuple[str, int, int]]) -> None:
    parts = split_parts((PASTES / f"{paste}.txt").read_text())
    assert [(p.kind, p.first, p.last) for p in parts] == expected


def test_two_numbered_devices_are_not_yet_a_multi_gpu_log() -> None:
    """ "device 1" and "device 2" may be any devices; four numbered ones are a multi-GPU run's own log."""
    two = "copying block 7 to device 1\ncopying block 8 to device 2\n"
    assert [p.kind for p in split_parts(two)] == ["other"]
    four = two + "copying block 9 to device 3\ncopying block 10 to device 0\n"
    assert [p.kind for p in split_parts(four)] == ["gpu-text"]


PY_SPY = """\
Process 1234: python train.py
Python v3.10.12 (/usr/bin/python3.10)

Thread 0x7F1C2B4E5740 (active): "MainThread"
    all_reduce (torch/distributed/distributed_c10d.py:2050)
    train_step (train.py:88)
"""


def test_a_debugger_s_stack_is_a_part_even_without_its_command() -> None:
    """gdb frames pasted without `(gdb) bt`, and a py-spy dump: a process's stack, recognised (not judged)."""
    frames = (
        "#0  0x00007f2e766c9827 in sched_yield () at ../sysdeps/unix/syscall-template.S:84\n#1  0x0040 in main ()\n"
    )
    assert [(p.kind, p.first, p.last) for p in split_parts(frames)] == [("stack", 1, 2)]
    assert [(p.kind, p.first, p.last) for p in split_parts(PY_SPY)] == [("stack", 1, 6)]
    native = 'Thread 1302975 (active): "MainThread"\n    sched_yield (libc.so.6)\n'  # py-spy dump --native
    assert [(p.kind, p.first, p.last) for p in split_parts(native)] == [("stack", 1, 2)]
    names_only = (
        "#0  __memcpy_avx_unaligned_erms          \u2190 SIGSEGV\n#1  ofi_memcpy\n#10 mooncake::EfaContext::pollCq\n"
    )
    assert [(p.kind, p.first, p.last) for p in split_parts(names_only)] == [("stack", 1, 3)]
    no_file = " 2 0x00000000000112e5 progress_recv()  :0\n 3 0x00000000000113dc nvshmemt_ibrc_progress()  :0\n"
    assert [(p.kind, p.first, p.last) for p in split_parts(no_file)] == [("stack", 1, 2)]  # UCX's handler, no file
    # six of them in a row read as numbered lines, and their numbers are taken off: the frames are still a stack
    numbered = "".join(f" {i} 0x00000000000{i}12e5 progress_recv{i}()  ???:0\n" for i in range(2, 8))
    assert [(p.kind, p.first, p.last) for p in split_parts(numbered)] == [("stack", 1, 6)]
    assert [p.kind for p in split_parts("#  Rank  0 Group  0 Pid 4242 on node1 device  0 [0x1b] A100\n")] == [
        "nccl-tests"
    ]


def test_nccl_lines_running_through_an_nccl_tests_run_leave_both_whole() -> None:
    parts = split_parts((PASTES / "nccltests-124-b-3090-nvlink-stub-libcuda.txt").read_text())
    tests, log = parts
    assert (tests.kind, tests.span, log.kind, log.span) == ("nccl-tests", "lines 1-53", "nccl-log", "lines 6-46")
    assert tests.lines == (1, 2, 3, 4, 5, 39, 40, 41, 42, 47, 48, 49, 50, 51, 52, 53)
    assert log.lines == (*range(6, 39), 44, 45, 46)
    assert not set(tests.lines) & set(log.lines)


MIXED = """\
Here is what I see on the node, any idea?

[rank0]: node7:1234:1290 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
[rank0]: node7:1234:1290 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct

$ nvidia-smi topo -m
        GPU0    GPU1    CPU Affinity    NUMA Affinity
GPU0     X      SYS     0-31            0
GPU1    SYS      X      32-63           1

Legend:
  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)

Traceback (most recent call last):
  File "train.py", line 12, in <module>
    dist.all_reduce(t)
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1333, unhandled system error, NCCL version 2.21
ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
Last error:
socketStartConnect: Connect to 10.0.0.2<45763> failed : Connection refused

Thanks!
"""


def test_a_mixed_paste_names_its_parts_and_the_command_goes_with_its_output() -> None:
    parts = split_parts(MIXED)
    assert [(p.kind, p.span) for p in parts] == [
        ("other", "line 1"),
        ("nccl-log", "lines 3-4"),
        ("topo-matrix", "lines 6-13"),
        ("traceback", "lines 15-21"),
        ("other", "line 23"),
    ]
    matrix = parts[2]
    assert matrix.recognised == (6, 7, 8, 9, 11, 12, 13)  # the command, header, rows and legend
    assert parts[3].recognised == (15, 16, 17, 18, 19, 20)
    assert parts[3].lines[-1] == 21  # NCCL's message after "Last error:" came with them


def test_a_parts_text_keeps_the_pastes_line_numbers() -> None:
    lines = strip_prefixes(MIXED)
    log = split_parts(lines)[1]
    text = part_text(lines, log).splitlines()
    assert len(text) == 4
    assert text[:2] == ["", ""]
    assert text[2] == "node7:1234:1290 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"  # the [rank0]: prefix is off


def test_every_non_blank_line_of_every_dev_paste_is_in_exactly_one_part() -> None:
    dev = _dev()
    for path in sorted(PASTES.glob("*.txt")):
        if path.stem not in dev:
            continue
        lines = strip_prefixes(path.read_text())
        parts = split_parts(lines)
        owned = [n for p in parts for n in p.lines]
        assert len(owned) == len(set(owned)), path.stem
        blank = {"", "--", "[...]"}
        assert set(owned) == {n.number for n in lines if n.text.strip() not in blank and n.text.strip(". ")}, path.stem
        assert all(p.kind in KINDS for p in parts)
        assert all(set(p.recognised) <= set(p.lines) for p in parts)
        assert [p.first for p in parts] == sorted(p.first for p in parts)


def _dev() -> frozenset[str]:
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "real"))
    from corpus import load_corpus  # the corpus's own reader: the held-back part stays unread

    return frozenset(p.id for p in load_corpus() if p.part == "dev")


def test_text_no_recogniser_knows_is_one_other_part() -> None:
    assert split_parts("hello\nworld\n") == (Part("other", 1, 2, (1, 2)),)
    assert split_parts("\n\n") == ()


def test_a_list_of_gpus_alone_is_not_nvlink_status() -> None:
    text = "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-e1924eea-b9bb-d537-39f2-b345087fa145)\n"
    assert [p.kind for p in split_parts(text)] == ["gpu-list"]  # `nvidia-smi -L`
    assert [p.kind for p in split_parts("$ nvidia-smi -L\n" + text)] == ["gpu-list"]
    with_links = text + "\t Link 0: 14.062 GB/s\n"
    assert [(p.kind, p.recognised) for p in split_parts(with_links)] == [("nvlink-status", (1, 2))]


def test_a_kubernetes_node_description_is_a_part_with_its_command() -> None:
    """`kubectl describe node` pasted after an NCCL log: its Capacity and Allocatable sections are one part, the
    command with them, and the NCCL lines stay their own."""
    paste = (
        "node1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
        "node1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "\n"
        "$ kubectl describe node node1\n"
        "Capacity:\n"
        "  cpu:                        128\n"
        "  nvidia.com/gpu:             8\n"
        "Allocatable:\n"
        "  cpu:                        128\n"
        "  nvidia.com/gpu:             6\n"
    )
    assert [(p.kind, p.first, p.last) for p in split_parts(paste)] == [("nccl-log", 1, 2), ("kubernetes-node", 4, 10)]


def test_lspci_s_resizable_bar_of_a_gpu_is_gpu_text() -> None:
    """The BAR1 a patched P2P driver needs large, pasted from `lspci -vv`: judged as GPU text, not refused."""
    text = "\tCapabilities: [bb0 v1] Physical Resizable BAR\n\t\tBAR 1: current size: 32GB, supported: 64MB 128MB\n"
    assert [p.kind for p in split_parts(text)] == ["gpu-text"]


def test_a_gpu_sized_bar_error_rates_nixl_lines_and_the_pcie_tree_are_gpu_text() -> None:
    """A 32 GB prefetchable BAR (only a GPU's BAR1 is that large), mlxlink's bit-error rates of an InfiniBand port,
    NIXL's transfer timings, `lspci -t`'s tree and a monitor's NVLink field names: words of the GPU stack, judged as
    not judged, never refused."""
    for text in (
        "Region 1: Memory at 17800000000 (64-bit, prefetchable) [size=32G]\n",
        "1 | Raw Physical BER : 2E-8 |\n",
        "2025-05-28T21:32:46.158Z  INFO nixl.write_blocks: Time to init xfer: 1800.3110489808023 ms\n",
        "-+-[0000:00]-+-00.0\n |           +-01.1-[01]--+-00.0\n",  # `lspci -t`: the PCIe tree, unnamed
        "csmenv::warning  | GPU 0 nvlink_bandwidth_l0 version = 16781336 fieldId = 440 fieldType = 105 status = -6\n",
        "INFO 03-20 23:20:24 [config.py:1515] Defaulting to use mp for distributed inference\n",  # vLLM's executor
    ):
        assert [p.kind for p in split_parts(text)] == ["gpu-text"], text
    assert [p.kind for p in split_parts("Region 0: Memory at fb000000 (32-bit, non-prefetchable) [size=16M]\n")] == [
        "other"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500\n        inet 10.0.0.5  netmask 255.255.255.0\n",
        "2: ens5f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP group default qlen 1000\n",
        "$ mlnx_qos -i eth1\nPriority trust state: dscp\nPFC configuration:  enabled 0 0 0 1 0 0 0 0\n",
        "$ cat /sys/class/infiniband/mlx5_0/ports/1/rate\n400 Gb/sec (4X NDR)\n",
    ],
    ids=["ifconfig", "ip-addr", "mlnx-qos", "ib-sysfs"],
)
def test_a_host_s_network_settings_are_recognised_not_refused(text: str) -> None:
    """The interfaces NCCL and Gloo may pick, and RoCE's QoS: pasted in socket and RDMA threads, not judged on their
    own, but never "not a format topoaudit reads"."""
    assert [p.kind for p in split_parts(text)] == ["gpu-text"]


@pytest.mark.parametrize(
    "text",
    [
        "| Trial name               |   # failures |\n|--------------------------+--------------|\n"
        "| TorchTrainer_96bfe_00000 |            1 |\n",
        "root@server01:~# hostnamectl\n Static hostname: server01\n         Chassis: server\n"
        "Operating System: Ubuntu 22.04.5 LTS\n          Kernel: Linux 5.15.0-134-generic\n",
        "Temperature sensor #0x10 | Upper Non-critical going high\n"
        "Temperature sensor #0x0e | Upper Non-critical going high\n",
        "r06-12  13104        r06-08  11312        r06-05  10192\n"
        "r06-03  11984        r06-14  11200        r06-07   9744\n",
        "2022-11-15 19:26:36,618\tERROR tune.py:773 -- Trials did not complete\n",
        "Running tokenizer on dataset (num_proc=80):  12%|█▏        | 422000/3643454 [01:38<17:19]\n",
        "/bin/bash: line 1: /usr/sbin/sshd: No such file or directory\n",
        "$ lspci -v | grep Mellanox\n01:00.0 Network controller: Mellanox Technologies MT27500 Family [ConnectX-3]\n"
        "\tSubsystem: Mellanox Technologies MT27500 Family [ConnectX-3]\n",
        "I1120 11:09:23.594488 203018 pybind_client.cpp:218] Mounting segment: 13421772800 bytes\n",
        "{{- if .BackoffLimit }}\nbackoffLimit: {{.BackoffLimit}}\n{{- end }}\ntemplate:\n  metadata:\n"
        "    labels:\n      app: health-check\n",
        "    max_batch_size: None,\n    cuda_graphs: None,\n    port: 80,\n",
        "[WARNING] [runner.py:196:fetch_hostfile] Unable to find hostfile, will proceed with training with local "
        "resources only.\n",
        "[NeMo I 2024-05-08 21:28:45 modelPT:724] Optimizer config = MegatronDistributedFusedAdam (\n"
        "    Parameter Group 0\n        betas: [0.9, 0.98]\n        eps: 1e-08\n        lr: 5e-06\n    )\n"
        "[NeMo I 2024-05-08 21:28:45 lr_scheduler:772] Scheduler not initialized as no `sched` config supplied\n",
        "(WorkerDict pid=261640) After building sharding manager, memory allocated (GB): 0.92, reserved (GB): 2.11\n"
        "(WorkerDict pid=261640) After building rollout, memory allocated (GB): 0.92, memory reserved (GB): 2.11\n",
        "Step\tImg/sec\ttotal_loss\n1\timages/sec: 3.7 +/- 0.0 (jitter = 0.0)\t9.155\n"
        "10\timages/sec: 4.9 +/- 2.7 (jitter = 2.2)\t9.047\n",
        "terminate called after throwing an instance of 'std::out_of_range'\n"
        "  what():  IB transport out of range: 1 >= 1\n",
        "void ScatterGetBw(size_t count, int typesize, double sec, double* algBw, double* busBw, int nranks) {\n"
        "double baseBw = (double)(count * nranks * typesize) / 1.0E9 / sec;\n\n*algBw = baseBw;\n}\n",
        "export MASTER_ADDR=10.0.0.1\nexport MASTER_PORT=29500\nexport WORLD_SIZE=16\n",
        "[Service]\nExecStart=/usr/bin/python train.py\nRestart=always\n",
        "goroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d\nexit status 2\n",
        "Command Line Args: Namespace(config_file='configs/R-50-grid.yaml', num_gpus=2, num_machines=1)\n",
        "Machine (1007GB total)\n  Package L#0 + L3 L#0 (300MB)\n    Group0 L#0\n      NUMANode L#0 (P#0 251GB)\n"
        "      ...\n      HostBridge\n        PCIBridge\n          PCIBridge\n",
        "core file size          (blocks, -c) 0\ndata seg size           (kbytes, -d) unlimited\n"
        "open files                      (-n) 1048576\n",
        "Linux gpu-node-01 5.15.0-91-generic #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023 x86_64 GNU/Linux\n",
        '<?xml version="1.0" ?>\n<config>\n\t<threads>8</threads>\n</config>\n',
        "available: 2 nodes (0-1)\nnode 0 cpus: 0 1 2 3\nnode 0 size: 515677 MB\nnode distances:\nnode   0   1\n"
        "  0:  10  21\n  1:  21  10\n",
        "MLNX_OFED_LINUX-5.8-1.0.1.1:\n",
        "MST modules:\n------------\n    MST PCI module is not loaded\n\nMST devices:\n------------\n"
        "/dev/mst/mt4123_pciconf0         - PCI configuration cycles access.\n",
        "# Port counters: Lid 12 port 1 (CapMask: 0x5A00)\nPortSelect:......................1\n"
        "SymbolErrorCounter:..............0\nPortXmitWait:....................12345\n",
        "[LOG_CAT_ML] component basesmuma is not available but requested in hierarchy: basesmuma,p2p\n"
        "[LOG_CAT_ML] ml_discover_hierarchy exited with error\n",
        "[rank: 0] Seed set to 42\nInitializing distributed: GLOBAL_RANK: 0, MEMBER: 1/5\n",
        "kill all testing process of ps lite for user \n[09:28:39] scheduler /src/dmlc/logging.h:301: [09:28:39] "
        "/src/van.cc:601: Check failed: (my_node_.port) != (-1) bind failed\n",
        "0.01.252.539 I print_info: max token length      = 256\n"
        "0.01.790.609 I load_tensors: offloaded 66/66 layers to GPU\n",
        "Welcome to Ubuntu 22.04.5 LTS (GNU/Linux 5.15.0-142-generic x86_64)\n\n"
        " * Documentation:  https://help.ubuntu.com\n\n System information as of Tue Sep 23 07:49:39 AM UTC 2025\n\n"
        "  System load:  3.05                Temperature:            64.0 C\n"
        "Expanded Security Maintenance for Applications is not enabled.\n"
        "Last login: Tue Sep 23 07:15:31 2025 from 128.1.103.101\n",
        "# club-3090 rig report\n\n## System\n\n- **OS:** Ubuntu 24.04.4 LTS\n- **Kernel:** 7.0.0-28-generic\n\n"
        "## CPU + RAM\n\n- **CPU:** AMD Ryzen 9 9950X3D 16-Core Processor (32 threads)\n",
        "PACKAGE                 IMAGE1 (nightly-2023-10-25)        IMAGE2 (nightly-2023-10-20)\n"
        "-Babel                  2.13.1, 30.7M                      2.13.0, 30.7M\n"
        "-jaxlib                 0.4.20.dev20231025, 375.2M         0.4.20.dev20231020, 375M\n",
        "...\n(NORMAL      ) NumClassCheckHook                  \n(LOW         ) IterTimerHook                      \n"
        " -------------------- \nbefore_train_iter:\n(VERY_HIGH   ) StepLrUpdaterHook                  \n",
        "Generating (239 / 1024 tokens)ggml/src/ggml-backend-meta.cpp:1052: GGML_ASSERT(split_state.ne[j] == sum) "
        "failed\n",
        "python3: src/alloc.c:88: pool_take: Assertion `slot < n' failed.\n",
        "[...]\n[c11-8.cluster:113971][bcol_basesmuma_component.c:501:hmca_bcol_basesmuma_init_query] BCOL-BASESMUMA "
        "Failed to create rcache for KNEM device\n",
        "65536                1782.01\n131072               1804.88\n262144               1792.01\n",
        "info.va: 7f8293a00000\ninfo.mapped_size: 131072\ninfo.page_size: 65536\ninfo.mapped: 1\n"
        "info.wc_mapping: 1\npage offset: 0\nuser-space pointer:0x7f82b2423000\n"
        "writing test, size=131072 offset=0 num_iters=10000\n",
        "     Active: failed (Result: exit-code) since Mon 2024-07-01 14:43:57 UTC; 5s ago\n",
        "0000\n001d\n001d\n0000\n",
        "(trnighlty) root@gpu1:/mnt/others# torchx run -s local_cwd dist.ddp -j 1x2 --gpu 2 --script t.py\n"
        "torchx 2023-03-15 14:37:30 INFO     Waiting for the app to finish...\n"
        "local_cwd://torchx/test_installation-hbxsswvvc7brnc\n"
        "test_installation/0 master_addr is only used for static rdzv_backend\n",
        "batch,num_prompts,RPS,RPM,FTL(ave)(s),throughput(out tok/s)\n128,10,0.009,0.533,-,2.287\n",
        "= PERFORMANCE OVERVIEW\nRequest Throughput (req/sec):                     248.4751\n"
        "Per User Output Throughput [w/ ctx] (tps/user):   0.5350\n[Latency] P50    : 54486.1063\n"
        "[Latency] P90    : 64358.7218\n",
        "WARNING: Logging before InitGoogleLogging() is written to STDERR\n"
        "F20250701 23:13:36.927526   844 transport.cc:573] Check failed: rdma_ctx_map_.find(peer_id) == end()\n"
        "*** Check failure stack trace: ***\n",
        "1 node 2 gpus: `Loop time of 167.52 on 2 procs for 20000 steps with 6504048 atoms`\n",
        "se02gn644,se02gn699     49.36\nse02gn632,se02gn641     88.36 \n"
        "se02gn284,se02gn678     49.28  # crossing TOR\n",
        "------------------------ arguments ------------------------\n"
        "      accumulate_allreduce_grads_in_fp32 .............. False\n      adam_beta1 .............. 0.9\n",
        '{\n "nodes": {\n  "1": {\n   "status": "READY",\n   "host": "192.168.150.123",\n',
        "watchdog: BUG: soft lockup - CPU#98 stuck for 22s!\n",
        # SkyPilot's logger (skypilot-org/skypilot#3702)
        "I 06-27 12:40:49 optimizer.py:695] == Optimizer ==\n"
        "I 06-27 12:40:49 optimizer.py:718] Estimated cost: $0.0 / hour\n",
        "pretrain_gpt.py: error: unrecognized arguments: --local_rank=1\n",  # argparse (Megatron-DeepSpeed#178)
        # zsh's arrow prompt and kubectl get's table (kubeflow/trainer#1856)
        "\u279c kubectl get pytorchjobs --namespace=kubeflow\n"
        "NAME             STATE   AGE\npytorch-simple           30m\n",
        # a shell loop over sysfs and what it printed (kubernetes/kubernetes#136431)
        'root@gpu3:~# for d in /sys/bus/pci/devices/*; do\n  [[ -f "$d/vendor" ]] && \\\n'
        '  printf "%s -> NUMA %s\\n" "$(basename $d)" "$(cat $d/numa_node)"\ndone\n'
        "0000:25:00.0 -> NUMA 0\n0000:81:00.0 -> NUMA 1\n",
    ],
    ids=[
        "ascii-table",
        "hostnamectl",
        "ipmi-sel",
        "aligned-columns",
        "log-line",
        "progress-bar",
        "shell-error",
        "lspci-devices",
        "glog-line",
        "manifest-template",
        "struct-fields",
        "logger-prefix-then-prose",
        "logger-line-then-struct",
        "ray-worker-lines",
        "tab-separated-columns",
        "cxx-uncaught-exception",
        "c-source",
        "shell-exports",
        "ini-config",
        "go-panic-stack",
        "argparse-namespace",
        "hwloc-lstopo",
        "ulimit-a",
        "uname-a",
        "xml-document",
        "numactl-hardware",
        "ofed-info",
        "mst-status",
        "perfquery-counters",
        "hcoll-logger",
        "lightning-start",
        "dmlc-logger",
        "llama-cpp-logger",
        "login-banner",
        "markdown-report",
        "columns-of-several-words",
        "fixed-width-padded-rows",
        "ggml-assert",
        "c-assert",
        "hcoll-source-logger",
        "osu-rows-without-header",
        "gdrcopy-fields-read-as-hosts",
        "systemctl-state-line",
        "setpci-register-words",
        "prompt-after-a-virtualenv-name",
        "csv-rows",
        "benchmark-summary-figures",
        "glog-with-the-year",
        "lammps-loop-time",
        "pairs-of-hosts-and-their-figures",
        "arguments-with-dotted-leaders",
        "json-document",
        "kernel-soft-lockup",
        "skypilot-logger",
        "argparse-error",
        "zsh-prompt-and-kubectl-table",
        "shell-loop-and-pci-addresses",
    ],
)
def test_a_program_s_output_with_no_gpu_words_is_recognised_as_such(text: str) -> None:
    """Tables, a tool's fields, a logger's lines: text a program printed, pasted in GPU threads beside what failed.
    Recognised as a program's output (not judged), never refused as if nothing in it were recognisable."""
    assert [p.kind for p in split_parts(text)] == ["program-output"]


@pytest.mark.parametrize(
    "text",
    [
        "/bin/bash: line 1: /usr/sbin/sshd: No such file or directory\n",
        "Dec  1 10:11:12 node1 systemd[1]: Started Session 3 of user root.\n",
    ],
    ids=["shell-error", "syslog-line"],
)
def test_a_program_s_output_indented_as_a_code_block_is_recognised_the_same(text: str) -> None:
    """Markdown's four-space code block indents every line; the indent is the page's, not the program's."""
    assert [p.kind for p in split_parts(text)] == ["program-output"]
    assert [p.kind for p in split_parts(textwrap.indent(text, "    "))] == ["program-output"]


@pytest.mark.parametrize(
    "text",
    [
        "the cluster was slow yesterday\nplease help\n",
        "Note: this is slow\nplease help\n",
        "Hi all,\nI have an issue: the run hangs.\nAny idea?\n",
        "Hi,\nwhen I run the training on two nodes it hangs forever.\nIf I run it on one node it works:\nany idea?\n",
        "        GPU0    GPU1    C\n",  # a topo -m header cut short: a capture's remains, refused with its hint
    ],
    ids=["prose", "prose-with-a-colon", "greeting", "question-with-a-condition", "topo-header-remains"],
)
def test_prose_and_a_capture_s_remains_are_not_a_program_s_output(text: str) -> None:
    assert [p.kind for p in split_parts(text)] == ["other"]


def test_a_long_stretch_is_judged_by_words_spread_over_it() -> None:
    """A stretch's words are looked for in lines spread over it, not in every line of a long one: a log whose
    GPU words recur only after its first 3000 lines is still recognised as the GPU stack's text."""
    lines = [f"step {i} loss 0.{i % 97:02d}" for i in range(6000)]
    for i in range(3000, 6000, 50):
        lines[i] = f"step {i} torch.distributed barrier on world_size 8"
    assert [p.kind for p in split_parts("\n".join(lines) + "\n")] == ["gpu-text"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (" Out of bounds values : 0 OK\n Avg bus bandwidth    : 0.0125732\n", "nccl-tests"),
        ("    Replays Since Reset             : 128\n", "nvidia-smi-q"),
    ],
    ids=["nccl-tests-footer-without-hash", "smi-pcie-replays"],
)
def test_a_tool_s_lone_lines_are_recognised_as_its_output(text: str, kind: str) -> None:
    """nccl-tests' footer pasted outside a code block loses its "#" to Markdown; nvidia-smi -q's PCIe replay counter
    is one of its own keys. Both used to be refused as unrecognisable."""
    assert [p.kind for p in split_parts(text)] == [kind]


def test_a_gpu_named_with_a_one_digit_model_number_makes_the_text_a_gpu_s() -> None:
    """gdrcopy's sanity run on a T4 (bottlerocket-os/bottlerocket#462): 'name: Tesla T4' is a GPU's name, as 'Tesla
    V100' is. Before: the window of its test list and device line was refused."""
    text = (
        "    basic_with_tokens\nGPU id:0; name: Tesla T4; Bus id: 0000:00:1e\nselecting device 0\n"
        "Benchmark mode: CPU produces and GPU consumes\n"
    )
    assert [p.kind for p in split_parts(text)] == ["gpu-text"]


def test_dcgm_field_names_make_the_text_a_gpu_s() -> None:
    """A dcgm-exporter metrics file (NVIDIA/DCGM#141): DCGM's field names, not refused as unknown text."""
    text = "# Clocks,,\nDCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).\n"
    assert [p.kind for p in split_parts(text)] == ["gpu-text"]
