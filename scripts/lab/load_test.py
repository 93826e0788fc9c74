"""Load: N concurrent browser-free sessions chatting with the running app (`streamlit run` on a
fresh database), each its own owner, over Streamlit's websocket protocol (tests/st_client.py).

Page response = seconds from pressing Enter in the chat box to the end of the page's last script
run (the reply, the consistency badge, the memory save and the rerun that follows), as a user
waits for it. First a single user sends the same messages alone (the baseline), then N sessions
at once. Errors = exceptions, st.error alerts, or runs that never finish.

Usage:
  .venv/bin/python scripts/lab/load_test.py --backend fake  --sessions 20 --messages 3
  .venv/bin/python scripts/lab/load_test.py --backend local --sessions 20 --messages 1

`fake` answers from an OpenAI-compatible stub on 127.0.0.1 at once (the app's own cost only);
`local` is the embedded model the app loads by default. Prints a JSON summary; --out writes it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.app_process import AppProcess  # noqa: E402
from tests.llm_stub import LLMStub  # noqa: E402
from tests.st_client import StreamlitClient  # noqa: E402

MESSAGES = ["Hi, my name is {who} and I live in Lisbon.", "I have a dog called Rex.", "What is my dog called?",
            "Where do I live?", "Thanks, bye."]


def session(url: str, who: str, messages: int, timings: list, errors: list, barrier: threading.Barrier | None,
            think_s: float = 0.0, spread: bool = False) -> None:
    try:
        with StreamlitClient(url, timeout_s=900) as client:
            client.open("Chat")
            if barrier is not None:
                barrier.wait(timeout=600)  # every session is on the page before anyone sends
            pause = random.Random(who)
            if spread and think_s:  # arrivals spread over one think time instead of all at the same instant
                time.sleep(think_s * pause.uniform(0.0, 1.0))
            for i in range(messages):
                if i and think_s:  # reading the reply and typing the next message
                    time.sleep(think_s * pause.uniform(0.5, 1.5))
                text = MESSAGES[i % len(MESSAGES)].format(who=who)
                run = client.chat(text)
                timings.append(run.seconds)
                errors.extend(f"{who}: {e}" for e in run.errors)
                if not run.errors and text.split()[0] not in run.text():
                    errors.append(f"{who}: the page did not show the message {text!r}")
    except Exception as err:  # one failed session is a counted error, not the end of the run
        errors.append(f"{who}: {type(err).__name__}: {err}")


def measure(url: str, sessions: int, messages: int, tag: str, think_s: float = 0.0, spread: bool = False) -> dict:
    timings: list[float] = []
    errors: list[str] = []
    barrier = threading.Barrier(sessions) if sessions > 1 else None
    threads = [threading.Thread(target=session, args=(url, f"{tag}{i}", messages, timings, errors, barrier, think_s, spread))
               for i in range(sessions)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"sessions": sessions, "messages_each": messages, "think_s": think_s, "arrivals": "spread" if spread else "burst",
            "responses": len(timings), "errors": errors,
            "p50_s": round(statistics.median(timings), 3) if timings else None,
            "p95_s": round(percentile(timings, 95), 3) if timings else None,
            "max_s": round(max(timings), 3) if timings else None, "wall_s": round(time.perf_counter() - t0, 1)}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["fake", "local"], default="fake")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--messages", type=int, default=3)
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean seconds between a reply and the next message (uniform 0.5x-1.5x); 0 = at once")
    parser.add_argument("--arrivals", choices=["burst", "spread"], default="burst",
                        help="burst: every session sends its first message at the same instant; "
                             "spread: first messages spread uniformly over one --think time")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="load-"))
    with LLMStub() as stub:
        env = {"WORKBENCH_LLM_BASE_URL": stub.url, "WORKBENCH_LLM_MODEL": "stub"} if args.backend == "fake" else {}
        with AppProcess(folder / "app.sqlite3", folder / "streamlit.log", env) as app:
            warm = measure(app.url, 1, 1, "warm")  # loads the models once, as the first visitor would
            single = measure(app.url, 1, args.messages, "solo", args.think)
            many = measure(app.url, args.sessions, args.messages, "user", args.think, args.arrivals == "spread")
    summary = {
        "date": time.strftime("%Y-%m-%d"), "backend": args.backend,
        "machine": f"{platform.machine()}, {platform.python_version()}", "warm_up": warm, "single_user": single,
        "concurrent": many, "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
        "p95_ratio": round(many["p95_s"] / single["p95_s"], 2) if many["p95_s"] and single["p95_s"] else None,
        "command": " ".join(["scripts/lab/load_test.py", *sys.argv[1:]]),
    }
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if not single["errors"] and not many["errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
