"""The bundle: every file a ticket needs, written atomically, complete exactly when SHA256SUMS checks."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import report_samples as rs

from topoaudit.errors import OutputError
from topoaudit.model.machine import Host
from topoaudit.model.report import Report
from topoaudit.outputs import files as outputs
from topoaudit.outputs.bundle import MANIFEST, safe_name, verify_bundle, write_bundle


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


def test_an_interrupted_write_leaves_the_previous_bundle_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "b"
    write_bundle(rs.report_of(rs.split_machine()), out)  # an earlier, complete bundle
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    real = outputs._write_new

    def dying(path: Path, data: bytes) -> None:
        if path.name == "report.html":
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(outputs, "_write_new", dying)
    with pytest.raises(KeyboardInterrupt):
        write_bundle(rs.report_of(rs.split_machine(), tp=4), out)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert verify_bundle(out) == []
    assert [p.name for p in tmp_path.iterdir()] == ["b"]  # the half-built copy is gone


def test_a_tampered_file_fails_verification(tmp_path: Path) -> None:
    write_bundle(rs.report_of(rs.split_machine()), tmp_path / "b")
    (tmp_path / "b" / "report.md").write_text("edited")
    assert verify_bundle(tmp_path / "b") == ["report.md: checksum differs"]


def test_verify_flags_a_file_the_manifest_does_not_list(tmp_path: Path) -> None:
    out = tmp_path / "b"
    write_bundle(rs.report_of(rs.split_machine()), out)
    (out / "evidence").mkdir()
    (out / "evidence" / "other-box.txt").write_text("GPU0 X SYS\n")
    (out / ".hidden").write_text("x")
    assert verify_bundle(out) == [
        ".hidden: not listed in SHA256SUMS",
        "evidence/other-box.txt: not listed in SHA256SUMS",
    ]


def test_a_second_machine_replaces_the_first_bundle_whole(tmp_path: Path) -> None:
    out = tmp_path / "ticket"
    write_bundle(rs.report_of(rs.split_machine()), out, {"box-a-topo.txt": "box A\n", "box-a.snapshot.json": "{}"})
    write_bundle(rs.report_of(rs.split_machine(), tp=4), out, {"box-b-topo.txt": "box B\n"})
    assert sorted(p.name for p in (out / "evidence").iterdir()) == ["box-b-topo.txt"]
    assert verify_bundle(out) == []
    listed = {line.split("  ", 1)[1] for line in (out / MANIFEST).read_text().splitlines()}
    assert listed | {MANIFEST} == {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert [p.name for p in tmp_path.iterdir()] == ["ticket"]


def test_another_hosts_bundle_is_refused_and_kept_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "ticket"
    write_bundle(_of_host("gpu-a01"), out, {"a-topo.txt": "box A\n"})
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(OutputError) as refused:
        write_bundle(_of_host("gpu-b07"), out, {"b-topo.txt": "box B\n"})
    assert str(refused.value) == (
        f"refusing to replace the bundle in {out}: it holds the bundle of host 'gpu-a01', and this report is of "
        "host 'gpu-b07'; give --force to replace it, or another directory to --out"
    )
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    write_bundle(_of_host("gpu-b07"), out, {"b-topo.txt": "box B\n"}, force=True)
    assert sorted(p.name for p in (out / "evidence").iterdir()) == ["b-topo.txt"]
    assert verify_bundle(out) == []


def test_the_same_hosts_bundle_is_replaced_without_force(tmp_path: Path) -> None:
    out = tmp_path / "ticket"
    write_bundle(_of_host("gpu-a01.dc3.example"), out, {"first.txt": "run 1\n"})
    write_bundle(_of_host("gpu-a01"), out, {"second.txt": "run 2\n"})
    assert sorted(p.name for p in (out / "evidence").iterdir()) == ["second.txt"]


def test_a_bundle_whose_report_is_gone_is_kept_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "ticket"
    write_bundle(_of_host("gpu-a01"), out)
    (out / "report.json").unlink()
    with pytest.raises(OutputError, match=r"its report\.json cannot be opened \(no such file or directory\)"):
        write_bundle(_of_host("gpu-a01"), out)
    write_bundle(_of_host("gpu-a01"), out, force=True)
    assert verify_bundle(out) == []


def test_force_never_replaces_a_directory_that_is_not_a_bundle(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputError, match="is not a topoaudit bundle"):
        write_bundle(_of_host("gpu-a01"), tmp_path / "home", force=True)
    assert [p.name for p in (tmp_path / "home").iterdir()] == ["thesis.tex"]


def _of_host(name: str) -> Report:
    return rs.report_of(rs.split_machine(host=Host(hostname=name)))


def test_a_non_empty_directory_that_is_not_a_bundle_is_refused(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputError, match=r"home is not empty and is not a topoaudit bundle \(it has no SHA256SUMS\)"):
        write_bundle(rs.report_of(rs.split_machine()), tmp_path / "home")
    assert [p.name for p in (tmp_path / "home").iterdir()] == ["thesis.tex"]


def test_a_bundle_with_a_file_added_by_hand_is_refused_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "b"
    write_bundle(rs.report_of(rs.split_machine()), out)
    (out / "my-notes.txt").write_text("keep me")
    with pytest.raises(OutputError, match=r"holds files its SHA256SUMS does not list \(my-notes\.txt\)"):
        write_bundle(rs.report_of(rs.split_machine()), out)
    assert (out / "my-notes.txt").read_text() == "keep me"


def test_an_empty_directory_takes_a_bundle(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write_bundle(rs.report_of(rs.split_machine()), tmp_path / "empty")
    assert verify_bundle(tmp_path / "empty") == []


def test_a_bundle_needs_an_existing_parent(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="does not exist"):
        write_bundle(rs.report_of(rs.split_machine()), tmp_path / "no" / "b")
    assert not (tmp_path / "no").exists()


def test_evidence_names_cannot_escape_the_bundle(tmp_path: Path) -> None:
    out = tmp_path / "b"
    write_bundle(rs.report_of(rs.split_machine()), out, {"../../etc/passwd": "x", ".hidden": "y", "a/../b c.txt": "z"})
    assert sorted(p.name for p in (out / "evidence").iterdir()) == ["b_c.txt", "hidden", "passwd"]
    assert not (tmp_path / "etc").exists()
    assert safe_name("") == "evidence"


def test_out_must_be_a_directory(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(OutputError, match="it exists and is not a directory"):
        write_bundle(rs.report_of(rs.split_machine()), f)


def _topoaudit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "topoaudit", *args], capture_output=True, text=True, timeout=120)


def test_cli_out_replaces_a_bundle_and_refuses_other_directories_with_exit_4(tmp_path: Path) -> None:
    out = tmp_path / "ticket"
    assert _topoaudit("analyze", "--example", "hgx-h100", "--out", str(out), "--format", "json").returncode == 0
    assert _topoaudit("analyze", "--example", "hgx-h100", "--out", str(out), "--format", "json").returncode == 0
    other = _topoaudit("analyze", "--example", "pcie-only", "--out", str(out), "--format", "json")
    assert other.returncode == 4 and other.stdout == ""
    assert other.stderr.splitlines() == [
        f"topoaudit: error: refusing to replace the bundle in {out}: it holds the bundle of the input 'hgx-h100', "
        "and this report is of the input 'pcie-only'; give --force to replace it, or another directory to --out"
    ]
    assert "hgx-h100" in (out / "report.json").read_text()
    forced = _topoaudit("analyze", "--example", "pcie-only", "--out", str(out), "--format", "json", "--force")
    assert forced.returncode in (0, 1), forced.stderr
    assert verify_bundle(out) == []
    assert "pcie-only" in (out / "report.json").read_text() and "hgx-h100" not in (out / "report.json").read_text()

    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("mine")
    (tmp_path / "file").write_text("x")
    for target in (tmp_path / "home", tmp_path / "file" / "ticket", tmp_path / "missing" / "ticket"):
        proc = _topoaudit("analyze", "--example", "hgx-h100", "--out", str(target))
        assert proc.returncode == 4, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if line.startswith("topoaudit: error:")]
        assert len(errors) == 1 and str(target) in errors[0], proc.stderr
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "missing").exists()
