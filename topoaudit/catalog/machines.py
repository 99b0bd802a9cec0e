"""The machines the catalog's cards ship in: how many GPUs one machine holds, the NVLink domain they belong to, and
the NICs that join machines.

A card alone does not say whether a tensor-parallel group crosses machines: one GB300 is a GPU of a 72-GPU NVLink
domain in an NVL72 rack, and the only GPU of a DGX Station, whose next GPU is another station over ConnectX-8 RDMA.
``find_machine(text)`` matches what a user typed ("DGX Station GB300") to one entry; ``machine.card()`` is the
catalog card as that machine holds it. The data lives in ``machines.toml`` beside this module, loaded once,
lazily, and checked strictly (an unknown key, an unknown card or a figure without its source is a bug caught by
``tests/catalog/test_machines.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
from dataclasses import dataclass
from importlib import resources
from typing import Any

from topoaudit.catalog import CatalogError, GpuSpec, find_gpu

KINDS = ("node", "tray", "station")
"""A node (8 GPUs on one NVSwitch board), a tray (GPUs of a rack-wide NVLink domain), a station (one GPU)."""

CITED = ("gpus", "domain_gpus", "nics", "nic_gbits")
"""The figures every entry states with their source (``memory_gb`` too, where the entry states it)."""


@dataclass(frozen=True)
class MachineSpec:
    """One machine as it ships: its card, how many, the NVLink domain they are in, and the NICs between machines."""

    key: str  # "dgx-station-gb300"
    name: str  # "DGX Station GB300"
    match: tuple[str, ...]
    gpu: str  # the card's catalog key ("GB300")
    kind: str  # one of KINDS
    gpus: int  # GPUs in one machine
    domain_gpus: int  # GPUs in the NVLink domain a machine's GPUs belong to (72 for an NVL72 tray)
    nics: int  # NICs one machine leaves through
    nic_gbits: float  # Gb/s each
    nic_name: str  # "ConnectX-8 SuperNIC"
    link: str  # how machines are joined, in words: "ConnectX-8 RDMA", "InfiniBand"
    link_layer: str = ""  # "IB" | "RoCE" | "" (either)
    memory_gb: float = 0.0  # per GPU where it differs from the card's catalog entry; 0: the card's
    reference: bool = False  # the node the bandwidth oracle assumes for its card where an input names no NICs
    cites: tuple[tuple[str, str], ...] = ()

    @property
    def spans_machines(self) -> bool:
        """True when the NVLink domain reaches past one machine (the trays of an NVL72 rack)."""
        return self.domain_gpus > self.gpus

    @property
    def label(self) -> str:
        """The machine as a plan names it: "DGX Station GB300 (1 GPU)", "GB300 NVL72 compute tray (4 GPUs of a
        72-GPU NVLink domain)", "HGX H100 (8 GPUs, one NVLink domain)"."""
        gpus = f"{self.gpus} GPU{'s' if self.gpus != 1 else ''}"
        if self.spans_machines:
            return f"{self.name} ({gpus} of a {self.domain_gpus}-GPU NVLink domain)"
        if self.domain_gpus <= 1:
            return f"{self.name} ({'one GPU' if self.gpus == 1 else gpus}, no NVLink to another)"
        return f"{self.name} ({gpus}, one NVLink domain)"

    @property
    def network(self) -> str:
        """The NICs between machines in words: "ConnectX-8 RDMA (1x 800G ConnectX-8 SuperNIC per machine)"."""
        layer = f" {self.link_layer}" if self.link_layer else ""
        return f"{self.link} ({self.nics}x {self.nic_gbits:g}G{layer} {self.nic_name} per machine)"

    def source_of(self, field: str) -> str:
        """Where a figure comes from ('' when the entry does not state it)."""
        return dict(self.cites).get(field, "")

    def card(self) -> GpuSpec:
        """The catalog card as this machine holds it: its memory, and the machine's GPUs as the node."""
        spec = find_gpu(self.gpu)
        if spec is None:  # the loader refuses such an entry
            raise CatalogError(f"machine.{self.key}: no card {self.gpu!r} in gpus.toml")
        memory = int(self.memory_gb * 10**9) if self.memory_gb else spec.memory_bytes
        return dataclasses.replace(spec, memory_bytes=memory, node_gpus=self.gpus)


_KEYS = {
    "name", "match", "gpu", "kind", "gpus", "domain_gpus", "nics", "nic_gbits", "nic_name", "link", "link_layer",
    "memory_gb", "reference", "cite",
}  # fmt: skip


def _machine(key: str, entry: dict[str, Any]) -> MachineSpec:
    unknown = set(entry) - _KEYS
    if unknown:
        raise CatalogError(f"machine.{key}: unknown keys {sorted(unknown)}")
    if entry.get("kind") not in KINDS:
        raise CatalogError(f"machine.{key}: kind {entry.get('kind')!r} not in {KINDS}")
    if find_gpu(str(entry.get("gpu", ""))) is None:
        raise CatalogError(f"machine.{key}: no card {entry.get('gpu')!r} in gpus.toml")
    cites = {str(k): str(v) for k, v in entry.get("cite", {}).items()}
    missing = [f for f in (*CITED, *(("memory_gb",) if "memory_gb" in entry else ())) if not cites.get(f)]
    if missing:
        raise CatalogError(f"machine.{key}: no source for {missing}")
    return MachineSpec(
        key=key,
        name=entry["name"],
        match=tuple(entry["match"]),
        gpu=entry["gpu"],
        kind=entry["kind"],
        gpus=int(entry["gpus"]),
        domain_gpus=int(entry["domain_gpus"]),
        nics=int(entry["nics"]),
        nic_gbits=float(entry["nic_gbits"]),
        nic_name=entry["nic_name"],
        link=entry["link"],
        link_layer=entry.get("link_layer", ""),
        memory_gb=float(entry.get("memory_gb", 0.0)),
        reference=bool(entry.get("reference", False)),
        cites=tuple(cites.items()),
    )


@functools.lru_cache(maxsize=1)
def all_machines() -> tuple[MachineSpec, ...]:
    """Every machine, in file order (read on first use)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    text = resources.files(__package__).joinpath("machines.toml").read_text(encoding="utf-8")
    return tuple(_machine(key, entry) for key, entry in tomllib.loads(text)["machine"].items())


def find_machine(text: str) -> MachineSpec | None:
    """The machine ``text`` names (its key, its name, or one of its patterns); None for a card or anything else."""
    wanted = text.strip()
    for machine in all_machines():
        if wanted.lower() in (machine.key, machine.name.lower()):
            return machine
    return next((m for m in all_machines() if any(re.search(p, wanted, re.IGNORECASE) for p in m.match)), None)


def reference_machine(gpu_key: str) -> MachineSpec | None:
    """The machine the bandwidth oracle assumes for a card where an input names no NICs."""
    return next((m for m in all_machines() if m.reference and m.gpu == gpu_key), None)
