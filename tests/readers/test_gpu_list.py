"""`nvidia-smi -L`: the GPUs are read, their links are not in it, so nothing is judged and the report says which
capture would let it judge."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import Run

from topoaudit.readers import load_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
LISTED = (FIXTURES / "captures" / "gpu-list-4x3090-smi-L-1.txt").read_text(encoding="utf-8")
NVLINK_STATUS = (FIXTURES / "captures" / "nvlink-2x3090-status-14gbps-clubrig-1.txt").read_text(encoding="utf-8")


def test_a_gpu_list_is_read_and_not_judged(run: Run, tmp_path: Path) -> None:
    """Before: refused, "not a format topoaudit reads", with a hint to capture `topo -m` as if nothing was seen."""
    paste = tmp_path / "list.txt"
    paste.write_text(LISTED, encoding="utf-8")
    code, out, err = run("analyze", str(paste), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["verdict"] == "not judged"
    assert all(f["severity"] == "info" for f in report["findings"])
    assert [g["name"] for g in report["gpus"]] == ["NVIDIA GeForce RTX 3090"] * 4
    code, out, _ = run("analyze", str(paste), "--no-color")
    assert "4× NVIDIA GeForce RTX 3090: the source describes no links between GPUs" in out
    assert "paste `nvidia-smi topo -m` of the same box with it" in out


def test_the_gpu_lines_of_nvlink_status_stay_nvlink_status() -> None:
    """`nvidia-smi nvlink -s` heads each GPU's links with the same `GPU N: name (UUID: ...)` line."""
    assert load_text(NVLINK_STATUS, "nvlink.txt").machine.source == "nvidia-smi-nvlink"
    assert load_text(LISTED, "list.txt").machine.source == "gpu-list"


def test_a_gpu_list_beside_the_boxs_topo_m_names_its_gpus() -> None:
    """`nvidia-smi -L` then `nvidia-smi topo -m`: the matrix frames the box, the list gives its GPUs' names."""
    matrix = (FIXTURES / "rules" / "topo-4x2080ti-pix-one-switch-lmdeploy-1.txt").read_text(encoding="utf-8")
    loaded = load_text(LISTED + "\n" + matrix, "paste.txt")
    assert loaded.source.kind == "topo-matrix" and len(loaded.machine.links) > 0
    assert [g.name for g in loaded.machine.gpus] == ["NVIDIA GeForce RTX 3090"] * 4
