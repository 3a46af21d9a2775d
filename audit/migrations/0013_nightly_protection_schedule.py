"""The nightly game protection in django-celery-beat's schedule, editable in the admin.

It scores the gaming day that ended half an hour after the cut-off, in the
casino's time zone: half an hour before the nightly reconciliation
(``0005``), so that the report reads the day's scores (the theoretical win at
actual play); a report that runs before a day is scored says how many of its
hands were. Changing the time in the admin is kept: rerunning this migration
never overwrites an existing entry.
"""

from django.conf import settings
from django.db import migrations

NAME = "Nightly game protection"
TASK = "audit.protect_day"


def schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    if PeriodicTask.objects.filter(name=NAME).exists():
        return
    hour = int(getattr(settings, "GAMING_DAY_CUTOFF_HOUR", 6)) % 24
    zone = getattr(settings, "GAMING_DAY_TIME_ZONE", None) or settings.TIME_ZONE
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="30", hour=str(hour), day_of_week="*", day_of_month="*", month_of_year="*",
        timezone=zone,
    )
    PeriodicTask.objects.create(
        name=NAME, task=TASK, crontab=crontab, enabled=True,
        description="Score every decision of the gaming day that ended and raise game-protection "
        "findings: hole-carding, collusion, sweetheart dealing, pay tables that differ.",
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0012_game_protection"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]
    operations = [migrations.RunPython(schedule, unschedule)]
