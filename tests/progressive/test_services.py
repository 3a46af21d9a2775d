"""Pools, versions, adjustments and overflow transfers: what is written, and what is refused whole."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest
from django.utils import timezone as dj_timezone

from progressive import services
from progressive.models import MeterEvent, Pool, PoolVersion
from progressive.selectors import pool_ledger_check
from progressive.services import (
    MeterError,
    PoolConfigError,
    meter_adjust,
    meter_transfer_overflow,
    pool_create,
    pool_version_create,
)
from rounds.models import TableConfig, TableConfigVersion
from tests.progressive.records import ROUNDS, us_rounds
from trail.models import AuditEvent
from trail.services import SYSTEM, Actor

pytestmark = pytest.mark.django_db

LINES = [
    {"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "100"},
    {"category": "straight_flush", "qualifier": "hole", "kind": "percent", "amount": "10"},
    {"category": "royal_flush", "qualifier": "board", "kind": "fixed", "amount": "1000"},
    {"category": "four_of_a_kind", "qualifier": "any", "kind": "fixed", "amount": "300"},
    {"category": "full_house", "qualifier": "any", "kind": "fixed", "amount": "25"},
    {"category": "flush", "qualifier": "any", "kind": "fixed", "amount": "20"},
    {"category": "straight", "qualifier": "any", "kind": "fixed", "amount": "15"},
]
LONG_AGO = datetime(2000, 1, 1, tzinfo=timezone.utc)


def _create(**overrides) -> Pool:
    kwargs = {
        "code": "p-test", "currency": "USD", "wager": "5.00", "rate": "0.20", "reseed": "1000.00",
        "lines": LINES, "actor": SYSTEM, "effective_from": LONG_AGO,
    }
    kwargs.update(overrides)
    return pool_create(**kwargs)


def _version(pool: Pool, **overrides) -> PoolVersion:
    kwargs = {
        "pool": pool, "effective_from": LONG_AGO + timedelta(days=1), "wager": "5.00",
        "rate": "0.20", "reseed": "1000.00", "lines": LINES, "actor": SYSTEM,
    }
    kwargs.update(overrides)
    return pool_version_create(**kwargs)


def _counts() -> tuple[int, ...]:
    return (Pool.objects.count(), PoolVersion.objects.count(), MeterEvent.objects.count(),
            AuditEvent.objects.count())


def _with_line(number: int, **change) -> list[dict]:
    lines = [dict(line) for line in LINES]
    lines[number - 1].update(change)
    return lines


def test_a_new_pool_is_its_version_1_and_an_opening_reseed_written_together():
    pool = _create(ceiling="5000.00", reserve_rate="0.05", reading_tolerance="2.00", name="Test link")

    assert (pool.meter, pool.overflow, pool.reserve, pool.last_event_seq) == (Decimal("1000.00"), 0, 0, 1)
    version = pool.versions.get()
    assert (version.version, version.wager, version.rate, version.ceiling, version.reserve_rate) == (
        1, Decimal("5.00"), Decimal("0.20"), Decimal("5000.00"), Decimal("0.05"))
    assert version.reading_tolerance == Decimal("2.00")
    assert version.lines == LINES
    assert version.rules().lines[0].resets_meter
    opening = pool.events.get()
    assert (opening.seq, opening.kind, opening.amount, opening.delta, opening.meter_after) == (
        1, "reseed", Decimal("1000.00"), Decimal("1000.00"), Decimal("1000.00"))
    audit = AuditEvent.objects.get(action="pool.created")
    assert audit.object_id == str(pool.pk) and audit.after["reseed"] == "1000.00"
    assert pool_ledger_check(pool=pool).ok


@pytest.mark.parametrize(
    "change,field,words",
    [
        ({"lines": _with_line(4, category="quads")}, "lines", "unknown hand category 'quads'"),
        ({"lines": _with_line(3, qualifier="community")}, "lines", "unknown qualifier 'community'"),
        ({"lines": _with_line(5, kind="multiple")}, "lines", "unknown pay kind"),
        ({"lines": _with_line(2, amount="100.01")}, "lines", "cannot exceed 100"),
        ({"lines": _with_line(6, amount="-20")}, "lines", "positive"),
        ({"lines": _with_line(6, amount=20.0)}, "lines", "positive decimal"),
        ({"lines": _with_line(6, colour="red")}, "lines", "unknown keys colour"),
        ({"lines": []}, "lines", "at least one pay line"),
        ({"lines": "royal"}, "lines", "at least one pay line"),
        # A straight (any) listed before the full house (any) would always win first.
        ({"lines": LINES[:4] + [LINES[6], LINES[4]]}, "lines", "line 6 (full_house, any) can never pay"),
        ({"wager": "-5.00"}, "wager", "positive"),
        ({"wager": "0"}, "wager", "positive"),
        ({"wager": 5.0}, "wager", "not an amount"),
        ({"wager": "5.001"}, "wager", "minor unit"),
        ({"rate": "-0.10"}, "rate", "between 0 and 1"),
        ({"rate": "1.5"}, "rate", "between 0 and 1"),
        ({"rate": "0.12345"}, "rate", "4 decimals"),
        ({"reseed": "-1.00"}, "reseed", "negative"),
        ({"ceiling": "-1.00"}, "ceiling", "positive"),
        ({"ceiling": "999.99"}, "ceiling", "below the reseed"),
        ({"reserve_rate": "-0.01"}, "reserve_rate", "between 0 and 1"),
        ({"rate": "0.60", "reserve_rate": "0.50"}, "reserve_rate", "cannot exceed the wager"),
        ({"reading_tolerance": "-0.01"}, "reading_tolerance", "negative"),
        ({"code": "no spaces"}, "code", "letters, digits"),
        ({"code": "us-progressive"}, "code", "already exists"),
        ({"currency": "usd"}, "currency", "three capital letters"),
        ({"minor_unit": "0.001"}, "minor_unit", "multiple of 0.01"),
    ],
)
def test_a_pool_the_rules_refuse_is_refused_whole(change, field, words):
    before = _counts()
    with pytest.raises(PoolConfigError) as refused:
        _create(**change)
    assert field in refused.value.errors, refused.value.errors
    assert words in " ".join(refused.value.errors[field])
    assert _counts() == before


def test_every_wrong_field_is_reported_at_once():
    with pytest.raises(PoolConfigError) as refused:
        _create(wager="-1", rate="2", lines=_with_line(1, category="royal"))
    assert set(refused.value.errors) == {"wager", "rate", "lines"}


def test_a_pool_whose_audit_write_fails_leaves_nothing_behind(monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("audit log unavailable")

    monkeypatch.setattr(services, "audit_record", broken)
    before = _counts()
    with pytest.raises(RuntimeError):
        _create()
    assert _counts() == before
    assert not Pool.objects.filter(code="p-test").exists()


def test_a_new_version_is_numbered_next_audited_and_leaves_the_meter_alone():
    pool = _create()
    version = _version(pool, rate="0.25", reseed="2000.00", reading_tolerance="1.00", note="rate up")

    assert (version.version, version.rate, version.reseed, version.reading_tolerance) == (
        2, Decimal("0.25"), Decimal("2000.00"), Decimal("1.00"))
    pool.refresh_from_db()
    assert pool.meter == Decimal("1000.00") and pool.last_event_seq == 1
    audit = AuditEvent.objects.get(action="pool.version_created")
    assert audit.before["version"] == 1 and audit.after["version"] == 2


def test_a_version_cannot_start_before_the_one_in_force():
    pool = _create(effective_from=LONG_AGO + timedelta(days=10))
    before = _counts()
    with pytest.raises(PoolConfigError) as refused:
        _version(pool, effective_from=LONG_AGO)
    assert "effective_from" in refused.value.errors
    assert _counts() == before


def test_a_version_never_reaches_back_over_a_judged_round(table_client, db):
    client = table_client("U01", "us-30k")
    record = us_rounds("U01", "judged", 1)[0]
    assert client.post(ROUNDS, record, format="json").status_code == 201
    pool = Pool.objects.get(code="us-progressive")
    dealt = datetime.fromisoformat(record["dealt_at"])
    before = _counts()

    with pytest.raises(PoolConfigError) as refused:
        _version(pool, effective_from=dealt - timedelta(hours=1))
    assert "already judged" in refused.value.errors["effective_from"][0]
    assert _counts() == before

    assert _version(pool, effective_from=dealt + timedelta(seconds=1)).version == 2


def test_a_version_with_a_ceiling_below_the_meter_is_refused():
    pool = _create(reseed="1000.00")
    with pytest.raises(PoolConfigError) as refused:
        _version(pool, reseed="500.00", ceiling="900.00")
    assert "already holds 1000.00" in refused.value.errors["ceiling"][0]
    assert pool.versions.count() == 1


def test_a_version_needs_an_aware_moment():
    pool = _create()
    with pytest.raises(PoolConfigError) as refused:
        _version(pool, effective_from=datetime(2030, 1, 1))
    assert "effective_from" in refused.value.errors


# ---- adjustments -------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_an_adjustment_without_a_reason_is_refused(reason):
    pool = _create()
    before = _counts()
    with pytest.raises(MeterError) as refused:
        meter_adjust(pool=pool, delta=Decimal("5.00"), actor=SYSTEM, reason=reason)
    assert "reason" in refused.value.errors
    assert _counts() == before


def test_an_adjustment_never_takes_the_meter_below_zero():
    pool = _create(reseed="100.00")
    before = _counts()
    with pytest.raises(MeterError) as refused:
        meter_adjust(pool=pool, delta=Decimal("-100.01"), actor=SYSTEM, reason="count error")
    assert "below zero" in refused.value.errors["delta"][0]
    assert _counts() == before
    pool.refresh_from_db()
    assert pool.meter == Decimal("100.00")

    # Down to exactly zero is allowed.
    meter_adjust(pool=pool, delta=Decimal("-100.00"), actor=SYSTEM, reason="count error")
    pool.refresh_from_db()
    assert pool.meter == 0


@pytest.mark.parametrize("delta", [Decimal("0"), "0.001", "ten"])
def test_an_adjustment_of_nothing_or_of_no_amount_is_refused(delta):
    pool = _create()
    with pytest.raises(MeterError) as refused:
        meter_adjust(pool=pool, delta=delta, actor=SYSTEM, reason="why not")
    assert "delta" in refused.value.errors


def test_an_adjustment_is_a_ledger_event_with_who_and_why(django_user_model):
    person = django_user_model.objects.create_user("sup1", password="a-long-test-password")
    pool = _create()
    event = meter_adjust(
        pool=pool, delta=Decimal("-12.50"), actor=Actor.of_user(person),
        reason="  display fault on table 3  ", request_id="req-1",
    )

    assert (event.seq, event.kind, event.amount, event.delta, event.meter_after) == (
        2, "adjustment", Decimal("12.50"), Decimal("-12.50"), Decimal("987.50"))
    assert (event.actor_id, event.actor_name, event.reason) == (person.pk, "sup1", "display fault on table 3")
    audit = AuditEvent.objects.get(action="meter.adjusted")
    assert audit.actor_id == str(person.pk) and audit.request_id == "req-1"
    assert audit.before == {"meter": "1000.00"} and audit.after["meter"] == "987.50"
    assert pool_ledger_check(pool=pool).ok


# ---- the ceiling, overflow and its transfer -------------------------------------------


def _table_on(pool: Pool, table_client, code: str):
    """A table whose configuration is us-30k's numbers, linked to ``pool``."""
    us = TableConfigVersion.objects.filter(config__name="us-30k").order_by("version").first()
    config = TableConfig.objects.create(name=f"cfg-{pool.code}")
    fields = {
        f.name: getattr(us, f.name)
        for f in TableConfigVersion._meta.concrete_fields
        if f.name not in {"id", "config", "pool", "created_at", "created_by"}
    }
    TableConfigVersion.objects.create(**fields | {"config": config, "pool": pool})
    return table_client(code, config.name)


def test_contributions_above_the_ceiling_overflow_and_a_transfer_brings_them_back(table_client, db):
    pool = _create(reseed="1000.00", ceiling="1001.50")
    client = _table_on(pool, table_client, "C01")
    # The fourth worked round has one lit wager (1.00 to the meter) and a fixed award.
    records = [us_rounds("C01", f"ovf{n}", 1, start=3)[0] for n in range(3)]
    for record in records:
        assert client.post(ROUNDS, record, format="json").status_code == 201
    pool.refresh_from_db()
    assert (pool.meter, pool.overflow) == (Decimal("1001.50"), Decimal("1.50"))
    kinds = list(pool.events.order_by("seq").values_list("kind", "amount"))
    assert ("overflow", Decimal("0.50")) in kinds and ("overflow", Decimal("1.00")) in kinds

    with pytest.raises(MeterError) as refused:
        meter_transfer_overflow(pool=pool, actor=SYSTEM, reason="limit raised")
    assert "nothing to transfer" in refused.value.errors["amount"][0]

    _version(pool, ceiling="1010.00", effective_from=dj_timezone.now() - timedelta(minutes=1))
    with pytest.raises(MeterError):
        meter_transfer_overflow(pool=pool, actor=SYSTEM, reason="limit raised", amount=Decimal("2.00"))
    with pytest.raises(MeterError) as refused:
        meter_transfer_overflow(pool=pool, actor=SYSTEM, reason=" ")
    assert "reason" in refused.value.errors

    event = meter_transfer_overflow(pool=pool, actor=SYSTEM, reason="limit raised")
    pool.refresh_from_db()
    assert (event.kind, event.amount, event.delta, event.overflow_delta) == (
        "overflow_transfer", Decimal("1.50"), Decimal("1.50"), Decimal("-1.50"))
    assert (pool.meter, pool.overflow) == (Decimal("1003.00"), Decimal("0.00"))
    check = pool_ledger_check(pool=pool)
    assert check.ok, check.problem
