"""Regenerate the probe snapshots of tests/fixtures/fleet (see PROVENANCE.tsv there): ``topoaudit probe`` run
on the fake boxes of tests/probe (fake NVML, sysfs and nvidia-smi built from tests/fixtures/nvml/*.toml), so
the snapshots are exactly what the probe writes on such a box.

    .venv/bin/python -m pytest tests/fleet/make_snapshots.py -p no:cacheprovider -q   # rewrites the fixtures
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "probe"))
from cli_runner import run_cli
from fakebox import make_box
from fakenvml import Port, Scenario

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fleet"
HIDDEN_SWITCH = "FFFFFFFF:FF:FF.0"  # what NVML reports for an NVSwitch in another tray (GB200)
NVL72_CLUSTER = "5b1a2c3d00004000800000000000000a"


def _h200(sc: Scenario) -> None:
    for gpu in sc.gpus:  # the real H200 snapshot's name and memory (tests/fixtures/fleet/snapshot-h200.json)
        gpu.name, gpu.memory = "NVIDIA H200", 150754820096


def _links_down(sc: Scenario) -> None:
    for link in (2, 7):  # GPU3 lost one link to each of its first two NVSwitches
        sc.gpus[3].ports[link].active = False
    sc.raw["smi"].pop("nvlink_s")  # the captured text shows every link up; this box's would not


def _gb200_tray(sc: Scenario) -> None:
    del sc.gpus[4:]
    for gpu in sc.gpus:
        gpu.name, gpu.memory, gpu.arch, gpu.nvlink_version = "NVIDIA GB200", 199715979264, 10, 7
        gpu.ports = [Port("switch", HIDDEN_SWITCH, True) for _ in range(18)]
        gpu.fabric = {"state": 3, "status": "SUCCESS", "clique_id": 32766, "cluster_uuid": NVL72_CLUSTER,
                      "health_summary": 1}  # fmt: skip
    sc.raw["nics"] = sc.raw["nics"][:4]
    sc.raw["smi"] = {}  # no captured GB200 `topo -m` of this layout: the snapshot records NVML only
    sc.raw["host"]["product"] = "GB200 NVL72 compute tray"


BOXES: dict[str, tuple[str, Callable[[Scenario], None] | None]] = {
    "snapshot-hgx-h100.json": ("hgx-h100", None),
    "snapshot-hgx-h200.json": ("hgx-h100", _h200),
    "snapshot-hgx-h100-links-down.json": ("hgx-h100", _links_down),
    "snapshot-hgx-h100-fm-not-started.json": ("fm-not-started", None),
    "snapshot-gb200-tray.json": ("hgx-h100", _gb200_tray),
}


@pytest.mark.parametrize("name", sorted(BOXES))
def test_write_snapshot(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, tweak = BOXES[name]
    box = make_box(scenario, tmp_path, monkeypatch, tweak)
    out = tmp_path / "snapshot.json"
    code, _, err = run_cli(capsys, "probe", "-o", str(out), "--sysfs-root", str(box.root), "--smi-timeout", "2")
    assert code == 0, err
    data = json.loads(out.read_text(encoding="utf-8"))
    (FIXTURES / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
