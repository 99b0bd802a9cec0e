"""NCCL variables a paste shows typed: the command above a log, an export, docker's -e, Python's os.environ."""

from __future__ import annotations

import pytest

from topoaudit.parse.typed_settings import TypedSetting, typed_settings


@pytest.mark.parametrize(
    ("line", "typed"),
    [
        (
            "ubuntu@VM-16-64-ubuntu:~$ NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO ./a.out 0",
            [("NCCL_P2P_DISABLE", "1"), ("NCCL_SHM_DISABLE", "1"), ("NCCL_DEBUG", "INFO")],
        ),
        ("export NCCL_IB_DISABLE=1", [("NCCL_IB_DISABLE", "1")]),
        ("export NCCL_SOCKET_IFNAME='eth0'", [("NCCL_SOCKET_IFNAME", "eth0")]),
        ("$ CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_LEVEL=LOC torchrun x.py", [("NCCL_P2P_LEVEL", "LOC")]),
        ("(base) ➜  ~ NCCL_ALGO=Ring python a.py", [("NCCL_ALGO", "Ring")]),
        ("root@dgx:/# NCCL_SHM_DISABLE=1 ./x", [("NCCL_SHM_DISABLE", "1")]),
        ("-x NCCL_P2P_LEVEL=NVL \\", [("NCCL_P2P_LEVEL", "NVL")]),  # mpirun's export, one per line
        ('os.environ["NCCL_P2P_DISABLE"] = "1"', [("NCCL_P2P_DISABLE", "1")]),
        ("docker run --gpus all -e NCCL_P2P_LEVEL=NVL img", [("NCCL_P2P_LEVEL", "NVL")]),
        ("NCCL_P2P_DISABLE=1", [("NCCL_P2P_DISABLE", "1")]),  # `env | grep NCCL`
        ("      - NCCL_P2P_DISABLE=1", [("NCCL_P2P_DISABLE", "1")]),  # a compose file's environment list
        ("ENV NCCL_IB_DISABLE=1 NCCL_DEBUG=WARN", [("NCCL_IB_DISABLE", "1"), ("NCCL_DEBUG", "WARN")]),  # Dockerfile
    ],
)
def test_an_assignment_a_shell_or_python_would_make_is_read(line: str, typed: list[tuple[str, str]]) -> None:
    assert list(typed_settings(line)) == [TypedSetting(name, value) for name, value in typed]


@pytest.mark.parametrize(
    "line",
    [
        "# export NCCL_IB_DISABLE=1",  # commented out: not set
        "Disable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future.",  # NCCL's advice
        "To fix, set NCCL_CUMEM_ENABLE=0",
        "host:1:2 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC",  # NCCL's own line, read by the log reader
        "export NCCL_IB_DISABLE=",  # set to nothing
    ],
)
def test_advice_comments_and_nccls_own_lines_set_nothing(line: str) -> None:
    assert typed_settings(line) == ()
