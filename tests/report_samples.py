"""Reports for the renderer, bundle and redaction tests: hostile strings, identities, bench results."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import sys
from pathlib import Path
from typing import Any

from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow, PairBw, RankInfo
from topoaudit.model.machine import Gpu, Host, Link, Machine, Nic, level_from_code
from topoaudit.model.report import AuditOptions, Report, SourceInfo
from topoaudit.pipeline import analyze

GENERATED_AT = "2026-11-30T00:00:00+00:00"


def _tool(name: str) -> Any:
    """A repository tool (``tools/NAME.py``, not part of the package), imported by path."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parents[1] / "tools" / f"{name}.py"
        )
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


regen = _tool("regen_examples")
docs = _tool("regen_docs")  # the tables of docs/ made from topoaudit's registries
example_report = regen.example_report
expected_files, stale, BUNDLED, DEFAULT_DIR = regen.expected_files, regen.stale, regen.BUNDLED, regen.DEFAULT_DIR

HOSTILE = (
    "<script>alert('x')</script><img src=http://evil.example/p.png onerror=alert(2)>"
    "\"'&amp;[link](http://evil.example/l)![img](http://evil.example/i.png)`code`|pipe*em*_u_\x07"
)

HOSTNAME = "gpu-node-17.dc3.corp.example"
SERIALS = [f"16549220065{k:02d}" for k in range(8)]
UUIDS = [f"GPU-3c2f6b1e-90a4-4e7c-8d1b-{k:012x}" for k in range(8)]
IP = "10.23.4.117"
IPV6 = "fe80::1c2d:3eff:fe4f:5a6b"
MAC = "b8:ce:f6:12:34:56"


def split_machine(
    *, n: int = 8, host: Host | None = None, name: str = "NVIDIA H200 NVL", with_ids: bool = False
) -> Machine:
    """``n`` GPUs in NVLink domains of 4 (NV6) joined over SYS, two NICs, NUMA per half."""
    gpus = []
    for i in range(n):
        extra: dict[str, object] = {}
        if with_ids:
            extra = {"serial": SERIALS[i % 8], "uuid": UUIDS[i % 8], "pci_bus_id": f"00000000:{0x18 + i:02x}:00.0"}
        gpus.append(
            Gpu(
                index=i,
                name=name,
                numa_nodes=(0 if i < n // 2 else 1,),
                cpu_affinity=tuple(range(0, 48)) if i < n // 2 else tuple(range(48, 96)),
                **extra,  # type: ignore[arg-type]
            )
        )
    links = []
    for i, j in itertools.combinations(range(n), 2):
        code = "NV6" if i // 4 == j // 4 else "SYS"
        level, count = level_from_code(code)
        links.append(Link(f"GPU{i}", f"GPU{j}", code, level, count))
    nics = (Nic("NIC0", device="mlx5_0"), Nic("NIC1", device="mlx5_1"))
    for nic, near in (("NIC0", 0), ("NIC1", n - 1)):
        for i in range(n):
            code = "PIX" if i == near else ("NODE" if (i < n // 2) == (near < n // 2) else "SYS")
            level, count = level_from_code(code)
            links.append(Link(f"GPU{i}", nic, code, level, count))
    return Machine("test", tuple(gpus), nics, tuple(links), host or Host())


def report_of(machine: Machine, *, source: SourceInfo | None = None, tp: int = 8, **kw: object) -> Report:
    return analyze(
        machine,
        source=source or SourceInfo("test", "report_samples"),
        options=AuditOptions(tp=tp),
        generated_at=GENERATED_AT,
        **kw,  # type: ignore[arg-type]
    )


def hostile_report() -> Report:
    """Every free-text field a machine controls carries markup, script, links and control characters."""
    host = Host(hostname=HOSTILE, product=HOSTILE, driver_version=HOSTILE)
    machine = split_machine(host=host, name=HOSTILE)
    machine = dataclasses.replace(machine, nics=(Nic("NIC0", device=HOSTILE), Nic("NIC1", device="mlx5_1")))
    return report_of(machine, source=SourceInfo("topo-matrix", HOSTILE), extras={"note": HOSTILE})


def identity_report() -> Report:
    """A report full of identifying values (hostname, serials, UUIDs) and addresses in free text."""
    host = Host(hostname=HOSTNAME, product="ProLiant XL675d Gen10 Plus", driver_version="550.54.15", kernel="6.8.0.101")
    machine = split_machine(host=host, with_ids=True)
    return report_of(
        machine,
        source=SourceInfo("snapshot", f"/data/{HOSTNAME}/snapshot.json"),
        extras={"environment": {"MASTER_ADDR": IP, "ib_mac": MAC, "link_local": IPV6, "launcher": f"{HOSTNAME}:29500"}},
    )


def bench_result(n: int = 8, *, host: str = "node") -> BenchResult:
    sizes = [2**k for k in range(10, 31, 2)]

    def rows(peak: float) -> tuple[BenchRow, ...]:
        out = []
        for s in sizes:
            bw = peak * s / (s + 2**22)
            t = s / (bw * 1e3) if bw else 1.0
            out.append(
                BenchRow(size_bytes=s, count=s // 4, dtype="float32", time_us=t, algbw_gbps=bw, busbw_gbps=bw, wrong=0)
            )
        return tuple(out)

    groups = (
        BenchGroup("all", "all", tuple(range(n)), tuple(f"{host}:cuda{i}" for i in range(n)), rows(41.0),
                   plateau_busbw_gbps=41.0, plateau_size_bytes=2**30, expected_busbw_gbps=350.0,
                   expected_basis="ring over NVLink", ratio=41.0 / 350.0),
        BenchGroup("domain0", "domain", (0, 1, 2, 3), tuple(f"{host}:cuda{i}" for i in range(4)), rows(120.0),
                   plateau_busbw_gbps=120.0, plateau_size_bytes=2**30, expected_busbw_gbps=130.0,
                   expected_basis="NV6 x 25 GB/s", ratio=120.0 / 130.0),
    )  # fmt: skip
    pairs = tuple(
        PairBw(a, b, 120.0 if a // 4 == b // 4 else 9.5, 2**28) for a, b in itertools.combinations(range(n), 2)
    )
    ranks = tuple(RankInfo(rank=i, local_rank=i, host=host, device=f"cuda:{i}") for i in range(n))
    return BenchResult(
        source="topoaudit",
        collective="all_reduce",
        backend="nccl",
        world_size=n,
        hosts=(host,),
        ranks=ranks,
        groups=groups,
        status="complete",
        pairs=pairs,
        measured_islands=((0, 1, 2, 3), (4, 5, 6, 7)),
    )
