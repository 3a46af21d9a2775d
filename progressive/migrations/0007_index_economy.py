"""Fewer indexes for a meter event to fill: none the unique (pool, seq) already gives,
and its actor's only where there is one (a round's contribution has none)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from infra.migration_ops import DropFieldIndex


class Migration(migrations.Migration):
    dependencies = [
        ("progressive", "0006_meter_event_round_key"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        DropFieldIndex(
            model_name="meterevent",
            name="actor",
            field=models.ForeignKey(
                blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT,
                related_name="+", to=settings.AUTH_USER_MODEL,
            ),
        ),
        DropFieldIndex(
            model_name="meterevent",
            name="pool",
            field=models.ForeignKey(
                db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name="events",
                to="progressive.pool",
            ),
        ),
        migrations.AddIndex(
            model_name="meterevent",
            index=models.Index(
                condition=models.Q(("actor__isnull", False)), fields=["actor"],
                name="meter_event_actor_idx",
            ),
        ),
    ]
