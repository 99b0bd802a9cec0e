"""What launchers and log collectors put in front of pasted lines, taken off and kept.

A pasted log rarely starts its lines with what the tool printed: Ray writes ``(pid=909608) `` or ``(RayWorkerWrapper
pid=880, ip=10.0.0.5) ``, SkyPilot ``(head, rank=0, pid=3388) ``, torchrun ``[rank3]:``, Open MPI
``[1,0]<stdout>:``, MPICH ``[0] ``, pdsh and clush ``host: ``, ``srun -l`` ``0: ``, ``kubectl logs --prefix``
``[pod/name/container] ``; collectors add timestamps (ISO-8601, syslog, dmesg, ``[2024-01-01 12:00:00,123]``) and
logger headers; Markdown adds ``> `` quotes and code fences, a pull request's diff a ``+`` on the lines it adds;
Ray also appends ``[repeated 6x across cluster]`` to lines it folded together.
:func:`strip_prefixes` takes them off every line, in one pass with one precompiled pattern, and keeps the line's
number and what each prefix said (rank, host, pid where it says one), so a reader sees the tool's text and a report
can still name the rank or host a line came from.

NCCL's own ``host:pid:tid [dev] NCCL INFO`` is the tool's text, not a prefix: it is left in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from topoaudit.model.paste import NO_HOST as NO_HOST
from topoaudit.model.paste import NO_RANK as NO_RANK
from topoaudit.model.paste import PREFIX_SOURCE
from topoaudit.model.values import Unsupported

SOURCE = PREFIX_SOURCE
NO_PID = Unsupported(SOURCE, "no prefix names a process id")
MAX_PREFIXES = 8  # a line with more stacked prefixes than this keeps the rest as text

KINDS = (
    "ray",  # (pid=N) / (Actor pid=N, ip=A)
    "skypilot",  # (head, rank=0, pid=N) / (worker1, rank=1, pid=N, ip=A)
    "torchrun",  # [rank3]: / [default3]:
    "openmpi",  # [job,rank]<stdout>:
    "mpich",  # [rank] (mpirun -prepend-rank)
    "slurm",  # srun -l: "3: "
    "pdsh",  # pdsh / clush: "host: "
    "kubectl",  # kubectl logs --prefix: [pod/name/container]
    "syslog",  # Mon DD HH:MM:SS host prog[pid]:
    "timestamp",  # ISO-8601, [YYYY-MM-DD HH:MM:SS,mmm], dmesg [ 12.345678] and [Sun Apr 14 12:48:42 2024]
    "logger",  # Python/vLLM/glog headers: "INFO 11-11 14:17:08 utils.py:960] ", "[E ProcessGroupNCCL.cpp:828] "
    "sglang",  # [19:01:01 TP0]
    "quote",  # Markdown "> "
    "fence",  # a Markdown code fence line (``` or ~~~), dropped
)


@dataclass(frozen=True, slots=True)
class Prefix:
    """One prefix taken off a line: its kind, its text as it stood, and what it said about the line's origin."""

    kind: str
    text: str
    rank: int | Unsupported = NO_RANK
    host: str | Unsupported = NO_HOST
    pid: int | Unsupported = NO_PID


@dataclass(frozen=True, slots=True)
class Line:
    """A pasted line without its prefixes, with its 1-based number in the paste."""

    number: int
    text: str  # what the tool printed (leading spaces kept: they are part of tables and nvidia-smi -q)
    prefixes: tuple[Prefix, ...] = ()
    suffix: str = ""  # Ray's " [repeated 6x across cluster]", taken off the end

    @property
    def rank(self) -> int | Unsupported:
        """The rank a prefix names (the outermost that names one)."""
        return next((p.rank for p in self.prefixes if not isinstance(p.rank, Unsupported)), NO_RANK)

    @property
    def host(self) -> str | Unsupported:
        """The host a prefix names (the outermost that names one)."""
        return next((p.host for p in self.prefixes if not isinstance(p.host, Unsupported)), NO_HOST)

    @property
    def pid(self) -> int | Unsupported:
        """The process id a prefix names (the outermost that names one)."""
        return next((p.pid for p in self.prefixes if not isinstance(p.pid, Unsupported)), NO_PID)


_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_CLOCK = r"\d\d:\d\d:\d\d(?:[.,]\d+)?"
_ISO = rf"\d{{4}}[-/]\d\d[-/]\d\d[T ]{_CLOCK}(?:Z|[+-]\d\d:?\d\d)?"
# A pdsh host: an IPv4 address, a lower-case dotted name, or a name with a digit or hyphen in it (node07,
# lambda-scalar02, no underscore); never GPU0/NIC1-like labels, a word such as "ERROR" or "RuntimeError", or
# an environment variable ("NCCL_P2P_DISABLE: 1" in a YAML file), a systemd unit or a source file
# ("nvidia-fabricmanager.service: ...", "utils.py: ..."), a register lspci -vvv names ("LnkSta2: ...") or the
# kernel's AMD IOMMU ("AMD-Vi: ...").
_NOT_A_HOST = (
    r"(?![\w.-]*\.(?:service|socket|mount|target|timer|scope|slice|py|cc|cu|cpp|h|c|so|log|txt|sh)\b)"
    r"(?!(?:Lnk|Dev|Slt|Root)(?:Sta|Cap|Ctl)2:)"  # lspci -vvv's second link and device registers ("LnkSta2: ...")
    r"(?!AMD-Vi:)"  # the AMD IOMMU's kernel messages ("AMD-Vi: Event logged [IO_PAGE_FAULT ...]")
)
_HOST = (
    rf"{_NOT_A_HOST}(?:\d{{1,3}}(?:\.\d{{1,3}}){{3}}|[a-z0-9-]+(?:\.[a-z0-9-]+)+"
    # a digit or hyphen after the first character, found by a lookahead so that a long token is scanned once
    r"|(?!(?:GPU|NIC|CPU)\d)(?=[A-Za-z0-9][A-Za-z0-9.-]*?[\d-])[A-Za-z0-9][A-Za-z0-9.-]*)"
)

# One alternative per kind, each wrapped in a group named after it (the outer group closes last, so a match's
# ``lastgroup`` names the kind). Tried at the start of the line, again after each prefix taken off.
_ALTERNATIVES = (
    ("fence", r"(?:```|~~~)[\w+-]*\s*$"),
    ("quote", r">(?: |$)"),
    ("ray", r"\((?:[A-Za-z_][\w.]* )?pid=(?P<ray_pid>\d{1,10})(?:, ip=(?P<ray_ip>[0-9A-Fa-f.:]+))?(?:, [^)]*)?\) ?"),
    (
        "skypilot",
        r"\((?P<sky_node>[A-Za-z_][\w.-]*), rank=(?P<sky_rank>\d{1,7}), pid=(?P<sky_pid>\d{1,10})"
        r"(?:, ip=(?P<sky_ip>[0-9A-Fa-f.:]+))?\) ?",
    ),
    ("torchrun", r"\[(?:rank|default)(?P<torch_rank>\d{1,7})\]: ?"),
    ("openmpi", r"\[\d+,(?P<mpi_rank>\d{1,7})\]<std(?:out|err)>: ?"),
    ("kubectl", r"\[pod/(?P<pod>[^/\]\s]+)/[^\]\s]+\] "),
    ("syslog", rf"{_MONTH} [ \d]\d {_CLOCK} (?P<sys_host>\S+) [\w./-]+(?:\[(?P<sys_pid>\d{{1,10}})\])?: "),
    (
        "timestamp",
        rf"(?:{_ISO}|\[{_ISO}\]|\[\s*\d+\.\d+\]|\[{_DAY} {_MONTH} [ \d]\d {_CLOCK} \d{{4}}\]"
        rf"|\[{_MONTH} \d\d \d{{4}} {_CLOCK}\]) +",
    ),
    ("sglang", rf"\[(?:\d{{4}}-\d\d-\d\d )?{_CLOCK}(?: [A-Z]{{2}}(?P<sg_rank>\d{{1,7}}))+\] "),
    (
        "logger",
        rf"(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d {_CLOCK} \[?[\w./-]+:\d+\] "
        r"|\[[IWEF]\d{0,4}(?: ?\d\d:\d\d:\d\d\.\d+)? [\w./-]+:\d+\] "
        r"|\[(?:DEBUG|INFO|WARNING|ERROR)\] \[[\w./-]+:\d+(?::\w+)?\] )",
    ),
    ("mpich", r"\[(?P<mpich_rank>\d{1,5})\] (?=\S)"),
    ("slurm", r"(?P<slurm_rank>\d{1,5}): (?=.)"),
    # nccl-tests prints its own "host: Test NCCL failure ..." and "host: Test timeout ...": the tool's text, kept
    ("pdsh", rf"(?P<pdsh_host>{_HOST}): (?!Test (?:NCCL failure|CUDA failure|Cuda failure|timeout|failure) )(?=.)"),
)
_RAY_REPEATED = re.compile(r"\s*\[repeated \d+x across cluster\]\s*$")
_PREFIX = re.compile(r"[ \t]*(?:" + "|".join(f"(?P<{kind}>{rx})" for kind, rx in _ALTERNATIVES) + ")")
_RANK_GROUP = {"torchrun": "torch_rank", "openmpi": "mpi_rank", "mpich": "mpich_rank", "slurm": "slurm_rank",
               "sglang": "sg_rank", "skypilot": "sky_rank"}  # fmt: skip
_HOST_GROUP = {"ray": "ray_ip", "kubectl": "pod", "syslog": "sys_host", "pdsh": "pdsh_host", "skypilot": "sky_node"}
_PID_GROUP = {"ray": "ray_pid", "syslog": "sys_pid", "skypilot": "sky_pid"}


def strip_line(raw: str) -> tuple[str, tuple[Prefix, ...]]:
    """One line's text without its prefixes, and the prefixes taken off (outermost first)."""
    m = _PREFIX.match(raw)
    return (raw, ()) if m is None else _strip(raw, m)


def _strip(raw: str, m: re.Match[str] | None) -> tuple[str, tuple[Prefix, ...]]:
    prefixes: list[Prefix] = []
    pos = 0
    while m is not None and len(prefixes) < MAX_PREFIXES:
        kind = m.lastgroup or ""
        if kind in _SAYS_NOTHING:
            prefixes.append(Prefix(kind, m.group()))
        else:
            text = m.group()
            said = _SAID.get(text)
            if said is None:
                if len(_SAID) >= _SAID_MAX:
                    _SAID.clear()
                said = _SAID[text] = _prefix(kind, m)
            prefixes.append(said)
        pos = m.end()
        if kind == "fence":
            return "", tuple(prefixes)
        m = _PREFIX.match(raw, pos)
    return raw[pos:], tuple(prefixes)


_SAYS_NOTHING = frozenset({"timestamp", "logger", "quote", "fence"})
_SAID: dict[str, Prefix] = {}  # prefix text -> what it says: a log repeats its ranks, hosts and pids
_SAID_MAX = 4096


def _prefix(kind: str, m: re.Match[str]) -> Prefix:
    rank_group, host_group, pid_group = _RANK_GROUP.get(kind), _HOST_GROUP.get(kind), _PID_GROUP.get(kind)
    rank = m.group(rank_group) if rank_group else None
    host = m.group(host_group) if host_group else None
    pid = m.group(pid_group) if pid_group else None
    return Prefix(
        kind,
        m.group(),
        int(rank) if rank else NO_RANK,
        host if host else NO_HOST,
        int(pid) if pid else NO_PID,
    )


def strip_prefixes(text: str) -> tuple[Line, ...]:
    """Every line of ``text``, numbered from 1, without what launchers and collectors put in front of it."""
    lines = []
    match = _PREFIX.match
    prefixes: tuple[Prefix, ...]
    raw_lines = text.splitlines()
    gutter = _editor_gutter(raw_lines)
    if gutter:
        raw_lines = [raw[gutter:].removeprefix(" ").removeprefix("\t") for raw in raw_lines]
    elif _added_in_a_diff(raw_lines):
        raw_lines = [raw[1:] if raw.startswith("+") else raw for raw in raw_lines]
    # a rank tag on each write ("[0]      1048576 ... -1[0]    1626.5") starts a line with "[": looked for only then
    tags = bool(gutter) or text.startswith("[") or "\n[" in text
    for number, raw in enumerate(raw_lines, 1):
        m = match(raw)
        if m is None:  # most lines of a log carry no prefix
            if tags and raw[:1] == "[" and (tagged := _per_write_tags(raw)) is not None:
                stripped, prefixes = tagged
            else:
                stripped, prefixes = raw, ()
        elif tags and m.lastgroup == "mpich" and (tagged := _per_write_tags(raw)) is not None:
            stripped, prefixes = tagged
        else:
            stripped, prefixes = _strip(raw, m)
        if stripped.endswith("cluster]") and (r := _RAY_REPEATED.search(stripped)):
            lines.append(Line(number, stripped[: r.start()], prefixes, stripped[r.start() :]))
        elif prefixes:
            lines.append(Line(number, stripped, prefixes))
        else:
            lines.append(Line(number, raw))
    return tuple(lines)


_WRITE_TAG = re.compile(r"\[(\d{1,5})\] ")


def _per_write_tags(raw: str) -> tuple[str, tuple[Prefix, ...]] | None:
    """A line whose rank tag (``[0] ``) also stands glued inside it, or None.

    MPICH's ``-prepend-rank`` tags each write of a rank, not each line: nccl-tests prints a row in three writes,
    and the paste shows ``[0]      1048576 ... -1[0]    1626.5 ... 0[0]    2302.3``. The tag is taken off
    wherever it stands glued to the text before it, so the columns read as the tool printed them.
    """
    m = _WRITE_TAG.match(raw)
    if m is None:
        return None
    tag = m.group()
    padded = tag + " "  # a table's next column is padded: NCCL's own ``0[0] -> 1[1]`` is not
    glued = raw.find(padded, len(tag))
    while glued != -1 and raw[glued - 1].isspace():
        glued = raw.find(padded, glued + 1)
    if glued == -1:
        return None
    return raw.replace(tag, ""), (Prefix("mpich", tag, int(m.group(1))),)


_GUTTER = re.compile(r"^( *)(\d{1,6})(?=[ \t]|$)")
MIN_NUMBERED_LINES = 3


_GRAPH_CHILD = re.compile(r"^\+\s*(?:PCI|NVL|NET|SYS|C2C|LOC|PXN|P2P|NVS)\[")


def _added_in_a_diff(raw_lines: list[str]) -> bool:
    """Whether every line is one a unified diff added (``+`` in front): an output pasted inside a pull request's
    change to a README or a test log. NCCL's topology print starts its children with ``+ PCI[...]``: never that."""
    added = 0
    for raw in raw_lines:
        if not raw.strip():
            continue
        if not raw.startswith("+") or raw.startswith("++") or _GRAPH_CHILD.match(raw):
            return False  # most pastes stop at their first line
        added += 1
    return added >= MIN_NUMBERED_LINES


def _editor_gutter(raw_lines: list[str]) -> int:
    """The width of an editor's or ``cat -n``'s line numbers in front of every line, or 0 when there are none.

    Numbered means: every line starts with a right-aligned number one above the last, and some line has words after
    it (a matrix's rows are numbered too, but hold figures alone).
    """
    if len(raw_lines) < MIN_NUMBERED_LINES or (not raw_lines[0][:1].isspace() and not raw_lines[0][:1].isdecimal()):
        return 0
    width, expected, words = 0, 0, False
    for k, raw in enumerate(raw_lines):
        m = _GUTTER.match(raw)
        if m is None:
            return 0
        number, end = int(m.group(2)), m.end()
        if k == 0:
            width, expected = end, number
        if number != expected or end != width or number == 0:
            return 0
        expected += 1
        words = words or any(c.isalpha() for c in raw[end : end + 12])
    return width if words else 0
