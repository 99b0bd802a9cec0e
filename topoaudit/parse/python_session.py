"""Tensors a pasted Python session printed, which of them are copies of which, and its peer-access queries.

PyTorch prints a tensor as ``tensor([1., 2.], device='cuda:1')`` (over several lines for a matrix). A copy is
shown two ways in the threads about broken peer-to-peer copies:

* a statement that copies a named tensor, the print under it: ``>>> t.to(cuda0)`` then ``tensor([0., 0., ...],
  device='cuda:0')``, where ``t`` was printed (``>>> t``) or written (``x = torch.tensor([1.0, 2.0], device=0)``)
  before; a chain through ``.cpu()`` or ``'cpu'`` is a copy through the host;
* three prints in a row of one shape, without the code: a tensor on one GPU, different values on another GPU, then
  the first tensor's values on that other GPU (the copy that went wrong, then the one that worked).

A peer-access query is ``torch.cuda.can_device_access_peer(0, 1)``, CUDA Python's ``cudaDeviceCanAccessPeer(0, 1)``
or CuPy's ``deviceCanAccessPeer(0, 1)``, with its answer printed under it or under the name it was assigned to.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from topoaudit.model.python_session import PeerQuery, PythonSession, TensorCopy, TensorPrint

_PROMPT = r"(?:>>>\s?|\.\.\.\s|In \[\d+\]:\s*|Out\[\d+\]:\s*|>>\s?|>\s*)?"  # '>>' marks output in a post
_REPR = re.compile(rf"^\s*{_PROMPT}(?:\w+\s*=\s*)?tensor\(")
_LITERAL = re.compile(rf"^\s*{_PROMPT}(?P<name>[A-Za-z_]\w*)\s*=\s*torch\.tensor\((?P<body>.*)\)\s*(?:#.*)?$")
_ECHO = re.compile(rf"^\s*{_PROMPT}(?:print\()?(?P<name>[A-Za-z_]\w*)\)?\s*$")
_CALL = r"\.(?:to|cuda|cpu)\((?:[^()]|\([^()]*\))*\)"
_COPY = re.compile(rf"^\s*{_PROMPT}(?:print\()?(?P<name>[A-Za-z_]\w*)(?P<chain>(?:{_CALL})+)\)?\s*(?:#.*)?$")
_REBIND = re.compile(
    rf"^\s*{_PROMPT}(?P<target>[A-Za-z_]\w*)\s*=\s*(?P<name>[A-Za-z_]\w*)(?P<chain>(?:{_CALL})+)\s*(?:#.*)?$"
)
_LAST_CALL = re.compile(r"\.(?P<method>to|cuda|cpu)\((?P<args>(?:[^()]|\([^()]*\))*)\)$")
_QUERY = re.compile(
    rf"^\s*{_PROMPT}(?:print\()?(?:(?P<names>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=\s*)?"
    r"(?P<call>[\w.]*(?:can_device_access_peer|[cC]anAccessPeer)\(\s*(?P<gpu>\d{1,4})\s*,\s*(?P<peer>\d{1,4})\s*\))"
)
_ANSWER = re.compile(
    r"^\s*(?:Out\[\d+\]:\s*|>\s*)?(?:(?P<word>True|False|[01])|\(<cudaError_t\.\w+: 0>, (?P<pair>[01])\))\s*$"
)
_TOKEN = re.compile(r"\[|\]|,|-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|-?inf|nan|True|False")
_DEVICE_KW = re.compile(r"\bdevice\s*=\s*(?P<value>[^,)]+(?:\([^)]*\))?)")
_MAX_LINES = 200  # a printed tensor longer than this is summarized by PyTorch anyway
_MAX_DIMENSIONS = 25  # PyTorch's own limit on a tensor's dimensions


class _Statement(NamedTuple):
    """A line waiting for what is printed under it: the echo of a name, a copy of one, or a peer-access query."""

    kind: str  # "echo" | "copy" | "query"
    name: str  # the name echoed or copied ("" for a query)
    line: int
    text: str
    call: tuple[re.Match[str], int] | None = None  # a query: its match and line


class _Moved(NamedTuple):
    """A name bound to a tensor moved from one GPU to another (``b = a.to('cuda:1')``), its values not yet shown."""

    source: TensorPrint
    statement: _Statement


def looks_like_python_session(text: str) -> bool:
    """Cheap sniff: PyTorch's tensor prints on a GPU with a copy among them, or an answered peer-access query."""
    if not ("tensor(" in text and "cuda" in text) and "ccessPeer" not in text and "access_peer" not in text:
        return False
    read = read_python_session(text[:200_000])
    return read is not None and bool(read.copies or read.peer_queries)


def read_python_session(text: str) -> PythonSession | None:
    """The tensors printed (or written as literals), the copies among them and the peer-access queries answered;
    None when the session shows none of them."""
    lines = text.splitlines()
    prints: list[TensorPrint] = []
    copies: list[TensorCopy] = []
    queries: list[PeerQuery] = []
    named: dict[str, TensorPrint] = {}
    moved: dict[str, _Moved] = {}  # names bound to a GPU-to-GPU copy whose values a later print shows
    asked: dict[str, tuple[re.Match[str], int]] = {}  # a name a query's answer was assigned to: the query, its line
    pending: _Statement | None = None
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        stripped = line.strip()
        if not stripped:
            continue
        if _REPR.match(line):
            printed, number = _read_repr(lines, number)
            if printed is None:
                pending = None
                continue
            prints.append(printed)
            if pending is not None:
                copies.extend(_settle(pending, printed, named, moved))
            pending = None
            continue
        if pending is not None and pending.kind != "copy" and (answer := _ANSWER.match(line)) is not None:
            call = pending.call if pending.kind == "query" else asked.get(pending.name)
            if call is not None:
                queries.append(_answered(*call, number, answer))
            pending = None
            continue
        pending = None
        if (m := _QUERY.match(line)) is not None:
            if m["names"]:
                asked[m["names"].split(",")[-1].strip()] = (m, number)  # CUDA Python returns (error, answer): the last
            else:
                pending = _Statement("query", "", number, stripped, (m, number))
        elif (m := _LITERAL.match(line)) is not None:
            literal = _tensor(m["body"], number, number, stripped)
            moved.pop(m["name"], None)
            if literal is not None:
                named[m["name"]] = literal
        elif (m := _REBIND.match(line)) is not None:
            _rebind(m, number, stripped, named, moved)
        elif (m := _COPY.match(line)) is not None:
            pending = _Statement("copy", m["name"], number, stripped)
        elif (m := _ECHO.match(line)) is not None:
            pending = _Statement("echo", m["name"], number, stripped)
    if not prints and not queries:
        return None
    return PythonSession(tuple(prints), tuple(copies) + _unstated_copies(prints, copies), tuple(queries))


def _answered(query: re.Match[str], asked_on: int, line: int, answer: re.Match[str]) -> PeerQuery:
    """A query and the answer printed for it (``False``/``0``: no peer access)."""
    return PeerQuery(
        asked_on, line, int(query["gpu"]), int(query["peer"]), answer["word"] or answer["pair"], query["call"]
    )


def _rebind(m: re.Match[str], number: int, text: str, named: dict[str, TensorPrint], moved: dict[str, _Moved]) -> None:
    """``a = a.to('cuda:0')`` in a script: the name now holds the tensor on the device the chain ends on.

    A move between the host and a GPU keeps the values (it crosses no GPU link: the session's own expectation); a
    move from one GPU to another is the copy under test, its values known only when the name is printed.
    """
    target, source = m["target"], named.get(m["name"])
    named.pop(target, None)
    moved.pop(target, None)
    device = _chain_device(m["chain"])
    if source is None or device is None:
        return
    if source.device.startswith("cuda") and device.startswith("cuda") and source.device != device:
        moved[target] = _Moved(source, _Statement("copy", m["name"], number, text))
        return
    named[target] = TensorPrint(number, number, device, source.shape, source.values, text[:200])


def _chain_device(chain: str) -> str | None:
    """The device a chain of ``.to``/``.cuda``/``.cpu`` calls ends on; None when a variable names it."""
    last = _LAST_CALL.search(chain)
    if last is None:
        return None
    method, args = last["method"], last["args"].strip()
    if method == "cpu":
        return "cpu"
    if method == "cuda":
        return f"cuda:{args}" if args.isdecimal() else "cuda:0" if not args else None
    value = args.split(",")[0].strip().removeprefix("device=").strip()
    if not (value.isdecimal() or re.search(r"['\"](?:cuda|cpu)", value)):
        return None  # a variable names it
    return _device_named(value)


def _settle(
    pending: _Statement, printed: TensorPrint, named: dict[str, TensorPrint], moved: dict[str, _Moved]
) -> list[TensorCopy]:
    """A print under a statement: the echo of a name binds it (a copy when the name was moved between GPUs), a copy
    of a known name is a copy."""
    source: TensorPrint | None
    if pending.kind == "echo":
        named[pending.name] = printed
        if (move := moved.pop(pending.name, None)) is None or move.source.device == printed.device:
            return []
        pending, source = move.statement, move.source
    else:
        source = named.get(pending.name)
    if pending.kind != "copy" or source is None or source.device == printed.device:
        return []
    text = pending.text
    through_host = ".cpu()" in text or re.search(r"\.to\(\s*['\"]cpu['\"]", text) is not None
    return [TensorCopy(source, printed, through_host, f"line {pending.line}: `{text}`", pending.line)]


def _unstated_copies(prints: list[TensorPrint], stated: list[TensorCopy]) -> tuple[TensorCopy, ...]:
    """Three prints in a row of one shape: a tensor on one GPU, other values on a second GPU, then the first one's
    values on that second GPU. The middle one is the copy that went wrong (the last shows what it should hold)."""
    explained = {c.copy.line for c in stated}
    found = []
    for first, middle, last in zip(prints, prints[1:], prints[2:], strict=False):
        gpus = {first.device, middle.device}
        if middle.line in explained or len(gpus) < 2 or not all(d.startswith("cuda") for d in gpus):
            continue
        if last.device != middle.device or not last.same_values(first) or middle.same_values(first):
            continue
        shown = f"line {last.line}, where line {first.line}'s values arrive on {last.device}"
        found.append(TensorCopy(first, middle, False, shown, last.line))
    return tuple(found)


def _read_repr(lines: list[str], start: int) -> tuple[TensorPrint | None, int]:
    """The tensor printed from line ``start`` (1-based) on, to its closing parenthesis, and the line after it."""
    first = lines[start - 1]
    text = first[first.index("tensor(") + len("tensor(") :]
    body: list[str] = []
    depth, end = 1, start
    while True:
        for position, char in enumerate(text):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                return _tensor(" ".join([*body, text[:position]]), start, end, first.strip()), end
        body.append(text)
        if end >= len(lines) or end - start >= _MAX_LINES:
            return None, end
        text = lines[end]
        end += 1


def _tensor(body: str, line: int, last: int, shown: str) -> TensorPrint | None:
    """A tensor from what stands between ``tensor(`` and its ``)``; None for a summarized one (``...``)."""
    data, keywords = _split_data(body)
    if "..." in data:
        return None
    tokens = _TOKEN.findall(data)
    shape, values = _nested(tokens)
    if shape is None:
        return None
    return TensorPrint(line, last, _device(keywords), shape, values, shown[:200])


def _split_data(body: str) -> tuple[str, str]:
    """The elements (a nested list or one number) and the keyword arguments after them."""
    depth = 0
    for position, char in enumerate(body):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            return body[:position], body[position + 1 :]
    return body, ""


def _nested(tokens: list[str]) -> tuple[tuple[int, ...] | None, tuple[str, ...]]:
    """The shape and the elements of a printed nested list (or one number); (None, ()) when it is not one."""
    depth = deepest = 0
    for token in tokens:
        depth += {"[": 1, "]": -1}.get(token, 0)
        deepest = max(deepest, depth)
    if deepest > _MAX_DIMENSIONS:
        return None, ()
    position = 0

    def element() -> object:
        nonlocal position
        token = tokens[position]
        position += 1
        if token != "[":
            return token
        items = []
        while tokens[position] != "]":
            items.append(element())
            if tokens[position] == ",":
                position += 1
        position += 1
        return items

    try:
        tree = element()
    except IndexError:
        return None, ()
    values = tuple(t for t in tokens if t not in "[],")
    shape: list[int] = []
    node = tree
    while isinstance(node, list):
        shape.append(len(node))
        node = node[0] if node else None
    if position != len(tokens) or math.prod(shape) != len(values) or not values:
        return None, ()
    return tuple(shape), values


def _device(keywords: str) -> str:
    """The device a print or literal names; the host when it names none."""
    m = _DEVICE_KW.search(keywords)
    return "cpu" if m is None else _device_named(m["value"])


def _device_named(value: str) -> str:
    """The device a ``device=`` value or a ``.to()`` argument names: ``1``, ``'cuda:1'``, ``torch.device('cuda')``."""
    value = value.strip().strip("'\"")
    if value.isdecimal():
        return f"cuda:{value}"
    found = re.search(r"cuda:\d+", value)
    if found:
        return found.group()
    return "cuda:0" if "cuda" in value else value
