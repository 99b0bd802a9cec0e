"""Every finding code, in one place: its default severity, a title and the remedy hint.

Codes are a stable contract (tests and CI pipelines match on them); never rename one.
README's finding table is tested against this registry.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.model.finding import Severity


@dataclass(frozen=True)
class CodeInfo:
    """One registered finding code."""

    code: str
    severity: Severity  # the default; rules may lower or raise it with a stated reason
    title: str
    remedy: str


def _c(code: str, severity: str, title: str, remedy: str) -> CodeInfo:
    return CodeInfo(code, Severity(severity), title, remedy)


CODES: dict[str, CodeInfo] = {
    c.code: c
    for c in (
        # The NVLink/PCIe topology.
        _c(
            "nvlink-split-domain",
            "warn",
            "GPUs form several NVLink domains of 2+ GPUs",
            "Keep each tensor-parallel group inside one domain (see placements); if the box was sold as "
            "one NVSwitch domain, open a ticket with this report attached.",
        ),
        _c(
            "nvlink-absent",
            "warn",
            "Several GPUs and no NVLink at all",
            "Collectives run over PCIe/host memory; size tensor parallelism accordingly or ask for an "
            "NVLink/NVSwitch instance type.",
        ),
        _c(
            "nvlink-partial-mesh",
            "warn",
            "An NVLink domain where some GPU pairs have no direct link",
            "Rings still run on NVLink, but pairwise traffic between unlinked GPUs crosses PCIe/SYS; prefer "
            "TP groups that are fully linked (see placements).",
        ),
        _c(
            "nvlink-degraded",
            "fail",
            "A GPU or GPU pair has fewer NVLinks than its siblings, or none",
            "A link is down or a bridge is badly seated: run `nvidia-smi nvlink -s`, reseat the bridge or "
            "ask the provider to replace the baseboard.",
        ),
        _c(
            "nic-not-local",
            "warn",
            "NICs exist but a GPU has none behind its PCIe switch (PIX/PXB)",
            "GPUDirect RDMA for that GPU crosses the host bridge or socket; check NCCL_IB_HCA / NIC "
            "mapping, or whether a VM hides the PCIe tree.",
        ),
        _c(
            "tp-group-crosses-domain",
            "fail",
            "The requested tensor-parallel size cannot stay inside one NVLink domain",
            "Use a smaller TP with more replicas, or TP inside a domain and pipeline parallelism across.",
        ),
        _c(
            "expectation-not-met",
            "fail",
            "The machine does not match what was expected (--expect-gpus / --expect-domain, or a policy)",
            "The instance is not the advertised shape: attach this report to a provider ticket.",
        ),
        _c(
            "gpu-lost",
            "fail",
            "A GPU stopped answering during the probe (fell off the bus)",
            "Check `nvidia-smi` and the kernel log (Xid 79); the GPU needs a reset or repair before any job "
            "can use all GPUs.",
        ),
        _c(
            "gpus-short-of-node",
            "warn",
            "Fewer GPUs than any slice of the model's baseboard (7 of 8): a GPU may be missing",
            "Compare `nvidia-smi -L` with what was rented; check the kernel log for Xid 79 (fallen off the bus) "
            "and `lspci -d 10de:` for a GPU the driver did not claim; pass --expect-gpus N to make it a failure.",
        ),
        _c(
            "input-recovered",
            "warn",
            "The input was damaged and partly recovered",
            "Re-capture `nvidia-smi topo -m` (without truncation) to audit every cell.",
        ),
        _c(
            "model-unknown",
            "info",
            "The GPU model is not in the catalog (or not in the input); expectations come from link counts alone",
            "Pass --gpu-model, or analyse a snapshot from `topoaudit probe`, for model-specific expectations.",
        ),
        # The all-reduce bench.
        _c(
            "bench-data-corruption",
            "fail",
            "An all-reduce returned wrong data (element-wise check of a known pattern)",
            "Do not run jobs on these GPUs: check IOMMU/ACS settings (PCIe P2P can drop writes silently), "
            "`dmesg` for DMAR/Xid errors, and rerun with NCCL_P2P_DISABLE=1 to localise the path.",
        ),
        _c(
            "bench-below-expected",
            "warn",
            "A group's large-message busbw is below what its links should carry (or below --expect-busbw)",
            "Compare the group's links with `nvidia-smi nvlink -s` / PCIe width; rerun with NCCL_DEBUG=INFO "
            "NCCL_DEBUG_SUBSYS=INIT,GRAPH to see the transport NCCL chose (SHM means no P2P).",
        ),
        _c(
            "bench-sizes-too-small",
            "warn",
            "A sweep's busbw is still rising at its largest size: the plateau was not reached, so it is not judged low",
            "Rerun with larger sizes (`bench --max-bytes 16G`, nccl-tests `-e 16G`) until two doublings agree within "
            "a few percent; the published figures are taken at 8-16 GiB.",
        ),
        _c(
            "bandwidth-tools-disagree",
            "warn",
            "nvbandwidth and nccl-tests measured the same GPUs far apart, beyond the ratio the two tools keep",
            "Rerun both on the idle box; when NCCL is the low one read its transport (NCCL_DEBUG=INFO: SHM or NET "
            "where P2P was expected), when nvbandwidth is, check the pair's links (`nvidia-smi nvlink -s`).",
        ),
        _c(
            "measured-topology-mismatch",
            "warn",
            "The measured fast islands differ from the NVLink domains the topology reports",
            "A link that the driver reports is not carrying traffic (or a VM hides one): check peer access "
            "(`nvidia-smi topo -p2p r`), NCCL_P2P_LEVEL, and the NVLink state of the GPUs that disagree.",
        ),
        _c(
            "bench-timeout",
            "fail",
            "A collective did not finish within the timeout",
            "A rank or link is wedged: rerun the named group with NCCL_DEBUG=INFO; check for Xid errors and "
            "for a GPU stuck at 100% utilisation; raise --timeout only for very large sizes on slow links.",
        ),
        _c(
            "bench-rank-failed",
            "fail",
            "A bench rank failed or died; the results are partial",
            "Read the rank's error in the report; rerun with --groups all to see whether it is tied to one "
            "subgroup or size.",
        ),
        _c(
            "bench-incomplete",
            "warn",
            "The bench stopped early or could not measure what the gate needs",
            "Rerun without interruption; include sizes of at least 1 MiB so a plateau exists.",
        ),
        _c(
            "bench-oversubscribed",
            "warn",
            "More bench ranks than CPU cores: the figures measure the scheduler, not the links",
            "Run at most one rank per core (--nproc no larger than `nproc`), or on a machine with more cores.",
        ),
        _c(
            "bench-node-slow",
            "fail",
            "A node is slow with every partner in the node-pair sweep: the node is the bottleneck",
            "Take the node out of the job; check its NICs (`ibstat`, link rate and errors), its PCIe width to "
            "the NICs and its GPUDirect RDMA state, then rerun `topoaudit bench --groups nodepairs`.",
        ),
        _c(
            "bench-node-link-slow",
            "warn",
            "A pair of nodes is slow while each node is fast with another: the path between them",
            "Check the switch ports and cables between the two nodes (the fabric's routing, a degraded "
            "uplink); the nodes themselves measured fast with other partners.",
        ),
        _c(
            "bench-size-skipped",
            "info",
            "Some message sizes did not fit in free memory and were skipped",
            "Free GPU memory (stop other processes) or lower --max-bytes.",
        ),
        # NCCL's own view, from an NCCL_DEBUG=INFO log.
        _c(
            "nccl-ring-split",
            "warn",
            "NCCL's rings or trees inside one host mix peer access (P2P) with host memory or the network: the GPUs "
            "form P2P islands and every all-reduce runs at the slowest hop",
            "The hops between the islands go through host memory (SHM) or the network: paste `nvidia-smi topo -m` "
            "with the log to see whether the GPUs are split by design (two NVLink islands, CPU sockets) or P2P was "
            "refused (NCCL_P2P_DISABLE / NCCL_P2P_LEVEL, ACS, the IOMMU, ranks in separate containers); keep a "
            "tensor-parallel group inside one island.",
        ),
        _c(
            "nccl-transport-below-topology",
            "warn",
            "NCCL connected two GPUs of one host through host memory or the network although they are NVLink or "
            "PCIe peers",
            "NCCL could not use peer access between them: check NCCL_P2P_DISABLE / NCCL_P2P_LEVEL / NCCL_SHM_DISABLE "
            "in the job's environment, ACS and the IOMMU (`nvidia-smi topo -p2p r`), and that the ranks share one "
            "container (IPC namespace) on the host; GeForce cards report P2P unsupported (GNS) by design.",
        ),
        _c(
            "nccl-p2p-disabled",
            "warn",
            "NCCL reports P2P disabled between GPUs it sees as connected",
            "NVML reports peer access unavailable for the pair: disable ACS on the PCIe bridges above the GPUs or "
            "set the IOMMU to passthrough (iommu=pt), check `nvidia-smi topo -p2p r`; between NVLink-connected GPUs "
            "it points at a hardware or fabric fault: reset the GPUs or ask the provider to check the baseboard.",
        ),
        _c(
            "nccl-graph-below-topology",
            "fail",
            "NCCL's ring or tree inside a node runs over PCIe or the CPU although its GPUs share NVLink",
            "NCCL does not see the GPUs' NVLinks: check that every link is up (`nvidia-smi nvlink -s`), that peer "
            "access works (`nvidia-smi topo -p2p n`), that NCCL_P2P_LEVEL or an NCCL_TOPO_FILE does not hide NVLink, "
            "and, in a VM, that the hypervisor passes NVLink through (a VM that hides it needs the provider's topology "
            "file or a bare-metal node).",
        ),
        _c(
            "nccl-nvls-off",
            "warn",
            "NVLink SHARP (NVLS) is off on an NVSwitch Hopper or Blackwell box",
            "All-reduce runs on rings at about 370 instead of about 480 GB/s on 8x H100: check that the fabric "
            "manager is running and healthy (`nvidia-smi -q | grep -A4 Fabric`), that NCCL_NVLS_ENABLE is not 0, "
            "and that NCCL is 2.17 or newer with CUDA 12.1+ and driver 530+.",
        ),
        _c(
            "nccl-gdr-disabled",
            "warn",
            "GPUDirect RDMA is off for traffic between nodes",
            "Network traffic is staged through host memory: load nvidia_peermem (or use DMA-BUF: kernel 5.12+, "
            "open driver), check ACS/IOMMU on the GPU-NIC path, and that NCCL_NET_GDR_LEVEL is not lowered.",
        ),
        _c(
            "nccl-fabric-manager-down",
            "fail",
            "NCCL failed with CUDA error 802 'system not yet initialized': the fabric manager is not running",
            "Start the fabric manager matching the driver version (`systemctl enable --now nvidia-fabricmanager`; "
            "on Blackwell HGX it starts the NVLink subnet manager first, which needs the nvlsm package and the "
            "ib_umad module) and rerun; check `nvidia-smi -q | grep -A4 Fabric` shows Completed/Success.",
        ),
        _c(
            "nccl-nvls-invalid-argument",
            "fail",
            "NCCL's NVLS setup failed with 'invalid argument' (seen after a fabric manager restart with GPUs in use)",
            "Reset the GPUs (`nvidia-smi -r` with no process on them) or reboot the node; until then run with "
            "NCCL_NVLS_ENABLE=0 to avoid the failure at a cost in all-reduce bandwidth.",
        ),
        # NCCL's XML topology dump and measured copy bandwidth (nvbandwidth).
        _c(
            "nccl-topo-nvlinks-low",
            "warn",
            "NCCL counts fewer NVLinks for a GPU than its siblings have (or than its model has)",
            "Check the GPU's links with `nvidia-smi nvlink -s` and `-e`: an inactive link or rising error counters "
            "need a GPU reset (`nvidia-smi -r`), a reboot, or the provider's baseboard service.",
        ),
        _c(
            "nccl-topo-flattened",
            "warn",
            "NCCL sees a flattened virtual-machine topology (no NUMA node, no PCIe speed or width)",
            "Give NCCL the real topology: set NCCL_TOPO_FILE to the provider's topology file for this VM size "
            "(or one written from the host's `nvidia-smi topo -m`), so rings and GPUDirect RDMA choices rest on "
            "facts rather than defaults.",
        ),
        _c(
            "nvbandwidth-pair-low",
            "warn",
            "A GPU pair copies far below the other pairs in nvbandwidth",
            "Compare the pair's path in `nvidia-smi topo -m` and its links in `nvidia-smi nvlink -s`/`-e`; rerun "
            "nvbandwidth on an idle box, and reset or service the GPUs whose links are degraded.",
        ),
        _c(
            "nvbandwidth-below-links",
            "warn",
            "GPU pairs copy far below what their NVLinks carry in nvbandwidth",
            "Check that every link is up at full speed (`nvidia-smi nvlink -s`, `-e`), that peer access is on "
            "(`nvidia-smi topo -p2p r`) and, behind NVSwitches, that the fabric manager runs; rerun nvbandwidth on "
            "an idle box, and have the provider service the GPUs or baseboard if the pairs stay slow.",
        ),
        _c(
            "nccl-inspector-busbw-low",
            "warn",
            "NCCL Inspector shows a host's all-reduce busbw far below the expected figure or the other hosts",
            "Run nccl-tests' all_reduce_perf on the named host alone and check its links (`nvidia-smi nvlink -s`, "
            "`-e`) and, across nodes, its NICs; drain the host from jobs that span it until its busbw recovers.",
        ),
        _c(
            "nccl-ras-ranks-missing",
            "fail",
            "NCCL RAS cannot collect data from some ranks of a communicator: an unresponsive, stopped or dead process",
            "On the named host, check the named process (`ps -p PID`, `py-spy dump --pid PID`, `dmesg` for Xid and OOM "
            "kills) and rerun `ncclras`: a rank still missing after 60 s is dead; restart the job without that node.",
        ),
        _c(
            "nccl-ras-rank-error",
            "fail",
            "NCCL RAS reports initialization or asynchronous errors on ranks of a communicator",
            "Read the named ranks' NCCL_DEBUG=WARN lines on their hosts for the error (ncclSystemError, "
            "ncclRemoteError); check the host's NICs and GPUs (`dmesg` for Xid) before restarting the job there.",
        ),
        # Facts only a live probe (or its snapshot) has.
        _c(
            "nvlink-link-down",
            "fail",
            "NVLink ports are down (fewer active than the model has, or than sibling GPUs)",
            "Run `nvidia-smi nvlink -s` and `nvidia-smi nvlink -e`; reseat the bridge or ask the provider to "
            "replace the baseboard or GPU; a reboot may retrain a link that dropped.",
        ),
        _c(
            "nvlink-errors",
            "warn",
            "NVLink error counters (replay, recovery, CRC) are non-zero",
            "Watch whether they grow (`nvidia-smi nvlink -e` twice under load); a growing count predicts a link "
            "going down: plan a drain and a hardware ticket.",
        ),
        _c(
            "fabric-not-ready",
            "fail",
            "GPUs on an NVSwitch system are not registered with the fabric",
            "Start the fabric manager (`systemctl enable --now nvidia-fabricmanager`, matching the driver "
            "version; on Blackwell HGX it needs the nvlsm package and the ib_umad module) and check "
            "`nvidia-smi -q | grep -A4 Fabric`.",
        ),
        _c(
            "p2p-unavailable",
            "warn",
            "P2P is unavailable between GPUs whose path should allow it",
            "Disable ACS on the PCIe bridges above the GPUs (or set the IOMMU to passthrough: iommu=pt) and "
            "check `nvidia-smi topo -p2p r`; in a VM ask for P2P-enabled passthrough.",
        ),
        _c(
            "pcie-link-degraded",
            "warn",
            "A GPU's PCIe link runs below its maximum width or generation",
            "Rerun under load (an idle GPU lowers its link generation); a narrow link under load means a badly "
            "seated card, riser or slot: reseat it or ask the provider to move the GPU.",
        ),
        _c(
            "nccl-env-override",
            "warn",
            "NCCL settings in the environment or /etc/nccl.conf change the path NCCL takes",
            "Unset leftovers (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL, NCCL_ALGO...) unless you set them on purpose; "
            "NCCL_DEBUG=INFO shows the transport chosen.",
        ),
        _c(
            "gpu-visibility-restricted",
            "warn",
            "Only part of the box's GPUs are visible (container, cgroup or CUDA_VISIBLE_DEVICES)",
            "Audit with every GPU visible (container flag --gpus all, unset CUDA_VISIBLE_DEVICES) to judge the "
            "whole box, or pass --expect-gpus for the slice you rented.",
        ),
        _c(
            "probe-sources-disagree",
            "warn",
            "NVML and nvidia-smi text disagree about the same link or GPU",
            "Run the audit again; a disagreement that persists points at a flapping link or a driver bug: "
            "attach the snapshot (raw nvidia-smi texts are inside) to a ticket.",
        ),
        # What on the host blocks P2P, GPUDirect RDMA and the PCIe path (live probe or snapshot).
        _c(
            "host-virtual-machine",
            "info",
            "The box is a virtual machine: P2P, GPUDirect RDMA and the topology are the hypervisor's",
            "Ask the provider for GPU passthrough with P2P enabled (the GPUs' PCIe switch passed through, or "
            "NVLink); ACS must stay on in a VM. If NCCL sees a flattened topology, give it NCCL_TOPO_FILE.",
        ),
        _c(
            "fabric-unhealthy",
            "fail",
            "GPUs report NVLink fabric problems (health summary, health mask, or an all-zero cluster UUID)",
            "Check `nvidia-smi -q` (Fabric: Health) on each GPU named; restart the fabric manager/NVLSM, reseat "
            "or replace the tray's NVLink cabling, and drain the node until the summary is Healthy.",
        ),
        _c(
            "pcie-path-degraded",
            "warn",
            "A PCIe hop between a GPU or NIC and its root port runs below what both ends support",
            "Reseat the card, riser or switch board on the hop named (`lspci -vv -s BDF`: LnkSta vs LnkCap); "
            "a speed drop on idle GPUs only may be power saving: rerun under load.",
        ),
        _c(
            "pcie-acs-redirect",
            "warn",
            "ACS P2P redirect is on for PCIe bridges above GPUs or RDMA NICs (bare metal; info in a VM)",
            "On bare metal clear the ACS control of each bridge named at every boot (`setpci -s BDF "
            "ECAP_ACS+0x6.w=0000`, as NCCL's troubleshooting guide shows) or turn ACS/IO virtualisation off in "
            "the BIOS; in a VM ACS must stay on: ask the provider for P2P-enabled passthrough.",
        ),
        _c(
            "pcie-aer-errors",
            "warn",
            "PCIe Advanced Error Reporting counted errors on a GPU, NIC or bridge since boot",
            "Watch the counters (`/sys/bus/pci/devices/BDF/aer_dev_*`); rising non-fatal or fatal errors mean a "
            "marginal slot, riser or card: reseat it or ask the provider to replace it.",
        ),
        _c(
            "rdma-port-down",
            "warn",
            "RDMA ports are not ACTIVE/LinkUp",
            "Check the cable and the switch port (`ibstat`: State, Physical state); a Disabled port is off at "
            "the switch, Polling means no link partner.",
        ),
        _c(
            "rdma-port-slow",
            "warn",
            "An RDMA port runs slower than its siblings",
            "Replace the cable or optic with one of the NIC's rate (a 200G cable halves a 400G NIC) and check "
            "the switch port speed (`ibstat`: Rate).",
        ),
        _c(
            "rdma-link-layer-mixed",
            "warn",
            "Active RDMA ports mix InfiniBand and Ethernet (RoCE)",
            "Give NCCL one fabric (NCCL_IB_HCA=mlx5_0,mlx5_1,...) or set the ports' link type alike "
            "(`mlxconfig ... LINK_TYPE_P1`).",
        ),
        _c(
            "rdma-port-errors",
            "warn",
            "RDMA ports count link-down events or symbol errors",
            "A flapping or marginal link: check the cable, optic and switch port (`perfquery`, `mlxlink`) and "
            "replace what keeps counting.",
        ),
        _c(
            "gpudirect-rdma-unavailable",
            "warn",
            "RDMA ports are up but NICs cannot reach GPU memory directly (no nvidia_peermem, no DMA-BUF)",
            "Load nvidia_peermem (`modprobe nvidia_peermem`, at boot via /etc/modules-load.d) or use NVIDIA's "
            "open kernel module on Linux 5.12+ for DMA-BUF; NCCL_DEBUG=INFO then says GPU Direct RDMA Enabled.",
        ),
        _c(
            "kernel-gpu-error",
            "fail",
            "The kernel log has GPU failure lines (Xid 79/74/144-150, fallen off the bus, NVLink training)",
            "Drain the node: Xid 79 and fallen-off-bus need a reset or reseat; Xid 74 and 144-150 an NVLink "
            "check (`nvidia-smi nvlink -e`) and a GPU reset or reboot; repeated lines mean a hardware ticket.",
        ),
        # Fleets: what only a comparison of many node reports shows (`topoaudit fleet`).
        _c(
            "fleet-figure-outlier",
            "warn",
            "A node's measured figure is far from its hardware group's median (median/MAD rule; fail below 0.9x)",
            "Rerun the node's audit to rule out a noisy run; a figure that stays low marks the node to drain "
            "and hand back (the drain list has the command).",
        ),
        _c(
            "fleet-duplicate-identity",
            "fail",
            "Two node reports claim one GPU UUID or serial (or one host name)",
            "Two reports describe one machine: check which node really holds the GPU (a copied report, a "
            "wrong host name, or a virtualised GPU shown twice) and audit that node again.",
        ),
        _c(
            "fleet-stale-report",
            "warn",
            "A node's report is much older than the others",
            "Audit the node again so the fleet verdict describes the machine as it is now.",
        ),
        _c(
            "fleet-node-missing",
            "fail",
            "A node expected in the fleet never reported",
            "Find out why the node did not run its audit (down, unreachable, job failed) before using it.",
        ),
        _c(
            "fleet-node-unreadable",
            "fail",
            "A node's input could not be read or judged",
            "Capture the node again (`topoaudit audit --out DIR` or `topoaudit probe`); the message says "
            "what was wrong with the file.",
        ),
        _c(
            "fleet-rack-incomplete",
            "fail",
            "An NVL rack's NVLink domain holds fewer GPUs than the rack is sold with (72 or 36)",
            "Trays are missing from the fabric or did not report: check each tray's fabric state and the "
            "IMEX/fabric manager, and audit the missing trays.",
        ),
        _c(
            "fleet-tray-mismatch",
            "fail",
            "An NVL tray's fabric state, status or health differs from its rack's (or it names no rack)",
            "Drain the tray and check its fabric registration (`nvidia-smi -q -d FABRIC`), NVLink cabling "
            "and firmware against its rack siblings.",
        ),
        _c(
            "fleet-hardware-minority",
            "warn",
            "A few nodes of the fleet report other hardware than most (GPU model or count, NVLink domains, NICs)",
            "Check that the odd nodes belong in this fleet (a wrong partition, a swapped board, a lagging "
            "driver); a policy's `gpu_models`/`gpus` or `--expect-nodes` states what the fleet should be.",
        ),
    )
}


def info(code: str) -> CodeInfo:
    """Registry entry of a code; KeyError for an unregistered code (a bug, caught by tests)."""
    return CODES[code]
