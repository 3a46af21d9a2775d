"""The audit log's models now belong to the trail app (trail 0001); their tables stay as they are."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0019_report_bands"),
        ("trail", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="AuditEvent"),
                migrations.DeleteModel(name="ChainHead"),
            ],
            database_operations=[],
        ),
    ]
