"""Linux CPU-list syntax (``0-51,104-155``), as printed by ``nvidia-smi topo -m`` and sysfs ``cpulist``."""

from __future__ import annotations

import re

_ITEM = re.compile(r"(\d+)(?:-(\d+))?")


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """``"0-3,8"`` -> ``(0, 1, 2, 3, 8)``, sorted and de-duplicated.

    Strict on purpose: a list cut by terminal width (``"-31,64-95"``) or glued to its neighbour must raise
    ``ValueError`` rather than yield plausible but wrong CPUs.
    """
    cpus: set[int] = set()
    for item in text.strip().split(","):
        m = _ITEM.fullmatch(item)
        if m is None:
            raise ValueError(f"not a CPU list: {text!r}")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ValueError(f"descending range {item!r} in CPU list {text!r}")
        cpus.update(range(lo, hi + 1))
    return tuple(sorted(cpus))
