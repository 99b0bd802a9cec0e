"""A saved report whose gate its own findings contradict (edited from FAIL to PASS) is refused, never shown as
PASS with exit 0: the report is an attachment from someone else, and its verdict is what a ticket acts on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import report_samples as rs
from cli_runner import Run

from topoaudit.errors import InputError
from topoaudit.model.report import report_from_dict, report_to_dict


@pytest.fixture(scope="module")
def failing() -> dict:  # type: ignore[type-arg]
    data = report_to_dict(rs.report_of(rs.split_machine(), tp=8))  # TP 8 across two NVLink domains of 4
    assert data["gate"]["verdict"] == "fail" and data["gate"]["exit_code"] == 1
    return json.loads(json.dumps(data))


def _edited(data: dict, **gate: object) -> dict:  # type: ignore[type-arg]
    out = json.loads(json.dumps(data))
    out["gate"].update(gate)
    if "verdict" in gate:
        out["verdict"] = gate["verdict"]
    return out


def test_a_report_as_written_is_read(failing: dict) -> None:  # type: ignore[type-arg]
    assert report_from_dict(failing).gate.verdict == "fail"


def test_a_gate_edited_to_pass_over_a_fail_finding_is_refused(failing: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(InputError) as refused:
        report_from_dict(_edited(failing, verdict="pass", exit_code=0))
    said = "the report contradicts itself: its gate says 'pass' but its findings make it fail"
    assert str(refused.value).startswith(f"{said} (tp-group-crosses-domain at fail)")


def test_an_exit_code_edited_to_0_over_a_fail_finding_is_refused(failing: dict) -> None:  # type: ignore[type-arg]
    why = r"its gate exits 0 but its findings make it exit 1 \(tp-group-crosses-domain at or above --fail-on fail\)"
    with pytest.raises(InputError, match=why):
        report_from_dict(_edited(failing, exit_code=0))


def test_the_top_level_verdict_must_agree_with_the_gate(failing: dict) -> None:  # type: ignore[type-arg]
    edited = json.loads(json.dumps(failing))
    edited["verdict"] = "pass"
    with pytest.raises(InputError, match=r"its verdict says 'pass' but its gate says fail"):
        report_from_dict(edited)


def test_a_stopped_bench_may_exit_130_whatever_it_found(failing: dict) -> None:  # type: ignore[type-arg]
    assert report_from_dict(_edited(failing, exit_code=130)).gate.exit_code == 130


def test_a_hostile_verdict_and_codes_are_quoted_without_control_characters(failing: dict) -> None:  # type: ignore[type-arg]
    edited = _edited(failing, verdict="\x1b[2Jpass")
    edited["findings"][0]["code"] = "\x1b]0;owned\x07"
    with pytest.raises(InputError) as refused:
        report_from_dict(edited)
    assert "\x1b" not in str(refused.value) and "\x07" not in str(refused.value)
    assert "'\\x1b[2Jpass'" in str(refused.value)


def test_report_exits_4_with_the_sentence_not_0_with_pass(failing: dict, tmp_path: Path, run: Run) -> None:  # type: ignore[type-arg]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_edited(failing, verdict="pass", exit_code=0)))
    code, out, err = run("report", str(path), "--format", "console")
    assert code == 4 and "PASS" not in out + err
    assert "topoaudit: error: the report contradicts itself: its gate says 'pass'" in err
    assert "topoaudit: hint: ask for the report as it was written, or audit the machine again" in err
