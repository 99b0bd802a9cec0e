"""Find the node inputs (lazily), name their hosts, read when they were captured, expand host lists.

A PATH is a node file (report, snapshot, capture), a bundle directory (it holds ``report.json``), a
directory of those (searched recursively, in name order), or a glob of any of them.

Each real file and folder is walked once, however many links lead to it: a folder linked to itself
(``self -> .``) or a second link to the same report does not count a node twice. An entry that cannot be
read (a link that loops, ``loop.json -> loop.json``; a link to nothing; a folder without permission) is
yielded with the reason, so the fleet names it and judges the others.
"""

from __future__ import annotations

import glob
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from topoaudit.errors import InputError, UsageError
from topoaudit.parse.text import read_capture_file, unreadable

NODE_SUFFIXES = (".json", ".txt", ".log", ".out")
BUNDLE_REPORT = "report.json"
_GLOB_CHARS = re.compile(r"[*?\[]")
_CAPTURED_AT = re.compile(r'"(?:generated_at|taken_at)"\s*:\s*"([^"]+)"')


@dataclass(frozen=True)
class NodeInput:
    path: str  # the file to judge
    host_hint: str  # the host name when the input does not carry one (bundle directory or file stem)
    shown_as: str  # what the user gave: the bundle directory or the file
    error: str = ""  # why the entry cannot be read ("" when it can): the node is unreadable, not judged


def node_inputs(paths: Iterable[str]) -> Iterator[NodeInput]:
    """Every node input under ``paths``, one at a time; InputError for a PATH that matches nothing."""
    seen: set[tuple[int, int]] = set()  # (device, inode) of every file and folder walked
    for given in paths:
        matches = [given] if os.path.lexists(given) or not _GLOB_CHARS.search(given) else sorted(glob.glob(given))
        if not matches:
            raise InputError(f"{given}: matches no file")
        for match in matches:
            try:
                os.stat(match)
            except OSError as exc:  # a PATH given is read, or the fleet says why not before judging any
                raise InputError(f"{match}: {unreadable(exc)}") from None
            yield from _walk(Path(match), seen)


def _walk(path: Path, seen: set[tuple[int, int]]) -> Iterator[NodeInput]:
    try:
        info = path.stat()  # through links: a loop or a link to nothing fails here
    except OSError as exc:
        yield NodeInput(str(path), host_from_file(path), str(path), error=f"{path}: {unreadable(exc)}")
        return
    if (info.st_dev, info.st_ino) in seen:  # reached again through a link: walked once
        return
    seen.add((info.st_dev, info.st_ino))
    if not stat.S_ISDIR(info.st_mode):
        yield NodeInput(str(path), host_from_file(path), str(path))
        return
    bundle_report = path / BUNDLE_REPORT
    if bundle_report.is_file():
        yield from _walk_bundle(path, bundle_report, seen)
        return
    try:
        children = sorted(path.iterdir())
    except OSError as exc:
        yield NodeInput(str(path), path.name, str(path), error=f"{path}: {unreadable(exc)}")
        return
    for child in children:
        if child.name.startswith("."):
            continue
        if child.suffix.lower() in NODE_SUFFIXES or _is_dir(child):
            yield from _walk(child, seen)


def _walk_bundle(folder: Path, report: Path, seen: set[tuple[int, int]]) -> Iterator[NodeInput]:
    try:
        info = report.stat()
    except OSError as exc:
        yield NodeInput(str(report), folder.name, str(folder), error=f"{report}: {unreadable(exc)}")
        return
    if (info.st_dev, info.st_ino) not in seen:
        seen.add((info.st_dev, info.st_ino))
        yield NodeInput(str(report), folder.resolve().name, str(folder))


def _is_dir(path: Path) -> bool:
    """A folder, or an entry that cannot be told (a link that loops): the walk then names it."""
    try:
        return stat.S_ISDIR(path.stat().st_mode)
    except FileNotFoundError:
        return False  # a link to nothing without a node suffix: not a node input
    except OSError:
        return True


def host_from_file(path: Path) -> str:
    """``gpu-a01.snapshot.json`` -> ``gpu-a01``: the file name up to its first dot."""
    return path.name.split(".", 1)[0] or path.name


def captured_at(path: str) -> str:
    """When a node report or snapshot was made (its ``generated_at``/``taken_at``); "" for plain captures."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return ""
    if not head.lstrip().startswith("{"):
        return ""
    found = _CAPTURED_AT.search(head)
    if found is None:  # a snapshot records taken_at after its GPUs
        try:
            found = _CAPTURED_AT.search(Path(path).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return ""
    return found.group(1) if found else ""


# --- Slurm-style host lists --------------------------------------------------------------------------


def expected_hosts(spec: str) -> tuple[str, ...]:
    """``--expect-nodes``: a FILE of host names or host lists (one or more a line), or a host list itself.

    Host lists follow Slurm: ``gpu[01-04,07],login1`` -> gpu01 gpu02 gpu03 gpu04 gpu07 login1.
    """
    if os.path.isfile(spec):
        try:
            text = read_capture_file(spec).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{spec}: cannot read the expected nodes ({type(exc).__name__})") from exc
        words = [w for line in text.splitlines() for w in line.split("#", 1)[0].split()]
    else:
        words = spec.split()
    hosts: dict[str, None] = {}
    for word in words:
        for host in expand_hostlist(word):
            hosts.setdefault(host, None)
        if len(hosts) > MAX_HOSTS:
            raise UsageError(f"--expect-nodes {_quoted(spec)} names more than {MAX_HOSTS:,} hosts")
    if not hosts:
        raise UsageError(f"--expect-nodes {_quoted(spec)} names no host")
    return tuple(hosts)


MAX_HOSTS = 1_000_000
"""Hosts one host list may name: more than any fleet has, few enough to hold (a[0-999][0-999][0-999] is not)."""


def expand_hostlist(text: str) -> list[str]:
    """Expand one Slurm host list expression (commas outside brackets separate hosts)."""
    out: list[str] = []
    items = _split_top(text.strip().strip(","))
    if sum(_size(item) for item in items) > MAX_HOSTS:
        raise UsageError(f"host list {_quoted(text)} names more than {MAX_HOSTS:,} hosts")
    for item in items:
        out.extend(_expand_one(item))
    return out


def _size(item: str) -> int:
    """How many hosts ``item`` names, counted without naming them (a malformed range counts 1: it is refused
    with its own sentence)."""
    size = 1
    for group in re.findall(r"\[([^\]]*)\]", item):
        count = 0
        for part in group.split(","):
            bounds = part.split("-")
            if len(bounds) == 2 and bounds[0].isdecimal() and bounds[1].isdecimal():
                count += max(int(bounds[1]) - int(bounds[0]) + 1, 1)
            else:
                count += 1
        size *= count
        if size > MAX_HOSTS:
            return size
    return size


def _quoted(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:59] + "…")


def _split_top(text: str) -> list[str]:
    items, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise UsageError(f"host list {_quoted(text)}: ']' without '['")
        elif ch == "," and depth == 0:
            items.append(text[start:k])
            start = k + 1
    if depth:
        raise UsageError(f"host list {_quoted(text)}: '[' without ']'")
    items.append(text[start:])
    return [i for i in items if i]


def _expand_one(item: str) -> list[str]:
    found = re.search(r"\[([^\]]*)\]", item)
    if found is None:
        return [item]
    head, tail = item[: found.start()], item[found.end() :]
    out: list[str] = []
    for part in found.group(1).split(","):
        bounds = part.split("-")
        if len(bounds) == 1 and bounds[0].isdecimal():
            numbers = [bounds[0]]
        elif len(bounds) == 2 and bounds[0].isdecimal() and bounds[1].isdecimal() and int(bounds[0]) <= int(bounds[1]):
            width = len(bounds[0])
            numbers = [str(n).zfill(width) for n in range(int(bounds[0]), int(bounds[1]) + 1)]
        else:
            raise UsageError(f"host list {_quoted(item)}: {_quoted(part)} is not a number or a range like 01-16")
        out.extend(host for n in numbers for host in _expand_one(head + n + tail))
    return out
