"""A mixed paste, split into its parts: an NCCL log, a traceback, nccl-tests output, a ``topo -m`` matrix ...

People paste what their terminal showed: an ``all_reduce_perf`` run with NCCL's INFO lines between its rows, a
PyTorch traceback with NCCL's message inside, ``nvidia-smi topo -m`` under the command that printed it, a kernel
log next to ``nvidia-smi -q``'s Fabric block. :func:`split_parts` gives each line a kind with cheap recognisers
(substring tests first, a pattern only when one passes) and groups the lines into :class:`Part`\\ s with their line
ranges, so each part can be read by its reader and a report can say which parts it read.

How lines are grouped:

* a line a recogniser is sure of (``NCCL INFO``, a ``File "..."`` line, an nccl-tests result row) starts a part
  of its kind or continues one;
* a line that only fits a kind in context (a matrix header, a table border, a ``#`` line, the command that
  printed the output) continues a part of a kind it fits, or joins the next part when that part is of such a kind;
* lines no recogniser knows belong to the part they follow without a blank line between (a traceback's code,
  NCCL's message after "Last error:"); after a blank line they are a part of kind ``other`` unless the part
  before them resumes;
* NCCL's own lines run through other tools' output: an nccl-tests run, a traceback or a log interrupted by NCCL
  INFO lines stays one part (its lines need not be contiguous), and so does the NCCL log around it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from topoaudit.parse import tensorflow_log
from topoaudit.parse.bare_matrix import bare_matrices, titled_headers
from topoaudit.parse.prefixes import Line, strip_prefixes
from topoaudit.parse.smi_csv import looks_like_smi_csv_header

KINDS = (
    "nccl-log", "traceback", "nccl-tests", "topo-matrix", "p2p-matrix", "nvidia-smi-q", "nvidia-smi-csv",
    "nvidia-smi-table",
    "nvlink-status", "nvbandwidth", "nccl-xml", "nhc", "dcgm", "kernel-log", "kubernetes-node", "gpu-list",
    "bandwidth-note",
    "gpu-text", "program-output", "stack", "other",
)  # fmt: skip
INTERLEAVED = "nccl-log"
"""The kind whose lines run through other tools' output (NCCL_DEBUG writes to the same console)."""


@dataclass(frozen=True)
class Part:
    """A stretch of the paste of one kind."""

    kind: str  # one of KINDS
    first: int  # 1-based line of the paste where the part starts
    last: int  # ... and where it ends (inclusive)
    lines: tuple[int, ...]  # the lines that belong to it (others' lines may run between them)
    recognised: tuple[int, ...] = ()  # the lines a recogniser took for this kind (the rest came with them)

    @property
    def span(self) -> str:
        """The line range as a report prints it."""
        return f"line {self.first}" if self.first == self.last else f"lines {self.first}-{self.last}"


@dataclass(frozen=True)
class _Mark:
    kinds: frozenset[str]
    strong: bool  # True: the line alone says its kind; False: it fits these kinds in context


_BLANK = _Mark(frozenset(), False)
_UNKNOWN = _Mark(frozenset({"?"}), False)


def _strong(kind: str) -> _Mark:
    return _Mark(frozenset({kind}), True)


def _weak(*kinds: str) -> _Mark:
    return _Mark(frozenset(kinds), False)


_S = {kind: _strong(kind) for kind in KINDS}
_TABLE_OR_DCGM = _weak("nvidia-smi-table", "dcgm")
_MATRIX_HEADER = _weak("topo-matrix", "p2p-matrix")
_NUMBER_ROWS = _weak("nvbandwidth", "p2p-matrix")

_OLD_NCCL = re.compile(
    r"\[\d+\] (?:NCCL )?(?:INFO|WARN|TRACE) |^\s*(?:NCCL )?(?:INFO|WARN) (?:NET/|NCCL_|Channel |Ring |Trees |Using |"
    r"Bootstrap|comm |cudaDriverVersion|\d+ -> \d+ via )"
)
_NCCL_SHAPES = re.compile(
    r"^\s*(?:(?:Channel|Ring) \d+(?:/\d+)? : \d|Trees \[\d|\d+\[[0-9a-fA-F]+\] -> \d+\[|=== System : max"
    r"|\+ [A-Z0-9]+\[\s*[\d.]+\] - |(?:CPU|GPU|NIC|NET|PCI|NVS)/[0-9a-fA-F-]+ \(|Pattern \d+, crossNic"
    r"|\s?\d+ : (?:NET|GPU)/|NCCL version \d|NCCL_\w+ set by environment to|P2P is disabled between)"
)
_TB_WORDS = ("Watchdog caught collective operation", "ProcessGroupNCCL", "THCudaCheck FAIL", "Failed: Cuda error",
             "Some NCCL operations have failed or timed out")  # fmt: skip
_OLD_TESTS_FAILURE = re.compile(r"(?:NCCL|Cuda) failure [\w./-]+\.cu:\d+ '")
_EXCEPTION = re.compile(r"^\s*(?:[\w.]+\.)?(?:[A-Z]\w*(?:Error|Exception|Interrupt)|nccl\w+Error)\b(?:\([^)]*\))?: ")
_TORCH_SUMMARY = re.compile(r"^\s*(?:time|host|rank|exitcode|error_file|traceback)\s*: ")
_TORCH_SUMMARY_SURE = re.compile(r"^\s*(?:exitcode\s*: -?\d+ \(pid|error_file\s*: |traceback : To enable traceback)")
_PY_WARNING = re.compile(r"^\S+\.py:\d+: \w*Warning: ")
_TB_CONTEXT = ("Last error:", "Root Cause (first observed failure):", "Failures:",
               "The above exception was the direct cause of the following exception:",
               "During handling of the above exception, another exception occurred:")  # fmt: skip
_TESTS_HEAD = ("nThread", "Rank", "Using devices", "size", "(B)", "Out of bounds", "Avg bus bandwidth",
               "Collective test", "nccl-tests version", "NCCL Tests", "out-of-place", "error:")  # fmt: skip
_TESTS_ROW = re.compile(
    r"^\s*\d+\s+\d+\s+(?:u?int(?:8|32|64)?|half|float|double|bfloat16|f8e4m3|f8e5m2|char)\s+"
    r"(?:(?:sum|prod|max|min|avg|mulsum|none|all)\s|[\d.]+\s+[\d.]+\s+[\d.]+\s+\d(?:\.\d+)?e[+-]\d+\b)"
)  # nccl-tests 1.x rows have no redop column and a max error (0e+00)
_TESTS_FOOTER = re.compile(r"(?:Avg bus bandwidth|Out of bounds values)\s*: ")
_BENCH_TABLE_LINE = re.compile(
    r"\|\s*payload\s*\|\s*busbw\s*\|\s*algbw\s*\|$|\|\s*\d{1,6}(?:\.\d{1,3})?\s*(?:B|KiB|MiB|GiB|TiB)\s*\|"
    r"\s*[\d.]{1,16}\s*GBps\s*\|\s*[\d.]{1,16}\s*GBps\s*\|$"
)
"""ml-engineering's all_reduce_bench.py: its Markdown table's header and rows ("|  32KiB |  1.44GBps |  0.82GBps |")."""
_MARKDOWN_RULE = re.compile(r"\|(?:\s*:?-{2,}:?\s*\|)+$")
_BENCH_TABLE_TITLE = re.compile(r"The average bandwidth of \w{1,40} over \d{1,6} ranks")
_NVB_START = ("nvbandwidth Version", "Built from Git version", "memcpy ", "multicast ", "SUM ", "Waived", "Waiving ",
              "CUDA Runtime Version", "CUDA Driver Version", "Device to Device Latency")  # fmt: skip
_NVB_RUNNING = re.compile(r"^Running [a-z0-9_]+\.\s*$")
_NVB_DEVICE = re.compile(r"^Device \d+: \S")
_NUMBER_ROW = re.compile(r"^\s*\d+(?:\s+(?:-?[\d.]+|N/A))+\s*$")
_BANDWIDTH_TITLE = re.compile(r"^[^.!?]{0,60}\bbandwidth\b.{0,40}\bGB/s\b[^.!?]{0,40}:?\s*$", re.IGNORECASE)
"""A copy benchmark's title over its matrix ("Measured bandwidth in GB/s of size 512 MiB:"), not a sentence."""
_P2P_STARTS = ("[P2P (Peer-to-Peer)", "P2P Connectivity Matrix", "D\\D", "Dir\\D", "Device: ", "Device=",
               "Host/Device Bandwidth")  # fmt: skip
_BUSGRIND_HOST_ROW = re.compile(r"^\s*(?:D2H|H2D|BiDir)(?:\s+\d+(?:\.\d+)?)+\s*$")
_P2P_ROW = re.compile(r"^\s*GPU\d+(?:\s+(?:X|OK|NS|CNS|GNS|TNS|DR|U))+\s*$")
_TOPO_ROW = re.compile(
    r"^\s*(?:GPU|NIC|mlx5_|CPU)\w*(?:\s+(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC|PXN|P2C|C2C)\b){1,}(?:\s|$)"
)
_TOPO_HEADER = re.compile(r"^\s*(?:GPU\d+|NIC\d+|mlx5_\d+)(?:\s+(?:GPU\d+|NIC\d+|mlx5_\d+))*(?:\s+CPU Affinity.*)?\s*$")
_TOPO_LEGEND = re.compile(r"^\s*(?:Legend:|NIC Legend:|(?:X|SYS|NODE|PHB|PXB|PIX|NV#|SOC|PXN|C2C|P2C)\s+=|NIC\d+: \w)")
_P2P_LEGEND = re.compile(r"^\s*(?:OK|CNS|GNS|TNS|NS|DR|U)\s+=")
_NVLINK = re.compile(r"^\s*Link \d+[:,]\s*(?:<inactive>|[\d.]+ GB/s|Link is supported|[\w ]+Errors:|Remote Device)")
_NVLINK_GPU = re.compile(r"^GPU \d+: .+\(UUID: GPU-[0-9a-fA-F-]+\)\s*$")
_GPU_LIST = re.compile(rf"{_NVLINK_GPU.pattern}|.*\bnvidia-smi\s+(?:-L|--list-gpus)\s*$")
"""`nvidia-smi -L` and its lines: outside an ``nvidia-smi nvlink`` output (whose GPU lines head its links)."""
_SMI_KEY = re.compile(r"^\s*\S(?:[^:]*?\S)?\s{2,}: ")
_SMI_STRONG_KEYS = ("Product Name", "Bus Id", "CliqueId", "ClusterUUID", "Attached GPUs", "Driver Version",
                    "Persistence Mode", "GPU UUID", "Minor Number", "VBIOS Version", "Route Unhealthy",
                    "Incorrect Configuration", "Fabric GUID", "Compute Mode", "Performance State", "Display Active",
                    "Display Mode", "Accounting Mode", "Addressing Mode", "GPU Part Number", "MultiGPU Board",
                    "Multigpu Board", "Board ID", "Pending Page Blacklist", "Power Management", "Active Sessions",
                    "Replays Since Reset", "Replay Number Rollovers",
                    "Average FPS", "GPU Current Temp", "GPU Shutdown Temp", "Power Draw", "Single Bit ECC",
                    "Double Bit ECC", "SRAM Correctable", "SRAM Uncorrectable", "DRAM Correctable",
                    "DRAM Uncorrectable", "Remapping Failure Occurred")  # fmt: skip
_SMI_FABRIC_KEY = re.compile(r"^\s*(?:State|Status|Summary|Bandwidth)\s{2,}: ")
_SMI_GPU = re.compile(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d\s*$")
_SECTION_WORDS = re.compile(r"^\s+[A-Z][\w ./()-]*$")
_TABLE_WORDS = ("NVIDIA-SMI", "Driver Version:", "GPU  Name", "Bus-Id", "Persistence-M", "GPU-Util", "MiB /",
                "Processes:", "GPU   GI   CI", "Memory-Usage", "Fan  Temp")  # fmt: skip
_DCGM_WORDS = ("Overall Health", "Diagnostic", "-> NVLINK", "NvLink link", "| Pass", "| Fail", "| Warn", "| Skip",
               "DCGM_FR_", "dcgmi", "Health Monitor")  # fmt: skip
_BORDER = re.compile(r"^\s*[|+][-=+| ]*$")
_NHC = re.compile(
    r"(?:ERROR|WARNING|SUCCESS):\s+\S+:\s+(?:Health check|Nearing a failure)|Node Health Check failed\.\s+Check check_"
)
_KERNEL_WORDS = ("NVRM", "Xid (", "nvidia-nvswitch", "AMD-Vi", "DMAR:", "nvidia-modeset", "nvidia 0000:")
_BANDWIDTH_NOTE = re.compile(
    r"\b(?:NVLink|NVL|NVSwitch|RDMA|InfiniBand|RoCE|EFA|P2P|PCIe|busbw|algbw|[Aa]ll[-_ ]?[Rr]educe)\b.*?"
    r"\d+(?:\.\d+)?\s*GB(?:/s|ps)|\d+(?:\.\d+)?\s*GB/s.*?\b(?:NVLink|NVL|NVSwitch|RDMA|InfiniBand|RoCE|EFA|P2P|PCIe)\b"
    r"|\bGPU\d+\s*(?:<?->|-|\u2194|\u2192)\s*(?:GPU)?\d+\s*[=:]\s*\d+(?:\.\d+)?\s*\(?GB/s"
)
"""A line that states a bandwidth over a named interconnect in words (a tool's summary, a benchmark's result
line): no reader is for it, but it is recognisably about the interconnect, so the paste is judged, not refused."""
_GPU_TEXT = re.compile(
    r"\b(?:NCCL|NVLink|NVSwitch|NVSHMEM|InfiniBand|RoCE|GPUDirect|libfabric|nvidia-fabricmanager|fabricmanager"
    r"|nvidia-peermem|nv_peer_mem|IMEX|CUDA_VISIBLE_DEVICES|[Mm]lx5_\w+|ibv_\w+|libibverbs|fi_info"
    r"|provider: (?:efa|verbs)"
    r"|libnccl\S*|nccl==[\d.]+|mpirun|torchrun|all_reduce_perf|\bMPI_(?:FINALIZE|ABORT|COMM_WORLD|Init)\b"
    r"|Primary job\s+terminated normally|Per user-direction, the job has been aborted"
    r"|(?:NVIDIA|GeForce|Tesla|Quadro)[ -](?:RTX |GTX )?[A-Z]{0,3}\d{1,4}\w*|PCIe GEN \d@\d+x)|--gpus-per-(?:task|node)"
    r"|--gres=gpu|ACSCtl:|\bACSCap:|\bLnk(?:Sta|Cap|Ctl)2?:|\bATS(?:Cap|Ctl):|Address Translation Service \(ATS\)"
    r"|[Ff]abric[ -][Mm]anager|\b[Hh]orovod|\b[Cc]u[Pp]y\b"
    r"|\bUCX\b|\bucx_perftest\b|\bucp_\w+|\bUCX_[A-Z_]+|\bUCC\b|\b(?:tag|put|get|am|stream)_(?:bw|lat)\b"
    r"|message rate \(msg/s\)"
    r"|\bcuda(?:Memcpy\w*|DeviceCanAccessPeer|DeviceEnablePeerAccess|Ipc\w+)\b|\bcuIpc\w+|\b(?:CUDA|Cuda) error\b"
    r"|\b(?:CUDA|cuda|NVIDIA|nvidia-smi|vLLM|vllm|SGLang|sglang|DeepSpeed|deepspeed|Megatron|TensorRT|DCGM|dcgmi|nv-hostengine)\b|\bDCGM_FI_\w+"
    r"|\btorch\.distributed\b|\bworld[_ ]size\b|\b(?:TP|tp)[_ ]rank\b|[Tt]ensor[ _-]?[Pp]arallel"
    r"|\b(?:all[_ ]?reduce|all[_ ]gather|allgather|reduce[_ ]scatter)\b|\bNVL(?:S|\d+)?\b|NVL_PEERS|\bDeepEP\b"
    r"|/dev/nvidia\w*|/proc/driver/nvidia|nvidia-persistenced|\bnvidia_(?:peermem|uvm|drm|modeset)\b|\bNVML(?:_\w+)?\b"
    r"|no CUDA-capable device is detected|all CUDA-capable devices are busy|invalid device ordinal"
    r"|an illegal memory access was encountered|unspecified launch failure|\(error code [a-z ]+\)!"
    r"|\b(?:maxBw|totalBw)\b"
    r"|Worker exit type: [A-Z_]+|\bRay(?:Task|Actor)Error\b|\braylet\b"
    r"|\bgdrcopy\w*|\bgdrdrv\b|/dev/infiniband\b|\bnccl\b|distributed_backend=|All distributed processes registered"
    r"|\bnccl[A-Z]\w+|\btorch\.multiprocessing\b|\btorch\.(?:cuda\b|_C\._cuda_\w+)"
    r"|\bCudaDevice\(id=|Connection traversing (?:PCIe|a bonded set)"
    r"|\b(?i:default gid|base lid|sm lid|link_layer|active_mtu|Link layer|GID index|CQ Moderation|port guid|node guid"
    r"|system image guid|capability mask|physical state)\s*:"
    r"|\bPORT_(?:ACTIVE|DOWN|INIT)\b"
    r"|azurehpc|Running health checks|\bnvbandwidth\b|\bDCGM\b|\bDcgm[A-Z]\w*|\bNvSwitch\w*"
    r"|\bnvidia-validation-suite\b|\bubergemm\b|\(ADAPTER#\d+\)"
    r"|\bPhysical Resizable BAR\b|\bBAR \d: current size:"
    r"|\bRegion \d: Memory at \w+ \(64-bit, prefetchable\) \[size=\d+G\]"
    r"|\b(?:Raw|Effective|Symbol) Physical BER\b|\b(?i:nixl)\b|\bnvlink_\w+|-\[[0-9a-f]{4}:[0-9a-f]{2}\]-[+-]"
    r"|Defaulting to use (?:mp|ray) for distributed inference|\bmax_num_batched_tokens\b"
    r"|\bNccl[A-Z]\w+|\bXLA_GPU\w*|\btokens?[_ ]?[Pp]er[_ ]?[Ss]ec(?:ond)?\b|\btokens/s\b"
    r"|\[Hardware Error\]|\bnvlsm\b|\bnvshmem\b|\bCA type:|\b(?:uverbs|umad|issm)\d+\b|\brdma_cm\b"
    r"|\bshow_gids\b|^DEV\s+PORT\s+INDEX\s+GID\s+IPv4\s+VER\s+DEV"
    r"|^&&&& (?:RUNNING|PASSED|FAILED|WAIVED) \w|Available (?:Controllers|Tensor Operations):"
    r"|\bJAX (?:local )?device count|\bsrun: error:|\bslurmstepd(?:-[\w.-]+)?: error:|Out of memory: Killed process\b"
    r"|\bProcessGroup(?:Gloo|NCCL|MPI|UCC)\b|\bgloo/transport\b|\bGLOO_SOCKET_IFNAME\b|\bTORCH_NCCL_[A-Z_]+|\bFlightRecorder\b"
    r"|\bgpu[_-]burn\b|^\s*(?:CNS|GNS|TNS)\s+= |\bcu(?:Init|DriverGetVersion|Device[A-Z]\w*|Ctx[A-Z]\w*|Mem[A-Z]\w*)\b"
    r"|\[\[\d+,\d+\],\d+\]|\b(?:orted|prterun|PMIx|ORTE|RML)\b"
    r"|\*{5} Running training \*{5}|\(w\. parallel, distributed & accumulation\)|\bzero_optimization\b|\bstage3_\w+"
    r"|\bdistributed init \(rank \d+\)|\binitialized host \S+ as rank \d+|\bkv[-_]store\b|GB/sec per gpu"
    r"|\bxid_errors\b|\bpcie_(?:max_)?link_(?:gen|width)\b"
    r"|/sys/class/infiniband/|\bmlnx_qos\b|^\s*PFC configuration:|\bdscp2prio\b"
    r"|^\((?:APIServer|EngineCore\w*|VllmWorker\w*|Worker_\w+|RayWorkerVllm) pid=\d+\)"
    r"|\bflags=\d+<[A-Z_,]*> +mtu \d+|<(?:[A-Z_]+,)*UP(?:,[A-Z_]+)*> mtu \d+|\bTorchTrainer\b"
)
"""Words of the GPU stack (its interconnect's tools, CUDA, the libraries and frameworks that run collectives): a paste
of such lines that no reader is for (``ibstat``, ``fi_info``, a libibverbs warning, an NCCL banner, NCCL's ``maxBw``
figure, a Ray worker's exit, DCGM's own log lines (``DcgmModuleNvSwitch``), ``gdrcopy_sanity``, a listing of
``/dev/infiniband``, Lightning's banner of registered processes, the fields of ``ibstatus``, ``ibv_devinfo`` and
perftest, the table of ``show_gids``, the legend of ``topo -m``, ``lspci -vvv``'s link and ATS lines, the result
lines of gdrcopy's and CUDA's test harness, ``horovodrun --check-build``, JAX's device count, Slurm's step errors,
the kernel's out-of-memory kill, Gloo's transport, PyTorch's TORCH_NCCL_ settings and flight recorder, Open MPI's
runtime (``[[jobid,0],rank]`` process names, orted, PMIx), a trainer's "Running training" banner and DeepSpeed's
ZeRO settings, fairseq's distributed init, MXNet's kvstore bandwidth tool, DCGM's field names, RoCE's QoS settings
(mlnx_qos, the RDMA devices' sysfs), a host's network interfaces (ifconfig, ip addr: the ones NCCL and Gloo may
pick), Ray Train's trainers, vLLM's process prefixes (``(APIServer pid=1)``, ``(EngineCore_DP0 pid=...)``), ``lspci
-t``'s tree and a GPU-sized BAR, ``mlxlink``'s bit-error rates, NIXL's transfer timings, vLLM's choice of its
distributed executor) is recognisably about the interconnect or the run on it and judged "not judged", never
refused."""
_XML = re.compile(r"^\s*</?(?:system|cpu|pci|gpu|nvlink|nic|net|c2c|pcilink)\b")
# The command that printed an output, announcing the part that follows it.
_STACK_FRAME = re.compile(
    r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+ in )?[\w:~<>.*&, ]+\s?\(.*\)(?: (?:at|from) \S+)?\s*$"
    r"|^\s*(?:\d+ )?0x[0-9a-fA-F]+ \S+\(\)\s+\S*:\d+\s*$"  # UCX's error handler: " 4 0x...4c818 ncclRecv()  ???:0"
    r"|^\s*#\d+\s+[A-Za-z_][\w:~<>]*[_:][\w:~<>]*(?:\s+(?:\u2190|<-|//).*)?\s*$"  # a frame's bare name: "#9 fi_cq_read"
)
_STACK_HEAD = re.compile(
    r"^\s*(?:\(gdb\) (?:bt|backtrace|thread apply all bt)\b|Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP \d+\)\)|"
    r"Thread (?:0x[0-9A-Fa-f]+|\d+) \((?:active|idle)(?:\+gil)?\): \"|Process \d+: \S*python|"
    r"==== backtrace \(tid:\s*\d+\) ====)"
)
_PYSPY_FRAME = re.compile(r"^\s+[\w<>.:~]+ \((?:[\w./-]+\.py:\d+|[\w.+-]+\.so(?:\.\d+)*)\)\s*$")
"""A process's stack as debuggers print it: gdb's ``#3  0x... in threadRunTests(void*) ()`` frames under ``(gdb)
bt``, and py-spy's ``Thread 0x7F... (active): "MainThread"`` (a thread id in decimal with ``--native``) with
``all_reduce (torch/distributed/...py:2050)`` and native frames ``sched_yield (libc.so.6)``."""

_RANK_PREFIXES = ("sglang", "torchrun", "openmpi")
"""Line prefixes that only a distributed job's launcher writes, naming the rank (``[date time TP0]``, ``[rank3]:``,
``[1,3]<stdout>:``): lines under them come from a multi-GPU job."""


_COMMANDS = (
    (re.compile(r"nvidia-smi\s+topo\s+-p2p"), "p2p-matrix"),
    (re.compile(r"nvidia-smi\s+topo\b|(?:GPU|NVIDIA) Topology:"), "topo-matrix"),
    (re.compile(r"nvidia-smi\s+nvlink"), "nvlink-status"),
    (re.compile(r"nvidia-smi\s.*--query-gpu[= ]"), "nvidia-smi-csv"),
    (re.compile(r"nvidia-smi\s+(?:-q|--query)\b"), "nvidia-smi-q"),
    (re.compile(r"\b\w+_perf\b"), "nccl-tests"),  # \b first: a long word is not tried from each letter
    (re.compile(r"\bnvbandwidth\b"), "nvbandwidth"),
    (re.compile(r"p2pBandwidthLatencyTest"), "p2p-matrix"),
    (re.compile(r"\b(?:dmesg|journalctl)\b"), "kernel-log"),
    (re.compile(r"\bdcgmi\b"), "dcgm"),
    (re.compile(r"\bkubectl\s+describe\s+nodes?\b"), "kubernetes-node"),
    (re.compile(r"\bnvidia-smi\s*$"), "nvidia-smi-table"),
)


def _classify(text: str, current: str) -> _Mark:
    """What one line (prefixes taken off) is, given the kind of the part it may continue."""
    stripped = text.strip()
    if not stripped or stripped in ("--", "...", "[...]", "……") or stripped.strip(".") == "":
        return _BLANK
    if "NCCL INFO" in text or "NCCL WARN" in text or "NCCL TRACE" in text:
        if "Test NCCL failure" in text:
            return _S["nccl-tests"]
        return _S["nccl-log"]
    if "Traceback (most recent call last)" in text or (stripped.startswith('File "') and ", line " in stripped):
        return _S["traceback"]
    if ("nhc" in text or "check_" in text) and _NHC.search(text):
        return _S["nhc"]
    if any(word in text for word in _KERNEL_WORDS):
        return _S["kernel-log"]
    if stripped in ("Capacity:", "Allocatable:") or stripped.startswith("nvidia.com/gpu:"):  # kubectl describe node
        return _S["kubernetes-node"]
    if _STACK_HEAD.match(text) or _STACK_FRAME.match(text):
        return _S["stack"]
    if stripped.startswith("#"):
        for pattern, kind in _COMMANDS:
            if pattern.search(text):
                return _weak(kind)
        if any(word in stripped for word in _TESTS_HEAD):
            return _S["nccl-tests"]
        return _weak("nccl-tests")
    if _TESTS_ROW.match(text) or "Test CUDA failure" in text or "Test NCCL failure" in text:
        return _S["nccl-tests"]
    if _OLD_TESTS_FAILURE.search(text):
        return _S["nccl-tests"]
    if ": Test failure " in text or "Test timeout (" in text or stripped.startswith("nThread "):
        return _S["nccl-tests"]
    if _TESTS_FOOTER.match(stripped):  # its footer, the "#" eaten by Markdown (a line pasted outside a code block)
        return _S["nccl-tests"]
    if stripped.startswith("|") and _BENCH_TABLE_LINE.match(stripped):  # ml-engineering's all_reduce_bench.py
        return _S["nccl-tests"]
    if current == "nccl-tests" and (_MARKDOWN_RULE.match(stripped) or _BENCH_TABLE_TITLE.match(stripped)):
        return _weak("nccl-tests")
    if current == "stack" and _PYSPY_FRAME.match(text):
        return _weak("stack")
    if _EXCEPTION.match(text) or _PY_WARNING.match(text) or _TORCH_SUMMARY_SURE.match(text):
        return _S["traceback"]
    if any(word in text for word in _TB_WORDS):
        return _S["traceback"]
    if _TORCH_SUMMARY.match(text) or stripped in _TB_CONTEXT or re.fullmatch(r"\[\d+\]:", stripped):
        return _weak("traceback")
    if current == "traceback" and (text.startswith("    ") or stripped.startswith(("│", "╰", "❱"))):
        return _weak("traceback")
    if stripped.startswith(_NVB_START) or _NVB_DEVICE.match(stripped) or _NVB_RUNNING.match(stripped):
        return _S["nvbandwidth"]
    if "checking the pattern" in text:
        return _S["nvbandwidth"]
    if "ASSERT in expression" in text or stripped.startswith("Current offset"):
        return _S["nvbandwidth"]
    if stripped.startswith(_P2P_STARTS):
        return _S["p2p-matrix"]
    if current == "p2p-matrix" and _BUSGRIND_HOST_ROW.match(text):
        return _weak("p2p-matrix")  # busGrind's host/device rows (D2H, H2D, BiDir)
    if stripped.startswith("Test Description: ") or (stripped and set(stripped) == {"*"}):
        return _weak("p2p-matrix")  # busGrind's test banner
    if ".cc:" in text and tensorflow_log.is_matrix_line(text):
        return _S["p2p-matrix"]  # TensorFlow's peer-access matrix at start-up (DMA: / strength 1 edge matrix)
    if "P2P=" in text and "Matrix" in text:
        return _S["p2p-matrix"]
    if _P2P_ROW.match(text):
        return _S["p2p-matrix"]
    if _TOPO_ROW.match(text):
        return _S["topo-matrix"]
    if _TOPO_HEADER.match(text):
        return _MATRIX_HEADER
    if _TOPO_LEGEND.match(text):
        return _weak("topo-matrix")
    if _P2P_LEGEND.match(text):
        return _weak("p2p-matrix")
    if _NUMBER_ROW.match(text) or _BANDWIDTH_TITLE.match(text):
        return _NUMBER_ROWS
    if _NVLINK.match(text) or "Unable to retrieve NVLink information" in text:
        return _S["nvlink-status"]
    if _NVLINK_GPU.match(stripped):
        return _weak("nvlink-status")
    if stripped.startswith(("|", "+-", "+=")):
        if any(word in text for word in _DCGM_WORDS):
            return _S["dcgm"]
        if any(word in text for word in _TABLE_WORDS) or "NVIDIA " in text:
            return _S["nvidia-smi-table"]
        return _TABLE_OR_DCGM
    if "DCGM_FR_" in text or "dcgmi" in text:
        return _S["dcgm"]
    if "NVSMI LOG" in text or _SMI_GPU.match(stripped) or stripped == "Remapped Rows" or "<nvidia_smi_log" in text:
        return _S["nvidia-smi-q"]
    if current == "nvidia-smi-q" and stripped.startswith("<"):
        return _weak("nvidia-smi-q")  # the elements of nvidia-smi -q -x
    if _SMI_KEY.match(text):
        key = stripped.split(":", 1)[0].strip()
        if key in _SMI_STRONG_KEYS or _SMI_FABRIC_KEY.match(text):
            return _S["nvidia-smi-q"]
        return _weak("nvidia-smi-q")
    if current == "nvidia-smi-q" and _SECTION_WORDS.match(text):
        return _weak("nvidia-smi-q")
    if stripped in ("Fabric", "Health") or stripped.startswith("Fabric "):
        return _weak("nvidia-smi-q")
    if "," in text and (current == "nvidia-smi-csv" or "." in text):
        if looks_like_smi_csv_header(text):
            return _S["nvidia-smi-csv"]
        if current == "nvidia-smi-csv":
            return _weak("nvidia-smi-csv")  # a row under the header
    if _XML.match(text):
        return _S["nccl-xml"]
    if _OLD_NCCL.search(text) or _NCCL_SHAPES.match(text):
        return _S["nccl-log"]
    for pattern, kind in _COMMANDS:
        if pattern.search(text):
            return _weak(kind)
    return _UNKNOWN


class _Run:
    """A part being built."""

    def __init__(self, kind: str, numbers: list[int], recognised: list[int]) -> None:
        self.kind = kind
        self.lines = numbers
        self.recognised = recognised

    def part(self) -> Part:
        lines = tuple(sorted(self.lines))
        return Part(self.kind, lines[0], lines[-1], lines, tuple(sorted(self.recognised)))


def split_parts(paste: str | Sequence[Line]) -> tuple[Part, ...]:
    """The parts of a paste in the order they start; every non-blank line belongs to exactly one part."""
    lines = strip_prefixes(paste) if isinstance(paste, str) else paste
    runs: list[_Run] = []
    current: _Run | None = None
    pending: list[tuple[int, _Mark]] = []  # lines since the current run's last line
    for line in lines:
        mark = _classify(line.text, current.kind if current else "")
        if mark is _BLANK or mark is _UNKNOWN:
            pending.append((line.number, mark))
            continue
        if current is not None and current.kind in mark.kinds:
            current.lines += [n for n, m in pending if m is not _BLANK] + [line.number]
            current.recognised += [n for n, m in pending if current.kind in m.kinds] + [line.number]
            pending = []
            continue
        if not mark.strong:
            pending.append((line.number, mark))
            continue
        (kind,) = mark.kinds
        lead = _close(runs, current, pending, kind)
        current = _Run(kind, [n for n, _ in lead] + [line.number], [n for n, m in lead if kind in m.kinds])
        current.recognised.append(line.number)
        pending = []
    _close(runs, current, pending, "")
    by_number = {line.number: line for line in lines}
    ranked = {line.number for line in lines if any(p.kind in _RANK_PREFIXES for p in line.prefixes)}
    for run in runs:
        if run.kind == "other":
            stretch = [by_number[n] for n in run.lines]
            # the words a prefix carried count too: "[W ProcessGroupNCCL.cpp:1569]" says whose line it is
            words = [" ".join(p.text for p in line.prefixes) for line in stretch if line.prefixes]
            logged = [any(p.kind in _LOGGED_PREFIXES for p in line.prefixes) for line in stretch]
            run.kind = _other_kind([line.text for line in stretch], ranked.isdisjoint(run.lines), words, logged)
    return tuple(run.part() for run in _interleave(runs))


_LOGGED_PREFIXES = frozenset({"logger", "timestamp", "syslog", "ray", "skypilot", "kubectl", "pdsh"})
"""Prefix kinds only a program writes (a logger, or a launcher forwarding a worker's output: pdsh's ``host: ``, which
a dotted key such as gdrcopy's ``info.va: 7f82...`` also reads as): a line that carried one was printed, whatever words
are left after it."""


def _other_kind(
    texts: list[str], no_rank_prefix: bool = True, prefixes: list[str] | None = None, logged: list[bool] | None = None
) -> str:
    """What lines no capture's shape claims still are: `nvidia-smi -L`, a bandwidth stated in words, words only the
    interconnect's tools print, or a multi-GPU job's log lines that name their rank (SGLang's ``[date time TP0]``,
    torchrun's ``[rank3]:``, Open MPI's ``[1,3]<stdout>:``), with the words of the prefixes taken off them (``[W
    ProcessGroupNCCL.cpp:1569]``), or a program's output with none of those words (``program-output``); else
    ``other``. Decided for the whole stretch (its words looked for in lines spread over a long one), so a
    traceback's message that names NVLink stays in the traceback. ``logged`` marks the lines that carried a logger's
    or a launcher's prefix: printed by a program, whatever words are left."""
    if all(_GPU_LIST.match(t.strip()) for t in texts):
        return "gpu-list"  # `nvidia-smi -L`: the GPUs, nothing about their links
    if _all_bare_matrix_rows(texts):
        return "p2p-matrix"  # p2pBandwidthLatencyTest's rows without their title or header
    if any("GB/s" in t for t in texts) and titled_headers(texts):
        return "p2p-matrix"  # a copy benchmark's matrix under a title naming its unit
    if any(("GB/s" in t or "GBps" in t) and _BANDWIDTH_NOTE.search(t) for t in texts):
        return "bandwidth-note"
    sample = _spread(texts)
    if not no_rank_prefix or any(_GPU_TEXT.search(t) for t in (*sample, *_spread(prefixes or []))):
        return "gpu-text"
    if _several_devices(texts):
        return "gpu-text"
    if _printed_by_a_program(sample, _spread(logged) if logged else None):
        return "program-output"
    return "other"


def _all_bare_matrix_rows(texts: list[str]) -> bool:
    """Whether every line is a row of a GPU-pair matrix pasted without its title and header
    (:func:`~topoaudit.parse.bare_matrix.bare_matrices`)."""
    if not all(_NUMBER_ROW.match(t) or not t.strip() for t in texts):
        return False
    rows = sum(m.last - m.first + 1 for m in bare_matrices(texts))
    return rows == sum(1 for t in texts if t.strip())


T = TypeVar("T")

_WORDS_SCANNED = 2000
"""Lines of a long stretch whose words decide its kind: a stretch's kind is the same at its start and throughout,
and the vocabulary's hundred-odd alternatives cost about 0.1 ms a line (an 8 MB log of other text took 30 s)."""


def _spread(texts: list[T]) -> list[T]:
    """At most :data:`_WORDS_SCANNED` lines of ``texts``: the first half of them, then lines spread evenly over the
    rest, so words that appear only further on are still seen."""
    if len(texts) <= _WORDS_SCANNED:
        return texts
    half = _WORDS_SCANNED // 2
    step = max(1, (len(texts) - half) // half)
    return texts[:half] + texts[half::step][:half]


_PRINTED = re.compile(
    r"^\s*(?:\([\w.-]+\) )?(?:[\w.-]+@[\w.-]+:\S*\s*|[\w.~/-]+)?[#$%]\s+[\w./-]"  # a shell prompt and its command:
    # "$ ls", "dir$ ls", "(venv) root@gpu1:/mnt# ls" (a conda or virtualenv's name before it)
    r"|^\s*[\w.,:/-]+\s{2,}\d+(?:\.\d+)?\s*(?:#.*)?$"  # a benchmark's row of two columns: OSU's "65536      1782.01",
    # a site's pair test "se02gn644,se02gn699     49.36  # crossing TOR"
    r"|^\s*(?:Active: (?:active|inactive|failed|activating|deactivating) \(|Loaded: (?:loaded|not-found|masked) \()"
    r"|^\s*[0-9a-f]{4}\s*$"  # systemctl status's state lines; setpci's register words ("001d")
    r"|(?:\b[a-z_]\w*=[\w./:-]+,? +){2}[a-z_]\w*=\S"  # a program's parameters: "size=131072 offset=0 num_iters=10000"
    r"|\S\s+\|\s+\S|^\s*\|.*\|\s*$|^\s*\+[-=+]{3,}\+?\s*$"  # a table's columns, rows and borders
    r"|\S\s{2,}\S+\s{2,}\S|\S\t+\S[^\t]*\t+\S|\S {3,}\S.*?\S {3,}\S"  # columns aligned by runs of spaces, or tabs
    r"|\S {3,}$|^\s*[-=]{3,}\s*$"  # a line padded to a fixed width (mmcv's hook table), a rule of dashes or equals
    r"|^(?:=|-{2,}) [A-Z][\w()/]*(?: [\w()/]+)*(?: -{3,})?\s*$"  # a report's banner: "= PERFORMANCE OVERVIEW"
    r"|^(?!.*, )[^,\n]+(?:,[^,\n]*){3,}$"  # a CSV row or header: "batch,num_prompts,RPS,RPM"
    r"|\bLoop time of [\d.]+ on \d+ procs\b"  # LAMMPS's summary
    r"|^\s*\w+ \.{3,} \S"  # a dump of arguments with dotted leaders: Megatron's "adam_beta1 ........ 0.9"
    r"|^-{3,} [\w ]+ -{3,}\s*$"  # its banner: "------------------------ arguments ------------------------"
    r"|^\s*\"[^\"]+\": "  # a JSON document's keys: '   "status": "READY",'
    r"|\bwatchdog: BUG: soft lockup - CPU#\d+ stuck for"  # the kernel's soft-lockup watchdog
    r"|\S(?:\s{2,}:\s*|:\s{2,})[-+]?\d[\d.]*(?:[eE][-+]?\d+)?\s*$"  # a figure aligned after its label's colon
    r"|^\s*\[[^\]]{0,40}\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d"  # a logger's bracket: "[NeMo I 2024-05-08 21:28:45 m:7]"
    r"|^\s*\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|^\s*\[\s*\d+\.\d+\]|^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d"  # timestamps
    r"|^\s*\[\d\d:\d\d:\d\d\] \S"  # a logger's bare time of day: dmlc's (MXNet, ps-lite) "[09:28:39] van.cc:601: ..."
    r"|^[IWEF](?:\d{4})?\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] "  # glog's prefix, with the year since glog
    # 0.7: "E0603 20:16:59.104586 27322 file.cc:271] ", "F20250701 23:13:36.927526   844 transport.cc:573] "
    r"|^\d+\.\d\d\.\d{3}\.\d{3} [IWEDT] "  # llama.cpp's logger: "0.01.252.536 I load_tensors: offloaded 66/66 layers"
    r"|^[IWEDC] \d\d-\d\d \d\d:\d\d:\d\d [\w.]+:\d+\] "  # SkyPilot's logger: "I 06-27 12:40:49 optimizer.py:695] "
    r"|^[\w.-]+: error: (?:unrecognized arguments|the following arguments are required|argument |invalid choice)"
    # argparse's usage error: "pretrain_gpt.py: error: unrecognized arguments: --local_rank=1"
    r"|^\s*\u279c\s+\S|^\s*NAME\s{2,}[A-Z]+(?:\s{2,}[A-Z]+)+\s*$"  # zsh's arrow prompt; kubectl get's header row
    r"|^Welcome to (?:Ubuntu|Debian|Red Hat|Rocky|CentOS)\b|^\s*System information as of |^Last login: [A-Z][a-z]{2} "
    r"|^\s*\* (?:Documentation|Management|Support):\s+https://|^\d+ updates? (?:can be applied|could not be installed)"
    r"|^To see these additional updates run: |^\*\*\* System restart required \*\*\*|^New release '|^Run 'do-release"
    r"|^(?:Expanded Security Maintenance|Enable ESM \w+ to receive|See https://ubuntu\.com/)"  # a login's banner (motd)
    r"|^\s*[-*] \*\*[^*\n]{1,40}:\*\* \S|^#{1,3} [\w+ -]{1,40}$"  # a report in Markdown: "- **OS:** Ubuntu", "## Disk"
    r"|\b(?:INFO|ERROR|WARN(?:ING)?|DEBUG|FATAL|CRITICAL)\b"  # a logger's levels
    r"|(?<!\d)\d+%\|"  # a progress bar
    r"|\bNamespace\(\w+="  # Python's argparse printing its arguments: "Command Line Args: Namespace(config_file=..."
    r"|^\s*\{\{-? .*\}\}\s*$"  # a template's directive in a manifest: "{{- if .BackoffLimit }}"
    r"|^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d [A-Z][\w ]+: "  # lspci's device line
    r"|^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d\s+(?:->|=>|:)\s+\S"  # a device's PCI address and a value
    r"|\bL#\d+\b|^\s*(?:Machine \(\d+[KMGT]?B total\)|HostBridge|PCIBridge)"  # hwloc's lstopo: "Package L#0"
    r"|\((?:[\w ]+, )?-[a-zA-Z]\)\s+\S+\s*$"  # ulimit -a: "max locked memory       (kbytes, -l) 64"
    r"|^Linux \S+ \d+\.\d+\.\d+\S* #\d+"  # uname -a
    r"|^(?:available: \d+ nodes|node \d+ (?:cpus|size|free):|node distances:)"  # numactl -H
    r"|^\s*(?:MLNX_OFED_LINUX|OFED-internal|DOCA)[-_]\d"  # ofed_info -s
    r"|^\s*MST (?:modules|devices|PCI)\b|^/dev/mst/|^\s+domain:bus:dev\.fn="  # mst status
    r"|^#? ?[A-Z][A-Za-z ]+:\.{3,}\S"  # perfquery's dotted fields: "PortXmitWait:....................12345"
    r"|^\s*\[LOG_CAT_\w+\] |^\s*\[[\w.-]+:\d+\]\[\w+\.c:\d+:\w+\] "  # HCOLL's two loggers
    r"|^\[rank: \d+\] |Initializing distributed: GLOBAL_RANK: \d+, MEMBER: \d+/\d+"  # PyTorch Lightning's start
    r"|^\s*<[?!/]?[A-Za-z_][\w:.-]*(?:\s[^<>]*)?/?>"  # an XML document's tags (nvidia-smi -q -x)
    r"|^(?:/[\w/]+/)?(?:ba|z|da)?sh: (?:line \d+: )?\S.*: "  # a shell's error: "/bin/bash: line 1: x: No such file"
    r"(?:No such file or directory|command not found|Permission denied)"
    r"|^terminate called (?:after throwing an instance of |without an active exception|recursively)"
    r"|^\s*what\(\):  "  # C++'s uncaught exception
    # assert(): "ggml.c:1052: GGML_ASSERT(...) failed", "alloc.c:88: pool_take: Assertion `slot < n' failed."
    r"|(?<![\w/.-])[\w/.-]+\.(?:c|cc|cpp|cu|cuh|h|hpp):\d+: (?:\w+: )?(?:GGML_ASSERT\(.*\) failed|Assertion .+ failed)"
    r"|^goroutine \d+ \[|^panic: |^\s+/\S+\.go:\d+|^\s+at [\w.$]+\([\w.]+:\d+\)"  # Go's and Java's stacks
    r"|^\[bt\] \(\d+\) \S|^Stack trace returned \d+ entries:"  # dmlc's backtrace (MXNet, BytePS)
)
_WRITTEN = re.compile(
    r"[;{]\s*$|^\s*}[\s;]*$|^\s*(?:#include|#define|#if|#endif|import \w|from [\w.]+ import |def \w+\(|class \w+"
    r"|func \w+\(|package \w+|return\b|if\b.*:\s*$|for\b.*:\s*$|@\w+)"  # source code (C, Python, Go)
    r"|^\s*\[[\w .:/-]+\]\s*$|^\s*[\w.-]+\s*=\s*\S"  # a config file's sections and settings (INI, TOML, .env)
    r"|^\s*(?:export|unset|source|cd|sudo|pip3?|python3?|torchrun|deepspeed|accelerate|mpirun|srun|sbatch|docker|"
    r"kubectl|git|conda|apt(?:-get)?|CUDA_VISIBLE_DEVICES=\S*|[A-Z_]+=\S+ \w)\s+\S"  # a command line without its prompt
    r"|^\s*(?:FROM|RUN|ENV|COPY|CMD|ENTRYPOINT|WORKDIR|ARG)\s+\S"  # a Dockerfile
    r"|^\s*(?:for|while|until) \S.*;\s*do\s*$|^\s*(?:done|fi|esac)\s*;?\s*$|^\s*\[\[ \S"  # a shell loop or test
)
"""Text someone wrote for a machine rather than a reader: code, a configuration file, command lines (pasted beside
what failed; never read, but not prose either)."""
_GPU_LABEL = re.compile(r"\b(?:GPU|NIC)\d+\b")
_FIELD = re.compile(r"^\s*(?:[A-Z][\w.()#/-]*(?: [\w.()#/-]+){0,4}\s*:\s+\S|(?:- )?[A-Za-z_][\w.-]*:(?:\s+\S|\s*$))")
"""A tool's field: ``Operating System: Ubuntu 22.04`` (hostnamectl), ``    max_batch_size: None,`` (a struct dump),
``  - name: library-dir-host`` and ``template:`` (a YAML manifest)."""


def _written_or_printed(text: str) -> bool:
    """A line a program printed or someone wrote for a machine; tried again without the indent of a code block."""
    return bool(_PRINTED.search(text) or _WRITTEN.search(text))


def _printed_by_a_program(texts: list[str], logged: list[bool] | None = None) -> bool:
    """Whether lines are a program's output rather than words someone wrote: half of them a table's row, aligned
    columns, a logger's line (its time, level or glog prefix), a shell's prompt or error, a progress bar, lspci's
    device line, hwloc's lstopo tree or a manifest's template directive (or carried a logger's prefix, ``logged``),
    or two thirds of them fields (``Key: value``, YAML) or printed lines (a logger's line, then the struct it
    dumps). Such text (a Ray Tune table, hostnamectl, an IPMI event list, a Kubernetes manifest), and text written
    for a machine (code, a configuration file, command lines: :data:`_WRITTEN`), is recognised and not judged; prose
    is refused with what to paste instead."""
    lines = [t for t in texts if t.strip()]
    if not lines or any(_GPU_LABEL.search(t) for t in lines):
        return False  # "GPU0  GPU1  CPU": a capture's remains no reader could read, refused with the reader's hint
    flags = logged if logged is not None else [False] * len(texts)
    printed = [
        bool(flag or _written_or_printed(t) or (t[:1].isspace() and _written_or_printed(t.lstrip())))  # an indent
        for t, flag in zip(texts, flags, strict=True)
        if t.strip()
    ]
    printed_or_field = sum(p or bool(_FIELD.match(t)) for t, p in zip(lines, printed, strict=True))
    return sum(printed) * 2 >= len(lines) or (len(lines) >= 2 and printed_or_field * 3 >= 2 * len(lines))


_NUMBERED_DEVICE = re.compile(r"\b(?:(?:[Dd]evice|GPU|gpu) #?|cuda:)(\d{1,4})\b")  # not topo -m's "GPU0" labels


def _several_devices(texts: list[str]) -> bool:
    """Whether the lines name four or more numbered devices ("pass forward on device 5 step 33417"): a multi-GPU
    run's own log, nothing about its links in it, but not text from elsewhere."""
    numbers: set[str] = set()
    for text in texts:
        numbers.update(_NUMBERED_DEVICE.findall(text))
        if len(numbers) >= 4:
            return True
    return False


def _close(
    runs: list[_Run], current: _Run | None, pending: list[tuple[int, _Mark]], following: str
) -> list[tuple[int, _Mark]]:
    """End the current run: the lines that follow it without a blank line join it, the lines just before the next
    part that fit its kind join that part (returned), anything else in between is a part of kind ``other``."""
    i = 0
    if current is not None:
        while i < len(pending) and pending[i][1] is not _BLANK and following not in pending[i][1].kinds:
            current.lines.append(pending[i][0])
            i += 1
        runs.append(current)
    rest = pending[i:]
    j = len(rest)
    while j > 0 and (rest[j - 1][1] is _BLANK or following in rest[j - 1][1].kinds):
        j -= 1
    lead = [(n, m) for n, m in rest[j:] if m is not _BLANK]
    if following == "" or not any(following in m.kinds for _, m in lead):
        j, lead = len(rest), []
    other = [n for n, m in rest[:j] if m is not _BLANK]
    if other:
        runs.append(_Run("other", other, []))
    return lead


def _interleave(runs: list[_Run]) -> list[_Run]:
    """Join the runs of one kind that NCCL's lines interrupt, and the NCCL log they interrupt."""
    merged: list[_Run] = []
    for run in runs:
        if merged and merged[-1].kind == run.kind:
            _absorb(merged[-1], run)
        elif len(merged) >= 2 and merged[-2].kind == run.kind and INTERLEAVED in (run.kind, merged[-1].kind):
            _absorb(merged[-2], run)
        else:
            merged.append(run)
    return sorted(merged, key=lambda r: min(r.lines))


def _absorb(into: _Run, run: _Run) -> None:
    into.lines += run.lines
    into.recognised += run.recognised


def part_text(lines: Sequence[Line], part: Part) -> str:
    """The text of a part, its lines in place: line N of the result is line N of the paste (other parts' lines and
    the lines before the part are blank), so a reader's line numbers are the paste's."""
    keep = set(part.lines)
    by_number = {line.number: line.text for line in lines if line.number in keep}
    return "\n".join(by_number.get(n, "") for n in range(1, part.last + 1)) + "\n"
