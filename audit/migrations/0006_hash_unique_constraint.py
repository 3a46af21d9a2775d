"""An event's hash stays unique through a constraint rather than the field's unique=True.

On PostgreSQL unique=True on a text column also makes a varchar_pattern_ops
index, which serves only LIKE 'x%': a hash is looked up whole, so every event
paid for an index nothing read. The constraint comes first so that the hash is
never without one. The append-only trigger (0003) is on the table and stays.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("audit", "0005_nightly_reconciliation_schedule")]

    operations = [
        migrations.AddConstraint(
            model_name="auditevent",
            constraint=models.UniqueConstraint(fields=("hash",), name="audit_event_hash_unique"),
        ),
        migrations.AlterField(
            model_name="auditevent", name="hash", field=models.CharField(max_length=64)
        ),
    ]
