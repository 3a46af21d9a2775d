"""The findings somebody worked, by key: the nightly check of their states reads only these."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0017_audit_events_by_moment'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='protectionfinding',
            index=models.Index(condition=models.Q(('state', 'open'), ('state_changed_at__isnull', True), ('state_changed_by_name', ''), ('state_note', ''), _negated=True), fields=['id'], name='protection_worked_idx'),
        ),
        migrations.AddIndex(
            model_name='variancefinding',
            index=models.Index(condition=models.Q(('state', 'open'), ('state_changed_at__isnull', True), ('state_changed_by_name', ''), ('state_note', ''), _negated=True), fields=['id'], name='variance_worked_idx'),
        ),
    ]
