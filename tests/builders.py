"""Hand-built machines for rule and topology tests (the parser has its own tests on real captures)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from topoaudit.model.machine import Gpu, Link, Machine, Nic, level_from_code


def machine(
    n: int,
    code: Callable[[int, int], str],
    *,
    nics: dict[str, Callable[[int], str]] | None = None,
    name: str | None = None,
) -> Machine:
    """``n`` GPUs whose pair (i, j) has the topo -m cell ``code(i, j)``; NICs map a GPU index to a cell."""
    gpus = tuple(Gpu(index=i, name=name) if name else Gpu(index=i) for i in range(n))
    links = []
    for i, j in itertools.combinations(range(n), 2):
        c = code(i, j)
        level, count = level_from_code(c)
        links.append(Link(f"GPU{i}", f"GPU{j}", c, level, count))
    nic_objs = []
    for label, to_gpu in (nics or {}).items():
        nic_objs.append(Nic(label=label))
        for i in range(n):
            c = to_gpu(i)
            level, count = level_from_code(c)
            links.append(Link(f"GPU{i}", label, c, level, count))
    return Machine("test", gpus, tuple(nic_objs), tuple(links))


def nvswitch8(i: int, j: int) -> str:
    return "NV18"


def split_4_4(i: int, j: int) -> str:
    return "NV6" if i // 4 == j // 4 else "SYS"


def pairs(i: int, j: int) -> str:
    return "NV12" if i // 2 == j // 2 else ("NODE" if i // 4 == j // 4 else "SYS")


CUBE_MESH = {
    (0, 1): "NV1", (0, 2): "NV1", (0, 3): "NV2", (0, 4): "NV2", (1, 2): "NV2", (1, 3): "NV1", (1, 5): "NV2",
    (2, 3): "NV2", (2, 6): "NV1", (3, 7): "NV1", (4, 5): "NV1", (4, 6): "NV1", (4, 7): "NV2", (5, 6): "NV2",
    (5, 7): "NV1", (6, 7): "NV2",
}  # fmt: skip


def cube_mesh(i: int, j: int) -> str:
    return CUBE_MESH.get((i, j), "SYS")


def pcie(i: int, j: int) -> str:
    return "PHB" if i // 4 == j // 4 else "SYS"
