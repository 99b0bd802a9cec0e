"""`--format k8s-labels` and the DaemonSet in deploy/kubernetes/: what kubectl is told, and what the manifest
grants. The manifest is read with PyYAML; its shell script runs here against a recording `kubectl`."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_runner import run_cli as run
from hypothesis import given
from hypothesis import strategies as st

from topoaudit import __version__
from topoaudit.render.k8s_labels import PREFIX, is_valid_label_value, label_value

MANIFEST = Path(__file__).parents[2] / "deploy" / "kubernetes" / "topoaudit-daemonset.yaml"
KEY_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"


def recording_kubectl(tmp_path: Path) -> tuple[Path, Path]:
    """A `kubectl` on PATH that writes each call's argv, one JSON-free line per argument, to a log."""
    bin_dir, log = tmp_path / "bin", tmp_path / "kubectl.log"
    bin_dir.mkdir()
    script = bin_dir / "kubectl"
    target = shlex.quote(str(log))
    script.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a" >> {target}; done\necho "--" >> {target}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir, log


def calls(log: Path) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in log.read_text().splitlines():
        if line == "--":
            out.append([])
        else:
            out[-1].append(line)
    return [c for c in out if c]


def test_label_commands_run_as_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", "--example", "h200-nvl-split", "--format", "k8s-labels")
    assert code == 0
    bin_dir, log = recording_kubectl(tmp_path)
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "NODE_NAME": "gpu-node-7"}
    subprocess.run(["sh", "-c", out], env=env, check=True)
    label, annotate = calls(log)
    assert label[:3] == ["label", "node", "gpu-node-7"] and label[-1] == "--overwrite"
    labels = dict(arg.split("=", 1) for arg in label[3:-1])
    assert labels == {
        f"{PREFIX}verdict": "pass",
        f"{PREFIX}nvlink-domain-size": "4",
        f"{PREFIX}nvlink-domains": "2",
        f"{PREFIX}gpus": "8",
        f"{PREFIX}gpu-model": "NVIDIA-H200-NVL",
    }
    assert not any(key.startswith("nvidia.com/") for key in labels)
    assert annotate[:3] == ["annotate", "node", "gpu-node-7"]
    notes = dict(arg.split("=", 1) for arg in annotate[3:-1])
    assert notes[f"{PREFIX}gpu-model"] == "NVIDIA H200 NVL"  # the exact name, which a label cannot hold
    assert notes[f"{PREFIX}findings"] == "nvlink-split-domain (info)"
    assert "'" in notes[f"{PREFIX}summary"]  # quoted text survives the shell intact


def test_without_node_name_the_commands_refuse_rather_than_label_a_guess(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "analyze", "--example", "hgx-h100", "--format", "k8s-labels")
    bin_dir, log = recording_kubectl(tmp_path)
    done = subprocess.run(
        ["sh", "-c", out], env={"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}, capture_output=True, text=True
    )
    assert done.returncode != 0 and "NODE_NAME" in done.stderr
    assert not log.exists()


def test_an_absent_model_removes_its_label_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pasted = Path(__file__).parents[1] / "fixtures" / "topo" / "topo-2gpu-nv2-stas-mlengineering-1.txt"
    _, out, _ = run(capsys, "analyze", str(pasted), "--format", "k8s-labels")  # topo -m names no model
    bin_dir, log = recording_kubectl(tmp_path)
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "NODE_NAME": "gpu-node-7"}
    subprocess.run(["sh", "-c", out], env=env, check=True)
    label, annotate = calls(log)
    assert f"{PREFIX}gpu-model-" in label  # a stale model label from an earlier run goes
    assert f"{PREFIX}nvlink-domain-size=2" in label
    notes = dict(arg.split("=", 1) for arg in annotate[3:-1])
    assert notes[f"{PREFIX}gpu-model"].startswith("unsupported (")


@given(st.text(max_size=200))
def test_every_label_value_is_valid_for_kubernetes(text: str) -> None:
    value = label_value(text)
    assert is_valid_label_value(value), (text, value)


def test_long_and_odd_values_are_hashed_or_cleaned() -> None:
    assert label_value("NVIDIA H100 80GB HBM3") == "NVIDIA-H100-80GB-HBM3"
    long = "NVIDIA " + "GB200 " * 20
    hashed = label_value(long)
    assert hashed.startswith("x") and len(hashed) == 17 and hashed == label_value(long)
    assert label_value("ÄÖÜ") != "" and is_valid_label_value(label_value("ÄÖÜ"))
    assert is_valid_label_value("") and not is_valid_label_value("-a") and not is_valid_label_value("a" * 64)


# --- the manifest --------------------------------------------------------------------------------------


def documents() -> dict[str, dict]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc}


def test_rbac_grants_only_get_and_patch_on_nodes() -> None:
    docs = documents()
    role = docs["ClusterRole"]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    binding = docs["ClusterRoleBinding"]
    account = docs["ServiceAccount"]["metadata"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": role["metadata"]["name"],
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["name"], "namespace": account["namespace"]}
    ]
    assert not any(d["kind"] in ("Role", "RoleBinding") for d in yaml.safe_load_all(MANIFEST.read_text()) if d)


def test_daemonset_runs_the_audit_on_gpu_nodes_with_the_node_name() -> None:
    docs = documents()
    pod = docs["DaemonSet"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == docs["ServiceAccount"]["metadata"]["name"]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    (container,) = pod["containers"]
    assert container["image"] == f"topoaudit:{__version__}"
    assert "topoaudit audit --format k8s-labels" in container["args"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
    assert "nvidia.com/gpu" not in str(container.get("resources", {}))  # audits without reserving a GPU


def test_daemonset_script_labels_its_node_with_the_audit(tmp_path: Path) -> None:
    """The container's script, one round: the audit (a bundled box here), then kubectl on $NODE_NAME."""
    container = documents()["DaemonSet"]["spec"]["template"]["spec"]["containers"][0]
    bin_dir, log = recording_kubectl(tmp_path)
    fake = bin_dir / "topoaudit"  # `topoaudit audit ...` judged on a bundled box instead of probing this one
    fake.write_text(
        f'#!/bin/sh\nshift\nexec {shlex.quote(sys.executable)} -m topoaudit analyze --example h200-nvl-split "$@"\n'
    )
    (bin_dir / "sleep").write_text("#!/bin/sh\nexit 1\n")  # ends the loop after one round
    for script in (fake, bin_dir / "sleep"):
        script.chmod(0o755)
    env = {e["name"]: e.get("value", "") for e in container["env"]}
    env.update(NODE_NAME="gpu-node-3", TMPDIR=str(tmp_path), PATH=f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    done = subprocess.run(
        [*container["command"], container["args"][0]], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    label, annotate = calls(log)
    assert label[:3] == ["label", "node", "gpu-node-3"] and f"{PREFIX}verdict=pass" in label
    assert annotate[:3] == ["annotate", "node", "gpu-node-3"]
