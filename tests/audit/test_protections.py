"""Every trigger that protects the records is declared, and one dropped or disabled is reported.

The DDL here runs inside each test's transaction, so the rollback puts the
trigger back for the tests after it.
"""

from __future__ import annotations

from datetime import date

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from tests.insider import as_owner
from trail.checks import protections_in_force
from trail.protections import (
    MissingProtection,
    protections_expected,
    protections_missing,
    protections_undeclared,
)

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the triggers are PostgreSQL's"),
]


def _execute(sql: str) -> None:
    with as_owner(), connection.cursor() as cursor:
        cursor.execute(sql)


def _partitions(table: str) -> list[str]:
    with connection.cursor() as cursor:
        return sorted(name for name in protections_expected(cursor) if name.startswith(f"{table}_"))


def test_a_migrated_database_has_every_declared_protection_and_no_other():
    assert protections_missing(connection) == []
    assert protections_undeclared(connection) == []
    assert protections_in_force() == []
    assert "rounds_round_default" in _partitions("rounds_round")
    assert "rounds_seat_default" in _partitions("rounds_seat")


def test_a_disabled_trigger_is_reported_by_the_check_verify_audit_and_check_deploy(capsys):
    _execute("ALTER TABLE audit_auditevent DISABLE TRIGGER audit_auditevent_append_only")
    gone = MissingProtection("audit_auditevent", "audit_auditevent_append_only", "disabled")
    assert protections_missing(connection) == [gone]
    [error] = protections_in_force()
    assert error.id == "audit.E001" and "audit_auditevent_append_only is disabled" in error.msg
    with pytest.raises(CommandError, match="1 of the database's protections are missing or disabled"):
        call_command("verify_audit", "--chain-only")
    assert f"protection gone: {gone}" in capsys.readouterr().out


def test_a_dropped_trigger_is_reported_on_a_table_and_on_one_month_of_rounds():
    partition = next(p for p in _partitions("rounds_round") if not p.endswith("_default"))
    _execute("DROP TRIGGER pool_meter_is_its_ledger ON progressive_pool")
    _execute(f"DROP TRIGGER {partition}_never_truncated ON {partition}")
    _execute("ALTER TABLE rounds_seat_default DISABLE TRIGGER rounds_seat_changes_allowed")
    assert protections_missing(connection) == [
        MissingProtection("progressive_pool", "pool_meter_is_its_ledger", "missing"),
        MissingProtection(partition, f"{partition}_never_truncated", "missing"),
        MissingProtection("rounds_seat_default", "rounds_seat_changes_allowed", "disabled"),
    ]


def test_a_partition_made_without_its_truncate_refusal_is_reported_and_one_made_by_the_service_is_not():
    from rounds.partitions import month_partitions_make

    with connection.cursor() as cursor:
        assert month_partitions_make(cursor, date(2039, 3, 1)) is True
    assert protections_missing(connection) == []
    assert "rounds_round_p203903" in _partitions("rounds_round")

    _execute("CREATE TABLE rounds_round_p203904 PARTITION OF rounds_round "
             "FOR VALUES FROM ('2039-04-01') TO ('2039-05-01')")
    assert protections_missing(connection) == [
        MissingProtection("rounds_round_p203904", "rounds_round_p203904_never_truncated", "missing"),
    ]


def test_a_trigger_no_declaration_names_is_reported_as_undeclared():
    _execute("CREATE TRIGGER audit_chainhead_unlisted BEFORE UPDATE ON audit_chainhead "
             "FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change()")
    assert protections_undeclared(connection) == [("audit_chainhead", "audit_chainhead_unlisted")]
