"""NCCL's own view, collected while the bench measures: its INFO log (one file per rank), its topology dump and
its graph dump, written into a directory the run owns, read back as evidence afterwards and handed to the NCCL log
reader. Pure except :func:`read_capture`, which reads that directory; no torch.

What is set, as NCCL documents it (user guide, "Environment Variables" and "Troubleshooting: Logging"):

* ``NCCL_DEBUG=INFO`` and ``NCCL_DEBUG_SUBSYS`` -- the subsystems that print how NCCL saw the box and what it
  chose (``INIT`` rings, trees and channels; ``GRAPH`` the search and its patterns; ``ENV`` the variables in
  force; ``TUNING`` algorithm and protocol; ``NET``, ``P2P``, ``SHM``, ``NVLS`` each transport). ``COLL``,
  ``CALL`` and ``PROXY`` are left out: they print per collective, inside the timed loop.
* ``NCCL_DEBUG_FILE`` with NCCL's ``%h`` (host) and ``%p`` (pid) so every rank writes its own file.
* ``NCCL_TOPO_DUMP_FILE`` and ``NCCL_GRAPH_DUMP_FILE`` -- written once, by rank 0 (NCCL's
  ``NCCL_TOPO_DUMP_FILE_RANK`` / ``NCCL_GRAPH_DUMP_FILE_RANK`` default).

A variable the user set is theirs: it is kept, said so, and its files are collected when they are files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from topoaudit.errors import InputError
from topoaudit.model.nccl import NcclView
from topoaudit.model.values import Unsupported

DEBUG_SUBSYSTEMS = "INIT,ENV,GRAPH,TUNING,NET,P2P,SHM,NVLS"
DEBUG_FILE = "nccl-debug.%h.%p.log"
TOPO_DUMP_FILE = "nccl-topo.xml"
GRAPH_DUMP_FILE = "nccl-graph.xml"
MAX_FILE_BYTES = 64 << 20
"""A debug file past this is cut (a runaway TRACE log must not fill the bundle)."""


@dataclass(frozen=True)
class NcclCapture:
    """What the ranks get to make NCCL write its view into ``directory``, and what was left as the user set it."""

    directory: str
    env: tuple[tuple[str, str], ...]  # variables to set in every rank before NCCL starts
    kept: tuple[tuple[str, str], ...]  # variables the user had set: theirs are used

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(f"NCCL capture: {key}={value} was set by the user and is used as set" for key, value in self.kept)


def plan_capture(directory: str, environ: Mapping[str, str]) -> NcclCapture:
    """The environment that makes NCCL write its log and dumps into ``directory``, sparing what ``environ``
    already sets (the user's choice wins, variable by variable)."""
    wanted = (
        ("NCCL_DEBUG", "INFO"),
        ("NCCL_DEBUG_SUBSYS", DEBUG_SUBSYSTEMS),
        ("NCCL_DEBUG_FILE", os.path.join(directory, DEBUG_FILE)),
        ("NCCL_TOPO_DUMP_FILE", os.path.join(directory, TOPO_DUMP_FILE)),
        ("NCCL_GRAPH_DUMP_FILE", os.path.join(directory, GRAPH_DUMP_FILE)),
    )
    env = tuple((key, value) for key, value in wanted if key not in environ)
    kept = tuple((key, environ[key]) for key, _ in wanted if key in environ)
    return NcclCapture(directory, env, kept)


def read_capture(capture: NcclCapture) -> dict[str, bytes]:
    """The files NCCL wrote, by evidence name (``nccl-debug.<host>.<pid>.log``, ``nccl-topo.xml``, ...): those in
    the run's directory, and the topology and graph dumps where the user pointed them."""
    found: dict[str, bytes] = {}
    directory = Path(capture.directory)
    if directory.is_dir():
        for path in sorted(directory.iterdir()):
            if path.is_file():
                found[path.name] = _read(path)
    for key, value in capture.kept:
        if key in ("NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE") and os.path.isfile(value):
            found.setdefault(Path(value).name, _read(Path(value)))
    return found


def debug_logs(files: Mapping[str, bytes]) -> str:
    """Every rank's INFO log as one text, rank files one after another (NCCL's lines carry host, pid and
    device, so the reader tells the ranks apart as in an interleaved job log)."""
    return "".join(
        content.decode("utf-8", "replace") + ("" if content.endswith(b"\n") else "\n")
        for name, content in sorted(files.items())
        if name.startswith("nccl-debug.") and content
    )


def nccl_view(files: Mapping[str, bytes]) -> NcclView | Unsupported:
    """NCCL's view of the run, read from the ranks' INFO logs; why not, when there is none to read."""
    from topoaudit.parse.nccl_log import parse_nccl_log

    text = debug_logs(files)
    if not text:
        return Unsupported(
            "nccl-log", "the bench's NCCL wrote no INFO log (NCCL_DEBUG or NCCL_DEBUG_FILE set elsewhere)"
        )
    try:
        return parse_nccl_log(text, "the bench's NCCL log")
    except InputError as exc:
        return Unsupported("nccl-log", str(exc))


def _read(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(MAX_FILE_BYTES)


__all__ = ["DEBUG_SUBSYSTEMS", "NcclCapture", "debug_logs", "nccl_view", "plan_capture", "read_capture"]
