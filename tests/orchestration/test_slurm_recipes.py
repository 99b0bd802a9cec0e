"""The recipes in deploy/slurm/ run by a real Slurm: slurmd itself starts the HealthCheckProgram, the Prolog
and the Epilog, each of which drains a faulty node with its `topoaudit:` reason; the fleet sbatch script audits
every node of the job in its own srun step and judges the bundles with `topoaudit fleet`. The GPU node is a
fake NVML scenario (tests/orchestration/fake_node.py), everything else is Slurm's."""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from slurm_cluster import SlurmCluster, free_port, require_slurm

pytestmark = pytest.mark.slurm

DEPLOY = Path(__file__).parents[2] / "deploy" / "slurm"
FAKE_NODE = Path(__file__).parent / "fake_node.py"


def fake_topoaudit(directory: Path, scenario: str, conf: Path) -> Path:
    """An executable `topoaudit` that is this checkout's, on a node built from ``scenario``."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "topoaudit"
    script.write_text(
        "#!/bin/sh\n"
        f"export SLURM_CONF={shlex.quote(str(conf))}\n"
        f"exec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE_NODE))} {scenario} "
        f'"$(mktemp -d {shlex.quote(str(directory))}/box.XXXXXX)" "$@"\n'
    )
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def checked_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """A cluster whose slurmd runs deploy/slurm/topoaudit-healthcheck every few seconds on a faulty node."""
    require_slurm()
    root = tmp_path_factory.mktemp("slurm-hc")
    cluster = SlurmCluster(root)
    topoaudit = fake_topoaudit(root / "bin", "nvlink-down", cluster.conf)
    program = root / "healthcheck"
    program.write_text(
        "#!/bin/sh\n"
        f"export TOPOAUDIT={shlex.quote(str(topoaudit))}\n"
        f"export TOPOAUDIT_HEALTHCHECK_ARGS='--cache {root}/last.json'\n"
        f"exec {shlex.quote(str(DEPLOY / 'topoaudit-healthcheck'))}\n"
    )
    program.chmod(0o755)
    cluster.extra_conf = f"HealthCheckProgram={program}\nHealthCheckInterval=2\nHealthCheckNodeState=ANY"
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def test_slurmd_runs_the_health_check_which_drains_a_faulty_node(checked_cluster: SlurmCluster) -> None:
    deadline = time.monotonic() + 60
    reasons = ""
    while time.monotonic() < deadline and not reasons.startswith("topoaudit: "):
        time.sleep(0.5)
        reasons = checked_cluster.reasons()
    assert reasons.startswith("topoaudit: nvlink-"), (
        reasons,
        (checked_cluster.root / "slurmd.log").read_text()[-2000:],
    )
    assert reasons.rstrip().endswith(f"|{checked_cluster.node}")


def test_fleet_sbatch_audits_each_node_and_judges_the_fleet(slurm: SlurmCluster, tmp_path: Path) -> None:
    topoaudit = fake_topoaudit(tmp_path / "bin", "nvlink-down", slurm.conf)
    shared = tmp_path / "shared"
    output = tmp_path / "fleet.out"
    slurm.run("scontrol", "update", f"nodename={slurm.node}", "state=resume", check=False)
    submitted = slurm.run(
        "sbatch", "--parsable", "--wait", "--nodes=1", f"--output={output}", f"--export=ALL,TOPOAUDIT={topoaudit}",
        str(DEPLOY / "fleet-audit.sbatch"), str(shared), check=False, timeout_s=120,
    )  # fmt: skip
    log = output.read_text() if output.exists() else submitted.stderr
    assert submitted.returncode == 1, log  # the job ends with the fleet's verdict: a failing node fails it
    bundle = shared / slurm.node
    assert (bundle / "report.json").is_file() and (bundle / "SHA256SUMS").is_file(), log
    assert f"{slurm.node} | FAIL: nvlink-" in log, log


def test_bench_sbatch_measures_across_slurm_ranks(slurm: SlurmCluster, tmp_path: Path) -> None:
    """Two srun tasks, gloo on CPU: the bench takes its ranks from Slurm and rank 0 writes the judged report."""
    pytest.importorskip("torch", reason="torch is needed for the bench")
    topoaudit = tmp_path / "topoaudit"
    topoaudit.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m topoaudit "$@"\n')
    topoaudit.chmod(0o755)
    report, output = tmp_path / "bench.json", tmp_path / "bench.out"
    slurm.run("scontrol", "update", f"nodename={slurm.node}", "state=resume", check=False)
    bench_args = "--backend gloo --min-bytes 1K --max-bytes 64K --groups all"
    submitted = slurm.run(
        "sbatch", "--wait", "--nodes=1", "--ntasks=2", "--exclusive=user", f"--output={output}",
        f"--export=ALL,TOPOAUDIT={topoaudit},MASTER_PORT={free_port()},TOPOAUDIT_BENCH_ARGS={bench_args}",
        str(DEPLOY / "bench.sbatch"), str(report), check=False, timeout_s=240,
    )  # fmt: skip
    log = output.read_text() if output.exists() else submitted.stderr
    assert report.is_file(), log
    bench = json.loads(report.read_text())["bench"]
    assert bench["world_size"] == 2 and bench["backend"] == "gloo", log
    assert [r["rank"] for r in bench["ranks"]] == [0, 1]
    (group,) = [g for g in bench["groups"] if g["name"] == "all"]
    assert [row["size_bytes"] for row in group["rows"]][-1] == 64 * 1024


@pytest.fixture(scope="module")
def prolog_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """A cluster whose slurmd runs deploy/slurm/prolog.sh and epilog.sh around every job on a faulty node."""
    require_slurm()
    root = tmp_path_factory.mktemp("slurm-prolog")
    cluster = SlurmCluster(root)
    topoaudit = fake_topoaudit(root / "bin", "nvlink-down", cluster.conf)
    hooks = []
    for name in ("prolog", "epilog"):
        hook = root / name
        hook.write_text(
            "#!/bin/sh\n"
            f"export TOPOAUDIT={shlex.quote(str(topoaudit))}\n"
            f"export TOPOAUDIT_HEALTHCHECK_ARGS='--cache {root}/last.json'\n"
            f"{shlex.quote(str(DEPLOY / f'{name}.sh'))}\n"
            "code=$?\n"
            f"echo $code > {shlex.quote(str(root / f'{name}.exit'))}\n"
            "exit $code\n"
        )
        hook.chmod(0o755)
        hooks.append(f"{name.capitalize()}={hook}")
    cluster.extra_conf = "\n".join(hooks)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def _written(path: Path, within_s: float = 60.0) -> str:
    """What a hook wrote to ``path``, once it has: slurmd runs the epilog after ``sbatch --wait`` has returned."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and not (path.is_file() and path.read_text().strip()):
        time.sleep(0.2)
    return path.read_text().strip() if path.is_file() else ""


def test_prolog_and_epilog_drain_a_faulty_node_and_let_the_job_run(prolog_cluster: SlurmCluster) -> None:
    """By default the prolog drains the node (no new jobs) but lets the job that started it run; the job itself
    sees the prolog's drain reason, and the epilog probes again after it."""
    output = prolog_cluster.root / "job.out"
    submitted = prolog_cluster.run(
        "sbatch", "--parsable", "--wait", "--nodes=1", f"--output={output}",
        "--wrap", "echo the-job-ran; sinfo -R -h -o %E", check=False, timeout_s=120,
    )  # fmt: skip
    log = output.read_text() if output.exists() else submitted.stderr
    assert submitted.returncode == 0 and "the-job-ran" in log, (log, submitted.stderr)
    assert "topoaudit: nvlink-" in log, log  # drained by the prolog before the job's own commands ran
    for hook in ("prolog", "epilog"):
        ran = _written(prolog_cluster.root / f"{hook}.exit")
        assert ran == "0", (
            hook,
            (prolog_cluster.root / "slurmd.log").read_text()[-2000:],
        )
    assert prolog_cluster.reasons().startswith("topoaudit: nvlink-"), prolog_cluster.reasons()
