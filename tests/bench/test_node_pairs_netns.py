"""Four "hosts" on one machine find their bad node: four network namespaces, each joined to a bridge in a fifth
("the switch") by its own veth pair, each with its own hostname (UTS namespace), one torchrun rank per host
(``--nnodes 4 --node-rank k``, ``GLOO_SOCKET_IFNAME`` = the host's veth end). Host C's link is shaped with
``tc tbf`` at 200 Mbit/s on both ends; the others run at veth speed. The node-pair sweep (two rounds of
disjoint pairs: A+D with B+C at once, then A+C with B+D) must name host C as slow with every partner.

Only what noise cannot move is asserted: a shaped link is a hard ceiling (0.025 GB/s) on both of C's pairs,
and the unshaped pairs only need to beat twice that on a loaded 2-core runner.

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

HOSTS = ("hostA", "hostB", "hostC", "hostD")
SHAPED = "hostC"


@pytest.fixture
def four_hosts():  # type: ignore[no-untyped-def]
    why = why_not()
    if why:
        pytest.skip(why)
    tag = f"{os.getpid() % 100000}"
    switch = f"tpS{tag}"
    hosts = [(f"tp{k}{tag}", f"h{k}{tag}", f"s{k}{tag}", f"10.78.0.{k + 1}") for k in range(len(HOSTS))]
    namespaces = [switch, *(ns for ns, *_ in hosts)]
    try:
        for ns in namespaces:
            sh("ip", "netns", "add", ns)
        sh("ip", "-n", switch, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", switch, "link", "set", "br0", "up")
        for name, (ns, host_end, switch_end, addr) in zip(HOSTS, hosts, strict=True):
            sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", switch_end)
            sh("ip", "link", "set", host_end, "netns", ns)
            sh("ip", "link", "set", switch_end, "netns", switch)
            sh("ip", "-n", switch, "link", "set", switch_end, "master", "br0")
            sh("ip", "-n", switch, "link", "set", switch_end, "up")
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", host_end)
            sh("ip", "-n", ns, "link", "set", host_end, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            if name == SHAPED:  # both directions: what the host sends and what the switch sends it
                shape(ns, host_end)
                shape(switch, switch_end)
    except subprocess.CalledProcessError as exc:
        cleanup(namespaces)
        pytest.skip(f"cannot build namespaces here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        yield [(ns, host_end, addr) for ns, host_end, _switch_end, addr in hosts]
    finally:
        cleanup(namespaces)


def _node(ns: str, dev: str, hostname: str, node_rank: int, master: str, port: int) -> subprocess.Popen[str]:
    return start_node(
        ns,
        dev,
        hostname,
        f"--nnodes {len(HOSTS)} --node-rank {node_rank} --nproc-per-node 1 --master-addr {master} --master-port {port}",
        "--groups nodepairs --min-bytes 16M --max-bytes 16M",
    )


def test_the_node_pair_sweep_names_the_host_whose_link_is_shaped(four_hosts) -> None:  # type: ignore[no-untyped-def]
    master = four_hosts[0][2]
    port = 29500 + os.getpid() % 1000
    procs = [
        _node(ns, dev, name, k, master, port)
        for k, (name, (ns, dev, _)) in enumerate(zip(HOSTS, four_hosts, strict=True))
    ]
    outs = wait_all(procs, timeout=280)
    assert procs[0].returncode == 1, outs[0][1][-3000:]  # findings: exit 1
    report = json.loads(outs[0][0])
    bench = report["bench"]
    assert {r["rank"]: r["host"] for r in bench["ranks"]} == dict(enumerate(HOSTS))
    pairs = {g["name"]: g for g in bench["groups"] if g["kind"] == "nodepair"}
    assert sorted(pairs) == ["nodes hostA+hostC", "nodes hostA+hostD", "nodes hostB+hostC", "nodes hostB+hostD"]
    assert all(g["rows"] and not g["error"] for g in pairs.values()), "every pair measured its size"

    def best_gbps(name: str) -> float:
        row = pairs[name]["rows"][-1]
        return row["size_bytes"] / row["min_us"] / 1e3  # two ranks: busbw = algbw

    shaped = [best_gbps("nodes hostA+hostC"), best_gbps("nodes hostB+hostC")]
    assert max(shaped) < 0.05, f"a pair through {SHAPED} cannot beat {RATE}: {shaped}"  # 200 Mbit/s = 0.025 GB/s
    slow = [f for f in report["findings"] if f["code"] == "bench-node-slow"]
    assert [(f["evidence"]["host"], sorted(f["evidence"]["partners"])) for f in slow] == [
        (SHAPED, ["hostA", "hostB"])
    ], report["findings"]
    assert not [f for f in report["findings"] if f["code"] == "bench-node-link-slow"]
