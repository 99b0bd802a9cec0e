"""The bundle: every file a ticket needs, written atomically, complete exactly when SHA256SUMS checks."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import report_samples as rs

from topoaudit import bundle as bundle_mod
from topoaudit.bundle import MANIFEST, safe_name, verify_bundle, write_bundle
from topoaudit.errors import InputError


def test_bundle_has_every_format_the_evidence_and_a_checking_manifest(tmp_path: Path) -> None:
    out = tmp_path / "ticket"
    b = write_bundle(rs.report_of(rs.split_machine()), out, {"topo.txt": "GPU0 X NV6\n", "raw.bin": b"\x00\x01"})
    names = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert names == {
        "report.json", "report.md", "report.html", "topology.svg", "junit.xml",
        "evidence/topo.txt", "evidence/raw.bin", MANIFEST,
    }  # fmt: skip
    assert b.files[-1] == MANIFEST
    lines = (out / MANIFEST).read_text().splitlines()
    assert len(lines) == len(names) - 1
    for line in lines:  # sha256sum -c format
        digest, name = line.split("  ", 1)
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert verify_bundle(out) == []
    assert "![Topology" in (out / "report.md").read_text() and "(topology.svg)" in (out / "report.md").read_text()
    assert not list(out.rglob(".*"))  # no temporary files left behind


def test_an_interrupted_write_never_looks_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "b"
    write_bundle(rs.report_of(rs.split_machine()), out)  # an earlier, complete bundle
    real = bundle_mod._write_atomic

    def dying(path: Path, data: bytes) -> None:
        if path.name == "report.html":
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(bundle_mod, "_write_atomic", dying)
    with pytest.raises(KeyboardInterrupt):
        write_bundle(rs.report_of(rs.split_machine(), tp=4), out)
    assert not (out / MANIFEST).exists()
    assert verify_bundle(out) == [f"{MANIFEST} missing: the bundle is incomplete"]


def test_a_tampered_file_fails_verification(tmp_path: Path) -> None:
    write_bundle(rs.report_of(rs.split_machine()), tmp_path)
    (tmp_path / "report.md").write_text("edited")
    assert verify_bundle(tmp_path) == ["report.md: checksum differs"]


def test_evidence_names_cannot_escape_the_bundle(tmp_path: Path) -> None:
    out = tmp_path / "b"
    write_bundle(rs.report_of(rs.split_machine()), out, {"../../etc/passwd": "x", ".hidden": "y", "a/../b c.txt": "z"})
    assert sorted(p.name for p in (out / "evidence").iterdir()) == ["b_c.txt", "hidden", "passwd"]
    assert not (tmp_path / "etc").exists()
    assert safe_name("") == "evidence"


def test_out_must_be_a_directory(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        write_bundle(rs.report_of(rs.split_machine()), f)
