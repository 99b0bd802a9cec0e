"""Errors that end a command with a clear sentence and a documented exit code (never a traceback)."""

from __future__ import annotations

from topoaudit.exitcodes import ExitCode


class TopoauditError(Exception):
    """Base class: ``str(err)`` is the one sentence shown to the user; ``exit_code`` ends the process."""

    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class InputError(TopoauditError):
    """The input cannot be read soundly (unknown format, ambiguous matrix, bad snapshot version)."""

    exit_code = ExitCode.UNUSABLE


class NothingToJudge(InputError):
    """A reader recognised its output in the text, and the excerpt holds nothing it can judge (a banner, a matrix's
    rows without their title): the paste is said "not judged", with this sentence, rather than refused."""


class EnvironmentUnusable(TopoauditError):
    """This machine cannot be probed: no NVIDIA driver, NVML library missing, no GPU visible."""

    exit_code = ExitCode.UNUSABLE


class ConfigError(TopoauditError):
    """A policy or option value is invalid (reported with the offending line where there is one)."""

    exit_code = ExitCode.UNUSABLE


class UsageError(TopoauditError):
    """Options that contradict each other or a value out of range, found below the command line."""

    exit_code = ExitCode.USAGE


class OutputError(TopoauditError):
    """A report or bundle cannot be written where the user asked (missing parent, read-only, full, a file)."""

    exit_code = ExitCode.UNUSABLE
