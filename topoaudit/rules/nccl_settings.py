"""What an NCCL variable set for a run does to the path NCCL takes, as a finding (nccl-env-override).

NCCL prints each variable it reads from the environment or ``/etc/nccl.conf`` as ``NAME set by environment to
VALUE`` (src/misc/param.cc, src/graph/paths.cc), and a pasted nccl-tests command line types them as
``NAME=VALUE``. A variable that switches a transport off or pins the path changes what every collective runs
over (warn); one that tunes buffers, channels or interfaces does not (info); the debug variables say nothing
about the path. The values' meanings are NCCL's (docs/env.html of NVIDIA/nccl, src/graph/paths.cc).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from topoaudit.model.finding import Finding, Severity
from topoaudit.model.nccl import QUIET, NcclSetting
from topoaudit.rules.base import RuleContext, finding, first_few
from topoaudit.rules.remedies import NCCL_VARIABLES, remedy

P2P_LEVEL_OFF = ("LOC", "0")
P2P_LEVEL_NARROW = ("NVL", "NVB", "C2C", "PIX", "1")
"""NCCL_P2P_LEVEL values below NCCL's default (PXB): P2P off, or only between the closest GPUs. Before NCCL 2.6
levels were numbers, 0..5 = LOC, PIX, PXB, PHB, SYS, SYS (src/graph/paths.cc)."""
P2P_LEVEL_NVLINK = ("NVL", "NVB")
"""NCCL_P2P_LEVEL values that keep peer access on NVLink paths only: on an NVSwitch board every pair keeps it."""
SWITCHES_OFF = frozenset(
    ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NVB_DISABLE", "NCCL_PXN_DISABLE",
     "NCCL_IGNORE_DISABLED_P2P", "NCCL_P2P_DIRECT_DISABLE")
)  # fmt: skip
"""Variables whose non-zero value switches something off; 0 is their default."""
CHANNELS_ONE_NODE_USES = 32
"""The most ring channels NCCL builds: its search finds at most MAXCHANNELS/2 = 32 and duplicates up to that
(NVIDIA/nccl@5067397c src/init.cc ``ringGraph->maxChannels = MAXCHANNELS / 2``, src/graph/search.cc
``ncclTopoDupChannels``), so NCCL_MAX_NCHANNELS or NCCL_MAX_CTAS at 32 or more takes none of them away."""
P2P_DISABLE_NAMED_FROM = (2, 23, 4)
"""NCCL 2.7.3 to 2.22 print NCCL_P2P_DISABLE=1 as ``NCCL_P2P_LEVEL set by environment to LOC``; 2.23.4 on name it."""


def nvlink_everywhere(ctx: RuleContext) -> bool:
    """Every GPU pair of the box is on NVLink: the links the input shows say so, or its model is an NVSwitch board."""
    from topoaudit.model.machine import PathLevel
    from topoaudit.model.topology import gpu_pair_links

    pairs = gpu_pair_links(ctx.machine)
    if len(ctx.machine.gpus) >= 2 and pairs:
        return all(link.level == PathLevel.NVLINK for link in pairs.values())
    design = ctx.design
    return design is not None and design.build == "nvswitch" and design.domain_size >= design.node_gpus


def effect(name: str, value: str, nvlink_everywhere: bool = False) -> tuple[Severity, str] | None:
    """Say what ``name=value`` does to the path (warn) or to tuning (info); None for a debug variable."""
    if name in QUIET:
        return None
    v = value.strip().upper()
    off = v not in ("", "0")
    warn = Severity.WARN
    if not off and name in SWITCHES_OFF:
        return Severity.INFO, "its default: nothing is switched off"
    if name == "NCCL_P2P_DISABLE" and off:
        return warn, "CUDA peer access (NVLink and PCIe P2P) is off: GPU pairs talk through host memory or the network"
    if name == "NCCL_P2P_LEVEL" and v in P2P_LEVEL_OFF:
        return warn, "peer access is off, level LOC: GPU pairs talk through host memory or the network"
    if name == "NCCL_P2P_LEVEL" and v in P2P_LEVEL_NVLINK and nvlink_everywhere:
        return Severity.INFO, f"peer access only over NVLink, level {value}: every GPU pair of this box is on NVLink"
    if name == "NCCL_P2P_LEVEL" and v in P2P_LEVEL_NARROW:
        return warn, f"peer access only between GPUs at path {value} or closer: the other pairs go through host memory"
    if name == "NCCL_SHM_DISABLE" and off:
        return warn, "the host-memory transport is off: pairs without peer access go through the network"
    if name == "NCCL_IB_DISABLE" and off:
        return warn, "InfiniBand/RoCE is off: traffic between nodes goes over TCP sockets"
    if name == "NCCL_NET_GDR_LEVEL" and v in P2P_LEVEL_OFF:
        return warn, "GPUDirect RDMA is off: traffic between nodes is staged through host memory"
    if name == "NCCL_NET_GDR_READ" and v == "0":
        return warn, "the NICs do not read GPU memory directly when sending"
    if name in ("NCCL_ALGO", "NCCL_PROTO"):  # a choice among algorithms over the same links, often made to measure
        what = "algorithms" if name == "NCCL_ALGO" else "protocols"
        return Severity.INFO, f"NCCL may use only the {what} {value}: a run's figures are that choice's"
    if name == "NCCL_NVLS_ENABLE" and v == "0":
        return warn, "NVLink SHARP (NVLS) is off: all-reduce on NVSwitch boxes runs on rings"
    if name == "NCCL_CUMEM_ENABLE" and v == "0":
        return warn, "peer access uses legacy CUDA IPC, and NVLS and multi-node NVLink (which need cuMem) are off"
    if name == "NCCL_NET" and v == "SOCKET":
        return warn, "traffic between nodes goes over TCP sockets"
    if name == "NCCL_IGNORE_DISABLED_P2P" and off:
        return warn, "peer access is used where the driver reports it disabled (masks a fault)"
    if name in ("NCCL_NVB_DISABLE", "NCCL_PXN_DISABLE") and off:  # a route NCCL prefers, no transport switched off
        return Severity.INFO, {
            "NCCL_NVB_DISABLE": "no relaying through another GPU's NVLink",
            "NCCL_PXN_DISABLE": "no sending through a peer GPU's NIC: each GPU uses a NIC of its own",
        }[name]
    if name == "NCCL_MNNVL_ENABLE" and v == "0":
        return warn, "multi-node NVLink is off"
    if name == "NCCL_GRAPH_FILE":
        return warn, "NCCL's rings and trees come from a file, not its own search"
    if name in ("NCCL_MAX_NCHANNELS", "NCCL_MAX_NRINGS", "NCCL_MAX_CTAS"):
        if v.isdecimal() and int(v) >= CHANNELS_ONE_NODE_USES:
            return Severity.INFO, f"tuning: at most {value} channels, no fewer than NCCL builds on one node"
        return warn, f"at most {value} channels: large messages may not reach the links' bandwidth"
    return Severity.INFO, "tuning"


def _older_than(version: object, release: tuple[int, ...]) -> bool | None:
    """Whether an NCCL version string is older than ``release``; None when it is not a version."""
    if not isinstance(version, str) or not re.match(r"\d+\.\d+", version):
        return None
    parts = tuple(int(x) for x in re.findall(r"\d+", version)[:3])
    return parts < release


def settings_finding(
    settings: Iterable[NcclSetting],
    where: str,
    nccl_version: object = None,
    *,
    find_where: bool = True,
    nvlink_everywhere: bool = False,
) -> Finding | None:
    """One nccl-env-override finding over the variables a run shows set; None when none of them matters.

    ``where`` names the input ("NCCL's log", "The pasted command line"); ``nccl_version`` the release the input
    names, to say when ``NCCL_P2P_LEVEL=LOC`` may be ``NCCL_P2P_DISABLE=1`` in disguise. With ``find_where`` the
    remedy finds where each path-changing variable is set (never an ``unset`` in the script: it would change only
    its own shell); a variable typed on a pasted command line is where it is. ``nvlink_everywhere``: every GPU pair
    of the box is on NVLink (an NVSwitch board), so limiting peer access to NVLink changes nothing.
    """
    judged = [(s, e) for s in settings if (e := effect(s.name, s.value, nvlink_everywhere)) is not None]
    if not judged:
        return None
    path = [(s, e) for s, e in judged if e[0] == Severity.WARN]
    head = (path or judged)[:6]
    shown: list[str] = []
    for s, (_, what) in head:
        note = ""
        level = s.value.strip().upper()
        if s.name == "NCCL_P2P_LEVEL" and level == "LOC":
            older = _older_than(nccl_version, P2P_DISABLE_NAMED_FROM)
            if older is None or older:
                note = "; NCCL before 2.23.4 prints NCCL_P2P_DISABLE=1 this way"
        elif s.name == "NCCL_P2P_LEVEL" and level.isdecimal():
            note = (
                "; a number is an old level (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4-5 SYS), and NCCL before 2.6 read a name "
                "it did not know, such as NVL, as 0"
            )
        shown.append(f"{s.name}={s.value} ({what}{note}; line {s.evidence.line})")
    rest = [f"{s.name}={s.value}" for s, e in judged if (s, e) not in head]
    text = "; ".join(shown) + (f"; also set: {first_few(rest, 6)}" if rest else "")
    kind = "that change the path NCCL takes" if path else "that tune NCCL (none changes its path)"
    found = finding(
        "nccl-env-override",
        f"{where} shows {len(path or judged)} NCCL setting(s) {kind}: {text}.",
        severity=Severity.WARN if path else Severity.INFO,
        settings=[
            {"name": s.name, "value": s.value, "origin": s.origin, "line": s.evidence.line, "effect": e[1]}
            for s, e in judged
        ],
    )
    commands = [
        remedy("environment-find", variable=s.name, value=s.value)
        for s, _ in path
        if find_where and s.name in NCCL_VARIABLES
    ]
    return dataclasses.replace(found, remedy_commands=tuple(commands)) if commands else found
