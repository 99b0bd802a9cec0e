"""Policies: the gate, configurable. A TOML file names what a fleet or instance type must look like.

``load_policy("FILE" | "builtin:NAME") -> Policy`` reads and validates one (an unknown key or a bad value is
a :class:`~topoaudit.errors.ConfigError` naming the file and line: exit 4). ``apply_policy`` is the pipeline's
policy step: it checks the expectations (``expectation-not-met`` findings), applies severity overrides and
ignores (kept, with their reasons, in ``Report.policy``). The built-in policies (``topoaudit/policies``) show
the format.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import re
import sys
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from topoaudit.catalog import GpuSpec, all_gpus, find_gpu
from topoaudit.errors import ConfigError
from topoaudit.judge.expectations import Expectations, check_expectations
from topoaudit.model.bench import BenchResult
from topoaudit.model.finding import Finding, Severity
from topoaudit.model.machine import Machine
from topoaudit.model.policy import (
    BusbwExpectation,
    IgnoredFinding,
    IgnoreRule,
    Policy,
    PolicyOutcome,
    SeverityChange,
)
from topoaudit.model.topology import Domain
from topoaudit.model.values import Unsupported
from topoaudit.rules.codes import CODES
from topoaudit.units import parse_size

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

BUILTIN_PREFIX = "builtin:"
_TOP = {"policy", "expect", "severity", "ignore", "gate"}
_POLICY = {"name", "description"}
_EXPECT = {
    "gpus", "gpu_model", "domains", "min_domain", "nic_local", "busbw", "busbw_catalog_floor", "max_latency_us",
    "latency_group",
}  # fmt: skip
_BUSBW = {"group", "min_gbps", "size"}
_IGNORE = {"code", "reason", "match"}
_GATE = {"fail_on", "strict"}


def builtin_policies() -> dict[str, str]:
    """Name -> description of every built-in policy (``topoaudit/policies/*.toml``)."""
    out = {}
    for entry in sorted(resources.files("topoaudit.policies").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            out[entry.name[: -len(".toml")]] = str(data.get("policy", {}).get("description", ""))
    return out


def load_policy(ref: str) -> Policy:
    """Read and validate a policy file or a built-in policy (``builtin:NAME``)."""
    if ref.startswith(BUILTIN_PREFIX):
        name = ref[len(BUILTIN_PREFIX) :]
        known = builtin_policies()
        if name not in known:
            raise ConfigError(f"no built-in policy {name!r}", hint=_builtins_hint())
        text = resources.files("topoaudit.policies").joinpath(f"{name}.toml").read_text(encoding="utf-8")
        return parse_policy(text, ref, default_name=name)
    path = Path(ref)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"policy file {ref} does not exist", hint=_builtins_hint()) from None
    except IsADirectoryError:
        raise ConfigError(f"policy {ref} is a directory, not a policy file", hint=_builtins_hint()) from None
    except PermissionError:
        raise ConfigError(f"cannot read policy file {ref}: permission denied") from None
    except UnicodeDecodeError:
        raise ConfigError(f"policy file {ref} is not UTF-8 text (a policy is a TOML file)") from None
    except OSError as exc:
        raise ConfigError(f"cannot read policy file {ref}: {exc.strerror or exc}") from None
    return parse_policy(text, ref, default_name=path.stem)


def _builtins_hint() -> str:
    """What a user can use instead of a missing file: the built-in policies, by name."""
    return "built-in policies: " + ", ".join(BUILTIN_PREFIX + k for k in builtin_policies())


def _format_hint() -> str:
    """Where the installed package shows the policy format: its built-in policies, as files on disk."""
    return f"the built-in policies show the format: {resources.files('topoaudit.policies')}"


def parse_policy(text: str, source: str, *, default_name: str = "policy") -> Policy:
    """Policy TOML text -> Policy; ConfigError with ``source:line`` for every mistake."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_toml_error(source, text, str(exc)), hint=_format_hint()) from None
    return _Parser(text, source).policy(data, default_name)


def _toml_error(source: str, text: str, message: str) -> str:
    """``source:LINE: not valid TOML: what (column N)``; an error at the end of the file names its last line."""
    where = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if where:
        what = message[: where.start()]
        return f"{source}:{where.group(1)}: not valid TOML: {what} (column {where.group(2)})"
    what = re.sub(r"\s*\(at end of document\)$", "", message)
    last = len(text.rstrip("\n").splitlines()) or 1
    return f"{source}:{last}: not valid TOML: {what} at the end of the file"


class _Parser:
    """Validates the parsed TOML, naming the line of each bad key (TOML parsers keep no positions)."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.text = text
        self.lines = _key_lines(text)

    def error(self, path: tuple[str | int, ...], message: str) -> ConfigError:
        line = 0
        for cut in range(len(path), 0, -1):
            line = self.lines.get(path[:cut], 0)
            if line:
                break
        where = f"{self.source}:{line}" if line else self.source
        dotted = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in path).replace(".[", "[")
        return ConfigError(f"{where}: {dotted}: {message}", hint=_format_hint())

    def table(self, value: Any, path: tuple[str | int, ...], allowed: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, f"expected a table, got {_kind(value)}")
        for key in value:
            if key not in allowed:
                raise self.error((*path, key), f"unknown key (expected one of: {', '.join(sorted(allowed))})")
        return value

    def number(self, value: Any, path: tuple[str | int, ...], *, integer: bool = False, low: float = 0) -> Any:
        ok = isinstance(value, int) if integer else isinstance(value, (int, float))
        if not ok or isinstance(value, bool) or value < low or (not integer and value != value):
            raise self.error(path, f"expected {'an integer' if integer else 'a number'} >= {low:g}, got {value!r}")
        return value

    def string(self, value: Any, path: tuple[str | int, ...], *, empty: bool = False) -> str:
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise self.error(path, f"expected a non-empty string, got {value!r}")
        return value

    def boolean(self, value: Any, path: tuple[str | int, ...]) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {value!r}")
        return value

    def code(self, value: Any, path: tuple[str | int, ...]) -> str:
        code = self.string(value, path)
        if code not in CODES:
            close = difflib.get_close_matches(code, CODES, n=1)
            guess = f" (did you mean {close[0]!r}?)" if close else ""
            raise self.error(path, f"unknown finding code {code!r}{guess}")
        return code

    def severity(self, value: Any, path: tuple[str | int, ...]) -> Severity:
        try:
            return Severity(value)
        except ValueError:
            raise self.error(path, f"expected one of info, warn, fail; got {value!r}") from None

    def policy(self, data: dict[str, Any], default_name: str) -> Policy:
        self.table(data, (), _TOP)
        meta = self.table(data.get("policy", {}), ("policy",), _POLICY)
        fields: dict[str, Any] = {
            "name": self.string(meta.get("name", default_name), ("policy", "name")),
            "source": self.source,
            "sha256": hashlib.sha256(self.text.encode("utf-8")).hexdigest(),
            "description": self.string(meta.get("description", ""), ("policy", "description"), empty=True),
        }
        fields.update(self.expect(data.get("expect", {})))
        severity = self.table(data.get("severity", {}), ("severity",), set(CODES) | set(data.get("severity", {})))
        fields["severity"] = tuple(
            (self.code(code, ("severity", code)), self.severity(value, ("severity", code)))
            for code, value in severity.items()
        )
        ignores = data.get("ignore", [])
        if not isinstance(ignores, list):
            raise self.error(("ignore",), "expected [[ignore]] tables")
        fields["ignore"] = tuple(self.ignore(item, i) for i, item in enumerate(ignores))
        gate = self.table(data.get("gate", {}), ("gate",), _GATE)
        if "fail_on" in gate:
            fields["fail_on"] = self.severity(gate["fail_on"], ("gate", "fail_on"))
        if "strict" in gate:
            fields["strict"] = self.boolean(gate["strict"], ("gate", "strict"))
        return Policy(**fields)

    def expect(self, raw: Any) -> dict[str, Any]:
        exp = self.table(raw, ("expect",), _EXPECT)
        out: dict[str, Any] = {}
        if "gpus" in exp:
            out["gpus"] = self.number(exp["gpus"], ("expect", "gpus"), integer=True, low=1)
        if "gpu_model" in exp:
            models = exp["gpu_model"] if isinstance(exp["gpu_model"], list) else [exp["gpu_model"]]
            keys = []
            for i, model in enumerate(models):
                path: tuple[str | int, ...] = (
                    ("expect", "gpu_model") if len(models) == 1 else ("expect", "gpu_model", i)
                )
                spec = find_gpu(self.string(model, path))
                if spec is None:
                    known = ", ".join(s.key for s in all_gpus())
                    raise self.error(path, f"{model!r} is not in the hardware catalog (known: {known})")
                keys.append(spec.key)
            out["gpu_models"] = tuple(keys)
        if "domains" in exp:
            sizes = exp["domains"]
            if not isinstance(sizes, list):
                raise self.error(("expect", "domains"), f"expected a list of domain sizes, got {sizes!r}")
            for i, size in enumerate(sizes):
                self.number(size, ("expect", "domains", i), integer=True, low=2)
            out["domains"] = tuple(sorted(sizes, reverse=True))
        if "min_domain" in exp:
            out["min_domain"] = self.number(exp["min_domain"], ("expect", "min_domain"), integer=True, low=1)
        if "nic_local" in exp:
            out["nic_local"] = self.boolean(exp["nic_local"], ("expect", "nic_local"))
        if "busbw_catalog_floor" in exp:
            out["busbw_catalog_floor"] = self.boolean(exp["busbw_catalog_floor"], ("expect", "busbw_catalog_floor"))
        if "max_latency_us" in exp:
            out["max_latency_us"] = float(self.number(exp["max_latency_us"], ("expect", "max_latency_us"), low=0))
        if "latency_group" in exp:
            out["latency_group"] = self.string(exp["latency_group"], ("expect", "latency_group"))
        rules = exp.get("busbw", [])
        if not isinstance(rules, list):
            raise self.error(("expect", "busbw"), "expected [[expect.busbw]] tables")
        out["busbw"] = tuple(self.busbw(rule, i) for i, rule in enumerate(rules))
        return out

    def busbw(self, raw: Any, index: int) -> BusbwExpectation:
        path: tuple[str | int, ...] = ("expect", "busbw", index)
        rule = self.table(raw, path, _BUSBW)
        for key in ("group", "min_gbps"):
            if key not in rule:
                raise self.error(path, f"missing key {key!r}")
        size = 0
        if "size" in rule:
            try:
                size = parse_size(rule["size"])
            except ValueError as exc:
                raise self.error((*path, "size"), str(exc)) from None
        return BusbwExpectation(
            group=self.string(rule["group"], (*path, "group")),
            min_gbps=float(self.number(rule["min_gbps"], (*path, "min_gbps"), low=0)),
            size_bytes=size,
        )

    def ignore(self, raw: Any, index: int) -> IgnoreRule:
        path: tuple[str | int, ...] = ("ignore", index)
        rule = self.table(raw, path, _IGNORE)
        if "code" not in rule or "reason" not in rule:
            raise self.error(path, "an [[ignore]] needs a code and a reason")
        return IgnoreRule(
            code=self.code(rule["code"], (*path, "code")),
            reason=self.string(rule["reason"], (*path, "reason")),
            match=self.string(rule.get("match", ""), (*path, "match"), empty=True),
        )


def _kind(value: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(type(value), repr(value))


_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"


def _split_key(text: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in re.findall(_KEY, text))


def _key_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """(table..., key) -> 1-based line of its first appearance; arrays of tables are indexed."""
    out: dict[tuple[str | int, ...], int] = {}
    table: tuple[str | int, ...] = ()
    counts: dict[tuple[str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if m := re.match(rf"\[\[\s*({_DOTTED})\s*\]\]", stripped):
            base = _split_key(m.group(1))
            index = counts.get(base, 0)
            counts[base] = index + 1
            table = (*base, index)
            out.setdefault(table, number)
            out.setdefault(base, number)
        elif m := re.match(rf"\[\s*({_DOTTED})\s*\]", stripped):
            table = _split_key(m.group(1))
            out.setdefault(table, number)
        elif m := re.match(rf"({_DOTTED})\s*=", stripped):
            key = (*table, *_split_key(m.group(1)))
            out.setdefault(key, number)
            if re.search(r"=\s*\[", stripped):  # list items on this line: index them to this line
                for i in range(stripped.count(",") + 1):
                    out.setdefault((*key, i), number)
    return out


# --- applying a policy --------------------------------------------------------------------------------------


def apply_policy(
    policy: Policy,
    findings: Iterable[Finding],
    *,
    machine: Machine,
    domains: tuple[Domain, ...],
    spec: GpuSpec | None,
    bench: BenchResult | Unsupported,
) -> tuple[tuple[Finding, ...], PolicyOutcome]:
    """The policy step, run once over every finding: expectations -> findings, severity overrides, ignores.

    What the policy changed is recorded in the returned :class:`PolicyOutcome` (never in a finding's evidence).
    """
    checked = check_expectations(Expectations.of_policy(policy), machine, domains, spec, bench)
    new = checked.findings
    overrides = dict(policy.severity)
    changes: dict[tuple[str, Severity, Severity], int] = {}
    judged: list[Finding] = []
    for item in (*findings, *new):
        now = overrides.get(item.code, item.severity)
        if now != item.severity:
            key = (item.code, item.severity, now)
            changes[key] = changes.get(key, 0) + 1
            item = dataclasses.replace(item, severity=now)
        judged.append(item)
    ignored: list[IgnoredFinding] = []
    out: list[Finding] = []
    for item in judged:
        rule = next((r for r in policy.ignore if r.code == item.code and r.match in item.message), None)
        if rule is None:
            out.append(item)
        else:
            ignored.append(IgnoredFinding(item, rule.reason))
    outcome = PolicyOutcome(
        name=policy.name,
        source=policy.source,
        sha256=policy.sha256,
        description=policy.description,
        met=checked.met,
        not_met=tuple(f.message for f in new),
        not_checked=checked.not_checked,
        overridden=tuple(SeverityChange(c, w, n, k) for (c, w, n), k in changes.items()),
        ignored=tuple(ignored),
    )
    return tuple(out), outcome
