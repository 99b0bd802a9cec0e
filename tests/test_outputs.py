"""The one writer of user outputs: atomic, fsync'd, and every filesystem failure is one sentence (exit 4)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from topoaudit.errors import OutputError
from topoaudit.exitcodes import ExitCode
from topoaudit.outputs.files import write_directory, write_file


def test_a_file_is_written_whole_with_no_temporary_left(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    write_file(target, '{"new": true}\n')
    assert target.read_text() == '{"new": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_symbolic_link_is_written_through_and_kept(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "latest.json").write_text("old")
    (tmp_path / "link.json").symlink_to(tmp_path / "reports" / "latest.json")
    write_file(tmp_path / "link.json", "new")
    assert (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "reports" / "latest.json").read_text() == "new"


def test_a_new_file_follows_the_umask_like_any_file(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_file(tmp_path / "r.md", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "r.md").stat().st_mode & 0o777 == 0o644


def test_a_missing_parent_directory_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "r.json"
    with pytest.raises(OutputError, match=r"cannot write .*r\.json: the directory .*such does not exist") as err:
        write_file(target, "x")
    assert err.value.exit_code == ExitCode.UNUSABLE == 4
    assert not (tmp_path / "no").exists()


def test_a_path_under_a_regular_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(OutputError, match=r"notes\.txt is a file, not a directory"):
        write_file(tmp_path / "notes.txt" / "sub" / "r.json", "x")


def test_a_directory_as_the_target_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="it is a directory; give a file name"):
        write_file(tmp_path, "x")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc on this system")
def test_proc_does_not_accept_a_report() -> None:
    with pytest.raises(OutputError, match=r"cannot write /proc/topoaudit-report\.json: .+"):
        write_file("/proc/topoaudit-report.json", "x")
    with pytest.raises(OutputError, match=r"cannot write /proc/self/topoaudit-report\.json: .+"):
        write_file("/proc/self/topoaudit-report.json", "x")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_device_is_no_space_left() -> None:
    with pytest.raises(OutputError, match=r"cannot write /dev/full: no space left on the device"):
        write_file("/dev/full", "x" * 100_000)
    assert Path("/dev/full").is_char_device()  # written in place, never renamed over


def _in_private_tmpfs(tmp_path: Path, mount_options: str, code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a private mount namespace with a tmpfs at ``tmp_path/mnt`` (skip where not allowed)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is not installed")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = f'mount -t tmpfs -o {mount_options} tmpfs "{mnt}" || exit 99; exec "{sys.executable}" -c "$0"'
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script, code], capture_output=True, text=True)
    if proc.returncode == 99 or "unshare failed" in proc.stderr:
        pytest.skip(f"cannot mount a private tmpfs here: {proc.stderr.strip()}")
    return proc


WRITE_AND_REPORT = """
import sys
from topoaudit.errors import OutputError
from topoaudit.outputs.files import write_file
try:
    write_file(sys.argv[1] if len(sys.argv) > 1 else {target!r}, "x" * 200_000)
except OutputError as exc:
    print(f"{{exc.exit_code}} {{exc}}")
"""


def test_a_read_only_filesystem_is_named(tmp_path: Path) -> None:
    target = tmp_path / "mnt" / "r.json"
    proc = _in_private_tmpfs(tmp_path, "ro,size=1m", WRITE_AND_REPORT.format(target=str(target)))
    assert proc.stdout.strip() == f"4 cannot write {target}: the filesystem is read-only", proc.stderr


def test_a_full_filesystem_is_named_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "mnt" / "r.json"
    code = WRITE_AND_REPORT.format(target=str(target)) + f"\nimport os; print(os.listdir({str(target.parent)!r}))"
    proc = _in_private_tmpfs(tmp_path, "size=64k", code)
    assert proc.stdout.splitlines() == [f"4 cannot write {target}: no space left on the device", "[]"], proc.stderr


def test_a_directory_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    write_directory(out, {"a.txt": b"1", "sub/b.txt": b"2"})
    write_directory(out, {"c.txt": b"3"})
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["c.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]  # no staging or old copy left beside it


def test_a_directory_under_a_file_or_a_missing_parent_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is a file, not a directory"):
        write_directory(tmp_path / "f" / "bundle", {"a": b"1"})
    with pytest.raises(OutputError, match=r"cannot write .*f: it exists and is not a directory"):
        write_directory(tmp_path / "f", {"a": b"1"})
    with pytest.raises(OutputError, match="does not exist"):
        write_directory(tmp_path / "missing" / "bundle", {"a": b"1"})
    assert not (tmp_path / "missing").exists()


def test_the_current_directory_is_never_swapped_away(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "bundle"
    write_directory(out, {"a.txt": b"1"})
    monkeypatch.chdir(out)
    with pytest.raises(OutputError, match="holds the current directory"):
        write_directory(".", {"b.txt": b"2"})
    assert [p.name for p in out.iterdir()] == ["a.txt"]


def test_a_failure_while_building_leaves_the_old_directory_untouched(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    write_directory(out, {"a.txt": b"old"})
    with pytest.raises(OutputError, match="cannot write"):
        write_directory(out, {"b.txt": b"new", "b.txt/clash": b"x"})  # b.txt cannot also be a directory
    assert [p.name for p in out.iterdir()] == ["a.txt"]
    assert (out / "a.txt").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


def test_cli_o_into_an_unusable_place_is_exit_4_with_one_sentence_naming_the_path(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    targets = [tmp_path / "notes.txt" / "r.json", tmp_path / "missing" / "r.json", Path("/proc/topoaudit-r.json")]
    if Path("/dev/full").exists():
        targets.append(Path("/dev/full"))
    for target in targets:
        command = [sys.executable, "-m", "topoaudit", "analyze", "--example", "hgx-h100", "-o", str(target)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 4, (target, proc.stderr)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("topoaudit: error:")]
        assert len(errors) == 1 and str(target) in errors[0], proc.stderr
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "missing").exists()
