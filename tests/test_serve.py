"""``scripts/serve`` run while a demo already listens on its port: it stops before touching anything."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_serve_on_a_port_in_use_changes_nothing(tmp_path):
    database = tmp_path / "demo.sqlite3"
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        env = {**os.environ, "PORT": str(port), "DATABASE_URL": f"sqlite:///{database}"}
        done = subprocess.run([str(ROOT / "scripts/serve")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"Port {port} is in use" in done.stderr and "nothing was changed" in done.stderr
    assert not database.exists()  # neither migrated nor loaded

