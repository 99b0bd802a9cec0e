"""The corpus of real pastes (``tests/fixtures/real``) and how an answer of topoaudit is scored against its label.

A label says what the paste's thread concluded: the fault (a class of cause, independent of topoaudit's codes),
the verdict an expert gives on the paste alone, and the verdicts an expert would also accept. topoaudit agrees
when its verdict is one of those and, for a paste that shows a fault, one of its findings names that fault
(:data:`FAULT_CODES`). A refusal (exit 4) or a crash (exit 5) never agrees.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CORPUS = Path(__file__).parents[1] / "fixtures" / "real"

# The finding codes that name each fault class of the labels. A paste labelled with a fault agrees only if the
# report carries one of them (or, for a paste whose class no code names yet, any warn/fail finding).
FAULT_CODES: dict[str, frozenset[str]] = {
    k: frozenset(v)
    for k, v in {
        "fabric-manager-down": ("nccl-fabric-manager-down", "fabric-not-ready"),
        "fabric-unhealthy": ("fabric-unhealthy", "fabric-not-ready", "health-check-failed"),
        "nvlink-down": ("nvlink-link-down", "nvlink-degraded", "nccl-topo-nvlinks-low", "nvlink-errors",
                        "health-check-failed", "nvlink-absent"),
        "nvlink-split": ("nvlink-split-domain", "nccl-ring-split", "nccl-transport-below-topology",
                         "tp-group-crosses-domain", "nvlink-partial-mesh", "nccl-graph-below-topology"),
        "p2p-unsupported": ("p2p-unavailable", "nccl-p2p-disabled", "nccl-p2p-unused", "pcie-acs-redirect",
                            "nccl-transport-below-topology", "nccl-graph-below-topology", "nccl-ring-split"),
        "config-override": ("nccl-env-override", "gpu-visibility-restricted"),
        "gdr-disabled": ("nccl-gdr-disabled", "gpudirect-rdma-unavailable", "gpu-rdma-setup-failed"),
        "net-fallback": ("rdma-port-down", "rdma-port-errors", "nccl-net-socket-fallback", "bench-busbw-floor"),
        "nvls-failure": ("nccl-nvls-invalid-argument", "nccl-nvls-off", "nccl-nvls-failed"),
        "data-corruption": ("bench-data-corruption", "nvbandwidth-data-corruption", "peer-copy-corruption"),
        "run-hung": ("bench-timeout", "bench-run-hung", "nccl-ras-ranks-missing", "nccl-ras-mismatch"),
        "run-failed": ("bench-rank-failed", "kernel-gpu-error", "nvbandwidth-test-failed", "run-failed",
                       "nccl-net-error", "gpu-lost"),
        "low-bandwidth": ("bench-below-expected", "nvbandwidth-pair-low", "nvbandwidth-below-links",
                          "p2p-copy-pair-low", "nccl-inspector-busbw-low", "bandwidth-tools-disagree",
                          "bench-runs-disagree", "p2p-slower-than-staged", "bench-sweep-collapse",
                          "p2p-copy-below-pcie", "network-throughput-low",
                          "transfer-test-result", "bench-busbw-floor"),
        "high-latency": ("bench-latency-high", "p2p-latency-high"),
        "pcie-degraded": ("pcie-link-degraded", "pcie-path-degraded", "pcie-bus-error"),
        "xid": ("kernel-gpu-error", "gpu-hardware-error", "gpu-lost"),
    }.items()
}  # fmt: skip
NO_FAULT = ("healthy", "not-judgeable", "other")


@dataclass(frozen=True)
class Paste:
    """One real paste and what its thread concluded."""

    id: str
    part: str  # "dev" or "held-back"
    url: str
    kind: str
    shape: str  # "excerpt" or "whole"
    fault: str
    verdict: str  # FAIL | WARN | PASS | NOT_JUDGED
    accept: tuple[str, ...]
    confidence: str
    options: tuple[str, ...] = ()
    conclusion: str = ""

    @property
    def path(self) -> Path:
        """The paste's text, verbatim."""
        return CORPUS / "pastes" / f"{self.id}.txt"


@dataclass(frozen=True)
class Outcome:
    """What topoaudit answered: its verdict (or REFUSED / CRASH) and the codes of its warn and fail findings."""

    verdict: str
    codes: tuple[str, ...] = ()
    detail: str = ""  # the refusal's sentence or the crash's last line
    all_codes: tuple[str, ...] = field(default=())
    causes: tuple[str, ...] = ()  # the classes of cause its warn and fail findings declare (a message's catalog entry)


def load_corpus() -> list[Paste]:
    """Every labelled paste, in id order."""
    data = tomllib.loads((CORPUS / "corpus.toml").read_text())
    return [
        Paste(
            id=p["id"],
            part=p["part"],
            url=p["url"],
            kind=p["kind"],
            shape=p["shape"],
            fault=p["fault"],
            verdict=p["verdict"],
            accept=tuple(p["accept"]),
            confidence=p["confidence"],
            options=tuple(p.get("options", ())),
            conclusion=p.get("conclusion", ""),
        )
        for p in data["paste"]
    ]


def outcome_of(exit_code: int, stdout: str, stderr: str) -> Outcome:
    """Read ``topoaudit analyze PASTE --format json``'s answer."""
    if exit_code == 4:
        return Outcome("REFUSED", detail=stderr.strip().splitlines()[-1] if stderr.strip() else "")
    if exit_code not in (0, 1, 3):
        return Outcome("CRASH", detail=(stderr.strip().splitlines() or [""])[-1])
    report = json.loads(stdout)
    verdict = str(report["verdict"]).upper().replace(" ", "_")
    findings = report.get("findings", [])
    serious = [f for f in findings if f["severity"] in ("warn", "fail")]
    causes = tuple(dict.fromkeys(c for f in serious for c in f.get("evidence", {}).get("causes", ())))
    codes = tuple(f["code"] for f in serious)
    return Outcome(verdict, codes, all_codes=tuple(f["code"] for f in findings), causes=causes)


def agrees(paste: Paste, outcome: Outcome) -> tuple[bool, str]:
    """Whether the answer agrees with the thread's conclusion, and why not."""
    if outcome.verdict not in paste.accept:
        return False, f"verdict {outcome.verdict}, the thread's {'/'.join(paste.accept)}"
    if paste.fault in NO_FAULT or outcome.verdict not in ("WARN", "FAIL"):
        return True, ""
    wanted = FAULT_CODES.get(paste.fault, frozenset())
    if wanted and not wanted & set(outcome.codes) and paste.fault not in outcome.causes:
        return False, f"verdict {outcome.verdict} but no finding names {paste.fault} (found {', '.join(outcome.codes)})"
    return True, ""
