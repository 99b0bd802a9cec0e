"""NCCL's own XML parser (src/graph/xml.cc, compiled from the verbatim excerpt in tests/fixtures/nccl_topo/nccl)
reads every written file to the elements and attributes any XML parser reads, with every attribute NCCL's
topology builder requires (topo.cc: ``xmlGetAttrStr``/``xmlGetAttrInt`` fail on a missing one)."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from topofiles import CAPTURES, PROVIDER_FILES, etree_reads, nccl_reads

Run = Callable[..., tuple[int, str, str]]
REQUIRED = {"system": {"version"}, "cpu": {"numaid"}, "pci": {"busid", "class", "link_speed", "link_width"},
            "nvlink": {"target", "count", "tclass"}}  # fmt: skip


@pytest.mark.parametrize("vm", sorted(PROVIDER_FILES))
def test_nccl_reads_the_providers_files(nccl_load: Path, vm: str) -> None:
    """The parser as compiled here reads what NCCL reads in production."""
    path = CAPTURES / PROVIDER_FILES[vm]
    assert nccl_reads(nccl_load, path) == etree_reads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("vm", [*sorted(PROVIDER_FILES), "azure-ndv5-flat-vm"])
def test_nccl_reads_the_written_file_as_any_xml_parser_does(
    nccl_load: Path, box: Callable[[str], Path], run: Run, tmp_path: Path, vm: str
) -> None:
    root = box(vm)
    code, _, _ = run("nccl-topo", "--sysfs-root", str(root), "-o", str(tmp_path / "topo.xml"))
    assert code == 0
    read = nccl_reads(nccl_load, tmp_path / "topo.xml")
    assert read == etree_reads((tmp_path / "topo.xml").read_text(encoding="utf-8"))
    for _, name, attrs in read:
        assert REQUIRED.get(name, set()) <= set(attrs), (name, attrs)
    assert {name for _, name, _ in read} >= {"system", "cpu", "pci"}


def test_the_reports_and_switch_groups_files_are_read_by_nccl(
    nccl_load: Path, box: Callable[[str], Path], run: Run, tmp_path: Path
) -> None:
    root = box("azure-ndv5-flat-vm")
    code, _, _ = run("nccl-topo", "--sysfs-root", str(root), "--switch", "GPU0,mlx5_ib0", "-o", str(tmp_path / "a.xml"))
    assert code == 0
    read = nccl_reads(nccl_load, tmp_path / "a.xml")
    stand_in = [attrs for _, name, attrs in read if attrs.get("busid", "").startswith("ffff:ff:")]
    assert len(stand_in) == 1 and stand_in[0]["class"] == "0x060400" and stand_in[0]["link_width"] == "16"


def test_elementtrees_short_empty_tags_would_give_nccl_a_nameless_attribute(nccl_load: Path, tmp_path: Path) -> None:
    """Why the file writes end tags: NCCL's tokenizer reads the space before "/>" as one more attribute."""
    element = ET.Element("system", {"version": "1"})
    ET.SubElement(element, "cpu", {"numaid": "0"})
    (tmp_path / "short.xml").write_text(ET.tostring(element, encoding="unicode"), encoding="utf-8")
    assert " />" in (tmp_path / "short.xml").read_text(encoding="utf-8")
    done = subprocess.run([str(nccl_load), str(tmp_path / "short.xml")], capture_output=True, text=True, check=False)
    assert "cpu\tnumaid=0\t=" in done.stdout
