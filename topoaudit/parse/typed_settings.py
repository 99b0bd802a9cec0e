"""NCCL variables a paste shows typed by the user: on a shell command line, exported, or set from Python.

People paste the command they ran above its log: ``ubuntu@vm:~$ NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 ./a.out``,
``export NCCL_IB_DISABLE=1``, ``docker run -e NCCL_P2P_LEVEL=LOC ...``, a compose file's ``- NCCL_P2P_DISABLE=1``,
a Dockerfile's ``ENV NCCL_IB_DISABLE=1`` or ``os.environ["NCCL_P2P_DISABLE"] = "1"``.
NCCL itself prints only some of the variables it reads (``NCCL_X set by environment to V``), so the typed ones are
often the only sign that a transport was switched off. Only assignments the shell or Python would make count: a
message that advises one (``Disable NVLS (NCCL_NVLS_ENABLE=0) if you wish...``) sets nothing.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_NAME = re.compile(r"NCCL_[A-Z0-9_]+")
_ENV_WORD = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\"[^\"]*\"|'[^']*'|\S*)")
_PROMPT_END = ("$", "#", ">", "%", "➜")
_LEADING_WORDS = frozenset({"export", "env", "sudo", "-E", "time", "nohup", "~", "declare", "-x", "-", "ENV"})
"""Words before a command's assignments: the shell's, mpirun's ``-x``, a Dockerfile's ``ENV`` and a compose file's
``- NAME=VALUE`` list item."""
_DOCKER_ENV = re.compile(r"(?:^|\s)(?:-e|--env)[ =](?P<name>NCCL_[A-Z0-9_]+)=(?P<value>\"[^\"]*\"|'[^']*'|\S+)")
_PYTHON_ENV = re.compile(
    r"""os\.environ\s*\[\s*["'](?P<name>NCCL_[A-Z0-9_]+)["']\s*\]\s*=\s*(?P<value>"[^"]*"|'[^']*'|[\w.^,-]+)"""
)
_MAX_LINE = 4000  # a longer line is a log's, not a command someone typed


class TypedSetting(NamedTuple):
    """One NCCL variable a pasted line assigns."""

    name: str  # "NCCL_P2P_DISABLE"
    value: str  # "1", unquoted


def typed_settings(line: str) -> tuple[TypedSetting, ...]:
    """The NCCL variables ``line`` assigns as a command would: ``()`` for every other line (cheap)."""
    if "NCCL_" not in line or len(line) > _MAX_LINE:
        return ()
    found = [TypedSetting(m["name"], _unquote(m["value"])) for m in _PYTHON_ENV.finditer(line)]
    found += [TypedSetting(m["name"], _unquote(m["value"])) for m in _DOCKER_ENV.finditer(line)]
    found += _leading_assignments(line)
    return tuple(dict.fromkeys(s for s in found if s.value))


def _leading_assignments(line: str) -> list[TypedSetting]:
    """``NAME=VALUE`` words before the command of a shell line (after a prompt, ``export``, ``env``, ``sudo``)."""
    words = line.split()
    found: list[TypedSetting] = []
    assigned = False
    for word in words[_prompt_words(words) :]:
        if word in _LEADING_WORDS:
            continue
        m = _ENV_WORD.fullmatch(word)
        if m is None:
            break
        assigned = True
        if _NAME.fullmatch(m["name"]):
            found.append(TypedSetting(m["name"], _unquote(m["value"])))
    return found if assigned else []


def _prompt_words(words: list[str]) -> int:
    """How many words of a shell prompt start the line: ``$``, ``user@host:~$``, ``(base) ➜  ~``; a lone ``#``
    starts a comment (a setting commented out is not set), not a prompt."""
    count = 1 if words and words[0].startswith("(") and words[0].endswith(")") else 0  # a conda environment
    while count < len(words) and "=" not in words[count] and words[count] != "#":
        word = words[count]
        if not (word.endswith(_PROMPT_END) or word in ("➜", "~")):
            break
        count += 1
    return count


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
