"""The hostile corpus: inputs an attacker or a damaged file hands topoaudit, each with the exit code a user must
get. Small cases are files in tests/fixtures/hostile (see its PROVENANCE.tsv); the large ones and those made of
links are written here from real fixtures into a folder, so no 16 MB file or symbolic-link loop is kept in git.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
HOSTILE = FIXTURES / "hostile"
REPORT = FIXTURES / "fleet" / "report-a100-8gpu-nccltests.json"  # a real saved report with an nccl-tests sweep
SNAPSHOT = FIXTURES / "fleet" / "snapshot-h200.json"
CAPTURES = FIXTURES / "captures"
PROVIDER = CAPTURES / "provider"


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]  # the command line after `topoaudit`, with {dir} for the corpus folder
    exit_code: int  # what the user gets: never 5
    says: str = ""  # a phrase the output or the error sentence holds


def _report() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REPORT.read_text(encoding="utf-8"))
    return data


def _example_report() -> dict[str, Any]:
    """The bundled HGX H100 example saved as a report: its domains name GPUs 0-7."""
    from topoaudit.pipeline import analyze
    from topoaudit.readers import load_example
    from topoaudit.render import render

    loaded = load_example("hgx-h100")
    report = analyze(loaded.machine, source=loaded.source, input_issues=loaded.issues, extras=loaded.extras)
    data: dict[str, Any] = json.loads(render(report, "json"))
    return data


def _saved_report_of(capture: Path) -> dict[str, Any]:
    """A capture judged and saved as a report, as `analyze --format json -o` writes it."""
    from topoaudit.app.common import GateRequest, judge
    from topoaudit.readers import load_path
    from topoaudit.render import render

    data: dict[str, Any] = json.loads(render(judge(load_path(str(capture)), GateRequest(), None), "json"))
    return data


def _with_ras_rank(data: dict[str, Any]) -> dict[str, Any]:
    data["extras"]["nccl_ras"]["communicators"][0]["ranks"][0]["rank"] = "x"
    return data


def _with_inspector_row(data: dict[str, Any]) -> dict[str, Any]:
    data["extras"]["nccl_inspector"]["communicators"][0] = 1
    return data


EXTRAS_CASES = {
    "report-ras-rank-not-a-number.json": (
        FIXTURES / "ras" / "doc-missing-rank.json",
        _with_ras_rank,
        "a rank's number",
    ),
    "report-inspector-row-not-an-object.json": (
        FIXTURES / "inspector" / "constructed-two-hosts-one-slow.jsonl",
        _with_inspector_row,
        "a communicator row is 1",
    ),
}
"""Saved reports whose sections a rule reads again are damaged: `analyze` refuses them (exit 4)."""


def _write(folder: Path | None, name: str, data: object) -> str:
    """Write one case into ``folder`` (None: the cases are only listed) and return its name."""
    if folder is not None:
        path = folder / name
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return name


def _with_indexes(data: dict[str, Any]) -> dict[str, Any]:
    for gpu, index in zip(data["gpus"], (100, -1, 3, 3, 4, 5, 6, 7), strict=False):
        gpu["index"] = index
    return data


def _with_bus_id(data: dict[str, Any]) -> dict[str, Any]:
    data["gpus"][0]["pci_bus_id"] = "0000:18:00:00:00.0"
    return data


def _with_busbw(value: float) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def damage(data: dict[str, Any]) -> dict[str, Any]:
        for group in data["bench"]["groups"]:
            for row in group["rows"][:3]:
                row["busbw_gbps"] = row["algbw_gbps"] = value
        return data

    return damage


def _with_gate_pass(data: dict[str, Any]) -> dict[str, Any]:
    data["findings"].append({"code": "nvlink-degraded", "severity": "fail", "message": "GPU3-GPU5: 12 of 18 links"})
    data["gate"].update(verdict="pass", exit_code=0)
    data["verdict"] = "pass"
    return data


def _with_nics(data: dict[str, Any]) -> dict[str, Any]:
    data["nics"] = [{"label": f"NIC{k}", "device": f"mlx5_{k}"} for k in range(120_000)]
    data["links"] += [
        {"a": "GPU0", "b": f"NIC{k}", "code": "SYS", "level": "SYS", "nvlinks": 0} for k in range(120_000)
    ]
    return data


REPORT_CASES: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], int, str]] = {
    "report-gpu-index-100-minus1-duplicate.json": (_with_indexes, 0, ""),
    "report-bus-id-extra-colons.json": (_with_bus_id, 0, ""),
    "report-busbw-nan.json": (_with_busbw(math.nan), 0, ""),
    "report-busbw-inf.json": (_with_busbw(math.inf), 0, ""),
    "report-busbw-1e308.json": (_with_busbw(1e308), 0, ""),
    "report-busbw-negative.json": (_with_busbw(-5.0), 0, ""),
    "report-gate-edited-to-pass.json": (_with_gate_pass, 4, "the report contradicts itself"),
}
NVLINK = "nvlink-2x3090-status-14gbps-clubrig-1.txt"
P2P_SAMPLE = "p2p-2xrtx6000ada-puget-wrx90-p2pbwlat-1.txt"
CAPTURE_CASES: dict[str, tuple[str, str, str, int, str]] = {
    "nvlink-link-index-5000-digits.txt": (NVLINK, "Link 1:", "Link " + "9" * 5000 + ":", 0, "names no NVLink port"),
    "nvlink-speed-negative.txt": (NVLINK, "Link 1: 14.062", "Link 1: -14.062", 0, "WARN"),
    "nvlink-speed-1e308.txt": (NVLINK, "Link 1: 14.062", "Link 1: 1e308", 0, "is no link speed"),
    "p2p-gpu-label-5000-digits.txt": (
        "p2p-2x3090-nvlink-ok-clubrig-1.txt",
        "GPU1",
        "GPU" + "9" * 5000,
        0,
        "look like `nvidia-smi topo -p2p` output, but no reader could read it",
    ),
    "p2p-sample-row-cut.txt": (P2P_SAMPLE, "     1  52.10 806.22", "     1  52.10", 0, "row left out"),
    "p2p-sample-device-5000-digits.txt": (P2P_SAMPLE, "Device: 1,", "Device: " + "9" * 5000 + ",", 0, "topoaudit PASS"),
    "p2p-sample-peer-5000-digits.txt": (P2P_SAMPLE, "Peer Device=0", "Peer Device=" + "9" * 5000, 0, "topoaudit PASS"),
    "p2p-sample-figure-1e308.txt": (P2P_SAMPLE, "     1  52.10 806.22", "     1  1e308 806.22", 0, "WARN"),
    "inspector-busbw-400-digits.jsonl": (
        "../inspector/constructed-two-hosts-one-slow.jsonl",
        '"coll_busbw_gbs":4.7}',
        '"coll_busbw_gbs":' + "9" * 400 + "}",
        0,
        "is not a bandwidth",
    ),
    "ras-summary-5000-digits.txt": (
        "../ras/doc-healthy.txt",
        "      4          8",
        "      " + "9" * 5000 + "          8",
        4,
        "no GPUs",
    ),
    "ras-json-integer-5000-digits.json": (
        "../ras/doc-missing-rank.json",
        '"rank": 0',
        '"rank": ' + "9" * 5000,
        4,
        "an integer thousands of digits",
    ),
    "ras-json-nested-3000.json": (
        "../ras/doc-missing-rank.json",
        '"nccl_version"',
        '"x": ' + "[" * 3000 + "]" * 3000 + ', "nccl_version"',
        4,
        "nested more than a thousand levels deep",
    ),
    "inspector-integer-5000-digits.jsonl": (
        "../inspector/constructed-two-hosts-one-slow.jsonl",
        '"coll_busbw_gbs":4.7}',
        '"coll_busbw_gbs":' + "9" * 5000 + "}",
        0,
        "an integer thousands of digits long",
    ),
    "inspector-nested-3000.jsonl": (
        "../inspector/constructed-two-hosts-one-slow.jsonl",
        '{"header"',
        '{"x": ' + "[" * 3000 + "]" * 3000 + ', "header"',
        0,
        "nested more than a thousand levels deep",
    ),
}
"""A real capture with one figure no tool prints: (capture, text, its damage, exit code, what the user reads)."""
FORMATS = ("console", "json", "markdown", "html", "junit", "prometheus", "k8s-labels", "remedy")


def corpus_cases() -> list[Case]:
    """Every case of the corpus, small and generated, with its exit code; nothing is written."""
    return write_corpus(None)


def write_corpus(folder: Path | None) -> list[Case]:
    """Write the generated cases into ``folder`` (None: write nothing); every case of the corpus with its exit."""
    cases: list[Case] = []
    for name, body in _json_cases(folder):
        _write(folder, name, body)
        command = "report" if name.startswith("report") else "analyze"
        cases.append(Case(name, (command, "{dir}/" + name), 4, "the JSON"))
        if command == "report":
            cases.append(Case(name + " (analyze)", ("analyze", "{dir}/" + name), 4, "the JSON"))
    for name, (damage, code, says) in REPORT_CASES.items():
        if folder is not None:
            base = _example_report() if damage in (_with_indexes, _with_bus_id) else _report()
            _write(folder, name, damage(copy.deepcopy(base)))
        cases += [Case(f"{name} ({fmt})", ("report", "{dir}/" + name, "--format", fmt), code, says) for fmt in FORMATS]
    if folder is not None:
        _write(folder, "report-120000-nics.json", _with_nics(_report()))
    for fmt in ("html", "console", "markdown"):
        args = ("report", "{dir}/report-120000-nics.json", "--format", fmt)
        cases.append(Case(f"report-120000-nics.json ({fmt})", args, 0, "119,744 of its 120,000 NICs"))
    cases += _fleet_cases(folder)
    expected = {"gpu-under-bridge": 1, "two-gpus-one-dev": 4}  # the others pass: NVLink is not judged from them
    for path in sorted(HOSTILE.glob("ncclxml-*-constructed.xml")):
        code = expected.get(path.name.removeprefix("ncclxml-").removesuffix("-constructed.xml"), 0)
        cases.append(Case(path.name, ("analyze", str(path)), code))
    entities = (
        '<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">'
    )
    smi_xml = (  # nvidia-smi -q -x's root with entities that expand tenfold at each level: refused unread
        "smi-xml-entities.xml",
        f'<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [{entities}]>\n'
        "<nvidia_smi_log><driver_version>&c;</driver_version></nvidia_smi_log>\n",
    )
    _write(folder, smi_xml[0], smi_xml[1])
    cases.append(Case(smi_xml[0], ("analyze", "{dir}/" + smi_xml[0]), 4, "declares entities"))
    plain = (
        ("json-nested-3000.json", "[" * 3000 + "]" * 3000),
        ("json-integer-5000-digits.json", '{"a": ' + "9" * 5000 + "}"),
    )
    for name, body in plain:  # JSON that is no report nor snapshot: the loader's own check reads it
        _write(folder, name, body)
        cases.append(Case(name, ("analyze", "{dir}/" + name), 4, "the JSON"))
    tokens = {  # one line of one 200,000-character token: a regex that backtracks over it would take hours
        "digits": "1" * 200_000 + "!",
        "dots": "." * 200_000 + "!",
        "letters": "a" * 200_000 + "!",
        "colons": "a:" * 100_000,
        "spaces": "x" + " " * 200_000 + "!",
    }
    for kind, body in tokens.items():
        name = f"one-token-200000-{kind}.txt"
        _write(folder, name, body + "\n")
        cases.append(Case(name, ("analyze", "{dir}/" + name), 4, "not a format topoaudit reads"))
    numbers = {  # a number too long for Python to turn into an int (4,300 digits) where a reader takes one
        "ray-pid-20000-digits.txt": ("(RayWorkerWrapper pid=" + "1" * 20_000 + ") INFO x", 0, "NOT JUDGED"),
        "nccl-version-5000-digits.txt": ("NCCL version 2." + "9" * 5_000 + ".5+cuda12.4", 0, "NOT JUDGED"),
        "topo-rows-gpu-label-5000-digits.txt": (
            f"GPU{'9' * 5_000}\t X \tNV18\t0-55\t0\nGPU1\tNV18\t X \t0-55\t0",
            0,
            "NV18",
        ),
        "nccl-tests-devices-5000-digits.txt": (
            f"# nThread 1 nGpus {'9' * 5_000} minBytes 8 maxBytes 128M step: 2(factor) warmup iters: 5 iters: 20\n"
            f"#\n# Using devices\n#  Rank {'9' * 5_000} Group  0 Pid  {'9' * 5_000} on node1 device  "
            f"{'9' * 5_000} [0x4f] NVIDIA A800 80GB PCIe",
            0,
            "NOT JUDGED",
        ),
        "nvlink-status-gpu-5000-digits.txt": (
            f"GPU {'9' * 5_000}: NVIDIA A100-PCIE-40GB (UUID: GPU-0a1b2c3d)\n\t Link 0: <inactive>",
            0,
            "inactive",
        ),
        "nccl-log-version-5000-digits.txt": (
            f"node1:1:1 [0] NCCL INFO NCCL version 2.{'9' * 5_000}.3+cuda12.2\n"
            "node1:1:1 [0] NCCL INFO Channel 00/02 :    0   1",
            0,
            "NOT JUDGED",
        ),
        "nvbandwidth-device-5000-digits.txt": (
            f"nvbandwidth Version: v0.4\n\nDevice 0: NVIDIA L40S\nDevice {'9' * 5_000}: NVIDIA L40S\n\n"
            "Running one_to_all_read_sm.\n"
            " Invalid value when checking the pattern at <0x7fac6200e480>\nAborted (core dumped)",
            1,
            "nvbandwidth-data-corruption",
        ),
    }
    for name, (body, code, says) in numbers.items():
        _write(folder, name, body + "\n")
        cases.append(Case(name, ("analyze", "{dir}/" + name), code, says))
    for name, (capture, damage, says) in EXTRAS_CASES.items():
        if folder is not None:
            _write(folder, name, damage(_saved_report_of(capture)))
        cases.append(Case(name, ("analyze", "{dir}/" + name), 4, says))
    for name, (base, before, after, code, says) in CAPTURE_CASES.items():  # real captures with one figure damaged
        if folder is not None:
            text = (CAPTURES / base).read_text(encoding="utf-8")
            assert before in text, (base, before)
            _write(folder, name, text.replace(before, after, 1))
        cases.append(Case(name, ("analyze", "{dir}/" + name), code, says))
    gb300, g5 = PROVIDER / "oci-gb300-2host-mnnvl-constructed.xml", PROVIDER / "aws-g5.48xlarge-static.xml"
    cases.append(Case(gb300.name, ("analyze", str(gb300)), 0, "2 hosts"))
    cases.append(Case(g5.name, ("analyze", str(g5)), 4, "no GPUs"))
    return cases


def _json_cases(folder: Path | None) -> list[tuple[str, str]]:
    """A saved report and a snapshot with a 5,000-digit integer, and nested 3,000 levels deep."""
    if folder is None:
        names = ("report-integer-5000-digits.json", "report-nested-3000.json")
        return [(n, "") for n in (*names, "snapshot-integer-5000-digits.json", "snapshot-nested-3000.json")]
    report, snapshot = REPORT.read_text(encoding="utf-8"), SNAPSHOT.read_text(encoding="utf-8")
    deep = ', "x": ' + "[" * 3000 + "]" * 3000 + "}"
    return [
        ("report-integer-5000-digits.json", report.replace('"exit_code": 0', '"exit_code": ' + "9" * 5000, 1)),
        ("report-nested-3000.json", report.rstrip()[:-1] + deep),
        (
            "snapshot-integer-5000-digits.json",
            re.sub(r'"schema_version": \d+', '"schema_version": ' + "1" * 5000, snapshot),
        ),
        ("snapshot-nested-3000.json", snapshot.rstrip()[:-1] + deep),
    ]


def _fleet_cases(folder: Path | None) -> list[Case]:
    for name in ("links", "self-only") if folder is not None else ():
        (folder / name).mkdir()
        for host in ("gpu01", "gpu02"):
            data = _report()
            data["host"]["hostname"] = host
            _write(folder / name, f"{host}.json", data)
        os.symlink(".", folder / name / "self")
    if folder is not None:
        os.symlink("loop.json", folder / "links" / "loop.json")
        os.symlink("loop.json", folder / "loop.json")
    return [
        Case("fleet: a folder linked to itself", ("fleet", "{dir}/self-only"), 0, "gpu02 | PASS"),
        Case("fleet: a link that loops beside two nodes", ("fleet", "{dir}/links"), 1, "loops back on itself"),
        Case("analyze: a link that loops", ("analyze", "{dir}/loop.json"), 4, "loops back on itself"),
    ]


NEEDS_WIRING: dict[str, str] = {}
"""Cases that still end in exit 5 until a caller of the functions they need is changed: why, for each."""
