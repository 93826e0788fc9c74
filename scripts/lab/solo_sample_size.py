"""How likely the fair bar's ratio is met when the light user alone is timed over 3 replies or over as
many as the light users send, with the light and solo first words of recorded load tests resampled
(issue 54; docs/operations.md, "A light user alone, as many replies").

    .venv/bin/python scripts/lab/solo_sample_size.py results/loadtest/fair-queue-rescored-window-*.json \
        --out results/loadtest/solo-sample-size.json

A p95 of 3 values is nearly their maximum, and one of 15 sits further into the same tail: with the
same distribution for both, the ratio of the two p95s is above 1 by the sample sizes alone.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ops.loadtest import percentile  # noqa: E402


def p95s(pool: list[float], n: int, draws: int, rng: random.Random) -> list[float]:
    return [percentile(rng.choices(pool, k=n), 95) for _ in range(draws)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--draws", type=int, default=20000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    solo, light = [], []
    for f in args.files:
        run = json.loads(f.read_text())
        solo += run["solo_first_text_s"]
        light += run["light_first_text_s"]
    rng = random.Random(0)
    out = {"files": [f.name for f in args.files], "solo_values": len(solo), "light_values": len(light),
           "draws": args.draws, "median_p95": {}, "ratio": {}}
    for name, pool in (("solo", solo), ("light", light)):
        out["median_p95"][name] = {str(n): round(statistics.median(p95s(pool, n, args.draws, rng)), 3) for n in (3, 15)}
    for n in (3, 15):  # the light users' 15 replies against the solo's n
        ratios = [a / b for a, b in zip(p95s(light, 15, args.draws, rng), p95s(solo, n, args.draws, rng))]
        out["ratio"][f"solo_{n}"] = {"median": round(statistics.median(ratios), 2),
                                     "share_within_3x": round(sum(r <= 3 for r in ratios) / len(ratios), 3)}
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
