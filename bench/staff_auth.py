"""What a staff script's call costs the server: a password with every call (Basic), or a token.

    .venv/bin/python -m bench.staff_auth                 # 6 turns of 20 calls each way
    .venv/bin/python -m bench.staff_auth --turns 10 --calls 50

A throwaway database on the local PostgreSQL (the service on its own role), one
gunicorn worker of one thread, and one person with a password hashed as
production hashes it (Django's PBKDF2) and a token of his (``api.tokens``).
The same read (``GET /api/v1/pools/``) is called over one keep-alive
connection, in turns that alternate Basic and Token, so that both see the same
machine. Each turn's server CPU is the worker's own (user + system, from
/proc), divided by its calls; printed per turn and as the median of each way.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import statistics
import time

from bench.load import Service, Throwaway, django_run

MAKE = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from knox.models import AuthToken
from casino.services import user_roles_set
from trail.services import Actor
user = get_user_model().objects.create_user("script", password="a-made-up-bench-test-password")
user_roles_set(user=user, roles=["auditor"], actor=Actor.of_command("bench"))
print(json.dumps({"token": AuthToken.objects.create(user=user, expiry=timedelta(days=1))[1]}))
"""
PATH = "/api/v1/pools/"


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _workers(master: int) -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == master:
                        children.append(int(entry))
            except OSError:
                continue
    return children


def _turn(service: Service, header: str, calls: int) -> tuple[float, float]:
    """CPU seconds of the worker per call, and calls a second."""
    workers = _workers(service.process.pid)
    connection = http.client.HTTPConnection(*service.base, timeout=30)
    before = sum(_cpu_seconds(pid) for pid in workers)
    started = time.perf_counter()
    for _ in range(calls):
        connection.request("GET", PATH, headers={"Authorization": header, "Accept": "application/json"})
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{header.split()[0]}: {response.status}")
    elapsed = time.perf_counter() - started
    connection.close()
    return (sum(_cpu_seconds(pid) for pid in workers) - before) / calls, calls / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    database = Throwaway(args.server).create()
    try:
        token = json.loads(django_run(database.url, "manage.py", "shell", "-c", MAKE,
                                      module=False).strip().splitlines()[-1])["token"]
        basic = "Basic " + base64.b64encode(b"script:a-made-up-bench-test-password").decode()
        ways = {"Basic": basic, "Token": f"Token {token}"}
        service = Service(database.url, workers=1, threads=1)
        try:
            for header in ways.values():
                _turn(service, header, 3)  # warm: imports, connections, caches
            figures: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
            print(f"{'turn':>4}  {'way':<6} {'CPU ms/call':>12} {'calls/s':>9}")
            for turn in range(args.turns):
                for name in (list(ways) if turn % 2 == 0 else list(ways)[::-1]):
                    cpu, rate = _turn(service, ways[name], args.calls)
                    figures[name].append((cpu, rate))
                    print(f"{turn + 1:>4}  {name:<6} {cpu * 1000:>12.1f} {rate:>9.1f}")
            print()
            for name, runs in figures.items():
                print(f"median {name:<6} {statistics.median(c for c, _ in runs) * 1000:>8.1f} ms CPU a call, "
                      f"{statistics.median(r for _, r in runs):>7.1f} calls/s "
                      f"(CPU range {min(c for c, _ in runs) * 1000:.1f}-{max(c for c, _ in runs) * 1000:.1f} ms)")
        finally:
            service.stop()
    finally:
        database.drop()


if __name__ == "__main__":
    main()
