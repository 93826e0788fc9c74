"""CPU and wall seconds per fact of the offline `nli` verifier, one fact at a time, on the first
facts of the HybriDialogue dev file, with torch on one thread (so process CPU time is the work
done, not OpenMP threads spinning while the machine is busy).

    .venv/bin/python scripts/lab/time_factcheck.py [--facts 40] [--out results/factcheck-verify-time.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> int:
    import numpy as np
    import torch

    from core.data.hybridialogue import load_hybridialogue_facts
    from core.metrics.fact_verifiers import make_verifier
    from core.paths import SHARED_DIR, portable_path

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(SHARED_DIR / "data" / "hybridialogue" / "hybridial_annotated_dev.json"))
    parser.add_argument("--facts", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    facts = load_hybridialogue_facts(args.data, args.facts + 1).facts
    verifier = make_verifier("nli")
    verifier.verify([facts[0].item])  # warm-up, not timed
    cpu, wall = [], []
    for fact in facts[1:]:
        t0, c0 = time.perf_counter(), time.process_time()
        verifier.verify([fact.item])
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    c, w = np.asarray(cpu), np.asarray(wall)
    out = {"data": portable_path(args.data), "facts": len(c), "torch_threads": args.threads,
           "cpu_median_s": float(np.median(c)), "cpu_p95_s": float(np.percentile(c, 95)), "cpu_max_s": float(c.max()),
           "wall_median_s": float(np.median(w)), "wall_p95_s": float(np.percentile(w, 95))}
    print(json.dumps(out))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
