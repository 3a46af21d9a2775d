"""Reports that heal themselves: a part's lease (its heartbeat and the reason it failed), a report's
failures and when it is tried again, when its tasks were last sent; and the watch, every minute.

The watch (``audit.reconcile_watch``) sends again what the workers dropped; like
0005 and 0015, the entry is never overwritten once an operator changed it.
"""

from django.db import migrations, models
from django.db.models import F

NAME = "Reconciliation watch"
TASK = "audit.reconcile_watch"


def schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    # A part running when this version was installed keeps its claim for one lease.
    apps.get_model("audit", "ReconciliationPart").objects.filter(status="running").update(
        heartbeat_at=F("started_at"))
    if PeriodicTask.objects.filter(name=NAME).exists():
        return
    every, _ = IntervalSchedule.objects.get_or_create(every=1, period="minutes")
    PeriodicTask.objects.create(
        name=NAME, task=TASK, interval=every, kwargs="{}", enabled=True,
        description="Send again what the workers dropped: a report part whose holder died, parts or a "
        "merge whose messages were lost, a failed report whose retry time came.",
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0015_missing_days_every_hour'),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.AddField(
            model_name='reconciliationpart',
            name='error',
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name='reconciliationpart',
            name='heartbeat_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='reconciliationreport',
            name='driven_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='reconciliationreport',
            name='failures',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='reconciliationreport',
            name='retry_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='reconciliationreport',
            index=models.Index(condition=models.Q(('status', 'failed')), fields=['retry_at'], name='report_retry_idx'),
        ),
        migrations.RunPython(schedule, unschedule),
    ]
