"""Labelling round-trip on the Annotation page: key press to the next item shown, with 500 items in
the task, in headless Chromium against `streamlit run` on this machine.

Usage: .venv/bin/python scripts/lab/time_annotation.py [--presses 60] [--data ../shared/data/hybridialogue/hybridial_annotated_dev.json]

Prints JSON: median / p90 / max of "shown_ms" (keydown event -> the next item's id in the DOM) and
of "idle_ms" (-> the run finished, buttons ready for the next key), over the timed presses (after 5
warm-up presses); and the CPU time one press costs the server and the browser (user + system, from
/proc via psutil), which bounds the round-trip on an otherwise idle machine whatever the load here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from core.annotation import AnnotationStore, ImportBatch
from core.annotation.formats import read_path
from tests.app_process import AppProcess
from tests.browser_annotation import press, sign_in, timed_press, wait_item

OWNER = "ws:timing"


def five_hundred(path: Path) -> ImportBatch:
    """The annotated file's items, repeated under new ids up to 500."""
    base = read_path(path).items
    items = [replace(base[k % len(base)], item_id=f"{base[k % len(base)].item_id}~{k // len(base)}") for k in range(500)]
    return ImportBatch(items=items)


def _cpu_ms(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total * 1000


def _tree(root: int) -> list[int]:
    import psutil

    return [root] + [c.pid for c in psutil.Process(root).children(recursive=True)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presses", type=int, default=60)
    ap.add_argument("--hide-evidence", action="store_true", help="press e first: time items without their passages")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "hybridialogue" / "hybridial_annotated_dev.json")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp())
    store = AnnotationStore(folder / "app.sqlite3")
    task = store.create_task("timing", owner=OWNER)
    store.import_batch(task, five_hundred(args.data), owner=OWNER)
    with AppProcess(folder / "app.sqlite3", folder / "streamlit.log", {"WORKBENCH_AUTH": "named"}) as app, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        sign_in(page, app.url, OWNER.split(":", 1)[1], "timer")
        order = store.sequence(task, "", "all", owner=OWNER)
        wait_item(page, order[0])
        if args.hide_evidence:
            press(page, "e")
            page.get_by_text("evidence passages hidden").wait_for(timeout=30_000)
        results = []
        server = _tree(app.proc.pid)
        others = [p for p in _tree(os.getpid())[1:] if p not in server]
        for k in range(5 + args.presses):
            if k == 5:
                cpu0 = (_cpu_ms(server), _cpu_ms(others))
            result = timed_press(page, "123"[k % 3])
            assert result["item"] == order[k + 1], result
            wait_item(page, order[k + 1])
            if k >= 5:
                results.append(result)
        cpu = {"server": round((_cpu_ms(server) - cpu0[0]) / args.presses, 1),
               "browser_and_driver": round((_cpu_ms(others) - cpu0[1]) / args.presses, 1)}
        browser.close()
    labelled = len(store.labels(task, owner=OWNER))

    def summary(key: str) -> dict:
        xs = sorted(r[key] for r in results)
        return {"median": round(statistics.median(xs), 1), "p90": round(xs[int(0.9 * (len(xs) - 1))], 1), "max": round(xs[-1], 1)}

    print(json.dumps({"items": 500, "presses": len(results), "evidence_shown": not args.hide_evidence, "labels_stored": labelled,
                      "shown_ms": summary("shown_ms"), "idle_ms": summary("idle_ms"), "cpu_ms_per_press": cpu,
                      "load_average": [round(x, 1) for x in os.getloadavg()]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
