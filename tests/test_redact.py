"""--redact: hostnames, serials, UUIDs, IP and MAC addresses become stable tokens, in every file."""

from __future__ import annotations

import json
from pathlib import Path

import report_samples as rs

from topoaudit.bundle import verify_bundle, write_bundle
from topoaudit.model.report import report_from_dict
from topoaudit.redact import Redactor, redact_report
from topoaudit.render import FORMATS, render

SECRETS = [rs.HOSTNAME, "gpu-node-17", *rs.SERIALS, *rs.UUIDS, rs.IP, rs.IPV6, rs.MAC]
EVIDENCE_TEXT = f"""==============NVSMI LOG==============
Hostname                              : {rs.HOSTNAME}
Attached GPUs                         : 8
GPU 00000000:18:00.0
    Serial Number                     : {rs.SERIALS[0]}
    Board Serial                      : 1320123456789
    GPU UUID                          : {rs.UUIDS[0]}
    MIG uuid                          : MIG-{rs.UUIDS[1][4:]}
ib0: inet {rs.IP}/16 ether {rs.MAC} link/infiniband 80:00:00:68:fe:80:00:00:00:00:00:00:b8:ce:f6:03:00:12:34:56
node_guid 0x0c42a10300abcdef
ssh root@gpu-node-17 -p 22
"""
EVIDENCE_SECRETS = ["1320123456789", rs.UUIDS[1][4:], "0x0c42a10300abcdef", "b8:ce:f6:03:00:12:34:56"]


def test_same_value_same_token_and_kinds() -> None:
    r = Redactor()
    a = r.text(f"{rs.IP} talks to {rs.IP} via {rs.MAC}")
    assert a == "ip-1 talks to ip-1 via mac-1"
    r.learn("host", rs.HOSTNAME)
    assert r.text(f"ssh {rs.HOSTNAME}; ping gpu-node-17") == "ssh host-1; ping host-1"
    assert r.summary() == {"host": 1, "mac": 1, "ip": 1}


def test_versions_and_bus_ids_are_not_mistaken_for_addresses() -> None:
    r = Redactor()
    for s in ("0000:18:00.0", "00000000:18:00.0", "550.54.15", "2026-11-30T00:00:00+00:00", "NV18", "mlx5_0"):
        assert r.text(s) == s


def test_redacted_report_round_trips_and_says_so() -> None:
    report = redact_report(rs.identity_report())
    data = json.loads(render(report, "json"))
    assert report_from_dict(data) == report
    text = json.dumps(data)
    for secret in SECRETS:
        assert secret not in text, secret
    assert report.machine.host.hostname == "host-1"
    assert [g.serial for g in report.machine.gpus][:2] == ["serial-1", "serial-2"]
    assert report.extras["redaction"]["replaced"]["serial"] == 8
    assert "Redacted" in render(report, "html") and "Redacted" in render(report, "markdown")


def test_every_format_is_clean() -> None:
    report = redact_report(rs.identity_report())
    for fmt in FORMATS:
        out = render(report, fmt)
        for secret in SECRETS:
            assert secret not in out, (fmt, secret)


def test_nothing_redacted_leaks_into_any_file_of_the_bundle(tmp_path: Path) -> None:
    import dataclasses

    report = dataclasses.replace(rs.identity_report(), bench=rs.bench_result(host=rs.HOSTNAME))
    evidence = {
        f"nvidia-smi-q-{rs.HOSTNAME}.txt": EVIDENCE_TEXT,
        "snapshot.json": json.dumps({"hostname": rs.HOSTNAME, "ip": rs.IP}),
        "blob.bin": b"\xff\xfe" + rs.HOSTNAME.encode(),
    }
    bundle = write_bundle(report, tmp_path / "b", evidence, redact=True)
    assert verify_bundle(tmp_path / "b") == []
    files = [p for p in (tmp_path / "b").rglob("*") if p.is_file()]
    assert len(files) == len(bundle.files)
    for path in files:
        blob = path.read_bytes()
        for secret in SECRETS + EVIDENCE_SECRETS:
            assert secret.encode() not in blob, (path.name, secret)
            assert secret not in str(path)
    # one token per value across files: the report's host-1 is the evidence's host-1
    q = next(p for p in files if p.name.startswith("nvidia-smi-q"))
    assert "host-1" in q.name and "Hostname                              : host-1" in q.read_text()
    assert f"Serial Number                     : {bundle.report.machine.gpus[0].serial}" in q.read_text()
    assert "left out" in (tmp_path / "b" / "evidence" / "blob.bin").read_text()
