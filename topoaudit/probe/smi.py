"""Run ``nvidia-smi`` with a timeout and keep its text verbatim (it cross-checks NVML; it is never parsed here).

``nvidia-smi`` text is "not guaranteed to be backwards compatible", has printed "Failed to run topology
matrix" under gVisor and taken 112 s on a half-seated NVLink bridge: every run has a timeout, and a run
that fails or times out is recorded as :class:`~topoaudit.model.values.Failed` with what happened.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

from topoaudit.model.values import Failed, Unsupported
from topoaudit.probe.snapshot import CommandRecord

DEFAULT_TIMEOUT_S = 20.0
COMMANDS = (("topo", "-m"), ("nvlink", "-s"))


def run_smi(
    args: tuple[str, ...], timeout_s: float = DEFAULT_TIMEOUT_S, env: dict[str, str] | None = None
) -> CommandRecord:
    """``nvidia-smi ARGS``: the text on success; Failed with the exit code or timeout; Unsupported when absent."""
    command = " ".join(("nvidia-smi", *args))
    exe = shutil.which("nvidia-smi", path=(env if env is not None else os.environ).get("PATH"))
    if exe is None:
        return CommandRecord(command, text=Unsupported("nvidia-smi", "nvidia-smi is not on PATH"))
    start = time.monotonic()
    try:
        done = subprocess.run(
            [exe, *args], capture_output=True, text=True, timeout=timeout_s, env=env, errors="replace", check=False
        )
    except subprocess.TimeoutExpired:
        return CommandRecord(
            command, text=Failed(command, f"timed out after {timeout_s:g} s"), wall_s=round(time.monotonic() - start, 3)
        )
    except OSError as exc:
        return CommandRecord(command, text=Failed(command, f"could not run: {exc}"))
    wall = round(time.monotonic() - start, 3)
    if done.returncode != 0:
        said = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or ["no output"])[-1]
        return CommandRecord(
            command,
            text=Failed(command, f"exit {done.returncode}: {said[:200]}"),
            exit_code=done.returncode,
            wall_s=wall,
        )
    return CommandRecord(command, text=done.stdout, exit_code=0, wall_s=wall)


def run_all(timeout_s: float = DEFAULT_TIMEOUT_S, env: dict[str, str] | None = None) -> tuple[CommandRecord, ...]:
    """``nvidia-smi topo -m`` and ``nvidia-smi nvlink -s``, one after the other (each with its own timeout)."""
    return tuple(run_smi(args, timeout_s, env) for args in COMMANDS)
