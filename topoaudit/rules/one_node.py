"""Whether a paste's ranks are all on one node: NCCL's sockets then carry nothing between GPUs.

Shared by the rule that names known messages (sockets at info on one node) and by what the gate counts as judged
(those messages alone judge nothing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Severity
from topoaudit.model.nccl import NcclView
from topoaudit.model.paste import Hit
from topoaudit.model.values import Unsupported
from topoaudit.parse.signatures import Signature, catalog

SOCKETS = "nccl-net-socket-fallback"
_NCCL_HOST = re.compile(r"^([^\s:]+):\d+:\d+ \[\d+\]")
_CROSS_NODE = frozenset({"nccl-channel-net-socket"})  # a channel between ranks that runs over the network
_SOCKET_ADDRESS = re.compile(
    r"^\s*\[(\d+)\] NCCL INFO (?:Bootstrap|NET/Socket) ?: Using (?:\[\d+\])?[\w.:-]+?:(\d+\.\d+\.\d+\.\d+)<", re.M
)
"""A rank's line without a host (``[1] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.1<0>``): the first address its
bootstrap or socket transport uses, one per host."""
PLUGIN_FAILURES = frozenset(
    {
        "ofi-getinfo-failed",
        "fi-info-no-provider",
        "ofi-no-optimal-provider",
        "ofi-selected-tcp-provider",
        "efa-installer-no-provider",
        "perftest-no-rdma-device",
    }
)
"""A network plugin loaded for a fabric (EFA) that cannot start or fell back to TCP, or an RDMA test that finds no
RDMA device: the fabric was wanted, so the message says something of the box even where the paste shows one node."""


class _Paste(Protocol):
    """What these questions read of an audit (a RuleContext)."""

    @property
    def nccl(self) -> NcclView | Unsupported: ...
    @property
    def spec(self) -> GpuSpec | None: ...
    @property
    def signatures(self) -> tuple[Hit, ...] | Unsupported: ...
    @property
    def text(self) -> str: ...


def carries_nothing(signature: Signature, found: Iterable[tuple[Hit, Signature]], ctx: _Paste) -> bool:
    """Whether a socket message says nothing of the box.

    Every rank is on one node (``found``: the hits of the message's code): the loopback reaches them all, and
    sockets carry nothing unless the run asked for InfiniBand.
    """
    if signature.id == "nccl-socket-loopback":
        return one_node(found, ctx)
    return (
        signature.code == SOCKETS
        and signature.id not in PLUGIN_FAILURES
        and signature.severity != Severity.INFO
        and one_node(found, ctx)
        and not ib_asked(ctx)
        and not built_for_the_network(found)
    )


_INTERFACE = re.compile(r"\[\d+\](?P<name>[\w.-]+):(?P<address>[^<\s]+)(?:<|\s*$)")
_VIRTUAL = ("lo", "docker", "virbr", "veth", "br-", "cali", "flannel", "cni", "vxlan", "tunl", "weave", "kube", "wg")
"""Interfaces of containers, bridges and overlays (Docker, Calico, Flannel, WireGuard): no NIC behind them."""
MANY_INTERFACES = 4
"""Data interfaces NCCL's socket transport lists beyond which a node is built for traffic between nodes: a NIC for
every GPU or two (eight on an HGX cloud node), where one front-end interface is what a single box has."""


def built_for_the_network(found: Iterable[tuple[Hit, Signature]]) -> bool:
    """Whether NCCL's socket transport lists as many data interfaces as a node built for multi-node jobs has.

    Sockets on such a node mean its RDMA fabric was not found, even where the paste shows one node.
    """
    return any(_data_interfaces(hit.values.get("interfaces", "")) >= MANY_INTERFACES for hit, _ in found)


def _data_interfaces(listed: str) -> int:
    """Count the interfaces of a ``NET/Socket : Using`` line that are NICs: not virtual, not IPv6 link-local."""
    return sum(
        1
        for m in _INTERFACE.finditer(listed)
        if not m["name"].startswith(_VIRTUAL) and not m["address"].lower().startswith("fe80")
    )


def sockets_of_one_node(ctx: _Paste) -> frozenset[int]:
    """Return the lines whose socket messages carry nothing here (:func:`carries_nothing`).

    The rule names them at info; they judge nothing of the box, so a paste of them alone is not judged (they used
    to make a PASS).
    """
    hits = ctx.signatures
    if isinstance(hits, Unsupported):
        return frozenset()
    cat = catalog()
    by_code: dict[str, list[tuple[Hit, Signature]]] = {}
    for hit in hits:
        signature = cat.get(hit.signature)
        by_code.setdefault(signature.code, []).append((hit, signature))
    return frozenset(hit.line for found in by_code.values() for hit, s in found if carries_nothing(s, found, ctx))


def one_node(found: Iterable[tuple[Hit, Signature]], ctx: _Paste) -> bool:
    """Whether the paste shows one host and no channel between nodes (its NCCL log's hosts, the lines' prefixes)."""
    found = list(found)
    if any(s.id in _CROSS_NODE for _, s in found):
        return False
    hosts: set[str] = set()
    if not isinstance(ctx.nccl, Unsupported):
        if _more_ranks_than_a_node(ctx):
            return False
        hosts.update(ctx.nccl.hosts)
    for hit, _ in found:
        if isinstance(hit.host, str):
            hosts.add(hit.host)
        if m := _NCCL_HOST.match(hit.text):
            hosts.add(m.group(1))
    if not hosts and not isinstance(ctx.nccl, Unsupported) and ctx.nccl.transports:
        # no host named anywhere: channels between ranks, none of them over the network, are one host's
        return not any(t.via.startswith(("NET", "COLLNET")) for t in ctx.nccl.transports)
    if not hosts:
        # no host named: the address each rank's sockets use names its host ("Bootstrap : Using [0]eth0:10.0.0.1<0>");
        # one line is one rank, which says nothing of where the others are
        said = {(m.group(1), m.group(2)) for m in _SOCKET_ADDRESS.finditer(ctx.text)}
        return len({rank for rank, _ in said}) >= 2 and len({address for _, address in said}) == 1
    return len(hosts) == 1


def ib_asked(ctx: _Paste) -> bool:
    """Whether the run's settings ask for InfiniBand/RoCE, so that sockets are a setup that failed.

    NCCL_IB_DISABLE=0, NCCL_IB_HCA or NCCL_NET=IB: even where the paste shows one node.
    """
    if isinstance(ctx.nccl, Unsupported):
        return False
    for setting in ctx.nccl.settings:
        value = str(setting.value).strip().rstrip(".")
        if (setting.name, value) == ("NCCL_IB_DISABLE", "0") or setting.name == "NCCL_IB_HCA":
            return True
        if setting.name == "NCCL_NET" and value.upper() == "IB":
            return True
    return False


def _more_ranks_than_a_node(ctx: _Paste) -> bool:
    """Whether the communicator spans nodes by its own numbers, however few of its hosts the paste shows.

    It does when a rank says nNodes above 1, or when it has more ranks than one node holds (the model's standard
    node, else 8 GPUs).
    """
    log = ctx.nccl
    assert not isinstance(log, Unsupported)
    if any(isinstance(r.nodes_in_comm, int) and r.nodes_in_comm > 1 for r in log.ranks):
        return True
    per_node = ctx.spec.node_gpus if ctx.spec is not None else 8
    return isinstance(log.comm_size, int) and log.comm_size > per_node
