"""A meter event's round is referred to through rounds.RoundKey on PostgreSQL (rounds 0009)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("progressive", "0005_append_only_triggers"),
        ("rounds", "0007_void_after_the_fact"),
    ]

    operations = [
        migrations.AlterField(
            model_name="meterevent",
            name="round",
            field=models.ForeignKey(
                blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.PROTECT,
                related_name="meter_events", to="rounds.round",
            ),
        ),
    ]
