"""Every connection of the service runs with PostgreSQL's JIT off, and an operator's PGOPTIONS still
reach it: libpq reads PGOPTIONS only where the connection gives no options of its own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql", reason="libpq's options are PostgreSQL's")]

SHOWN = ("import django; django.setup(); from django.db import connection; c = connection.cursor(); "
         "print(*[c.execute(f'SHOW {name}').fetchone()[0] for name in ('jit', 'statement_timeout')])")


def _url() -> str:
    db = connection.settings_dict
    who = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{who}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


def _shown(**env) -> list[str]:
    done = subprocess.run([sys.executable, "-c", SHOWN], capture_output=True, text=True, check=False,
                          cwd=settings.BASE_DIR, env={**os.environ, "DJANGO_SETTINGS_MODULE": "casino.settings",
                                                      "DATABASE_URL": _url(), "LOG_LEVEL": "WARNING", **env})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


@pytest.mark.parametrize(("env", "expected"), [
    ({}, ["off", "0"]),
    ({"PGOPTIONS": "-c statement_timeout=1234"}, ["off", "1234ms"]),
    ({"DB_JIT": "1"}, ["on", "0"]),
    ({"PGOPTIONS": "-c jit=on"}, ["on", "0"]),  # the operator's word is the last
])
def test_jit_is_off_and_an_operators_pgoptions_still_apply(env, expected):
    env.setdefault("PGOPTIONS", "")
    assert _shown(**env) == expected
