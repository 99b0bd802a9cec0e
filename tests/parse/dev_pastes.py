"""Real pastes of the corpus's dev part (``tests/fixtures/real``), read as the parsers' own inputs.

Only the dev part: the held-back pastes measure what the readers were not tuned on, so a parser test that
names one fails here instead of reading it.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REAL = Path(__file__).parents[1] / "fixtures" / "real"


@functools.cache
def _parts() -> dict[str, str]:
    with (REAL / "corpus.toml").open("rb") as f:
        return {p["id"]: p["part"] for p in tomllib.load(f)["paste"]}


def dev_paste(paste_id: str) -> str:
    """The verbatim text of a dev-part paste."""
    part = _parts()[paste_id]
    assert part == "dev", f"{paste_id} is in the {part} part: parser tests read dev pastes only"
    return (REAL / "pastes" / f"{paste_id}.txt").read_text(encoding="utf-8")
