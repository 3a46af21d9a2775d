"""A private PostgreSQL cluster for tests that restart or starve the database.

The shared server on 5432 serves every engineer's tests at once; a test that
restarts PostgreSQL gets its own: ``initdb`` into a temporary directory and
``pg_ctl`` on a free port on 127.0.0.1, run as the ``postgres`` OS user when
the tests run as root (PostgreSQL refuses to run as root). Trust
authentication, no fsync (the machine never crashes here, only PostgreSQL):
it lives for one test session. ``replica()`` makes a streaming replica of one
(``pg_basebackup -R``), a cluster of its own on another port.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_bin() -> Path | None:
    """The newest PostgreSQL server binaries on this machine, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    if found and Path(found[-1], "initdb").exists():
        return Path(found[-1])
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


class Cluster:
    def __init__(self):
        self.bin = postgres_bin()
        if self.bin is None:
            raise RuntimeError("no PostgreSQL server binaries (initdb) on this machine")
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="ta-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as_root = os.geteuid() == 0
        if self._as_root:
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        os.chmod(self.root, 0o700)

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}"

    def _run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=timeout,
                              cwd=self.root)

    def init(self) -> Cluster:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync",
                  "-E", "UTF8", "--locale", "C")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(
                f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{self.root}'\n"
                # A commit is written to the WAL before it is acknowledged, as in
                # production, so a crash (immediate stop) loses nothing acknowledged;
                # fsync is off because the machine itself never crashes here.
                "fsync = off\nsynchronous_commit = on\nfull_page_writes = off\n"
                "max_connections = 100\nshared_buffers = 64MB\n"
                # A commit left unflushed stays so for seconds, not 0.2 s, so that a
                # crash test finds every answer given before the WAL reached the disk.
                "wal_writer_delay = 10s\n"
                # Nothing else writes that WAL out early: a dirty page is written only
                # after the WAL that touched it, so the background writer and a spread
                # checkpoint would carry an unflushed commit out with the page.
                "bgwriter_lru_maxpages = 0\ncheckpoint_timeout = 1h\n"
            )
        return self

    def configure(self, **settings: str) -> None:
        """Add settings to postgresql.conf (a later line wins); they hold from the next start."""
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write("".join(f"\n{name} = '{value}'" for name, value in settings.items()) + "\n")

    def replica(self) -> Cluster:
        """A hot standby streaming from this (running) cluster, made from its base backup; not started.

        initdb's defaults already allow it: ``wal_level = replica``, ten WAL
        senders, and a trusted replication entry for 127.0.0.1 in pg_hba.
        """
        standby = Cluster()
        self._run("pg_basebackup", "-D", str(standby.data), "-h", "127.0.0.1", "-p", str(self.port),
                  "-U", "postgres", "-R", "-X", "stream", "-c", "fast", "--no-sync")
        standby.configure(port=str(standby.port), unix_socket_directories=str(standby.root))
        return standby

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """``fast`` ends sessions cleanly; ``immediate`` is a crash (recovery on the next start)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop", check=False)

    def restart(self, *, down_for: float = 1.0, mode: str = "immediate") -> None:
        self.stop(mode)
        time.sleep(down_for)
        self.start()

    def is_up(self) -> bool:
        return self._run("pg_isready", "-h", "127.0.0.1", "-p", str(self.port), check=False).returncode == 0

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
