"""The embedded default as a new user meets it: a fresh SQLite file migrated and the demo loaded, with
nothing set but the file (no window of the books, no broker), as ``scripts/serve`` does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the embedded default's SQLite file: scripts/test's SQLite pass"
)


def test_a_fresh_sqlite_file_takes_the_demo(tmp_path):
    env = {name: value for name, value in os.environ.items()
           if name not in ("DJANGO_SETTINGS_MODULE", "ROUND_WINDOW_OPENS", "CELERY_BROKER_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    for command in (["migrate", "--no-input"], ["load_demo"]):
        done = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    assert "Logins:" in done.stdout and "auditor" in done.stdout
