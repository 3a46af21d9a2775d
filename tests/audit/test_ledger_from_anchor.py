"""Each anchor keeps where every pool's ledger stood, and ``verify_audit`` walks the ledgers from there.

What the walk from a kept position catches (an event after it, the kept
event itself changed, events cut off) and what it leaves to ``--full`` and
the nightly report's turn (a row before it).
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from audit.anchors import anchor_write, ledger_positions_anchored
from progressive.models import MeterEvent, Pool
from progressive.selectors import pool_ledger_check_since
from tests.insider import as_superuser
from tests.progressive.records import us_rounds
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
POOL = "us-progressive"
DAY = date(2026, 11, 30)
DAMAGE = "pools whose meter is not their ledger"


def _post(client, records) -> None:
    for record in records:
        assert client.post("/api/v1/rounds/", record, format="json").status_code == 201


def _tampered(sql: str, params) -> None:
    with as_superuser(), connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.fixture
def nights(anchored, table_client):
    """Rounds, an anchor, rounds, a second anchor, rounds: the ledger's position kept with the first
    is the one the second anchor holds."""
    client = table_client("U01", "us-30k")
    _post(client, us_rounds("U01", "a", 3))
    anchor_write(gaming_day=DAY)
    kept = Pool.objects.get(code=POOL).last_event_seq
    _post(client, us_rounds("U01", "b", 3, start=3))
    second = anchor_write(gaming_day=DAY + timedelta(days=1)).anchor
    _post(client, us_rounds("U01", "c", 2, start=6))
    return kept, second


def test_an_anchor_keeps_where_each_ledger_stood(anchored, table_client):
    _post(table_client("U01", "us-30k"), us_rounds("U01", "k", 2))
    anchor_write(gaming_day=DAY)
    pool = Pool.objects.get(code=POOL)
    last = MeterEvent.objects.get(pool=pool, seq=pool.last_event_seq)
    kept = AuditEvent.objects.filter(action="audit.anchored").latest("seq").after["ledger"][POOL]
    assert kept == {"seq": pool.last_event_seq, "meter_after": str(last.meter_after),
                    "overflow_after": str(last.overflow_after), "reserve_after": str(last.reserve_after)}


def test_verify_audit_walks_each_ledger_from_the_position_the_anchors_hold(nights, capsys):
    kept, second = nights
    assert ledger_positions_anchored(at_or_before=second.seq)[POOL]["seq"] == kept
    pool = Pool.objects.get(code=POOL)
    check = pool_ledger_check_since(pool=pool, position=ledger_positions_anchored(at_or_before=second.seq)[POOL])
    assert check.ok and check.events == pool.last_event_seq - kept
    call_command("verify_audit")
    out = capsys.readouterr().out
    assert f"walked from the position kept with anchor {second.seq}" in out
    assert "every pool's meter is its ledger" in out


def test_an_event_after_the_kept_position_changed_is_found(nights):
    kept, _ = nights
    _tampered("UPDATE progressive_meterevent SET amount = amount + 1, delta = delta + 1 "
              "WHERE seq = %s AND pool_id = (SELECT id FROM progressive_pool WHERE code = %s)", [kept + 2, POOL])
    with pytest.raises(CommandError, match=DAMAGE):
        call_command("verify_audit")


def test_the_kept_event_changed_is_found(nights, capsys):
    kept, _ = nights
    _tampered("UPDATE progressive_meterevent SET meter_after = meter_after + 1 "
              "WHERE seq = %s AND pool_id = (SELECT id FROM progressive_pool WHERE code = %s)", [kept, POOL])
    with pytest.raises(CommandError, match=DAMAGE):
        call_command("verify_audit")
    assert f"event {kept} says meter" in capsys.readouterr().out


def test_events_cut_off_before_the_kept_position_are_found(nights, capsys):
    kept, _ = nights
    pool = Pool.objects.get(code=POOL)
    _tampered("DELETE FROM progressive_meterevent WHERE pool_id = %s AND seq >= %s", [pool.pk, kept])
    _tampered("UPDATE progressive_pool SET last_event_seq = %s, meter = %s WHERE id = %s",
              [kept - 1, MeterEvent.objects.get(pool=pool, seq=kept - 1).meter_after, pool.pk])
    with pytest.raises(CommandError, match=DAMAGE):
        call_command("verify_audit")
    assert f"event {kept}, kept with the anchor, is missing" in capsys.readouterr().out


def test_a_row_before_the_kept_position_is_left_to_the_whole_walk(nights):
    kept, _ = nights
    # The opening reseed (no round derives from it) made larger, its meter after left as it was.
    _tampered("UPDATE progressive_meterevent SET amount = amount + 1, delta = delta + 1 "
              "WHERE seq = 1 AND pool_id = (SELECT id FROM progressive_pool WHERE code = %s)", [POOL])
    assert kept > 1
    call_command("verify_audit")  # the nightly report's turn through the ledger finds it, and --full
    with pytest.raises(CommandError, match=DAMAGE):
        call_command("verify_audit", "--full")


@pytest.mark.parametrize("position", [None, {}, {"seq": 0}, {"seq": "x"}, {"seq": 3}])
def test_a_position_not_kept_or_not_in_shape_walks_the_whole_ledger(nights, position):
    pool = Pool.objects.get(code=POOL)
    check = pool_ledger_check_since(pool=pool, position=position)
    assert check.ok and check.events == pool.last_event_seq
