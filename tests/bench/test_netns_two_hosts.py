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

import json
import os
import subprocess

import pytest
from netns_hosts import RATE, cleanup, sh, shape, start_node, wait_all, why_not

pytest.importorskip("torch")

pytestmark = [pytest.mark.netns, pytest.mark.slow]


@pytest.fixture
def two_hosts():  # type: ignore[no-untyped-def]
    why = why_not()
    if why:
        pytest.skip(why)
    tag = f"{os.getpid() % 100000}"
    a, b = f"taA{tag}", f"taB{tag}"
    va, vb = f"vA{tag}", f"vB{tag}"
    try:
        sh("ip", "netns", "add", a)
        sh("ip", "netns", "add", b)
        sh("ip", "link", "add", va, "type", "veth", "peer", "name", vb)
        sh("ip", "link", "set", va, "netns", a)
        sh("ip", "link", "set", vb, "netns", b)
        for ns, dev, addr in ((a, va, "10.77.0.1/24"), (b, vb, "10.77.0.2/24")):
            sh("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            shape(ns, dev)
    except subprocess.CalledProcessError as exc:
        cleanup([a, b])
        pytest.skip(f"cannot build namespaces here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        yield (a, va, "10.77.0.1"), (b, vb, "10.77.0.2")
    finally:
        cleanup([a, b])


def _node(ns: str, dev: str, hostname: str, node_rank: int, master: str, port: int) -> subprocess.Popen[str]:
    return start_node(
        ns,
        dev,
        hostname,
        f"--nnodes 2 --node-rank {node_rank} --nproc-per-node 2 --master-addr {master} --master-port {port}",
        "--groups pairs --min-bytes 16M --max-bytes 16M",
    )


def test_pairwise_matrix_and_islands_show_the_two_hosts(two_hosts) -> None:  # type: ignore[no-untyped-def]
    (a, va, addr_a), (b, vb, _addr_b) = two_hosts
    port = 29500 + os.getpid() % 1000
    procs = [_node(a, va, "hostA", 0, addr_a, port), _node(b, vb, "hostB", 1, addr_a, port)]
    outs = wait_all(procs, timeout=240)
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
