"""Findings become cases (their columns: infra.work) and a table gets its link to the video (rounds.video)."""

import django.db.models.deletion
import rounds.video
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0024_worked_findings_by_key'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='finding',
            options={'ordering': ['round', 'id'], 'permissions': [('work_finding', 'Can acknowledge, resolve, dismiss or reopen findings'), ('receive_notices', 'Is mailed what cannot wait: large mismatches, jackpots, suspicions, escalations')]},
        ),
        migrations.RemoveIndex(
            model_name='finding',
            name='finding_worked_idx',
        ),
        migrations.AddField(
            model_name='finding',
            name='assignee',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='finding',
            name='assignee_name',
            field=models.CharField(blank=True, max_length=150),
        ),
        migrations.AddField(
            model_name='finding',
            name='due_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='finding',
            name='escalated_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='finding',
            name='priority',
            field=models.PositiveSmallIntegerField(choices=[(1, 'urgent'), (2, 'high'), (3, 'normal'), (4, 'low')], default=3),
        ),
        migrations.AddField(
            model_name='table',
            name='video_link',
            field=models.CharField(blank=True, help_text='An address with {table}, {seat}, {round}, {dealt_at}, {dealt_at_utc} or {gaming_day} in braces, e.g. https://vms.example/play?camera={table}&at={dealt_at_utc}', max_length=500, validators=[rounds.video.validate_video_link]),
        ),
        migrations.AddIndex(
            model_name='finding',
            index=models.Index(condition=models.Q(('assignee_name', ''), ('due_at__isnull', True), ('escalated_at__isnull', True), ('priority', 3), ('state', 'open'), ('state_changed_at__isnull', True), ('state_changed_by_name', ''), ('state_note', ''), _negated=True), fields=['id'], name='finding_worked_idx'),
        ),
        migrations.AddIndex(
            model_name='finding',
            index=models.Index(condition=models.Q(('assignee__isnull', False)), fields=['assignee', 'due_at'], name='finding_case_assignee_idx'),
        ),
        migrations.AddIndex(
            model_name='finding',
            index=models.Index(condition=models.Q(('due_at__isnull', False)), fields=['due_at'], name='finding_case_due_idx'),
        ),
    ]
