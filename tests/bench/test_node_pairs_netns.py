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
RATE = "200mbit"  # ~25 MB/s; an unshaped veth through a bridge runs at hundreds of MB/s or more
HOSTS = ("hostA", "hostB", "hostC", "hostD")
SHAPED = "hostC"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (iproute2 / util-linux)"
    return None


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, timeout=20)


def _shape(ns: str, dev: str) -> None:
    _sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", RATE,
        "burst", "64kb", "latency", "50ms")  # fmt: skip


@pytest.fixture
def four_hosts():  # type: ignore[no-untyped-def]
    why = _why_not()
    if why:
        pytest.skip(why)
    tag = f"{os.getpid() % 100000}"
    switch = f"tpS{tag}"
    hosts = [(f"tp{k}{tag}", f"h{k}{tag}", f"s{k}{tag}", f"10.78.0.{k + 1}") for k in range(len(HOSTS))]
    namespaces = [switch, *(ns for ns, *_ in hosts)]
    try:
        for ns in namespaces:
            _sh("ip", "netns", "add", ns)
        _sh("ip", "-n", switch, "link", "add", "br0", "type", "bridge")
        _sh("ip", "-n", switch, "link", "set", "br0", "up")
        for name, (ns, host_end, switch_end, addr) in zip(HOSTS, hosts, strict=True):
            _sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", switch_end)
            _sh("ip", "link", "set", host_end, "netns", ns)
            _sh("ip", "link", "set", switch_end, "netns", switch)
            _sh("ip", "-n", switch, "link", "set", switch_end, "master", "br0")
            _sh("ip", "-n", switch, "link", "set", switch_end, "up")
            _sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", host_end)
            _sh("ip", "-n", ns, "link", "set", host_end, "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            if name == SHAPED:  # both directions: what the host sends and what the switch sends it
                _shape(ns, host_end)
                _shape(switch, switch_end)
    except subprocess.CalledProcessError as exc:
        _cleanup(namespaces)
        pytest.skip(f"cannot build namespaces here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        yield [(ns, host_end, addr) for ns, host_end, _switch_end, addr in hosts]
    finally:
        _cleanup(namespaces)


def _cleanup(namespaces: list[str]) -> None:
    for ns in namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:  # only processes inside our own namespaces: the ones this test started
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _node(ns: str, dev: str, hostname: str, node_rank: int, master: str, port: int) -> subprocess.Popen[str]:
    bench = (
        f"hostname {hostname} && exec {sys.executable} -m torch.distributed.run --nnodes {len(HOSTS)} "
        f"--node-rank {node_rank} --nproc-per-node 1 --master-addr {master} --master-port {port} "
        "-m topoaudit bench --backend gloo --groups nodepairs --min-bytes 16M --max-bytes 16M --timeout 60 "
        "--format json"
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


def test_the_node_pair_sweep_names_the_host_whose_link_is_shaped(four_hosts) -> None:  # type: ignore[no-untyped-def]
    master = four_hosts[0][2]
    port = 29500 + os.getpid() % 1000
    procs = [
        _node(ns, dev, name, k, master, port)
        for k, (name, (ns, dev, _)) in enumerate(zip(HOSTS, four_hosts, strict=True))
    ]
    try:
        outs = [p.communicate(timeout=280) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
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
