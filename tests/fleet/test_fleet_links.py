"""`fleet` over folders with symbolic links as users and attackers leave them: every real file is judged once,
every entry that cannot be read is named, and neither loses the other nodes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_runner import Run
from fleet_nodes import write_report

from topoaudit.errors import InputError
from topoaudit.fleet.inputs import node_inputs


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """Two node reports, a link that loops (loop.json -> loop.json), a folder linked to itself (self -> .),
    a second link to a report, and a link to nothing."""
    write_report(tmp_path, "gpu01")
    write_report(tmp_path, "gpu02")
    os.symlink("loop.json", tmp_path / "loop.json")
    os.symlink(".", tmp_path / "self")
    os.symlink("gpu01.json", tmp_path / "alias.json")
    os.symlink("gone.json", tmp_path / "dangling.json")
    return tmp_path


def test_each_real_file_is_walked_once_and_each_unreadable_entry_is_named(linked: Path) -> None:
    found = list(node_inputs([str(linked)]))
    readable = [Path(n.path).name for n in found if not n.error]
    assert sorted(readable) == ["alias.json", "gpu02.json"]  # gpu01.json is alias.json's file, reached first
    errors = {Path(n.path).name: n.error for n in found if n.error}
    assert errors == {
        "dangling.json": f"{linked / 'dangling.json'}: no such file (or a symbolic link to a file that does not exist)",
        "loop.json": f"{linked / 'loop.json'}: a symbolic link that loops back on itself (too many levels of "
        "symbolic links)",
    }


def test_a_folder_linked_to_itself_counts_each_node_once(tmp_path: Path, run: Run) -> None:
    write_report(tmp_path, "gpu01")
    write_report(tmp_path, "gpu02")
    os.symlink(".", tmp_path / "self")
    code, out, _ = run("fleet", str(tmp_path))
    assert code == 0
    assert [line for line in out.splitlines() if " | " in line] == ["gpu01 | PASS", "gpu02 | PASS"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists a folder without permission")
def test_an_unlistable_folder_is_named_and_the_others_are_walked(tmp_path: Path) -> None:
    write_report(tmp_path, "gpu01")
    locked = tmp_path / "locked"
    locked.mkdir()
    write_report(locked, "gpu02")
    locked.chmod(0)
    try:
        found = list(node_inputs([str(tmp_path)]))
    finally:
        locked.chmod(0o755)
    assert [(Path(n.path).name, n.error) for n in found] == [
        ("gpu01.json", ""),
        ("locked", f"{locked}: permission denied"),
    ]


def test_a_path_given_that_loops_is_refused_with_the_reason(tmp_path: Path) -> None:
    os.symlink("loop.json", tmp_path / "loop.json")
    with pytest.raises(InputError, match=r"loop\.json: a symbolic link that loops back on itself"):
        list(node_inputs([str(tmp_path / "loop.json")]))


def test_fleet_names_the_loop_and_judges_the_others(linked: Path, run: Run) -> None:
    code, out, _ = run("fleet", str(linked))
    assert code == 1  # an unreadable node fails the fleet
    hosts = [line.split(" | ")[0] for line in out.splitlines() if " | " in line]
    assert hosts.count("gpu01") == 1 and hosts.count("gpu02") == 1
    assert "a symbolic link that loops back on itself" in out
