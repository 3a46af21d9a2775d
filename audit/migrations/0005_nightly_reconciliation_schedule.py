"""The nightly reconciliation in django-celery-beat's schedule, editable in the admin.

It runs an hour after the gaming day's cut-off, in the casino's time zone, and
reconciles the day that just ended. Changing the time in the admin is kept:
rerunning this migration never overwrites an existing entry.
"""

import json

from django.conf import settings
from django.db import migrations

NAME = "Nightly reconciliation"
TASK = "audit.reconcile_day"


def schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    if PeriodicTask.objects.filter(name=NAME).exists():
        return
    hour = (int(getattr(settings, "GAMING_DAY_CUTOFF_HOUR", 6)) + 1) % 24
    zone = getattr(settings, "GAMING_DAY_TIME_ZONE", None) or settings.TIME_ZONE
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="0", hour=str(hour), day_of_week="*", day_of_month="*", month_of_year="*",
        timezone=zone,
    )
    PeriodicTask.objects.create(
        name=NAME, task=TASK, crontab=crontab, kwargs=json.dumps({"requested_by": "beat"}),
        enabled=True,
        description="Reconcile the gaming day that ended: figures per table, dealer, shift, "
        "player and pool, re-verification of every round, the audit chain.",
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0004_reconciliation_reports"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]
    operations = [migrations.RunPython(schedule, unschedule)]
