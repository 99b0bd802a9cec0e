"""Node inputs for the fleet tests: real node captures varied per node the way a real fleet varies (host
names, GPU UUIDs, measured busbw, capture times); see tests/fixtures/fleet/PROVENANCE.tsv."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fleet"
REPORT = json.loads((FIXTURES / "report-a100-8gpu-nccltests.json").read_text(encoding="utf-8"))
TOPO = (FIXTURES / "topo-h100-8gpu-12nic-numaoff-2.txt").read_text(encoding="utf-8")
SNAPSHOT = json.loads((FIXTURES / "snapshot-h200.json").read_text(encoding="utf-8"))


def node_report(
    host: str, *, busbw_scale: float = 1.0, uuid_of: str | None = None, generated_at: str = "2026-12-01T10:00:00+00:00"
) -> dict[str, object]:
    """The real A100 node report with its host name, GPU UUIDs, busbw and time set for one fleet node."""
    data = copy.deepcopy(REPORT)
    data["host"]["hostname"] = host
    data["generated_at"] = generated_at
    for gpu in data["gpus"]:
        gpu["uuid"] = f"GPU-{uuid_of or host}-{gpu['index']}"
    for group in data["bench"]["groups"]:
        for row in group["rows"]:
            row["busbw_gbps"] = row["busbw_gbps"] * busbw_scale
            row["algbw_gbps"] = row["algbw_gbps"] * busbw_scale
    return data


def write_report(directory: Path, host: str, **kwargs: object) -> Path:
    path = directory / f"{host}.json"
    path.write_text(json.dumps(node_report(host, **kwargs)), encoding="utf-8")  # type: ignore[arg-type]
    return path


def write_topo(directory: Path, host: str, degraded: bool = False) -> Path:
    """The real H100 node's `topo -m`; ``degraded``: GPU3-GPU5 shows NV12 instead of NV18 (constructed)."""
    text = TOPO
    if degraded:
        lines = text.splitlines(keepends=True)
        for k, line in enumerate(lines):
            if line.startswith(("GPU3", "GPU5")):
                cells = line.split("\t")
                column = 6 if line.startswith("GPU3") else 4  # GPU5's column on GPU3's row, and back
                assert cells[column].strip() == "NV18", cells
                cells[column] = "NV12"
                lines[k] = "\t".join(cells)
        text = "".join(lines)
    path = directory / f"{host}.topo.txt"
    path.write_text(text, encoding="utf-8")
    return path


def probe_snapshot(name: str) -> dict[str, object]:
    """One of the probe's snapshots in tests/fixtures/fleet (``snapshot-hgx-h100`` ...), parsed afresh."""
    data: dict[str, object] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def write_snapshot(
    directory: Path,
    base: str,
    host: str,
    *,
    uuid_of: str | None = None,
    taken_at: str = "2026-12-01T10:00:00+00:00",
    edit: object = None,
) -> Path:
    """A probe snapshot as node ``host`` writes it: its host name, its own GPU UUIDs and serials (those of
    ``uuid_of`` for a copied identity) and capture time; ``edit(gpu)`` changes each GPU record."""
    data = probe_snapshot(base)
    owner = uuid_of or host
    data["os"]["hostname"] = host  # type: ignore[index]
    data["taken_at"] = taken_at
    digest = hashlib.sha256(owner.encode()).hexdigest()
    for gpu in data["gpus"]:  # type: ignore[attr-defined]
        d = digest
        gpu["uuid"] = f"GPU-{d[:8]}-{d[8:12]}-4{d[13:16]}-8{d[17:20]}-{d[20:29]}{gpu['index']:03d}"
        gpu["serial"] = f"1654{int(digest[:8], 16) % 10**8:08d}{gpu['index']}"
        if callable(edit):
            edit(gpu)
    path = directory / f"{host}.snapshot.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
