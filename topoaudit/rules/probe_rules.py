"""Rules over facts only a live probe (or its snapshot) has.

NVLink port state and counters, fabric state and health, P2P status and what blocks it, PCIe link state
along the whole path, RDMA ports and GPUDirect RDMA, kernel-log signatures, the NCCL environment, GPU
visibility, and NVML against ``nvidia-smi``.

On a machine from another source (a pasted ``topo -m``) these facts are simply not there and the rules
say nothing. On a probed machine, a fact the hardware does not support is not a fault: a rule that
needs it reports itself skipped (``--strict`` then exits 3), a rule that does not need it stays quiet.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from topoaudit.model.finding import Finding, RemedyCommand, Severity, Skipped
from topoaudit.model.machine import Gpu, Machine, PathLevel
from topoaudit.model.topology import gpu_pair_links
from topoaudit.model.values import Failed, Unsupported, is_absent
from topoaudit.rules.base import RuleContext, finding, first_few
from topoaudit.rules.codes import Code
from topoaudit.rules.needs import NVLINK_PORTS, P2P_STATUS, PROBE
from topoaudit.rules.needs import PROBE_SOURCES as PROBE_SOURCES
from topoaudit.rules.registry import rule
from topoaudit.rules.remedies import NCCL_VARIABLES, PCI_BUS_ID, remedy
from topoaudit.rules.topology_rules import link_remedy

if TYPE_CHECKING:  # a machine without host checks (a pasted matrix) does not load their model
    from topoaudit.catalog import GpuSpec
    from topoaudit.model.host_checks import AcsBridge, HostChecks, PcieHop, RdmaPort


def _live(machine: Machine) -> list[Gpu]:
    return [g for g in machine.gpus if not isinstance(g.status, Failed)]


def _checks(machine: Machine) -> HostChecks | None:
    checks = machine.host.checks
    return None if isinstance(checks, (Unsupported, Failed)) else checks


def _nic_label(machine: Machine, bus: object) -> str:
    nic = next((n for n in machine.nics if n.pci_bus_id == bus), None)
    return str(nic.device) if nic is not None and isinstance(nic.device, str) else str(bus)


# --- the remedy as commands for this box (printed by `--format remedy`, never run by topoaudit) ----------


def _with_commands(f: Finding, commands: Sequence[RemedyCommand]) -> Finding:
    return dataclasses.replace(f, remedy_commands=tuple(commands)) if commands else f


ACS_REDIRECT_BITS = 0b1100  # ACS Control: P2P Request Redirect (bit 2), P2P Completion Redirect (bit 3)


def _redirecting(acs: object) -> list[AcsBridge]:
    if not isinstance(acs, tuple):
        return []
    return [b for b in acs if isinstance(b.control, int) and b.control & ACS_REDIRECT_BITS]


def acs_clear_commands(bridges: Iterable[AcsBridge]) -> list[RemedyCommand]:
    """``setpci -s BDF ECAP_ACS+0x6.w=0000`` per bridge (NCCL's troubleshooting guide), undone with the value read."""
    return [
        remedy("acs-clear", bridge=b.bridge, control=b.control)
        for b in bridges
        if isinstance(b.control, int) and PCI_BUS_ID.fullmatch(b.bridge.lower())
    ]


def _link_check(bus: str, who: str, slots: object) -> list[RemedyCommand]:
    """The ``lspci`` link check of one device, naming the physical slot to reseat it in where the firmware names it."""
    if not PCI_BUS_ID.fullmatch(bus.lower()):
        return []
    slot = slots.get(bus.rpartition(".")[0]) if isinstance(slots, dict) else None
    return [remedy("pcie-link-check", device=bus, who=who, slot=slot or "")]


NVL_TRAY_FABRIC_REMEDY = (
    "This is a compute tray of an NVLink rack: the rack's NVLink switch trays run the fabric manager, not this "
    "tray. Ask the rack's administrator to check the switch trays' fabric and this tray's partition; on the tray, "
    "`nvidia-smi -q | grep -A10 Fabric` must show Completed/Success with a non-zero CliqueId and ClusterUUID, and "
    "`nvidia-imex-ctl -N` every node Connected for multi-node NVLink."
)


def fabric_manager_commands(spec: GpuSpec | None) -> list[RemedyCommand]:
    """What NVIDIA documents to bring the NVLink fabric up on this platform (probe facts and CUDA error 802).

    HGX/DGX Ampere and Hopper: start and enable ``nvidia-fabricmanager``. Blackwell HGX (NVLink 5 on NVSwitch): the
    same service starts the NVLink subnet manager first, which needs the ``nvlsm`` package and ``ib_umad`` loaded.
    A compute tray of an NVL rack runs no fabric manager (its switch trays do): no command, the remedy says whom
    to ask (:data:`NVL_TRAY_FABRIC_REMEDY`).
    """
    if spec is not None and spec.layout == "nvl72":
        return []
    blackwell = (
        [
            remedy("package-check", package="nvlsm"),
            remedy("module-load", module="ib_umad"),
            remedy("module-load-at-boot", module="ib_umad"),
        ]
        if spec is not None and spec.nvlink_generation >= 5
        else []
    )
    return [
        *blackwell,
        remedy("service-start", service="nvidia-fabricmanager"),
        remedy("service-enable", service="nvidia-fabricmanager"),
    ]


def with_fabric_remedy(f: Finding, spec: GpuSpec | None, commands: Sequence[RemedyCommand]) -> Finding:
    """The finding with the platform's fabric commands, and on an NVL rack tray the remedy naming who runs it."""
    if spec is not None and spec.layout == "nvl72":
        f = dataclasses.replace(f, remedy=NVL_TRAY_FABRIC_REMEDY)
    return _with_commands(f, commands)


@rule(
    Code(
        "fabric-not-ready",
        "fail",
        title="GPUs on an NVSwitch system are not registered with the fabric",
        remedy=(
            "Start the fabric manager (`systemctl enable --now nvidia-fabricmanager`, matching the driver version; on "
            "Blackwell HGX it needs the nvlsm package and the ib_umad module) and check `nvidia-smi -q | grep -A4 "
            "Fabric`."
        ),
        remedy_actions=(
            "package-check",
            "module-load",
            "module-load-at-boot",
            "service-start",
            "service-enable",
        ),
    ),
    needs=(PROBE,),
)
def fabric_not_ready(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """An NVSwitch system whose GPUs are not registered with the fabric.

    The state is not COMPLETED, or the registration status is not SUCCESS: CUDA then fails with "system
    not yet initialized".
    """
    machine = ctx.machine
    live = _live(machine)
    switched = bool(machine.nvswitches) or (ctx.spec is not None and ctx.spec.build == "nvswitch" and len(live) > 1)
    if not switched:
        return
    fm = machine.host.fabric_manager
    tray = ctx.spec is not None and ctx.spec.layout == "nvl72"  # its switch trays run the fabric manager
    fm_note = " The fabric manager is not running." if fm == "not running" and not tray else ""
    commands = fabric_manager_commands(ctx.spec) if fm == "not running" else []
    bad: dict[str, str] = {}
    unknown: list[str] = []
    for gpu in live:
        state, status = gpu.fabric.state, gpu.fabric.status
        if is_absent(state) or state == "not-supported":
            unknown.append(f"{gpu.label}: {state}")
        elif state != "completed":
            bad[gpu.label] = f"state {state}"
        elif isinstance(status, str) and status != "SUCCESS":
            bad[gpu.label] = f"state completed, status {status}"
    if bad:
        states = sorted(set(bad.values()))
        yield with_fabric_remedy(
            finding(
                "fabric-not-ready",
                f"{len(bad)} of {len(live)} GPUs are not registered with the NVSwitch fabric ({'; '.join(states)})."
                + fm_note
                + " CUDA will fail with 'system not yet initialized'.",
                gpus=bad,
                fabric_manager=str(fm),
            ),
            ctx.spec,
            commands,
        )
    elif unknown:
        if fm == "not running" and not tray:
            yield with_fabric_remedy(
                finding(
                    "fabric-not-ready",
                    "This NVSwitch system reports no fabric state (older GPU or driver) and the fabric manager is "
                    "not running.",
                    severity=Severity.WARN,
                    fabric_manager=str(fm),
                    gpus=unknown,
                ),
                ctx.spec,
                commands,
            )
        else:
            yield Skipped("fabric-not-ready", f"fabric state not available: {unknown[0]}")


_ZERO_UUID = "00000000-0000-0000-0000-000000000000"


@rule(
    Code(
        "fabric-unhealthy",
        "fail",
        title="GPUs report NVLink fabric problems (health summary, health mask, or an all-zero cluster UUID)",
        remedy=(
            "Check `nvidia-smi -q` (Fabric: Health) on each GPU named; restart the fabric manager/NVLSM, reseat or "
            "replace the tray's NVLink cabling, and drain the node until the summary is Healthy."
        ),
    ),
    needs=(PROBE,),
)
def fabric_unhealthy(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """NVSwitch-fabric health (NVML fabric info v3): a health summary other than healthy, a health-mask
    problem (degraded bandwidth, route recovery, route unhealthy, access-timeout recovery, incorrect
    configuration), or a GPU that reports health but an all-zero cluster UUID (its rack cannot be told).

    Limited capacity alone is a warning; the rest fail.
    """
    machine = ctx.machine
    checks = _checks(machine)
    if checks is None or not isinstance(checks.fabric_health, tuple):
        return
    gpus = {g.index: g for g in machine.gpus}
    bad: dict[str, list[str]] = {}
    severity = Severity.WARN
    for h in checks.fabric_health:
        gpu = gpus.get(h.gpu)
        problems = list(h.problems)
        if isinstance(h.summary, str) and h.summary not in ("healthy", "not-supported"):
            problems.insert(0, f"summary {h.summary}")
        reports_health = isinstance(h.summary, str) and h.summary != "not-supported"
        if (
            reports_health
            and gpu is not None
            and gpu.fabric.state == "completed"
            and gpu.fabric.cluster_uuid == _ZERO_UUID
        ):
            problems.append("all-zero cluster UUID")
        if problems:
            bad[f"GPU{h.gpu}"] = problems
            if problems != ["summary limited-capacity"]:
                severity = Severity.FAIL
    if not bad:
        return
    yield finding(
        "fabric-unhealthy",
        f"{len(bad)} GPU(s) report NVLink fabric problems: "
        + first_few([f"{g}: {', '.join(p)}" for g, p in sorted(bad.items())], 6, "; ")
        + ".",
        severity=severity,
        gpus=bad,
        cliques=sorted(
            {
                f"{g.fabric.cluster_uuid}/{g.fabric.clique_id}"
                for g in machine.gpus
                if isinstance(g.fabric.clique_id, int)
            }
        ),
    )


@rule(
    Code(
        "nvlink-link-down",
        "fail",
        title="NVLink ports are down (fewer active than the model has, or than sibling GPUs)",
        remedy=(
            "Run `nvidia-smi nvlink -s` and `nvidia-smi nvlink -e`; on PCIe cards reseat the NVLink bridge, on an "
            "SXM/HGX baseboard (no bridge) ask the provider to service the GPU tray or the baseboard; a reboot may "
            "retrain a link that dropped."
        ),
    ),
    needs=(NVLINK_PORTS,),
)
def nvlink_link_down(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """NVLink ports down.

    Fewer active ports than the model has active by design (H100 NVL: 12 of 18), or, for a model the
    catalog does not know, fewer than the best GPU of the same box. A box where no GPU has an active port
    is left to ``nvlink-absent`` (no bridge, fabric not up, a VM).
    """
    machine = ctx.machine
    spec = ctx.spec
    has_nvlink = spec is not None and spec.nvlink_generation > 0
    counted: dict[int, tuple[int, list[int]]] = {}
    live = _live(machine)
    for gpu in live:
        ports = gpu.nvlink_ports
        # A lone GPU whose NVLink is not reported (a 1-GPU VM of an NVLink model) has nothing to link to.
        if isinstance(ports, Failed) or (isinstance(ports, Unsupported) and has_nvlink and len(live) > 1):
            yield Skipped("nvlink-link-down", f"{gpu.label} NVLink state unknown: {ports}")
            continue
        if not isinstance(ports, tuple) or not ports:
            continue
        unknown = [p for p in ports if is_absent(p.state)]
        if unknown:
            yield Skipped("nvlink-link-down", f"{gpu.label} NVLink {unknown[0].link} state unknown: {unknown[0].state}")
        active = sum(1 for p in ports if p.state == "active")
        counted[gpu.index] = (active, [p.link for p in ports if p.state == "inactive"])
    if not counted or not any(active for active, _ in counted.values()):
        return
    best = max(active for active, _ in counted.values())
    expected = spec.nvlinks_per_gpu if has_nvlink and spec is not None else best
    low = {i: (a, down) for i, (a, down) in counted.items() if a < expected and down}
    if not low:
        return
    severity = Severity.FAIL if has_nvlink else Severity.WARN
    versus = f"{spec.name} has {expected} active by design" if has_nvlink and spec else f"the best GPU here has {best}"
    if (
        has_nvlink
        and spec is not None
        and spec.build == "mesh"
        and 1 < len(live) < spec.node_gpus
        and len(counted) == len(live)
        and len({a for a, _ in counted.values()}) == 1
    ):
        # A mesh model's design count is its 8-GPU cube mesh's: a board of two or four wires fewer links per GPU
        severity = Severity.WARN
        versus += (
            f", counted for its {spec.node_gpus}-GPU board; every one of the {len(live)} GPUs shown has {best}, "
            "as a smaller board wires them"
        )
    shown = "; ".join(
        f"GPU{i}: {a}/{expected} active, down: "
        + ("every link (NVML numbers none)" if down == [-1] else ",".join(map(str, down[:8])))
        for i, (a, down) in sorted(low.items())
    )
    down = finding(
        "nvlink-link-down",
        f"{len(low)} GPU(s) have NVLink ports down ({versus}): {shown}.",
        severity=severity,
        gpus={f"GPU{i}": {"active": a, "expected": expected, "down_links": down} for i, (a, down) in low.items()},
    )
    yield dataclasses.replace(down, remedy=link_remedy(ctx))


_COUNTERS = ("replay_errors", "recovery_errors", "crc_flit_errors", "crc_data_errors")


@rule(
    Code(
        "nvlink-errors",
        "warn",
        title="NVLink error counters (replay, recovery, CRC) are non-zero",
        remedy=(
            "Watch whether they grow (`nvidia-smi nvlink -e` twice under load); a growing count predicts a link going "
            "down: plan a drain and a hardware ticket."
        ),
    ),
    needs=(NVLINK_PORTS,),
)
def nvlink_errors(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Non-zero NVLink error counters (replay, recovery, CRC) since the driver loaded.

    A marginal link retrains or retransmits, often before it goes down.
    """
    bad: dict[str, dict[str, dict[str, int]]] = {}
    unsupported = 0
    ports_seen = 0
    for gpu in _live(ctx.machine):
        if not isinstance(gpu.nvlink_ports, tuple):
            continue
        for port in gpu.nvlink_ports:
            ports_seen += 1
            values = {c: getattr(port, c) for c in _COUNTERS}
            if all(is_absent(v) for v in values.values()):
                unsupported += 1
                continue
            nonzero = {c.removesuffix("_errors"): v for c, v in values.items() if isinstance(v, int) and v > 0}
            if nonzero:
                bad.setdefault(gpu.label, {})[f"link{port.link}"] = nonzero
    if ports_seen and unsupported == ports_seen:
        yield Skipped("nvlink-errors", "NVLink error counters are not supported by this GPU/driver")
    if not bad:
        return
    shown = "; ".join(
        f"{g} " + ", ".join(f"{link} " + " ".join(f"{k}={v}" for k, v in c.items()) for link, c in links.items())
        for g, links in bad.items()
    )
    yield finding(
        "nvlink-errors",
        f"NVLink error counters are non-zero on {sum(len(v) for v in bad.values())} port(s): {shown}.",
        counters=bad,
    )


@rule(
    Code(
        "p2p-unavailable",
        "warn",
        title="P2P is unavailable between GPUs whose path should allow it",
        remedy=(
            "Disable ACS on the PCIe bridges above the GPUs (or set the IOMMU to passthrough: iommu=pt) and check "
            "`nvidia-smi topo -p2p r`; in a VM ask for P2P-enabled passthrough."
        ),
        remedy_actions=(
            "acs-clear",
            "package-check",
            "module-load",
            "module-load-at-boot",
            "service-start",
            "service-enable",
        ),
    ),
    needs=(P2P_STATUS,),
)
def p2p_unavailable(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """GPU pairs whose P2P read/write is not OK although the path should allow it.

    On NVLink, or PCIe below the host bridge, NCCL then stages through host memory. Names ACS or the IOMMU
    when they are the likely cause; GPU_NOT_SUPPORTED on consumer cards is by design (info).
    """
    machine = ctx.machine
    if not machine.p2p:  # probed, or a pasted `nvidia-smi topo -p2p`
        return
    mig = {g.index for g in machine.gpus if isinstance(g.mig_mode, str) and g.mig_mode.startswith("enabled")}
    pairs = gpu_pair_links(machine)
    bad: list[tuple[int, int, str, PathLevel]] = []
    for p in machine.p2p:
        if p.a in mig or p.b in mig:
            continue
        link = pairs.get((min(p.a, p.b), max(p.a, p.b)))
        if link is None or link.level > PathLevel.PHB:
            continue  # across host bridges NCCL does not use P2P by default anyway
        statuses = [v for v in (p.read, p.write) if v != "ok"]
        if any(isinstance(v, Failed) for v in statuses):
            yield Skipped("p2p-unavailable", f"P2P status of GPU{p.a}-GPU{p.b} unknown: {statuses[0]}")
            continue
        said = [v for v in statuses if isinstance(v, str)]
        if said:
            bad.append((p.a, p.b, said[0], link.level))
    if not bad:
        return
    host = machine.host
    checks = _checks(machine)
    in_vm = checks is not None and checks.virtualization == "vm"
    cause = ""
    fabric_down = _fabric_down(ctx) if {s for *_, s, _ in bad} - {"gpu-not-supported", "disabled-by-regkey"} else ""
    if fabric_down:
        cause = fabric_down
    elif isinstance(host.acs_redirect_bridges, tuple) and host.acs_redirect_bridges:
        cause = f"ACS P2P redirect is on for bridge(s) {', '.join(host.acs_redirect_bridges[:4])}"
    elif host.iommu == "translating":
        cause = "the IOMMU translates DMA (not passthrough)"
    elif in_vm:
        cause = "this is a virtual machine: the hypervisor decides whether GPUs may reach each other"
    reasons = sorted({s for _, _, s, _ in bad})
    if reasons == ["gpu-not-supported"]:
        severity, cause = Severity.INFO, cause or "the GPU model does not support P2P (consumer cards, by design)"
    elif any(level == PathLevel.NVLINK for *_, level in bad):
        severity = Severity.FAIL
    else:
        severity = Severity.WARN
    shown = first_few([f"GPU{a}-GPU{b} {s} over {level.label}" for a, b, s, level in bad], 6)
    named = set(host.acs_redirect_bridges) if isinstance(host.acs_redirect_bridges, tuple) else set()
    acs = [b for b in _redirecting(checks.acs if checks is not None else ()) if b.bridge in named]
    commands = acs_clear_commands(acs) if acs and not in_vm and reasons != ["gpu-not-supported"] else []
    explain = _p2p_explanation
    if fabric_down:  # the NVSwitch fabric is not up: ACS and the IOMMU are not the cause, nor their cure
        commands = fabric_manager_commands(ctx.spec)
        explain = _fabric_explanation
    found = _with_commands(
        finding(
            "p2p-unavailable",
            f"P2P is unavailable on {len(bad)} GPU pair(s) whose path allows it: {shown}"
            + (f"; likely cause: {cause}." if cause else "."),
            severity=severity,
            pairs=[
                {
                    "gpus": [a, b],
                    "status": s,
                    "path": level.name,
                    **explain(s, host.acs_redirect_bridges, host.iommu, in_vm),
                }
                for a, b, s, level in bad
            ],
            likely_cause=cause or "unknown",
            virtualization=str(checks.virtualization) if checks is not None else "unknown",
        ),
        commands,
    )
    if fabric_down:
        found = with_fabric_remedy(dataclasses.replace(found, remedy=FABRIC_P2P_REMEDY), ctx.spec, ())
    yield found


FABRIC_P2P_REMEDY = (
    "Start the fabric manager that matches the driver (`systemctl enable --now nvidia-fabricmanager`; on Blackwell HGX "
    "it needs the nvlsm package and the ib_umad module) and check that `nvidia-smi -q | grep -A4 Fabric` reads "
    "Completed/Success: GPUs behind NVSwitches reach each other only once the fabric is up. ACS and the IOMMU are not "
    "the cause here."
)


def _fabric_down(ctx: RuleContext) -> str:
    """Why the NVSwitch fabric is not up ("" when it is, or the box has none): the cause of P2P failing over it."""
    machine = ctx.machine
    design = ctx.design
    on_board = design is not None and design.build == "nvswitch" and design.layout != "nvl72"
    if (machine.nvswitches or on_board) and machine.host.fabric_manager == "not running":
        return "the fabric manager is not running: GPUs behind NVSwitches cannot reach each other until it is"
    waiting = [g.label for g in machine.gpus if g.fabric.state in ("not-started", "in-progress")]
    if waiting:
        return f"the NVLink fabric is not up ({first_few(waiting, 4)} not registered with the fabric manager)"
    return ""


def _fabric_explanation(status: str, acs: object, iommu: object, in_vm: bool) -> dict[str, str]:
    meaning = P2P_STATUS_MEANING.get(status, (status, ""))[0]
    return {"explanation": f"{meaning}; the NVLink fabric is not up", "remedy": FABRIC_P2P_REMEDY}


# What each NVML P2P status (nvmlGpuP2PStatus_t; ``nvidia-smi topo -p2p`` letters) means, and its fix.
P2P_STATUS_MEANING = {
    "chipset-not-supported": (
        "CNS: the CPU or chipset does not pass peer traffic between these GPUs' root ports",
        "Place the pair under one PCIe switch or root port; no software setting enables it.",
    ),
    "gpu-not-supported": (
        "GNS: this GPU model does not support P2P (consumer cards, by design)",
        "Nothing to repair: NCCL stages through host memory; choose a data-centre model for P2P.",
    ),
    "topology-not-supported": (
        "TNS: the path between the GPUs (across CPU sockets or an unsupported bridge) does not carry P2P",
        "Keep each tensor-parallel group on GPUs under one switch or one CPU socket.",
    ),
    "disabled-by-regkey": (
        "DR: a driver registry key turns P2P off",
        "Remove the P2P setting from NVreg_RegistryDwords in /etc/modprobe.d and reload the driver.",
    ),
    "not-supported": (
        "NS: the driver reports P2P as not supported on this path",
        "Check ACS on the bridges above the GPUs and the IOMMU mode; `nvidia-smi topo -p2p r` confirms.",
    ),
    "unknown": ("U: the driver could not tell", "Rerun the probe; attach the snapshot to a ticket if it persists."),
}


def _p2p_explanation(status: str, acs: object, iommu: object, in_vm: bool) -> dict[str, str]:
    """One explanation and one remedy for a GPU pair's P2P status, naming the host cause when one is seen."""
    meaning, remedy = P2P_STATUS_MEANING.get(status, (f"status {status}", "Rerun the probe."))
    if status not in ("gpu-not-supported", "disabled-by-regkey"):
        if isinstance(acs, tuple) and acs:
            meaning += f"; ACS P2P redirect is on for bridge(s) {', '.join(acs[:4])}"
            remedy = (
                "In a VM keep ACS on and ask the provider for P2P-enabled passthrough; on bare metal turn ACS "
                "off in the BIOS or with `setpci -s BDF ECAP_ACS+6.w=0000` on each bridge named."
                if in_vm
                else "Turn ACS off in the BIOS, or with `setpci -s BDF ECAP_ACS+6.w=0000` on each bridge named "
                "(boot-time script), or boot with pci=noacs."
            )
        elif iommu == "translating":
            meaning += "; the IOMMU translates DMA"
            remedy = "Boot with iommu=pt (intel_iommu=on iommu=pt), or turn VT-d/AMD-Vi off in the BIOS."
        elif in_vm:
            meaning += "; this is a virtual machine"
            remedy = "Ask the provider for P2P-enabled passthrough (the GPUs' PCIe switch passed through, or NVLink)."
    return {"explanation": meaning, "remedy": remedy}


@rule(
    Code(
        "pcie-acs-redirect",
        "warn",
        title="ACS P2P redirect is on for PCIe bridges above GPUs or RDMA NICs (bare metal; info in a VM)",
        remedy=(
            "On bare metal clear the ACS control of each bridge named at every boot (`setpci -s BDF "
            "ECAP_ACS+0x6.w=0000`, as NCCL's troubleshooting guide shows) or turn ACS/IO virtualisation off in the "
            "BIOS; in a VM ACS must stay on: ask the provider for P2P-enabled passthrough."
        ),
        remedy_actions=("acs-clear",),
    ),
    needs=(PROBE,),
)
def pcie_acs_redirect(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """ACS P2P Request/Completion Redirect on a PCIe bridge above GPUs or RDMA NICs.

    Peer traffic below the bridge (GPU to GPU, GPUDirect RDMA between a NIC and a GPU) is sent up to the root
    complex: low bandwidth, or a hang with the IOMMU, though NVML still reports P2P as supported (ACS changes
    the route, not the capability). NCCL's troubleshooting guide names it for both. On bare metal a warning with
    the ``setpci`` line per bridge; in a virtual machine, where passthrough needs ACS, information only.
    """
    machine = ctx.machine
    checks = _checks(machine)
    if checks is None:
        return
    acs = checks.acs
    if isinstance(acs, Failed):
        yield Skipped("pcie-acs-redirect", f"ACS not read: {acs.reason}")
    if not isinstance(acs, tuple):
        return
    failed = [b for b in acs if isinstance(b.control, Failed)]
    if failed:
        yield Skipped("pcie-acs-redirect", f"ACS of {len(failed)} bridge(s) unreadable: {failed[0].control}")
    on = _redirecting(acs)
    if not on:
        return
    gpus = {g.pci_bus_id: g.label for g in machine.gpus if isinstance(g.pci_bus_id, str)}

    def below(b: AcsBridge) -> list[str]:
        return [gpus.get(e) or _nic_label(machine, e) for e in b.below]

    in_vm = checks.virtualization == "vm"
    p2p_ok = bool(machine.p2p) and all(p.read == "ok" and p.write == "ok" for p in machine.p2p)
    shown = first_few([f"{b.bridge} ({' '.join(b.enabled)}) above {first_few(below(b), 4)}" for b in on], 4, "; ")
    if in_vm:
        tail = (
            " This is a virtual machine: the hypervisor needs ACS for passthrough, and the bridges a guest sees are "
            "virtual; nothing to change here."
        )
    else:
        tail = (
            " Peer traffic between the devices below them goes up to the root complex: low bandwidth or a hang "
            "for PCIe P2P and GPUDirect RDMA"
            + (", although NVML reports P2P OK (ACS changes the route, not the capability)." if p2p_ok else ".")
        )
    yield _with_commands(
        finding(
            "pcie-acs-redirect",
            f"ACS P2P redirect is on for {len(on)} PCIe bridge(s) above GPUs or RDMA NICs: {shown}.{tail}",
            severity=Severity.INFO if in_vm else Severity.WARN,
            bridges=[
                {"bridge": b.bridge, "control": f"{b.control:#06x}", "enabled": list(b.enabled), "below": below(b)}
                for b in on
            ],
            virtualization=str(checks.virtualization),
            nvml_p2p="ok" if p2p_ok else "not ok on every pair" if machine.p2p else "not read",
        ),
        [] if in_vm else acs_clear_commands(on),
    )


@rule(
    Code(
        "host-virtual-machine",
        "info",
        title="The box is a virtual machine: P2P, GPUDirect RDMA and the topology are the hypervisor's",
        remedy=(
            "Ask the provider for GPU passthrough with P2P enabled (the GPUs' PCIe switch passed through, or NVLink); "
            "ACS must stay on in a VM. If NCCL sees a flattened topology, give it NCCL_TOPO_FILE."
        ),
    ),
    needs=(PROBE,),
)
def host_virtual_machine(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """This box is a virtual machine: P2P, GPUDirect RDMA and the topology NVML shows are the hypervisor's."""
    checks = _checks(ctx.machine)
    if checks is None or checks.virtualization != "vm":
        return
    yield finding(
        "host-virtual-machine",
        f"This is a virtual machine ({checks.virtualization_evidence}): GPU P2P, GPUDirect RDMA and the PCIe "
        "topology seen here are what the hypervisor passes through; in a VM, ACS must stay on.",
        evidence=str(checks.virtualization_evidence),
    )


@rule(
    Code(
        "pcie-link-degraded",
        "warn",
        title="A GPU's PCIe link runs below its maximum width or generation",
        remedy=(
            "Rerun under load (an idle GPU lowers its link generation); a narrow link under load means a badly seated "
            "card, riser or slot: reseat it or ask the provider to move the GPU."
        ),
        remedy_actions=("pcie-link-check",),
    ),
    needs=(PROBE,),
)
def pcie_link_degraded(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """A GPU's PCIe link below its maximum.

    Narrower than max: warn (fail under load). Slower generation: normal power saving at idle (info), a
    fault under load (fail). A slot slower than the GPU model: warn.
    """
    spec = ctx.spec
    worst = Severity.INFO
    rows: list[dict[str, object]] = []
    commands: list[RemedyCommand] = []
    checks = _checks(ctx.machine)
    slots = checks.pcie_slots if checks is not None else None
    for gpu in _live(ctx.machine):
        pcie = gpu.pcie
        values = (pcie.gen_current, pcie.gen_max, pcie.width_current, pcie.width_max)
        if any(is_absent(v) for v in values):
            bad = next(v for v in values if is_absent(v))
            yield Skipped("pcie-link-degraded", f"{gpu.label} PCIe link state unknown: {bad}")
            continue
        gen, gen_max, width, width_max = (v if isinstance(v, int) else 0 for v in values)
        loaded = pcie.under_load is True
        problems = []
        if width < width_max:
            problems.append(f"x{width} of x{width_max}")
            worst = max(worst, Severity.FAIL if loaded else Severity.WARN, key=lambda s: s.rank)
        if gen < gen_max:
            problems.append(f"Gen{gen} of Gen{gen_max}" + ("" if loaded else " while idle"))
            worst = max(worst, Severity.FAIL if loaded else Severity.INFO, key=lambda s: s.rank)
        if spec and spec.pcie_generation and gen_max < spec.pcie_generation:
            problems.append(f"slot max Gen{gen_max} below the GPU's Gen{spec.pcie_generation}")
            worst = max(worst, Severity.WARN, key=lambda s: s.rank)
        if problems:
            rows.append({"gpu": gpu.label, "problems": problems, "under_load": str(pcie.under_load)})
            if (width < width_max or (gen < gen_max and loaded)) and isinstance(gpu.pci_bus_id, str):
                commands += _link_check(gpu.pci_bus_id, gpu.label, slots)
    if not rows:
        return
    alike: dict[str, list[str]] = {}  # GPUs with the same problems are named once, together
    for row in rows:
        alike.setdefault(", ".join(row["problems"]), []).append(str(row["gpu"]))  # type: ignore[arg-type]
    groups = [f"{first_few(gpus, 4)} {problems}" for problems, gpus in alike.items()]
    idle = any(p.endswith(" while idle") for r in rows for p in r["problems"])  # type: ignore[attr-defined]
    yield _with_commands(
        finding(
            "pcie-link-degraded",
            f"{len(rows)} GPU PCIe link(s) below maximum: "
            + first_few(groups, 8, "; ")
            + ("; an idle GPU lowers its link speed for power saving, so rerun under load to confirm" if idle else "")
            + ".",
            severity=worst,
            gpus=rows,
        ),
        commands,
    )


_LANE_GBPS = {2.5: 0.25, 5.0: 0.5, 8.0: 0.985, 16.0: 1.969, 32.0: 3.938, 64.0: 7.563}  # GB/s per lane, one way


def _hop_gbps(speed: object, width: object) -> float:
    if isinstance(speed, float) and isinstance(width, int):
        return _LANE_GBPS.get(speed, speed / 8) * width
    return 0.0


@rule(
    Code(
        "pcie-path-degraded",
        "warn",
        title="A PCIe hop between a GPU or NIC and its root port runs below what both ends support",
        remedy=(
            "Reseat the card, riser or switch board on the hop named (`lspci -vv -s BDF`: LnkSta vs LnkCap); a speed "
            "drop on idle GPUs only may be power saving: rerun under load."
        ),
        remedy_actions=("pcie-link-check",),
    ),
    needs=(PROBE,),
)
def pcie_path_degraded(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """A PCIe hop above a GPU or NIC trained below the lower of its two ends' maxima; names the slowest.

    A switch uplink at x8 is invisible to NVML's per-GPU figures (the GPU's own link is judged by
    ``pcie-link-degraded``). A narrower link is a fault; a slower generation on the path of idle GPUs only
    may be power saving and is reported as info, to be judged again under load.
    """
    machine = ctx.machine
    checks = _checks(machine)
    if checks is None:
        return
    hops = checks.pcie_hops
    if isinstance(hops, Failed):
        yield Skipped("pcie-path-degraded", f"PCIe path not read: {hops}")
    if not isinstance(hops, tuple):
        return
    gpus = {g.pci_bus_id: g for g in machine.gpus if isinstance(g.pci_bus_id, str)}
    judged = [h for h in hops if h.device not in gpus]
    unknown = [h for h in judged if any(is_absent(v) for v in (h.speed_current_gts, h.speed_max_gts,
                                                                 h.width_current, h.width_max))]  # fmt: skip
    rows: list[tuple[PcieHop, list[str], Severity]] = []
    for hop in judged:
        if hop in unknown:
            continue
        problems, severity = [], Severity.INFO
        if hop.width_current < hop.width_max:  # type: ignore[operator]
            problems.append(f"x{hop.width_current} of x{hop.width_max}")
            severity = Severity.WARN
        if hop.speed_current_gts < hop.speed_max_gts:  # type: ignore[operator]
            loaded = [gpus[e] for e in hop.endpoints if e in gpus]
            idle = bool(loaded) and all(g.pcie.under_load is not True for g in loaded)
            problems.append(
                f"{hop.speed_current_gts:g} of {hop.speed_max_gts:g} GT/s"
                + (" (idle GPUs: may be power saving)" if idle else "")
            )
            if not idle:
                severity = Severity.WARN
        if problems:
            rows.append((hop, problems, severity))
    failed = [h for h in unknown if any(isinstance(v, Failed) for v in (h.speed_current_gts, h.width_current))]
    if failed:  # unreadable, not merely absent on this platform
        yield Skipped("pcie-path-degraded", f"link state of {len(failed)} PCIe hop(s) unreadable")
    if not rows:
        return
    rows.sort(key=lambda r: _hop_gbps(r[0].speed_current_gts, r[0].width_current))
    slowest = rows[0][0]

    def behind(hop: PcieHop) -> str:
        return first_few([gpus[e].label if e in gpus else _nic_label(machine, e) for e in hop.endpoints], 4)

    worst = max((sev for *_, sev in rows), key=lambda s: s.rank)
    commands = [c for h, _, sev in rows if sev is not Severity.INFO
                for c in _link_check(h.device, f"the device below {h.upstream} in front of {behind(h)}",
                                     checks.pcie_slots)]  # fmt: skip
    yield _with_commands(
        finding(
            "pcie-path-degraded",
            f"{len(rows)} PCIe hop(s) on the way to the root port run below what both ends support; the slowest is "
            f"{slowest.upstream} -> {slowest.device} ({', '.join(rows[0][1])}, about "
            f"{_hop_gbps(slowest.speed_current_gts, slowest.width_current):.0f} GB/s) in front of {behind(slowest)}.",
            severity=worst,
            hops=[
                {
                    "upstream": h.upstream,
                    "device": h.device,
                    "problems": p,
                    "behind": behind(h),
                    "current_gbps": round(_hop_gbps(h.speed_current_gts, h.width_current), 1),
                }
                for h, p, _ in rows
            ],
        ),
        commands,
    )


@rule(
    Code(
        "pcie-aer-errors",
        "warn",
        title="PCIe Advanced Error Reporting counted errors on a GPU, NIC or bridge since boot",
        remedy=(
            "Watch the counters (`/sys/bus/pci/devices/BDF/aer_dev_*`); rising non-fatal or fatal errors mean a "
            "marginal slot, riser or card: reseat it or ask the provider to replace it."
        ),
        remedy_actions=("pcie-link-check",),
    ),
    needs=(PROBE,),
)
def pcie_aer_errors(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """PCIe Advanced Error Reporting counted errors on a GPU, NIC or a bridge above them since boot.

    Fatal or non-fatal errors: warn; correctable only (replays a marginal link hides): info.
    """
    machine = ctx.machine
    checks = _checks(machine)
    if checks is None or not isinstance(checks.aer, tuple):
        return
    gpus = {g.pci_bus_id: g.label for g in machine.gpus if isinstance(g.pci_bus_id, str)}
    bad = [a for a in checks.aer if any(isinstance(v, int) and v > 0 for v in (a.correctable, a.nonfatal, a.fatal))]
    if not bad:
        return
    serious = any(isinstance(v, int) and v > 0 for a in bad for v in (a.nonfatal, a.fatal))
    shown = first_few(
        [
            f"{gpus.get(a.device) or _nic_label(machine, a.device)} correctable={a.correctable} "
            f"nonfatal={a.nonfatal} fatal={a.fatal}"
            for a in bad
        ],
        6,
        "; ",
    )
    commands = [
        c
        for a in bad
        if any(isinstance(v, int) and v > 0 for v in (a.nonfatal, a.fatal))
        for c in _link_check(a.device, gpus.get(a.device) or _nic_label(machine, a.device), checks.pcie_slots)
    ]
    yield _with_commands(
        finding(
            "pcie-aer-errors",
            f"PCIe AER counted errors on {len(bad)} device(s) since boot: {shown}.",
            severity=Severity.WARN if serious else Severity.INFO,
            devices=[
                {
                    "device": a.device,
                    "gpu": gpus.get(a.device, ""),
                    "correctable": str(a.correctable),
                    "nonfatal": str(a.nonfatal),
                    "fatal": str(a.fatal),
                }
                for a in bad
            ],
        ),
        commands,
    )


def _rdma_ports(machine: Machine) -> tuple[RdmaPort, ...] | None:
    """The probed RDMA ports of the host; None when the host was not probed or its ports were not read."""
    checks = _checks(machine)
    if checks is None or not isinstance(checks.rdma_ports, tuple):
        return None
    return checks.rdma_ports


@rule(
    Code(
        "rdma-port-down",
        "warn",
        title="RDMA ports are not ACTIVE/LinkUp",
        remedy=(
            "Check the cable and the switch port (`ibstat`: State, Physical state); a Disabled port is off at the "
            "switch, Polling means no link partner."
        ),
    ),
    needs=(PROBE,),
)
def rdma_port_down(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """RDMA ports that are not ACTIVE/LinkUp (a cable out, a switch port disabled, a port still polling)."""
    ports = _rdma_ports(ctx.machine)
    if ports is None:
        return
    down = [
        p
        for p in ports
        if (isinstance(p.state, str) and p.state != "ACTIVE")
        or (isinstance(p.phys_state, str) and p.phys_state != "LinkUp")
    ]
    if not down:
        return
    shown = first_few([f"{p.device}/{p.port} {p.state} ({p.phys_state})" for p in down], 8)
    yield finding(
        "rdma-port-down",
        f"{len(down)} of {len(ports)} RDMA port(s) are not up: {shown}.",
        ports=[
            {"device": p.device, "port": p.port, "state": str(p.state), "phys_state": str(p.phys_state)} for p in down
        ],
    )


@rule(
    Code(
        "rdma-port-slow",
        "warn",
        title="An RDMA port runs slower than its siblings",
        remedy=(
            "Replace the cable or optic with one of the NIC's rate (a 200G cable halves a 400G NIC) and check the "
            "switch port speed (`ibstat`: Rate)."
        ),
    ),
    needs=(PROBE,),
)
def rdma_port_slow(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """An active RDMA port slower than its active siblings of the same link layer (a 200G cable in a 400G NIC)."""
    ports = _rdma_ports(ctx.machine)
    if ports is None:
        return
    active = [p for p in ports if p.state == "ACTIVE" and isinstance(p.rate_gbps, float)]
    slow = []
    for layer in sorted({str(p.link_layer) for p in active}):
        same = [p for p in active if str(p.link_layer) == layer]
        best = max(p.rate_gbps for p in same)  # type: ignore[type-var]
        slow += [(p, best) for p in same if p.rate_gbps < best]  # type: ignore[operator]
    if not slow:
        return
    shown = first_few([f"{p.device}/{p.port} at {p.rate_gbps:g} Gb/s of {best:g}" for p, best in slow], 8)
    yield finding(
        "rdma-port-slow",
        f"{len(slow)} RDMA port(s) run slower than their siblings: {shown}.",
        ports=[
            {"device": p.device, "port": p.port, "rate_gbps": p.rate_gbps, "sibling_rate_gbps": best}
            for p, best in slow
        ],
    )


@rule(
    Code(
        "rdma-link-layer-mixed",
        "warn",
        title="Active RDMA ports mix InfiniBand and Ethernet (RoCE)",
        remedy=(
            "Give NCCL one fabric (NCCL_IB_HCA=mlx5_0,mlx5_1,...) or set the ports' link type alike (`mlxconfig ... "
            "LINK_TYPE_P1`)."
        ),
    ),
    needs=(PROBE,),
)
def rdma_link_layer_mixed(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Active RDMA ports of both InfiniBand and Ethernet (RoCE): NCCL's rings cross the slower fabric."""
    ports = _rdma_ports(ctx.machine)
    if ports is None:
        return
    layers: dict[str, list[str]] = {}
    for p in ports:
        if p.state == "ACTIVE" and isinstance(p.link_layer, str):
            layers.setdefault(p.link_layer, []).append(f"{p.device}/{p.port}")
    if len(layers) < 2:
        return
    yield finding(
        "rdma-link-layer-mixed",
        "Active RDMA ports use different link layers: "
        + "; ".join(f"{layer}: {first_few(ports, 6)}" for layer, ports in sorted(layers.items()))
        + ".",
        link_layers=layers,
    )


@rule(
    Code(
        "rdma-port-errors",
        "warn",
        title="RDMA ports count link-down events or symbol errors",
        remedy=(
            "A flapping or marginal link: check the cable, optic and switch port (`perfquery`, `mlxlink`) and replace "
            "what keeps counting."
        ),
    ),
    needs=(PROBE,),
)
def rdma_port_errors(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """RDMA ports whose link went down since boot or that count symbol errors (a marginal cable or optic)."""
    ports = _rdma_ports(ctx.machine)
    if ports is None:
        return
    bad = [
        p
        for p in ports
        if (isinstance(p.link_downed, int) and p.link_downed > 0)
        or (isinstance(p.symbol_error, int) and p.symbol_error > 0)
    ]
    if not bad:
        return
    shown = first_few(
        [f"{p.device}/{p.port} link_downed={p.link_downed} symbol_error={p.symbol_error}" for p in bad], 8
    )
    yield finding(
        "rdma-port-errors",
        f"{len(bad)} RDMA port(s) count link errors: {shown}.",
        ports=[
            {"device": p.device, "port": p.port, "link_downed": str(p.link_downed), "symbol_error": str(p.symbol_error)}
            for p in bad
        ],
    )


@rule(
    Code(
        "gpudirect-rdma-unavailable",
        "warn",
        title="RDMA ports are up but NICs cannot reach GPU memory directly (no nvidia_peermem, no DMA-BUF)",
        remedy=(
            "Load nvidia_peermem (`modprobe nvidia_peermem`, at boot via /etc/modules-load.d) or use NVIDIA's open "
            "kernel module on Linux 5.12+ for DMA-BUF; NCCL_DEBUG=INFO then says GPU Direct RDMA Enabled."
        ),
        remedy_actions=(
            "module-load",
            "module-load-at-boot",
        ),
    ),
    needs=(PROBE,),
)
def gpudirect_rdma_unavailable(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Active RDMA ports but no way for the NIC to reach GPU memory (no nvidia_peermem, no DMA-BUF).

    NCCL then copies every inter-node message through host memory. The evidence lists which GPU-NIC pairs
    are close enough (PIX/PXB) for NCCL to use GPUDirect RDMA once it is available.
    """
    machine = ctx.machine
    checks = _checks(machine)
    if checks is None or not isinstance(checks.rdma_ports, tuple):
        return
    if not any(p.state == "ACTIVE" for p in checks.rdma_ports):
        return
    close = sorted(
        f"{lk.a}-{_nic_label(machine, n.pci_bus_id)} {lk.level.name}"
        for n in machine.nics
        for lk in machine.links
        if lk.b == n.label and lk.a.startswith("GPU") and lk.level in (PathLevel.PIX, PathLevel.PXB)
    )
    if checks.gpudirect_rdma != "none":
        if isinstance(checks.gpudirect_rdma, (Unsupported, Failed)):
            yield Skipped("gpudirect-rdma-unavailable", f"GPUDirect RDMA support unknown: {checks.gpudirect_rdma}")
        return
    yield _with_commands(
        finding(
            "gpudirect-rdma-unavailable",
            f"RDMA ports are up but GPUDirect RDMA is not available ({checks.gpudirect_rdma_evidence}); "
            + (
                f"{len(close)} GPU-NIC pair(s) are close enough for it: {first_few(close, 6)}."
                if close
                else "no GPU shares a PCIe switch with a NIC either."
            ),
            close_pairs=close,
            evidence=str(checks.gpudirect_rdma_evidence),
        ),
        PEERMEM_COMMANDS,
    )


PEERMEM_COMMANDS = (
    remedy("module-load", module="nvidia_peermem"),
    remedy("module-load-at-boot", module="nvidia_peermem"),
)

KERNEL_SIGNATURE_MEANING = {
    "xid-79": "fell off the bus",
    "xid-74": "NVLink error",
    "fallen-off-bus": "fell off the bus",
    "nvlink-training-failed": "NVLink training failed",
}


@rule(
    Code(
        "kernel-gpu-error",
        "fail",
        title="The kernel log has GPU failure lines (Xid 79/74/144-150, fallen off the bus, NVLink training)",
        remedy=(
            "Drain the node: Xid 79 and fallen-off-bus need a reset or reseat; Xid 74 and 144-150 an NVLink check "
            "(`nvidia-smi nvlink -e`) and a GPU reset or reboot; repeated lines mean a hardware ticket."
        ),
    ),
    needs=(PROBE,),
)
def kernel_gpu_errors(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Xid 79/74, the Blackwell NVLink Xids 144-150, "fallen off the bus" and NVLink training failures in
    this boot's kernel log, each mapped to its GPU by bus id."""
    machine = ctx.machine
    checks = _checks(machine)
    if checks is None:
        return
    events = checks.kernel_events
    if isinstance(events, Failed):
        yield Skipped("kernel-gpu-error", f"kernel log not read: {events.reason}")
        return
    if not isinstance(events, tuple) or not events:
        return
    gpus = {g.pci_bus_id: g.label for g in machine.gpus if isinstance(g.pci_bus_id, str)}
    by_gpu: dict[str, list[str]] = {}
    for e in events:
        who = gpus.get(e.pci_bus_id, str(e.pci_bus_id)) if isinstance(e.pci_bus_id, str) else "unknown GPU"
        meaning = KERNEL_SIGNATURE_MEANING.get(e.signature, "NVLink error" if e.signature.startswith("xid-1") else "")
        label = f"{e.signature} ({meaning})" if meaning else e.signature
        if label not in by_gpu.setdefault(who, []):
            by_gpu[who].append(label)
    yield finding(
        "kernel-gpu-error",
        f"The kernel log has {len(events)} GPU error line(s) this boot: "
        + "; ".join(f"{who}: {', '.join(sigs)}" for who, sigs in sorted(by_gpu.items()))
        + ".",
        gpus=by_gpu,
        lines=[{"signature": e.signature, "pci_bus_id": str(e.pci_bus_id), "line": e.line} for e in events[:20]],
    )


# NCCL variables that switch a transport off or pin the path (warn), and tuning ones (info).
NCCL_PATH_VARS = ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NVLS_ENABLE",
                  "NCCL_ALGO", "NCCL_PROTO", "NCCL_NET", "NCCL_TOPO_FILE", "NCCL_NET_GDR_LEVEL",
                  "NCCL_P2P_DIRECT_DISABLE", "NCCL_NVB_DISABLE", "NCCL_PXN_DISABLE", "NCCL_MNNVL_ENABLE",
                  "NCCL_COLLNET_ENABLE", "NCCL_IGNORE_DISABLED_P2P", "NCCL_CUMEM_ENABLE")  # fmt: skip


@rule(
    Code(
        "nccl-env-override",
        "warn",
        title="NCCL settings in the environment or /etc/nccl.conf change the path NCCL takes",
        remedy=(
            "Unset leftovers (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL, NCCL_ALGO...) unless you set them on purpose; "
            "NCCL_DEBUG=INFO shows the transport chosen."
        ),
        remedy_actions=(
            "environment-find",
            "nccl-conf-delete",
        ),
    ),
    needs=(PROBE,),
)
def nccl_env_override(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """NCCL variables (in the environment or /etc/nccl.conf) that change the path NCCL takes.

    A leftover ``NCCL_P2P_DISABLE=1`` turns an NVLink box into a host-memory box.
    """
    from topoaudit.model.nccl import QUIET  # loaded only where a probe recorded the environment

    host = ctx.machine.host
    found: list[tuple[str, str, str]] = []
    for origin, lines in (("environment", host.environment), ("/etc/nccl.conf", host.nccl_conf)):
        if not isinstance(lines, tuple):
            continue
        for line in lines:
            name, _, value = line.partition("=")
            name = name.strip()
            if name.startswith("NCCL_") and name not in QUIET:
                found.append((name, value.strip(), origin))
    if not found:
        return
    pinned = [f for f in found if f[0] in NCCL_PATH_VARS]
    yield _with_commands(
        finding(
            "nccl-env-override",
            f"{len(found)} NCCL setting(s) change how NCCL picks its path: "
            + ", ".join(f"{n}={v} ({o})" for n, v, o in found[:8])
            + ".",
            severity=Severity.WARN if pinned else Severity.INFO,
            settings=[{"name": n, "value": v, "origin": o} for n, v, o in found],
        ),
        nccl_unset_commands(pinned),
    )


NCCL_CONF = "/etc/nccl.conf"


def nccl_unset_commands(settings: Iterable[tuple[str, str, str]]) -> list[RemedyCommand]:
    """Where each variable is set, the edit that removes it there.

    One ``sed`` (with a backup) for the /etc/nccl.conf lines. A variable of the environment topoaudit ran in is
    not the script's to change (``unset`` under ``sudo bash`` reaches no job): its command lists the profile and
    module files that set it.
    """
    commands, conf = [], []
    for name, value, origin in settings:
        if name not in NCCL_VARIABLES:
            continue
        if origin == NCCL_CONF:
            conf.append(name)
            continue
        commands.append(remedy("environment-find", variable=name, value=value))
    if conf:
        commands.append(remedy("nccl-conf-delete", variables=",".join(dict.fromkeys(conf)), file=NCCL_CONF))
    return commands


@rule(
    Code(
        "gpu-visibility-restricted",
        "warn",
        title="Only part of the box's GPUs are visible (container, cgroup or CUDA_VISIBLE_DEVICES)",
        remedy=(
            "Audit with every GPU visible (container flag --gpus all, unset CUDA_VISIBLE_DEVICES) to judge the whole "
            "box, or pass --expect-gpus for the slice you rented."
        ),
        remedy_actions=("environment-find",),
    ),
    needs=(PROBE,),
)
def gpu_visibility_restricted(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Only part of the box's GPUs are visible.

    NVML sees fewer NVIDIA GPUs than the PCI bus holds (a container or cgroup hides them), or
    CUDA_VISIBLE_DEVICES narrows what CUDA programs will use.
    """
    machine = ctx.machine
    host = machine.host
    visible, total = host.visible_gpu_count, host.total_gpu_count
    env = dict(line.partition("=")[::2] for line in host.environment) if isinstance(host.environment, tuple) else {}
    notes = []
    if isinstance(visible, int) and isinstance(total, int) and total > visible:
        notes.append(f"NVML sees {visible} of the {total} NVIDIA GPUs on the PCI bus")
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        listed = [x for x in cvd.split(",") if x.strip()]
        count = visible if isinstance(visible, int) else len(machine.gpus)
        if len(listed) < count:
            notes.append(f"CUDA_VISIBLE_DEVICES={cvd} exposes {len(listed)} of {count} GPUs to CUDA programs")
    if not notes:
        return
    commands = []
    if cvd is not None and len([x for x in cvd.split(",") if x.strip()]) < (
        visible if isinstance(visible, int) else len(machine.gpus)
    ):
        commands.append(remedy("environment-find", variable="CUDA_VISIBLE_DEVICES", value=cvd))
    yield _with_commands(
        finding(
            "gpu-visibility-restricted",
            "Only part of this box's GPUs are visible: " + "; ".join(notes) + ".",
            visible_gpus=visible if isinstance(visible, int) else str(visible),
            gpus_on_bus=total if isinstance(total, int) else str(total),
            cuda_visible_devices=cvd if cvd is not None else "unset",
            nvidia_visible_devices=env.get("NVIDIA_VISIBLE_DEVICES", "unset"),
        ),
        commands,
    )


@rule(
    Code(
        "probe-sources-disagree",
        "warn",
        title="NVML and nvidia-smi text disagree about the same link or GPU",
        remedy=(
            "Run the audit again; a disagreement that persists points at a flapping link or a driver bug: attach the "
            "snapshot (raw nvidia-smi texts are inside) to a ticket."
        ),
    ),
    needs=(PROBE,),
)
def probe_sources_disagree(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """NVML and ``nvidia-smi`` text answer the same question differently (link counts, link states).

    One of them is stale or a link is flapping; the audit trusts NVML.
    """
    disagreements = ctx.machine.host.disagreements
    if not isinstance(disagreements, tuple) or not disagreements:
        return
    shown = first_few([f"{d.subject}: NVML {d.nvml}, {d.other_source} {d.other}" for d in disagreements], 6, "; ")
    yield finding(
        "probe-sources-disagree",
        f"NVML and nvidia-smi disagree in {len(disagreements)} place(s): {shown}.",
        disagreements=[
            {"subject": d.subject, "nvml": d.nvml, "other": d.other, "other_source": d.other_source}
            for d in disagreements
        ],
    )
