"""`--format prometheus`: what node_exporter's textfile collector reads, parsed back with prometheus-client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli as run
from fakebox import make_box
from prometheus_client.parser import text_string_to_metric_families

from topoaudit.render.prometheus import dcgm_bus_id

NCCL_TESTS = Path(__file__).parents[1] / "fixtures" / "nccltests"


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Sample name -> [(labels, value)], as Prometheus reads the exposition."""
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def value(found: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str) -> float:
    matches = [v for have, v in found[name] if all(have.get(k) == want for k, want in labels.items())]
    assert len(matches) == 1, (name, labels, found.get(name))
    return matches[0]


def test_live_audit_of_a_broken_box_writes_a_textfile_that_joins_with_dcgm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("nvlink-down", tmp_path, monkeypatch)
    collector_dir = tmp_path / "textfile"
    collector_dir.mkdir()
    target = collector_dir / "topoaudit.prom"
    common = ("--sysfs-root", str(box.root), "--smi-timeout", "2")
    code, _, err = run(capsys, "audit", *common, "--format", "prometheus", "-o", str(target))
    assert code == 1, err
    assert [p.name for p in collector_dir.iterdir()] == ["topoaudit.prom"]  # no temporary file left behind
    text = target.read_text()
    assert text.endswith("\n")
    found = samples(text)
    assert all(name.startswith("topoaudit_") for name in found)

    _, out, _ = run(capsys, "audit", *common, "--format", "json")
    report = json.loads(out)
    host = report["host"]["hostname"]
    assert value(found, "topoaudit_verdict", verdict="fail", Hostname=host) == 1
    assert value(found, "topoaudit_verdict", verdict="pass", Hostname=host) == 0
    assert value(found, "topoaudit_exit_code") == 1
    for finding in report["findings"]:
        assert value(found, "topoaudit_findings", code=finding["code"], severity=finding["severity"]) >= 1
    assert value(found, "topoaudit_findings_by_severity", severity="fail") == sum(
        f["severity"] == "fail" for f in report["findings"]
    )
    assert value(found, "topoaudit_nvlink_domains") == len(report["domains"])

    gpu3 = report["gpus"][3]
    ports = gpu3["nvlink_ports"]
    labels = {"gpu": "3", "UUID": gpu3["uuid"], "pci_bus_id": "00000000:3B:00.0", "Hostname": host}
    assert value(found, "topoaudit_nvlink_links", **labels) == len(ports)
    assert value(found, "topoaudit_nvlink_active_links", **labels) == len(ports) - 2  # links 3 and 5 down
    # counters: `_total`, summed over the GPU's ports (scenario: link 3 1542 replays, link 1 4)
    assert value(found, "topoaudit_nvlink_errors_total", kind="replay", **labels) == 1542 + 4
    assert value(found, "topoaudit_nvlink_errors_total", kind="crc_flit", **labels) == 310
    assert "# TYPE topoaudit_nvlink_errors_total counter" in text


def test_measured_busbw_is_in_bytes_per_second(capsys: pytest.CaptureFixture[str]) -> None:
    source = str(NCCL_TESTS / "derived-8xh200-slow-busbw-scaled.txt")
    _, out, _ = run(capsys, "analyze", source, "--format", "json")
    groups = json.loads(out)["bench"]["groups"]
    _, text, _ = run(capsys, "analyze", source, "--format", "prometheus")
    found = samples(text)
    measured = [g for g in groups if isinstance(g["plateau_busbw_gbps"], float)]
    assert measured
    for group in measured:
        busbw = value(found, "topoaudit_allreduce_busbw_bytes_per_second", group=group["name"])
        assert busbw == pytest.approx(group["plateau_busbw_gbps"] * 1e9)
        sizes = [labels["size_bytes"] for labels, _ in found["topoaudit_allreduce_busbw_bytes_per_second"]]
        assert str(group["plateau_size_bytes"]) in sizes


def test_wrong_elements_are_a_counter(capsys: pytest.CaptureFixture[str]) -> None:
    source = str(NCCL_TESTS / "derived-gh200-wrong-elements.txt")
    _, out, _ = run(capsys, "analyze", source, "--format", "json")
    rows = [r for g in json.loads(out)["bench"]["groups"] for r in g["rows"]]
    wrong = sum(r["wrong"] for r in rows if isinstance(r["wrong"], int))
    assert wrong > 0
    _, text, _ = run(capsys, "analyze", source, "--format", "prometheus")
    assert sum(v for _, v in samples(text)["topoaudit_allreduce_wrong_elements_total"]) == wrong


def test_a_pasted_matrix_has_no_placeholder_labels_and_counts_its_domains(capsys: pytest.CaptureFixture[str]) -> None:
    _, text, _ = run(capsys, "analyze", "--example", "h200-nvl-split", "--format", "prometheus")
    found = samples(text)
    assert not any("Hostname" in labels or "UUID" in labels for rows in found.values() for labels, _ in rows)
    sizes = sorted(v for _, v in found["topoaudit_nvlink_domain_size_gpus"])
    assert value(found, "topoaudit_nvlink_domains") == len(sizes) > 1
    assert value(found, "topoaudit_nvlink_domain_size_max_gpus") == max(sizes)
    assert value(found, "topoaudit_gpus") == sum(sizes)
    assert value(found, "topoaudit_report_info", demo="true", source_kind="example") == 1


@pytest.mark.parametrize(
    ("sysfs", "dcgm"), [("0000:3b:00.0", "00000000:3B:00.0"), ("0001:c1:00.1", "00000001:C1:00.1")]
)
def test_bus_ids_are_spelled_as_dcgm_exporter_spells_them(sysfs: str, dcgm: str) -> None:
    assert dcgm_bus_id(sysfs) == dcgm
