"""Where a chat message's CPU goes in one app replica (stub LLM, PostgreSQL, nginx): py-spy records
the replica while N sessions chat through the proxy. py-spy is not a dependency: pass its path.

    python scripts/lab/profile_chat_page.py --py-spy /tmp/pyspy/bin/py-spy --sessions 20 --out /tmp/chat.svg
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: ops/ is not installed

from ops.cluster import Cluster  # noqa: E402
from ops.loadtest import User, run_users  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--py-spy", required=True)
    p.add_argument("--sessions", type=int, default=20)
    p.add_argument("--messages", type=int, default=3)
    p.add_argument("--think", type=float, default=2.0)
    p.add_argument("--format", default="speedscope")
    p.add_argument("--out", required=True)
    p.add_argument("--app-env", action="append", default=[])
    a = p.parse_args()
    extra = dict(kv.split("=", 1) for kv in a.app_env)
    with Cluster(1, "stub", 1, extra_env=extra) as c:
        run_users(c.apps[0].url, [User("warm", "anon:warm")], c.secret, 1, 0.0)
        spy = subprocess.Popen([a.py_spy, "record", "-p", str(c.apps[0].pid), "-o", a.out, "-f", a.format, "-r", "200",
                                "--nonblocking", "-t"])
        users = [User(f"u{k}", f"anon:u{k}") for k in range(a.sessions)]
        wall = run_users(c.nginx.url, users, c.secret, a.messages, a.think)
        spy.send_signal(2)
        spy.wait(60)
        t = sorted(x for u in users for x in u.timings)
        print(f"{len(t)} responses in {wall:.1f} s; p50 {t[len(t)//2]:.3f} s, max {t[-1]:.3f} s")


if __name__ == "__main__":
    main()
