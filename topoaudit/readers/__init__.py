"""Readers: every kind of input ``analyze`` reads, one module each, found by listing this package.

A reader module defines ``READER = Reader(...)``: the source kind it reports, a priority (lower reads first, so a
precise sniff runs before a loose one), a cheap ``sniff`` that works on a part of a mixed paste, a one-line
description (``analyze --help``, the docs and the sentence for an input nothing reads are made from these), the
readers whose output may be pasted beside its own, the kinds of paste part it reads, and ``load(text, name) ->
Facts`` with the lines it used (``load_lines`` where the reader uses what the lines' prefixes named).

:func:`load_text` reads a JSON document whole. Pasted text first loses its launchers' and collectors' line
prefixes (line numbers kept), is read whole by the best reader and the readers that may sit beside it, then split
into its parts (:mod:`topoaudit.parse.paste_parts`): each part no reader took is read by any reader that
recognises it, and what is still left by the readers of known messages. Every line that may carry one is looked
through for the signature catalog's messages. The parts are merged once (:func:`merge`): the part whose machine
has links frames it, each other part adds the facts it ``joins`` (a GPU's name, its NVLink ports, P2P statuses),
and the report names each part with its lines and what read it.

This module stays light: ``--help`` lists the readers without loading a model or a parser.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from topoaudit.errors import InputError, NothingToJudge

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import InputIssue
    from topoaudit.parse.paste_parts import Part
    from topoaudit.parse.prefixes import Line


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
    parts: tuple[str, ...] = ()  # the kinds of paste part it reads (topoaudit.parse.paste_parts.KINDS); () = its name
    overlay: bool = False  # its lines stand among another reader's (NCCL's GRAPH print inside an NCCL log)
    fallback: bool = False  # reads what no other reader took, every part left over at once (known messages)
    load_lines: Callable[[Sequence[Line], str], Facts] | None = None  # load from the lines, with what prefixes named

    @property
    def reads(self) -> tuple[str, ...]:
        """The kinds of paste part this reader reads."""
        return self.parts or (self.name,)


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


_WIDE_SPACES = str.maketrans(
    dict.fromkeys("\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " ")
)
"""Spaces a web page or chat client puts in place of ASCII ones (no-break, en, em, figure, ideographic): copied out
of a rendered page, a log's columns and words are still separated by them. One character each, so every line keeps
its length and every offset its place."""


_TERMINAL_COLOURS = re.compile(
    r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\))"  # escape sequences, as a log file keeps them
    r"|\^\[\[\d{1,3}(?:;\d{1,3}){0,4}m|\[(?<![\w\]]\[)\d{1,3}(?:;\d{1,3}){0,4}m"  # what a page leaves: "^[[0m", "[36m"
)  # every branch starts with a literal character, so the engine skips to the next ESC, ^ or [ between matches
"""Colours a logger (Ray, vLLM, rich) writes into its lines: they sit between a line's prefix and its words. Lines
keep their numbers; a finding quotes the words."""


_HTML_ENTITIES = {"&nbsp;": " ", "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'", "&#x27;": "'"}
_HTML_ENTITY = re.compile("|".join(map(re.escape, _HTML_ENTITIES)), re.IGNORECASE)
"""What a mailing-list archive or a scraped page leaves of a log's angle brackets and quotes: NCCL's
``eth0:10.0.0.1<0>``, nvidia-smi's ``<inactive>`` link. No log prints these entities itself."""


def load_text(text: str, name: str) -> Facts:
    """Read every part of ``text`` with the reader that recognises it, merged once; InputError when nothing in it
    is recognisable.

    What a page or terminal did to the text is undone first (wide spaces, colour codes, HTML entities). A JSON
    document (a report, a snapshot, NCCL Inspector or RAS JSON) is read whole. Pasted text first loses what
    launchers and log collectors put in front of its lines (:mod:`topoaudit.parse.prefixes`, line numbers kept),
    is read whole by the best reader and the readers allowed beside it, then split into its parts
    (:mod:`topoaudit.parse.paste_parts`): each part no reader has read yet is read by any reader that recognises it
    (the catalog of known messages last). Every line is looked through for known messages
    (:mod:`topoaudit.parse.signatures`), and the report names each part with its lines and what read it.
    """
    if "\x00" in text[:4096]:
        raise InputError(f"{name}: binary data, not a text capture")
    text = _TERMINAL_COLOURS.sub("", text if text.isascii() else text.translate(_WIDE_SPACES))
    if "&" in text:
        text = _HTML_ENTITY.sub(lambda m: _HTML_ENTITIES[m.group(0).lower()], text)
    json_like = _is_json(text)
    primary = next((r for r in readers() if not r.fallback and r.sniff(text)), None) if json_like else None
    if primary is not None or (json_like and _names_itself_ours(text)):
        loaded = _load_document(text, name, primary)
    else:  # pasted text, or JSON-looking lines no document reader knows (a node agent's JSON log): read line by line
        loaded = _read_paste(text, name)
    return replace(loaded, text=text)  # a finding or the identified model quotes the line it names


def _names_itself_ours(text: str) -> bool:
    """JSON whose head names topoaudit's own documents (a report, a snapshot): a damaged one is refused whole."""
    head = text.lstrip()[:4096]
    return "schema_version" in head or "topoaudit" in head


def _is_json(text: str) -> bool:
    """A JSON document (an object, JSON lines, or an array of them), not text whose lines start with "[rank0]:"."""
    head = text.lstrip()[:64]
    return head.startswith("{") or bool(re.match(r"\[\s*[\[{\]\"]", head))


def _load_document(text: str, name: str, primary: Reader | None) -> Facts:
    """A JSON document, read whole by the reader that knows it (``primary``, None: none does), as its one part."""
    if primary is None:
        raise _unreadable(text, name)
    loaded = primary.load(text, name)
    return _as_document(loaded, primary, text)


def _as_document(loaded: Facts, reader: Reader, text: str) -> Facts:
    """The document as the one part of the input, unless it keeps the parts of a paste (a saved report)."""
    import dataclasses

    from topoaudit.model.paste import PastePart

    if loaded.source.parts:
        return dataclasses.replace(loaded, used=None)
    part = PastePart(reader.name, 1, max(1, text.count("\n") + (not text.endswith("\n"))), reader.name)
    return dataclasses.replace(loaded, source=dataclasses.replace(loaded.source, parts=(part,)), used=None)


@dataclass
class _Read:
    """A reader that read the paste (or some of its parts), what it read, and the parts it was given."""

    reader: Reader
    facts: Facts
    given: tuple[Part, ...] = ()  # the parts it read; () when it read the whole paste

    def covers(self, part: Part) -> bool:
        """Whether this read took ``part``: given it (a fallback: used one of its lines), read its kind, or used
        the lines a recogniser took for that kind."""
        used = self.facts.used
        if self.reader.fallback:
            return part in self.given and used is not None and any(n in used for n in part.lines)
        if self.given:
            return part in self.given
        if part.kind in self.reader.reads:
            return True
        if used is None:  # a reader that took the whole text took what no recogniser knew
            return part.kind in ("other", "program-output")
        return any(n in used for n in (part.recognised or part.lines))


# Parts whose lines carry no message of the signature catalog: not looked through (a pasted matrix never loads it).
_NO_MESSAGES = frozenset({"topo-matrix", "nccl-xml"})


def _read_paste(text: str, name: str) -> Facts:
    """Pasted text: the whole paste read as before, every part left over read by any reader that knows it."""
    import dataclasses

    from topoaudit.parse.paste_parts import split_parts
    from topoaudit.parse.prefixes import strip_prefixes

    lines = strip_prefixes(text)
    ending = "\n" if text.endswith(("\n", "\r")) else ""  # a paste that ends inside a line is still seen cut
    clean = "\n".join(line.text for line in lines) + ending
    parts = split_parts(lines)
    reads: list[_Read] = []
    failed: dict[Part, tuple[Reader, InputError]] = {}
    whole = _read_whole(clean, name, reads)
    first_failure = whole[1] if whole else None
    for group in _left_over(parts, reads):
        _read_group(group, lines, name, reads, failed)
    rest = tuple(part for group in _left_over(parts, reads) for part in group)
    if rest:
        _read_group(tuple(sorted(rest, key=lambda p: p.first)), lines, name, reads, failed, fallback=True)
    for overlay in (r for r in readers() if r.overlay and r not in {x.reader for x in reads}):
        if overlay.sniff(clean):
            with contextlib.suppress(InputError):  # its lines are then read as the part they stand in
                reads.append(_Read(overlay, overlay.load(clean, name)))
    hits = _known_messages(lines, parts)
    if not reads:
        _refuse_unread(text, name, parts, first_failure, failed)
        parts = _as_recognised(parts, whole, failed)
    shown = tuple(_shown_part(p, reads, failed) for p in parts)
    if hits:
        hits = _unclaimed(hits, parts, reads)
    unread = [p for p in parts if not _read_by(p, reads)]
    issues = tuple(
        issue for p in unread if (issue := _not_read(p, failed[p]) if p in failed else _unrecognised(p)) is not None
    )
    if reads:
        loaded = merge([(r.reader, r.facts) for r in reads]) if len(reads) > 1 else reads[0].facts
    else:
        recognised = first_failure if first_failure is not None else next((exc for _, exc in failed.values()), None)
        loaded = _nothing_read(name, shown, recognised)
    source = dataclasses.replace(loaded.source, parts=shown)
    facts = dataclasses.replace(loaded, source=source, issues=loaded.issues + issues, used=None)
    return facts if hits is None else dataclasses.replace(facts, signatures=hits)


def _refuse_unread(
    text: str,
    name: str,
    parts: tuple[Part, ...],
    first_failure: InputError | None,
    failed: dict[Part, tuple[Reader, InputError]],
) -> None:
    """Refuse a paste nothing read: with its reader's sentence when a reader refused it (a capture cut short or
    edited is bad input, beside anything or alone), with the hint to capture ``nvidia-smi topo -m`` when nothing
    in it was recognised. A paste whose parts were recognised but that no reader is for (a traceback naming no
    known error) is not refused: it is judged, and the report says what it holds."""
    if first_failure is not None and not isinstance(first_failure, NothingToJudge):
        raise first_failure
    failure = next((f for f in failed.values() if not isinstance(f[1], NothingToJudge)), None)
    if failure is not None:
        raise failure[1]
    if first_failure is None and not failed and not any(p.kind != "other" for p in parts):
        raise _unreadable(text, name)


def _as_recognised(
    parts: tuple[Part, ...], whole: tuple[Reader, InputError] | None, failed: dict[Part, tuple[Reader, InputError]]
) -> tuple[Part, ...]:
    """A paste a reader recognised as its tool's output and found nothing to judge in, where the line-by-line split
    saw nothing it knows (a table's header alone): one part of that reader's kind, not read, with the reader's
    sentence, so the report names what was recognised."""
    if whole is None or not isinstance(whole[1], NothingToJudge) or any(p.kind != "other" for p in parts):
        return parts
    lines = tuple(n for p in parts for n in p.lines)
    if not lines:
        return parts
    part = replace(parts[0], kind=whole[0].reads[0], first=min(lines), last=max(lines), lines=lines)
    failed[part] = whole
    return (part,)


def _unrecognised(part: Part) -> InputIssue | None:
    """The issue for a part that looks like a capture no reader could read ("lines 1-2 look like an NCCL log")."""
    from topoaudit.model.report import InputIssue

    what = next((r.describes for r in readers() if part.kind in r.reads), "")
    if not what:
        return None  # a traceback, an nvidia-smi table: text no reader is for, named in the report's parts
    verb = "looks" if part.first == part.last else "look"
    return InputIssue(part.first, "ignored", f"{part.span} {verb} like {what}, but no reader could read it")


def _read_whole(clean: str, name: str, reads: list[_Read]) -> tuple[Reader, InputError] | None:
    """The paste read whole by the best reader and the readers allowed beside it; the best reader's refusal."""
    primary = next((r for r in readers() if not r.fallback and r.sniff(clean)), None)
    if primary is None:
        return None
    try:
        reads.append(_Read(primary, primary.load(clean, name)))
    except InputError as exc:
        return primary, exc
    rest = _left(clean, reads[0].facts.used)
    for other in (reader(n) for n in primary.beside):
        if rest.strip() and other.sniff(rest):
            part = other.load(rest, name)
            reads.append(_Read(other, part))
            rest = _left(rest, part.used)
    return None


def _left_over(parts: tuple[Part, ...], reads: list[_Read]) -> list[tuple[Part, ...]]:
    """The parts no read took, those of one kind together (an NCCL log's lines broken by another tool's)."""
    groups: dict[str, list[Part]] = {}
    for part in parts:
        if not any(r.covers(part) for r in reads):
            groups.setdefault(part.kind, []).append(part)
    return [tuple(group) for group in groups.values()]


def _read_group(
    group: tuple[Part, ...],
    lines: Sequence[Line],
    name: str,
    reads: list[_Read],
    failed: dict[Part, tuple[Reader, InputError]],
    *,
    fallback: bool = False,
) -> None:
    """Read parts of one kind with the first reader that recognises them, those that read the kind first (with
    ``fallback``: every part left over, by the readers of what no other reader took)."""
    from topoaudit.parse.paste_parts import part_text

    kind = group[0].kind
    numbers = frozenset(n for part in group for n in part.lines)
    text = part_text(lines, _joined(group, numbers))
    done = {r.reader.name for r in reads if not r.given}  # read the whole paste already
    ordered = sorted(readers(), key=lambda r: (kind not in r.reads, r.priority))
    for candidate in ordered:
        if candidate.fallback != fallback or (candidate.name in done and kind not in candidate.reads):
            continue
        if not candidate.sniff(text):
            continue
        try:
            if candidate.load_lines is not None:
                loaded = candidate.load_lines([line for line in lines if line.number in numbers], name)
            else:
                loaded = candidate.load(text, name)
        except InputError as exc:
            for part in group:
                failed.setdefault(part, (candidate, exc))
            continue
        reads.append(_Read(candidate, loaded, group))
        return


def _joined(group: tuple[Part, ...], numbers: frozenset[int]) -> Part:
    from topoaudit.parse.paste_parts import Part

    ordered = tuple(sorted(numbers))
    return Part(group[0].kind, ordered[0], ordered[-1], ordered)


def _known_messages(lines: Sequence[Line], parts: tuple[Part, ...]) -> tuple[Any, ...] | None:
    """The known messages on the lines of every part that may carry one; None when no line may (a matrix)."""
    scanned = frozenset(n for p in parts if p.kind not in _NO_MESSAGES for n in p.lines)
    if not scanned:
        return None
    from topoaudit.parse.signatures import match_lines

    return match_lines([line for line in lines if line.number in scanned])


LINE_FALLBACKS = frozenset({"gpu-stack-error"})
"""Catalog fallbacks that stand only on lines no reader judged: an NVRM line the kernel-log reader read, or an
nccl-tests failure the run's reader read, is said by that reader, with its meaning."""


def _unclaimed(hits: tuple[Any, ...], parts: tuple[Part, ...], reads: list[_Read]) -> tuple[Any, ...]:
    claimed = frozenset(n for p in parts if _read_by(p, reads) not in ("", "known-messages") for n in p.lines)
    return tuple(h for h in hits if h.signature not in LINE_FALLBACKS or h.line not in claimed)


def _read_by(part: Part, reads: list[_Read]) -> str:
    return next((r.reader.name for r in reads if r.covers(part)), "")


def _shown_part(part: Part, reads: list[_Read], failed: dict[Part, tuple[Reader, InputError]]) -> Any:
    """A part as the report names it: its kind, lines and what read it (or why the reader that tried could not)."""
    from topoaudit.model.paste import PastePart

    read_by = _read_by(part, reads)
    note = "" if read_by or part not in failed else str(failed[part][1])
    return PastePart(part.kind, part.first, part.last, read_by, note)


def _not_read(part: Part, failure: tuple[Reader, InputError]) -> InputIssue:
    from topoaudit.model.report import InputIssue

    reader_, exc = failure
    return InputIssue(part.first, "ignored", f"{reader_.describes} at {part.span} could not be read: {exc}")


def _nothing_read(name: str, parts: tuple[Any, ...], recognised: InputError | None = None) -> Facts:
    """A paste whose recognised parts no reader can read (a traceback naming no known error, a tool's banner
    without its results): judged as it is, so the report can say what was recognised and that nothing in it could
    be judged."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo

    if recognised is not None:  # the reader's own sentence: "nvbandwidth output without a bandwidth matrix ..."
        said = str(recognised).removeprefix(f"{name}: ")
        description = f"{said}: nothing in it that topoaudit can judge"
    else:
        named = ", ".join(f"{p.kind} ({p.span})" for p in parts if p.kind != "other")
        description = f"{named}: nothing in it that topoaudit reads or knows"
    return Facts(
        Machine(source="paste", gpus=()),
        SourceInfo("paste", name, description=description),
        what="a paste",
    )


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
    """The sentence for text nothing recognises: where a JSON document breaks, else what topoaudit reads."""
    head = text.lstrip()[:4096]
    if head[:1] in ("{", "["):  # a report or snapshot cut short: say where the JSON breaks
        import json

        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            if not _names_itself_ours(text):  # JSON-looking log lines, not a document
                return _not_a_format(name)
            return InputError(
                f"{name}: invalid JSON, it breaks at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
                "a truncated or edited file?",
                hint="copy the whole file again: a report or snapshot topoaudit writes is one complete JSON document",
            )
        except (RecursionError, ValueError):  # nested past the recursion limit, an integer of thousands of digits
            from topoaudit.model.codec import read_json

            try:
                read_json(text, name, "report or snapshot")
            except InputError as refused:
                return refused
    return _not_a_format(name)


def _not_a_format(name: str) -> InputError:
    return InputError(
        f"{name}: not a format topoaudit reads (expected {inputs_sentence()})",
        hint=(
            "nothing in it is a message or an output topoaudit knows; to audit a box paste its `nvidia-smi topo -m`, "
            "to diagnose a run paste its NCCL_DEBUG=INFO log from the start to the first WARN line"
        ),
    )


def load_path(path: str) -> Facts:
    """Read a file (or ``-`` for standard input, at most as much as a file) and load it."""
    from topoaudit.parse.text import decode_capture, read_capped, read_capture_file

    if path == "-":
        raw = getattr(sys.stdin, "buffer", None)  # a replaced stdin (a test's) may have no bytes under its text
        return load_text(decode_capture(read_capped(raw, "<stdin>")) if raw else sys.stdin.read(), "<stdin>")
    return load_text(decode_capture(read_capture_file(path)), path)


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
