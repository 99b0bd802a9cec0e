"""Readers: every kind of input ``analyze`` reads, one module each, found by listing this package.

A reader module defines ``READER = Reader(...)``: the source kind it reports, a priority (lower reads first, so a
precise sniff runs before a loose one), a cheap ``sniff`` that works on a part of a mixed paste, a one-line
description (``analyze --help``, the docs and the sentence for an input nothing reads are made from these), the
readers whose output may be pasted beside its own, and ``load(text, name) -> Facts`` with the lines it used.

:func:`load_text` reads a paste with the best reader, blanks the lines it used (line numbers kept) and reads what
is left with the readers that may sit beside it, merging the parts once (:func:`merge`): the part whose machine
has links frames it, each other part adds the facts it ``joins`` (a GPU's name, its NVLink ports, P2P statuses).

This module stays light: ``--help`` lists the readers without loading a model or a parser.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from topoaudit.errors import InputError

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import InputIssue

MAX_INPUT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Reader:
    """One kind of input: what recognises it, what it is called, how it is read, what may sit beside it."""

    name: str  # the source kind it reports ("topo-matrix")
    priority: int  # lower reads first: a precise sniff before a loose one
    describes: str  # what it reads, in a few words ("`nvidia-smi topo -m` output")
    sniff: Callable[[str], bool]  # cheap; true on a part of a paste this reader can read
    load: Callable[[str, str], Facts]  # (text, name) -> the facts it read and the lines it used
    beside: tuple[str, ...] = ()  # readers whose output may be pasted beside this one's, read from what is left
    joins: tuple[str, ...] = ()  # what its machine adds to one another part frames: "gpu.name", "p2p", "source"...
    capture: bool = False  # a capture of a box: beside that box's `topo -m`, the `topo -m` names the paste


@cache
def readers() -> tuple[Reader, ...]:
    """Every reader in this package, in the order they are tried."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        reader = getattr(importlib.import_module(f"{__name__}.{module.name}"), "READER", None)
        if isinstance(reader, Reader):
            found.append(reader)
    return tuple(sorted(found, key=lambda r: (r.priority, r.name)))


def reader(name: str) -> Reader:
    """The reader named ``name`` (KeyError for an unknown one)."""
    return {r.name: r for r in readers()}[name]


def inputs_sentence() -> str:
    """What ``analyze`` reads, in one sentence part: "`nvidia-smi topo -m` output, ..., or NCCL RAS output"."""
    names = [r.describes for r in reversed(readers())]  # the loosest, most common input first
    return ", ".join(names[:-1]) + ", or " + names[-1]


def load_text(text: str, name: str) -> Facts:
    """Read ``text`` with the best reader and every reader allowed beside it; InputError when none reads it."""
    if "\x00" in text[:4096]:
        raise InputError(f"{name}: binary data, not a text capture")
    primary = next((r for r in readers() if r.sniff(text)), None)
    if primary is None:
        raise _unreadable(text, name)
    parts = [(primary, primary.load(text, name))]
    rest = _left(text, parts[0][1].used)
    for other in (reader(n) for n in primary.beside):
        if rest.strip() and other.sniff(rest):
            part = other.load(rest, name)
            parts.append((other, part))
            rest = _left(rest, part.used)
    return replace(merge(parts) if len(parts) > 1 else parts[0][1], text=text)


def _left(text: str, used: frozenset[int] | None) -> str:
    """The paste with a reader's lines blanked (numbering kept), so what sits beside them is read alone."""
    if used is None:
        return ""
    if not used:
        return text
    return "\n".join("" if n in used else line for n, line in enumerate(text.splitlines(), 1))


def merge(parts: list[tuple[Reader, Facts]]) -> Facts:
    """One Facts from the parts of a mixed paste, the first being what the paste mainly is.

    The part whose machine has GPU pair links frames the machine (else the first with GPUs); each other part adds
    what its reader ``joins``. Every other kind of fact comes from the first part that holds it; the issues of every
    part are kept, the framing part's first. The paste is named by its first part, with the others beside it; a
    capture read beside the ``topo -m`` of its box is named by the ``topo -m``.
    """
    import dataclasses

    from topoaudit.model.report import SourceInfo
    from topoaudit.model.values import Unsupported

    frame = _frame(parts)
    machine = frame[1].machine
    for r, part in parts:
        if part is not frame[1]:
            machine = _join(machine, part.machine, r.joins)
    (first_reader, first), others = parts[0], [p for p in parts if p is not parts[0]]
    if first_reader.capture and frame is not parts[0]:
        beside = " and ".join(p.what for _, p in parts if p is not frame[1])
        source = SourceInfo(
            frame[1].source.kind, first.source.name, description=f"{frame[1].what} with {beside} beside it"
        )
    else:
        named = "".join(f", with the {p.what} pasted beside it" for _, p in others)
        source = dataclasses.replace(first.source, description=first.source.description + named)
    ordered = [frame[1], *(p for _, p in parts if p is not frame[1])]
    kinds = [f.name for f in dataclasses.fields(first) if isinstance(f.default, Unsupported)]  # bench, nccl, ...
    given: dict[str, Any] = {
        kind: next((v for p in ordered if not isinstance(v := getattr(p, kind), Unsupported)), getattr(first, kind))
        for kind in kinds
    }
    extras: dict[str, Any] = {}
    for p in ordered:
        extras.update({k: v for k, v in p.extras.items() if k not in extras})
    return dataclasses.replace(
        first,
        machine=machine,
        source=source,
        issues=tuple(i for p in ordered for i in p.issues),
        extras=extras,
        used=None,
        **given,
    )


def _frame(parts: list[tuple[Reader, Facts]]) -> tuple[Reader, Facts]:
    from topoaudit.model.topology import gpu_pair_links

    return (
        next((p for p in parts if gpu_pair_links(p[1].machine)), None)
        or (parts[0] if parts[0][1].machine.gpus else None)
        or next((p for p in parts if p[1].machine.gpus), parts[0])
    )


def _join(frame: Machine, part: Machine, joins: tuple[str, ...]) -> Machine:
    """``frame`` with what ``part`` adds: each joined fact the frame lacks and the part has, GPU by GPU."""
    import dataclasses

    from topoaudit.model.values import is_absent

    def fill(into: object, source: object, names: list[str]) -> dict[str, Any]:
        return {
            n: getattr(source, n) for n in names if is_absent(getattr(into, n)) and not is_absent(getattr(source, n))
        }

    gpu_fields = [j.removeprefix("gpu.") for j in joins if j.startswith("gpu.")]
    host_fields = [j.removeprefix("host.") for j in joins if j.startswith("host.")]
    theirs = {g.index: g for g in part.gpus}
    gpus = tuple(
        dataclasses.replace(g, **fill(g, theirs[g.index], gpu_fields)) if g.index in theirs else g for g in frame.gpus
    )
    changes: dict[str, Any] = {
        "gpus": gpus,
        "host": dataclasses.replace(frame.host, **fill(frame.host, part.host, host_fields)),
    }
    if "p2p" in joins and not frame.p2p:
        changes["p2p"] = part.p2p
    if "source" in joins:
        changes["source"] = part.source
    return dataclasses.replace(frame, **changes)


def _unreadable(text: str, name: str) -> InputError:
    if text.lstrip()[:1] in ("{", "["):  # a report or snapshot cut short: say where the JSON breaks
        import json

        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return InputError(
                f"{name}: invalid JSON, it breaks at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
                "a truncated or edited file?",
                hint="copy the whole file again: a report or snapshot topoaudit writes is one complete JSON document",
            )
    return InputError(
        f"{name}: not a format topoaudit reads (expected {inputs_sentence()})",
        hint="capture it with `nvidia-smi topo -m > topo.txt`",
    )


def load_path(path: str) -> Facts:
    """Read a file (or ``-`` for standard input) and load it."""
    if path == "-":
        return load_text(sys.stdin.read(), "<stdin>")
    p = Path(path)
    try:
        if p.stat().st_size > MAX_INPUT_BYTES:
            raise InputError(f"{path}: larger than {MAX_INPUT_BYTES // 2**20} MiB; not a capture topoaudit reads")
        raw = p.read_bytes()
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise InputError(f"{path}: is a directory, not a capture file") from exc
    except PermissionError as exc:
        raise InputError(f"{path}: permission denied") from exc
    from topoaudit.parse.text import decode_capture

    return load_text(decode_capture(raw), path)


def load_example(name: str) -> Facts:
    """A bundled example, labelled as a demo in every output (the index is read only here, not by a file's load)."""
    import dataclasses

    from topoaudit.examples import examples
    from topoaudit.model.report import SourceInfo

    known = examples()
    if name not in known:
        raise InputError(f"unknown example {name!r}; known: {', '.join(sorted(known))}")
    example = known[name]
    loaded = load_text(example.text(), f"example:{name}")
    # topo -m omits the product name; the example's index records what its GPUs report.
    machine = dataclasses.replace(
        loaded.machine, gpus=tuple(dataclasses.replace(g, name=example.gpu_model) for g in loaded.machine.gpus)
    )
    return dataclasses.replace(
        loaded, machine=machine, source=SourceInfo("example", name, demo=True, description=example.description)
    )


def noted(notes: tuple[tuple[int, str], ...], action: str = "ignored") -> tuple[InputIssue, ...]:
    """A parser's notes on lines it left out, as the report's input issues ("recovered": damage read around)."""
    from topoaudit.model.report import InputIssue

    return tuple(InputIssue(line, action, note) for line, note in notes)
