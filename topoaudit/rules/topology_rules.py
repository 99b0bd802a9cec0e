"""Rules over the NVLink/PCIe topology: the split box, missing or degraded NVLink, NIC locality, TP fit.

Each rule's docstring says what it checks and why it matters for a tensor-parallel deployment; the rules run
in the order they are written here, which is the order their findings are shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding, Severity, Skipped
from topoaudit.model.identity import HardwareClass
from topoaudit.model.machine import Link, PathLevel
from topoaudit.model.network import NicSet
from topoaudit.model.report import ELIDED
from topoaudit.model.topology import (
    Domain,
    format_gpus,
    gpu_pair_links,
    gpus_with_unknown_pairs,
    is_unknown,
    nvlink_pairs,
    nvlink_peers,
    on_nvlink,
    pairs_among,
    unknown_pairs,
)
from topoaudit.model.values import Failed, Unsupported
from topoaudit.rules.base import RuleContext, as_sentence, finding, first_few
from topoaudit.rules.codes import Code, info
from topoaudit.rules.needs import NIC_PATHS, TOPOLOGY
from topoaudit.rules.registry import rule


@rule(
    Code(
        "gpu-lost",
        "fail",
        title="A GPU stopped answering during the probe (fell off the bus)",
        remedy=(
            "Check `nvidia-smi` and the kernel log (Xid 79); the GPU needs a reset or repair before any job can use all"
            " GPUs."
        ),
    ),
)
def gpu_lost(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Flag a GPU that fell off the bus while it was probed (NVML ``GPU_IS_LOST``).

    Its links and NVLink ports are unknown, and the box cannot run a job on all its GPUs until it is reset
    or repaired.
    """
    reasons = {g.index: g.status.reason for g in ctx.machine.gpus if isinstance(g.status, Failed)}
    if reasons:
        yield finding(
            "gpu-lost",
            f"GPU(s) {format_gpus(reasons)} stopped answering during the probe ({next(iter(reasons.values()))}); "
            "their links could not be read.",
            gpus=sorted(reasons),
            reasons={str(i): r for i, r in reasons.items()},
        )


@rule(
    Code(
        "gpus-short-of-node",
        "warn",
        title="Fewer GPUs than any slice of the model's baseboard (7 of 8): a GPU may be missing",
        remedy=(
            "Compare `nvidia-smi -L` with what was rented; check the kernel log for Xid 79 (fallen off the bus) and "
            "`lspci -d 10de:` for a GPU the driver did not claim; pass --expect-gpus N to make it a failure."
        ),
    ),
)
def gpus_short_of_node(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Flag a GPU count that no slice of the model's baseboard has: 7 of an 8-GPU HGX means one went missing.

    Providers rent 1, 2 or 4 GPUs of a baseboard, so fewer GPUs alone is no fault; a count that does not
    divide the baseboard's (7, 6, 5, 3 of 8) is how a GPU that fell off the bus or was never passed through
    looks when the input only lists the GPUs it saw.
    """
    spec, count = ctx.design, len(ctx.machine.gpus)
    if sorted(g.index for g in ctx.machine.gpus) != list(range(count)) or _elided(ctx):
        return  # an excerpt ("GPU 0, GPU 1, ..., GPU 7"): the driver numbers every GPU it sees from 0
    if ctx.machine.source == "nccl-log":
        return  # a log names the GPUs whose lines it kept, not every GPU of the box
    if spec is None or not spec.one_domain or spec.domain_size > spec.node_gpus:
        return  # unknown model, bridged/PCIe cards, or NVL rack trays: no baseboard to count against
    if 0 < count < spec.node_gpus and spec.node_gpus % count:
        slices = [n for n in range(1, spec.node_gpus) if spec.node_gpus % n == 0]
        yield finding(
            "gpus-short-of-node",
            f"{count} GPUs of {spec.name}, which ships {spec.node_gpus} to a baseboard; a slice of one is "
            f"{', '.join(map(str, slices[:-1]))} or {slices[-1]} GPUs, so {spec.node_gpus - count} GPU(s) may be "
            "missing (fallen off the bus, or not passed through to this VM).",
            gpus=count,
            node_gpus=spec.node_gpus,
        )


LINK_REMEDIES = {
    "bridge": (
        "A bridge link did not train or a bridge is unseated: run `nvidia-smi nvlink -s` to see which links are down, "
        "reseat or replace the NVLink bridge of the GPUs named, then reboot."
    ),
    "nvswitch": (
        "These GPUs sit on an NVSwitch baseboard, not on NVLink bridges: run `nvidia-smi nvlink -s` and `nvidia-smi "
        "-q | grep -A4 Fabric`, make sure the fabric manager is running (`systemctl status nvidia-fabricmanager`), and "
        "reboot to retrain a link that dropped; links that stay down mean the GPU tray or the baseboard needs "
        "service: ask the provider."
    ),
    "mesh": (
        "These GPUs are linked on an SXM baseboard, not by NVLink bridges: run `nvidia-smi nvlink -s` and reboot to "
        "retrain a link that dropped; links that stay down mean the GPU or the baseboard needs service: ask the "
        "provider."
    ),
    "tray": (
        "These GPUs sit on a Grace tray of an NVLink rack: run `nvidia-smi nvlink -s` and `nvidia-smi -q | grep -A4 "
        "Fabric` on the tray, check its NVLink cartridge and the rack's fabric (NMX/NVLSM), and drain the tray for "
        "service if links stay down."
    ),
}
"""What to do about an NVLink that is down, by how the box is built: only PCIe cards have a bridge to reseat."""


def board_kind(ctx: RuleContext) -> str:
    """Say how the box's NVLinks are built.

    "bridge", "nvswitch", "mesh" (an SXM board of direct links), "tray" (an NVL rack's), or "" when nothing says
    (a 4-GPU mesh may be an SXM board or four bridged cards).
    """
    design = ctx.design
    if design is not None:
        if design.layout == "nvl72":
            return "tray"
        return {"bridge": "bridge", "nvswitch": "nvswitch", "mesh": "mesh"}.get(design.build, "")
    builds = {d.build for d in ctx.domains if d.size >= 2}
    if "nvswitch" in builds or ctx.machine.nvswitches:
        return "nvswitch"
    if builds == {"bridged-pair"}:
        return "bridge"
    return ""


def link_remedy(ctx: RuleContext) -> str:
    """Return the remedy for NVLinks that are down, naming what this box has: a bridge, a baseboard, a tray."""
    return LINK_REMEDIES.get(board_kind(ctx)) or info("nvlink-degraded").remedy


def _elided(ctx: RuleContext) -> bool:
    """Whether the paste says it leaves lines out ("......" after GPU 2): it shows some GPUs, not how many there are."""
    return any(i.message.startswith(ELIDED) for i in ctx.issues)


@rule(
    Code(
        "gpu-model-contradicts-links",
        "warn",
        title="The GPU model named (by --gpu-model or the input) cannot have the links the input shows",
        remedy=(
            "Check which GPUs the box holds (`nvidia-smi -L`) and that the paste is of that box; until then the box is "
            "judged as its links show, not as the model named."
        ),
    ),
    needs=(TOPOLOGY,),
)
def model_contradicts_links(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Flag a model whose GPUs cannot have the links the input shows.

    NVLink on a PCIe-only model, or more links on one pair than the model's GPUs have (an RTX 3090, four links,
    with NV18 to seven peers): either the model is misnamed or the paste is of another box. The links are evidence
    and the name a claim, so the box is judged as its links show (the class they imply), and this finding says
    so. Fewer links than the model's are a fault of the box (``nvlink-degraded``), not a contradiction.
    """
    known = ctx.identified
    if known.contradiction:
        yield finding(
            "gpu-model-contradicts-links",
            as_sentence(known.contradiction),
            gpu_model=known.model,
            named_by=known.evidence,
            hardware_class=known.hardware_class,
        )


@rule(
    Code(
        "nvlink-split-domain",
        "warn",
        title="GPUs form several NVLink domains of 2+ GPUs",
        remedy=(
            "Keep each tensor-parallel group inside one domain (see placements); if the box was sold as one NVSwitch "
            "domain, open a ticket with this report attached."
        ),
    ),
    needs=(TOPOLOGY,),
)
def split_domain(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Several NVLink domains of 2+ GPUs (8 = 4+4, 2+2+2+2): TP beyond one domain runs over PCIe/SYS.

    Severity: ``fail`` when the GPU model ships as one NVSwitch domain this large (the box is broken or
    not what was sold); ``info`` when the model is bridged by design and the domains are as large as its
    bridges allow; ``warn`` otherwise (model unknown).
    """
    multi = [d for d in ctx.domains if d.size >= 2]
    if len(multi) < 2:
        return
    between = _unknown_between(ctx, multi)
    if between:
        yield Skipped(
            "nvlink-split-domain",
            f"the source does not describe {between} GPU pair(s) between the NVLink domains it shows "
            f"({' '.join(format_gpus(d.gpus) for d in multi)}): they may be one domain",
        )
        return
    shape = " + ".join(str(d.size) for d in multi)
    groups = " ".join(format_gpus(d.gpus) for d in multi)
    total = len(ctx.machine.gpus)
    severity, why = _split_severity(ctx, multi, total)
    largest = max(d.size for d in multi)
    split = finding(
        "nvlink-split-domain",
        f"{total} GPUs form {len(multi)} NVLink domains ({shape}): {groups}; tensor parallelism beyond "
        f"{largest} GPUs runs over the {_crossing(ctx, multi)}. {as_sentence(why)}",
        severity=severity,
        domains=[list(d.gpus) for d in multi],
        largest_domain=largest,
        crossing=_crossing(ctx, multi),
        reason=why,
    )
    # half a fabric that should be one: what to repair, not how to live with it
    yield replace(split, remedy=link_remedy(ctx)) if severity == Severity.FAIL and board_kind(ctx) else split


def _split_severity(ctx: RuleContext, multi: list[Domain], total: int) -> tuple[Severity, str]:
    """How bad a split is for the model or the class the links show.

    Fail for one-domain builds, info when bridges do it by design.
    """
    spec = ctx.design
    if spec is None:
        return Severity.WARN, "GPU model unknown; cannot tell whether this is by design"
    if spec.one_domain and total <= max(spec.domain_size, spec.node_gpus):
        fabric = "NVSwitch fabric" if spec.build == "nvswitch" else "NVLink mesh"
        if spec is ctx.hardware:
            return Severity.FAIL, (
                f"{ctx.identified.class_evidence} shows {spec.name}, whose {min(total, spec.domain_size)} GPUs share "
                f"one {fabric}: part of the fabric is unreachable"
            )
        return Severity.FAIL, f"{spec.name} ships with all {min(total, spec.domain_size)} GPUs on one {fabric}"
    if spec.build == "bridge":
        sizes = sorted({d.size for d in multi})
        allowed = spec.by_design_domains
        unpaired = [d.gpus[0] for d in ctx.domains if d.size == 1]
        if all(size in allowed for size in sizes) and not unpaired:
            return Severity.INFO, (
                f"by design for {spec.name} (NVLink bridges join {' or '.join(map(str, allowed))} GPUs)"
            )
        if unpaired:
            return Severity.WARN, (
                f"{spec.name} bridges join {' or '.join(map(str, allowed))} GPUs, but GPUs "
                f"{format_gpus(unpaired)} have no bridge: a bridge is missing or unseated"
            )
        return Severity.WARN, (
            f"{spec.name} bridges join {' or '.join(map(str, allowed))} GPUs, not {'/'.join(map(str, sizes))}: "
            "a bridge link may be down"
        )
    if spec.build == "superchip":
        return Severity.WARN, f"{spec.name} node layouts vary; compare with the system's documentation"
    return Severity.WARN, f"{spec.name} normally forms domains of {spec.domain_size}"


def _unknown_between(ctx: RuleContext, domains: list[Domain]) -> int:
    """How many GPU pairs across these domains the source leaves undescribed (a ``topo -m`` cut short)."""
    unknown = unknown_pairs(ctx.machine)
    if not unknown:
        return 0
    domain_of = {g: d.id for d in domains for g in d.gpus}
    return sum(1 for a, b in unknown if a in domain_of and b in domain_of and domain_of[a] != domain_of[b])


def _crossing(ctx: RuleContext, domains: list[Domain]) -> str:
    """Return the fastest path between two domains (what a cross-domain ring must take at best)."""
    first, second = domains[0].gpus, domains[1].gpus
    pairs = gpu_pair_links(ctx.machine)
    levels = (pairs[(min(a, b), max(a, b))].level for a in first for b in second if (min(a, b), max(a, b)) in pairs)
    return min(levels, default=PathLevel.UNKNOWN).label


@rule(
    Code(
        "nvlink-absent",
        "warn",
        title="Several GPUs and no NVLink at all",
        remedy=(
            "Collectives run over PCIe/host memory; size tensor parallelism accordingly or ask for an NVLink/NVSwitch "
            "instance type."
        ),
    ),
)
def nvlink_absent(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Several GPUs and not one NVLink: every collective runs over PCIe or host memory."""
    if len(ctx.machine.gpus) < 2 or any(d.size >= 2 for d in ctx.domains):
        return
    if not gpu_pair_links(ctx.machine):  # e.g. an nccl-tests log: GPUs named, links never described
        yield Skipped("nvlink-absent", f"the {ctx.machine.source} source describes no GPU-to-GPU links")
        return
    described = [lk for lk in gpu_pair_links(ctx.machine).values() if not is_unknown(lk)]
    levels = {lk.level for lk in described}
    if levels <= {PathLevel.UNKNOWN}:  # e.g. another vendor's links ('HT'): present, but not readable as paths
        codes = sorted({lk.code for lk in gpu_pair_links(ctx.machine).values()})
        yield Skipped("nvlink-absent", f"no GPU pair's path could be read (cells {', '.join(codes[:3])})")
        return
    worst = max(levels, default=PathLevel.UNKNOWN)
    unknown = len(unknown_pairs(ctx.machine))
    shown = f" of the {len(described)} the paste shows ({unknown} pair(s) unknown)" if unknown else ""
    severity, why = nvlink_absent_severity(ctx)
    beyond = [lk for lk in described if PathLevel.PXB < lk.level < PathLevel.UNKNOWN]
    staged = (
        f" {len(beyond)} of the {len(described)} pairs are past a PCIe switch ({_levels(beyond)}), where NCCL uses "
        "no peer access unless NCCL_P2P_LEVEL allows it (its default stops at PXB, src/graph/paths.cc; on an AMD "
        "host with two GPUs it goes to SYS): those pairs exchange through host memory."
        if beyond
        else ""
    )
    yield finding(
        "nvlink-absent",
        f"{len(ctx.machine.gpus)} GPUs and no NVLink between any pair{shown}; slowest GPU path: {worst.label}. "
        + as_sentence(why)
        + staged,
        severity=severity,
        gpus=[g.index for g in ctx.machine.gpus],
        slowest_path=worst.name,
        reason=why,
        **({"causes": ["p2p-unsupported"], "pairs_without_peer_access": len(beyond)} if beyond else {}),
    )


def _levels(links: list[Link]) -> str:
    """Name the path levels of ``links`` as topo -m does ("PHB, SYS")."""
    return ", ".join(level.name for level in sorted({lk.level for lk in links}))


def nvlink_absent_severity(ctx: RuleContext) -> tuple[Severity, str]:
    """How much GPUs without any NVLink matter, and why.

    By design on PCIe cards, a fault on an NVLink model, a warning when nothing names the model (the layout fits
    both).
    """
    spec = ctx.spec
    if spec and spec.build == "pcie":
        return Severity.INFO, f"expected: {spec.name} has no NVLink"
    if spec and spec.build == "bridge":
        return Severity.WARN, f"{spec.name} NVLink bridges are optional; none is installed or active"
    if spec and spec.build == "superchip":
        return Severity.WARN, f"{spec.name} node layouts vary; some link superchips only over the network"
    if spec:
        return Severity.FAIL, f"{spec.name} should have NVLink: links down, fabric not up, or a VM hides it"
    if ctx.design is not None and ctx.design.build == "pcie":
        return (
            Severity.INFO,
            (
                f"judged as {ctx.design.name}, shown by {ctx.identified.class_evidence}; if these GPUs have NVLink, "
                "name the model (`--gpu-model`) to judge its links"
            ),
        )
    # PCIe cards have none by design, NVLink boxes have lost theirs: the model decides, and nothing names it
    return (
        Severity.WARN,
        (
            "tensor-parallel collectives across these GPUs run over PCIe. The layout fits PCIe cards (no NVLink "
            "by design) as well as an NVLink baseboard whose every link is down, and nothing names the model: "
            "name it (`--gpu-model`) to tell which"
        ),
    )


@rule(
    Code(
        "nvlink-degraded",
        "fail",
        title="A GPU or GPU pair has fewer NVLinks than its siblings, or none",
        remedy=(
            "Run `nvidia-smi nvlink -s` to see which links are down; on PCIe cards reseat the NVLink bridge, on an "
            "SXM/HGX baseboard (no bridge) ask the provider to service the GPU tray or the baseboard; a reboot may "
            "retrain a link that dropped."
        ),
    ),
    needs=(TOPOLOGY,),
)
def missing_nvlink(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """GPUs with no NVLink beside GPUs that have it, and pairs without NVLink inside an NVSwitch domain.

    The box's own GPUs are the expectation, so this holds whether or not the GPU model is known: when most
    GPUs share one domain, a GPU with no NVLink at all lost its links (``fail``); when only part of the box
    is on NVLink the GPUs left out are named (``warn``; ``fail`` when the catalog says the model links
    every GPU). Behind NVSwitches every pair is linked, so a pair that is not means a degraded fabric.
    """
    remedy = link_remedy(ctx)
    for found in (*_gpus_left_out(ctx), *_pairs_missing_behind_switches(ctx)):
        by_design = found.evidence.get("causes") == ["nvlink-split"]  # nothing to repair: its remedy is a placement
        yield found if by_design else replace(found, remedy=remedy)


def _gpus_left_out(ctx: RuleContext) -> Iterable[Finding]:
    linked = [d for d in ctx.domains if d.size >= 2]
    lost = {g.index for g in ctx.machine.gpus if isinstance(g.status, Failed)}  # those are gpu-lost's
    undescribed = gpus_with_unknown_pairs(ctx.machine)  # a GPU whose peers are not all shown may be linked to them
    alone = sorted(
        d.gpus[0]
        for d in ctx.domains
        if d.size == 1 and d.build != "unknown" and d.gpus[0] not in lost and d.gpus[0] not in undescribed
    )
    if not linked or not alone:
        return
    main = linked[0]  # domains come largest first
    alone = [g for g in alone if _same_kind(ctx, g, main)]
    if not alone:
        return
    total = len(ctx.machine.gpus)
    siblings = _modal_links(ctx, main)
    spec = ctx.design
    if _odd_one_beside_bridged_pairs(ctx, linked, alone, total):
        pairs = " ".join(format_gpus(d.gpus) for d in linked)
        why = (
            f"bridges join GPUs two by two ({pairs}), and {total} GPUs leave one without a partner: by design, "
            f"tensor parallelism over all {total} crosses PCIe"
        )
        yield Finding(
            "nvlink-degraded",
            Severity.WARN,
            f"GPU{alone[0]} has no NVLink: {why}.",
            {
                "gpus": [{"gpu": alone[0], "nvlinks": 0}],
                "expected_nvlinks": 0,
                "reason": why,
                "causes": ["nvlink-split"],
            },
            f"Keep tensor-parallel groups inside a bridged pair ({pairs}); GPU{alone[0]} serves a replica of its own.",
        )
        return
    majority = main.size >= 3 and main.size * 2 > total and main.build != "bridged-pair"
    catalog = spec is not None and spec.one_domain and total <= spec.domain_size
    if majority:
        severity: Severity | None = Severity.FAIL
        why = f"the other {main.size} GPUs share NVLink domain {format_gpus(main.gpus)} at NV{siblings}"
    elif catalog and spec is not None:
        unverified = "\u26a0" in spec.source_of("nvlinks_per_gpu")
        severity = Severity.WARN if unverified else Severity.FAIL
        why = f"{spec.name} links all {min(total, spec.domain_size)} GPUs, {spec.nvlinks_per_gpu} links each" + (
            "; the catalog's link count is unverified" if unverified else ""
        )
        if spec is ctx.hardware:  # no model named: say what shows the class
            why = (
                f"{ctx.identified.class_evidence} shows {spec.name}, which links all "
                f"{min(total, spec.domain_size)} GPUs, {spec.nvlinks_per_gpu} links each"
            )
    else:
        severity = Severity.WARN
        why = (
            f"only GPUs {' '.join(format_gpus(d.gpus) for d in linked)} are on NVLink: a bridge or link may be "
            "missing, or the box mixes GPU kinds"
        )
    expected = spec.nvlinks_per_gpu if catalog and spec is not None and spec.nvlinks_per_gpu else siblings
    yield finding(
        "nvlink-degraded",
        f"{len(alone)} of {total} GPUs have no NVLink at all: GPUs {format_gpus(alone)}; {why}.",
        severity=severity,
        gpus=[{"gpu": g, "nvlinks": 0} for g in alone],
        expected_nvlinks=expected,
        reason=why,
    )


def _odd_one_beside_bridged_pairs(ctx: RuleContext, linked: list[Domain], alone: list[int], total: int) -> bool:
    """One GPU without NVLink beside bridged pairs on a box of an odd number of GPUs: no bridge was left out."""
    spec = ctx.design
    bridged = all(d.build == "bridged-pair" for d in linked)
    return bridged and total % 2 == 1 and len(alone) == 1 and (spec is None or spec.build == "bridge")


def _same_kind(ctx: RuleContext, gpu: int, domain: Domain) -> bool:
    """Whether ``gpu`` could be a sibling of the domain's GPUs.

    True unless the source names the models and they differ (a display GPU beside four SXM GPUs, as on a
    DGX Station, is not missing links).
    """
    names = {g.index: g.name for g in ctx.machine.gpus}
    own, theirs = names.get(gpu), {names.get(g) for g in domain.gpus}
    return not (isinstance(own, str) and all(isinstance(n, str) for n in theirs) and own not in theirs)


def _pairs_missing_behind_switches(ctx: RuleContext) -> Iterable[Finding]:
    for domain in ctx.domains:
        if domain.build != "nvswitch" or domain.all_pairs:
            continue
        missing = sorted(
            (a, b, link) for (a, b), link in pairs_among(ctx.machine, domain.gpus) if _known_without_nvlink(link)
        )
        if not missing:
            continue
        shown = first_few([f"GPU{a}-GPU{b} {link.code}" for a, b, link in missing], 6)
        yield finding(
            "nvlink-degraded",
            f"NVLink domain {format_gpus(domain.gpus)} sits behind NVSwitches, yet {len(missing)} GPU pair(s) in it "
            f"have no NVLink: {shown}; every pair on a switched fabric is linked, so the fabric is degraded.",
            severity=Severity.FAIL,
            pairs=[{"gpus": [a, b], "nvlinks": 0, "path": link.code} for a, b, link in missing],
            expected_nvlinks=_modal_links(ctx, domain),
            domain=list(domain.gpus),
        )


def _known_without_nvlink(link: Link) -> bool:
    """Whether the source says this pair has no NVLink.

    A PCIe/SMP path or a zero link count says so; a cell that could not be read at all does not.
    """
    return not on_nvlink(link) and (link.level != PathLevel.UNKNOWN or link.code.upper().startswith("NV"))


def _modal_links(ctx: RuleContext, domain: Domain) -> int:
    """Return the NVLink count most pairs of ``domain`` show: what its healthy pairs carry."""
    members = set(domain.gpus)
    return _healthy_count(n for a, b, n in nvlink_pairs(ctx.machine) if a in members and b in members)


def _healthy_count(counts: Iterable[int]) -> int:
    """Return the link count most pairs show, the higher one on a tie (0 for none).

    A link that fails to train lowers a pair's count and nothing raises one, so between two bridged pairs
    at NV12 and NV6 the NV12 pair shows what a healthy bridge carries, whichever pair comes first.
    """
    tally = Counter(counts)
    return max(tally, key=lambda n: (tally[n], n), default=0)


@rule("nvlink-degraded", needs=(TOPOLOGY,))
def degraded(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Flag a GPU pair with fewer NVLinks than its siblings: a link is down or a bridge is badly seated.

    Compared within a fully linked domain (NV16 among NV18), across the bridged pairs of one box (NV6
    among NV12), against the catalog's links per GPU (per pair behind NVSwitches, summed over the peers on
    meshes and bridges), and flags odd bridge widths (NV3 where bridges come in even link counts).
    """
    remedy = link_remedy(ctx)
    for found in _degraded_pairs(ctx):
        yield replace(found, remedy=remedy)


def _degraded_pairs(ctx: RuleContext) -> Iterable[Finding]:
    pairs = list(nvlink_pairs(ctx.machine))
    domain_of = {g: d for d in ctx.domains for g in d.gpus}
    reported: set[tuple[int, int]] = set()
    # Fully linked domains: the modal count is what healthy pairs show.
    for domain in ctx.domains:
        if domain.build not in ("nvswitch", "mesh") or domain.min_links == domain.max_links:
            continue
        if domain.build == "mesh" and (_same_links_per_gpu(ctx, domain) or _cube_mesh_quad(ctx, domain)):
            continue
        inside = [(a, b, n) for a, b, n in pairs if domain_of.get(a) is domain and domain_of.get(b) is domain]
        expected = _healthy_count(n for _, _, n in inside)
        low = [(a, b, n) for a, b, n in inside if n < expected]
        reported.update((a, b) for a, b, _ in low)
        if low:
            yield _degraded_finding(low, expected, f"its siblings in domain {format_gpus(domain.gpus)}")
    # Bridged pairs across the box.
    bridged = [d for d in ctx.domains if d.build == "bridged-pair"]
    if len(bridged) >= 2:
        expected = _healthy_count(d.max_links for d in bridged)
        low = [(d.gpus[0], d.gpus[1], d.max_links) for d in bridged if d.max_links < expected]
        if low:
            reported.update((a, b) for a, b, _ in low)
            yield _degraded_finding(low, expected, "the other bridged pairs in this box")
    yield from _degraded_against_catalog(ctx, pairs, reported)
    # Odd bridge widths: NVLink bridges carry an even number of links; NV3 means a link did not train.
    for d in bridged:
        a, b = d.gpus
        if d.max_links >= 3 and d.max_links % 2 == 1 and (a, b) not in reported:
            yield _degraded_finding(
                [(a, b, d.max_links)],
                d.max_links + 1,
                "a full bridge",
                severity=Severity.WARN,
                note="bridges carry an even number of links",
            )


def _cube_mesh_quad(ctx: RuleContext, domain: Domain) -> bool:
    """Whether the box shows only one quad of a V100 hybrid cube mesh (a DGX-1 seen from a container).

    Four GPUs, every pair linked, three pairs NV2 forming a path and the other three NV1: the quad's design
    (NVIDIA's DGX-1 V100 topology: GPU0 NV1 NV1 NV2 to GPUs 1-3, NV2 to GPU4). Each GPU's remaining links go to
    the other quad, which the view does not show. A quad that lost links breaks the pattern: a missing pair, an
    NV0, or NV2 pairs that do not chain.
    """
    if domain.size != 4 or len(ctx.machine.gpus) != 4 or gpus_with_unknown_pairs(ctx.machine):
        return False
    inside = {(a, b): n for a, b, n in nvlink_pairs(ctx.machine) if a in domain.gpus and b in domain.gpus}
    if len(inside) != 6 or sorted(inside.values()) != [1, 1, 1, 2, 2, 2]:
        return False
    doubled = Counter(g for pair, n in inside.items() if n == 2 for g in pair)
    return sorted(doubled[g] for g in domain.gpus) == [1, 1, 2, 2]  # the three NV2 pairs chain all four GPUs


def _same_links_per_gpu(ctx: RuleContext, domain: Domain) -> bool:
    """Whether an excerpt of a direct-link mesh shows the same NVLinks in all on every GPU whose peers it shows.

    A mesh may mix pair widths by design (a DGX-1's GPU0: NV1, NV1, NV2, NV2 to four peers, six links in all),
    and in an excerpt the pairs it leaves out are not there to compare with: a link that fails lowers the totals
    of both its GPUs. A whole matrix is compared pair by pair (two failed links may leave every total equal).
    """
    undescribed = gpus_with_unknown_pairs(ctx.machine)
    if not undescribed:
        return False
    peers = nvlink_peers(ctx.machine)  # a GPU's NVLink peers all sit in its domain
    return len({sum(peers[g].values()) for g in domain.gpus if g not in undescribed}) <= 1


def _degraded_against_catalog(
    ctx: RuleContext, pairs: list[tuple[int, int, int]], reported: set[tuple[int, int]]
) -> Iterable[Finding]:
    """Pairs and GPUs below the catalog's links per GPU.

    Per pair on NVSwitch domains (NV18 = the GPU's shared links), per GPU on direct-link domains (a mesh,
    a cube-mesh, bridges: the links to its peers add up to the GPU's count). GPUs left with no NVLink at
    all are :func:`missing_nvlink`'s.
    """
    spec = ctx.design
    if spec is None or not spec.nvlinks_per_gpu:
        return
    want = spec.nvlinks_per_gpu
    unverified = "\u26a0" in spec.source_of("nvlinks_per_gpu")
    soft = Severity.WARN if unverified else None
    note = "the catalog's link count is unverified" if unverified else ""
    versus = f"{spec.name}'s {want}" if spec is ctx.spec else f"the {want} their siblings show on {spec.name}"
    domain_of = {g: d for d in ctx.domains for g in d.gpus}
    on_switch = {g for g, d in domain_of.items() if d.build == "nvswitch"}
    switched = [(a, b, n) for a, b, n in pairs if a in on_switch and (a, b) not in reported]
    low = [(a, b, n) for a, b, n in switched if n < want]
    if low:
        reported.update((a, b) for a, b, _ in low)
        yield _degraded_finding(low, want, f"{versus} links", severity=soft, note=note)
    seen = {g for pair in reported for g in pair}
    totals: Counter[int] = Counter()
    for a, b, n in pairs:
        if a not in on_switch:
            totals[a] += n
            totals[b] += n
    undescribed = gpus_with_unknown_pairs(ctx.machine)  # their peers are not all shown: their total is not known
    undescribed |= {g for d in ctx.domains if d.build == "mesh" and _cube_mesh_quad(ctx, d) for g in d.gpus}
    short = sorted((g, n) for g, n in totals.items() if n < want and g not in seen and g not in undescribed)
    if short:
        shown = first_few([f"GPU{g} {n}" for g, n in short], 8)
        yield finding(
            "nvlink-degraded",
            f"{len(short)} GPU(s) have fewer NVLinks to their peers than {versus}: {shown}"
            + (f"; {note}." if note else "."),
            severity=soft,
            gpus=[{"gpu": g, "nvlinks": n} for g, n in short],
            expected_nvlinks=want,
        )
        weak = {g for g, _ in short}
        reported.update((a, b) for a, b, _ in pairs if a in weak or b in weak)


def _degraded_finding(
    low: list[tuple[int, int, int]], expected: int, versus: str, severity: Severity | None = None, note: str = ""
) -> Finding:
    """One nvlink-degraded finding over ``low`` pairs; ``note`` qualifies the comparison, after the pairs."""
    shown = first_few([f"GPU{a}-GPU{b} NV{n}" for a, b, n in low], 6)
    return finding(
        "nvlink-degraded",
        f"{len(low)} GPU pair(s) have fewer NVLinks than {versus} (NV{expected}): {shown}"
        + (f"; {note}." if note else "."),
        severity=severity,
        pairs=[{"gpus": [a, b], "nvlinks": n} for a, b, n in low],
        expected_nvlinks=expected,
    )


@rule(
    Code(
        "nvlink-partial-mesh",
        "warn",
        title="An NVLink domain where some GPU pairs have no direct link",
        remedy=(
            "Rings still run on NVLink, but pairwise traffic between unlinked GPUs crosses PCIe/SYS; prefer TP groups "
            "that are fully linked (see placements)."
        ),
    ),
    needs=(TOPOLOGY,),
)
def partial_mesh(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Flag a domain where some pairs have no direct NVLink (DGX-1 hybrid cube-mesh).

    All-to-all traffic and some TP groups cross PCIe/SYS even though rings stay on NVLink.
    """
    for domain in ctx.domains:
        if domain.build != "partial-mesh":
            continue
        missing = sorted(
            pair for pair, link in pairs_among(ctx.machine, domain.gpus) if not on_nvlink(link) and not is_unknown(link)
        )
        if not missing:  # every pair not shown linked is one the source does not describe
            yield Skipped(
                "nvlink-partial-mesh",
                f"the source does not describe {domain.unknown_pairs} GPU pair(s) of NVLink domain "
                f"{format_gpus(domain.gpus)}; every pair it shows is linked",
            )
            continue
        by_design = ctx.design is not None and ctx.design.layout == "hybrid-cube-mesh"
        yield finding(
            "nvlink-partial-mesh",
            f"NVLink domain {format_gpus(domain.gpus)} is not fully connected: {len(missing)} GPU pairs have no direct "
            f"link (e.g. GPU{missing[0][0]}-GPU{missing[0][1]})"
            + (f"; {domain.unknown_pairs} more pair(s) are not in the paste" if domain.unknown_pairs else "")
            + (f"; by design for {ctx.design.name}." if by_design and ctx.design else "."),
            severity=Severity.INFO if by_design else None,
            domain=list(domain.gpus),
            pairs_without_nvlink=[list(p) for p in missing],
        )


@rule(
    Code(
        "tp-group-crosses-domain",
        "fail",
        title="The requested tensor-parallel size cannot stay inside one NVLink domain",
        remedy="Use a smaller TP with more replicas, or TP inside a domain and pipeline parallelism across.",
    ),
)
def tp_fit(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """Flag a requested tensor-parallel size that cannot stay inside one NVLink domain.

    Every layer's all-reduce would then run over the slowest hop between domains. It warns instead on a box known to
    be PCIe cards (its model, or a layout no NVLink board has), where no placement does better, and informs when the
    group spans whole boxes whose GPUs share one domain.
    """
    if isinstance(ctx.options.tp, int) and not ctx.placements:
        yield Skipped("tp-group-crosses-domain", f"the {ctx.machine.source} source describes no GPU-to-GPU links")
    for placement in ctx.placements:
        if placement.fits:
            continue
        if placement.unknown_pairs:
            yield Skipped(
                "tp-group-crosses-domain",
                f"TP={placement.tp}: the source does not describe {placement.unknown_pairs} GPU pair(s) of the NVLink "
                f"domains large enough, so whether {placement.tp} GPUs are linked pair by pair is not known",
            )
            continue
        largest = max((d.size for d in ctx.domains), default=0)
        why = (
            f"the largest NVLink domain has {largest} GPU(s)"
            if largest < placement.tp
            else f"no {placement.tp} GPUs of the {largest}-GPU NVLink domain are linked pair by pair"
        )
        severity, scope = _tp_scope(placement.tp, len(ctx.machine.gpus), largest, ctx.design)
        yield finding(
            "tp-group-crosses-domain",
            f"TP={placement.tp} cannot stay on NVLink: {why}{scope}. "
            + (placement.alternatives[0] if placement.alternatives else ""),
            severity=severity,
            tp=placement.tp,
            largest_domain=largest,
            alternatives=list(placement.alternatives),
        )


def _tp_scope(tp: int, gpus: int, largest: int, design: GpuSpec | HardwareClass | None) -> tuple[Severity, str]:
    """How much a TP group that leaves NVLink says about this box, and why.

    A group that spans whole boxes (TP=24 over three 8-GPU boxes) leaves each box by the plan's own design: its
    all-reduce crosses the network between boxes whatever their links, and a box whose GPUs all share one NVLink
    domain holds its share as well as it can. A box of GPUs the catalog knows are built without NVLink (L4, L40S,
    RTX PRO 6000) runs every TP size over PCIe: the deployment works at PCIe speed and no placement on the box does
    better, a cost to know, not a fault; so does a box of a bridged model with no bridge at all, where the group is
    larger than any bridge joins (TP=8 on RTX 3090s, whose bridges join pairs). A box of bridged islands (H100 NVL
    pairs, H200 NVL quads) fails a group larger than an island: TP inside each island with replicas fits it. Any
    other group that cannot stay on NVLink (a box of NVLink islands, a model whose links are missing, GPUs of a
    model not known) fails the deployment.
    """
    if gpus >= 2 and tp > gpus and tp % gpus == 0 and largest == gpus:
        return Severity.INFO, (
            f"; TP={tp} spans {tp // gpus} boxes of {gpus} GPUs by design, and this box's {gpus} share one NVLink "
            "domain: its share of the group stays on NVLink, the rest of the all-reduce crosses the network"
        )
    if largest <= 1 and design is not None and design.build == "pcie":
        return Severity.WARN, (
            f"; {_without_nvlink(design)}, so every TP size runs its all-reduce over PCIe (and the CPU interconnect "
            "between sockets) on this box: expect PCIe's bandwidth and latency per layer"
        )
    bridged = max(design.by_design_domains, default=0) if design is not None and design.build == "bridge" else 0
    if largest <= 1 and design is not None and bridged and tp > bridged:
        return Severity.WARN, (
            f"; no bridge joins these GPUs, and NVLink bridges join at most {bridged} {design.name} GPUs by design, so "
            f"TP={tp} runs its all-reduce over PCIe on any box of them: expect PCIe's bandwidth and latency per layer"
        )
    if largest <= 1 and design is None:
        return Severity.FAIL, (
            "; the GPU model is not known: if these GPUs are built without NVLink (L4, L40S, RTX cards), name it "
            "with --gpu-model, and TP over PCIe is then a cost to know rather than a fault"
        )
    return Severity.FAIL, ""


def _without_nvlink(design: GpuSpec | HardwareClass) -> str:
    """Say what shows the box is PCIe cards: the catalog's entry for its model, or the class its layout fits."""
    if isinstance(design, GpuSpec):
        return f"the {design.name} has no NVLink"
    return f"the box is judged as {design.name} (see nvlink-absent)"


PXN_GPUS_PER_NIC = 2
"""GPUs a NIC near a GPU can serve through PXN by design (HGX boards with four NICs for eight GPUs); more GPUs per
near NIC share its bandwidth: one NIC beside GPU0 for eight GPUs is not a network design."""


def _pxn_relays(ctx: RuleContext, far: list[int], near: set[int]) -> str | None:
    """Name, for each GPU without a near NIC, an NVLink peer with one ("GPU1 via GPU0"); None when one has none."""
    relays = []
    for index in far:
        peer = next(
            (
                other
                for other in sorted(near, key=lambda g: (abs(g - index), g))  # the nearest first
                if (lk := ctx.machine.link(f"GPU{index}", f"GPU{other}")) is not None and lk.level == PathLevel.NVLINK
            ),
            None,
        )
        if peer is None:
            return None
        relays.append(f"GPU{index} via GPU{peer}")
    return ", ".join(relays)


def _traffic_between_nodes(ctx: RuleContext) -> str:
    """Name what in the input says its traffic leaves the node ("" when nothing does).

    A GPU's distance to a NIC matters to GPUDirect RDMA between nodes only: tensor parallelism inside one box never
    touches the NICs, so a box judged for it is not warned about their placement.
    """
    if isinstance(ctx.options.nics, NicSet):
        return "--nics asks for runs across nodes"
    nccl = ctx.nccl
    if isinstance(nccl, Unsupported):
        return ""
    if len(nccl.hosts) > 1:
        return f"NCCL's log shows {len(nccl.hosts)} hosts"
    if any(t.kind == "NET" for t in nccl.transports):
        return "NCCL's log shows ranks connected over the network"
    return ""


@rule(
    Code(
        "nic-not-local",
        "warn",
        title="NICs exist but a GPU has none behind its PCIe switch (PIX/PXB)",
        remedy=(
            "GPUDirect RDMA for that GPU crosses the host bridge or socket; check NCCL_IB_HCA / NIC mapping, or whether"
            " a VM hides the PCIe tree."
        ),
    ),
    needs=(NIC_PATHS,),
)
def nic_not_local(ctx: RuleContext) -> Iterable[Finding | Skipped]:
    """NICs exist but a GPU has none behind its PCIe switch (PIX/PXB).

    GPUDirect RDMA for that GPU crosses the host bridge or the socket, and multi-node all-reduce slows down, unless
    NCCL relays the GPU's traffic through an NVLink peer that has a NIC at PIX/PXB (PXN, on unless
    NCCL_PXN_DISABLE=1: NVIDIA/nccl@5067397c src/graph/paths.cc, "PXN = PCI + NVLink"): then it is the box's design.
    """
    machine = ctx.machine
    if not machine.nics:
        return
    far: list[int] = []
    near: set[int] = set()  # GPUs with a NIC at PIX/PXB
    near_nics: set[str] = set()  # ... and those NICs
    judged = 0
    for gpu in machine.gpus:
        links = [(nic.label, lk.level) for nic in machine.nics if (lk := machine.link(gpu.label, nic.label))]
        if not links:
            continue
        judged += 1
        close = {nic for nic, level in links if level <= PathLevel.PXB}
        if close:
            near.add(gpu.index)
            near_nics |= close
        else:
            far.append(gpu.index)
    if not far:
        return
    total = len(machine.gpus)
    gpus, nics = {g.label for g in machine.gpus}, {n.label for n in machine.nics}
    # NICs keep the names topo -m gives them ("NIC0", or "mlx5_0" on older drivers)
    gpu_nic = [lk for lk in machine.links if {lk.a, lk.b} & gpus and {lk.a, lk.b} & nics]
    all_phb = bool(gpu_nic) and all(lk.level == PathLevel.PHB for lk in gpu_nic)
    relays = _pxn_relays(ctx, far, near) if judged <= PXN_GPUS_PER_NIC * len(near_nics) else None
    design = ctx.design
    # topo -m gives a GPU a NUMA node of its own only where its memory is coherent with a Grace CPU's (C2C); a GPU
    # whose row a cut matrix lacks says nothing either way
    numa_ids = [g.gpu_numa_id for g in machine.gpus if not isinstance(g.gpu_numa_id, Failed)]
    grace = bool(numa_ids) and all(isinstance(n, int) for n in numa_ids)
    if design is not None and (design.layout == "nvl72" or design.build == "superchip"):
        severity, why = (
            Severity.INFO,
            (
                f"by design for {design.name}: a Grace tray reaches its NICs through the Grace CPU, not a PCIe switch "
                "beside each GPU"
            ),
        )
    elif grace:
        severity, why = (
            Severity.INFO,
            (
                "by design for a Grace superchip (each GPU has a GPU NUMA ID, its memory a NUMA node of the Grace "
                "CPU's): a Grace tray reaches its NICs through the Grace CPU, not a PCIe switch beside each GPU"
            ),
        )
    elif len(far) == judged and len(machine.nics) < max(2, total // 2):
        # counted against the box's GPUs, not the rows shown: two NICs for eight GPUs are no GPUDirect RDMA design
        severity, why = Severity.INFO, "few NICs and none near a GPU: likely front-end or storage NICs"
    elif len(far) == judged and all_phb:
        severity, why = Severity.WARN, "every GPU-NIC path is PHB: a VM may be hiding the PCIe tree"
    elif relays is not None:
        severity, why = (
            Severity.INFO,
            f"NCCL's PXN relays their network traffic over NVLink to a GPU with a NIC at PIX/PXB: {relays}",
        )
    else:
        severity, why = Severity.WARN, "GPUDirect RDMA from these GPUs crosses a host bridge or socket"
    across = _traffic_between_nodes(ctx)
    if severity == Severity.WARN and not across:
        severity = Severity.INFO
        why += "; it matters to runs across nodes only, which the input does not show: --nics judges the box for them"
    elif severity == Severity.WARN:
        why += f"; {across}"
    shown = f"; the input shows the NIC paths of {judged} of the {total} GPUs" if judged < total else ""
    yield finding(
        "nic-not-local",
        f"{len(far)} of {total} GPUs have no NIC at PIX/PXB: GPUs {format_gpus(far)} ({why}{shown}).",
        severity=severity,
        gpus=far,
        nics=[n.label for n in ctx.machine.nics],
        reason=why,
    )
