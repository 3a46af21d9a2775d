"""Less for each stored round to write: no index another one already leads with, and no
foreign key another one already implies.

- round (table), round key (table), seat (round) and kept body (table) lose
  their own index: (table, round_id), round_unique_per_table,
  seat_unique_per_round and (table, received_at) lead with the same column;
- a round's voider and a finding's last mover are indexed only where set;
- a round's table loses its foreign key: the round's key (0009) holds it to
  its RoundKey's table, which has one (see Round.table).

A foreign key that only loses its index keeps its constraint as it is
(``DropFieldIndex``): Django would drop it and add it again, checking every row.

On PostgreSQL rounds and seats are partitioned (0009): dropping an index of
the partitioned table drops its partitions', creating one creates it on each,
and partitions made later take the partitioned table's indexes.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from infra.migration_ops import DropFieldIndex


class Migration(migrations.Migration):
    dependencies = [
        ("rounds", "0010_partitions_ahead_schedule"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        DropFieldIndex(
            model_name="finding",
            name="state_changed_by",
            field=models.ForeignKey(
                blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT,
                related_name="+", to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="round",
            name="table",
            field=models.ForeignKey(
                db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT,
                related_name="rounds", to="rounds.table",
            ),
        ),
        DropFieldIndex(
            model_name="round",
            name="voided_by",
            field=models.ForeignKey(
                blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT,
                related_name="+", to=settings.AUTH_USER_MODEL,
            ),
        ),
        DropFieldIndex(
            model_name="roundkey",
            name="table",
            field=models.ForeignKey(
                db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name="+",
                to="rounds.table",
            ),
        ),
        DropFieldIndex(
            model_name="seat",
            name="round",
            field=models.ForeignKey(
                db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT,
                related_name="seats", to="rounds.round",
            ),
        ),
        DropFieldIndex(
            model_name="submission",
            name="table",
            field=models.ForeignKey(
                db_index=False, on_delete=django.db.models.deletion.PROTECT,
                related_name="submissions", to="rounds.table",
            ),
        ),
        migrations.AddIndex(
            model_name="finding",
            index=models.Index(
                condition=models.Q(("state_changed_by__isnull", False)),
                fields=["state_changed_by"], name="finding_state_changed_by_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="round",
            index=models.Index(
                condition=models.Q(("voided_by__isnull", False)), fields=["voided_by"],
                name="round_voided_by_idx",
            ),
        ),
    ]
