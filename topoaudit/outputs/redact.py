"""Redaction for public tickets: hostnames, serials, UUIDs, IP and MAC addresses become stable tokens.

One :class:`Redactor` serves a whole report and its evidence, so the same value gets the same token in
every file (``host-1`` in report.json, report.html and the raw ``nvidia-smi`` text alike). It learns the
values to hide from the report's fields (``hostname``, ``serial``, ``uuid``, ``cluster_uuid``, bench
hosts), from ``key: value`` lines of the evidence (``Serial Number : ...``, ``hostname=...``), shell
prompts, NCCL log lines and host-naming environment variables (``NCCL_COMM_ID``, ``MASTER_ADDR``, Slurm
host lists), then replaces them everywhere -- also right after a JSON escape such as ``\\n`` -- and finally
replaces anything that looks like a UUID, a MAC/GUID, an IPv4 or an IPv6 address. Over-redaction is
preferred to a leak.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import re
from collections import Counter
from typing import Any

from topoaudit.model.report import Report, report_from_dict, report_to_dict

KINDS = ("host", "serial", "uuid", "mac", "ip")

# report fields whose string value is sensitive, and the token kind they get
_FIELD_KIND = {"hostname": "host", "serial": "serial", "uuid": "uuid", "cluster_uuid": "uuid", "host": "host"}
_LIST_KIND = {"hosts": "host"}
# fields that hold version numbers: looked at for known values, never for address-like patterns
_VERSION_KEYS = frozenset(
    {"kernel", "driver_version", "nvml_version", "cuda_driver_version", "tool_version", "version", "generated_at"}
)

# A value may follow a JSON escape (``\nnode7`` in an escaped string is "node7" on a new line): such a
# letter is not part of the value, so every left boundary lets an escape through.
_ESCAPED = r"(?<=\\[nrtbf])|(?<=\\u[0-9a-fA-F]{4})"


def _start(not_after: str) -> str:
    """A left boundary: not right after one of ``not_after``, unless that character ends a JSON escape."""
    return rf"(?:(?<![{not_after}])|{_ESCAPED})"


_UUID = re.compile(
    _start("0-9A-Za-z") + r"(?:GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"(?![0-9A-Za-z])"
)
# MAC (6 bytes), EUI-64 and IPoIB hardware addresses (20 bytes), colon or dash separated
_MAC = re.compile(
    _start("0-9A-Za-z:-") + r"[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4,18}(?![0-9A-Za-z:-])"
)
_GUID = re.compile(_start("0-9A-Za-z") + r"0x[0-9a-fA-F]{16}(?![0-9A-Za-z])")  # InfiniBand node/port GUIDs
_IPV4 = re.compile(_start("0-9A-Za-z.") + r"(?:\d{1,3}\.){3}\d{1,3}(?![0-9A-Za-z]|\.\d)")
_IPV6 = re.compile(
    _start("0-9A-Za-z:.") + r"(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%[0-9A-Za-z_.-]+)?(?![0-9A-Za-z:.])"
)
# "Serial Number : 1654922006536", "hostname=node7", "Host Name: node7" in raw evidence
_KEYED = re.compile(
    r"(?im)^[ \t]*(?P<key>serial(?:[ _]number)?|board[ _]serial|host[ _-]?name|node[ _-]?name|fqdn)"
    r"[ \t]*[:=][ \t]*\"?(?P<value>[^\s\",]+)"
)
# a shell prompt pasted with a capture: "root@dgx-07:~# ", "user@node:/data$ ", "[admin@gpu-3 ~]$ "
_PROMPT = re.compile(
    r"(?<![\w.@-])[A-Za-z_][\w.-]*@(?P<host>[A-Za-z0-9][\w.-]*)(?::[^\s#$%>]*[#$%>]|\s+[^\s\]]*\][#$%>])"
)
# host names in collective logs: "node7:24926:24990 [0] NCCL INFO ..." (NCCL_DEBUG) and nccl-tests' rank lines
# "#  Rank  0 Group  0 Pid  944 on node7 device  0 [0x0f] NVIDIA H200"
_LOG_HOST = re.compile(
    r"(?m)^(?:\[[\d,]+\]<\w+>:)?(?P<prefix>[A-Za-z0-9][\w.-]*):\d+:\d+ \[\d+\] NCCL "
    r"|\bPid\s+\d+\s+on\s+(?P<rank>[A-Za-z0-9][\w.-]*)\s+device\b"
)
# "NAME=value" of an environment variable (a probe's variables, an `env` dump, a bench's environment)
_VARIABLE = re.compile(r"(?<![A-Za-z0-9_])(?P<name>[A-Z][A-Z0-9_]*)=(?P<value>[A-Za-z0-9_.:%\[\],-]+)")
# variables whose value names hosts: NCCL_COMM_ID=head:29500, MASTER_ADDR, SLURM_NODELIST=node-[17-18], HOSTNAME
_HOST_VARIABLE = re.compile(r"HOST|NODE|ADDR|MASTER|COMM_ID|SERVER|PEER|COORDINATOR|ENDPOINT")
# ... unless the name says the value is a number or a setting (SLURM_NNODES, MASTER_PORT, NCCL_IB_ADDR_FAMILY)
_NOT_A_HOST_VARIABLE = re.compile(r"PORT|RANK|COUNT|NUM|NNODES|SIZE|FAMILY|(?<!COMM)_ID$")
_HOST_RANGE = re.compile(r"\[([0-9,\-]+)\]")
_MAX_EXPANDED = 1024  # hosts expanded from one Slurm host list
_NOT_A_VALUE = frozenset({"n/a", "none", "unknown", "not", "[n/a]", "-", "null", "true", "false"})


class Redactor:
    """Maps sensitive values to tokens (``host-1``, ``serial-2``...), stable within one report."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}  # value -> token
        self._counts: Counter[str] = Counter()
        self._pattern: re.Pattern[str] | None = None

    # --- learning -------------------------------------------------------------------------------
    def token(self, kind: str, value: str) -> str:
        """The token of ``value`` (made on first sight)."""
        found = self._known.get(value)
        if found is None:
            self._counts[kind] += 1
            found = f"{kind}-{self._counts[kind]}"
            self._known[value] = found
            self._pattern = None
        return found

    def learn(self, kind: str, value: object) -> None:
        if not isinstance(value, str):
            return
        v = value.strip()
        if len(v) < 2 or v.lower() in _NOT_A_VALUE or v in self._known.values():
            return
        tok = self.token(kind, v)
        if kind == "host" and "." in v:  # the short name of an FQDN is the same host
            short = v.split(".", 1)[0]
            if len(short) >= 2 and short not in self._known and not short.isdecimal():
                self._known[short] = tok
                self._pattern = None

    def learn_data(self, data: Any) -> None:
        """Collect sensitive values from a report dict (or any JSON-like tree) by field name."""
        if isinstance(data, dict):
            for key, value in data.items():
                if key in _FIELD_KIND and isinstance(value, str):
                    self.learn(_FIELD_KIND[key], value)
                elif key in _LIST_KIND and isinstance(value, list):
                    for item in value:
                        self.learn(_LIST_KIND[key], item)
                elif key == "environment" and isinstance(value, dict):
                    for name, setting in value.items():
                        self.learn_variable(str(name), str(setting))
                    self.learn_data(list(value.values()))
                else:
                    self.learn_data(value)
        elif isinstance(data, list):
            for item in data:
                self.learn_data(item)
        elif isinstance(data, str):
            self.learn_text(data)

    def learn_text(self, text: str) -> None:
        """Collect values named in raw evidence: ``key: value`` lines (serials, hostnames), shell prompts,
        NCCL and nccl-tests log lines, host-naming environment variables; a JSON document is also read string
        by string."""
        for m in _KEYED.finditer(text):
            key = m.group("key").lower()
            self.learn("serial" if "serial" in key else "host", m.group("value"))
        for m in _PROMPT.finditer(text):
            self.learn("host", m.group("host"))
        for m in _LOG_HOST.finditer(text):
            self.learn("host", m.group("prefix") or m.group("rank"))
        for m in _VARIABLE.finditer(text):
            self.learn_variable(m.group("name"), m.group("value"))
        if text.lstrip()[:1] in ("{", "["):
            with contextlib.suppress(ValueError):
                self.learn_data(json.loads(text))

    def learn_variable(self, name: str, value: str) -> None:
        """The hosts named by an environment variable (``NCCL_COMM_ID=head-3:29500``, ``SLURM_NODELIST=n[1-2]``)."""
        if _HOST_VARIABLE.search(name.upper()) and not _NOT_A_HOST_VARIABLE.search(name.upper()):
            for host in _hosts_in(value):
                self.learn("host", host)

    # --- applying -------------------------------------------------------------------------------
    def text(self, s: str, *, patterns: bool = True) -> str:
        """``s`` with every known value and (unless ``patterns`` is False) every address replaced."""
        if self._known:
            if self._pattern is None:
                alternatives = sorted(self._known, key=len, reverse=True)
                self._pattern = re.compile(
                    _start("0-9A-Za-z") + "(?:" + "|".join(re.escape(a) for a in alternatives) + r")(?![0-9A-Za-z])"
                )
            s = self._pattern.sub(lambda m: self._known[m.group(0)], s)
        if not patterns:
            return s
        s = _UUID.sub(lambda m: self.token("uuid", m.group(0)), s)
        s = _GUID.sub(lambda m: self.token("mac", m.group(0)), s)
        s = _MAC.sub(lambda m: self.token("mac", m.group(0)), s)
        s = _IPV4.sub(lambda m: self.token("ip", m.group(0)) if _is_ipv4(m.group(0)) else m.group(0), s)
        s = _IPV6.sub(lambda m: self.token("ip", m.group(0)) if _is_ipv6(m.group(0)) else m.group(0), s)
        return s

    def data(self, value: Any, key: str = "") -> Any:
        """A JSON-like tree with every string (keys included) redacted."""
        if isinstance(value, str):
            return self.text(value, patterns=key not in _VERSION_KEYS)
        if isinstance(value, dict):
            return {self.text(str(k)): self.data(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.data(v, key) for v in value]
        return value

    def summary(self) -> dict[str, int]:
        """How many distinct values of each kind were replaced (never the values)."""
        return {kind: self._counts[kind] for kind in KINDS if self._counts[kind]}


def _hosts_in(value: str) -> list[str]:
    """Host names in a variable's value: a list split at top-level commas, ports dropped, Slurm ranges
    (``node-[17-18,20]``) kept as written and expanded; addresses are left to the address patterns."""
    items, depth, current = [], 0, ""
    for ch in value:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    items.append(current)
    hosts: list[str] = []
    for item in items:
        item = re.sub(r":\d+$", "", item.strip())
        if not re.search(r"[A-Za-z]", item) or _is_ipv4(item) or _is_ipv6(item.strip("[]")):
            continue
        hosts.append(item)
        if "[" in item:
            hosts.extend(_expand_ranges(item))
    return hosts


def _expand_ranges(pattern: str) -> list[str]:
    """``node-[17-18,20]`` -> node-17, node-18, node-20 (zero padding kept; at most a thousand names)."""
    names = [""]
    position = 0
    for m in _HOST_RANGE.finditer(pattern):
        choices: list[str] = []
        for part in m.group(1).split(","):
            low, _, high = part.partition("-")
            if not low.isdecimal() or (high and not high.isdecimal()):
                return []
            stop = int(high) if high else int(low)
            choices.extend(str(n).zfill(len(low)) for n in range(int(low), min(stop, int(low) + _MAX_EXPANDED) + 1))
        prefix = pattern[position : m.start()]
        names = [f"{name}{prefix}{choice}" for name in names for choice in choices][:_MAX_EXPANDED]
        position = m.end()
    return [name + pattern[position:] for name in names]


def _is_ipv4(s: str) -> bool:
    try:
        ipaddress.IPv4Address(s)
    except ValueError:
        return False
    return True


def _is_ipv6(s: str) -> bool:
    if "::" not in s and s.count(":") != 7:
        return False
    try:
        ipaddress.IPv6Address(s.split("%", 1)[0])
    except ValueError:
        return False
    return True


REDACTION_NOTE = (
    "Redacted for a public ticket: hostnames, serials, UUIDs, IP and MAC addresses are replaced by stable "
    "tokens (the same value has the same token throughout this report and its bundle)."
)


def redact_report(report: Report, redactor: Redactor | None = None, evidence_texts: tuple[str, ...] = ()) -> Report:
    """The report with every sensitive value replaced; ``extras["redaction"]`` says what was done."""
    r = redactor or Redactor()
    data = report_to_dict(report)
    r.learn_data(data)
    for text in evidence_texts:
        r.learn_text(text)
    red = r.data(data)
    red.setdefault("extras", {})["redaction"] = {"note": REDACTION_NOTE, "replaced": r.summary()}
    return report_from_dict(red)
