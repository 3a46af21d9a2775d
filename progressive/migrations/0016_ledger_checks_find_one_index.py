"""The ledger's checks find one index led by the pool: its unique (pool, seq), whatever the statistics.

The index by kind, pool and moment led with the pool, and a planner that knew
nothing of the ledger's size took it for the checks' look-up of an event's
predecessor, reading every event of the pool for each one stored.
"""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('progressive', '0015_ledger_checks_by_index'),
        ('rounds', '0024_worked_findings_by_key'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='meterevent',
            name='progressive_pool_id_c535c4_idx',
        ),
        migrations.AddIndex(
            model_name='meterevent',
            index=models.Index(fields=['kind', 'pool', 'created_at'], name='meter_event_kind_pool_idx'),
        ),
    ]
