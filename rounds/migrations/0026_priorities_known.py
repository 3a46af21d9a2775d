"""A finding's priority is one of the four (infra.work.priority_known): the database refuses another number."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0025_finding_cases'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='finding',
            constraint=models.CheckConstraint(condition=models.Q(('priority__in', [1, 2, 3, 4])), name='finding_priority_known'),
        ),
    ]
