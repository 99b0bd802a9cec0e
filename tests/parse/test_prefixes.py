"""Launcher and collector prefixes come off pasted lines; the tool's own text, NCCL's prefix included, stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from topoaudit.model.values import Unsupported
from topoaudit.parse.prefixes import KINDS, MAX_PREFIXES, NO_HOST, NO_PID, NO_RANK, strip_line, strip_prefixes

PASTES = Path(__file__).parents[1] / "fixtures" / "real" / "pastes"
NCCL = "node7:1234:1290 [3] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC"

# (raw line, text left, kinds taken off in order, rank, host, pid); None where the prefixes name none.
CASES = [
    (f"(pid=909608) {NCCL}", NCCL, ["ray"], None, None, 909608),
    (f"(pid=21775, ip=10.221.0.5) {NCCL}", NCCL, ["ray"], None, "10.221.0.5", 21775),
    (f"(RayWorkerWrapper pid=880, ip=10.0.0.5) {NCCL}", NCCL, ["ray"], None, "10.0.0.5", 880),
    ("(VllmWorkerProcess pid=351) WARNING 02-28 12:00:41 custom_all_reduce.py:136] Custom allreduce is disabled",
     "Custom allreduce is disabled", ["ray", "logger"], None, None, 351),
    ("(head, rank=0, pid=3388) [1,0]<stdout>:   536870912     134217728     float     sum",
     "  536870912     134217728     float     sum", ["skypilot", "openmpi"], 0, "head", 3388),
    (f"(worker1, rank=1, pid=2345, ip=10.0.0.2) {NCCL}", NCCL, ["skypilot"], 1, "worker1", 2345),
    (f"[rank3]:{NCCL}", NCCL, ["torchrun"], 3, None, None),
    (f"[rank12]: {NCCL}", NCCL, ["torchrun"], 12, None, None),
    (f"[default5]:{NCCL}", NCCL, ["torchrun"], 5, None, None),
    (f"[1,0]<stdout>:{NCCL}", NCCL, ["openmpi"], 0, None, None),
    (f"[1,7]<stderr>: {NCCL}", NCCL, ["openmpi"], 7, None, None),
    (f"[3] {NCCL}", NCCL, ["mpich"], 3, None, None),
    (f"12: {NCCL}", NCCL, ["slurm"], 12, None, None),
    (f"  3: {NCCL}", NCCL, ["slurm"], 3, None, None),
    (f"gpu-node-07: {NCCL}", NCCL, ["pdsh"], None, "gpu-node-07", None),
    ("gpu-node-07:         State       : Completed", "        State       : Completed", ["pdsh"], None, "gpu-node-07",
     None),
    (f"104.171.201.172: {NCCL}", NCCL, ["pdsh"], None, "104.171.201.172", None),
    (f"node01.cluster.example: {NCCL}", NCCL, ["pdsh"], None, "node01.cluster.example", None),
    (f"[pod/trainer-worker-0/pytorch] {NCCL}", NCCL, ["kubectl"], None, "trainer-worker-0", None),
    ("Jun 01 10:00:00 dgx07 kernel: [ 1936.510073] NVRM: Xid (PCI:0000:9b:00): 79, GPU has fallen off the bus.",
     "NVRM: Xid (PCI:0000:9b:00): 79, GPU has fallen off the bus.", ["syslog", "timestamp"], None, "dgx07", None),
    ("Jun  1 10:00:00 dgx07 nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version",
     "fabric manager NVIDIA GPU driver interface version", ["syslog"], None, "dgx07", 3228),
    (f"2023-12-28T13:17:07.318695558Z {NCCL}", NCCL, ["timestamp"], None, None, None),
    (f"2024-01-01 12:00:00,123 {NCCL}", NCCL, ["timestamp"], None, None, None),
    (f"[2024-01-01 12:00:00,123] {NCCL}", NCCL, ["timestamp"], None, None, None),
    (f"[2025-05-10 23:09:41] {NCCL}", NCCL, ["timestamp"], None, None, None),
    (f"2024-01-01T12:00:00+02:00 {NCCL}", NCCL, ["timestamp"], None, None, None),
    ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0", "NVRM: The NVIDIA GPU 0000:b3:00.0", ["timestamp"],
     None, None, None),
    ("[Sun Apr 14 12:48:42 2024] NVRM: GPU 0000:81:00.0: RmInitAdapter failed!",
     "NVRM: GPU 0000:81:00.0: RmInitAdapter failed!", ["timestamp"], None, None, None),
    ("[Apr 02 2025 15:45:55] [ERROR] [tid 11713] fabric manager", "[ERROR] [tid 11713] fabric manager",
     ["timestamp"], None, None, None),
    ("[2023-12-20 16:35:35,473] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info",
     "[Rank 0] DeepSpeed info", ["timestamp", "logger"], None, None, None),
    ("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation",
     "[Rank 0] Watchdog caught collective operation", ["torchrun", "logger"], 0, None, None),
    ("INFO 11-11 14:17:08 utils.py:960] Found nccl from library libnccl.so.2", "Found nccl from library libnccl.so.2",
     ["logger"], None, None, None),
    ("(RayWorkerWrapper pid=880) ERROR 04-16 01:01:44 [worker_base.py:620]   File \"/x/pynccl.py\", line 5",
     "  File \"/x/pynccl.py\", line 5", ["ray", "logger"], None, None, 880),
    ("[19:01:01 TP1] Init nccl begin.", "Init nccl begin.", ["sglang"], 1, None, None),
    ("[2024-09-24 19:01:01 TP3] Init nccl begin.", "Init nccl begin.", ["sglang"], 3, None, None),
    (f"> {NCCL}", NCCL, ["quote"], None, None, None),
    (">", "", ["quote"], None, None, None),
    (f"> > [rank2]: {NCCL}", NCCL, ["quote", "quote", "torchrun"], 2, None, None),
    ("```", "", ["fence"], None, None, None),
    ("```text", "", ["fence"], None, None, None),
    ("~~~", "", ["fence"], None, None, None),
    (f"node3: [2024-01-01 12:00:00] [rank1]: {NCCL}", NCCL, ["pdsh", "timestamp", "torchrun"], 1, "node3", None),
    (f"[pod/w-1/c] 2024-01-01T00:00:00Z (pid=42) {NCCL}", NCCL, ["kubectl", "timestamp", "ray"], None, "w-1", 42),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "text", "kinds", "rank", "host", "pid"), CASES, ids=[c[0][:48] for c in CASES])
def test_a_prefix_comes_off_and_says_where_the_line_came_from(raw, text, kinds, rank, host, pid) -> None:  # type: ignore[no-untyped-def]
    (line,) = strip_prefixes(raw)
    assert line.text == text
    assert [p.kind for p in line.prefixes] == kinds
    assert "".join(p.text for p in line.prefixes) + line.text == raw
    assert line.rank == (NO_RANK if rank is None else rank)
    assert line.host == (NO_HOST if host is None else host)
    assert line.pid == (NO_PID if pid is None else pid)
    assert set(kinds) <= set(KINDS)


# What the tools print, and what people write, that merely looks like a prefix.
CONTENT = [
    NCCL,
    "gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error'",
    "H20-GPU-05:1789225:1789736 [1] NCCL INFO Pattern 4, crossNic 1, nChannels 4",
    "[Node-A]:[PID]:[Thread] [0] NCCL WARN NET/IB : Got completion from peer",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:784, unhandled cuda error",
    "torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:93, unhandled cuda error",
    "ncclUnhandledCudaError: Call to CUDA function failed.",
    "ERROR:  nhc:  Health check failed:  check_gpu_bw: P2P test on GPU 1 to GPU 0 failed.",
    "NCCL_P2P_DISABLE: 1",
    "GPU0: NVIDIA H100",
    "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05)",
    "         Link 0: 26.562 GB/s",
    "        State                             : Completed",
    "  host      : vmnuvocinpoc.internal.cloudapp.net",
    "GPU0     X      NV4     NV4     NV4     48-63,112-127   3",
    " 0         N/A    389.32    389.71",
    "   134217728      33554432     float     sum      -1   1234.5  108.72  190.26      0",
    "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02",
    "nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE",
    "multiproc-worker-utils.py: worker died",
    "\t\tLnkSta2: Current De-emphasis Level: -3.5dB, EqualizationComplete- EqualizationPhase1-",
    "\t\tDevCtl2: Completion Timeout: 50us to 50ms, TimeoutDis- LTR- OBFF Disabled,",
    "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization",
    "Device: 0, GeForce GTX 1080 Ti, pciBusID: 9, pciDeviceID: 0, pciDomainID:0",
    "AMD-Vi: Event logged [IO_PAGE_FAULT device=41:00.0 domain=0x000c address=0x7f000000 flags=0x0020]",
    "    ",
]


@pytest.mark.parametrize("raw", CONTENT)
def test_the_tools_own_text_is_not_taken_for_a_prefix(raw: str) -> None:
    (line,) = strip_prefixes(raw)
    assert line.text == raw
    assert line.prefixes == ()


def test_lines_keep_their_numbers_and_blank_lines_stay() -> None:
    text = "(pid=1) a\r\n\r\n[rank0]: b\nc\n"
    lines = strip_prefixes(text)
    assert [(line.number, line.text) for line in lines] == [(1, "a"), (2, ""), (3, "b"), (4, "c")]


def test_a_code_fence_is_dropped_but_the_lines_inside_are_read() -> None:
    lines = strip_prefixes("```\n(pid=3) x\n```\n")
    assert [line.text for line in lines] == ["", "x", ""]
    assert lines[1].pid == 3


def test_an_absent_origin_carries_its_reason() -> None:
    line = strip_prefixes("[rank0]: x")[0]
    assert isinstance(line.host, Unsupported) and line.host.reason == "no prefix names a host"


def test_the_outermost_prefix_that_names_a_rank_wins() -> None:
    text, prefixes = strip_line("[1,4]<stdout>:[rank2]: x")
    assert text == "x"
    assert [p.rank for p in prefixes] == [4, 2]
    assert strip_prefixes("[1,4]<stdout>:[rank2]: x")[0].rank == 4


def test_stacked_prefixes_stop_after_the_limit() -> None:
    raw = "> " * (MAX_PREFIXES + 2) + "x"
    text, prefixes = strip_line(raw)
    assert len(prefixes) == MAX_PREFIXES
    assert text == "> > x"


def test_a_pdsh_paste_names_both_hosts() -> None:
    lines = strip_prefixes((PASTES / "accelerate-1317-pdsh-multinode-net-socket.txt").read_text())
    assert {line.host for line in lines if line.text} == {"104.171.201.171", "104.171.201.172"}
    assert all("NCCL INFO" in line.text for line in lines if line.text)
    assert all(line.text.startswith("lambda-scalar0") for line in lines if line.text)


def test_a_ray_paste_names_its_worker_processes() -> None:
    lines = strip_prefixes((PASTES / "ray-11675-azure-sgd-p2p-ipc-init-complete.txt").read_text())
    prefixed = [line for line in lines if line.prefixes]
    assert prefixed and all(line.host == "10.221.0.5" for line in prefixed)
    assert {line.pid for line in prefixed} >= {21775, 21772}
    assert all(line.text.startswith("ray-default-worker-5ee698a00:") for line in prefixed)


def test_a_torchrun_traceback_loses_its_rank_prefix() -> None:
    lines = strip_prefixes((PASTES / "pytorch-130113-nvls-init-error-3-ddp.txt").read_text())
    traceback = [line for line in lines if line.rank == 1]
    assert traceback[0].text == "Traceback (most recent call last):"
    assert any(line.text.startswith('  File "') for line in traceback)


def test_rays_repeated_suffix_comes_off_the_end() -> None:
    raw = (
        "(RayWorkerWrapper pid=880) ERROR 04-16 01:01:44 [worker_base.py:620] RuntimeError: NCCL error: unhandled "
        "system error (run with NCCL_DEBUG=INFO for details) [repeated 6x across cluster]"
    )
    (line,) = strip_prefixes(raw)
    assert line.text == "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    assert line.suffix == " [repeated 6x across cluster]"
    assert "".join(p.text for p in line.prefixes) + line.text + line.suffix == raw


def test_an_editors_line_numbers_come_off_every_line() -> None:
    """Before: a p2pBandwidthLatencyTest pasted from an editor with its line numbers was not read at all."""
    text = "  1 P2P=Disabled Latency Matrix (us)\n  2    GPU     0      1\n  3      0   2.61  14.95\n  4\n  5 next\n"
    lines = strip_prefixes(text)
    assert [line.text for line in lines] == [
        "P2P=Disabled Latency Matrix (us)",
        "   GPU     0      1",
        "     0   2.61  14.95",
        "",
        "next",
    ]
    assert [line.number for line in lines] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    "text",
    [
        "     0   2.61  14.95\n     1  11.09   2.10\n     2  13.34  16.44\n",  # a matrix's own numbered rows
        "  1 P2P=Disabled\n  3 GPU\n  4 next\n",  # a number skipped
        "  1 first\n  2 second\n",  # too short to tell
        "8 bytes\n9 bytes\n10 bytes\n",  # numbers not right-aligned
    ],
)
def test_numbers_that_are_not_a_gutter_stay(text: str) -> None:
    assert [line.text for line in strip_prefixes(text)] == text.splitlines()


def test_the_plus_of_lines_a_diff_added_comes_off() -> None:
    """An nccl-tests table pasted inside a pull request's change to a README
    (GoogleCloudPlatform/ai-infra-cluster-provisioning#376): every row starts with '+'. Before: refused."""
    rows = (
        "+     4194304       1048576     float     sum      -1   1701.3    2.47    4.62    N/A   1691.6    2.48    N/A"
    )
    text = "\n".join([rows] * 3) + "\n"
    assert [line.text for line in strip_prefixes(text)] == [rows[1:]] * 3


@pytest.mark.parametrize(
    "text",
    [
        "+ PCI[24.0] - GPU/1000 (0)\n+ PCI[24.0] - GPU/2000 (1)\n+ PCI[24.0] - NIC/3000\n",  # NCCL's topology print
        "+ one\nsecond\n+ third\n",  # not every line
        "+ one\n+ two\n",  # too short to tell
    ],
)
def test_plus_signs_that_are_not_a_diff_stay(text: str) -> None:
    assert [line.text for line in strip_prefixes(text)] == text.splitlines()


def test_a_rank_tag_on_each_write_comes_off_inside_the_line_too() -> None:
    """MPICH's -prepend-rank tags each write: nccl-tests' row shows `[0]` again before its halves (NVIDIA/nccl#1453)."""
    raw = "[0]      1048576        262144     float     sum      -1[0]    1626.5    0.64    1.24      0[0]    2302.3"
    (line,) = strip_prefixes(raw)
    assert line.text == "     1048576        262144     float     sum      -1   1626.5    0.64    1.24      0   2302.3"
    assert line.rank == 0 and [p.kind for p in line.prefixes] == ["mpich"]


@pytest.mark.parametrize(
    "raw",
    [
        "[0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC",  # NCCL's own rank[device] after the rank tag
        "[1] NCCL INFO Trees [0] 2/-1/-1->1->0 [1] 2/-1/-1->1->0",
        "[0] NCCL INFO Ring 00 : 0[0] -> 1[1] -> 0[0]",
    ],
)
def test_nccls_own_rank_and_device_brackets_are_kept(raw: str) -> None:
    assert strip_prefixes(raw)[0].text == raw.removeprefix(raw[:4])
