"""Rules over facts only a live probe (or its snapshot) has.

NVLink port state and counters, fabric state, P2P status, PCIe link state, the NCCL environment, GPU
visibility, and NVML against ``nvidia-smi``.

On a machine from another source (a pasted ``topo -m``) these facts are simply not there and the rules
say nothing. On a probed machine, a fact the hardware does not support is not a fault: a rule that
needs it reports itself skipped (``--strict`` then exits 3), a rule that does not need it stays quiet.
"""

from __future__ import annotations

from collections.abc import Iterable

from topoaudit.model.finding import Finding, Severity, Skipped
from topoaudit.model.machine import Gpu, Machine, PathLevel
from topoaudit.model.topology import gpu_pair_links
from topoaudit.model.values import Failed, Unsupported, is_absent
from topoaudit.rules import RuleContext, finding, first_few

PROBE_SOURCES = ("nvml", "nvidia-smi-nvlink")  # a pasted `nvidia-smi nvlink -s/-e` fills the same port facts


def _probed(machine: Machine) -> bool:
    return machine.source in PROBE_SOURCES


def _live(machine: Machine) -> list[Gpu]:
    return [g for g in machine.gpus if not isinstance(g.status, Failed)]


def nvlink_link_down(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """NVLink ports down.

    Fewer active ports than the model has active by design (H100 NVL: 12 of 18), or, for a model the
    catalog does not know, fewer than the best GPU of the same box. A box where no GPU has an active port
    is left to ``nvlink-absent`` (no bridge, fabric not up, a VM).
    """
    machine = ctx.machine
    if not _probed(machine):
        return
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
    shown = "; ".join(
        f"GPU{i}: {a}/{expected} active, down: {','.join(map(str, down[:8]))}" for i, (a, down) in sorted(low.items())
    )
    yield finding(
        "nvlink-link-down",
        f"{len(low)} GPU(s) have NVLink ports down ({versus}): {shown}.",
        severity=severity,
        gpus={f"GPU{i}": {"active": a, "expected": expected, "down_links": down} for i, (a, down) in low.items()},
    )


_COUNTERS = ("replay_errors", "recovery_errors", "crc_flit_errors", "crc_data_errors")


def nvlink_errors(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Non-zero NVLink error counters (replay, recovery, CRC) since the driver loaded.

    A marginal link retrains or retransmits, often before it goes down.
    """
    if not _probed(ctx.machine):
        return
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


def fabric_not_ready(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """An NVSwitch system whose GPUs are not registered with the fabric.

    The state is not COMPLETED, or the registration status is not SUCCESS: CUDA then fails with "system
    not yet initialized".
    """
    machine = ctx.machine
    if not _probed(machine):
        return
    live = _live(machine)
    switched = bool(machine.nvswitches) or (ctx.spec is not None and ctx.spec.build == "nvswitch" and len(live) > 1)
    if not switched:
        return
    fm = machine.host.fabric_manager
    fm_note = " The fabric manager is not running." if fm == "not running" else ""
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
        yield finding(
            "fabric-not-ready",
            f"{len(bad)} of {len(live)} GPUs are not registered with the NVSwitch fabric ({'; '.join(states)})."
            + fm_note
            + " CUDA will fail with 'system not yet initialized'.",
            gpus=bad,
            fabric_manager=str(fm),
        )
    elif unknown:
        if fm == "not running":
            yield finding(
                "fabric-not-ready",
                "This NVSwitch system reports no fabric state (older GPU or driver) and the fabric manager is "
                "not running.",
                severity=Severity.WARN,
                fabric_manager=str(fm),
                gpus=unknown,
            )
        else:
            yield Skipped("fabric-not-ready", f"fabric state not available: {unknown[0]}")


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
    cause = ""
    if isinstance(host.acs_redirect_bridges, tuple) and host.acs_redirect_bridges:
        cause = f"ACS P2P redirect is on for bridge(s) {', '.join(host.acs_redirect_bridges[:4])}"
    elif host.iommu == "translating":
        cause = "the IOMMU translates DMA (not passthrough)"
    reasons = sorted({s for _, _, s, _ in bad})
    if reasons == ["gpu-not-supported"]:
        severity, cause = Severity.INFO, cause or "the GPU model does not support P2P (consumer cards, by design)"
    elif any(level == PathLevel.NVLINK for *_, level in bad):
        severity = Severity.FAIL
    else:
        severity = Severity.WARN
    shown = first_few([f"GPU{a}-GPU{b} {s} over {level.label}" for a, b, s, level in bad], 6)
    yield finding(
        "p2p-unavailable",
        f"P2P is unavailable on {len(bad)} GPU pair(s) whose path allows it: {shown}"
        + (f"; likely cause: {cause}." if cause else "."),
        severity=severity,
        pairs=[{"gpus": [a, b], "status": s, "path": level.name} for a, b, s, level in bad],
        likely_cause=cause or "unknown",
    )


def pcie_link_degraded(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """A GPU's PCIe link below its maximum.

    Narrower than max: warn (fail under load). Slower generation: normal power saving at idle (info), a
    fault under load (fail). A slot slower than the GPU model: warn.
    """
    if not _probed(ctx.machine):
        return
    spec = ctx.spec
    worst = Severity.INFO
    rows: list[dict[str, object]] = []
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
            problems.append(f"Gen{gen} of Gen{gen_max}" + ("" if loaded else " (idle: power saving)"))
            worst = max(worst, Severity.FAIL if loaded else Severity.INFO, key=lambda s: s.rank)
        if spec and spec.pcie_generation and gen_max < spec.pcie_generation:
            problems.append(f"slot max Gen{gen_max} below the GPU's Gen{spec.pcie_generation}")
            worst = max(worst, Severity.WARN, key=lambda s: s.rank)
        if problems:
            rows.append({"gpu": gpu.label, "problems": problems, "under_load": str(pcie.under_load)})
    if not rows:
        return
    yield finding(
        "pcie-link-degraded",
        f"{len(rows)} GPU PCIe link(s) below maximum: "
        + "; ".join(f"{r['gpu']} {', '.join(r['problems'])}" for r in rows[:8])  # type: ignore[arg-type]
        + ("" if worst != Severity.INFO else " (rerun under load to confirm: an idle GPU lowers its link speed)")
        + ".",
        severity=worst,
        gpus=rows,
    )


# NCCL variables that switch a transport off or pin the path (warn), and tuning ones (info).
NCCL_PATH_VARS = ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NVLS_ENABLE",
                  "NCCL_ALGO", "NCCL_PROTO", "NCCL_NET", "NCCL_TOPO_FILE", "NCCL_NET_GDR_LEVEL",
                  "NCCL_P2P_DIRECT_DISABLE", "NCCL_NVB_DISABLE", "NCCL_PXN_DISABLE", "NCCL_MNNVL_ENABLE",
                  "NCCL_COLLNET_ENABLE", "NCCL_IGNORE_DISABLED_P2P", "NCCL_CUMEM_ENABLE")  # fmt: skip
NCCL_QUIET_VARS = ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_TOPO_DUMP_FILE",
                   "NCCL_TOPO_DUMP_FILE_RANK", "NCCL_HOME", "NCCL_VERSION")  # fmt: skip


def nccl_env_override(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """NCCL variables (in the environment or /etc/nccl.conf) that change the path NCCL takes.

    A leftover ``NCCL_P2P_DISABLE=1`` turns an NVLink box into a host-memory box.
    """
    host = ctx.machine.host
    if not _probed(ctx.machine):
        return
    found: list[tuple[str, str, str]] = []
    for origin, lines in (("environment", host.environment), ("/etc/nccl.conf", host.nccl_conf)):
        if not isinstance(lines, tuple):
            continue
        for line in lines:
            name, _, value = line.partition("=")
            name = name.strip()
            if name.startswith("NCCL_") and name not in NCCL_QUIET_VARS:
                found.append((name, value.strip(), origin))
    if not found:
        return
    pinned = [f for f in found if f[0] in NCCL_PATH_VARS]
    yield finding(
        "nccl-env-override",
        f"{len(found)} NCCL setting(s) change how NCCL picks its path: "
        + ", ".join(f"{n}={v} ({o})" for n, v, o in found[:8])
        + ".",
        severity=Severity.WARN if pinned else Severity.INFO,
        settings=[{"name": n, "value": v, "origin": o} for n, v, o in found],
    )


def gpu_visibility_restricted(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Only part of the box's GPUs are visible.

    NVML sees fewer NVIDIA GPUs than the PCI bus holds (a container or cgroup hides them), or
    CUDA_VISIBLE_DEVICES narrows what CUDA programs will use.
    """
    machine = ctx.machine
    if not _probed(machine):
        return
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
    yield finding(
        "gpu-visibility-restricted",
        "Only part of this box's GPUs are visible: " + "; ".join(notes) + ".",
        visible_gpus=visible if isinstance(visible, int) else str(visible),
        gpus_on_bus=total if isinstance(total, int) else str(total),
        cuda_visible_devices=cvd if cvd is not None else "unset",
        nvidia_visible_devices=env.get("NVIDIA_VISIBLE_DEVICES", "unset"),
    )


def probe_sources_disagree(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """NVML and ``nvidia-smi`` text answer the same question differently (link counts, link states).

    One of them is stale or a link is flapping; the audit trusts NVML.
    """
    disagreements = ctx.machine.host.disagreements
    if not _probed(ctx.machine) or not isinstance(disagreements, tuple) or not disagreements:
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


RULES = (
    fabric_not_ready,
    nvlink_link_down,
    nvlink_errors,
    p2p_unavailable,
    pcie_link_degraded,
    nccl_env_override,
    gpu_visibility_restricted,
    probe_sources_disagree,
)
