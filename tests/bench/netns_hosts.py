"""Hosts on one machine for the bench's multi-node tests: network namespaces with their own hostname.

Shared by the two-host and four-host tests: what they need to build namespaces, shape a link, start one
torchrun node per namespace, wait for every node, and remove the namespaces and their processes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
RATE = "200mbit"  # ~25 MB/s; loopback or an unshaped veth runs at hundreds of MB/s or more


def why_not() -> str | None:
    """Say why namespaces cannot be built here (not root, a tool missing), or None when they can."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (iproute2 / util-linux)"
    return None


def sh(*cmd: str) -> None:
    """Run one set-up command, failing loudly."""
    subprocess.run(cmd, check=True, capture_output=True, timeout=20)


def shape(ns: str, dev: str) -> None:
    """Cap what ``dev`` in namespace ``ns`` sends at RATE with a token bucket."""
    sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", RATE,
       "burst", "64kb", "latency", "50ms")  # fmt: skip


def cleanup(namespaces: list[str]) -> None:
    """Kill the processes inside our own namespaces (the ones a test started), then delete the namespaces."""
    for ns in namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def start_node(ns: str, dev: str, hostname: str, torchrun_args: str, bench_args: str) -> subprocess.Popen[str]:
    """Start one torchrun node in namespace ``ns`` under its own hostname, gloo talking over ``dev``."""
    bench = (
        f"hostname {hostname} && exec {sys.executable} -m torch.distributed.run {torchrun_args} "
        f"-m topoaudit bench --backend gloo {bench_args} --timeout 60 --format json"
    )
    env = {
        **os.environ,
        "GLOO_SOCKET_IFNAME": dev,
        "OMP_NUM_THREADS": "1",
        "PYTHONWARNINGS": "ignore",
        "PYTHONPATH": str(REPO),
    }
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c", bench],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_all(procs: list[subprocess.Popen[str]], timeout: float) -> list[tuple[str, str]]:
    """Return each node's (stdout, stderr); a node still running when this ends is killed."""
    try:
        return [p.communicate(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
