"""Two "hosts" on one machine: network namespaces joined by a veth pair shaped with ``tc tbf`` far below
loopback, each with its own hostname (UTS namespace), ranks started by torchrun as on two nodes
(``--nnodes 2 --node-rank {0,1}``, ``GLOO_SOCKET_IFNAME`` = the veth end). The report must find both hosts,
measure every pair, and hold the cross-host pairs to the shaped rate (a ceiling no noise can lift). Which
islands the timings form is not asserted from a loaded 2-core runner: the clustering is tested on fixed
bandwidths in test_islands.py.

Needs root and iproute2 (CI runs as root); skipped with the reason otherwise. Namespaces and every process
this test started are removed whatever happens.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

pytestmark = [pytest.mark.netns, pytest.mark.slow]

REPO = Path(__file__).parents[2]
RATE = "200mbit"  # ~25 MB/s; loopback inside a namespace runs at GB/s


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (iproute2 / util-linux)"
    return None


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, timeout=20)


@pytest.fixture
def two_hosts():  # type: ignore[no-untyped-def]
    why = _why_not()
    if why:
        pytest.skip(why)
    tag = f"{os.getpid() % 100000}"
    a, b = f"taA{tag}", f"taB{tag}"
    va, vb = f"vA{tag}", f"vB{tag}"
    try:
        _sh("ip", "netns", "add", a)
        _sh("ip", "netns", "add", b)
        _sh("ip", "link", "add", va, "type", "veth", "peer", "name", vb)
        _sh("ip", "link", "set", va, "netns", a)
        _sh("ip", "link", "set", vb, "netns", b)
        for ns, dev, addr in ((a, va, "10.77.0.1/24"), (b, vb, "10.77.0.2/24")):
            _sh("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            _sh("ip", "-n", ns, "link", "set", dev, "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            _sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", RATE,
                "burst", "64kb", "latency", "50ms")  # fmt: skip
    except subprocess.CalledProcessError as exc:
        _cleanup([a, b])
        pytest.skip(f"cannot build namespaces here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        yield (a, va, "10.77.0.1"), (b, vb, "10.77.0.2")
    finally:
        _cleanup([a, b])


def _cleanup(namespaces: list[str]) -> None:
    for ns in namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:  # only processes inside our own namespaces: the ones this test started
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _node(ns: str, dev: str, hostname: str, node_rank: int, master: str, port: int) -> subprocess.Popen[str]:
    bench = (
        f"hostname {hostname} && exec {sys.executable} -m torch.distributed.run --nnodes 2 --node-rank {node_rank} "
        f"--nproc-per-node 2 --master-addr {master} --master-port {port} -m topoaudit bench --backend gloo "
        "--groups pairs --min-bytes 16M --max-bytes 16M --timeout 60 --format json"
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


def test_pairwise_matrix_and_islands_show_the_two_hosts(two_hosts) -> None:  # type: ignore[no-untyped-def]
    (a, va, addr_a), (b, vb, _addr_b) = two_hosts
    port = 29500 + os.getpid() % 1000
    procs = [_node(a, va, "hostA", 0, addr_a, port), _node(b, vb, "hostB", 1, addr_a, port)]
    try:
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert procs[0].returncode == 0, outs[0][1][-3000:]
    assert outs[1][0].strip() == ""  # only rank 0 (node A) reports
    bench = json.loads(outs[0][0])["bench"]
    hosts = {r["rank"]: r["host"] for r in bench["ranks"]}
    assert hosts == {0: "hostA", 1: "hostA", 2: "hostB", 3: "hostB"}
    bw = {(p["a"], p["b"]): p["busbw_gbps"] for p in bench["pairs"]}
    assert sorted(bw) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] and all(v > 0 for v in bw.values())
    assert all(g["rows"] for g in bench["groups"]), "every pair measured its size"
    cross = [bw[(0, 2)], bw[(0, 3)], bw[(1, 2)], bw[(1, 3)]]
    assert max(cross) < 0.05, f"cross-host pairs cannot beat {RATE}: {bw}"  # 200 Mbit/s = 0.025 GB/s
    assert bench["expected_islands"] == [[0, 1], [2, 3]]  # CPU ranks: one domain per host
    assert sorted(r for island in bench["measured_islands"] for r in island) == [0, 1, 2, 3]
