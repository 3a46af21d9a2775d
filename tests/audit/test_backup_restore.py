"""A backup restored verifies against the anchors kept outside; one missing its last events does not.

The procedure under test is the documented one: ``pg_dump --format=custom``
of the whole database, ``pg_restore --no-owner`` into a new, empty one (no
``--disable-triggers``: the data is loaded before the triggers are made),
then ``verify_audit --expect-file`` on the restored database.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from bench.load import Throwaway

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_dump and pg_restore are PostgreSQL's"),
    pytest.mark.skipif(shutil.which("pg_dump") is None or shutil.which("pg_restore") is None,
                       reason="pg_dump and pg_restore are not installed"),
]

ROOT = Path(__file__).resolve().parents[2]
KEY = "a-test-anchor-key"


def _manage(database: Throwaway, *args: str, anchors: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": database.url, "DJANGO_SETTINGS_MODULE": "casino.settings",
           "DJANGO_ENV": "development", "CELERY_BROKER_URL": "", "LOG_LEVEL": "WARNING",
           "AUDIT_ANCHOR_PATH": str(anchors), "AUDIT_ANCHOR_KEY": KEY, "AUDIT_ANCHOR_URL": ""}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def _ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _backup(database: Throwaway, to: Path) -> Path:
    subprocess.run(["pg_dump", "--format=custom", f"--file={to}", f"--dbname={database.url}"], check=True)
    return to


def _restore(dump: Path, into: Throwaway) -> None:
    subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={into.url}", str(dump)], check=True)


def _as_superuser(database: Throwaway, sql: str) -> None:
    import psycopg

    with psycopg.connect(database.url) as conn:
        conn.execute("SET session_replication_role = replica")  # past the triggers, knowingly
        conn.execute(sql)


def _refuses_what_the_original_refused(database: Throwaway) -> None:
    import psycopg

    with psycopg.connect(database.url) as conn:
        for statement in ("TRUNCATE audit_auditevent CASCADE", "UPDATE audit_auditevent SET action = 'x'",
                          "DELETE FROM rounds_tableconfigversion", "TRUNCATE rounds_round_default CASCADE"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="refused"):
                with conn.transaction():
                    conn.execute(statement)


def test_a_restored_backup_verifies_against_the_anchors_and_one_missing_its_last_events_does_not(
    empty_databases, tmp_path,
):
    live = empty_databases()
    anchors = tmp_path / "anchors"
    _ok(_manage(live, "migrate", "--no-input", "-v", "0", anchors=anchors))
    _ok(_manage(live, "register_table", "T01", "--config", "se-50kr", anchors=anchors))
    _ok(_manage(live, "audit_anchor", "--day", "2026-11-30", anchors=anchors))
    night_one = _backup(live, tmp_path / "night-one.dump")
    anchors_of_night_one = tmp_path / "anchors-of-night-one.jsonl"
    shutil.copy(anchors / "anchors.jsonl", anchors_of_night_one)

    # The next day: more events, the next anchor, the next backup.
    _ok(_manage(live, "register_table", "T02", "--config", "se-50kr", anchors=anchors))
    anchored = _ok(_manage(live, "audit_anchor", "--day", "2026-12-01", anchors=anchors)).splitlines()[0]
    last_seq = int(anchored.split()[1].split(":")[0])
    night_two = _backup(live, tmp_path / "night-two.dump")

    restored = empty_databases()
    _restore(night_two, restored)
    out = _ok(_manage(restored, "verify_audit", "--expect-file", str(anchors), anchors=anchors))
    assert f"anchor {anchored.split()[1]} holds" in out
    assert "every protection of the records is in force" in out  # the triggers came back with the restore
    _refuses_what_the_original_refused(restored)

    # The older backup holds the first night's anchor, and is caught short of the second.
    older = empty_databases()
    _restore(night_one, older)
    _ok(_manage(older, "verify_audit", "--expect-file", str(anchors_of_night_one), anchors=anchors))
    stale = _manage(older, "verify_audit", "--expect-file", str(anchors), anchors=anchors)
    assert stale.returncode == 1
    assert f"before the anchored event {last_seq}: events were removed" in stale.stderr

    # A restore whose last events were taken out, and its head moved back to match.
    _as_superuser(restored, f"DELETE FROM audit_auditevent WHERE seq >= {last_seq}; "
                            f"UPDATE audit_chainhead SET (seq, hash) = (SELECT seq, hash FROM audit_auditevent "
                            f"WHERE seq = {last_seq - 1})")
    # The chain alone looks whole; the anchors written outside do not hold, given or found where the
    # nightly task writes them.
    for given in (("--expect-file", str(anchors)), ()):
        cut = _manage(restored, "verify_audit", "--chain-only", *given, anchors=anchors)
        assert cut.returncode == 1
        assert f"before the anchored event {last_seq}" in cut.stderr

