"""The table configurations PROGRESSIVE.md ships: ``se-50kr`` and ``us-30k``.

Numbers are written out (RULES.md, seed 001 pay tables) rather than imported,
so this migration keeps meaning what it meant when it was written.
"""

from datetime import datetime, timezone
from decimal import Decimal

from django.db import migrations

SHIPPED_FROM = datetime(2000, 1, 1, tzinfo=timezone.utc)
BLIND = {
    "royal_flush": "500", "straight_flush": "50", "four_of_a_kind": "10",
    "full_house": "3", "flush": "1.5", "straight": "1",
}
TRIPS = {
    "royal_flush": "50", "straight_flush": "40", "four_of_a_kind": "30", "full_house": "8",
    "flush": "7", "straight": "4", "three_of_a_kind": "3",
}
SHIPPED = [
    {
        "name": "se-50kr",
        "description": "Seed 001: SEK, 50 kr units, Ante 50-1000, Trips 50-1000",
        "currency": "SEK", "unit": "50", "ante": ("50", "1000"), "trips": ("50", "1000"),
        "aggregate_limit": None, "pool": None,
    },
    {
        "name": "us-30k",
        "description": "USD, unit 5, Ante 5-500, Trips 5-100, aggregate 30,000, us-progressive",
        "currency": "USD", "unit": "5", "ante": ("5", "500"), "trips": ("5", "100"),
        "aggregate_limit": "30000", "pool": "us-progressive",
    },
]


def ship_configs(apps, schema_editor):
    TableConfig = apps.get_model("rounds", "TableConfig")
    TableConfigVersion = apps.get_model("rounds", "TableConfigVersion")
    Pool = apps.get_model("progressive", "Pool")
    for spec in SHIPPED:
        config, created = TableConfig.objects.get_or_create(
            name=spec["name"], defaults={"description": spec["description"]}
        )
        if not created:
            continue
        TableConfigVersion.objects.create(
            config=config, version=1, effective_from=SHIPPED_FROM, currency=spec["currency"],
            minor_unit=Decimal("0.01"), unit=Decimal(spec["unit"]),
            ante_min=Decimal(spec["ante"][0]), ante_max=Decimal(spec["ante"][1]),
            trips_min=Decimal(spec["trips"][0]), trips_max=Decimal(spec["trips"][1]),
            blind_pays=BLIND, trips_pays=TRIPS,
            aggregate_limit=Decimal(spec["aggregate_limit"]) if spec["aggregate_limit"] else None,
            dealer_qualifier="pair", one_hand_per_player=True,
            pool=Pool.objects.get(code=spec["pool"]) if spec["pool"] else None,
            note="shipped (PROGRESSIVE.md)",
        )


class Migration(migrations.Migration):
    dependencies = [("rounds", "0001_initial"), ("progressive", "0003_shipped_pool")]
    operations = [migrations.RunPython(ship_configs, migrations.RunPython.noop)]
