"""A real, minimal Slurm cluster for tests: munged, slurmctld and slurmd of Debian's slurm-wlm and munge,
run in the foreground from a private directory (own key, socket, ports, state), one node named after this
host. Every daemon is stopped when the cluster is closed."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("scontrol", "sinfo")


def missing_programs() -> list[str]:
    return [
        name
        for name in (*DAEMONS, *CLIENTS)
        if shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin") is None
    ]


def in_ci() -> bool:
    """As tests/conftest.py decides it: a CI machine is built to run these, so a skip there is a failure."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_slurm() -> None:
    """Skip without Slurm and munge; in CI, fail instead (.ci/run installs them)."""
    import pytest

    missing = missing_programs()
    if missing:
        reason = f"Slurm and munge are not installed ({', '.join(missing)} missing): apt-get install slurm-wlm munge"
        if in_ci():
            pytest.fail(f"CI is set, so Slurm must be here: {reason}")
        pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SlurmCluster:
    root: Path
    node: str = field(default_factory=lambda: socket.gethostname().split(".")[0])
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    extra_conf: str = ""

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def write_conf(self) -> None:
        r = self.root
        for sub in ("state", "spool", "munge"):
            (r / sub).mkdir(exist_ok=True)
        key = r / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o400)
        self.conf.write_text(
            f"""ClusterName=topoaudit-test
SlurmctldHost={self.node}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={r}/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/slurmctld.log
SlurmdLogFile={r}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
{self.extra_conf}
NodeName={self.node} CPUs={os.cpu_count() or 1} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
        )

    def start(self, timeout_s: float = 60.0) -> None:
        self.write_conf()
        r = self.root
        munge = r / "munge"
        self._spawn(
            "munged",
            [
                "-F",
                "-f",
                f"--socket={munge}/munge.sock",
                f"--key-file={munge}/munge.key",
                f"--log-file={munge}/munged.log",
                f"--pid-file={munge}/munged.pid",
                f"--seed-file={munge}/munged.seed",
            ],
        )
        self._wait(lambda: (munge / "munge.sock").exists(), timeout_s, "munged did not create its socket")
        self._spawn("slurmctld", ["-D", "-f", str(self.conf)])
        self._spawn("slurmd", ["-D", "-f", str(self.conf)])
        self._wait(self._node_answers, timeout_s, "sinfo did not report the node")

    def _spawn(self, name: str, args: list[str]) -> None:
        binary = shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin") or name
        log = open(self.root / f"{name}.out", "wb")  # noqa: SIM115 -- closed when the process is reaped
        self.processes.append(
            subprocess.Popen(
                [binary, *args], stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
            )
        )

    def _node_answers(self) -> bool:
        done = self.run("sinfo", "--noheader", "--Node", "--format=%N %T", check=False)
        return done.returncode == 0 and any(
            line.split()[:1] == [self.node] and "unknown" not in line and "not_responding" not in line
            for line in done.stdout.splitlines()
        )

    def _wait(self, ready: object, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if callable(ready) and ready():
                return
            dead = [p.args[0] for p in self.processes if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{what}: {dead} exited; see {self.root}/*.out and *.log")
            time.sleep(0.2)
        raise RuntimeError(f"{what} within {timeout_s:g} s; see {self.root}/*.out and *.log")

    def run(self, *args: str, check: bool = True, timeout_s: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=timeout_s, check=check)

    def reasons(self) -> str:
        """`sinfo -R` with the whole reason (the default format cuts it at 20 characters)."""
        return self.run("sinfo", "-R", "--noheader", "--format=%E|%N").stdout

    def state(self) -> str:
        return self.run("sinfo", "--noheader", "--Node", f"--nodes={self.node}", "--format=%T").stdout.strip()

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        self.processes.clear()
