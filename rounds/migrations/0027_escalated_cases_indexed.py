"""The escalated cases by a partial index of their own (infra.work.case_indexes): the tonight page counts them."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0026_priorities_known'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='finding',
            index=models.Index(condition=models.Q(('escalated_at__isnull', False)), fields=['escalated_at'], name='finding_case_escalated_idx'),
        ),
    ]
