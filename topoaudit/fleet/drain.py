"""The drain list's words: a one-line reason that starts with ``topoaudit:`` (what ``sinfo -R`` shows, and
how a health check recognises its own drains) and the ``scontrol`` command that sets it."""

from __future__ import annotations

from topoaudit.model.fleet import NodeResult

REASON_PREFIX = "topoaudit:"
MAX_REASON_CHARS = 200
MAX_WORD_CHARS = 40  # a reason is cut between words, unless the word at the cut is longer than this
NOT_DRAINED = frozenset(
    {"fleet-duplicate-identity", "fleet-stale-report", "fleet-node-unreadable", "fleet-node-missing"}
)
"""Codes that fail the fleet but do not say the hardware is bad: the node is audited again, not drained."""


def reason_line(text: str, suffix: str = "") -> str:
    """``topoaudit: <text><suffix>`` on one line without double quotes, backticks or ``$``, cut between words to fit
    ``MAX_REASON_CHARS`` (``...`` marks the cut)."""
    # the printed command puts the reason in double quotes: nothing in it may end them or expand ($, `)
    safe = text.replace('"', "'").replace("\\", "/").replace("`", "'").replace("$", "")
    reason = f"{REASON_PREFIX} " + " ".join(safe.split())
    if len(reason) + len(suffix) > MAX_REASON_CHARS:
        cut = reason[: MAX_REASON_CHARS - len(suffix) - 3 + 1]  # one more: is the cut between two words?
        head = cut.rpartition(" ")[0]
        if len(head) < len(cut) - MAX_WORD_CHARS:  # one token longer than a word (a path, a hex dump): cut it
            head = cut[:-1]
        reason = head.rstrip(" ,;:") + "..."
    return reason + suffix


def drain_reason(node: NodeResult) -> str:
    """The node's worst drained finding as ``topoaudit: <code> <message>``, with ``(+N more)`` codes."""
    drained = [c for c in node.codes if c not in NOT_DRAINED]
    text = node.reason if node.reason.split(" ", 1)[0] in drained else drained[0]
    more = len(drained) - 1
    return reason_line(text, f" (+{more} more)" if more > 0 else "")


def drain_command(host: str, reason: str) -> str:
    """The command an operator runs (``--apply`` runs the same arguments without a shell); a host name a
    shell would read as more than a word is quoted."""
    import shlex

    return f'scontrol update nodename={shlex.quote(host)} state=drain reason="{reason}"'
