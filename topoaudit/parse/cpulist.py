"""Linux CPU-list syntax (``0-51,104-155``), as printed by ``nvidia-smi topo -m`` and sysfs ``cpulist``."""

from __future__ import annotations

import re

_ITEM = re.compile(r"(\d+)(?:-(\d+))?", re.ASCII)
# Linux builds for at most 8192 CPUs (x86 MAXSMP); anything far beyond is text damage, and expanding it
# (``0-99999999999``) would exhaust memory.
MAX_CPU = 65535


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """``"0-3,8"`` -> ``(0, 1, 2, 3, 8)``, sorted and de-duplicated.

    Strict on purpose: a list cut by terminal width (``"-31,64-95"``), glued to its neighbour, or naming a
    CPU above :data:`MAX_CPU` must raise ``ValueError`` rather than yield plausible but wrong CPUs.
    """
    cpus: set[int] = set()
    for item in text.strip().split(","):
        m = _ITEM.fullmatch(item)
        if m is None:
            raise ValueError(f"not a CPU list: {text!r}")
        if max(len(m.group(1)), len(m.group(2) or "")) > len(str(MAX_CPU)):
            raise ValueError(f"CPU number beyond {MAX_CPU} in CPU list {text[:40]!r}")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ValueError(f"descending range {item!r} in CPU list {text!r}")
        if hi > MAX_CPU:
            raise ValueError(f"CPU number {hi} beyond {MAX_CPU} in CPU list {text!r}")
        cpus.update(range(lo, hi + 1))
    return tuple(sorted(cpus))
