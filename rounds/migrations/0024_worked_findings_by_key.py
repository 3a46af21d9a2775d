"""The findings somebody worked, by key: the nightly check of their states reads only these."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0023_late_rounds'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='finding',
            index=models.Index(condition=models.Q(('state', 'open'), ('state_changed_at__isnull', True), ('state_changed_by_name', ''), ('state_note', ''), _negated=True), fields=['id'], name='finding_worked_idx'),
        ),
    ]
