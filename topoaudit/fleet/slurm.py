"""``--apply``: run the drain list's ``scontrol`` commands and keep what each one answered."""

from __future__ import annotations

import shutil
import subprocess

from topoaudit.errors import EnvironmentUnusable
from topoaudit.model.fleet import DrainEntry, DrainResult

SCONTROL_TIMEOUT_S = 30.0


def apply_drain(entries: tuple[DrainEntry, ...], scontrol: str = "scontrol") -> tuple[DrainResult, ...]:
    """Drain each node with its ``topoaudit:`` reason; EnvironmentUnusable when scontrol is not on PATH."""
    if not entries:
        return ()
    binary = shutil.which(scontrol)
    if binary is None:
        raise EnvironmentUnusable(
            f"--apply needs Slurm's {scontrol} on PATH (run it on a Slurm controller or login node)",
            hint="without --apply the drain commands are printed for you to run",
        )
    results = []
    for entry in entries:
        args = [binary, "update", f"nodename={entry.host}", "state=drain", f"reason={entry.reason}"]
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=SCONTROL_TIMEOUT_S, check=False)
            output = (done.stdout + done.stderr).strip()
            results.append(DrainResult(entry.host, done.returncode, output or "ok"))
        except subprocess.TimeoutExpired:
            results.append(DrainResult(entry.host, -1, f"scontrol did not answer within {SCONTROL_TIMEOUT_S:g} s"))
        except OSError as exc:
            results.append(DrainResult(entry.host, -1, f"scontrol could not run: {exc}"))
    return tuple(results)
