"""Kubernetes node labels and annotations: the ``kubectl`` commands that put the verdict on the node.

Labels carry short facts a scheduler can select on (verdict, NVLink domain size, number of domains, GPU
count and model), under the ``topoaudit.dev/`` prefix: ``nvidia.com/`` belongs to GPU Feature Discovery and
is never written. Values follow Kubernetes' rules (at most 63 characters, alphanumerics and ``-_.``, an
alphanumeric at each end); a longer value becomes ``x`` and its FNV-64a hash, as topograph does, with the
full text in an annotation. A fact the source cannot give removes its label (``key-``) instead of leaving a
stale one. Annotations carry what does not fit a label: the gate's sentence, the finding codes, the time.

The node is ``$NODE_NAME`` (the DaemonSet sets it from ``spec.nodeName``), else the audited host's name.
"""

from __future__ import annotations

import re
import shlex

from topoaudit.model.report import Report
from topoaudit.model.values import is_absent
from topoaudit.render import RenderOptions

PREFIX = "topoaudit.dev/"
MAX_VALUE = 63
_VALID = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?")
_INVALID_RUN = re.compile(r"[^-A-Za-z0-9_.]+")


def render(report: Report, options: RenderOptions) -> str:
    labels, annotations = node_metadata(report)
    node = _node(report)
    label_args = [f"{PREFIX}{key}-" if value is None else f"{PREFIX}{key}={value}" for key, value in labels.items()]
    annotate_args = [shlex.quote(f"{PREFIX}{key}={value}") for key, value in annotations.items()]
    lines = [
        "# topoaudit: node labels and annotations for this audit (run with a kubeconfig allowed to patch nodes)",
        f"kubectl label node {node} {' '.join(label_args)} --overwrite",
        f"kubectl annotate node {node} {' '.join(annotate_args)} --overwrite",
    ]
    return "\n".join(lines) + "\n"


def node_metadata(report: Report) -> tuple[dict[str, str | None], dict[str, str]]:
    """(labels, annotations) without the prefix; a label whose value is None is to be removed."""
    sizes = sorted((len(d.gpus) for d in report.domains), reverse=True)
    model = None if is_absent(report.gpu_model) else str(report.gpu_model)
    labels: dict[str, str | None] = {
        "verdict": label_value(report.gate.verdict),  # "not judged" -> "not-judged"
        "nvlink-domain-size": str(sizes[0]) if sizes else None,
        "nvlink-domains": str(len(sizes)) if sizes else None,
        "gpus": str(len(report.machine.gpus)),
        "gpu-model": label_value(model) if model else None,
    }
    annotations = {
        "summary": report.gate.reason,
        "findings": ", ".join(f"{f.code} ({f.severity.value})" for f in report.findings) or "none",
        "audited-at": report.generated_at,
    }
    if model is not None and labels["gpu-model"] != model:
        annotations["gpu-model"] = model
    if model is None:
        annotations["gpu-model"] = str(report.gpu_model)  # the reason the source gave no model
    return labels, annotations


def label_value(text: str) -> str:
    """A valid label value: characters outside ``[-A-Za-z0-9_.]`` become ``-``; too long, or nothing left of
    the text: ``x`` and the text's FNV-64a hash."""
    value = _INVALID_RUN.sub("-", text.strip()).strip("-_.")
    if len(value) > MAX_VALUE or not _VALID.fullmatch(value) or (text.strip() and not value):
        return "x" + format(fnv1a_64(text.encode("utf-8")), "016x")
    return value


def is_valid_label_value(value: str) -> bool:
    return len(value) <= MAX_VALUE and _VALID.fullmatch(value) is not None


def fnv1a_64(data: bytes) -> int:
    digest = 0xCBF29CE484222325
    for byte in data:
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return digest


def _node(report: Report) -> str:
    host = report.machine.host.hostname
    if is_absent(host):
        return '"${NODE_NAME:?set NODE_NAME to the Kubernetes node name}"'
    return '"${NODE_NAME:-' + _shell_safe(str(host)) + '}"'


def _shell_safe(name: str) -> str:
    """A host name inside a double-quoted default: only the characters a host name may hold."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", name)
