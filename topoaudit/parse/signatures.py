"""Known messages, recognised on any pasted line: the signature catalog and its matcher.

``topoaudit/catalog/signatures.toml`` lists the messages NCCL, nccl-tests, nvbandwidth, CUDA, the NVIDIA driver,
nvidia-smi, the fabric manager, PyTorch, vLLM, Azure NHC and DCGM print when something about the interconnect or a
multi-GPU run is wrong, each with its meaning, cause, fix, source and the finding code it maps to. The file is read
once, on first use, and checked strictly: an unknown key, a regex that does not compile, a missing source or a
keyword that is not plain text stops the load (a bug, caught by the tests).

:func:`match_lines` finds every signature on the lines of a paste (prefixes already taken off, see
:mod:`topoaudit.parse.prefixes`). It never tries every regex on every line: each signature names literal keywords
that every line it matches contains, the whole paste is scanned once per keyword with ``str.find``, and only the
signatures whose keyword a line holds are tried on it. On one line only the hits of the highest tier stand: a
message beats the CUDA or RDMA error it quotes, both beat a tool's generic wrapper, and any of them beats the plain
``NCCL WARN`` fallback (``tier``).

New finding codes that no rule declares yet are declared in the same file (``[code.NAME]``), so one loader can
register them; :func:`declared_codes` returns them.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from topoaudit.errors import TopoauditError
from topoaudit.model.finding import Severity
from topoaudit.model.paste import Hit as Hit
from topoaudit.model.values import Unsupported
from topoaudit.parse.prefixes import NO_HOST, NO_RANK, Line, strip_prefixes

SCHEMA = "topoaudit-signatures/1"
TIERS = ("fallback", "catch-all", "error", "message")
"""Tiers in rising precedence: on one line only the hits of the highest tier present are kept."""
CAUSES = (
    "fabric-manager-down", "fabric-unhealthy", "nvlink-down", "nvlink-split", "p2p-unsupported", "config-override",
    "gdr-disabled", "net-fallback", "nvls-failure", "data-corruption", "run-hung", "run-failed", "low-bandwidth",
    "high-latency", "pcie-degraded", "xid", "other",
)  # fmt: skip
"""Classes of cause, the same taxonomy the real-paste corpus labels its threads with."""
MAX_SHOWN_CHARS = 300
MAX_MATCHED_CHARS = 4096
"""How much of a line the signatures read: every message they know fits in a few hundred characters, and a line
of hundreds of thousands (a hostile paste, a minified dump) must not cost a pattern's backtracking over all of it."""

_REQUIRED = ("id", "code", "severity", "cause", "keywords", "regex", "meaning", "fix", "source", "versions")
_OPTIONAL = ("tier", "thread", "printed_nothing", "under", "judges")
TABLE_ROWS_LOOKED_AT = 200
"""How far under a table's header its rows are looked for; a transfer test prints a few dozen sizes."""
_CODE_FIELDS = ("severity", "title", "remedy")
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SOURCE = re.compile(r"^(?:[\w.-]+/[\w.-]+@[0-9a-f]{12,40} [\w./-]+(?: \(.+\))?|https://\S+)$")
_URL = re.compile(r"^https://\S+$")


class CatalogError(TopoauditError):
    """The signature catalog is malformed (a bug in the packaged data, never the user's input)."""


@dataclass(frozen=True)
class Signature:
    """One known message: how to recognise it and what it means."""

    id: str
    code: str  # the finding code it maps to
    severity: Severity  # what the line means for a deployment
    cause: str  # one of CAUSES
    tier: str  # one of TIERS
    keywords: tuple[str, ...]  # every line the pattern matches holds one of them
    pattern: re.Pattern[str]
    meaning: str
    fix: str
    source: str  # "owner/repo@commit path" or the https URL of the thread that diagnosed it
    versions: str
    thread: str = ""  # a public thread that diagnosed it, where one is cited beside the source
    printed_nothing: bool = False  # a shell command that means something only when the next line is its prompt again
    under: re.Pattern[str] | None = None  # a table's header: the keywords find it, the regex reads its last row
    judges: bool = True  # false: a notice at information that judges nothing by itself (a wait, hang or compile)


@dataclass(frozen=True)
class DeclaredCode:
    """A finding code the catalog introduces: its default severity, title and remedy."""

    code: str
    severity: Severity
    title: str
    remedy: str


@dataclass(frozen=True)
class Catalog:
    """The loaded catalog and its keyword index."""

    signatures: tuple[Signature, ...]
    codes: tuple[DeclaredCode, ...] = ()
    index: tuple[tuple[str, tuple[int, ...]], ...] = ()  # keyword (digits as 0) -> positions of its signatures

    def get(self, signature_id: str) -> Signature:
        """The signature with this id; KeyError for an unknown id."""
        return self._by_id[signature_id]

    @functools.cached_property
    def _by_id(self) -> dict[str, Signature]:
        return {s.id: s for s in self.signatures}


def load_catalog(text: str, name: str = "signatures.toml") -> Catalog:
    """Parse and check a catalog; CatalogError names the entry and what is wrong with it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{name}: not valid TOML: {exc}") from exc
    unknown = set(raw) - {"schema", "code", "signature"}
    if unknown:
        raise CatalogError(f"{name}: unknown top-level key(s) {', '.join(sorted(unknown))}")
    if raw.get("schema") != SCHEMA:
        raise CatalogError(f"{name}: schema is {raw.get('schema')!r}, expected {SCHEMA!r}")
    codes = tuple(_declared(name, code, entry) for code, entry in raw.get("code", {}).items())
    signatures = tuple(_signature(name, i, entry) for i, entry in enumerate(raw.get("signature", [])))
    seen: set[str] = set()
    for s in signatures:
        if s.id in seen:
            raise CatalogError(f"{name}: signature {s.id!r} appears twice")
        seen.add(s.id)
    positions: dict[str, list[int]] = {}
    for i, s in enumerate(signatures):
        for keyword in s.keywords:
            positions.setdefault(keyword.translate(_DIGITS_TO_ZERO), []).append(i)
    return Catalog(signatures, codes, tuple((k, tuple(v)) for k, v in positions.items()))


def _declared(name: str, code: str, entry: Any) -> DeclaredCode:
    where = f"{name}: code {code!r}"
    if not _NAME.match(code):
        raise CatalogError(f"{where}: a code is lower-case words joined by '-'")
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: expected a table")
    _keys(where, entry, _CODE_FIELDS, ())
    return DeclaredCode(code, _severity(where, entry["severity"]), _text(where, entry, "title"),
                        _text(where, entry, "remedy"))  # fmt: skip


def _signature(name: str, position: int, entry: Any) -> Signature:
    where = f"{name}: signature #{position + 1}"
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: expected a table")
    if isinstance(entry.get("id"), str):
        where = f"{name}: signature {entry['id']!r}"
    _keys(where, entry, _REQUIRED, _OPTIONAL)
    ident = _text(where, entry, "id")
    if not _NAME.match(ident):
        raise CatalogError(f"{where}: an id is lower-case words joined by '-'")
    code = _text(where, entry, "code")
    if not _NAME.match(code):
        raise CatalogError(f"{where}: code {code!r} is not a finding code's form")
    cause = _text(where, entry, "cause")
    if cause not in CAUSES:
        raise CatalogError(f"{where}: cause {cause!r} is not one of {', '.join(CAUSES)}")
    tier = entry.get("tier", "message")
    if tier not in TIERS:
        raise CatalogError(f"{where}: tier {tier!r} is not one of {', '.join(TIERS)}")
    keywords = entry["keywords"]
    if not isinstance(keywords, list) or not keywords:
        raise CatalogError(f"{where}: keywords must be a non-empty list of strings")
    for keyword in keywords:
        if not isinstance(keyword, str) or len(keyword.strip()) < 3 or "\n" in keyword:
            raise CatalogError(f"{where}: keyword {keyword!r} must be plain text of at least 3 characters on one line")
    regex = _text(where, entry, "regex")
    try:
        pattern = re.compile(regex)
    except re.error as exc:
        raise CatalogError(f"{where}: regex does not compile: {exc}") from exc
    source = _text(where, entry, "source")
    if not _SOURCE.match(source):
        raise CatalogError(f"{where}: source {source!r} is neither 'owner/repo@commit path' nor an https URL")
    thread = entry.get("thread", "")
    if thread and not (isinstance(thread, str) and _URL.match(thread)):
        raise CatalogError(f"{where}: thread {thread!r} is not an https URL")
    printed_nothing = entry.get("printed_nothing", False)
    if not isinstance(printed_nothing, bool):
        raise CatalogError(f"{where}: printed_nothing must be true or false")
    judges = entry.get("judges", True)
    if not isinstance(judges, bool):
        raise CatalogError(f"{where}: judges must be true or false")
    if not judges and entry.get("severity") != "info":
        raise CatalogError(f"{where}: judges = false is for a message shown at information")
    under = None
    if "under" in entry:
        try:
            under = re.compile(_text(where, entry, "under"))
        except re.error as exc:
            raise CatalogError(f"{where}: under does not compile: {exc}") from exc
    return Signature(
        id=ident,
        code=code,
        severity=_severity(where, entry["severity"]),
        cause=cause,
        tier=tier,
        keywords=tuple(keywords),
        pattern=pattern,
        meaning=_text(where, entry, "meaning"),
        fix=_text(where, entry, "fix"),
        source=source,
        versions=_text(where, entry, "versions"),
        thread=thread,
        printed_nothing=printed_nothing,
        under=under,
        judges=judges,
    )


def _keys(where: str, entry: dict[str, Any], required: Iterable[str], optional: Iterable[str]) -> None:
    missing = [k for k in required if k not in entry]
    if missing:
        raise CatalogError(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(set(entry) - set(required) - set(optional))
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {', '.join(unknown)}")


def _text(where: str, entry: dict[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(f"{where}: {key} must be a non-empty string")
    return value


def _severity(where: str, value: Any) -> Severity:
    try:
        return Severity(value)
    except ValueError:
        raise CatalogError(f"{where}: severity {value!r} is not fail, warn or info") from None


@functools.lru_cache(maxsize=1)
def catalog() -> Catalog:
    """The packaged catalog, read and checked on first use."""
    text = resources.files("topoaudit.catalog").joinpath("signatures.toml").read_text(encoding="utf-8")
    return load_catalog(text)


def declared_codes() -> tuple[DeclaredCode, ...]:
    """The finding codes the catalog introduces (for the code registry)."""
    return catalog().codes


_TIER_RANK = {tier: rank for rank, tier in enumerate(TIERS)}
_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")


_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"',
                              "\u201d": '"', "\u201e": '"', "\u00a0": " "})  # fmt: skip


def plain_quotes(text: str) -> str:
    """The line with the quotes and spaces a web page or a word processor put in a message copied from it
    (``don\u2019t``, ``\u2018invalid argument\u2019``) read back as the tool printed them."""
    return text if text.isascii() else text.translate(_TYPOGRAPHIC)


def match_lines(lines: Sequence[Line | str], cat: Catalog | None = None) -> tuple[Hit, ...]:
    """Every signature on ``lines`` (Lines from :func:`~topoaudit.parse.prefixes.strip_prefixes`, or plain strings
    numbered from 1), in line order; on a line only the hits of its highest tier."""
    cat = cat or catalog()
    texts: list[str] = []
    numbers: list[int] = []
    where: list[tuple[int | Unsupported, str | Unsupported]] = []  # what the line's prefixes named
    for position, line in enumerate(lines, 1):
        text = line.text if isinstance(line, Line) else line
        texts.append(plain_quotes(text))
        if isinstance(line, Line):
            numbers.append(line.number)
            where.append((line.rank, line.host) if line.prefixes else (NO_RANK, NO_HOST))
        else:
            numbers.append(position)
            where.append((NO_RANK, NO_HOST))
    # Lines that differ only in their digits (channel, rank, size) share a shape: the keywords are looked for once
    # per shape, and a keyword found in a line is always found in its shape (digits become 0 in both).
    shapes: dict[str, list[int]] = {}
    for row, shape in enumerate("\n".join(texts).translate(_DIGITS_TO_ZERO).split("\n")):
        shapes.setdefault(shape, []).append(row)
    unique = list(shapes)
    joined = "\n".join(unique)
    starts = list(itertools.accumulate((len(t) + 1 for t in unique), initial=0))
    by_shape: dict[int, set[int]] = {}
    find = joined.find
    for keyword, positions in cat.index:
        at = find(keyword)
        while at != -1:
            row = bisect.bisect_right(starts, at) - 1
            by_shape.setdefault(row, set()).update(positions)
            at = find(keyword, starts[row + 1])
    candidates: dict[int, set[int]] = {}
    for shape_row, tried in by_shape.items():
        for row in shapes[unique[shape_row]]:
            candidates[row] = tried
    hits: list[Hit] = []
    signatures = cat.signatures
    for row in sorted(candidates):
        text = texts[row]
        trying = [signatures[i] for i in sorted(candidates[row])]
        for s in trying:
            if (
                s.under is not None
                and (head := s.under.search(text, 0, MAX_MATCHED_CHARS))
                and (last := _last_row(texts, row, s))
            ):
                at, row_match = last
                values = {k: v for k, v in (head.groupdict() | row_match.groupdict()).items() if v is not None}
                hits.append(Hit(numbers[at], s.id, values, texts[at].strip()[:MAX_SHOWN_CHARS], *where[at]))
        found = [
            (s, m)
            for s in trying
            if s.under is None
            and (m := s.pattern.search(text, 0, MAX_MATCHED_CHARS))
            and (not s.printed_nothing or _printed_nothing(texts, row, m.start()))
        ]
        if not found:
            continue
        top = max(_TIER_RANK[s.tier] for s, _ in found)
        shown = text.strip()[:MAX_SHOWN_CHARS]
        for s, m in found:
            if _TIER_RANK[s.tier] == top:
                values = {k: v for k, v in m.groupdict().items() if v is not None}
                hits.append(Hit(numbers[row], s.id, values, shown, *where[row]))
    return tuple(sorted(hits, key=lambda hit: hit.line))  # a table's hit stands at its last row, below its header


def _last_row(texts: Sequence[str], header: int, table: Signature) -> tuple[int, re.Match[str]] | None:
    """Find the last row of the table under ``texts[header]`` that the table signature's regex reads.

    That row is a transfer test's largest size, where its bandwidth levels off. Column heads and comments may stand
    between the header and the first row; the table ends at the first other line after a row, or at the next header.
    """
    if table.under is None:
        return None
    last = None
    for at in range(header + 1, min(len(texts), header + 1 + TABLE_ROWS_LOOKED_AT)):
        m = table.pattern.match(texts[at], 0, MAX_MATCHED_CHARS)
        if m:
            last = (at, m)
        elif last is not None or table.under.search(texts[at], 0, MAX_MATCHED_CHARS):
            break
    return last


def _printed_nothing(texts: Sequence[str], row: int, command_at: int) -> bool:
    """Whether the shell command on ``texts[row]`` printed nothing: the next line is its prompt again (``# lsmod |
    grep nv_peer`` then ``#``). A command without a prompt, or the last line of a paste, says nothing either way."""
    prompt = texts[row][:command_at].strip()
    return bool(prompt) and row + 1 < len(texts) and texts[row + 1].strip().startswith(prompt)


def match_text(text: str, cat: Catalog | None = None) -> tuple[Hit, ...]:
    """Every signature in a paste, its launcher and collector prefixes taken off first."""
    return match_lines(strip_prefixes(text), cat)


# --- the generated documentation ------------------------------------------------------------------------------------

MARKER_BEGIN = "<!-- BEGIN GENERATED SIGNATURES -->"
MARKER_END = "<!-- END GENERATED SIGNATURES -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _source_cell(s: Signature) -> str:
    parts = [s.source if s.source.startswith("https://") else f"`{s.source}`"]
    if s.thread:
        parts.append(s.thread)
    return _cell("; ".join(parts))


def catalog_markdown(cat: Catalog | None = None) -> str:
    """The generated section of docs/signatures.md (tests fail when the committed file differs)."""
    cat = cat or catalog()
    out = [
        "<!-- generated by `python tools/regen_docs.py`; edit topoaudit/catalog/signatures.toml instead -->",
        "",
        f"{len(cat.signatures)} signatures.",
        "",
        "| id | code | severity | what it means | source |",
        "|---|---|---|---|---|",
    ]
    for s in cat.signatures:
        out.append(f"| `{s.id}` | `{s.code}` | {s.severity.value} | {_cell(s.meaning)} | {_source_cell(s)} |")
    if cat.codes:
        out += ["", "### Codes the catalog introduces", "", "| code | severity | title | remedy |", "|---|---|---|---|"]
        for c in cat.codes:
            out.append(f"| `{c.code}` | {c.severity.value} | {_cell(c.title)} | {_cell(c.remedy)} |")
    return "\n".join(out)


def render_doc(existing: str, cat: Catalog | None = None) -> str:
    """``existing`` docs/signatures.md with the text between the markers replaced by :func:`catalog_markdown`."""
    head, _, rest = existing.partition(MARKER_BEGIN)
    _, _, tail = rest.partition(MARKER_END)
    return f"{head}{MARKER_BEGIN}\n{catalog_markdown(cat)}\n{MARKER_END}{tail}"
