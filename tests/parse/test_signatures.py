"""The signature catalog: every known message is recognised on the lines people paste, mapped to a finding code,
and the catalog itself is checked strictly.

Adding a signature is one entry in topoaudit/catalog/signatures.toml and one line in :data:`TABLE`.
"""

# ruff: noqa: E501  (one pasted line per row)

from __future__ import annotations

import re
from pathlib import Path

import pytest

from topoaudit.model.finding import Severity
from topoaudit.parse.prefixes import strip_prefixes
from topoaudit.parse.signatures import (
    TIERS,
    Catalog,
    CatalogError,
    Signature,
    _last_row,
    catalog,
    load_catalog,
    match_lines,
    match_text,
    plain_quotes,
    render_doc,
)
from topoaudit.rules.codes import CODES

ROOT = Path(__file__).parents[2]
PASTES = ROOT / "tests" / "fixtures" / "real" / "pastes"

# (a pasted line, the signature it must be recognised as): one row per signature.
# fmt: off
TABLE = [
    ("node7:1234:1234 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1", "nccl-env-p2p-disable"),
    ("localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856", "nccl-kernel-shared-memory-too-small"),
    ("node7:1234:1234 [0] enqueue.cc:52 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856", "nccl-kernel-shared-memory-too-small"),
    ("[1771466605.147536] [pod-7:195  :1]       ib_device.c:1385 UCX  ERROR   ibv_create_ah(dlid=49152 sl=0 port=1) for RC DEVX QP connect on mlx5_12 failed: No such device", "ucx-transport-error"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC", "nccl-env-p2p-level-loc"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to NVL", "nccl-env-p2p-level-restrictive"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to SYS", "nccl-env-p2p-level-permissive"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to LOC", "nccl-env-net-gdr-level-loc"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to SYS", "nccl-env-net-gdr-level"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.", "nccl-env-shm-disable"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.", "nccl-env-ib-disable"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_NET_GDR_READ set by environment to 0.", "nccl-env-net-gdr-read-off"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.", "nccl-env-nvls-off"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 1.", "nccl-env-nvls-forced"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_CUMEM_ENABLE set by environment to 0.", "nccl-env-cumem-off"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_P2P_DIRECT_DISABLE set by environment to 1.", "nccl-env-p2p-direct-disable"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_NVB_DISABLE set by environment to 1.", "nccl-env-nvb-disable"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_PXN_DISABLE set by environment to 1.", "nccl-env-pxn-disable"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_MNNVL_ENABLE set by environment to 0.", "nccl-env-mnnvl-off"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 2.", "nccl-env-max-channels"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_MIN_NRINGS set by environment to 4.", "nccl-env-min-channels"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_IGNORE_DISABLED_P2P set by environment to 1.", "nccl-env-ignore-disabled-p2p"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_CROSS_NIC set by environment to 0.", "nccl-env-cross-nic"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_NET_DISABLE_INTRA set by environment to 1.", "nccl-env-net-disable-intra"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_P2P_USE_CUDA_MEMCPY set by environment to 1.", "nccl-env-p2p-use-cuda-memcpy"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_COLLNET_ENABLE set by environment to 1.", "nccl-env-collnet"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_ALGO set by environment to Ring", "nccl-env-algo"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_PROTO set by environment to Simple", "nccl-env-proto"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/microsoft/ndv5-topo.xml", "nccl-env-topo-file"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /etc/nccl/graph.xml", "nccl-env-graph-file"),
    ("node7:1234:1234 [0] NCCL INFO Comm config netName reset to NCCL_NET=Socket", "nccl-env-net-name"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_1,mlx5_2,mlx5_3", "nccl-env-ib-hca"),
    ("node7:1234:1234 [0] NCCL INFO User asked for a minimum of 64 channels, limiting to 32", "nccl-env-channels-capped"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] enqueue.cc:2063 NCCL WARN No algorithm/protocol available for function AllReduce with datatype ncclBfloat16. NCCL_ALGO was set to NVLS.", "nccl-env-no-algorithm"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/nvls.cc:254 NCCL WARN NCCL_NVLS_ENABLE has been set to \"1\" and communicator has multiple ranks using the same NVML device. This is not compatible with NCCL_NVLS_ENABLE=1.", "nccl-env-nvls-multi-rank-gpu"),
    ("node7:1234:1234 [0] NCCL INFO Invalid value yes for NCCL_IB_DISABLE, using default 0.", "nccl-env-invalid-value"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_BUFFSIZE set by environment to 8388608.", "nccl-env-set"),
    ("node7:1234:1234 [0] NCCL INFO Comm config maxCTAs reset to NCCL_MAX_CTAS=4", "nccl-env-comm-config"),
    ("root@deepseek:/data/nccl-tests# CUDA_VISIBLE_DEVICES=0,1,2,3 NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 4", "shell-env-transport-off"),
    ("mpirun -np 16 -N 8 --hostfile /tmp/2hosts.txt -x NCCL_ALGO=Ring -x NCCL_MIN_CTAS=24 ./build/all_reduce_perf -b 1M -e 8G", "shell-env-path-choice"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 802 'system not yet initialized'", "cuda-802-system-not-ready"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'", "cuda-401-illegal-state"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'", "cuda-217-peer-access-unsupported"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 999 'unknown error'", "cuda-999-unknown"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 3 'initialization error'", "cuda-3-initialization-error"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 100 'no CUDA-capable device is detected'", "cuda-100-no-device"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 101 'invalid device ordinal'", "cuda-101-invalid-device"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 2 'out of memory'", "cuda-2-out-of-memory"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'", "cuda-700-illegal-address"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 719 'unspecified launch failure'", "cuda-719-launch-failure"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 201 'invalid device context'", "cuda-201-invalid-context"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 46 'CUDA-capable device(s) is/are busy or unavailable'", "cuda-46-devices-unavailable"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 800 'operation not permitted'", "cuda-800-not-permitted"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 801 'operation not supported'", "cuda-801-not-supported"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 705 'peer access has not been enabled'", "cuda-705-peer-access-not-enabled"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 220 'uncorrectable NVLink error detected during the execution'", "cuda-220-nvlink-uncorrectable"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 214 'uncorrectable ECC error encountered'", "cuda-214-ecc-uncorrectable"),
    ("ArchLinux:6482:6482 [0] misc/strongstream.cc:60 NCCL WARN Cuda failure 'CUDA driver is a stub library'", "cuda-34-stub-library"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 35 'CUDA driver version is insufficient for CUDA runtime version'", "cuda-35-insufficient-driver"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 803 'system has unsupported display driver / cuda driver combination'", "cuda-803-driver-mismatch"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 804 'forward compatibility was attempted on non supported HW'", "cuda-804-compat-unsupported"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/nvls.cc:376 NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 1207959552 : CUDA error 401 'the operation cannot be performed in the present state'.", "nccl-nvls-bind-failed"),
    ("This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.", "nccl-nvls-bind-hint"),
    ("node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'", "nccl-nvls-invalid-argument"),
    ("node004:27907:27907 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'", "nccl-nvls-cuda-failure"),
    ("node7:1234:1290 [3] NCCL INFO Failed to multicast-bind user buffer: CUDA error 1 'invalid argument'", "nccl-nvls-user-buffer"),
    ("node7:1234:1290 [3] NCCL INFO NVLS multicast support is not available on dev 0", "nccl-nvls-not-available"),
    ("> warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)", "cuda-704-peer-access-already-enabled"),
    ("   Main PID: 128549 (nv-fabricmanage)", "fm-service-running"),
    ("Rank 4 got invalid buffer data from 12.", "mooncake-peer-buffer-not-published"),
    ("Unsupported channel type: tcp", "lmcache-channel-unsupported"),
    ("LAMMPS (10 Sep 2025 - Development - patch_10Sep2025-405-gf4287f562c)", "lammps-banner"),
    ("KOKKOS mode with Kokkos version 4.7.1 is enabled", "lammps-banner"),
    ("List of waived tests:", "gdrcopy-sanity-test-list"),
    ("NCCL WARN NET/FasTrak ...: INVALID_ARGUMENT: Buffer registration request does not have a valid fd set.", "tcpxo-fastrak-error"),
    ("NCCL WARN NET/FasTrak ...: FAILED_PRECONDITION: receive() error: 32: Broken pipe", "tcpxo-fastrak-error"),
    ("RuntimeError: Timed out initializing process group in store based barrier on rank: 3, for key: store_based_barrier_key:1 (world_size=8, worker_count=4, timeout=0:30:00)", "torch-store-barrier-timeout"),
    ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).", "torch-store-bind-failed"),
    ("[E ProcessGroupGloo.cpp:137] Rank 0 successfully reached monitoredBarrier, but received errors while waiting for send/recv from ranks: 1, 3.", "torch-monitored-barrier-ranks-missing"),
    ("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[4], TensorDtypes=Float)", "torch-collective-mismatch"),
    ("   GUID 0x1070fd0300370ea2 port ALL: [LinkDownedCounter == 25 (25.000)] [PortRcvErrors == 26 (26.000)] [PortXmitDiscards == 2846 (2.779K)] [PortXmitWait == 14681376621 (13.673G)]", "ibqueryerrors-port-errors"),
    ("  ============================ ROCm System Management Interface ============================", "rocm-smi-output"),
    ("================================ Weight between two GPUs =================================", "rocm-smi-output"),
    ("[compute-9-19][[47293,1],9][btl_openib_component.c:1670:init_one_device] error obtaining device attributes for mlx4_0 errno says Success", "ompi-openib-device-init-failed"),
    ("WARNING: There was an error initializing an OpenFabrics device.", "ompi-openib-device-warning"),
    ('ibv_exp_query_device: invalid comp_mask !!! (comp_mask = 0x27800000002 valid_mask = 0x1)"', "ibverbs-exp-comp-mask-invalid"),
    ("0: compute-st-p4de24xlarge-1:34639:36718 [5] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4", "nccl-bootstrap-message-truncated"),
    ("node1:123:456 [0] NCCL WARN Message truncated : received 1024,8 bytes instead of 256,8", "nccl-bootstrap-message-truncated"),
    ("n1:12:12 [0] bootstrap.cc:126 NCCL WARN Bootstrap Root : mismatch in rank count from procs 8 : 16", "nccl-bootstrap-rank-count-mismatch"),
    ("n1:12:12 [0] NCCL WARN Bootstrap Root : mismatch in info from procs, nranks 8 vs 16, nroots 1 vs 1, iroot 0 vs 0", "nccl-bootstrap-rank-count-mismatch"),
    ("n1:12:40 [3] include/ibvwrap.h:63 NCCL WARN Call to ibv_poll_cq() returned -1", "nccl-ib-poll-cq-failed"),
    ("n1:12:40 [3] NCCL WARN ibv_post_send() failed with error Cannot allocate memory, Bad WR 0x7f10, First WR 0x7f10", "nccl-ib-post-failed"),
    ("n1:12:40 [3] NCCL WARN ibv_post_recv() failed with error Invalid argument", "nccl-ib-post-failed"),
    ("n1:12:40 [3] NCCL WARN NET/IB: Got CQE with error (devIndex=0, req=0x7f10, comm=0x7f20 (send), wr_id=12, qp_num=4242)", "nccl-ib-cqe-error"),
    ("n1:12:40 [3] NCCL WARN communicator encountered a fatal error (detected in ncclIbTest)", "nccl-ib-communicator-fatal"),
    ("n1:12:40 [3] NCCL WARN NET/IB : mlx5_2:1 GID table changed", "nccl-ib-gid-changed"),
    ("n1:12:12 [0] NCCL WARN Failed to initialize any NET plugin", "nccl-net-plugin-none"),
    ("n1:12:99 [0] NCCL WARN NCCL version mismatch with remote peer 10.1.2.3<28028> (local: 2.26.5, remote 2.27.3)", "nccl-ras-version-mismatch"),
    ("n1:12:12 [0] NCCL WARN Net : error encountered when getting address info : Name or service not known", "nccl-address-lookup-failed"),
    ("n1:12:50 [0] NCCL WARN socketTryAccept: exceeded error retry count after 34 attempts, Too many open files", "nccl-socket-accept-retries-exhausted"),
    ("n1:12:50 [0] NCCL WARN NET/Socket : socket progress error", "nccl-socket-progress-error"),
    ("n1:12:12 [0] NCCL WARN Error: Could not map /dev/shm/nccl-6JRmQb size 9637888, error: No such device (19)", "nccl-shm-map-failed"),
    ("n1:12:12 [0] NCCL WARN Error: failed to create shared memory file /dev/shm/nccl-XXXXXX, error No space left on device (28)", "nccl-shm-map-failed"),
    ("n1:12:12 [0] NCCL WARN GDRCOPY failure -22", "nccl-gdrcopy-failed"),
    ("n1:12:12 [0] NCCL WARN gdr_pin_buffer(addr 7f3a00000000, size 65536) failed: -22", "nccl-gdrcopy-failed"),
    ("n1:12:12 [0] NCCL WARN NVML failure 'Unknown Error'", "nccl-nvml-failure"),
    ("n1:12:12 [0] NCCL WARN nvmlDeviceGetP2PStatus(0,1,NVML_P2P_CAPS_INDEX_READ) failed: GPU is lost", "nccl-nvml-failed"),
    ("n1:12:12 [0] NCCL WARN Failed to find CUDA library libcuda.so (NCCL_CUDA_PATH='') : libcuda.so: cannot open shared object file: No such file or directory", "nccl-cuda-library-missing"),
    ("n1:12:12 [0] NCCL WARN NET/Socket : message truncated : receiving 1048576 bytes instead of 65536", "nccl-socket-message-truncated"),
    ("n1:12:40 [3] NCCL WARN NET/IB/GIN: Got completion from peer 10.0.0.2<4321> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_0", "nccl-ib-completion-error"),
    (
        "host-2:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_32:1 Got async error event: port error",
        "nccl-ib-port-event",
    ),
    (
        "node:15483:15645 [0] transport/net_ib.cc:665 NCCL WARN NET/IB : collective mismatch error local size 546816 "
        "remote 524288 addr 7ff7d1530000 rkey 2553d seq 14/1c",
        "nccl-ib-collective-mismatch",
    ),
    (
        "node:1:2 [0] transport/net_ib.cc:1119 NCCL WARN NET/IB : req 1/1 tag 7 peer 10.0.0.2<40000> collective "
        "mismatch error, local size 4096 remote size 8192",
        "nccl-ib-collective-mismatch",
    ),
    (  # a line starting with "AMD-Vi: " (read as a host's prefix) or with the IOMMU's name before it
        "AMD-Vi: Event logged [IO_PAGE_FAULT device=41:00.0 domain=0x000c address=0x7f000000 flags=0x0020]",
        "iommu-io-page-fault",
    ),
    (
        "[ 102.0] iommu ivhd0: AMD-Vi: Event logged [IO_PAGE_FAULT device=0000:41:00.0 domain=0x000c "
        "address=0x38c8ff000 flags=0x0020]",
        "iommu-io-page-fault",
    ),
    ("[  100.6] pcieport 0000:16:02.0: AER: Uncorrected (Fatal) error received: 0000:17:00.0", "pcie-aer-received-fatal"),
    ("pcieport 0000:00:03.1: AER: Corrected error message received from 0000:c1:00.0", "pcie-aer-received-nonfatal"),
    ("[   13.377538] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:", "nvrm-pci-region-invalid"),
    (
        "[    5.300000] nvidia 0000:18:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at "
        "0000:17:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)",
        "kernel-pcie-bandwidth-limited",
    ),
    ("[Mon Jan  1 00:00:00 2024] mlx5_core 0000:3b:00.0 ens1f0np0: Link down", "mlx5-netdev-link-down"),
    (
        '* Sfc6a1c0300b00580/Nfc6a1c0300b00580/P1/5/1 - "symbol_error_counter" increased during the run (difference '
        "value=27,difference allowed threshold=1)",
        "ibdiagnet-counter-increased",
    ),
    (
        "[jwb0296:32182:0:32182] ib_mlx5_log.c:145  Transport retry count exceeded on mlx5_2:1/IB (synd 0x15 vend 0x81 "
        "hw_synd 0/0)",
        "ucx-ib-completion-error",
    ),
    (
        "[node1:123:0:123] ib_mlx5_log.c:177  Error on QP 0x1a2b wqe[12]: Remote access (synd 0x13 vend 0x88) opcode RDMA_READ",
        "ucx-ib-completion-error",
    ),
    (
        "libfabric:718892:1658904526::efa:mr:efa_mr_regattr():632<warn> Unable to register MR: Cannot allocate memory",
        "efa-mr-register-enomem",
    ),
    (
        "Unable to write to EQ: Missing or unavailable event queue. err: Cannot allocate memory (-12) prov_errno: "
        "Cannot allocate memory (-12) ./prov/efa/src/rxr/rxr.h:683",
        "efa-eq-write-abort",
    ),
    (
        "master:608:608 [0] transport/net_ib.cc:115 NCCL WARN Could not find real path of rxe0 "
        "(/sys/class/infiniband/rxe0/device)",
        "nccl-ib-device-no-pci-path",
    ),
    ("ecb2de971add:35791:35960 [3] INFO nvmlDeviceGetNvLinkCapability() failed: Not Supported", "nccl-nvml-nvlink-not-supported"),
    (
        "zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (34/34) "
        "after sleep for 3400 msec",
        "nccl-socket-connect-retries-exhausted",
    ),
    (
        "z:1:1 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (26/34) after sleep for 2600"
        " msec",
        "nccl-socket-connect-retrying",
    ),
    ("h:5:5 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0", "nccl-rings-gdr-off"),
    ("nvidia-nvswitch3: SXid (0008:00:00.0: 20034, Fatal, Link 29 LTSSM Fault Up", "sxid-fatal-link"),
    ("[ 88.1] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20020, Fatal, Device 0 internal error", "sxid-fatal"),
    ("ib_write_bw: Couldn't connect to 192.168.1.2:18515", "perftest-oob-connect-failed"),
    ("Found XID errors: 63", "health-check-found-xids"),
    ("warning: p2p 1 <-> 0 is impossible", "kmcuda-p2p-impossible"),
    ("Peer access between the two devices is not possible.", "alpaka-peer-access-not-possible"),
    ('Jul 20 16:15:36 edge:  Kernel module "ib_umad" has not been loaded, fabric manager cannot be started', "fm-start-ib-umad-not-loaded"),
    ("nid006365:180142:180163 [0] net.cc:626 NCCL WARN Error: network AWS Libfabric not found.", "nccl-net-not-found"),
    ("Xid 149, NETIR_LINK_DOWN Fatal XC0 i0 Link 14", "xid-144-150-fatal"),  # quoted without its PCI id
    ("Xid 79, pid=1234, GPU has fallen off the bus.", "xid-79"),
    (" Port number 1 state is Down", "perftest-port-not-active"),
    ("<node ip>: fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value", "fm-config-item-invalid"),
    ("[ 1029.7] [talos] service[ext-nvidia-fabricmanager](Waiting): Runner Containerd(ext-nvidia-fabricmanager) exited without error, going to restart it", "fm-service-restart-loop"),
    ("10.0.0.101: nvlsm: ibwarn: [15] umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version (No such file or directory): is ib_umad module loaded?", "fm-nvlsm-umad-missing"),
    ("[  212.870394] timeout waiting for: FM starting NvLink Inband", "fm-nvlink-inband-timeout"),
    ("[ERROR] Fabric Manager failed to open the NVSwitch device node", "fm-failure-words"),
    ("nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown", "container-cli-nvml-mismatch"),
    ("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 285212672 bytes.", "xla-resource-exhausted-oom"),
    ("NIC handler will be GPU", "nvshmem-ibgda-handler-placement"),
    ("node1:1234:1234 [0] NCCL INFO NET/OFI Unable to find a protocol that worked.  Failing initialization.", "ofi-no-protocol-worked"),
    ("completion with error, status: transport retry counter exceeded", "ibverbs-retry-exceeded"),
    ("[ 7634.1] mlx5_core 0000:5e:00.0: mlx5_health_check:822:(pid 0): device's health compromised - reached miss count", "mlx5-health-compromised"),
    ("[1667117403.755480] [luna-0062:1724877:0]     ucc_context.c:240  UCC  ERROR required TL nccl is not part of the context", "ucc-required-tl-missing"),
    ("MPIDI_GPU_ipc_handle_map(355)..:  gpu_ipc_handle_map failed", "mpich-gpu-ipc-map-failed"),
    ("[Sep 08 2025 23:21:50] [ERROR] detected number of NVSwitches don't match with any supported system topology, aborting fabric manager", "fm-topology-mismatch"),
    ("Couldn't connect to 10.0.0.2:18515", "perftest-oob-connect-failed"),
    (" Conflicting CPU frequency values detected: 2400.000000 != 3400.000000. CPU Frequency is not max.", "perftest-cpu-frequency-warning"),
    ("Run kernel on GPU1, taking source data from GPU0 and writing to GPU1...", "cuda-samples-simplep2p-kernel"),
    ("Disabling peer access...", "cuda-samples-simplep2p-disabling"),
    ("cma event RDMA_CM_EVENT_ADDR_ERROR, error -19", "rdma-cm-event-error"),
    ("[ 2087.126735] {1}[Hardware Error]:   aer_uncor_status: 0x00000020, aer_uncor_mask: 0x00000000", "pcie-aer-firmware-uncorrectable-status"),
    ("[74785.660380] pcieport 0000:00:02.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, id=0010(Transmitter ID)", "pcie-aer-corrected"),
    ("{8}[Hardware Error]:   aer_cor_status: 0x00001000, aer_cor_mask: 0x00000000", "pcie-aer-firmware-corrected-status"),
    ("[nvlink] P2P ENABLED \u2014 NCCL_P2P_LEVEL=PHB, custom all-reduce ON, expandable_segments stripped", "club3090-launcher-p2p-enabled"),
    ("E ucx_utils.cpp:585] VRAM memory is detected as host by UCX.", "nixl-ucx-vram-as-host"),
    ("W ucx_utils.cpp:631] 4 NVIDIA GPU(s) were detected, but UCX CUDA support was not found!", "nixl-ucx-no-cuda-support"),
    ("Couldn't register GPU MR", "gdr-sample-gpu-mr-failed"),
    ("Warning: DeepEP timeout for dispatch receive, rank 3, local_expert_idx 2, src_rank 9", "deepep-timeout"),
    ("DeepEP hybrid dispatch (forwarding) timeout, scale-out: 1, scale-up: 3, head: 0", "deepep-timeout"),
    ("DeepEP timeout check failed: rank = 5, thread = 32, value = 0)", "deepep-timeout"),
    ("RuntimeError: Assertion error: GPUDirect RDMA with CUDA VMM is not supported on this device", "deepep-gdr-vmm-unsupported"),
    ("Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?", "torch-store-peer-closed"),
    ("TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=77): failed to recv, got 0 bytes", "torch-store-peer-closed"),
    ("    GPU0 gen=4/4 width=8/16  \u26a0 WARN: never reached gen4 x16 under load", "club3090-pcie-never-full-width"),
    ("ucp_context.c:1234 UCX  WARN  network device 'mlx3_1:1' is not available, please use one or more of: 'eth0'(tcp)", "ucx-requested-device-unavailable"),
    ("ucp_context.c:1192 UCX  WARN  transport 'rc' is not available, please use one or more of: cma, cuda, tcp", "ucx-requested-device-unavailable"),
    ("RuntimeError: CUDASymmetricMemoryAllocator::rendezvous: detected allocations from overlapping devices from different ranks.", "torch-symm-mem-overlapping-devices"),
    ("EFA internal error: (4112) Failure to post internal receive buffers", "efa-internal-error-abort"),
    ("(VllmWorker TP1 pid=2) WARNING 12-05 [symm_mem.py:67] SymmMemCommunicator: symmetric memory multicast operations are not supported.", "vllm-symm-mem-no-multicast"),
    ("WARNING 12-05 [symm_mem.py:61] SymmMemCommunicator: symmetric memory initialization failed: CUDA driver error: invalid device ordinal Communicator is not available. To suppress this warning set VLLM_ALLREDUCE_USE_SYMM_MEM=0", "vllm-symm-mem-init-failed"),
    ("ERROR:  nhc:  Health check failed:  check_ps_service:  Service nvidia-fabricmanager (process nv-fabricmanager) owned by root not running", "nhc-fabric-manager-not-running"),
    ("ERROR:  nhc:  Health check failed:  check_ps_daemon:  Process nv-fabricmanager owned by root not running", "nhc-fabric-manager-not-running"),
    ("|   0  ERR!                On   | 00000000:19:00.0 Off |                 ERR! |", "smi-table-gpu-error"),
    ("|ERR!  ERR! ERR!    ERR! / ERR! |      0MiB / 46068MiB |    ERR!      Default |", "smi-table-gpu-error"),
    ("pynvml.NVMLError_ResetRequired: GPU requires reset", "nvml-gpu-requires-reset"),
    ("    GPU Recovery Action                   : Reset", "smi-gpu-recovery-action"),
    ("10: socketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection abort", "nccl-connect-loopback-failed"),
    ("No devices were found", "smi-no-devices"),
    ("[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33", "fm-nvswitch-fatal-error"),
    ("[Feb 27 2025 15:10:02] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61", "fm-nvswitch-non-fatal-error"),
    ("[Sep 17 2024 06:01:46] [ERROR] [tid 1230079] failed to find the GPU handle 5410063385821516767 in the multicast team request setup 6130285411925746235.", "fm-multicast-gpu-handle-missing"),
    ("An error occurred while trying to get the BUFFER_ID of a GPU memory", "ompi-cuda-buffer-id-failed"),
    ("NET/IB: ncclIbCompletionEventProcess: Receiver got a completion for a CTS but retrieved", "nccl-ib-unused-request-completion"),
    ("CUDA-aware support is disabled.", "ompi-cuda-symbol-missing"),
    ("but each of them failed.  CUDA-aware support is disabled.", "ompi-cuda-library-missing"),
    ("The call to cuMemcpyAsync failed. This is a unrecoverable error and will", "ompi-cuda-call-unrecoverable"),
    ("000a:11:00.1 | mlx5_1 | ib1 |  2   |  init   |  down  |  IB  | 100  |   x16 G3    |   x8 >!<    |  MT4119", "lshca-port-not-active"),
    ("0000:81:00.0 | mlx5_2 | ib2  |  1   | up_ip4  |  IB  | 100  |   x16 G3    |   x8 >!<    |  MT4119", "lshca-pcie-width-below-capability"),
    ("Domain State: DOWN", "imex-domain-down"),
    ("Domain State: DEGRADED", "imex-domain-degraded"),
    ("Node #1   - 10.0.0.2        - UNAVAILABLE          - Version: 570.124.06", "imex-node-not-ready"),
    ("Node #3   - 10.136.206.51   - WAITING_FOR_PEERS", "imex-node-not-ready"),
    ("Domain State: UP", "imex-domain-up"),
    ("[1716594409.541417] [gpu1:1581053:0]      ucp_worker.c:1783 UCX  INFO    ep_cfg[4]: tag(tcp/ib0 tcp/docker0)", "ucx-lanes-rma-over-tcp"),
    ("[rank1]:[E1003 18:37:01.833575187 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 6463, last enqueued NCCL work: 6463, last completed NCCL work: 6462.", "torch-watchdog-work-failed"),
    ("[rank3]:[E710 18:00:32.426302794 ProcessGroupNCCL.cpp:2395] [PG ID 0 PG GUID 0(default_pg) Rank 3]  failure detected by watchdog at work sequence id: 59958 PG status: last enqueued work: 59998, last completed work: 59957", "torch-watchdog-work-failed"),
    ("[rank1]:[E1003 18:37:01.833621509 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 1] Timeout at NCCL work: 6463, last enqueued NCCL work: 6463, last completed NCCL work: 6462.", "torch-watchdog-timeout-seen"),
    ("[rank2]: Received a dump signal due to a collective timeout from rank 10 and we will try our best to dump the debug info.", "torch-watchdog-timeout-seen"),
    ("bdb5d1df:12122:12182 [0] transport/net_ib.cu:204 WARN No module present for GPU Direct RDMA.", "nccl-gdr-module-missing"),
    ("Segmentation fault (core dumped)", "process-crashed"),
    ("bash: line 1: 81234 Killed                  python train.py", "process-crashed"),
    ("LinkDownedCounter:...............3", "perfquery-error-counter"),
    ("SymbolErrorCounter:..............65535", "perfquery-error-counter"),
    ("link mlx5_1/1 state DOWN physical_state DISABLED netdev ens1f1np1", "rdma-link-not-active"),
    ("0/1: link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 12 sm_lid 1 lmc 0 state INIT physical_state LINK_UP", "rdma-link-not-active"),
    ("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0", "rdma-link-active"),
    ("node:1:1 [0] NCCL INFO P2P not supported between GPU0 and GPU2", "nccl-alloc-p2p-not-supported"),
    ("max locked memory       (kbytes, -l) 64", "ulimit-memlock-limited"),
    ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].', "docker-gpu-driver-missing"),
    ("bandwidthTest-D2D, Bandwidth = 0.8 GB/s, Time = 0.00000 s, Size = 1000 bytes, NumDevsUsed = 1", "cuda-bandwidthtest-csv"),
    ("bandwidthTest-H2D-Pinned, Bandwidth = 6121.3 MB/s, Time = 0.00523 s, Size = 33554432 bytes, NumDevsUsed = 1", "cuda-bandwidthtest-csv"),
    ("ibv_reg_dmabuf_mr (retain) failed: Invalid argument", "ibv-reg-mr-failed"),
    ("ibv_reg_mr(gpu) failed: Bad address", "ibv-reg-mr-failed"),
    ("[rank 3] ibv_reg_mr failed (errno=14): Bad address", "ibv-reg-mr-failed"),
    ("E20260821 12:30:19.433391 rdma_context.cpp:1343] DMA BUF supported required for GPU RDMA without nvidia-peermem", "mooncake-gpu-rdma-needs-dmabuf"),
    ("src/topo/topo.cpp:61: [GPU 1] Peer GPU 0 is not accessible, exiting ... ", "nvshmem-peer-not-accessible"),
    ("mscclpp._mscclpp.IbError: (14, 'ibv_reg_mr failed (errno 14) (Ib failure: Bad address)')", "mscclpp-ib-reg-mr-failed"),
    ("libfabric:6413:1763620725::efa:mr:efa_mr_regattr():1003<warn> Unable to register MR: Bad address", "efa-mr-register-failed"),
    ("libfabric:1:2::core:core:cuda_gdrcopy_dev_register():320<warn> gdr_pin_buffer failed! error: Invalid argument ptr: 0xdc12000000 len: 8", "efa-mr-register-failed"),
    ("[25033.266922] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing", "peermem-free-callback-diagnostic"),
    ("nv_mem nv_get_p2p_free_callback:144 nv_get_p2p_free_callback -- invalid page_table ", "peermem-free-callback-diagnostic"),
    ("[1761131060.014801] [host:29   :0]           ib_md.c:1222 UCX  DEBUG rdmap183s0: cuda GPUDirect RDMA is not detected by checking /sys/module/nvidia_peermem/version", "ucx-gdr-not-detected"),
    ("[1.2] [h:1:0] ib_md.c:1446 UCX  ERROR mlx5_0: Couldn't enable GPUDirect RDMA. Please make sure nv_peer_mem, amdgpu plugin, or Intel Xe driver is installed correctly, or dmabuf is supported.", "ucx-gdr-enable-failed"),
    ("a100-4x:531896:532461 [1] graph/search.cc:625 NCCL WARN XML Import Channel : dev 3 not found.", "nccl-graph-file-dev-not-found"),
    ("  modprobe: FATAL: Module nvidia-peermem not found in directory /lib/modules/6.8.0-1059-azure", "nvidia-peermem-not-loaded"),
    ("  Failed to bind NVLink SHARP (NVLS) Multicast memory: CUDA error 401", "nccl-nvls-bind-failed"),
    ("ERROR 12-08 20:46:56 [multiproc_executor.py:597]     handle = torch_symm_mem.rendezvous(self.buffer, self.group.group_name)", "torch-symm-mem-rendezvous-failed"),
    ("[gpu03:11920] 126 more processes have sent help message help-mpi-common-cuda.txt / cuIpcGetMemHandle failed", "ompi-cuda-ipc-get-handle-failed"),
    ("[n1:42] 3 more processes have sent help message help-mpi-common-cuda.txt / cuIpcOpenMemHandle failed", "ompi-cuda-ipc-open-failed"),
    ("ERR:  error Cannot allocate memory(12) while mapping handle 92f4280, rounded_size=65536 offset=1fe380000", "gdrcopy-map-failed"),
    ("58%: Checks: 12, Failures: 0, Errors: 5", "check-suite-failures"),
    ("0%: Checks: 12, Failures: 0, Errors: 12", "check-suite-all-failed"),
    ("/lustre/nvshmem_src_2.10.1-3/src/modules/transport/libfabric/libfabric.cpp:nvshmemt_libfabric_rma:517: Received an error when trying to post an RMA operation", "nvshmem-transport-message"),
    ("nvidia-fs:nvfs_pin_gpu_pages:1292 Error ret -22 invoking nvidia_p2p_get_pages", "nvfs-p2p-get-pages-failed"),
    ("Couldn't register MR", "ibverbs-register-mr-failed"),
    ("gdrdrv:nvidia_p2p_get_pages(va=704fe0000 len=327680 p2p_token=0 va_space=0) failed [ret = -22]", "gdrdrv-p2p-get-pages-failed"),
    ("E0509 rdma_endpoint.cpp:76] Failed to create QP: Operation not supported [95]", "rdma-create-qp-failed"),
    ("E0416 18:16:50.678381 2182383 transfer_metadata_plugin.cpp:735] SocketHandShakePlugin: connect()192.168.32.3:16967: Connection refused       [111]", "mooncake-handshake-connect-failed"),
    ("E0416 18:16:50.678403 2182383 worker_pool.cpp:222] Worker: Cannot make connection for endpoint: 26.0.14.194:14300@mlx5_1", "mooncake-endpoint-unreachable"),
    ("[1765333153.178129] [g340:1586361:2]      ucp_worker.c:1912 UCX  INFO    ucp_context_0 intra-node cfg#2 rma_am(tcp/eth1)  amo_am(tcp/eth1)  am(tcp/eth1 tcp/eth5 cuda_ipc/cuda)  ka(tcp/eth1)", "ucx-lanes-rma-over-tcp"),
    ("gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'", "nccl-kernel-symbol-not-found"),
    ("[1645000000.000000] [node1:1234:0]        ib_md.c:293  UCX  ERROR ibv_reg_mr(address=0x7f0e40000000, length=8388608, access=0xf) failed: Bad address", "ucx-reg-mr-bad-address"),
    ("[1645000000.000000] [node1:1234:0]        ib_md.c:293  UCX  ERROR ibv_reg_mr(address=0x7f0e40000000, length=8388608, access=0xf) failed: Cannot allocate memory : Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)", "ucx-reg-mr-memlock"),
    ("[1645000000.000000] [node1:1234:0]       select.c:629  UCX  ERROR   no auxiliary transport to <no debug data>: Unsupported operation", "ucx-no-transport-to-peer"),
    (" Device to Host Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)        Bandwidth(MB/s)\n   33554432                     2539.2", "cuda-bandwidthtest-copy"),
    ("# OSU MPI-CUDA Bandwidth Test v5.6.1\n# Size      Bandwidth (MB/s)\n131072                330.16\n262144                325.06", "osu-bandwidth"),
    ("|              |       latency (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |\n+--------------+---------+\n            85     0.000 11780.587 11780.587     339.54     339.54          85          85", "ucx-perftest-bandwidth"),
    (" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n 8192       30000            170.04             132.18               2.016966", "perftest-bandwidth"),
    ("[  3]  0.0-10.0 sec   113 MBytes  95.1 Mbits/sec", "iperf-interval-below-10gbit"),
    ("[  5]   0.00-10.00  sec  10.9 GBytes  9.38 Gbits/sec    0             sender", "iperf-interval-below-10gbit"),
    ("RuntimeError: cuda runtime error (60) : peer mapping resources exhausted at /py/conda-bld/pytorch_1493676237139/work/torch/lib/THC/THCGeneral.c:224", "cuda-711-too-many-peers-fatal"),
    ("2020-07-24 06:07:59.775126: W tensorflow/compiler/xla/service/platform_util.cc:210] unable to create StreamExecutor for CUDA:0: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_TOO_MANY_PEERS: peer mapping resources exhausted", "cuda-711-too-many-peers-fatal"),
    ("nvidia              56467456  106 nvidia_uvm,gdrdrv,nvidia_modeset", "lsmod-nvidia-holders-no-peermem"),
    ("ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory.", "ucx-ib-resource-create-failed"),
    ("[1592900000.000000] [node1:123:0]        ib_iface.c:1377 UCX  ERROR mlx5_1: ibv_create_cq(cqe=4096) failed: Cannot allocate memory : Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)", "ucx-ib-resource-create-failed"),
    ("WARNING: There are more than one active ports on host 'm13', but the", "ompi-openib-default-gid-prefix"),
    ("[1745243850.701871] [t-20250416212336-4p8fn-worker-1:838783:0]     ucp_context.c:1774 UCX  WARN  UCP version is incompatible, required: 1.18, actual: 1.12 (release 1)", "ucx-version-incompatible"),
    ("[1700000000.000000] [node1:1234:0]     ucp_context.c:2164 UCX  WARN  UCP API version is incompatible: required >= 1.18, actual 1.12.1 (loaded from /usr/lib/x86_64-linux-gnu/libucp.so.0)", "ucx-version-incompatible"),
    ("(RayWorkerVllm pid=7602) ERROR 04-07 00:57:46 ray_utils.py:45] Attribute busid of node nic not found", "nccl-topo-nic-busid-missing"),
    ("Failed to get IB devices list: Function not implemented", "ibverbs-device-list-failed"),
    ("libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs1", "libibverbs-no-provider"),
    ("[17:47:41] src/kvstore/././comm.h:743: only 14 out of 20 GPU pairs are enabled direct access. It may affect the performance. You can set MXNET_ENABLE_GPU_P2P=0 to turn it off", "mxnet-p2p-partial"),
    ("nixlRemoteDisconnectError: NIXL_ERR_REMOTE_DISCONNECT", "nixl-remote-disconnect"),
    ("nixlBackendError: NIXL_ERR_BACKEND", "nixl-backend-error"),
    ("E0311 09:12:01.000123 4242 rdma_transport.cpp:411] No matched device found: mlx5_9", "mooncake-engine-error"),
    ("[TM][FATAL][0914.14:00:37.807188][cast.cu:264] CUDA error: no kernel image is available for execution on the device", "cuda-209-no-kernel-image"),
    ("          → cudaIpcOpenMemHandle  ← cudaErrorInvalidDevice (101)", "cuda-ipc-open-invalid-device"),
    ("ERROR:  nhc:  Health check failed:  check_hw_physmem:  Actual RAM size (1961032660 kB) greater than maximum allowed (928858388 kB).", "nhc-host-check-failed"),
    ("E0603 20:16:59.104586 27322 worker_pool.cpp:271] Worker: Process failed for slice (opcode: 1, source_addr: 0x7f20fe0f1680, length: 65536, dest_addr: 0x7f3d820f3a80, local_nic: mlx5_7, peer_nic: 10.93.81.13:15729@mlx5_0, dest_rkey: 2116517, retry_cnt: 0): transport retry counter exceeded", "mooncake-slice-failed"),
    ("f00, local_nic: mlx5_bond_2, peer_nic: 10.0.2.98:15992@mlx5_bond_1, dest_rkey: 2146656, retry_cnt: 0): local protection error", "mooncake-slice-failed"),
    ("W0724 03:14:20.702893 104002 worker_pool.cpp:303] Too many errors found in local RNIC 10.0.2.69:15858@mlx5_bond_2, mark it inactive", "mooncake-rnic-inactive"),
    ("E0724 03:14:20.707079 104002 rdma_context.cpp:261] Context is not active: mlx5_bond_2", "mooncake-rnic-inactive"),
    ("E1120 11:10:27.133715 203020 transfer_task.cpp:305] Failed to complete transfers after 60 seconds for batch 2586731328", "mooncake-transfer-timeout"),
    ("cuda_ipc_cache.c:154  UCX Fatal: dest:5221: failed to open ipc mem handle. addr:0x7f7647415c00 len:89088 (Element already exists)", "ucx-cuda-ipc-open-failed"),
    ("[deeplearn:29683:0:29730] cuda_ipc_cache.c:166  Fatal: dest:29690: failed to open ipc mem handle. addr:0x7f2c78e00000 len:80000 (Element already exists)", "ucx-cuda-ipc-open-failed"),
    ("Failed to deserialize data rail endpoints with prefix: agent_data_ep_", "nixl-libfabric-rail-mismatch"),
    ("The minimum ib rate observed is 40, but it should be 200.", "azhpc-ib-rate-below-expected"),
    ("[   84.738339] NVRM: GPU6 RPC event history (CPU <- GSP):", "nvrm-gsp-rpc-history"),
    ("NVRM: GPU0 GSP RPC buffer contains function 76 (GSP_RM_CONTROL) sequence 3 and data 0x0 0x0.", "nvrm-gsp-rpc-history"),
    ("Global rank: 13, num_recv_tokens: -1, num_rdma_recv_tokens: -1", "deepep-dispatch-counters-unset"),
    ("[1757996767.753236] proto_common.c:622 UCX TRACE lane[0] tcp/ens4047f0: added as lane 0", "ucx-proto-tcp-lane"),
    ("  what():  [enforce fail at cuda_nccl_gpu.cc:40] status == ncclSuccess. 2 vs 0.  Error at: /src/caffe2/contrib/nccl/cuda_nccl_gpu.cc40: system error Error from operator:", "caffe2-nccl-check-failed"),
    ("[1778057834.457968] [lyris0121:726540:0]  cuda_ipc_ep.c:166  UCX  ERROR", "ucx-transport-error"),
    ("lrdn1629:236813:236852 [1] NCCL INFO Call to connect returned Connection refused, retrying", "nccl-socket-connect-refused-persisting"),
    ("E0331 12:03:04.222625 56060 rdma_endpoint.cpp:385] [Handshake] Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: Connection timed out [110]", "mooncake-qp-handshake-failed"),
    ("[Handshake] Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: Connection timed out", "mooncake-qp-handshake-failed"),
    ("(ParaWorker pid=1955026) Error: Peer-to-peer access is unsupported on this platform.", "distserve-p2p-unsupported"),
    ("NVSHMEM: Unable to dlopen libmlx5dv. Disabling directNIC features.", "nvshmem-mlx5dv-missing"),
    (
        "ERROR 05-30 22:22:26 [pynccl.py:153] [DEBUG] ncclCommInitRank failed with error: NCCL error: internal error - "
        "please report this issue to the NCCL developers",
        "nccl-call-failed",
    ),
    (
        "node:1:2 [1] NCCL INFO MNNVL busId 0x6d000 fabric UUID 0.0 cliqueId 0x0 state 3 healthMask 0x41",
        "nccl-mnnvl-fabric-unhealthy",
    ),
    (
        "[misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events",
        "nccl-socket-connect-failed",
    ),
    ("host:1:2 [0] misc/socket.cc:518 NCCL WARN socketPollConnect: exceeded retries (20000)", "nccl-socket-connect-failed"),
    ("\t\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)", "lspci-link-full"),
    (
        "[rank8]:[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh failed with "
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        "torch-gloo-mesh-failed",
    ),
    (
        "[rank9]:[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using the "
        "loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.",
        "torch-gloo-loopback-fallback",
    ),
    (
        "torch.distributed.DistBackendError: NCCL communicator was aborted on rank 2. Original reason for failure "
        "was: Watchdog caught collective operation timeout",
        "torch-nccl-comm-aborted",
    ),
    ("RuntimeError: NCCL timeout in communicator initialization.", "torch-nccl-init-timeout"),
    (
        "mlx5_core 0000:3b:00.0: mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable error, "
        "High Temperature",
        "mlx5-port-module-error",
    ),
    (
        "NotImplementedError: Using RTX 3090 or 4000 series doesn't support faster communication broadband via P2P or "
        "IB. Please set `NCCL_P2P_DISABLE=\"1\"` and `NCCL_IB_DISABLE=\"1\" or use `accelerate launch`",
        "accelerate-rtx40-no-p2p-ib",
    ),
    ("[rank1]: RuntimeError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error", "cuda-226-contained"),
    (
        "[2026-06-28 13:34:12 TP7] CustomAllReduceV2 is disabled because it's not supported on more than two PCIe-only "
        "GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        "vllm-custom-allreduce-pcie-only",
    ),
    ("localhost: Test CUDA failure hypercube.cu:57 'invalid argument'", "nccl-tests-hypercube-copy-no-p2p"),
    ("node1:44:44 [0] misc/strongstream.cc:53 NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.", "nccl-graph-capture-unsupported"),
    ("libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address My EFA addr: fi_addr_efa://[fe80::13:c2ff:fe6f:f03d]:0:1072483550 My host id: i-0db7083f3fcbebb65 Peer EFA addr: fi_addr_efa://[fe80::b8:aff:fe44:425]:0:947699476 Peer host id: i-0ce6d3d57139f053c (7)", "efa-operation-error"),
    ("2017-10-05 13:53:42.989423: I C:\\tf_jenkins\\tensorflow\\core\\common_runtime\\gpu\\gpu_device.cc:847] Peer access not supported between device ordinals 1 and 0", "tf-peer-access-not-supported"),
    ("E0115 05:20:19.945191   309 rdma_transport.cpp:662] RdmaTransport: No available RNIC", "mooncake-no-available-rnic"),
    ("E0115 05:20:19.945159   309 rdma_context.cpp:81] Failed to open device mlx5_8 on port  with GID 0", "mooncake-no-available-rnic"),
    ("2025-04-04T16:57:57.7153695Z [2025-04-04 16:57:39] ip-10-0-9-191:95209:95228 [0] init.cc:416 NCCL WARN Cuda failure 'operation not supported'", "nccl-mempool-create-unsupported"),
    ("(pytorch) [root@gpu3 ~]# lsmod | grep nvidia_peermem\n(pytorch) [root@gpu3 ~]#", "peermem-module-not-loaded"),
    ("[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err 0)", "nv-peer-mem-not-loaded"),
    ("modprobe: ERROR: could not insert 'nv_peer_mem': Unknown symbol in module, or unknown parameter (see dmesg)", "nv-peer-mem-not-loaded"),
    ("ucp_context_0 inter-node cfg#2 rma_am(tcp/eth1) amo_am(tcp/eth1) am(tcp/eth1) ka(tcp/eth1)", "ucx-inter-node-tcp-only"),
    (
        "  - **PCIe:** x4 lanes negotiated (GPU max x16, Gen up to 4) | bus 00000000:06:00.0 ⚠ slot is narrower than "
        "GPU capability — affects load + all-reduce bandwidth",
        "club3090-report-pcie-narrow",
    ),
    ("Cuda failure 217 'peer access is not support between these two devices'", "cuda-217-peer-access-unsupported"),
    ("peer access is not supported between these two device", "cuda-217-peer-access-unsupported"),
    ("yq01-jpaas-ai00-let0034:890:1081 [0] INFO 7 -> 8 via NET/Socket/0", "nccl-channel-net-socket"),
    ("node1:12:40 [0] NCCL INFO Ring 00 : 7 -> 8 via NET/Socket/0", "nccl-channel-net-socket"),
    ("[TensorRT-LLM][INFO] cudaDeviceCanAccessPeer failed for device: 0 peerDevice: 1", "trtllm-peer-access-not-available"),
    (
        "E0511 07:42:36.355509 10240 rdma_context.cpp:198] Failed to register memory 0x2e1cbac200: Bad address [14]",
        "mooncake-register-memory-failed",
    ),
    (
        "ERR:  Error getting the gdrdrv driver version with ioctl error (errno=22). gdrdrv might be too old.",
        "gdrcopy-gdrdrv-version-ioctl-failed",
    ),
    ("Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)", "ibstatus-no-rdma-device"),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:19617",
        "gloo-connection-closed-by-peer",
    ),
    (
        "RuntimeError: [/opt/conda/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
        "1800000ms for recv operation to complete",
        "gloo-timed-out-waiting",
    ),
    (" Failed status 4: wr_id 0 syndrom 0x51", "perftest-completion-error"),
    (" Failed status-transport retry counter exceeded (12): wr_id 0 syndrom 0x81", "perftest-completion-error"),
    (" Found Incompatibility issue with GID types.", "perftest-gid-types-incompatible"),
    (" Unable to Connect the HCA's through the link", "perftest-connect-hcas-failed"),
    (" Unable to find the Infiniband/RoCE device", "perftest-no-rdma-device"),
    ("DMA-BUF is not supported on this GPU", "perftest-dmabuf-unsupported"),
    ("Detected 1523 CRC FLIT NvLink errors on GPU 3's NVLink which exceeds threshold of 100", "dcgm-nvlink-errors-over-threshold"),
    ("| Error: Detected 4 Replay NvLink errors on GPU 0's NVLink (should be 0)", "dcgm-nvlink-errors-critical"),
    ("213.4 CRC FLIT NvLink errors found occuring per second on GPU 5, exceeding the limit of 100 per second.", "dcgm-nvlink-error-rate"),
    ("Detected effective BER 3.21e-09 exceeds minimum threshold on GPU 2's NVLink.", "dcgm-nvlink-ber-threshold"),
    ("Only 16 NvLinks are up out of the expected 18", "dcgm-nvlinks-up-below-expected"),
    ("Detected fatal errors on NvSwitch 2 link 17", "dcgm-nvswitch-fatal-error"),
    ("Detected nonfatal errors on NvSwitch 0 link 40", "dcgm-nvswitch-nonfatal-error"),
    ("NVSwitch 1's NvLink 33 is down.", "dcgm-nvswitch-nvlink-down"),
    ("GPU 4 is running at PCI link width 8X, which is below the minimum allowed link generation of 16 (parameter 'pcie.min_pci_width')", "dcgm-pcie-link-below-minimum"),
    ("Detected more than 8 PCIe replays per minute for GPU 6 : 21", "dcgm-pcie-replay-rate"),
    ("Bandwidth of GPU 1 in direction d2h of 6.28 did not exceed minimum required bandwidth of 10.00.", "dcgm-pcie-bandwidth-low"),
    ("GPU 1 was unsuccessfully written to by GPU 0 over NVLink in a peer-to-peer test: memory mismatch", "dcgm-p2p-write-failed"),
    ("GPU 7: Fabric State is In Progress (2).", "dcgm-fabric-state-not-completed"),
    ("Fabric Manager (Cluster UUID: 3f2a0e31-7c35-4d1e-9b62-1f0e2d0f9a11, Clique ID: 32766, Health Mask: 0x4): Degraded bandwidth.", "dcgm-fabric-manager-training-error"),
    ("Detected fatal NvSwitch SXID 20034", "dcgm-nvswitch-sxid"),
    ("Detected XID 79 for GPU 2", "dcgm-xid"),
    ("GPU 3 requires peer-to-peer traffic to be quiesced. Recovery action: 3 (DRAIN_P2P).", "dcgm-recovery-drain-p2p"),
    ("0002:00:02.0 mlx4_0 (MT4100 - NA)  fw 2.43.7008 port 1 (ACTIVE) ==> ib0 (Down)", "ibdev2netdev-port-active"),
    ("mlx5_0 port 1 ==> ens1f0np0 (Up)", "ibdev2netdev-port-active"),
    ("mlx5_2 port 1 ==> ib2 (Down)", "ibdev2netdev-port-down"),
    ("0000:0c:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) fw 20.28.1002 port 1 (INIT) ==> ib0 (Up)", "ibdev2netdev-port-down"),
    ("[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)", "pcie-aer-uncorrectable-fatal"),
    ("pcieport 0000:00:01.1: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, (Requester ID)", "pcie-aer-uncorrectable-nonfatal"),
    ("[  +0.000041] pcieport 0000:00:03.0: AER: device recovery failed", "pcie-aer-recovery-failed"),
    ("Couldn't allocate MR with error=14", "perftest-mr-registration-failed"),
    ("[ERROR] failed to configure all the available GPUs or NVSwitches", "fm-config-failed"),
    ("rc_verbs_iface.c:67   send completion with error: local protection error", "ucx-rc-local-protection-error"),
    ("[rack1-93-slot7:186363] *** Process received signal ***", "process-crashed"),
    ("free(): corrupted unsorted chunks", "process-crashed"),
    ("[1730117228.178968] [dgx1v-loki-23:3000 :0]   tl_cuda_cache.c:231  UCC  ERROR ipc-cache: failed to open ipc mem handle. addr:0x7f65a8000000 len:16777216 err:201", "ucc-cuda-ipc-open-failed"),
    ("[1730117228.178968] [node1:3000 :0]   ucc_context.c:817  UCC  ERROR ctx create epilog for mlx5 failed: Unhandled error", "ucc-error"),
    ("[C25L19:1:28576 unique id 1201360626793454896] ERROR collect_ports_data: device mlx5_0 port 1 is not valid (port is used by SM)", "sharp-library-no-ports"),
    # the same messages with the rest of their line wrapped onto the next one by the page they were copied from
    ("[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=385", "torch-watchdog-timeout"),
    ("[E socket.cpp:922] [c10d] The client socket has timed out after 1800s while trying to connect to (172.17.0.2", "torch-store-connect-timeout"),
    ("[15]worker-23:83:2526 [0] misc/socket.cc:503 NCCL WARN Net : Call to recv from 100.96.188.199<41468> failed : Connection timed out", "nccl-socket-io-timed-out"),
    ('message: "GPU 3\'s NvLink link 16 is currently down ... link 17 is currently down"', "dcgm-nvlink-down"),
    ("NvSwitch physical ID 2's NvLink port 31 is currently down.", "dcgm-nvswitch-port-down"),
    ("waitForInput: poll for socket SocketImpl(fd=66, addr=[::ffff:10.164.0.78]:50434, remote=[::ffff:10.164.0.78]:29500) returned 0, likely a timeout", "torch-store-poll-timeout"),
    ("Unable to create ah.", "nvshmem-create-ah-failed"),
    ("Total: 28, Passed: 24, Failed: 2, Waived: 2", "gdrcopy-sanity-failed"),
    ("Total: 28, Passed: 28, Failed: 0, Waived: 0", "gdrcopy-sanity-passed"),
    ("    mlx5_2          \t0000000000000000", "ibv-devices-zero-guid"),
    ("I0417 10:12:01.000000       1 health.go:169] XidCriticalError: Xid=79 on Device=GPU-1f2e3d4c-0000-1111-2222-333344445555; marking device as unhealthy.", "k8s-device-plugin-xid-unhealthy"),
    ("unable to get device link information: error creating GPU device list: nvml: Unknown Error", "k8s-device-plugin-links-unreadable"),
    ("/home/u/Nvshmem/src/host/team/team_internal_nvls.cpp:254: non-zero status: 401 cuMemMap failed to map 274877906944 bytes handle at address: 0x1320000000 offset 0 on device 7", "nvshmem-nvls-map-failed"),
    ("/home/u/Nvshmem/src/host/mem/mem_heap.cpp:1573: non-zero status: 7 Mapping mem size 274877906944 to MC group 101602722380032 failed ", "nvshmem-nvls-map-failed"),
    ("/opt/nvshmem/src/host/init/init.cu:340: non-zero status: 7 bootstrap_init failed ", "nvshmem-host-error"),
    ("src/init/init.cpp:276: non-zero status: 3 building transport map failed ", "nvshmem-host-error"),
    ("init.cu:1037: non-zero status: 3 building transport map failed", "nvshmem-host-error"),
    ("[2025-06-20 02:14:03] ubuntu:33207:33207 [0] allocator.cc:79 NCCL WARN Cuda failure 711 'peer mapping resources exhausted'", "nccl-cuda-711-too-many-peers"),
    ("ib-vm-52:1047884:1048148 [7] sharp_plugin.c:320 NCCL WARN NET/IB : SHARP coll init error: Cannot create SHARP job(-11)", "sharp-coll-init-error"),
    ("node3:222:240 [0] sharp_plugin.c:471 NCCL WARN SHARP group create: No available resources(-20)", "sharp-coll-init-error"),
    ("node3:222:240 [0] sharp_plugin.c:617 NCCL WARN SHARP allreduce failed", "sharp-collective-failed"),
    ("ml-gpu-ser015:2123:2230 [3] include/socket.h:194 WARN Call to recv failed : Connection reset by peer", "nccl-socket-io-failed"),
    ("\t\t\tstate:\t\t\tPORT_ACTIVE (4)", "ibv-devinfo-port-active"),
    ("                        state:                  PORT_DOWN (1)", "ibv-devinfo-port-not-active"),
    ("\t\t\tstate:\t\t\tPORT_INIT (2)", "ibv-devinfo-port-not-active"),
    ("WARN: device erdma_0 is not enumerated as an mlx5 device. Skipping...", "nvshmem-ibgda-nic-not-mlx5"),
    ("WARN: device irdma0 is not supported (expected HCA interface: mlx5 or ibp). Skipping...", "nvshmem-ibgda-nic-not-mlx5"),
    ("I0929 12:40:26.277236       1 nvlib.go:243] identified fabric clique UUID/ID (device 0/GPU-6328b923-c487-281a-fd27-291f5d278893): 6a130f54-faaa-4b8f-847f-be44ab70f917/32766", "dra-fabric-clique-identified"),
    ("E0312 08:01:10.100000       1 main.go:90] error getting fabric information from one or more devices: NVLink fabric not attached (device 2/GPU-1f2e3d4c-0000-1111-2222-333344445555): state=1, refusing to start", "dra-fabric-not-attached"),
    ("error getting fabric information from one or more devices: NVLink fabric registration error (device 5/GPU-1f2e3d4c-0000-1111-2222-333344445555): status=ERROR_UNKNOWN, refusing to start", "dra-fabric-registration-error"),
    ("E0312 08:01:10.100000       1 main.go:90] unexpected number of unique CliqueIDs found on devices", "dra-fabric-cliques-differ"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] mnnvl.cc:74 NCCL WARN MNNVL (cliqueSize 72) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.", "nccl-mnnvl-imex"),
    ("node7:1234:1290 [3] NCCL INFO MNNVL busId 0x901000 fabric UUID 9c6f5af353bf49b5.a436b66766c413c3 cliqueId 0x7ffe state 2 healthMask 0x0", "nccl-mnnvl-fabric-not-ready"),
    ("node7:1234:1290 [3] NCCL INFO MNNVL busId 0x901000 fabric UUID 9c6f5af353bf49b5.a436b66766c413c3 cliqueId 0x7ffe state 3 healthMask 0x4", "nccl-mnnvl-fabric-unhealthy"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] graph/paths.cc:396 NCCL WARN P2P is disabled between NVLINK connected GPUs 1 and 5. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.", "nccl-p2p-disabled-nvlink"),
    ("node7:1234:1290 [3] NCCL INFO P2P is disabled between connected GPUs 0 and 2. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.", "nccl-p2p-disabled"),
    ("node7:1234:1290 [3] NCCL INFO Could not enable P2P between dev 0(=1b000) and dev 1(=1c000)", "nccl-p2p-could-not-enable"),
    ("node7:1234:1290 [3] NCCL INFO peer query failed between dev 0(=1b000) and dev 1(=1c000)", "nccl-p2p-peer-query-failed"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:355 NCCL WARN failed to peer with device 1(=1c000): 217 peer access is not supported between these two devices", "nccl-p2p-failed-to-peer"),
    ("(pid=909608) z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices", "nccl-p2p-ipc-open-failed"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:250 NCCL WARN cudaIpcGetMemHandle failed : invalid argument", "nccl-p2p-ipc-export-failed"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport.cc:39 NCCL WARN No transport found for rank 0[1b000] -> rank 1[1c000]", "nccl-no-transport"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] misc/shmutils.cc:83 NCCL WARN Error: failed to extend /dev/shm/nccl-Y4x8nq to 9637892 bytes, error: No space left on device (28)", "nccl-shm-too-small"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] init.cc:573 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1b000", "nccl-duplicate-gpu"),
    ("node7:1234:1290 [3] NCCL INFO Using network Socket", "nccl-using-network-socket"),
    ("node7:1234:1290 [3] NCCL INFO NET/IB : No device found.", "nccl-net-ib-no-device"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/net_ib/init.cc:307 NCCL WARN NET/IB : No IP interface found.", "nccl-net-ib-no-ip-interface"),
    ("node7:1234:1290 [3] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.7<0> [1]eth1:10.1.0.7<0>", "nccl-net-socket-using"),
    ("node7:1234:1290 [3] NCCL INFO Failed to open libibverbs.so[.1]", "nccl-ibverbs-missing"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed", "nccl-ib-open-device-failed"),
    ("node7:1234:1290 [3] NCCL INFO Channel 00 : 1[3b000] -> 0[3b000] [receive] via NET/Socket/0", "nccl-channel-net-socket"),
    ("node7:1234:1290 [3] NCCL INFO Channel 00/0 : 15[7] -> 0[0] [receive] via NET/IB/0", "nccl-channel-net-no-gdr"),
    ("node7:1234:1290 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'", "nccl-gdr-disabled-hca"),
    ("node7:1234:1290 [3] NCCL INFO GPU Direct RDMA Disabled for GPU 3 / HCA 2 (distance 7 > 5)", "nccl-gdr-disabled-distance"),
    ("node7:1234:1290 [3] NCCL INFO HINT: In many cases this error occurs when ACS is enabled which would break GPU Direct RDMA protocol.", "nccl-ib-hint-acs"),
    ("NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:8b:df54%ib0<33397> with error 4, opcode 32611, len 32611, vendor err 81 (Send)", "nccl-ib-local-protection-error"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/net_ib/p2p.cc:688 NCCL WARN NET/IB: Got completion from peer 10.1.0.8<53420> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 localGid ::ffff:10.1.0.7 remoteGids ::ffff:10.1.0.8 hca mlx5_3", "nccl-ib-completion-error"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/net_ib/common.cc:123 NCCL WARN NET/IB : mlx5_3:1 async fatal event: local catastrophic error", "nccl-ib-async-fatal"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_1:1 Got non-fatal async event: port error(10)", "nccl-ib-port-event"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/net_ib/common.cc:163 NCCL WARN NET/IB : mlx5_2:1 speed change detected: 400000 -> 200000 Mbps", "nccl-ib-speed-change"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/net_ib/connect.cc:987 NCCL WARN NET/IB : Attempted to connect incompatible devices: [0]mlx5_0:1/IB and [0]mlx5_4:1/RoCE. Try selecting NICs of only one link type using NCCL_IB_HCA", "nccl-ib-mixed-link-layers"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] init.cc:1339 NCCL WARN Detected mixed local Net device counts across ranks (min 7, max 8). Set NCCL_IGNORE_NET_MISMATCH=1 to continue.", "nccl-mixed-net-devices"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] misc/socket.cc:58 NCCL WARN socketProgress: Connection closed by remote peer node2<57557>", "nccl-socket-closed-by-peer"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort", "nccl-socket-connect-failed"),
    ("node1:2345:2400 [0] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)", "nccl-socket-connect-failed"),
    ("node1:2345:2400 [0] misc/socket.cc:525 NCCL WARN socketPollConnect: exceeded timeouts (20)", "nccl-socket-connect-failed"),
    ("spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed", "nccl-ib-resource-create-failed"),
    ("node1:1:1 [0] misc/ibvwrap.cc:254 NCCL WARN Call to ibv_create_qp failed with error Cannot allocate memory", "nccl-ib-resource-create-failed"),
    ("node1:2345:2400 [0] os/linux.cc:287 NCCL WARN socketPollConnect: connect to 10.0.0.2<34567> returned Connection refused, exceeded error retry count after 35 attempts", "nccl-socket-connect-failed"),
    ("socketPollConnect: connect to 169.254.170.23<...> returned Connection refused, retrying (13/34)", "nccl-socket-connect-retrying"),
    ("node1:2345:2400 [0] NCCL INFO socketStartConnect: connect to 10.0.0.2<34567> returned No route to host, retrying (1/34) after sleep for 100 msec", "nccl-socket-connect-retrying"),
    ("[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with error. RC: 20. Error: unknown error. Completed length: 0, Request: { buffer_index: 255, dev: 1, size: 0, state: CREATED, direction: SEND }", "ofi-request-completed-with-error"),
    ("WARN: Function: create_nccl_ofi_component Line: 459: NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument", "ofi-libfabric-setup-failed"),
    ("node1:1:1 [0] NCCL WARN NET/OFI Couldn't open a fabric access domain. RC: -12, ERROR: Cannot allocate memory", "ofi-libfabric-setup-failed"),
    ("(RayWorkerWrapper pid=92234, ip=172.19.24.110) mlx5: host_unknown: got completion with error: [repeated 2x across cluster]", "mlx5-completion-with-error"),
    ("FI_EFA_USE_DEVICE_RDMA=1 was set by user, but EFA device has no rdma-read capability.  Application will abort().", "efa-device-rdma-unsupported"),
    ("[TensorRT-LLM][WARNING] Device 2 peer access Device 5 is not available.", "trtllm-peer-access-not-available"),
    ("tcpxResult_t tcpxCommProgress(tcpxComm*):1126 NCCL WARN 0x..., nic 3, enp6s0, ... rx rx ctrl timeout cnt 21311883, nanos 10000000217", "tcpx-rx-ctrl-timeout"),
    ("/sgl-workspace/nvshmem/src/modules/transport/ibgda/ibgda.cpp:3025: non-zero status: 7 ", "nvshmem-transport-error"),
    ("Job for nvidia-fabricmanager.service failed because the control process exited with error code.", "fm-service-failed"),
    ("seyun:17283:17549 [3] include/socket.h:371 WARN Connection closed by remote peer", "nccl-socket-closed-by-peer"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] bootstrap.cc:126 NCCL WARN Bootstrap : no socket interface found", "nccl-no-socket-interface"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 2", "nccl-proxy-failed"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 0 version 22105 rank 8 version 22304", "nccl-version-mismatch"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] include/alloc.h:493 NCCL WARN Failed to CUDA calloc 536870912 bytes", "nccl-cuda-alloc-failed"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] misc/nvmlwrap.cc:183 NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found", "nccl-nvml-failed"),
    ("graph/xml.h: NCCL WARN Error : too many XML nodes (max 256)", "nccl-topo-xml-too-large"),
    ("node7:1234:1290 [3] NCCL INFO Could not find a path for pattern 4, falling back to simple order", "nccl-rings-fallback"),
    ("node7:1234:1290 [3] NCCL INFO Pattern 4, crossNic 0, nChannels 2, speed 12.000000/12.000000, type PHB/PIX, sameChannels 1", "nccl-graph-pcie-only"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] ras/client_support.cc:160 NCCL WARN Call to bind failed: Address already in use", "nccl-ras-bind-in-use"),
    ("node7:1234:1290 [3] misc/socket.cc:506 NCCL WARN Call to accept failed : Too many open files", "nccl-syscall-failed"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 704 'peer access is already enabled'", "nccl-cuda-failure"),
    ("[2025-06-01 10:00:00] node7:1234:1290 [3] graph/topo.cc:1566 NCCL WARN Fusing NET devices from different NUMA domains is not supported.", "nccl-warn"),
    ("[rank3]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3699, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3", "torch-nccl-error"),
    ("[rank3]: ncclUnhandledCudaError: Call to CUDA function failed.", "torch-nccl-result"),
    ("RuntimeError: DeepEP error: timeout (dispatch CPU)", "deepep-timeout"),
    ("node3:1:2 [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_3:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.3, remote GID ::ffff:10.0.1.7", "nccl-ib-qp-transition-failed"),
    ("e53b7da88fea:2493:2753 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>", "nccl-socket-loopback"),
    ("node1:1:1 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0> [1]eth0:10.1.2.3<0>", "nccl-socket-loopback"),
    ("node1:1:1 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>", "nccl-socket-loopback"),
    ("node3:1:2 [5] NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110", "nccl-ib-qp-transition-failed"),
    ("node3:1:2 [5] NCCL WARN Call to ibv_dereg_mr failed with error Invalid argument", "nccl-syscall-failed"),
    ("DeepEP dispatch forwarder timeout (RDMA meta), channel: 4, RDMA: 1, nvl: 4, src RDMA lane: 0, dst NVL: 5, meta: 0, 0, 0, 0", "deepep-timeout"),
    ("DeepEP combine RDMA receiver timeout, channel: 3, RDMA: 0, nvl: 2, src RDMA: 1, tail: 7, waiting: 12, expected: 9", "deepep-timeout"),
    ("hpc-25-14:18569:18835 [0] bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already checked in", "nccl-bootstrap-rank-twice"),
    ("fabric manager NVIDIA GPU driver interface version 550.90.07 don\u2019t match with driver version 550.107.02. Please update with matching NVIDIA driver package", "fm-version-mismatch"),
    ("[TensorRT-LLM][ERROR] Failed, NCCL error /src/tensorrt_llm/cpp/tensorrt_llm/runtime/ncclCommunicator.cpp:122 'internal error - please report this issue to the NCCL developers'", "nccl-call-failed"),
    ("external/xla/xla/service/gpu/nccl_utils.cc:275: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error", "nccl-call-failed"),
    ("NCCL operation ncclCommInitRank(comm.get(), nranks, id, rank) failed: unhandled cuda error", "nccl-call-failed"),
    ("external/xla/xla/service/gpu/nccl_utils.cc:275: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: invalid usage", "nccl-call-misused"),
    ("torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.", "torch-store-clients-missing"),
    ("torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (172.17.0.9, 46229).", "torch-store-connect-timeout"),
    ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).", "torch-store-connect-timeout"),
    ("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer", "torch-store-unique-id-missing"),
    ("RuntimeError: [3] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout", "torch-store-unique-id-missing"),
    ("ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "torch-no-gpu-visible"),
    ("RuntimeError: No CUDA GPUs are available", "torch-no-gpu-visible"),
    ("RuntimeError: NCCL Error 3: internal error - please report this issue to the NCCL developers", "torch-nccl-error"),
    ("[job-3bb823c0-worker-0:4682 :0:4682] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))", "process-crashed-signal"),
    ("Fatal Python error: Segmentation fault", "process-crashed-signal"),
    ("torch.distributed.elastic.multiprocessing.api: [WARNING] Signal 11 (SIGSEGV) received by PID 4682", "process-crashed-signal"),
    ("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.", "torch-watchdog-timeout"),
    ("[rank1]:[E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this inconsistency, we are taking the entire process down.", "torch-nccl-teardown"),
    ("RuntimeError: CUDA error: an unexpected NVRM error has occurred", "torch-cuda-error"),
    ("ERROR: The NVIDIA Driver is present, but CUDA failed to initialize.  GPU functionality will not be available.", "cuda-init-failed-banner"),
    ("(VllmWorkerProcess pid=412) WARNING 05-13 08:48:35 custom_all_reduce.py:166] Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.", "vllm-custom-allreduce-no-p2p"),
    ("WARNING 03-22 18:40:47 [custom_all_reduce.py:137] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.", "vllm-custom-allreduce-pcie-only"),
    ("Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'invalid resource handle'", "vllm-cuda-error"),
    ("   134217728      33554432     float     sum      -1   1234.5  108.72  190.26     12   1230.1  109.11  190.94      0", "nccltests-wrong-nonzero"),
    ("# Out of bounds values : 24 FAILED", "nccltests-out-of-bounds-failed"),
    ("rank=3 #wrong=1024", "nccltests-wrong-detail"),
    ("# Avg bus bandwidth    : 12.5 FAILED", "nccltests-avg-busbw-failed"),
    ("gpu-node-01: Test timeout (300s) common.cu:523", "nccltests-timeout"),
    ("DeviceImplementation > 1 requires CUDA P2P connectivity across all ranks. Not all ranks of this communicator have P2P connectivity.", "nccltests-p2p-required"),
    ("Invalid number of GPUs: 16 requested but only 8 were found.", "nccltests-invalid-gpu-count"),
    ("Incompatible NCCL versions. nccl-tests was compiled with NCCL 2.28, but is running with NCCL 22903. The 2.28 Device API is not compatible with later versions.", "nccltests-incompatible-nccl"),
    ("gpu: Test CUDA failure common.cu:1030 'invalid resource handle'", "nccltests-cuda-failure"),
    ("node7: Test NCCL failure common.cu:958 'internal error - please report this issue to the NCCL developers / '", "nccltests-nccl-failure"),
    ("Unit nvidia-fabricmanager.service could not be found.", "fm-unit-not-found"),
    ("NCCL INFO NET/Plugin: libnccl-net-ofi.so: /opt/rdma-core/build/lib/libibverbs.so.1: version `IBVERBS_PRIVATE_34' not found (required by", "nccl-net-plugin-broken"),
    ("cuInit err: 802", "cuda-802-number-only"),
    ('msg="unable to load cuda driver library" library=/usr/lib/libcuda.so.535.183.01 error="cuda driver library init failur             e: 802"', "cuda-802-number-only"),
    ("[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)", "nccl-socket-no-address"),
    ("failed to enable peer access from 0x8270570 to 0x7ba7860: CUDA_ERROR_TOO_MANY_PEERS", "cuda-711-too-many-peers"),
    ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:918] Unable to enable peer access between device ordinals 9 and 8, status: Internal: failed", "tf-enable-peer-access-failed"),
    ("ValueError: The device where the array resides (0) is different from the current device (1). Peer access is unavailable between these devices.", "cupy-peer-access-unavailable"),
    ("ValueError: The device where the array resides (0) is different from the current device (1). Peer access could not be activated automatically.", "cupy-peer-access-unavailable"),
    ("[373871.354096] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2827", "nvrm-reset-required"),
    ("[7] graph/rings.cc:38 NCCL WARN Error : ring 0 does not loop back to start (13 != 15).", "nccl-ring-no-loop-back"),
    ("nccl-tests-worker-1:28:63 [7] graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found", "nccl-topo-xml-attribute-missing"),
    ("WARN Unable to allocate shared memory (4214784 bytes) : Interrupted system call", "nccl-shm-allocate-failed"),
    ("NCCL INFO NET/Socket : Using [0]bond0:192.168.1.161<0> [1]br-05ab815fa14e:172.19.0.1<0>", "nccl-socket-container-bridges"),
    ("[1]br-05ab815fa14e:172.19.0.1<0>", "nccl-socket-container-bridges"),
    ("nccl_net_ofi_create_plugin:1067 NCCL WARN NET/OFI aws-ofi-nccl initialization failed", "ofi-plugin-init-failed"),
    ("Cuda failure p2pBandwidthLatencyTest.cu:189: 'mapping of buffer object failed'", "cuda-205-map-failed"),
    ("WARN: ibgda_alloc_and_map_qp_uar with GPU as handler failed. We may need to enter the CPU fallback path.", "nvshmem-ibgda-cpu-fallback"),
    ("WARN: cudaHostRegister with IoMemory failed with error=800. We may need to use a fallback path.", "nvshmem-ibgda-cpu-fallback"),
    ("/dvs/p4/build/sw/rel/gpgpu/toolkit/r12.8/main_nvshmem/src/host/mem/mem_heap.cpp:exchange_heap_memory_handle:775: Fatal IPC Failure", "nvshmem-fatal-ipc-failure"),
    ("IPC failure: Sending data over socket failed: No such file or directory", "nvshmem-fatal-ipc-failure"),
    ("graph/topo.h:230 NCCL WARN Could not find NET with id 0", "nccl-topo-net-id-not-found"),
    (" GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00", "perftest-zero-gid"),
    ("NCCL WARN unlink shared memory /dev/shm/nccl-d5rTd0 failed, error: No such file or directory", "nccl-shm-unlink-failed"),
    ("Error: rank 27 and rank 19 both on CUDA device 53000 (PCI 53:00.0)", "nccl-duplicate-gpu"),
    ("[WARN] CUDA IPC is not usable on this system: cudaErrorInvalidDevice: 101. Custom all-reduce kernels are disabled, falling back to NCCL.", "trtllm-cuda-ipc-unusable"),
    ("[WARN] CUDA IPC is unavailable, falling back from AUTO to NCCL allreduce.", "trtllm-cuda-ipc-unusable"),
    ("NCCL WARN NET/OFI Creating new endpoint for domain 0x7f9befa99380 failed: Invalid argument", "ofi-endpoint-create-failed"),
    ("NCCL WARN NET/OFI Couldn't allocate endpoint. RC: -22, ERROR: Invalid argument", "ofi-endpoint-create-failed"),
    ("NCCL failure *MyProgram*.cu:110 'unhandled system error'", "nccltests-nccl-failure"),
    (" .. gpu-node-01 pid 123456: Test failure common.cu:1282", "nccltests-failure-trace"),
    ("# error: unhandled system error (run with NCCL_DEBUG=INFO for details)", "nccltests-error-footer"),
    (" Invalid value when checking the pattern at 0x7f2a40000000", "nvbandwidth-pattern-mismatch"),
    (" Current offset : 1048576 ", "nvbandwidth-pattern-offset"),
    ("ASSERT in expression h_errorFlag == 0 in void memcmpPatternHelper(CUstream, CUdeviceptr, unsigned long long, unsigned int, CompareKernelFunc, std::shared_ptr<NodeHelper>)() : /src/nvbandwidth/memcpy.cpp:165", "nvbandwidth-check-assert"),
    ("ASSERT in expression localDeviceName.size() < STRING_LENGTH in void printGPUsMultinode(int)() : /src/nvbandwidth/output.cpp:137", "nvbandwidth-assert"),
    ("NVML_ERROR: [Driver Not Loaded] in expression nvmlInit() in int main(int, char**)() : /src/nvbandwidth/nvbandwidth.cpp:190", "nvbandwidth-nvml-error"),
    ("Waived: ", "nvbandwidth-waived"),
    ("ERROR:  nhc:  Health check failed:  check_nvlink_status: GPU 2 has nvlinks inactive: \t Link 4: Inactive. FaultCode: NHC2016", "nhc-nvlink-inactive"),
    ("ERROR:  nhc:  Health check failed:  check_nvlink_status: Failed to get NVLINK status with error code 0. FaultCode: NHC2016", "nhc-nvlink-query-failed"),
    ("    Link 4: Inactive", "nhc-nvlink-inactive-link"),
    ("ERROR:  nhc:  Health check failed:  check_gpu_bw: P2P test on GPU 3 to GPU 6 failed. Bandwidth 121.4 is less than 350. FaultCode: NHC2020", "nhc-gpu-p2p-bandwidth-low"),
    ("ERROR:  nhc:  Health check failed:  check_gpu_bw: H2D test on GPU 5 failed. Bandwidth 11.8 is less than 52. FaultCode: NHC2020", "nhc-gpu-host-bandwidth-low"),
    ("WARNING:  nhc:  Nearing a failure threshold:  check_gpu_bw: P2P test on GPU 2 to GPU 5 has a bandwidth of 354.02 GB/s. Expected threshold 350 GB/s.", "nhc-gpu-bandwidth-near-threshold"),
    ("ERROR:  nhc:  Health check failed:  check_gpu_xid: GPU Xid errors detected: Jun  1 10:00:00 node kernel: [1234.5] NVRM: Xid (PCI:0002:00:00): 79, pid=1234, name=python, GPU has fallen off the bus.. FaultCode: NHC2001", "nhc-gpu-xid"),
    ("ERROR:  nhc:  Health check failed:  check_ecc: GPU id 4: Row remap pending. FaultCode: NHC2007", "nhc-ecc"),
    ("ERROR:  nhc:  Health check failed:  check_gpu_count: Expected to see 8 but found 7. FaultCode: NHC2009", "nhc-gpu-count"),
    ("ERROR:  nhc:  Health check failed:  check_hw_topology: Topology mismatch! Expected to find GPU 0000:9b:00.0 under NUMA 1. FaultCode: NHC2010", "nhc-topology-mismatch"),
    ("ERROR:  nhc:  Health check failed:  check_ib_bw_gdr: ib_write_bw, IB=mlx5_ib3, mlx5_ib3, IB BW (expected > 380 Gbps, but measured 188.3 Gbps. FaultCode: NHC2003", "nhc-ib-bandwidth-low"),
    ("ERROR:  nhc:  Health check failed:  check_ib_link_flapping: IB link flapping detected. Devices: mlx5_ib2. FaultCode: NHC2005", "nhc-ib-link-flapping"),
    ("ERROR:  nhc:  Health check failed:  check_nccl_allreduce: NCCL allreduce, BUS BW (expected >=228 GB/s, but measured 96.81 GB/s). FaultCode: NHC2010", "nhc-nccl-allreduce-low"),
    ("ERROR:  nhc:  Health check failed:  check_nccl_allreduce: NCCL allreduce, Out of bounds values failed. FaultCode: NHC2010", "nhc-nccl-allreduce-corrupt"),
    ("ERROR:  nhc:  Health check failed:  check_nvsmi_healthmon:  nvidia-smi:  The GPU has fallen off the bus or has otherwise become inaccessible. FaultCode: NHC2010", "nhc-gpu-inaccessible"),
    ("ERROR:  nhc:  Health check failed:  check_fs_mount:  /mnt/resource not mounted", "nhc-host-check-failed"),
    ("ERROR:  nhc:  Health check failed:  check_hw_eth: No Ethernet device eth1 found", "nhc-check-failed"),
    ("WARNING:  nhc:  Nearing a failure threshold:  check_ib_bw_gdr: IB=mlx5_ib0, IB BW is 380 Gbps", "nhc-near-threshold"),
    ("|    -> NVLINK system       | Failure                                       |", "dcgm-subsystem-failure"),
    ("  ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 PCI:0000:9d:00.0", "dcgm-failure-reason"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.", "xid-79"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 74, NVLink: failed to train link 5 to remote PCI:0000:c8:00", "xid-74"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 48, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0.", "xid-48"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.", "xid-63"),
    ("kern: warning: [2026-04-22T21:25:20.505406921Z]: NVRM: Xid (PCI:0000:48:00): 62, 00002740 00002b08 00001126 0000117a", "xid-62"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 64, pid=1896, Row Remapper: Row remapping failed.", "xid-64"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 92, High single-bit ECC error rate", "xid-92"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 94, pid=7062, name=python3, Contained: CE User Channel (0x9). RST: No, D-RST: No", "xid-94"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 95, pid=7062, name=python3, Uncontained: LTC TAG (0x2, 0x1). RST: Yes, D-RST: No", "xid-95"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 119, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).", "xid-119"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 120, GSP task ... ", "xid-120"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 121, C2C link error", "xid-121"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 136, NVLink ALI training failed", "xid-136"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error", "xid-137"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", "xid-154"),
    ("[ 4721.118342] NVRM: Xid (PCI:0018:01:00): 144, SAW_LINK_EVT Fatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)", "xid-144-150-fatal"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 0x00000000 0x00000000 0x00000000 0x00000000)", "xid-144-150-nonfatal"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149", "xid-45-after-xid"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:18:00): 13, pid=2442, name=python3, Graphics Exception: ESR 0x514730=0x201f0000", "xid"),
    ("[ 4721.118342] NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.", "nvrm-fallen-off-bus"),
    ("[  221.902113] NVRM: GPU 0000:81:00.0: RmInitAdapter failed! (0x25:0x40:1470)", "nvrm-init-failed"),
    ("[    3.112233] NVRM: The NVIDIA probe routine failed for 1 device(s).", "nvrm-probe-failed"),
    ("[ 4721.118342] nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 44 egress non-posted PRIV error", "sxid"),
    ("[1118468.873266] nvidia 0000:0a:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000f address=0x00000000ea13a000 flags=0x0020]", "iommu-io-page-fault"),
    ("    LnkSta: Speed 2.5GT/s (downgraded), Width x16 (ok)", "pcie-link-downgraded"),
    ("        State                             : Not Started", "smi-fabric-not-started"),
    ("        State                             : In Progress", "smi-fabric-in-progress"),
    ("        Status                            : Insufficient Resources", "smi-fabric-status-error"),
    ("            Summary                       : Unhealthy", "smi-fabric-unhealthy"),
    ("            Summary                       : Limited Capacity", "smi-fabric-limited"),
    ("            Bandwidth                     : Degraded", "smi-fabric-bandwidth-degraded"),
    ("            Route Unhealthy               : True", "smi-fabric-route-problem"),
    ("            Incorrect Configuration       : Insufficient Nvlinks", "smi-fabric-incorrect-configuration"),
    ("\t Link 4: <inactive>", "smi-nvlink-inactive"),
    ("NVML: Unable to retrieve NVLink information as all links are inactive", "smi-nvlink-all-inactive"),
    ("Unable to determine the device handle for GPU0000:9B:00.0: GPU is lost.  Reboot the system to recover this GPU", "smi-gpu-lost"),
    ("Failed to initialize NVML: Driver/library version mismatch", "smi-nvml-init-failed"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.", "smi-no-driver"),
    ("[Jun 01 2025 10:00:00] [ERROR] [tid 4242] fabric manager NVIDIA GPU driver interface version 550.127.05 don't match with driver version 550.90.07. Please update with matching NVIDIA driver package.", "fm-version-mismatch"),
    ("Jun 01 10:00:00 host systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE", "fm-service-failed"),
    (" [0] NCCL INFO NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR", "ofi-gdr-disabled"),
    ("        D D D D D D D D D D D D D D D D D D", "dcgmi-nvlink-down"),
    ("gpuId 3: U U U U U U U U U U U D _ _ _ _ _ _", "dcgmi-nvlink-down"),
    ("        U U U U U U U U U U U U _ _ _ _ _ _", "dcgmi-nvlink-up"),
    ("WARNING 05-25 00:00:25 custom_all_reduce.py:74] Custom allreduce is disabled because your platform lacks GPU P2P capability. To silence this warning, specify disable_custom_all_reduce=True explicitly.", "vllm-custom-allreduce-no-p2p"),
    ("node1:1:1 [0] transport/net_socket.cc:636 NCCL WARN NET/Socket : peer 10.0.0.2<45678> message truncated : receiving 1048576 bytes instead of 65536. If you believe your socket network is in healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks", "nccl-socket-message-truncated"),
    ("node1:1:9 [0] proxy.cc:1523 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection", "nccl-proxy-connection-error"),
    ("node1:1:9 [0] NCCL WARN NET/IB : Got async event : port error", "nccl-ib-port-event"),
    ("node1:1:9 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : GID table change", "nccl-ib-port-event"),
    ("nvidia-smi: NVML: Driver/library version mismatch", "smi-nvml-init-failed"),
    ("node1:1:1 [0] net.cc:372 NCCL WARN Error: network IB not found.", "nccl-net-not-found"),
    ("Unknown option: /usr/share/nvidia/nvswitch/fabricmanager.cfg", "fm-start-script-rejected"),
    ("> Peer access from NVIDIA L4 (GPU0) -> NVIDIA L4 (GPU1) : No", "cuda-samples-peer-access-no"),
    ("> Peer access from NVIDIA A100-SXM4-80GB (GPU0) -> NVIDIA A100-SXM4-80GB (GPU1) : Yes", "cuda-samples-peer-access-yes"),
    ("\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-", "lspci-acsctl-redirect"),
    ("[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available", "ofi-getinfo-failed"),
    ("[C25L18:0:24972 - comm.c:374] ERROR Failed to lock SAT tree(ID:0x40 ret:0", "sharp-tree-lock-failed"),
    ("2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error", "nccl-ib-async-fatal-old"),
    ("gpu-node-3:4021:4021 [0] NCCL WARN Cannot initialize CollNet, using point-to-point network instead", "nccl-collnet-init-failed"),
    ("b7a1c2e9f0d3:88:88 [0] NCCL WARN No NVML device handle. Skipping nvlink detection.", "nccl-no-nvml-device-handle"),
    ("worker-0:51:51 [0] NCCL INFO No NVML device handle. Skipping nvlink detection.", "nccl-no-nvml-device-handle"),
    ("ndv4-vm-12:3311:3311 [0] NCCL WARN Could not open XML topology file /opt/microsoft/ndv4-topo.xml : No such file or directory", "nccl-topo-file-unreadable"),
    ("node3:90210:90263 [2] NCCL WARN NET/IB : Unable to query port_num 1", "nccl-ib-query-port-failed"),
    ("node3:90210:90263 [2] NCCL WARN NET/IB : Unable to query port 2", "nccl-ib-query-port-failed"),
    ("node5:7731:7810 [1] NCCL WARN Rank 9 requires NIC 3 but that NIC is not available for rank 1", "nccl-net-rank-requires-nic"),
    ("node2:441:520 [4] NCCL WARN NET/IB : Remote RoCE device is incompatible with the local [0]mlx5_0:1/IB. Try selecting NICs of only one link type using NCCL_IB_HCA", "nccl-ib-remote-link-layer-mismatch"),
    ("node1:1200:1200 [0] NCCL WARN Unable to use GIN: Peermem is not supported, and device 0 does not support DMA-BUF.", "nccl-gin-no-gpudirect"),
    ("node6:3001:3090 [5] NCCL WARN NET/IB: ncclIbResiliencyCheckCompletion: The error is fatal (No functional devices left). Cannot continue.", "nccl-ib-resiliency-fatal"),
    ("node6:3001:3090 [5] NCCL WARN NET/IB: Device 1 marked as failed. Initiating recovery? Yes (send comm=0x7f1c2c000b70, outstandingRecovery=0)", "nccl-ib-resiliency-fatal"),
    ("vm-h100-0:812:812 [3] NCCL INFO NVLink target fffffff:ffff:ff not visible, assuming NVSwitch", "nccl-nvlink-target-hidden"),
    ("node4:6060:6060 [0] NCCL WARN no device found matching ib0, verify NCCL_OOB_NET_IFNAME", "nccl-oob-ifname-no-device"),
    ("[2026-09-01 16:19:24] DESKTOP-NJJ0SFQ:2129:2129 [0] misc/ibvwrap.cc:173 NCCL WARN lib wrapper not initialized.", "nccl-ibverbs-wrapper-not-initialized"),
    ("[rank 7] Dispatch bandwidth: 0.11 GB/s, avg_t=68931.00 us | Combine bandwidth: 0.88 GB/s, avg_t=16481.00 us", "deepep-low-latency-phase-bandwidth"),
    ("ibpanic: [1323906] main: stat of IB device 'mlx5_8' failed: No such file or directory", "ibstat-device-stat-failed"),
    ("State: Active", "ibstat-port-active"),
    ("	state:		 4: ACTIVE", "ibstatus-port-active"),
    ("State                              : Active", "mlxlink-port-active"),
    ("State                              : Polling", "mlxlink-port-not-active"),
    ('Assertion "(check_gdr_support(dev)) == (true)" failed at copybw.cpp:253', "gdrcopy-gdr-unsupported"),
    ("write BW: 9437.68MB/s", "gdrcopy-copy-bandwidth"),
    ("libfabric:151205:1753871244::efa:core:efa_hmem_info_check_p2p_support_cuda():160<warn> Failed to register CUDA buffer with the EFA device, FI_HMEM transfers that require peer to peer support will fail.", "efa-cuda-register-failed"),
    ("libfabric:151205:1753871244::efa:core:efa_hmem_info_init_iface():298<info> FI_HMEM_CUDA P2P support is not available.", "efa-cuda-p2p-unavailable"),
    ("2023-09-20 11:37:58,722\tWARNING services.py:1889 -- WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only 46972928 bytes available. This will harm performance!", "ray-dev-shm-small"),
    ("(RayWorker pid=4856) *** SIGBUS received at time=1695209888 on cpu 3 ***", "process-sigbus"),
    ("/home/nvshmem_src/src/modules/transport/ibrc/ibrc.cpp:nvshmemt_init:1851: neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.", "nvshmem-peermem-missing"),
    ("[Oct 31 2023 21:11:20] [ERROR] [tid 527118] failed to find the GPU handle 12766911663723876521 in the multicast team request setup 4285537028137661651.", "fm-multicast-team-gpu-missing"),
    ("worker-1:2201:2201 [0] misc/socket.cc:261 NCCL WARN Net : No interface found in the same subnet as remote address 10.0.0.5<45123>", "nccl-no-interface-in-subnet"),
    ("trainer-0:77:77 [0] misc/nvmlwrap.cc:63 NCCL WARN Failed to open libnvidia-ml.so.1", "nccl-nvml-library-missing"),
    ("trainer-0:77:77 [0] NCCL WARN Failed to open libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared object file: No such file or directory", "nccl-nvml-library-missing"),
    ("node08:27106:27302 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-b7948f403864987a-0-3-0 (size 4460544)", "nccl-shm-segment-failed"),
    ("[2025-09-07 16:25:32 TP1] Setup Custom allreduce failed with CUDART error: peer access is not supported between these two devices. To silence this warning, specify --disable-custom-all-reduce explicitly.", "sglang-custom-allreduce-setup-failed"),
    ("NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)", "nccl-ib-completion-error"),
    ("\t\tState: Down", "ibstat-port-not-active"),
    ("\t\tState: Initializing", "ibstat-port-not-active"),
    ("node1:123:123 [0] graph/paths.cc:108 NCCL WARN Failed to find reverse path from remNode 0/41000 nlinks 2 to node 0/61000", "nccl-topo-reverse-path-missing"),
    ("      0xb88303ffff7f61c4      6    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    3[  ] \"MF0;ibswitch254:MQM8700/U1\" ( )", "iblinkinfo-link-active"),
    ("           3   17[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )", "iblinkinfo-link-not-active"),
    ("        state:           1: DOWN", "ibstatus-port-not-active"),
    ("\tstate:\t\t 2: INIT", "ibstatus-port-not-active"),
    ("e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported by protocol", "nccl-socket-creation-failed"),
    ('        "reason": "NVIDIA-H100-80GB-HBM3 checked fabric state; fabric manager found but not active",', "gpud-fabric-manager-inactive"),
    ('          "data": "{\\"fabric_manager_active\\":false,', "gpud-fabric-manager-inactive"),
    ("NVIDIA-H100-PCIe with unhealthy fabric state: GPU GPU-8ca5630b: state=Not Supported; GPU GPU-b52a020b: state=Not Supported", "gpud-fabric-state-not-supported"),
    ('{"level":"warn","ts":"2025-10-16T10:34:29.644Z","caller":"fabric-manager/component.go:378","msg":"fabric state is not healthy","reason":"GPU GPU-1182579c: state=Not Supported"}', "gpud-fabric-state-not-supported"),
    ("/repo/nvshmem_src/src/host/transport/transport.cpp:nvshmemi_transport_init:275: init failed for transport: IBGDA", "nvshmem-ibgda-init-failed"),
    ('Assertion "(gdr_pin_buffer(g, d_A, A_size, 0, 0, &A_mh)) == (0)" failed at sanity.cpp:344', "gdrcopy-pin-failed"),
    ("gdr_open error: Is gdrdrv driver installed and loaded?", "gdrcopy-pin-failed"),
    ("error in gdr_pin_buffer with code=22", "gdrcopy-pin-error-code"),
    ("[testing] Running with FP8, with top-k (async=True, previous=False) ... passed", "deepep-test-passed"),
    (
        "[rank 3] Dispatch + combine bandwidth: 25.26 GB/s, avg_t=873.03 us, min_t=717.92 us, max_t=928.10 us",
        "deepep-low-latency-bandwidth",
    ),
    (
        "[tuning] Best dispatch (BF16): SMs 24, NVL chunk 20, RDMA chunk 32: 25.80 GB/s (RDMA), 84.39 GB/s (NVL)",
        "deepep-tuning-bandwidth",
    ),
    ("[tuning] SMs 24, NVL chunk 4: 148.11 GB/s (NVL), avg_t: 423.68 us", "deepep-tuning-bandwidth"),
    (
        "[ 1227.696901] gdrdrv:__gdrdrv_pin_buffer:nvidia_p2p_get_pages(va=fffd39e00000 len=65536 p2p_token=0 "
        "va_space=fe00 callback=ffffc080a8de0230) failed [ret = -22]",
        "gdrdrv-p2p-get-pages-failed",
    ),
    ("Cuda error /workspace/csrc/custom_all_reduce.cuh:143 'invalid resource handle'", "gpu-stack-error"),
    ("register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument", "ofi-register-mr-failed"),
    ("fi_getinfo: -61 (No data available)", "fi-info-no-provider"),
    ("cudaMemcpyPeer / cudaMemcpy between GPU2 and GPU3: 48.10GB/s", "cuda-samples-p2p-copy"),
    ("w7:31:40 [1] NCCL WARN socketProgressOpt: Call to recv from 10.1.2.3<4112> failed : Connection reset by peer", "nccl-socket-io-failed"),
    ("The call to cuIpcOpenMemHandle failed. This is an unrecoverable error", "ompi-cuda-ipc-open-failed"),
    (
        "[rank3]:[E1107 02:11:09.1 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 3] ProcessGroupNCCL's "
        "watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
        "torch-watchdog-heartbeat-stuck",
    ),
    (
        "(VllmWorker rank=1 pid=911) WARNING 11-07 02:11:09 [shm_broadcast.py:466] No available shared memory broadcast "
        "block found in 60 second.",
        "vllm-shm-broadcast-waiting",
    ),
    (
        "RuntimeError: userbuffers-host.cpp:208 in function create_communicator_grouped2: CUDA Error: operation not "
        "supported",
        "te-userbuffers-multicast-unsupported",
    ),
    ("Verification error @ element 7: val = 0.000000, ref = 28.000000", "cuda-samples-p2p-verification-error"),
    ("  simpleP2P : Failed (code 1)", "cuda-samples-multi-gpu-sample-failed"),
    ("  conjugateGradientMultiDeviceCG : Timeout (code -1)", "cuda-samples-multi-gpu-sample-timeout"),
    ("*hangs here*", "pasted-note-hang"),
    ("<stuck>", "pasted-note-hang"),
    ("... and then it hangs forever ...", "pasted-note-hang"),
    ("node1:7:7 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC    <--- stuck here", "pasted-note-hang"),
    ("[Mon Mar  2 09:14:55 2026] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)", "nvidia-peermem-not-loaded"),
    ("modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument", "nvidia-peermem-not-loaded"),
    ("failed to load nvidia-peermem module", "nvidia-peermem-not-loaded"),
    ("node3:77:91 [2] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Bad address", "nccl-ib-reg-mr-failed"),
    ("node3:77:91 [2] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory", "nccl-ib-reg-mr-no-memory"),
    ("ip-10-0-1-7:900:930 [0] find_ofi_provider:543 NCCL WARN NET/OFI Couldn't find any optimal provider", "ofi-no-optimal-provider"),
    ("6f2d8a82d208:1287:1328 [0] NCCL INFO NET/OFI Selected Provider is tcp (found 1 nics)", "ofi-selected-tcp-provider"),
    (
        "2024-01-11 05:43:11.726254: E external/xla/xla/service/gpu/nccl_utils.cc:211] Aborting communicator: "
        "0x7f3e427e55b0 due to async NCCL error: remote process exited or there was a network error",
        "nccl-remote-error",
    ),
    (
        "[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
        "prematurely.",
        "nccl-remote-error",
    ),
    ("ip-10-1-2-3:77:90 [0] NCCL INFO NET/OFI Selected provider is sockets, fabric is 10.1.0.0/16 (found 1 nics)",
     "ofi-selected-tcp-provider"),
    ("Error: EFA libfabric provider not detected.", "efa-installer-no-provider"),
    ("I tensorflow/core/common_runtime/gpu/gpu_init.cc:59] cannot enable peer access from device ordinal 1 to device ordinal 3", "framework-peer-access-refused"),
    ("W0412 08:01:02.000001  4411 parallel_executor.cc:601] Cannot enable P2P access from 2 to 0", "framework-peer-access-refused"),
    ("misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported", "ibv-reg-dmabuf-failed"),
    ("2025-06-11T19:12:23.050922+00:00 cpu001 nhc[1013622]: Health check failed:  Script timed out.", "nhc-checker-stopped"),
    ("cpu001 nhc[1013628]: Health check failed:  Terminated by signal SIGTERM.", "nhc-checker-stopped"),
    ("[1705939176] - ERROR:  nhc:  Health check failed:  check_all_reduce_dependencies: HPCX_DIR is not set.", "nhc-checker-stopped"),
    ("ip-10-0-0-1:1234:1300 [0] NCCL WARN NET/OFI GDR disabled on GDR-supported instance type p5.48xlarge", "ofi-gdr-required"),
    ("ip-10-0-0-1:1234:1300 [0] NCCL WARN NET/OFI GDR support reported to NCCL but then couldn't be configured on an endpoint.  Cannot continue.", "ofi-gdr-required"),
    ("Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4756]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]", "fm-no-nvswitch"),
    ("CUDA error at p2pBandwidthLatencyTest.cu:102 code=400(cudaErrorInvalidResourceHandle) \"cudaEventRecord(start[i], stream[i])\"", "cuda-samples-error"),
    ("[CUDA_ERROR_INVALID_HANDLE] invalid resource handle in expression cuStreamSynchronize(stream) in void run()() : /src/nvbandwidth/memcpy.cpp:98", "nvbandwidth-cuda-error"),
    ("node5:240:240 [6] NCCL INFO misc/socket.cc:570 -> 2", "nccl-error-return"),
    ("h:1:2 [0] NCCL INFO group.cc:73 -> 2 [Async thread]", "nccl-error-return"),
]
# fmt: on


@pytest.mark.parametrize(("line", "expected"), TABLE, ids=[row[1] for row in TABLE])
def test_a_pasted_line_is_recognised_as_its_signature(line: str, expected: str) -> None:
    found = [h.signature for h in match_text(line)]
    assert expected in found, f"{expected} not in {found}"


def test_every_signature_has_a_line_in_the_table() -> None:
    assert {row[1] for row in TABLE} == {s.id for s in catalog().signatures}


# Lines that look like a signature's and must not be taken for it.
NOT = [
    (  # congestion alone: ibqueryerrors lists PortXmitWait past its threshold, no error counter
        "   GUID 0x1070fd0300370ea2 port 1: [PortXmitWait == 14681376621 (13.673G)]",
        "ibqueryerrors-port-errors",
    ),
    (  # every health field "false" or "not supported": a standalone DGX B200 (NVIDIA/nccl#1646), or an NVL72 tray
        "d5618706-01:1106800:1106869 [1] NCCL INFO MNNVL busId 0x6d000 fabric UUID 0.0 cliqueId 0x0 state 3 healthMask 0x80",
        "nccl-mnnvl-fabric-unhealthy",
    ),
    (
        "node:1:2 [0] NCCL INFO MNNVL busId 0x1b000 fabric UUID 1.2 cliqueId 0x7fff state 3 healthMask 0xaa",
        "nccl-mnnvl-fabric-unhealthy",
    ),
    ("node1: Test CUDA failure hypercube.cu:104 'invalid argument'", "nccl-tests-hypercube-copy-no-p2p"),
    (
        "node1:12:34 [0] transport/p2p.cc:416 NCCL WARN Cuda failure 'operation not supported'",
        "nccl-mempool-create-unsupported",
    ),
    ("$ lsmod | grep peermem\nnvidia_peermem         16384  0", "peermem-module-not-loaded"),
    ("lsmod | grep nvidia_peermem\nlsmod | grep nv_peer_mem", "peermem-module-not-loaded"),
    (
        "[1695] ucp_context_0 inter-node cfg#1 rma(rc_mlx5/mlx5_0:1) am(rc_mlx5/mlx5_0:1) ka(ud_mlx5/mlx5_0:1 tcp/eth0)",
        "ucx-inter-node-tcp-only",
    ),
    ("[1695] ucp_context_0 intra-node cfg#0 rma(tcp/lo) am(tcp/lo) ka(tcp/lo)", "ucx-inter-node-tcp-only"),
    ("[testing] Running with BF16, without top-k (async=False, previous=False) ...", "deepep-test-passed"),
    ("ip-10-1-2-3:77:90 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)", "ofi-selected-tcp-provider"),
    ("node2:1208:1249 [0] NCCL INFO Attribute coll of node net not found", "nccl-topo-xml-attribute-missing"),
    (
        "elsah100:176:302 [1] graph/xml.h:85 NCCL WARN Attribute busid of node nic not found",
        "nccl-topo-xml-attribute-missing",
    ),
    ("node7:1234:1234 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 0", "nccl-env-p2p-disable"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 0.", "nccl-env-shm-disable"),
    ("node7:1234:1234 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.", "nccl-env-ib-disable"),
    ("node7:1234:1290 [3] NCCL INFO Using network IB", "nccl-using-network-socket"),
    (
        "node7:1234:1290 [3] NCCL INFO Channel 00/0 : 15[7] -> 0[0] [receive] via NET/IB/0/GDRDMA",
        "nccl-channel-net-no-gdr",
    ),
    (
        "node7:1234:1290 [3] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1(2)/GDRDMA/Shared",
        "nccl-channel-net-no-gdr",
    ),
    ("node7:1234:1290 [3] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'", "nccl-gdr-disabled-hca"),
    (
        "axon:5022:5089 [3] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'enp1s0f0'",
        "nccl-gdr-disabled-hca",
    ),
    (
        "node7:1234:1290 [3] NCCL INFO NVLS multicast support is available on dev 3 (NVLS_NCHANNELS 16)",
        "nccl-nvls-not-available",
    ),
    (
        "node7:1234:1290 [3] NCCL INFO MNNVL busId 0x901000 fabric UUID 9c6f5af353bf49b5.a436b66766c413c3 cliqueId 0x7ffe state 3 healthMask 0x0",
        "nccl-mnnvl-fabric-not-ready",
    ),
    (
        "node7:1234:1290 [3] NCCL INFO MNNVL busId 0x901000 fabric UUID 9c6f5af353bf49b5.a436b66766c413c3 cliqueId 0x7ffe state 3 healthMask 0x0",
        "nccl-mnnvl-fabric-unhealthy",
    ),
    (
        "node7:1234:1290 [3] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PIX, sameChannels 1",
        "nccl-graph-pcie-only",
    ),
    (
        "  8589934592    2147483648     float     sum      -1  36183.4  237.40  415.46      0  36101.0  237.95  416.41      0",
        "nccltests-wrong-nonzero",
    ),
    (
        "      524288        131072     float     sum      -1    41.12   12.75   22.31    N/A    40.98   12.79   22.39    N/A",
        "nccltests-wrong-nonzero",
    ),
    ("# Out of bounds values : 0 OK", "nccltests-out-of-bounds-failed"),
    ("# Avg bus bandwidth    : 402.82 OK", "nccltests-avg-busbw-failed"),
    ("rank=3 #wrong=0", "nccltests-wrong-detail"),
    ("        State                             : Completed", "smi-fabric-in-progress"),
    ("        Status                            : Success", "smi-fabric-status-error"),
    ("            Summary                       : Healthy", "smi-fabric-unhealthy"),
    ("            Bandwidth                     : Full", "smi-fabric-bandwidth-degraded"),
    ("            Route Unhealthy               : False", "smi-fabric-route-problem"),
    ("            Incorrect Configuration       : None", "smi-fabric-incorrect-configuration"),
    ("    Performance State                                  : P0", "smi-fabric-in-progress"),
    ("\t Link 0: 26.562 GB/s", "smi-nvlink-inactive"),
    ("    LnkSta: Speed 16GT/s (ok), Width x16 (ok)", "pcie-link-downgraded"),
    ("[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 79, GPU has fallen off the bus.", "nvrm-fallen-off-bus"),
    (
        "ERROR:  nhc:  Health check failed:  check_nvsmi_healthmon:  nvidia-smi:  The GPU has fallen off the bus or has otherwise become inaccessible.",
        "nvrm-fallen-off-bus",
    ),
    (
        "[ 4721.118342] NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001)",
        "xid-144-150-fatal",
    ),
    ("SUCCESS:  nhc:  Health check passed:  check_nvlink_status: GPU 0 has all nvlinks active.", "nhc-nvlink-inactive"),
    ("Disable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future.", "shell-env-transport-off"),
    (
        "P2P is disabled between connected GPUs 0 and 2. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
        "shell-env-path-choice",
    ),
    (
        "CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=0 NCCL_DEBUG=INFO ./build/all_reduce_perf -g 2",
        "shell-env-transport-off",
    ),
    ('    raise RuntimeError(f"NCCL error: {error_str}")', "torch-nccl-error"),
    ("Error 2: No such file or directory", "cuda-2-out-of-memory"),
    ("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read", "nccl-warn"),
    ("h:1:1 [0] NCCL INFO init.cc:1534 -> 7", "nccl-error-return"),
    ("2025-06-11T19:12:23 cpu001 nhc[1013622]: Health check failed:  Script timed out.", "nhc-check-failed"),
    ("ERROR:  nhc:  Health check failed:  check_gpu_xid: GPU Xid errors detected", "nhc-checker-stopped"),
    ("NCCL INFO Ring 00 : 0 -> 1 -> 2", "nccl-error-return"),
    (
        "ERROR:  nhc:  Health check failed:  check_ps_service:  Service sshd (process sshd) owned by root not running",
        "nhc-fabric-manager-not-running",
    ),
    ("| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |", "smi-table-gpu-error"),
    ("| N/A   43C    P8    11W /  N/A |    466MiB /  6144MiB |    ERR!      Default |", "smi-table-gpu-error"),
    ("    GPU Recovery Action                                : None", "smi-gpu-recovery-action"),
    (
        "socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort",
        "nccl-connect-loopback-failed",
    ),
    ("No devices were found in the list", "smi-no-devices"),
    (
        "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch non-fatal error 12028 on fid 0",
        "fm-nvswitch-fatal-error",
    ),
    (
        "0000:04:00.0 | mlx5_0 | ib0  |  0   |  actv   | up_ip4  |  IB  | 200  |   x16 G3    |  MT4123",
        "lshca-port-not-active",
    ),
    ("The call to cuIpcOpenMemHandle failed. This is an unrecoverable error", "ompi-cuda-call-unrecoverable"),
    ("Node #0   - 10.136.206.48   - READY", "imex-node-not-ready"),
    (
        "[1716594409.541417] [gpu1:1581053:0]      ucp_worker.c:1783 UCX  INFO    ep_cfg[2]: tag(rc_mlx5/mlx5_0:1 tcp/ib0)",
        "ucx-lanes-rma-over-tcp",
    ),
    ("The job was Aborted by the user", "process-crashed"),
    ("SymbolErrorCounter:..............0", "perfquery-error-counter"),
    ("PortXmitDiscards:................152", "perfquery-error-counter"),
    ("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0", "rdma-link-not-active"),
    ("max locked memory       (kbytes, -l) unlimited", "ulimit-memlock-limited"),
    ("ibv_reg_mr failed: Cannot allocate memory", "ibv-reg-mr-failed"),
    (
        "[1.2] [h:1:0] ib_md.c:1222 UCX  DEBUG mlx5_0: rocm GPUDirect RDMA is not detected by checking /dev/kfd",
        "ucx-gdr-not-detected",
    ),
    (
        "[1.2] [h:1:0] ib_md.c:1222 UCX  DEBUG mlx5_0: cuda GPUDirect RDMA is detected by checking /sys/module/nvidia_peermem/version",
        "ucx-gdr-not-detected",
    ),
    ("100%: Checks: 12, Failures: 0, Errors: 0", "check-suite-failures"),
    ("100%: Checks: 12, Failures: 0, Errors: 0", "check-suite-all-failed"),
    ('logger.error("Failed to create QPixmap from QImage")', "rdma-create-qp-failed"),
    (
        "ucp_context_2 inter-node cfg#3 rma(rc_mlx5/mlx5_ib2:1)  amo(rc_mlx5/mlx5_ib2:1)  am(rc_mlx5/mlx5_ib2:1 tcp/eth0)",
        "ucx-lanes-rma-over-tcp",
    ),
    (
        "W0101 00:00:00.000000 1 worker_pool.cpp:477] Worker: Cannot make connection for endpoint: 10.0.0.2:15000@mlx5_1, pausing peer rail and retrying through an alternate peer RNIC",
        "mooncake-endpoint-unreachable",
    ),
    (
        "# OSU MPI-CUDA Latency Test v5.6.1\n# Size          Latency (us)\n0                       1.89\n4194304               1234.5",
        "osu-bandwidth",
    ),
    ("# Size      Bandwidth (MB/s)\n^C", "osu-bandwidth"),
    ("[  5]   0.00-10.00  sec  45.9 GBytes  39.4 Gbits/sec    0             sender", "iperf-interval-below-10gbit"),
    (
        "nvidia              34037760  19 nvidia_uvm,nv_peer_mem,gdrdrv,nvidia_modeset",
        "lsmod-nvidia-holders-no-peermem",
    ),
    ("nvidia              34037760  19 nvidia_uvm,nvidia_peermem,nvidia_modeset", "lsmod-nvidia-holders-no-peermem"),
    ("Failed to get unit file state for nvidia-fabricmanager.service: Unknown error 1540613216", "fm-failure-words"),
    (
        "    Process: 4845 ExecStart=/usr/bin/nvidia-fabricmanager-start.sh $FM_CONFIG_FILE (code=exited, "
        "status=0/SUCCESS)",
        "fm-failure-words",
    ),
    ("[INFO] Fabric Manager NVLink error handler thread started", "fm-failure-words"),
    (" Port number 1 state is Active", "perftest-port-not-active"),
    ("1. export NCCL_SHM_DISABLE=1;", "shell-env-transport-off"),  # Paddle's hint, listing what one could try
    ("ecb2de971add:35791:35960 [3] INFO nvmlDeviceGetNvLinkCapability() failed: Not Supported", "nccl-nvml-failed"),
    (  # the full bandwidth the card is built for: nothing limits it
        "[    5.300000] nvidia 0000:18:00.0: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)",
        "kernel-pcie-bandwidth-limited",
    ),
    ("[Mon Jan  1 00:00:05 2024] mlx5_core 0000:3b:00.0 ens1f0np0: Link up", "mlx5-netdev-link-down"),
]


@pytest.mark.parametrize(("line", "signature"), NOT, ids=[f"{row[1]}-{i}" for i, row in enumerate(NOT)])
def test_a_line_that_only_looks_alike_is_not_taken(line: str, signature: str) -> None:
    assert signature not in [h.signature for h in match_text(line)]


_LEADING_RUN = re.compile(r"^(?:\((?:\?P<\w+>|\?:)?)*(?:\\[SwdsW]|\[(?:\\.|[^\]])+\]|\.)[+*]")
"""A pattern that starts with a run of a class (``\\S+``, ``[\\w.-]*``, ``(?:(?P<host>\\S+): )?``), with no ``^`` or
lookbehind before it: searched over a line, it tries every position and scans the run again from each."""


def test_no_pattern_starts_with_an_unanchored_run() -> None:
    """A pasted line can be hundreds of thousands of characters long (a minified dump, a hostile paste): a pattern
    that starts with a run and nothing to anchor it backtracks over the whole line from every position. Each such
    start carries ``^`` or a lookbehind (``(?<!\\S)``) so that it is tried once per token."""
    offenders = [s.id for s in catalog().signatures if _LEADING_RUN.match(s.pattern.pattern)]
    assert not offenders, offenders


def test_a_known_message_is_found_in_a_line_hundreds_of_thousands_of_characters_long() -> None:
    """The message stands at the line's start and the rest is filler: it is read from the line's first characters."""
    line = "node1:1:1 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion with error 12" + " x1" * 100_000
    assert [h.signature for h in match_text(line)] == ["nccl-ib-completion-error"]


# What the issue asks to be recognised, and the finding code a user then sees.
REQUIRED = [
    (
        "node7:1:1 [0] transport/nvls.cc:223 NCCL WARN Cuda failure 802 'system not yet initialized'",
        "nccl-fabric-manager-down",
    ),
    ("gpu: Test CUDA failure common.cu:941 'system not yet initialized'", "nccl-fabric-manager-down"),
    (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
        "nccl-fabric-manager-down",
    ),
    (
        "node4:1:1 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'",
        "nccl-nvls-failed",
    ),
    (
        "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'.",
        "nccl-nvls-failed",
    ),
    (
        "(pid=909608) z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices",
        "p2p-unavailable",
    ),
    (
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'",
        "p2p-unavailable",
    ),
    (
        "node7:1:1 [0] misc/cudawrap.cc:90 NCCL WARN Cuda failure 705 'peer access has not been enabled'",
        "p2p-unavailable",
    ),
    ("gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error", "nccl-nvls-failed"),
    ("node7:1:1 [0] misc/cudawrap.cc:90 NCCL WARN Cuda failure 999 'unknown error'", "run-failed"),
    (
        "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'",
        "nccl-nvls-invalid-argument",
    ),
    (
        "node7:1:1 [0] NCCL INFO P2P is disabled between connected GPUs 1 and 0. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
        "nccl-p2p-disabled",
    ),
    (
        "P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue.",
        "nccl-p2p-disabled",
    ),
    *[
        (f"node7:1:1 [0] NCCL INFO {var} set by environment to {value}", "nccl-env-override")
        for var, value in (
            ("NCCL_P2P_LEVEL", "LOC"),
            ("NCCL_P2P_DISABLE", "1"),
            ("NCCL_SHM_DISABLE", "1."),
            ("NCCL_IB_DISABLE", "1."),
            ("NCCL_NET_GDR_LEVEL", "LOC"),
            ("NCCL_ALGO", "Ring"),
            ("NCCL_PROTO", "Simple"),
            ("NCCL_NVLS_ENABLE", "0."),
            ("NCCL_CUMEM_ENABLE", "0."),
            ("NCCL_NVB_DISABLE", "1."),
            ("NCCL_PXN_DISABLE", "1."),
            ("NCCL_MNNVL_ENABLE", "0."),
            ("NCCL_MAX_NCHANNELS", "2."),
            ("NCCL_TOPO_FILE", "/etc/topo.xml"),
        )
    ],
    ("learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'", "nccl-gdr-disabled"),
    ("ceceb0c7f2e6:454:838 [0] NCCL INFO Using network Socket", "nccl-net-socket-fallback"),
    ("lambda-scalar02:95756:96916 [6] NCCL INFO NET/IB : No device found.", "nccl-net-socket-fallback"),
    ("# Out of bounds values : 16 FAILED", "bench-data-corruption"),
    (
        "   134217728      33554432     float     sum      -1   1234.5  108.72  190.26      0   1230.1  109.11  190.94      3",
        "bench-data-corruption",
    ),
    (" Invalid value when checking the pattern at 0x70a640000000", "bench-data-corruption"),
    ("kernel: NVRM: Xid (PCI:0000:9b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.", "kernel-gpu-error"),
    ("kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (0x0 0x0)", "kernel-gpu-error"),
    (
        "ERROR: nhc: Health check failed: check_nvlink_status: GPU 0 has nvlinks inactive: Link 4: Inactive. FaultCode: NHC2016",
        "nvlink-link-down",
    ),
    (
        "ERROR:  nhc:  Health check failed:  check_gpu_bw: P2P test on GPU 1 to GPU 0 failed. Bandwidth 256.63 is less than 335. FaultCode: NHC2020",
        "nvbandwidth-pair-low",
    ),
    (
        "ERROR:  nhc:  Health check failed:  check_gpu_xid: GPU Xid errors detected: NVRM: Xid (PCI:0002:00:00): 119, pid=67769",
        "kernel-gpu-error",
    ),
    ("        State                                          : In Progress", "fabric-not-ready"),
    ("    Status                            : Insufficient Resources", "fabric-unhealthy"),
    ("            Summary                       : Unhealthy", "fabric-unhealthy"),
    ("\t Link 2: <inactive>", "nvlink-link-down"),
]


@pytest.mark.parametrize(("line", "code"), REQUIRED, ids=[f"{row[1]}-{i}" for i, row in enumerate(REQUIRED)])
def test_what_the_issue_names_maps_to_a_finding_code(line: str, code: str) -> None:
    cat = catalog()
    codes = [cat.get(h.signature).code for h in match_text(line)]
    assert code in codes, f"{code} not in {codes}"


def test_a_message_beats_the_error_it_quotes_and_the_error_beats_the_wrapper() -> None:
    nvls = "node1:1:1 [5] transport/nvls.cc:376 NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 1207959552 : CUDA error 401 'the operation cannot be performed in the present state'."
    assert [h.signature for h in match_text(nvls)] == ["nccl-nvls-bind-failed"]
    tests = "gpu: Test CUDA failure common.cu:1030 'system not yet initialized'"
    assert [h.signature for h in match_text(tests)] == ["cuda-802-system-not-ready"]
    ib = "g1lmd5:3684924:3685085 [0] transport/net_ib.cc:840 NCCL WARN NET/IB : Got completion with error 12, opcode 32736, len 32736, vendor err 129"
    assert [h.signature for h in match_text(ib)] == ["nccl-ib-completion-error"]
    unknown = "node7:1:1 [0] misc/utils.cc:10 NCCL WARN Something else went wrong"
    assert [h.signature for h in match_text(unknown)] == ["nccl-warn"]


def test_a_hit_reports_its_line_and_named_values() -> None:
    text = "\n".join([
        "some text",
        "[rank1]: node7:1:1 [1] NCCL INFO P2P is disabled between connected GPUs 2 and 3. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
        "(pid=4) node7:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC",
        "[ 4721.118342] NVRM: Xid (PCI:0000:9b:00): 74, NVLink: failed to train link 5",
    ])  # fmt: skip
    hits = match_text(text)
    assert [(h.line, h.signature) for h in hits] == [
        (2, "nccl-p2p-disabled"), (3, "nccl-env-p2p-level-loc"), (4, "xid-74")
    ]  # fmt: skip
    assert dict(hits[0].values) == {"gpu_a": "2", "gpu_b": "3"}
    assert dict(hits[1].values) == {"var": "NCCL_P2P_LEVEL", "level": "LOC"}
    assert dict(hits[2].values) == {"pci": "PCI:0000:9b:00", "xid": "74"}
    assert hits[2].text == "NVRM: Xid (PCI:0000:9b:00): 74, NVLink: failed to train link 5"


# What real pastes of the corpus's dev part show: (paste, [(line, signature), ...] that must be among the hits).
REAL = [
    ("accelerate-1317-pdsh-multinode-net-socket", [(1, "nccl-using-network-socket"), (5, "nccl-net-ib-no-device")]),
    ("azimg-506-fabric-insufficient-resources", [(3, "smi-fabric-status-error")]),
    ("dcgm-304-nvls-bind-401", [(1, "nccl-nvls-bind-failed")]),
    ("do-fm-doc-fabric-in-progress-grep", [(3, "smi-fabric-in-progress"), (7, "smi-fabric-in-progress")]),
    ("do-fm-doc-ngc-banner-802", [(1, "cuda-init-failed-banner"), (2, "cuda-802-system-not-ready")]),
    ("dra-626-fabric-summary-unhealthy", [(8, "smi-fabric-unhealthy")]),
    ("dstack-2348-cuda-802-torch", [(1, "cuda-802-system-not-ready")]),
    ("gpuop-544-fm-version-mismatch", [(1, "fm-version-mismatch")]),
    ("nccl-1261-a100-4gpu-ll128-oob-failed", [(1, "nccltests-out-of-bounds-failed")]),
    ("nccl-1338-h800-nvls-invalid-arg", [(2, "nccl-nvls-invalid-argument")]),
    ("nccl-1676-dgx-gdr-disabled-lines", [(1, "nccl-gdr-disabled-hca"), (4, "nccl-gdr-disabled-hca")]),
    ("nccl-1788-h100-vllm-nvls-401", [(1, "nccl-nvls-cuda-failure")]),
    ("nccl-2241-b200-xid145-137", [(2, "xid-144-150-nonfatal"), (3, "xid-137")]),
    ("nccl-2329-p2p-disabled-nvlink-connected-hw", [(1, "nccl-p2p-disabled-nvlink")]),
    ("nccl-332-p2p-level-nvl-parsed-as-0", [(1, "nccl-env-p2p-level-loc")]),
    ("nccl-928-ib-error4-vendor81-gdr-acs", [(1, "nccl-ib-local-protection-error")]),
    ("nccltests-276-h200-nvls-999-fm-restart", [(1, "nccl-nvls-cuda-failure")]),
    ("nccltests-338-h20-802-mpi-abort", [(2, "cuda-802-system-not-ready")]),
    ("nvbw-13-2x2080ti-write-ce-waived", [(15, "nvbandwidth-waived")]),
    ("nvbw-34-pattern-assert-8xa100", [(18, "nvbandwidth-pattern-mismatch"), (20, "nvbandwidth-check-assert")]),
    ("nvsentinel-155-fallen-off-bus-no-xid", [(3, "nvrm-fallen-off-bus"), (4, "nvrm-probe-failed")]),
    ("pytorch-177472-aws-h100-nvls-bind-401-traceback", [(4, "nccl-nvls-bind-failed")]),
    ("ray-16979-raysgd-ipc-217-visible-devices", [(6, "nccl-p2p-ipc-open-failed")]),
    ("sglang-1509-tp-prefix-peer-access-not-supported", [(4, "cuda-217-peer-access-unsupported")]),
    ("tgi-1383-2xl40-runpod-first-allreduce-timeout", [(2, "torch-watchdog-timeout")]),
    ("vllm-19204-p2p-disable-env-shm-2gpu", [(5, "nccl-env-p2p-disable")]),
    ("vllm-16707-ray-initrank-system-error-repeated", [(5, "torch-nccl-error")]),
]


@pytest.mark.parametrize(("paste", "expected"), REAL, ids=[row[0] for row in REAL])
def test_real_pastes_show_their_signatures(paste: str, expected: list[tuple[int, str]]) -> None:
    hits = {(h.line, h.signature) for h in match_text((PASTES / f"{paste}.txt").read_text())}
    assert set(expected) <= hits, sorted(hits)


def test_healthy_captures_carry_no_failing_signature() -> None:
    cat = catalog()
    for paste in ("azhc-142-h200-vm-allreduce-480", "nccltests-119-tail-multinode-96gbs-healthy",
                  "nvbw-50-6xa6000-pcie-read-ce", "vllm-5458-aws-4gpu-p2p-cumem-rings",
                  "ray-11675-azure-sgd-p2p-ipc-init-complete", "nccl-1261-a100-4gpu-topo-nv4-alltoall"):  # fmt: skip
        hits = match_text((PASTES / f"{paste}.txt").read_text())
        assert not [h for h in hits if cat.get(h.signature).severity is not Severity.INFO], paste


def _every_pattern(lines: list[str], cat: Catalog) -> list[tuple[int, str]]:
    """What trying every signature on every line finds, the tiers applied: what the prefilter must reproduce."""
    rank = {t: i for i, t in enumerate(TIERS)}
    out = []
    texts = list(map(plain_quotes, lines))
    tables = []  # a table's hit stands at its last row, before that line's own hits
    for number, text in enumerate(texts, 1):
        for s in cat.signatures:
            if s.under is not None and s.under.search(text) and (last := _last_row(texts, number - 1, s)):
                tables.append((last[0] + 1, s.id))
        found = [
            s
            for s in cat.signatures
            if s.under is None and (m := s.pattern.search(text)) and _stands(s, m, texts, number)
        ]
        if found:
            top = max(rank[s.tier] for s in found)
            out += [(number, s.id) for s in found if rank[s.tier] == top]
    return sorted(tables + out, key=lambda hit: hit[0])


def _stands(s: Signature, m: re.Match[str], texts: list[str], number: int) -> bool:
    """A command whose silence is the message stands only when the next line starts with its prompt."""
    prompt = texts[number - 1][: m.start()].strip()
    return not s.printed_nothing or (bool(prompt) and number < len(texts) and texts[number].strip().startswith(prompt))


def test_the_keyword_prefilter_finds_what_trying_every_pattern_finds() -> None:
    cat = catalog()
    texts = [line for text, _ in TABLE + NOT + REQUIRED for line in text.split("\n")]
    for path in sorted(PASTES.glob("*.txt")):
        if path.stem in _DEV:
            texts += [line.text for line in strip_prefixes(path.read_text())]
    assert [(h.line, h.signature) for h in match_lines(texts, cat)] == _every_pattern(texts, cat)


def _dev_ids() -> frozenset[str]:
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "real"))
    from corpus import load_corpus  # the corpus's own reader: the held-back part stays unread

    return frozenset(p.id for p in load_corpus() if p.part == "dev")


_DEV = _dev_ids()


def test_every_code_is_registered_or_declared_by_the_catalog() -> None:
    cat = catalog()
    declared = {c.code for c in cat.codes}
    assert {CODES[c].declared_in for c in declared} == {"topoaudit.rules.signature_rules"}  # the catalog's rule
    assert {s.code for s in cat.signatures} <= set(CODES)
    assert declared <= {s.code for s in cat.signatures}, "a declared code no signature uses"


def test_the_documentation_table_is_generated_from_the_catalog() -> None:
    doc = (ROOT / "docs" / "signatures.md").read_text(encoding="utf-8")
    assert render_doc(doc) == doc, "docs/signatures.md is stale: run `python tools/regen_docs.py`"
    for s in catalog().signatures:
        assert f"`{s.id}`" in doc


# --- the catalog is checked strictly ------------------------------------------------------------------------------

GOOD = """
schema = 'topoaudit-signatures/1'

[code.new-code]
severity = 'warn'
title = 'A new code'
remedy = 'Do something.'

[[signature]]
id = 'one'
code = 'new-code'
severity = 'warn'
cause = 'other'
keywords = ['hello']
regex = 'hello (?P<who>\\w+)'
meaning = 'A greeting.'
fix = 'Greet back.'
source = 'NVIDIA/nccl@5067397c2676 src/init.cc'
versions = 'all'
"""


def test_a_minimal_catalog_loads_and_matches() -> None:
    cat = load_catalog(GOOD)
    assert [c.code for c in cat.codes] == ["new-code"]
    assert [(h.line, h.signature, dict(h.values)) for h in match_lines(["x", "hello world"], cat)] == [
        (2, "one", {"who": "world"})
    ]


BROKEN = [
    (GOOD.replace("versions = 'all'", "versions = 'all'\nexample = 'x'"), "unknown key(s) example"),
    (GOOD.replace("regex = 'hello (?P<who>\\w+)'", "regex = 'hello (?P<who>'"), "regex does not compile"),
    (GOOD.replace("source = 'NVIDIA/nccl@5067397c2676 src/init.cc'\n", ""), "missing source"),
    (GOOD.replace("NVIDIA/nccl@5067397c2676 src/init.cc", "the NCCL source"), "neither 'owner/repo@commit path'"),
    (GOOD.replace("versions = 'all'", "versions = 'all'\nthread = 'a forum post'"), "not an https URL"),
    (GOOD.replace("severity = 'warn'\ncause", "severity = 'bad'\ncause"), "severity 'bad'"),
    (GOOD.replace("cause = 'other'", "cause = 'bad luck'"), "cause 'bad luck'"),
    (GOOD.replace("cause = 'other'", "cause = 'other'\ntier = 'top'"), "tier 'top'"),
    (GOOD.replace("cause = 'other'", "cause = 'other'\nprinted_nothing = 'yes'"), "printed_nothing must be true"),
    (GOOD.replace("cause = 'other'", "cause = 'other'\nunder = 'Size ('"), "under does not compile"),
    (GOOD.replace("cause = 'other'", "cause = 'other'\njudges = 'no'"), "judges must be true or false"),
    (
        GOOD.replace("cause = 'other'", "cause = 'other'\njudges = false"),
        "judges = false is for a message shown at information",
    ),
    (GOOD.replace("keywords = ['hello']", "keywords = ['he']"), "keyword 'he'"),
    (GOOD.replace("keywords = ['hello']", "keywords = []"), "keywords must be a non-empty list"),
    (GOOD.replace("id = 'one'", "id = 'One'"), "an id is lower-case"),
    (GOOD.replace("meaning = 'A greeting.'", "meaning = ''"), "meaning must be a non-empty string"),
    (GOOD + GOOD[GOOD.index("[[signature]]") :], "appears twice"),
    (GOOD.replace("schema = 'topoaudit-signatures/1'", "schema = 'v2'"), "schema is 'v2'"),
    (GOOD + "\n[extra]\nx = 1\n", "unknown top-level key(s) extra"),
    (
        GOOD.replace("remedy = 'Do something.'", "remedy = 'Do something.'\nurl = 'x'"),
        "code 'new-code': unknown key(s) url",
    ),
    (GOOD.replace("[code.new-code]\nseverity = 'warn'", "[code.new-code]\nseverity = 'loud'"), "severity 'loud'"),
    ("schema = ", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), BROKEN, ids=[row[1] for row in BROKEN])
def test_a_malformed_catalog_is_refused_with_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(CatalogError, match=re.escape(message)):
        load_catalog(text)


def test_the_packaged_catalog_loads_once() -> None:
    assert catalog() is catalog()
    assert len(catalog().signatures) >= 150
