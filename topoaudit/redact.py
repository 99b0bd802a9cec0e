"""Redaction for public tickets: hostnames, serials, UUIDs, IP and MAC addresses become stable tokens.

One :class:`Redactor` serves a whole report and its evidence, so the same value gets the same token in
every file (``host-1`` in report.json, report.html and the raw ``nvidia-smi`` text alike). It learns the
values to hide from the report's fields (``hostname``, ``serial``, ``uuid``, ``cluster_uuid``, bench
hosts) and from ``key: value`` lines of the evidence (``Serial Number : ...``, ``hostname=...``), then
replaces them everywhere, and finally replaces anything that looks like a UUID, a MAC/GUID, an IPv4 or an
IPv6 address. Over-redaction is preferred to a leak.
"""

from __future__ import annotations

import ipaddress
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

_UUID = re.compile(
    r"(?<![0-9A-Za-z])(?:GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"(?![0-9A-Za-z])"
)
# MAC (6 bytes), EUI-64 and IPoIB hardware addresses (20 bytes), colon or dash separated
_MAC = re.compile(
    r"(?<![0-9A-Za-z:-])[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4,18}(?![0-9A-Za-z:-])"
)
_GUID = re.compile(r"(?<![0-9A-Za-z])0x[0-9a-fA-F]{16}(?![0-9A-Za-z])")  # InfiniBand node/port GUIDs
_IPV4 = re.compile(r"(?<![0-9A-Za-z.])(?:\d{1,3}\.){3}\d{1,3}(?![0-9A-Za-z]|\.\d)")
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%[0-9A-Za-z_.-]+)?(?![0-9A-Za-z:.])"
)
# "Serial Number : 1654922006536", "hostname=node7", "Host Name: node7" in raw evidence
_KEYED = re.compile(
    r"(?im)^[ \t]*(?P<key>serial(?:[ _]number)?|board[ _]serial|host[ _-]?name|node[ _-]?name|fqdn)"
    r"[ \t]*[:=][ \t]*\"?(?P<value>[^\s\",]+)"
)
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
            if len(short) >= 2 and short not in self._known and not short.isdigit():
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
                else:
                    self.learn_data(value)
        elif isinstance(data, list):
            for item in data:
                self.learn_data(item)

    def learn_text(self, text: str) -> None:
        """Collect values named on ``key: value`` lines of raw evidence (serials, hostnames)."""
        for m in _KEYED.finditer(text):
            key = m.group("key").lower()
            self.learn("serial" if "serial" in key else "host", m.group("value"))

    # --- applying -------------------------------------------------------------------------------
    def text(self, s: str, *, patterns: bool = True) -> str:
        """``s`` with every known value and (unless ``patterns`` is False) every address replaced."""
        if self._known:
            if self._pattern is None:
                alternatives = sorted(self._known, key=len, reverse=True)
                self._pattern = re.compile(
                    r"(?<![0-9A-Za-z])(?:" + "|".join(re.escape(a) for a in alternatives) + r")(?![0-9A-Za-z])"
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
