"""The providers' published NCCL topology files (tests/fixtures/captures/provider, see its PROVENANCE.tsv): each
is read, host by host, to the GPUs, NICs, NUMA nodes, GPU-NIC pairs and NVLink domains it holds.

``groupings.json`` holds what each file groups, read from the XML tree alone (not by topoaudit) and checked
against the notes on each file; ``provider_files.groupings`` is topoaudit's reading in the same shape, which
tests/nccl_topo/test_provider_roundtrip.py compares the file ``nccl-topo`` writes for the same box with.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_runner import Run
from provider_files import GROUPINGS, PROVIDER, groupings

from topoaudit.errors import InputError
from topoaudit.parse.nccl_xml import parse_nccl_xml, parse_nccl_xml_hosts

FILES = sorted(GROUPINGS)
NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_topo" / "nccl"


def test_every_provider_file_has_a_provenance_row_and_its_groupings() -> None:
    with (PROVIDER / "PROVENANCE.tsv").open(newline="", encoding="utf-8") as handle:
        rows = {row["file"]: row for row in csv.DictReader(handle, delimiter="\t")}
    files = {p.name for p in PROVIDER.glob("*.xml")}
    assert files == set(GROUPINGS) and files | {"groupings.json"} == set(rows)
    assert all(row["commit"] for row in rows.values() if row["repo"] != "DERIVED")
    assert rows["oci-gb300-2host-mnnvl-constructed.xml"]["repo"] == "CONSTRUCTED"


@pytest.mark.parametrize("name", FILES)
def test_each_provider_file_is_read_to_the_groupings_it_holds(name: str) -> None:
    assert groupings((PROVIDER / name).read_text(encoding="utf-8")) == GROUPINGS[name]


def test_the_gb300_two_host_dump_is_read_host_by_host() -> None:
    """Bus ids and dev numbers repeat from host to host; sorting GPUs once across hosts used to raise TypeError."""
    text = (PROVIDER / "oci-gb300-2host-mnnvl-constructed.xml").read_text(encoding="utf-8")
    first, second = parse_nccl_xml_hosts(text, "gb300.xml")
    assert (first.host_hash, second.host_hash) == ("0x7e3f0a1c5b2d4e01", "0x2b9d64e0a7c31f58")
    assert [g.index for g in first.machine.gpus] == [g.index for g in second.machine.gpus] == [0, 1, 2, 3]
    assert [g.rank for g in second.topology.gpus] == [4, 5, 6, 7]
    parsed = parse_nccl_xml(text, "gb300.xml")
    assert parsed.machine == first.machine
    assert parsed.notes[0][1].startswith(
        "the dump holds 2 hosts (NCCL fuses the hosts of a multi-node NVLink domain into one file, each <cpu> "
        "naming its host_hash): this report is of host_hash 0x7e3f0a1c5b2d4e01, with 4 GPU(s); the other host(s), "
        "read the same way: host_hash 0x2b9d64e0a7c31f58 with 4 GPU(s)"
    )


def test_analyze_reads_the_gb300_dump_and_says_which_host_it_judged(run: Run) -> None:
    code, out, err = run("analyze", str(PROVIDER / "oci-gb300-2host-mnnvl-constructed.xml"), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert len(report["gpus"]) == 4 and [d["gpus"] for d in report["domains"]] == [[0, 1, 2, 3]]
    assert {g["architecture"] for g in report["gpus"]} == {"Blackwell"}
    assert any("the dump holds 2 hosts" in i["message"] for i in report["input_issues"])


def test_two_gpus_of_one_host_sharing_a_dev_are_refused_with_a_sentence() -> None:
    text = (PROVIDER / "oci-gb300-2host-mnnvl-constructed.xml").read_text(encoding="utf-8")
    one_host = text.replace("0x2b9d64e0a7c31f58", "0x7e3f0a1c5b2d4e01")
    with pytest.raises(InputError, match=r"^gb300\.xml: two GPUs of one host in the NCCL topology file share dev 0$"):
        parse_nccl_xml(one_host, "gb300.xml")


@pytest.mark.parametrize("name", ["aws-g5.48xlarge-static.xml", "aws-p5.48xlarge-static-2023-nogpu.xml"])
def test_a_file_of_bare_bus_ids_is_read_for_where_it_places_them(name: str) -> None:
    """NCCL reads these files and fills each bus id in from the machine; the file alone names no GPU."""
    parsed = parse_nccl_xml((PROVIDER / name).read_text(encoding="utf-8"), name)
    assert parsed.machine.gpus == () and {d.kind for d in parsed.devices} == {"unknown"}
    (line, note), *_ = parsed.notes
    count = len(GROUPINGS[name][0]["placed"])
    assert note == (
        f"the file names no GPU: it places {count} PCI device(s) on NUMA node(s) 0, 1, {count} of them by bus id "
        "alone (no class, no <gpu> or <nic>: NCCL learns what each is from the machine it runs on); no GPU can be "
        "judged from it"
    )
    assert line == (PROVIDER / name).read_text(encoding="utf-8").splitlines().index('<system version="1">') + 1


def test_analyze_on_the_g5_file_is_bad_input_not_a_crash(run: Run) -> None:
    code, _, err = run("analyze", str(PROVIDER / "aws-g5.48xlarge-static.xml"))
    assert code == 4 and "no GPUs in the input" in err


def test_a_file_with_no_device_at_all_is_refused() -> None:
    with pytest.raises(InputError, match=r"^e\.xml: an NCCL topology file with no GPU and no PCI device in it$"):
        parse_nccl_xml('<system version="1"><cpu numaid="0"></cpu></system>', "e.xml")


@pytest.fixture(scope="module")
def nccl_load(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NCCL's own XML parser (src/graph/xml.cc), compiled from the excerpt kept in tests/fixtures/nccl_topo/nccl."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler to build NCCL's parser")
    binary = tmp_path_factory.mktemp("nccl") / "load_topo_file"
    subprocess.run([compiler, "-std=c++17", "-O1", f"-I{NCCL}", "-o", str(binary), str(NCCL / "load_topo_file.cc")],
                   check=True, capture_output=True)  # fmt: skip
    return binary


@pytest.mark.parametrize("name", FILES)
def test_nccl_reads_every_provider_file_and_the_constructed_dump(nccl_load: Path, name: str) -> None:
    done = subprocess.run([str(nccl_load), str(PROVIDER / name)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    elements = [line.strip(" ").split("\t", 1)[0] for line in done.stdout.splitlines()]
    root = ET.fromstring((PROVIDER / name).read_text(encoding="utf-8"))
    assert elements == [e.tag for e in root.iter()]
