"""A throw-away PostgreSQL server: initdb into a temporary folder, `postgres` on a free port on
127.0.0.1 (TCP only), removed on stop. Uses Debian's `postgresql` binaries
(/usr/lib/postgresql/<version>/bin). initdb refuses to run as root, so as root the server runs as
the unprivileged user `nobody` (the data folder is handed to it).

    with TempPostgres() as pg:
        pg.url             # postgresql://postgres@127.0.0.1:PORT/postgres
        pg.create_database("t1")   # -> its URL
        pg.restart()       # a fast shutdown and start on the same port and data
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ops.procs import free_port, stop


def find_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder (initdb and postgres), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("postgres") else None


class TempPostgres:
    def __init__(self, folder: Path | None = None, port: int | None = None, durable: bool = True) -> None:
        self.bin = find_bin()
        if self.bin is None:
            raise FileNotFoundError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
        self._own_folder = folder is None
        self.folder = Path(folder or tempfile.mkdtemp(prefix="pg-"))
        self.data, self.log_path = self.folder / "data", self.folder / "postgres.log"
        self.port = port or free_port()
        self.durable = durable  # False: fsync off (tests; a crash of the machine, not of postgres, loses data)
        self.proc: subprocess.Popen | None = None
        self._as = self._user()

    def _user(self) -> dict:
        if os.geteuid() != 0:
            return {}
        nobody = pwd.getpwnam("nobody")
        return {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}

    @property
    def url(self) -> str:
        return self.url_for("postgres")

    def url_for(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _give_folder(self) -> None:
        if self._as:
            os.chmod(self.folder, 0o755)
            os.chown(self.folder, self._as["user"], self._as["group"])

    def start(self, timeout_s: float = 60) -> "TempPostgres":
        if not self.data.exists():
            self._give_folder()
            subprocess.run([str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                            "--no-sync", "--no-instructions"], check=True, capture_output=True, cwd=self.folder, **self._as)
        log = open(self.log_path, "a")
        options = ["-p", str(self.port), "-h", "127.0.0.1", "-k", "", "-c", "max_connections=300",
                   "-c", "shared_buffers=64MB"]
        if not self.durable:
            options += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        self.proc = subprocess.Popen([str(self.bin / "postgres"), "-D", str(self.data), *options], stdout=log,
                                     stderr=subprocess.STDOUT, cwd=self.folder, **self._as)
        log.close()
        self._wait_ready(timeout_s)
        return self

    def _wait_ready(self, timeout_s: float) -> None:
        import psycopg

        deadline = time.time() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited with {self.proc.returncode}; log: {self.log_path}\n{self.log()[-2000:]}")
            try:
                with psycopg.connect(self.url, connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError:
                if time.time() > deadline:
                    raise RuntimeError(f"postgres did not accept connections within {timeout_s:.0f} s; log: {self.log_path}")
                time.sleep(0.2)

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_for(name)

    def stop(self, mode: str = "fast") -> None:
        """fast: SIGINT (clients disconnected, clean shutdown); immediate: SIGQUIT (as a crash; WAL
        recovery on the next start)."""
        stop(self.proc, signal.SIGINT if mode == "fast" else signal.SIGQUIT, timeout_s=30)

    def restart(self, mode: str = "fast", down_s: float = 0.0) -> None:
        self.stop(mode)
        time.sleep(down_s)
        self.start()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def cleanup(self) -> None:
        self.stop()
        if self._own_folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "TempPostgres":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.cleanup()
