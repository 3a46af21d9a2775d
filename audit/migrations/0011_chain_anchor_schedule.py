"""The chain's daily anchor in django-celery-beat's schedule, editable in the admin.

It runs an hour after the nightly reconciliation (migration 0005: an hour
after the gaming day's cut-off), so the head it writes out lies past the
reconciliation's own events. Changing the time in the admin is kept:
rerunning this migration never overwrites an existing entry.
"""

from django.conf import settings
from django.db import migrations

NAME = "Daily audit chain anchor"
TASK = "audit.anchor_chain"


def schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    if PeriodicTask.objects.filter(name=NAME).exists():
        return
    hour = (int(getattr(settings, "GAMING_DAY_CUTOFF_HOUR", 6)) + 2) % 24
    zone = getattr(settings, "GAMING_DAY_TIME_ZONE", None) or settings.TIME_ZONE
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="0", hour=str(hour), day_of_week="*", day_of_month="*", month_of_year="*",
        timezone=zone,
    )
    PeriodicTask.objects.create(
        name=NAME, task=TASK, crontab=crontab, kwargs="{}", enabled=True,
        description="Verify the audit chain and write its head, signed, outside the database "
        "(AUDIT_ANCHOR_PATH, AUDIT_ANCHOR_URL): what verify_audit --expect-file checks.",
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0010_records_protected"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]
    operations = [migrations.RunPython(schedule, unschedule)]
