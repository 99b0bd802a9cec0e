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
from topoaudit.model.nccl import NcclSetting
from topoaudit.model.nccl_effect import effect, effect_class
from topoaudit.rules.base import RuleContext, finding, first_few
from topoaudit.rules.remedies import NCCL_VARIABLES, remedy

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


def _older_than(version: object, release: tuple[int, ...]) -> bool | None:
    """Whether an NCCL version string is older than ``release``; None when it is not a version."""
    if not isinstance(version, str) or not re.match(r"\d{1,4}\.\d{1,4}(?!\d)", version):
        return None
    parts = tuple(int(x) for x in re.findall(r"\d{1,4}", version)[:3])
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
        **({"causes": _classes(path)} if path else {}),
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


def _classes(path: list[tuple[NcclSetting, tuple[Severity, str]]]) -> list[str]:
    """Name a path-changing setting as the cause (a configuration) and, where it is one by what it does, a fallback."""
    effects = (effect_class(s.name, s.value) for s, _ in path)
    return list(dict.fromkeys(["config-override", *(c for c in effects if c)]))
