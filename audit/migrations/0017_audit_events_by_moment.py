"""The audit events by their moment: a day's count and export without reading the years before it."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0016_reports_heal_themselves'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['at'], name='audit_event_at_idx'),
        ),
    ]
