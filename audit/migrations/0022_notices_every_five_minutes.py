"""Every five minutes, the notices that are due (``audit.notices_send``).

Notices also run after each round that may need one and after the nightly
protection; this entry tells what those missed (a broker down, a mail server
that refused). Like 0005 it never overwrites an entry an operator changed.
"""

from django.conf import settings
from django.db import migrations

NAME = "Notices of what cannot wait"
TASK = "audit.notices_send"


def schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    if PeriodicTask.objects.filter(name=NAME).exists():
        return
    zone = getattr(settings, "GAMING_DAY_TIME_ZONE", None) or settings.TIME_ZONE
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="*/5", hour="*", day_of_week="*", day_of_month="*", month_of_year="*", timezone=zone,
    )
    PeriodicTask.objects.create(
        name=NAME, task=TASK, crontab=crontab, kwargs="{}", enabled=True,
        description="Mail the supervisors what cannot wait: payout mismatches above the notice amount, "
        "jackpots, new game-protection suspicions; each notice is kept in its finding's trail.",
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0021_finding_cases_and_notices"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
