"""GPU failure signatures in the kernel log.

Xid 79 (fallen off the bus), Xid 74 (NVLink error), the Blackwell NVLink Xids 144-150, "fallen off the bus"
without an Xid, and NVLink training failures.

The log is read with ``journalctl -k -b`` (this boot's kernel messages) or else ``dmesg``, bounded in time
(a timeout) and in size (the newest lines up to a byte limit). Reading it often needs root or the
``adm``/``systemd-journal`` group: without permission the reading is Unsupported with that reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

from topoaudit.model.host_checks import KernelEvent
from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.parse.health_lines import kernel_events

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_BYTES = 8 * 2**20
_DENIED = ("Operation not permitted", "Permission denied", "insufficient permissions", "not seeing messages")

signatures = kernel_events
"""Every line of ``text`` with a known signature, in log order, each with the GPU's bus id (the recognition lives
in :mod:`topoaudit.parse.health_lines`, shared with pasted kernel-log lines)."""


def read_kernel_log(
    timeout_s: float = DEFAULT_TIMEOUT_S, max_bytes: int = DEFAULT_MAX_BYTES, env: dict[str, str] | None = None
) -> Probed[tuple[KernelEvent, ...]]:
    """Find the failure signatures in this boot's kernel log: ``journalctl -k -b --no-pager -q``, else ``dmesg``.

    Unsupported when neither tool is present or reading is not permitted; Failed when both fail otherwise.
    """
    path = (env if env is not None else os.environ).get("PATH")
    reasons = []
    for command in (["journalctl", "-k", "-b", "--no-pager", "-q", "-o", "short-monotonic"], ["dmesg"]):
        exe = shutil.which(command[0], path=path)
        if exe is None:
            reasons.append(f"{command[0]} is not on PATH")
            continue
        text, why = _run_bounded([exe, *command[1:]], timeout_s, max_bytes, env)
        if text is not None:
            return signatures(text)
        reasons.append(why)
    if all("not permitted" in r or "not on PATH" in r for r in reasons):
        return Unsupported("kernel log", "; ".join(reasons))
    return Failed("kernel log", "; ".join(reasons))


def _run_bounded(
    argv: list[str], timeout_s: float, max_bytes: int, env: dict[str, str] | None
) -> tuple[str | None, str]:
    """Run a log command: (its output, "") -- the newest ``max_bytes`` only -- or (None, why there is none)."""
    name = os.path.basename(argv[0])
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    except OSError as exc:
        return None, (f"{name} could not run: {exc.strerror}")
    chunks: list[bytes] = []
    err: list[bytes] = []
    kept = [0]

    def drain() -> None:
        assert proc.stdout is not None
        while block := proc.stdout.read(65536):
            chunks.append(block)
            kept[0] += len(block)
            while kept[0] > max_bytes and len(chunks) > 1:  # keep the newest lines only
                kept[0] -= len(chunks.pop(0))

    def drain_err() -> None:
        assert proc.stderr is not None
        err.append(proc.stderr.read(4096))

    readers = [threading.Thread(target=drain, daemon=True), threading.Thread(target=drain_err, daemon=True)]
    for reader in readers:
        reader.start()
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None, (f"{name} did not finish within {timeout_s:g} s")
    for reader in readers:
        reader.join(timeout=1.0)
    data = b"".join(chunks)
    if len(data) > max_bytes:  # keep the newest lines: cut the oldest partial line too
        data = data[-max_bytes:].partition(b"\n")[2]
    text = data.decode("utf-8", errors="replace")
    said = b"".join(err).decode("utf-8", errors="replace").strip()
    if any(word in said for word in _DENIED) and not text.strip():
        return None, (f"{name}: reading the kernel log is not permitted ({said.splitlines()[0][:120]})")
    if code != 0:
        return None, (f"{name} exit {code}: {(said.splitlines() or ['no output'])[-1][:120]}")
    return text, ""
