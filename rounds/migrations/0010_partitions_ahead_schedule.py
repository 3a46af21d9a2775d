"""Making the coming gaming days' partitions, daily, in django-celery-beat's schedule.

It runs every day at 04:00 in the casino's time zone, well before the gaming
day's cut-off, so a failure is seen and retried long before the next day
starts (and ingest makes a missing day's partition on the spot anyway). An
entry changed in the admin is kept: rerunning this never overwrites it.
"""

from django.conf import settings
from django.db import migrations

NAME = "Round partitions ahead"
TASK = "rounds.partitions_ahead"


def schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    if PeriodicTask.objects.filter(name=NAME).exists():
        return
    zone = getattr(settings, "GAMING_DAY_TIME_ZONE", None) or settings.TIME_ZONE
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="0", hour="4", day_of_week="*", day_of_month="*", month_of_year="*", timezone=zone,
    )
    PeriodicTask.objects.create(
        name=NAME, task=TASK, crontab=crontab, enabled=True,
        description="Make the partitions of rounds and seats for the coming gaming days "
        "(ROUND_PARTITIONS_AHEAD_DAYS ahead); report days whose rounds lie in the default partition.",
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("rounds", "0009_partition_by_gaming_day"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]
    operations = [migrations.RunPython(schedule, unschedule)]
