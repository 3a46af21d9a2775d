"""What the service benchmarks share: a throwaway database, the machine, and /proc.

Each benchmark creates its own PostgreSQL database, migrates it, and drops it
at the end (``--keep`` keeps it), so a run never touches another engineer's
data and never reads a warm cache left by an earlier run.
"""

from __future__ import annotations

import http.client
import os
import platform
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
SERVER = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def database_url(name: str) -> str:
    return urlunsplit(urlsplit(SERVER)._replace(path=f"/{name}"))


def _admin():
    import psycopg

    return psycopg.connect(SERVER, autocommit=True)


def database_create(prefix: str, migrated: bool = True) -> tuple[str, str]:
    """A new database, migrated by this checkout unless not ``migrated`` (for another checkout to
    migrate as its own code expects): ``(name, url)``."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with _admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = database_url(name)
    if not migrated:
        return name, url
    env = os.environ | {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings"}
    env.pop("CELERY_BROKER_URL", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
    )
    return name, url


def database_drop(name: str) -> None:
    with _admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def django_setup(url: str) -> None:
    """Point this process's Django at ``url``; call before importing models."""
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.pop("CELERY_BROKER_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# ---- the machine -------------------------------------------------------------------------


def production_env(url: str) -> dict:
    """The production settings: a pool of connections in each process, no debug, the static
    files' manifest (a bench's pages swap in plain storage)."""
    env = os.environ | {
        "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings", "DJANGO_ENV": "production",
        "SECRET_KEY": "bench-" + os.urandom(16).hex(), "ALLOWED_HOSTS": "testserver,127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0", "DB_POOL": "1", "LOG_LEVEL": "WARNING",
        "THROTTLE_TABLE": "100000000/min", "THROTTLE_PERSON": "100000000/min",
        "AUDIT_ANCHOR_KEY": os.environ.get("AUDIT_ANCHOR_KEY", "bench-year-" + os.urandom(16).hex()),
    }
    env.pop("CELERY_BROKER_URL", None)
    return env


def machine_lines(url: str | None = None) -> list[str]:
    model = "?"
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "?")
    except OSError:
        pass
    memory = "?"
    try:
        with open("/proc/meminfo") as info:
            kib = int(next(line for line in info if line.startswith("MemTotal")).split()[1])
            memory = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration):
        pass
    lines = [
        f"machine: {model}, {os.cpu_count()} cores, {memory}, {platform.system()} {platform.release()}",
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"python {platform.python_version()}",
    ]
    if url:
        import psycopg

        with psycopg.connect(url) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
            settings = dict(conn.execute(
                "SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY(%s)",
                [["shared_buffers", "synchronous_commit", "max_connections", "fsync"]],
            ).fetchall())
        lines.append(
            f"postgresql {version} on the same machine: "
            + ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))
        )
    return lines


# ---- processes, from /proc ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProcStat:
    pid: int
    ppid: int
    name: str
    cpu_seconds: float  # user + system


def proc_stat(pid: int) -> ProcStat | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    # After the name: state ppid ... utime is field 14, stime 15 (1-based, whole line).
    return ProcStat(pid, int(fields[1]), name, (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)


def all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def descendants(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for pid in all_pids():
        stat = proc_stat(pid)
        if stat is not None:
            children.setdefault(stat.ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def cpu_seconds(pids) -> float:
    total = 0.0
    for pid in pids:
        stat = proc_stat(pid)
        if stat is not None:
            total += stat.cpu_seconds
    return total


def machine_cpu() -> tuple[float, float]:
    """(busy, idle) seconds of the whole machine, all cores, since boot."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / CLOCK_TICKS, idle / CLOCK_TICKS


def peak_rss_kib(pid: int) -> int:
    """VmHWM: the largest resident set the process has had."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ---- a server under test ------------------------------------------------------------------


def server_started(command: list[str], *, env: dict, log: Path, port: int, name: str,
                   probe: str = "/api/v1/rounds/") -> subprocess.Popen:
    """``command`` started in a session of its own, once it answers ``probe`` on ``port``
    (60 s at most; its log's end in the error otherwise)."""
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{name} exited:\n{log.read_text()[-3000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", probe)
            conn.getresponse().read()
            conn.close()
            return server
        except OSError:
            time.sleep(0.2)
    server_stopped(server)
    raise RuntimeError(f"{name} did not answer in 60 s:\n{log.read_text()[-3000:]}")


def server_stopped(server: subprocess.Popen) -> None:
    """The server and every process it started (its session) ended."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
