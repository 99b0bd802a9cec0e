"""Findings from what only NCCL's XML dump or a measured matrix says, through the same path as ``analyze FILE``."""

from __future__ import annotations

from pathlib import Path

import pytest

from topoaudit.app.analyze import AnalyzeRequest, analyze_input
from topoaudit.app.common import GateRequest, MachineInput
from topoaudit.model.finding import Finding
from topoaudit.model.report import Report

CAPTURES = Path(__file__).parents[1] / "fixtures" / "captures"


def _analyze(name: str, **gate: object) -> Report:
    return analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES / name)), GateRequest(**gate))).report  # type: ignore[arg-type]


def _finding(report: Report, code: str) -> Finding:
    found = [f for f in report.findings if f.code == code]
    assert found, [f.code for f in report.findings]
    return found[0]


def test_gpu_with_seventeen_links_on_hgx_h100_fails_and_names_the_gpu() -> None:
    report = _analyze("ncclxml-8xh100-hgx-gpu5-17links-constructed.xml")
    low = _finding(report, "nccl-topo-nvlinks-low")
    assert low.severity.value == "fail"
    assert "GPU5 17" in low.message and "18" in low.message
    assert low.evidence["nvlinks"]["GPU5"] == 17 and low.evidence["nvlinks"]["GPU0"] == 18
    assert "0000:07:00.0 x4" in low.evidence["targets"]["GPU5"]
    assert report.gate.exit_code == 1


def test_unknown_model_is_judged_against_its_siblings(tmp_path: Path) -> None:
    text = (CAPTURES / "ncclxml-8xh100-hgx-gpu5-17links-constructed.xml").read_text().replace('device="0x2330"', "")
    path = tmp_path / "unknown-model.xml"
    path.write_text(text)
    report = analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report
    low = _finding(report, "nccl-topo-nvlinks-low")
    assert low.severity.value == "warn" and "siblings have 18" in low.message


def test_healthy_hgx_h100_has_no_capture_finding() -> None:
    report = _analyze("ncclxml-8xh100-hgx-healthy-constructed.xml")
    assert not {f.code for f in report.findings} & {"nccl-topo-nvlinks-low", "nccl-topo-flattened"}


def test_flattened_vm_view_is_named_with_its_signs_and_the_topo_file_remedy() -> None:
    flat = _finding(_analyze("ncclxml-vm-flattened-2xa100-constructed.xml"), "nccl-topo-flattened")
    assert flat.severity.value == "warn"
    assert 'numaid="-1"' in flat.message and 'link_width="0"' in flat.message
    assert "invisible" in flat.message  # the NVSwitch sentinel target, listed beside the other signs
    assert "NCCL_TOPO_FILE" in flat.remedy


def test_real_azure_ncv4_file_with_blank_links_is_flattened() -> None:
    flat = _finding(_analyze("ncclxml-azure-ncv4-a100pcie-selfloop-nvlink-topofile-1.txt"), "nccl-topo-flattened")
    assert "4 of 4 GPUs" in flat.message and "numaid" not in flat.message


def test_bare_metal_dump_is_not_flattened() -> None:
    report = _analyze("ncclxml-a100-nvswitch-dump-excerpt-1gpu-1nic-1.txt")
    assert "nccl-topo-flattened" not in {f.code for f in report.findings}


def _junit_skips(report: Report) -> dict[str, str]:
    import xml.etree.ElementTree as ET

    from topoaudit.render import render

    suite = ET.fromstring(render(report, "junit")).find("testsuite")
    assert suite is not None
    return {
        str(tc.get("name")): str(skip.get("message"))
        for tc in suite.iter("testcase")
        if (skip := tc.find("skipped")) is not None
    }


def test_junit_marks_capture_codes_judged_only_where_the_capture_is() -> None:
    dump = _junit_skips(_analyze("ncclxml-8xh100-hgx-healthy-constructed.xml"))
    assert "nccl-topo-nvlinks-low" not in dump and "nccl-topo-flattened" not in dump
    assert "nvbandwidth" in dump["nvbandwidth-pair-low"]
    topo = _junit_skips(
        analyze_input(AnalyzeRequest(MachineInput(path=str(CAPTURES.parent / "topo" / "topo-2x5090-phb-1.txt")))).report
    )
    assert "NCCL topology dump" in topo["nccl-topo-nvlinks-low"]


def test_junit_counts_link_states_from_a_pasted_nvlink_status_as_judged() -> None:
    skips = _junit_skips(_analyze("nvlink-2xh100nvl-12-active-6-inactive-constructed.txt"))
    assert "nvlink-link-down" not in skips  # judged from the paste: 12 of 18 by design, a pass
    assert "fabric-not-ready" in skips or "pcie-link-degraded" in skips  # what the paste cannot tell stays skipped


def test_junit_counts_pasted_p2p_as_judged() -> None:
    skips = _junit_skips(_analyze("p2p-h100-8gpu-ok-stas-1.txt"))
    assert "p2p-unavailable" not in skips


EVERY_CAPTURE = sorted(
    p
    for p in CAPTURES.iterdir()
    if p.is_file() and p.name != "PROVENANCE.tsv" and not p.name.startswith("billion-laughs")
)  # provider/ holds the providers' topology files, with their own PROVENANCE.tsv


def test_every_capture_fixture_has_provenance() -> None:
    listed = {line.split("\t")[0] for line in (CAPTURES / "PROVENANCE.tsv").read_text().splitlines()[1:]}
    assert {p.name for p in CAPTURES.iterdir() if p.is_file() and p.name != "PROVENANCE.tsv"} <= listed


@pytest.mark.parametrize("path", EVERY_CAPTURE, ids=lambda p: p.stem)
def test_every_capture_renders_in_every_format_and_round_trips(path: Path) -> None:
    import json

    from topoaudit.model.report import report_from_dict
    from topoaudit.render import render

    report = analyze_input(AnalyzeRequest(MachineInput(path=str(path)))).report
    for fmt in ("console", "markdown", "html", "junit"):
        assert render(report, fmt)
    assert report_from_dict(json.loads(render(report, "json"))) == report
