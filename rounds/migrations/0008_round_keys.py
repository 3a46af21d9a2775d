"""Round keys, and seats that carry their round's gaming day: the ground for partitioning (0009).

A table's round id stays unique through ``RoundKey`` (one row per stored
round, filled here from the rounds there are), since a table partitioned by
gaming day can only keep it unique within a day. Seats learn their round's
gaming day so they can be partitioned by it too.
"""

import django.db.models.deletion
from django.db import migrations, models


def round_keys_fill(apps, schema_editor):
    schema_editor.execute(
        "INSERT INTO rounds_roundkey (id, table_id, round_id, gaming_day) "
        "SELECT id, table_id, round_id, gaming_day FROM rounds_round", params=None)


def seat_days_fill(apps, schema_editor):
    schema_editor.execute(
        "UPDATE rounds_seat SET gaming_day = (SELECT r.gaming_day FROM rounds_round r "
        "WHERE r.id = rounds_seat.round_id)", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("progressive", "0006_meter_event_round_key"),
        ("rounds", "0007_void_after_the_fact"),
    ]

    operations = [
        migrations.CreateModel(
            name="RoundKey",
            fields=[
                ("id", models.BigIntegerField(primary_key=True, serialize=False)),
                ("round_id", models.CharField(max_length=64)),
                ("gaming_day", models.DateField()),
                ("table", models.ForeignKey(
                    on_delete=django.db.models.deletion.PROTECT, related_name="+", to="rounds.table")),
            ],
        ),
        migrations.RunPython(round_keys_fill, migrations.RunPython.noop),
        migrations.RemoveConstraint(model_name="round", name="round_unique_per_table"),
        migrations.AddConstraint(
            model_name="roundkey",
            constraint=models.UniqueConstraint(fields=("table", "round_id"), name="round_unique_per_table"),
        ),
        migrations.AddIndex(
            model_name="round",
            index=models.Index(fields=["table", "round_id"], name="rounds_roun_table_i_b3eb20_idx"),
        ),
        migrations.AddField(model_name="seat", name="gaming_day", field=models.DateField(null=True)),
        migrations.RunPython(seat_days_fill, migrations.RunPython.noop),
        migrations.AlterField(model_name="seat", name="gaming_day", field=models.DateField()),
        migrations.RemoveConstraint(model_name="seat", name="seat_unique_per_round"),
        migrations.AddConstraint(
            model_name="seat",
            constraint=models.UniqueConstraint(fields=("round", "gaming_day", "seat"), name="seat_unique_per_round"),
        ),
        migrations.AlterField(
            model_name="finding",
            name="round",
            field=models.ForeignKey(
                db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name="findings",
                to="rounds.round"),
        ),
        migrations.AlterField(
            model_name="seat",
            name="round",
            field=models.ForeignKey(
                db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name="seats",
                to="rounds.round"),
        ),
        migrations.AlterField(
            model_name="submission",
            name="round",
            field=models.ForeignKey(
                blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.PROTECT,
                related_name="submissions", to="rounds.round"),
        ),
    ]
