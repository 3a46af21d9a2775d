"""Every hour, the report of each ended gaming day that has none of its own (``audit.reconcile_missing``).

The nightly entry (0005) reconciles the day that just ended; a night it
missed (the beat or the broker down, a failed report) was left without a
report. This entry makes good whatever is missing, at the quarter past each
hour, a few days a run. Like 0005 it never overwrites an entry an operator
changed in the admin.
"""

from django.conf import settings
from django.db import migrations

NAME = "Reconciliation of the days without their report"
TASK = "audit.reconcile_missing"


def schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    if PeriodicTask.objects.filter(name=NAME).exists():
        return
    zone = getattr(settings, "GAMING_DAY_TIME_ZONE", None) or settings.TIME_ZONE
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="15", hour="*", day_of_week="*", day_of_month="*", month_of_year="*", timezone=zone,
    )
    PeriodicTask.objects.create(
        name=NAME, task=TASK, crontab=crontab, kwargs="{}", enabled=True,
        description="Start the report of each ended gaming day that has no current report of its own "
        "(a missed night, a failed report), oldest first, a few days a run.",
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0014_seat_score_pays"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
