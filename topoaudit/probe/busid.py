"""PCI bus ids in one form, so NVML, sysfs, nvidia-smi and torch name a device the same way."""

from __future__ import annotations

import re

_BUS_ID = re.compile(r"^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$")
INVISIBLE_SWITCH = "ffffffff:ff:ff.0"  # what NVML reports for an NVSwitch that is not a PCI device (B200+)


def normalize_bus_id(text: str) -> str:
    """``00000000:07:00.0`` (NVML), ``0000:07:00.0`` (sysfs, torch), ``07:00.0`` -> ``0000:07:00.0``.

    The domain keeps 4 lower-case hex digits unless it needs more (``ffffffff`` stays whole); text that is
    not a bus id comes back stripped and lower-cased, so it still compares equal to itself.
    """
    m = _BUS_ID.match(text.strip())
    if not m:
        return text.strip().lower()
    domain = int(m.group(1) or "0", 16)
    return f"{domain:04x}:{int(m.group(2), 16):02x}:{int(m.group(3), 16):02x}.{m.group(4)}"
