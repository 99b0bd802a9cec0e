"""The readers: one module each, found by listing the package; a sniff that works on part of a paste; the parts of
a mixed paste read once and merged once; what ``analyze`` says it reads made from the readers themselves."""

from __future__ import annotations

import dataclasses
import pkgutil
import re
from pathlib import Path

import pytest

import topoaudit.readers as readers_package
from topoaudit.errors import InputError
from topoaudit.model.facts import Facts
from topoaudit.model.machine import Gpu, Host, Link, Machine, PathLevel
from topoaudit.model.report import SourceInfo
from topoaudit.model.values import Unsupported
from topoaudit.readers import Reader, inputs_sentence, load_text, merge, readers

FIXTURES = Path(__file__).parents[1] / "fixtures"

# One capture of each kind a paste can hold beside others (JSON and XML documents are whole files, never a part).
PARTS = {
    "topo-matrix": "topo/topo-h100-8gpu-stas-ht-1.txt",
    "nvidia-smi-nvlink": "captures/nvlink-2xh100nvl-12-active-6-inactive-constructed.txt",
    "p2p-capture": "captures/p2p-2xl4-cns-stas-1.txt",
    "nvbandwidth": "captures/nvbandwidth-8gpu-d2d-ce-readme-example-1.txt",
    "nccl-tests": "nccltests/derived-8xh200-ring-env-340.txt",
    "nccl-log": "nccl/constructed-2.13-channel-busid-shm.txt",
    "nccl-ras": "ras/doc-dead.txt",
}
SHELL = "user@gpu-node:~$ uptime\n 10:12:01 up 3 days,  2:11,  1 user,  load average: 0.10, 0.08, 0.03\n"


def test_every_module_of_the_package_is_one_reader_and_every_reader_is_tried() -> None:
    modules = [m.name for m in pkgutil.iter_modules(readers_package.__path__)]
    found = readers()
    assert sorted(r.name for r in found) == sorted({r.name for r in found})  # one name each
    assert len(found) == len(modules)
    assert [r.priority for r in found] == sorted(r.priority for r in found)
    whole = [r for r in found if not r.fallback]
    assert whole[-1].name == "topo-matrix"  # the loosest sniff goes last
    assert [r.name for r in found if r.fallback] == ["known-messages"]  # then what no reader took, part by part
    for r in found:
        assert r.describes and all(other in {x.name for x in found} for other in r.beside)


@pytest.mark.parametrize("kind", sorted(PARTS))
def test_a_reader_knows_its_capture_as_part_of_a_longer_paste(kind: str) -> None:
    text = (FIXTURES / PARTS[kind]).read_text(encoding="utf-8")
    assert next(r for r in readers() if r.name == kind).sniff(SHELL + text + "\n" + SHELL)
    assert load_text(SHELL + text, "paste.txt").source.kind == kind


def test_what_analyze_reads_is_said_from_the_readers(run) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("analyze", "--help")
    assert code == 0
    flat = re.sub(r"(\w)- (\w)", r"\1-\2", " ".join(out.split()))  # "kernel- log": wrapped at its hyphen
    for r in readers():
        assert r.describes in flat, r.name
    with pytest.raises(InputError) as refused:
        load_text("nothing\nhere\n", "junk.txt")
    assert f"not a format topoaudit reads (expected {inputs_sentence()})" in str(refused.value)


def _part(machine: Machine, kind: str, **facts: object) -> tuple[Reader, Facts]:
    reader = next(r for r in readers() if r.name == kind)
    return reader, Facts(machine, SourceInfo(kind, "paste.txt", description=f"{kind} alone"), what=kind, **facts)


def test_the_part_with_links_frames_the_machine_and_the_others_join_what_they_declare() -> None:
    ports = Machine("nvidia-smi-nvlink", (Gpu(0, name="NVIDIA H100 NVL", serial="S0"), Gpu(1, name="NVIDIA H100 NVL")))
    links = Machine("topo-matrix", (Gpu(0), Gpu(1)), links=(Link("GPU0", "GPU1", "NV12", PathLevel.NVLINK, 12),))
    merged = merge([_part(ports, "nvidia-smi-nvlink"), _part(links, "topo-matrix")])
    assert merged.machine.links == links.links and merged.machine.source == "nvidia-smi-nvlink"
    assert [g.name for g in merged.machine.gpus] == ["NVIDIA H100 NVL"] * 2  # the reader joins the GPUs' names
    assert merged.machine.gpus[0].serial == links.gpus[0].serial  # and nothing it does not declare
    assert merged.source.kind == "topo-matrix"  # a capture beside the `topo -m` of its box
    assert merged.source.description == "topo-matrix with nvidia-smi-nvlink beside it"


def test_a_new_kind_of_fact_merges_with_no_change_to_the_merge() -> None:
    """Every field of Facts whose default is 'not given' is taken from the first part that holds it."""
    log = Machine("nccl-log", (Gpu(0),), host=Host(hostname="node-7"))
    links = Machine("topo-matrix", (Gpu(0), Gpu(1)), links=(Link("GPU0", "GPU1", "SYS", PathLevel.SYS),))
    summary = {"communicators": []}
    merged = merge([_part(log, "nccl-log", inspector=summary), _part(links, "topo-matrix")])
    assert merged.inspector == summary and merged.machine.host.hostname == "node-7"
    assert merged.source.kind == "nccl-log"  # a log is no capture: it names the paste
    assert merged.source.description == "nccl-log alone, with the topo-matrix pasted beside it"
    kinds = {f.name for f in dataclasses.fields(Facts) if isinstance(f.default, Unsupported)}
    pasted = {"signatures", "smi_query", "health", "graph_print", "setpci_acs", "python_session"}
    assert kinds == {"bench", "nccl", "captures", "inspector", "ras"} | pasted
