"""Sizes and PCI bus ids, read and written one way everywhere (policies, the bench, the catalog, the probe).

Sizes use binary multiples, as nccl-tests' ``-b``/``-e`` flags do: ``16M``, ``16MB`` and ``16MiB`` are all
16 * 2**20 bytes. Bus ids take the ``dddd:bb:dd.f`` form sysfs and torch print.
"""

from __future__ import annotations

import re

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?\s*", re.IGNORECASE)
_MULTIPLE = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_BUS_ID = re.compile(r"(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})(?:\.([0-7]))?")


def parse_size(text: str | int) -> int:
    """``16M`` / ``16MB`` / ``16MiB`` / ``1G`` / ``1.5K`` / ``4096`` -> bytes; ValueError for anything else."""
    if isinstance(text, bool):
        raise ValueError(f"not a size: {text!r} (use bytes or a K/M/G/T suffix, e.g. 16M, 16MiB, 1G)")
    if isinstance(text, int):
        number, multiple = float(text), 1
    else:
        m = _SIZE.fullmatch(str(text))
        if not m:
            raise ValueError(f"not a size: {text!r} (use bytes or a K/M/G/T suffix, e.g. 16M, 16MiB, 1G)")
        number, multiple = float(m.group(1)), _MULTIPLE[(m.group(2) or "").lower()]
    size = number * multiple
    if size < 1:
        raise ValueError(f"not a size: {text!r} (at least 1 byte)")
    if size != int(size):
        raise ValueError(f"not a whole number of bytes: {text!r}")
    return int(size)


def format_size(size_bytes: int) -> str:
    """The largest binary unit that divides the size: ``8 B``, ``64 KiB``, ``16 MiB``, ``4 GiB``."""
    for unit, multiple in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size_bytes >= multiple and size_bytes % multiple == 0:
            return f"{size_bytes // multiple} {unit}"
    return f"{size_bytes} B"


def parse_bus_id(text: str) -> str | None:
    """``00000000:07:00.0`` (NVML), ``0000:07:00.0`` (sysfs, torch), ``07:00.0``, ``0000:07:00`` ->
    ``0000:07:00.0``; None when the text is not a PCI bus id.

    The domain keeps 4 lower-case hex digits unless it needs more (``ffffffff`` stays whole).
    """
    m = _BUS_ID.fullmatch(text.strip().lower())
    if not m:
        return None
    domain, bus, device, function = m.groups()
    return f"{int(domain or '0', 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{function or '0'}"


def normalize_bus_id(text: str) -> str:
    """A bus id in the one form :func:`parse_bus_id` writes; other text stripped and lower-cased, so it still
    compares equal to itself."""
    return parse_bus_id(text) or text.strip().lower()
