"""The JSON report is the canonical artefact: it round-trips into the same objects and refuses what it
cannot read."""

from __future__ import annotations

import json

import pytest
from builders import machine, split_4_4

from topoaudit.errors import InputError
from topoaudit.model.report import AuditOptions, SourceInfo, report_from_dict, report_from_json, report_to_dict
from topoaudit.pipeline import analyze


def _report():  # type: ignore[no-untyped-def]
    return analyze(
        machine(8, split_4_4, nics={"NIC0": lambda i: "PXB" if i < 2 else "SYS"}),
        source=SourceInfo("test", "builder"),
        options=AuditOptions(tp=8, expect_domain=8),
        generated_at="2026-11-30T00:00:00+00:00",
    )


def test_round_trip_is_lossless() -> None:
    report = _report()
    data = json.loads(json.dumps(report_to_dict(report)))
    assert report_from_dict(data) == report


def test_json_has_the_documented_top_level_fields() -> None:
    data = report_to_dict(_report())
    for key in ("schema_version", "gpus", "nics", "links", "domains", "findings", "verdict", "placements", "gate"):
        assert key in data
    assert data["domains"][0]["gpus"] == [0, 1, 2, 3] and data["domains"][0]["all_pairs"] is True
    assert data["verdict"] == "fail"
    # absent facts carry their reason, never null / "N/A"
    assert data["gpus"][0]["serial"] == {
        "status": "unsupported",
        "source": "model",
        "reason": "not provided by this source",
    }
    assert data["options"]["gpu_model"]["reason"] == "not requested"
    assert "null" not in json.dumps(data)


def test_the_schema_version_is_a_contract() -> None:
    # A literal on purpose: changing the JSON report's shape is a decision, made here and in the changelog.
    data = report_to_dict(_report())
    assert data["schema_version"] == 1 and next(iter(data)) == "schema_version"
    assert data["plan"] == {"status": "unsupported", "source": "options", "reason": "not requested"}
    assert data["bench"] == {"status": "unsupported", "source": "bench", "reason": "not run"}
    assert data["policy"] == {"status": "unsupported", "source": "policy", "reason": "no policy given"}


def test_newer_schema_is_refused_clearly() -> None:
    data = report_to_dict(_report())
    data["schema_version"] = 2
    with pytest.raises(InputError, match=r"schema_version 2 is newer than this topoaudit understands \(1\)"):
        report_from_dict(data)


def test_damaged_report_names_the_field() -> None:
    data = report_to_dict(_report())
    data["domains"][0]["gpus"] = "zero"
    with pytest.raises(InputError, match=r"domains\[0\]\.gpus"):
        report_from_dict(data)


def test_not_a_report() -> None:
    with pytest.raises(InputError, match="not a topoaudit report"):
        report_from_dict({"hello": 1})


def test_a_saved_report_that_is_not_json_names_its_line() -> None:
    with pytest.raises(InputError, match=r"^saved\.json: not JSON \(line 2: .*\); give a topoaudit report\.json$"):
        report_from_json('{\n  "schema_version": 1,,\n}', "saved.json")
    assert report_from_json(json.dumps(report_to_dict(_report())), "saved.json") == _report()
