"""The c10d store a run shares: the keys ranks write (plan, rank infos, rows, errors, progress) and the reads
of the process that gathers them. A rank's rows are in the store the moment they are measured, so a run that
stops early (a dead rank, a timeout, Ctrl-C, SIGTERM) still has them."""

from __future__ import annotations

import json
from typing import Any

from topoaudit.bench.assemble import RunDocuments

KEY = "topoaudit/"


def read_json(store: Any, key: str) -> Any:
    return json.loads(store.get(key)) if store.check([key]) else None


def any_error(store: Any, world: int) -> bool:
    return any(has_error(store, r) for r in range(world))


def has_error(store: Any, rank: int) -> bool:
    try:
        return bool(store.check([KEY + f"err/{rank}"]))
    except Exception:
        return False


def total_steps(store: Any) -> int:
    return int(store.get(KEY + "steps")) if store.check([KEY + "steps"]) else 0


def last_label(store: Any) -> str:
    return store.get(KEY + "last").decode() if store.check([KEY + "last"]) else ""


def read_documents(store: Any, world: int, *, error_ranks: set[int] | None = None) -> RunDocuments:
    """Everything the ranks wrote, as plain documents (partial runs too).

    ``error_ranks``: read the errors of these ranks only (a stopped run: the others are the stop itself)."""
    infos = [i for r in range(world) if (i := read_json(store, KEY + f"info/{r}")) is not None]
    records: list[dict[str, Any]] = []
    for r in range(world):
        if store.check([KEY + f"nrec/{r}"]):
            n = int(store.get(KEY + f"nrec/{r}"))
            records.extend(json.loads(store.get(KEY + f"rec/{r}/{j}")) for j in range(n))
    errors = [
        doc
        for r in (range(world) if error_ranks is None else sorted(error_ranks))
        if (doc := read_json(store, KEY + f"err/{r}")) is not None
    ]
    return RunDocuments(tuple(infos), read_json(store, KEY + "plan"), tuple(records), tuple(errors))
