"""How often topoaudit agrees with the threads the real pastes come from, by kind of paste and by fault.

    python tools/corpus_agreement.py                    # the dev part, this checkout
    python tools/corpus_agreement.py --part held-back   # the part set aside: run it once, at the end
    python tools/corpus_agreement.py --checkout ../old  # another checkout (a git worktree of an older commit)

Each paste is run through ``python -m topoaudit analyze PASTE --format json`` of the checkout named, so any version
of topoaudit can be measured against today's corpus. The labels and the scoring are ``tests/real/corpus.py``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "real"))

from corpus import Outcome, Paste, agrees, load_corpus, outcome_of  # noqa: E402


def run_one(paste: Paste, checkout: Path) -> Outcome:
    env = {**os.environ, "PYTHONPATH": str(checkout), "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "topoaudit", "analyze", str(paste.path), "--format", "json", *paste.options],
        capture_output=True,
        text=True,
        env=env,
        cwd=checkout,
        check=False,
        timeout=120,
    )
    try:
        return outcome_of(proc.returncode, proc.stdout, proc.stderr)
    except (json.JSONDecodeError, KeyError) as exc:
        return Outcome("CRASH", detail=f"unreadable report: {exc}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("dev", "held-back", "all"), default="dev")
    parser.add_argument("--checkout", type=Path, default=REPO, help="the topoaudit checkout to measure")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="write each paste's answer here")
    parser.add_argument("--quiet", action="store_true", help="only the totals")
    args = parser.parse_args()
    pastes = [p for p in load_corpus() if args.part == "all" or p.part == args.part]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(lambda p: run_one(p, args.checkout.resolve()), pastes))
    by_kind: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    by_conf: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    wrong, rows = [], []
    for paste, outcome in zip(pastes, outcomes, strict=True):
        ok, why = agrees(paste, outcome)
        for table, key in ((by_kind, paste.kind), (by_conf, paste.confidence)):
            table[key][0] += ok
            table[key][1] += 1
        rows.append({"id": paste.id, "agrees": ok, "verdict": outcome.verdict, "codes": outcome.all_codes, "why": why})
        if not ok:
            wrong.append((paste, outcome, why))
    total = sum(ok for ok, _ in by_kind.values())
    print(f"{args.part}: {total} of {len(pastes)} agree ({100 * total / max(len(pastes), 1):.0f}%)")
    if not args.quiet:
        for name, table in (("kind", by_kind), ("confidence", by_conf)):
            print(f"\nby {name}:")
            for key, (ok, n) in sorted(table.items(), key=lambda kv: -kv[1][1]):
                print(f"  {key:18} {ok:3} of {n:3}")
        verdicts = collections.Counter(o.verdict for o in outcomes)
        print("\nanswers:", ", ".join(f"{v} {n}" for v, n in verdicts.most_common()))
        print("\ndisagreements:")
        for paste, outcome, why in wrong:
            detail = f" [{outcome.detail[:100]}]" if outcome.detail else ""
            print(f"  {paste.id}: {why}{detail}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
