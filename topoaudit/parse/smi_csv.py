"""``nvidia-smi --query-gpu=FIELD,... --format=csv``: one row per GPU under a header naming the fields asked for.

People ask for the fields their question is about (``name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,
pcie.link.width.current,pcie.link.width.max``) and paste the table. It is read into the same model as
``nvidia-smi -q`` (:mod:`topoaudit.parse.smi_query`), so the rules over that output judge these fields too. Field
names and their ``[N/A]``/``[Not Supported]`` values follow ``nvidia-smi --help-query-gpu``; a header cell may carry
its unit (``memory.total [MiB]``). Without its header (``--format=csv,noheader``) a row does not say what its
values are, and is not read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from topoaudit.errors import InputError
from topoaudit.model.smi_query import SmiGpu, SmiQuery
from topoaudit.model.values import Unsupported
from topoaudit.parse.prefixes import Line, strip_prefixes
from topoaudit.parse.smi_query import PcieLink, absent_value, as_int
from topoaudit.units import parse_bus_id

SOURCE = "nvidia-smi --query-gpu"
_FIELD = r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*(?: \[[^\],]*\])?"
HEADER = re.compile(rf"^\s*(?P<fields>{_FIELD}(?:\s*,\s*{_FIELD})+)\s*$")
_KNOWN = re.compile(
    r"^(?:index|name|uuid|serial|driver_version|compute_cap|persistence_mode|count|pci\.|pcie\.|memory\.|"
    r"utilization\.|temperature\.|power\.|clocks\.|fabric\.|ecc\.|mig\.|gpu_)"
)
_QUERY_COMMAND = re.compile(r"nvidia-smi\s.*--query-gpu[= ]")


def looks_like_smi_csv_header(text: str) -> bool:
    """A header row of ``--format=csv``: two or more field names, one of them a field nvidia-smi knows."""
    m = HEADER.match(text)
    if m is None:
        return False
    fields = [f.strip() for f in m["fields"].split(",")]
    return sum(bool(_KNOWN.match(f)) for f in fields) >= max(2, len(fields) // 2)


def looks_like_smi_csv(text: str) -> bool:
    """A cheap sniff: a header row followed by a row with as many comma-separated values."""
    lines = text[:200_000].splitlines()
    for i, line in enumerate(lines[:-1]):
        if "," in line and looks_like_smi_csv_header(line):
            width = line.count(",")
            if lines[i + 1].count(",") == width:
                return True
    return False


def read_smi_csv(paste: str | Sequence[Line], name: str = "") -> SmiQuery:
    """Read the table under each header; InputError when the paste has no header with a row under it."""
    lines = strip_prefixes(paste) if isinstance(paste, str) else paste
    fields: list[str] = []
    gpus: list[SmiGpu] = []
    used: list[int] = []
    for line in lines:
        text = line.text.strip()
        if not text or _QUERY_COMMAND.search(text):
            continue
        if looks_like_smi_csv_header(text):
            fields = [re.sub(r"\s*\[.*\]$", "", f.strip()) for f in text.split(",")]
            used.append(line.number)
            continue
        values = [v.strip() for v in text.split(",")]
        if fields and len(values) == len(fields):
            gpus.append(_gpu(dict(zip(fields, values, strict=True)), line.number))
            used.append(line.number)
    if not gpus:
        where = f"{name}: " if name else ""
        raise InputError(f"{where}no `nvidia-smi --query-gpu` row under a header of field names in the input")
    return SmiQuery(
        gpus=tuple(gpus),
        attached_gpus=Unsupported(SOURCE, "the table does not count the GPUs attached"),
        driver_version=_text(gpus_field(fields, "driver_version", lines, used), "driver_version"),
        cuda_version=Unsupported(SOURCE, "not a field of --query-gpu"),
        excerpt=False,
        used_lines=tuple(used),
        command=SOURCE,
    )


def gpus_field(fields: list[str], field: str, lines: Sequence[Line], used: list[int]) -> str | None:
    """The first row's value of ``field`` (the driver version is the same on every row)."""
    if field not in fields:
        return None
    first = next((line for line in lines if line.number in used[1:]), None)
    if first is None:
        return None
    values = [v.strip() for v in first.text.split(",")]
    return values[fields.index(field)] if len(values) == len(fields) else None


def _gpu(row: dict[str, str], line: int) -> SmiGpu:
    bus = row.get("pci.bus_id")
    bus_id = parse_bus_id(bus) if bus and absent_value(bus, "pci.bus_id") is None else None
    pcie: PcieLink | Unsupported = Unsupported(SOURCE, "the table has no pcie.link fields")
    if any(k.startswith("pcie.link.") for k in row):
        pcie = PcieLink(
            generation_current=_int(row, "pcie.link.gen.current", "pcie.link.gen.gpucurrent"),
            generation_max=_int(row, "pcie.link.gen.max"),
            generation_device_max=_int(row, "pcie.link.gen.gpumax"),
            generation_host_max=_int(row, "pcie.link.gen.hostmax"),
            width_current=_int(row, "pcie.link.width.current"),
            width_max=_int(row, "pcie.link.width.max"),
        )
    return SmiGpu(
        line=line,
        bus_id=bus_id or _missing("pci.bus_id"),
        product_name=_text(row.get("name"), "name"),
        fabric=Unsupported(SOURCE, "the table has no fabric fields"),
        ecc_mode_current=_text(row.get("ecc.mode.current"), "ecc.mode.current"),
        ecc_mode_pending=_text(row.get("ecc.mode.pending"), "ecc.mode.pending"),
        pcie=pcie,
    )


def _missing(field: str) -> Unsupported:
    return Unsupported(SOURCE, f"the table has no {field} field")


def _text(raw: str | None, field: str) -> str | Unsupported:
    if raw is None:
        return _missing(field)
    absent = absent_value(raw, field)
    return absent if absent is not None else raw


def _int(row: dict[str, str], *fields: str) -> int | Unsupported:
    for field in fields:
        if field in row:
            return as_int(row[field], field)
    return _missing(fields[0])
