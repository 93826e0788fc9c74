"""`python -m ui.serve [streamlit options]`: load the shared models, then serve the app; the way
to start a replica behind a proxy (deploy/compose.yaml, the load test).

Streamlit opens its port at once and runs no app code before a visit, so a restarted replica took
traffic while its first users waited for the models to load (~2 s on a quiet 2-core machine, ~15 s
on a busy one; docs/operations.md). Here the port opens only after the warm-up's model steps ran,
so nginx sends the replica nothing until then (a refused connection is a failed attempt that
`proxy_next_upstream` retries on another replica) and a health check turns green only when the
replica answers at full speed. The MCTS knowledge index (minutes on a first build) still loads in
the background, as the Home page shows. One user on one machine is better served at once: `make
run` starts `python -m ui.serve --load-in-background`, and the Home page shows the models loading.
Either way the server answers a page's own address with a page that names the server's root
(ui/page_index.py: no failed requests in the browser), which plain `streamlit run` does not."""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "streamlit_app.py"


LOADING_NICENESS = 10  # while loading: below the replicas that serve on the same host
_PASSES = 5  # passes over the threads when setting the niceness (threads may start during one)


def _set_niceness(value: int) -> bool:
    """Every thread of this process (Linux keeps a niceness per thread) to `value`; False where not
    allowed (raising it back needs privileges a container may not have: there the replica is alone
    in its cgroup, so the lower priority changes nothing)."""
    tasks = Path("/proc/self/task")
    done: set[int] = set()
    try:
        # again until a pass finds no new thread: one started meanwhile by a thread still at the old
        # niceness has that niceness (a loader's pool threads, while the first pass runs)
        for _ in range(_PASSES):
            new = [tid for tid in ([int(t.name) for t in tasks.iterdir()] if tasks.is_dir() else [0]) if tid not in done]
            if not new:
                break
            for tid in new:
                try:
                    os.setpriority(os.PRIO_PROCESS, tid, value)
                except ProcessLookupError:  # the thread ended meanwhile
                    pass
                done.add(tid)
    except OSError:
        return False
    return True


BACKGROUND = "--load-in-background"  # `make run`: serve at once, the pages load the models in the background


def main(argv: list[str] | None = None) -> int:
    from ui import page_index, warmup

    args = list(sys.argv[1:] if argv is None else argv)
    if BACKGROUND not in args:
        _load_first(warmup)
    print(page_index.install(), flush=True)  # a page opened by its address makes no failed request
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *(a for a in args if a != BACKGROUND)]
    return cli.main()


def _load_first(warmup) -> None:
    # A replica restarted beside running ones (a crash, a deploy) loads ~9 CPU-seconds of models;
    # at normal priority that slowed the running replica's users (the load test's fault run), so
    # the loading yields the CPU to them and the server then runs at normal priority.
    start = os.getpriority(os.PRIO_PROCESS, 0)
    _set_niceness(max(start, LOADING_NICENESS))
    done = warmup.load_models_now()
    if not _set_niceness(start):
        print(f"could not restore CPU priority {start} after loading (no privilege); serving at {LOADING_NICENESS}", flush=True)
    if done is not None:
        failed = [f"{r.name} ({r.error})" for r in done.results if r.error]
        print(f"shared models loaded in {done.seconds:.1f} s" + (f"; could not load: {'; '.join(failed)}" if failed else "")
              + "; starting the server", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
