"""`topoaudit bench` as a user runs it on a CPU-only box: a real gloo sweep, judged by a policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")


@pytest.mark.slow
def test_bench_cli_gloo_sweep_judged_by_a_policy() -> None:
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo"}
    cmd = [sys.executable, "-m", "topoaudit", "bench", "--backend", "gloo", "--nproc", "2", "--max-bytes", "64K",
           "--policy", "builtin:hgx-8gpu", "--format", "json"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    report = json.loads(done.stdout)
    assert done.returncode == 1 == report["gate"]["exit_code"]  # a 2-rank CPU job is not an 8-GPU HGX node
    assert report["policy"]["name"] == "hgx-8gpu" and "policy 'hgx-8gpu'" in report["gate"]["reason"]
    rows = report["bench"]["groups"][0]["rows"]
    assert [r["size_bytes"] for r in rows][-1] == 65536 and all(r["wrong"] == 0 for r in rows)
    assert "Failed to initialize NumPy" not in done.stderr and "Traceback" not in done.stderr
