"""The service as production runs it: gunicorn with the repo's gunicorn.conf.py, and nginx
with deploy/nginx/table-audit.conf in front, on a throwaway database of their own."""

from __future__ import annotations

import os
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from bench.load import GUNICORN, Throwaway, service_env, floor_open, free_port
from bench.scaffold import ROOT, server_started, server_stopped

SITE = ROOT / "deploy" / "nginx" / "table-audit.conf"
# What the shipped file says, and what the test puts in its place.
SHIPPED_LISTEN = "listen 8000;"
SHIPPED_UPSTREAM = "server 127.0.0.1:8001;"


@dataclass(frozen=True)
class Running:
    port: int
    log: Path

    @property
    def address(self) -> tuple[str, int]:
        return "127.0.0.1", self.port


def _server_of(database_url: str) -> str:
    return urlunsplit(urlsplit(database_url)._replace(path=""))


@pytest.fixture(scope="package")
def database():
    throwaway = Throwaway(_server_of(os.environ["DATABASE_URL"])).create()
    try:
        yield throwaway
    finally:
        throwaway.drop()


@pytest.fixture(scope="package")
def floor(database) -> dict:
    return floor_open(database.url, tables=2, prefix="P")


@pytest.fixture(scope="package")
def gunicorn(database, floor, tmp_path_factory):
    """One worker of four threads, bound to loopback as gunicorn.conf.py binds by default.

    One worker, so that every connection of the attack reaches the same threads:
    with two, the kernel may hand one worker too few of them to take all its
    threads, and the attack would only sometimes be the outage it is.
    """
    port = free_port()
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    env = {
        **os.environ, **service_env(database.url),
        "DJANGO_ENV": "production", "SECRET_KEY": "a-key-for-this-test-only-" + "x" * 40,
        "SECURE_SSL_REDIRECT": "0", "TRUSTED_PROXIES": "127.0.0.1",
        "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "4",
        "GUNICORN_LOG_LEVEL": "warning",
    }
    server = server_started([GUNICORN, "-c", "gunicorn.conf.py", "casino.wsgi"], env=env, log=log,
                            port=port, name="gunicorn")
    try:
        yield Running(port, log)
    finally:
        server_stopped(server)


@pytest.fixture(scope="package")
def nginx(gunicorn, tmp_path_factory):
    """nginx from Debian's packages with the shipped site file, in front of ``gunicorn``."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(binary).exists():
        pytest.fail("nginx is not installed: scripts/test installs Debian's nginx-light")
    run = tmp_path_factory.mktemp("nginx")
    run.chmod(0o777)  # nginx's workers drop root and write their temporary files here
    port = free_port()
    site = SITE.read_text()
    for shipped in (SHIPPED_LISTEN, SHIPPED_UPSTREAM):
        assert site.count(shipped) == 1, f"{SITE} no longer says {shipped!r} once"
    site = site.replace(SHIPPED_LISTEN, f"listen 127.0.0.1:{port};")
    site = site.replace(SHIPPED_UPSTREAM, f"server 127.0.0.1:{gunicorn.port};")
    (run / "table-audit.conf").write_text(site)
    (run / "nginx.conf").write_text(textwrap.dedent(f"""\
        daemon off;
        worker_processes 1;
        pid {run}/nginx.pid;
        error_log stderr warn;
        events {{ worker_connections 1024; }}
        http {{
            access_log off;
            client_body_temp_path {run}/body;
            proxy_temp_path {run}/proxy;
            fastcgi_temp_path {run}/fastcgi;
            uwsgi_temp_path {run}/uwsgi;
            scgi_temp_path {run}/scgi;
            include {run}/table-audit.conf;
        }}
    """))
    log = run / "nginx.log"
    server = server_started([binary, "-p", str(run), "-c", str(run / "nginx.conf"), "-e", "stderr"],
                            env=dict(os.environ), log=log, port=port, name="nginx")
    try:
        yield Running(port, log)
    finally:
        server_stopped(server)
