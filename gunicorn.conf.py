"""gunicorn, as production runs it: ``gunicorn casino.wsgi`` reads this file.

Each number here is the best that ``bench/http_ingest.py`` measured on the
reference machine (docs/SCALING.md has the runs); every one can be set from
the environment without editing the file.
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")

# One process per core, each with 8 threads. A round's request spends much of
# its time waiting (on PostgreSQL, and for the process's round writer, which
# stores the rounds that arrive together in one transaction: see
# rounds.services.ingest._Combiner), so threads keep the core busy, and the
# more of a process's requests wait together, the fewer passes of the pool's
# and the audit chain's locks they need. Measured with bench/http_ingest.py,
# 16 tables on the 2-core reference machine (docs/SCALING.md): 2x8 stored 277
# rounds/s, 3x8 271, 1x16 268, 4x4 255, 6x3 220.
workers = int(os.environ.get("WEB_CONCURRENCY", str(multiprocessing.cpu_count())))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "8"))

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

accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")

