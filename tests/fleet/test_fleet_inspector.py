"""NCCL Inspector files, one per node, compared across the fleet: the node whose jobs ran slow is named."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import Run

TWO_HOSTS = Path(__file__).parents[1] / "fixtures" / "inspector" / "constructed-two-hosts-one-slow.jsonl"


def _split_by_host(folder: Path) -> dict[str, list[str]]:
    """Write one file per host, as the plugin leaves them on each node, from the two-host capture."""
    by_host: dict[str, list[str]] = {}
    for line in TWO_HOSTS.read_text().splitlines(keepends=True):
        if line.strip():
            host = json.loads(line)["metadata"]["hostname"]
            by_host.setdefault(host, []).append(line)
    for host, lines in by_host.items():
        (folder / f"{host}.log").write_text("".join(lines))
    return by_host


def test_the_node_whose_all_reduce_runs_slow_is_the_fleet_outlier(run: Run, tmp_path: Path) -> None:
    hosts = _split_by_host(tmp_path)
    assert set(hosts) == {"gpu-node-a", "gpu-node-b"}
    healthy = (tmp_path / "gpu-node-a.log").read_text().replace("gpu-node-a", "gpu-node-c")
    (tmp_path / "gpu-node-c.log").write_text(healthy)

    code, out, err = run("fleet", str(tmp_path), "--no-color")

    assert code == 1, err
    assert "gpu-node-b | FAIL: fleet-figure-outlier" in out
    assert "gpu-node-a | PASS" in out and "gpu-node-c | PASS" in out
    assert "gpu-node-b: Inspector AllReduce 8 ranks @ 1 GiB" in out
