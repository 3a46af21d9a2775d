"""A database made by the code before the re-housing, migrated by today's, keeps everything.

Models moved between apps keep their tables (only Django's state moves), so a
casino's database must come through ``migrate`` with every row, every trigger
that protects the records and every chain hash as they were, and the log's
permissions still granted. The database is made by the project as it stood
before the move (``BEFORE``, taken from git), with the demo's rounds, reports,
people and audit events in it; then today's ``migrate`` runs on it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest
from django.db import connection

from bench.load import Throwaway

ROOT = Path(__file__).resolve().parents[1]
# The last commit before models moved between apps (the audit log to the trail).
BEFORE = "1b191a3"


def _history_has_it() -> bool:
    found = subprocess.run(["git", "cat-file", "-e", f"{BEFORE}^{{commit}}"], cwd=ROOT, capture_output=True,
                           check=False)
    return found.returncode == 0


pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the copy is a PostgreSQL database"),
    # A clone made without history (git clone --depth) cannot build the code of before.
    pytest.mark.skipif(not _history_has_it(), reason=f"the project's history does not reach {BEFORE}"),
]


def _tree_before(into: Path) -> Path:
    archive = subprocess.run(["git", "archive", "--format=tar", BEFORE], cwd=ROOT, capture_output=True,
                             check=False)
    assert archive.returncode == 0, archive.stderr.decode()[-500:]
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def _manage(tree: Path, database: Throwaway, *args: str) -> str:
    env = {**os.environ, "DATABASE_URL": database.url, "DJANGO_SETTINGS_MODULE": "casino.settings",
           "DJANGO_ENV": "development", "CELERY_BROKER_URL": "", "LOG_LEVEL": "WARNING",
           "AUDIT_ANCHOR_PATH": "", "AUDIT_ANCHOR_URL": "", "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, f"manage.py {' '.join(args)} in {tree}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done.stdout


# What a later migration adds to: a role's permissions (synced after every migrate), the schedule,
# and the trail (the people as they stood, recorded once: casino.people.people_baseline_once).
GROWN = ("auth_group_permissions", "django_celery_beat_crontabschedule", "django_celery_beat_periodictask",
         "audit_auditevent")


def _state(database: Throwaway) -> dict:
    """Every table's rows, every trigger, the chain's head and who may read the log."""
    import psycopg

    with psycopg.connect(database.url) as db:
        tables = [name for (name,) in db.execute(
            "SELECT format('%I', c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition "
            "AND c.relname NOT IN ('django_migrations', 'django_content_type', 'auth_permission')")]
        rows = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables}
        triggers = sorted(db.execute(
            "SELECT c.relname, t.tgname, t.tgenabled FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal").fetchall())
        head = db.execute("SELECT seq, hash FROM audit_chainhead").fetchall()
        last = db.execute("SELECT seq, hash FROM audit_auditevent ORDER BY seq DESC LIMIT 1").fetchone()
        log_grants = sorted(db.execute(
            "SELECT g.name, p.id, p.codename, ct.app_label FROM auth_group g "
            "JOIN auth_group_permissions gp ON gp.group_id = g.id JOIN auth_permission p ON p.id = gp.permission_id "
            "JOIN django_content_type ct ON ct.id = p.content_type_id "
            "WHERE ct.model IN ('auditevent', 'chainhead')").fetchall())
    return {"rows": rows, "triggers": triggers, "head": head, "last": last, "log_grants": log_grants}


def _event(database: Throwaway, seq: int) -> tuple:
    import psycopg

    with psycopg.connect(database.url) as db:
        return db.execute("SELECT seq, hash FROM audit_auditevent WHERE seq = %s", [seq]).fetchone()


def test_a_database_made_before_the_move_keeps_every_row_trigger_and_hash(empty_databases, tmp_path):
    database = empty_databases()
    before = _tree_before(tmp_path / "before")
    _manage(before, database, "migrate", "--no-input", "-v", "0")
    _manage(before, database, "load_demo", "--history", "2")
    made = _state(database)
    assert made["rows"]["audit_auditevent"] > 0 and made["rows"]["rounds_round"] > 0
    assert {app for *_, app in made["log_grants"]} == {"audit"}  # granted where the old code put the log

    _manage(ROOT, database, "migrate", "--no-input", "-v", "0")
    moved = _state(database)

    # Every row that was there is still there; later migrations may bring a table of their own, a
    # schedule or a role's new permission, and add nothing else.
    assert {table: n for table, n in moved["rows"].items() if table in made["rows"] and table not in GROWN} == {
        table: n for table, n in made["rows"].items() if table not in GROWN}
    assert all(moved["rows"][table] >= made["rows"][table] for table in GROWN)
    assert set(made["triggers"]) <= set(moved["triggers"])
    # The chain goes on from where it was: the old last event kept as it was, then the people's
    # baseline (each person, and the baseline's own event).
    people = moved["rows"]["auth_user"]
    assert moved["rows"]["audit_auditevent"] == made["rows"]["audit_auditevent"] + people + 1
    assert moved["last"][0] == made["last"][0] + people + 1 and moved["head"] == [moved["last"]]
    assert _event(database, made["last"][0]) == made["last"]
    # The same permission rows, granted to the same groups, now the trail's.
    assert [grant[:3] for grant in moved["log_grants"]] == [grant[:3] for grant in made["log_grants"]]
    assert {app for *_, app in moved["log_grants"]} == {"trail"}
    assert "every protection of the records is in force" in _manage(ROOT, database, "verify_audit")
    _manage(ROOT, database, "migrate", "--check")  # nothing left to apply


def test_a_grant_follows_the_log_when_its_new_content_type_was_made_first(empty_databases, tmp_path):
    """Something made the trail's content type before the move ran (a migrate undone and done
    again): each group keeps its grant, now on the trail's permission, and no audit one is left."""
    import psycopg

    database = empty_databases()
    before = _tree_before(tmp_path / "before")
    _manage(before, database, "migrate", "--no-input", "-v", "0")
    with psycopg.connect(database.url) as db:
        db.execute("INSERT INTO auth_group (name) VALUES ('night auditors')")
        db.execute("INSERT INTO auth_group_permissions (group_id, permission_id) "
                   "SELECT g.id, p.id FROM auth_group g, auth_permission p JOIN django_content_type ct "
                   "ON ct.id = p.content_type_id WHERE g.name = 'night auditors' "
                   "AND ct.app_label = 'audit' AND p.codename = 'view_auditevent'")
        made = db.execute("INSERT INTO django_content_type (app_label, model) VALUES ('trail', 'auditevent') "
                          "RETURNING id").fetchone()[0]
        db.execute("INSERT INTO auth_permission (name, content_type_id, codename) "
                   "VALUES ('Can view audit event', %s, 'view_auditevent')", [made])

    _manage(ROOT, database, "migrate", "--no-input", "-v", "0")

    with psycopg.connect(database.url) as db:
        grants = db.execute(
            "SELECT ct.app_label, ct.id FROM auth_group g JOIN auth_group_permissions gp ON gp.group_id = g.id "
            "JOIN auth_permission p ON p.id = gp.permission_id JOIN django_content_type ct "
            "ON ct.id = p.content_type_id WHERE g.name = 'night auditors' AND p.codename = 'view_auditevent'"
        ).fetchall()
        left = db.execute("SELECT count(*) FROM django_content_type WHERE app_label = 'audit' "
                          "AND model IN ('auditevent', 'chainhead')").fetchone()[0]
    assert grants == [("trail", made)]
    assert left == 0
