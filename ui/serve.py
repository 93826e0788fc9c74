"""`python -m ui.serve [streamlit options]`: load the shared models, then serve the app; the way
to start a replica behind a proxy (deploy/compose.yaml, the load test).

Streamlit opens its port at once and runs no app code before a visit, so a restarted replica took
traffic while its first users waited for the models to load (~2 s on a quiet 2-core machine, ~15 s
on a busy one; docs/operations.md). Here the port opens only after the warm-up's model steps ran,
so nginx sends the replica nothing until then (a refused connection is a failed attempt that
`proxy_next_upstream` retries on another replica) and a health check turns green only when the
replica answers at full speed. The MCTS knowledge index (minutes on a first build) still loads in
the background, as the Home page shows. One user on one machine is better served by `streamlit
run` (the README's command): the Home page opens at once and shows the models loading."""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "streamlit_app.py"


def main(argv: list[str] | None = None) -> int:
    from ui import warmup

    done = warmup.load_models_now()
    if done is not None:
        failed = [f"{r.name} ({r.error})" for r in done.results if r.error]
        print(f"shared models loaded in {done.seconds:.1f} s" + (f"; could not load: {'; '.join(failed)}" if failed else "")
              + "; starting the server", flush=True)
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


if __name__ == "__main__":
    raise SystemExit(main())
