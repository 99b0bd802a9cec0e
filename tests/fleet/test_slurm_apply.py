"""``fleet --apply``: the scontrol command each drained node gets and the answer the report keeps for it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from topoaudit.errors import EnvironmentUnusable
from topoaudit.exitcodes import ExitCode
from topoaudit.fleet import slurm
from topoaudit.fleet.slurm import apply_drain
from topoaudit.model.fleet import DrainEntry, DrainResult

REASON = "topoaudit: nvlink-degraded GPU3 runs 12 of 18 links"


def _entry(host: str) -> DrainEntry:
    return DrainEntry(host, REASON, f'scontrol update nodename={host} state=drain reason="{REASON}"')


def _fake_scontrol(directory: Path, body: str) -> Path:
    """An executable ``scontrol`` whose shell body decides what it prints and how it exits."""
    directory.mkdir(exist_ok=True)
    fake = directory / "scontrol"
    fake.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return fake


def test_no_node_to_drain_runs_nothing_and_needs_no_scontrol(tmp_path: Path) -> None:
    assert apply_drain((), scontrol=str(tmp_path / "absent")) == ()


def test_without_scontrol_on_path_the_user_is_told_where_to_run_it(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentUnusable) as caught:
        apply_drain((_entry("gpu06"),), scontrol=str(tmp_path / "scontrol"))
    assert str(caught.value) == (
        f"--apply needs Slurm's {tmp_path / 'scontrol'} on PATH (run it on a Slurm controller or login node)"
    )
    assert caught.value.hint == "without --apply the drain commands are printed for you to run"
    assert caught.value.exit_code == ExitCode.UNUSABLE


def test_each_node_is_drained_with_its_reason_as_one_argument(tmp_path: Path) -> None:
    log = tmp_path / "args.log"
    fake = _fake_scontrol(tmp_path / "bin", f'printf "%s|" "$0" "$@" >> {log}; echo >> {log}')
    results = apply_drain((_entry("gpu06"), _entry("gpu07")), scontrol=str(fake))
    assert results == (DrainResult("gpu06", 0, "ok"), DrainResult("gpu07", 0, "ok"))
    assert log.read_text(encoding="utf-8").splitlines() == [
        f"{fake}|update|nodename={host}|state=drain|reason={REASON}|" for host in ("gpu06", "gpu07")
    ]


def test_what_scontrol_printed_is_kept_stdout_then_stderr_without_surrounding_blanks(tmp_path: Path) -> None:
    fake = _fake_scontrol(tmp_path / "bin", 'echo "  node updated"; echo "warning: reason trimmed  " >&2')
    (result,) = apply_drain((_entry("gpu06"),), scontrol=str(fake))
    assert result == DrainResult("gpu06", 0, "node updated\nwarning: reason trimmed")


def test_a_refused_drain_keeps_scontrol_s_exit_code_and_message(tmp_path: Path) -> None:
    fake = _fake_scontrol(tmp_path / "bin", 'echo "slurm_update error: Invalid node name specified" >&2; exit 1')
    results = apply_drain((_entry("gpu99"), _entry("gpu06")), scontrol=str(fake))
    assert results == (
        DrainResult("gpu99", 1, "slurm_update error: Invalid node name specified"),
        DrainResult("gpu06", 1, "slurm_update error: Invalid node name specified"),
    )


def test_a_scontrol_that_hangs_is_given_up_on_and_the_next_node_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slurm, "SCONTROL_TIMEOUT_S", 0.5)
    fake = _fake_scontrol(tmp_path / "bin", 'case "$2" in nodename=gpu06) exec sleep 5;; esac; echo drained')
    results = apply_drain((_entry("gpu06"), _entry("gpu07")), scontrol=str(fake))
    assert results == (
        DrainResult("gpu06", -1, "scontrol did not answer within 0.5 s"),
        DrainResult("gpu07", 0, "drained"),
    )


def test_a_scontrol_that_cannot_start_is_reported_with_the_system_s_reason(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "scontrol"
    fake.parent.mkdir()
    fake.write_text("#!/no/such/interpreter\n", encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    (result,) = apply_drain((_entry("gpu06"),), scontrol=str(fake))
    assert result == DrainResult("gpu06", -1, f"scontrol could not run: [Errno 2] No such file or directory: '{fake}'")
