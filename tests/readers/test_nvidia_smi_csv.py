"""``nvidia-smi --query-gpu=... --format=csv`` pasted with its header: the PCIe link fields are judged as a pasted
``nvidia-smi -q``'s are; a table of fields the rules hold to nothing (names, temperatures) is "not judged"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runner import Run

from topoaudit.parse.paste_parts import split_parts
from topoaudit.parse.smi_csv import read_smi_csv

PCIE = (
    "$ nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
    "pcie.link.width.max --format=csv\n"
    "index, name, pci.bus_id, pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max\n"
    "0, NVIDIA GeForce RTX 4090, 00000000:01:00.0, 4, 4, 16, 16\n"
    "1, NVIDIA GeForce RTX 4090, 00000000:41:00.0, 4, 4, 4, 16\n"
)


def analyzed(run: Run, tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    code, out, err = run("analyze", str(paste), "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def test_the_table_is_read_field_by_field() -> None:
    table = read_smi_csv(PCIE)
    first, second = table.gpus
    assert first.product_name == "NVIDIA GeForce RTX 4090" and second.bus_id == "0000:41:00.0"
    assert (second.pcie.width_current, second.pcie.width_max) == (4, 16)  # type: ignore[union-attr]
    assert table.used_lines == (2, 3, 4) and table.command == "nvidia-smi --query-gpu"


def test_a_narrow_link_in_the_table_warns(run: Run, tmp_path: Path) -> None:
    """Before: refused ("not a format topoaudit reads")."""
    code, report = analyzed(run, tmp_path, PCIE)
    (link,) = [f for f in report["findings"] if f["code"] == "pcie-link-degraded"]
    assert code == 0 and report["verdict"] == "warn" and link["evidence"]["narrow"] == ["0000:41:00.0 x4 of x16"]
    assert report["gate"]["judged"][0] == "`nvidia-smi --query-gpu` of 2 GPUs"
    assert [p["kind"] for p in report["source"]["parts"]] == ["nvidia-smi-csv"]
    code, report = analyzed(run, tmp_path, PCIE.replace(", 4, 16\n", ", 16, 16\n"))
    assert code == 0 and report["verdict"] == "pass"


def test_a_table_of_fields_nothing_judges_is_not_judged(run: Run, tmp_path: Path) -> None:
    text = "name, temperature.gpu, utilization.gpu [%]\n" + "NVIDIA H100 80GB HBM3, 34, 1 %\n" * 2
    code, report = analyzed(run, tmp_path, text)
    assert code == 0 and report["verdict"] == "not judged"


def test_the_table_is_a_part_of_a_mixed_paste() -> None:
    text = "node1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n\n" + PCIE
    kinds = [(p.kind, p.first, p.last) for p in split_parts(text)]
    assert kinds == [("nccl-log", 1, 1), ("nvidia-smi-csv", 3, 6)]
