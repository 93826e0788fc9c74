"""The app's warm start: one background warm-up of the shared read-only models per server process,
started by whichever page the first visitor opens (Streamlit runs no app code before a visit).
The Home page shows its progress. `WORKBENCH_WARMUP=0` turns it off (the tests do, so that an
AppTest does not load real models it does not need)."""

from __future__ import annotations

import gc
import os
import threading

import streamlit as st

from core.warmup import WarmUp, default_steps, mcts_kb_step

_lock = threading.Lock()
_warmup: WarmUp | None = None  # process-wide: the models it loads are shared by every session


def enabled() -> bool:
    return os.environ.get("WORKBENCH_WARMUP", "1").strip().lower() not in ("0", "false", "no", "off")


def kb_enabled() -> bool:
    """`WORKBENCH_WARMUP_KB=0`: do not prepare the MCTS knowledge index at app start."""
    return os.environ.get("WORKBENCH_WARMUP_KB", "1").strip().lower() not in ("0", "false", "no", "off")


def model_steps() -> list:
    """The shared models, in load order: torch's threads are set before the first model loads;
    the NLI model is the one the app uses."""
    from ui.resources import limit_torch_threads

    return [("torch", limit_torch_threads), *default_steps(nli_model=os.environ.get("WORKBENCH_NLI_MODEL", "")),
            ("gc freeze", gc.freeze)]  # the models' objects, long-lived, out of every later full collection


def load_models_now() -> WarmUp | None:
    """The model steps run to the end in this thread (the replica launcher, before the server
    opens its port); None when the warm-up is off. The pages' later `start()` finds them loaded."""
    if not enabled():
        return None
    done = WarmUp(model_steps()).start()
    done.wait()
    return done


def start() -> WarmUp | None:
    """Start the warm-up once per process (later calls return the same one); None when disabled.
    Returns at once: the models load in a daemon thread."""
    global _warmup
    if not enabled():
        return None
    with _lock:
        if _warmup is None:
            steps = model_steps()
            if kb_enabled():  # last: a first build takes minutes (the Chat page shows its progress with `mcts`)
                steps.append(("knowledge index", mcts_kb_step(embedder=os.environ.get("WORKBENCH_EMBEDDER", ""))))
            _warmup = WarmUp(steps).start()
    return _warmup


def render_status(warmup: WarmUp | None) -> None:
    """One line on the Home page: loading, ready (with seconds), or which model failed and why.
    While loading, the line redraws itself every second (a fragment), not the whole page."""
    if warmup is not None and not warmup.done:
        st.fragment(run_every=1.0)(_status_line)(warmup)
    else:
        _status_line(warmup)


def _status_line(warmup: WarmUp | None) -> None:
    if warmup is None:
        st.caption("Shared models load on first use (warm start is off).")
        return
    failed = [r for r in warmup.results if r.error]
    if not warmup.done:
        loaded = ", ".join(r.name for r in warmup.results if not r.error) or "nothing yet"
        st.caption(f"Loading the shared models in the background (ready: {loaded})…")
    elif failed:
        st.warning("Warm start could not load: " + "; ".join(f"{r.name} ({r.error})" for r in failed)
                   + ". Pages that need it will say what to install.")
    else:
        st.caption(f"Shared models ready (loaded in the background in {warmup.seconds:.1f} s: "
                   + ", ".join(f"{r.name} {r.seconds:.1f} s" for r in warmup.results) + ").")
