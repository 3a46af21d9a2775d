"""The pool PROGRESSIVE.md ships as ``us-progressive``, its meter opened at the reseed.

The numbers are written out here rather than imported: a migration must keep
meaning what it meant when it was written.
"""

from datetime import datetime, timezone
from decimal import Decimal

from django.db import migrations

SHIPPED_FROM = datetime(2000, 1, 1, tzinfo=timezone.utc)
LINES = [
    {"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "100"},
    {"category": "straight_flush", "qualifier": "hole", "kind": "percent", "amount": "10"},
    {"category": "royal_flush", "qualifier": "board", "kind": "fixed", "amount": "1000"},
    {"category": "four_of_a_kind", "qualifier": "any", "kind": "fixed", "amount": "300"},
    {"category": "full_house", "qualifier": "any", "kind": "fixed", "amount": "25"},
    {"category": "flush", "qualifier": "any", "kind": "fixed", "amount": "20"},
    {"category": "straight", "qualifier": "any", "kind": "fixed", "amount": "15"},
]


def ship_pool(apps, schema_editor):
    Pool = apps.get_model("progressive", "Pool")
    PoolVersion = apps.get_model("progressive", "PoolVersion")
    MeterEvent = apps.get_model("progressive", "MeterEvent")
    if Pool.objects.filter(code="us-progressive").exists():
        return
    reseed = Decimal("10000.00")
    pool = Pool.objects.create(
        code="us-progressive", name="UTH Progressive (US)", currency="USD",
        minor_unit=Decimal("0.01"), meter=reseed, last_event_seq=1,
    )
    PoolVersion.objects.create(
        pool=pool, version=1, effective_from=SHIPPED_FROM, wager=Decimal("5.00"),
        rate=Decimal("0.20"), reseed=reseed, lines=LINES, note="shipped (PROGRESSIVE.md)",
    )
    MeterEvent.objects.create(
        pool=pool, seq=1, kind="reseed", amount=reseed, delta=reseed, meter_after=reseed,
        actor_name="system", reason="opening meter at the reseed amount",
    )


class Migration(migrations.Migration):
    dependencies = [("progressive", "0002_initial")]
    operations = [migrations.RunPython(ship_pool, migrations.RunPython.noop)]
