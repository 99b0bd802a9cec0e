"""`topoaudit` as a GPU node built from a fake NVML scenario, for programs Slurm starts itself (the
HealthCheckProgram, srun steps of the fleet recipe): ``python fake_node.py SCENARIO BOXDIR ARGS...``.

The box (fake sysfs, nvidia-smi, NVML answers, this host's name) is built under BOXDIR as the probe tests
build it; then
``topoaudit ARGS`` runs in this process with the fake NVML installed. Commands that probe get the box's
``--sysfs-root``; the others (``fleet``) run unchanged.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "probe"))

import pytest
from fakebox import make_box
from fakenvml import Scenario

from topoaudit.cli import main

PROBING = ("audit", "healthcheck", "probe")


def _named_after_this_host(scenario: Scenario) -> None:
    """The fake box is this Slurm node: it reports this host's short name, as a real node would."""
    scenario.raw.setdefault("host", {})["hostname"] = socket.gethostname().split(".")[0]


def run(scenario: str, box_dir: str, args: list[str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        box = make_box(scenario, Path(box_dir), patch, tweak=_named_after_this_host)
        if args and args[0] in PROBING:
            args = [args[0], "--sysfs-root", str(box.root), "--smi-timeout", "2", *args[1:]]
        main(args)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], sys.argv[3:])
