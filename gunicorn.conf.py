"""gunicorn, as production runs it: ``gunicorn casino.wsgi`` reads this file.

Each number here is the best that ``bench/http_ingest.py`` measured on the
reference machine (docs/SCALING.md has the runs); every one can be set from
the environment without editing the file.
"""

import multiprocessing
import os
import select
import sys

from gunicorn.workers.gthread import ThreadWorker

# Loopback: nginx (deploy/nginx/table-audit.conf) is what clients reach; a body
# trickled straight to gunicorn holds one of its threads for as long as it lasts.
bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8001")

# One process per core, each with 8 threads. A round's request spends much of
# its time waiting (on PostgreSQL, and for the process's round writer, which
# stores the rounds that arrive together in one transaction: see
# rounds.services.combiner), so threads keep the core busy, and the
# more of a process's requests wait together, the fewer passes of the pool's
# and the audit chain's locks they need. Two processes of eight threads stored
# the most rounds of every split measured with bench/http_ingest.py (the
# figures: docs/SCALING.md, "Figures behind the comments").
workers = int(os.environ.get("WEB_CONCURRENCY", str(multiprocessing.cpu_count())))
threads = int(os.environ.get("GUNICORN_THREADS", "8"))


class LingeringThreadWorker(ThreadWorker):
    """gunicorn's gthread worker, whose thread stays with a busy connection for a moment.

    gthread hands a kept-alive connection back to its main loop after every
    request, and the next request travels main loop -> thread pool -> main
    loop again: several hand-offs of the interpreter's lock per request. While
    16 tables posted at once, the main loop held the interpreter for a large
    share of a worker's samples, and with this a small one (docs/SCALING.md).
    A table catching up sends its next round as soon as it has the answer, so
    here the thread waits up to ``GUNICORN_LINGER_MS`` for it and serves it
    itself, but only while no other connection is waiting for a thread, so
    no table ever waits because another is being served. Idle connections go
    back to the main loop exactly as in gthread.

    It reads two of gthread's internals (the thread pool's queue and the
    parser's buffer) as they are in the pinned gunicorn (requirements/prod.txt):
    check them when upgrading. ``GUNICORN_LINGER_MS=0`` is plain gthread.
    """

    LINGER = float(os.environ.get("GUNICORN_LINGER_MS", "5")) / 1000
    MOST_IN_A_ROW = 100  # then back to the main loop anyway, as a matter of course

    def handle(self, conn):
        result = super().handle(conn)
        served = 1
        while (
            result is True and self.alive and self.LINGER > 0 and served < self.MOST_IN_A_ROW
            and self.tpool._work_queue.empty()
        ):
            buffered = conn.parser is not None and conn.parser.unreader.buf.getvalue()
            if not buffered and not _readable(conn.sock, self.LINGER):
                break
            result = super().handle(conn)
            served += 1
        return result


def _readable(sock, seconds: float) -> bool:
    """Whether ``sock`` has something to read (or was closed) within ``seconds``."""
    try:
        poll = select.poll()
        poll.register(sock, select.POLLIN)
        return bool(poll.poll(seconds * 1000))
    except (OSError, ValueError):
        return False


worker_class = LingeringThreadWorker if os.environ.get("GUNICORN_LINGER_MS", "5") != "0" else "gthread"

# Tables keep their connection open between rounds; a round a minute per table
# would otherwise pay a new TCP handshake each time behind a proxy that pools.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "30"))

# A catch-up batch of 1,000 rounds takes a few seconds here under load; 60 s
# leaves room for a slow database without letting a stuck worker hang forever.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30

# Recycle workers now and then so a slow leak can never grow without bound;
# the jitter keeps them from restarting all at once.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "20000"))
max_requests_jitter = max_requests // 10

# Load Django once in the master; workers fork with it already imported.
# No database connection is opened at import, so none is shared across the fork.
preload_app = True

# One line per request, on stdout ("-") or to a file; GUNICORN_ACCESS_LOG="" turns it off.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")

# The access and error lines as JSON, with the same formatter as the application's
# (casino.logs), when the application logs JSON too: LOG_FORMAT as casino.settings reads it.
LOG_FORMAT = os.environ.get(
    "LOG_FORMAT", "json" if os.environ.get("DJANGO_ENV", "development") == "production" else "plain")
if LOG_FORMAT == "json":
    _access = (
        {"class": "logging.NullHandler"} if accesslog is None
        else {"class": "logging.StreamHandler", "formatter": "access", "stream": "ext://sys.stdout"}
        if accesslog == "-"
        # Watched: a file moved away by logrotate is opened again.
        else {"class": "logging.handlers.WatchedFileHandler", "formatter": "access", "filename": accesslog}
    )
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "root": {"level": "INFO", "handlers": ["error"]},
        "loggers": {
            "gunicorn.error": {"level": loglevel.upper(), "handlers": ["error"], "propagate": False},
            "gunicorn.access": {"level": "INFO", "handlers": ["access"], "propagate": False},
        },
        "handlers": {
            "error": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
            "access": _access,
        },
        "formatters": {
            "json": {"()": "casino.logs.JsonFormatter"},
            "access": {"()": "casino.logs.AccessJsonFormatter"},
        },
    }

# The Prometheus instruments of every worker kept in files here and added up at
# each scrape of /metrics (infra.metrics). Set before the application loads:
# prometheus_client reads it as it is imported.
os.environ.setdefault(
    "PROMETHEUS_MULTIPROC_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "var", "prometheus"))


# How long a thread may keep the interpreter before another that is ready to
# run takes it (CPython's default: 5 ms). The round writer holds the pool's
# and the audit chain's row locks while it stores a group, and after each of
# its round trips to PostgreSQL it waits for the interpreter again, behind
# request threads that are parsing and answering; every millisecond it waits
# there is a millisecond every other table's round waits for the locks.
SWITCH_INTERVAL = float(os.environ.get("GUNICORN_SWITCH_INTERVAL_MS", "1")) / 1000


def on_starting(server):
    # What the processes of an earlier run counted is gone with them; files of a
    # process still running (a Celery worker sharing the directory) stay.
    from infra.metrics import multiprocess_dir_prepare

    multiprocess_dir_prepare(os.environ["PROMETHEUS_MULTIPROC_DIR"])

    # The hand evaluator's rank table, filled in the master before it forks:
    # each worker, and each one that replaces a recycled worker,
    # starts with every hand's rank instead of working them out as they come.
    from game.evaluator import fill_rank_table

    fill_rank_table()


def post_fork(server, worker):
    sys.setswitchinterval(SWITCH_INTERVAL)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
