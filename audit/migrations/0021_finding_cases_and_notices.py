"""Findings become cases (assignee, priority, due time, escalation) and notices get their marks.

The triggers of 0010 let a finding's row change only in its state's columns;
a case's columns join them (``rounds.services.cases`` changes them, each
change an event in the trail, and ``audit.proof_findings`` holds them to
it). Each kind of finding the notices read starts at the findings stored
now: what was found before there were notices is not mailed.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


STATE = ("state", "state_changed_at", "state_changed_by_id", "state_changed_by_name", "state_note")
CASE = ("assignee_id", "assignee_name", "priority", "due_at", "escalated_at")
GUARDED = ("rounds_finding", "audit_variancefinding")
# The kinds of finding the notices read (audit.notices), each from its own mark.
SOURCES = {"round_findings": ("rounds", "Finding"), "protection_findings": ("audit", "ProtectionFinding")}


def _guard(schema_editor, columns) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    arguments = ", ".join(f"'{column}'" for column in columns)
    for table in GUARDED:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_changes_allowed ON {table}", params=None)
        schema_editor.execute(
            f"CREATE TRIGGER {table}_changes_allowed BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_other_changes({arguments})", params=None)


def cases_guarded(apps, schema_editor):
    _guard(schema_editor, STATE + CASE)


def cases_unguarded(apps, schema_editor):
    _guard(schema_editor, STATE)


def marks_now(apps, schema_editor):
    NoticeMark = apps.get_model("audit", "NoticeMark")
    for source, (app, model) in SOURCES.items():
        last = apps.get_model(app, model).objects.aggregate(last=models.Max("id"))["last"] or 0
        NoticeMark.objects.create(source=source, last_id=last)


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0020_audit_log_to_the_trail'),
        ('rounds', '0025_finding_cases'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='NoticeMark',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('source', models.CharField(max_length=40, unique=True)),
                ('last_id', models.PositiveBigIntegerField(default=0)),
            ],
        ),
        migrations.RemoveIndex(
            model_name='protectionfinding',
            name='protection_worked_idx',
        ),
        migrations.RemoveIndex(
            model_name='variancefinding',
            name='variance_worked_idx',
        ),
        migrations.AddField(
            model_name='protectionfinding',
            name='assignee',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='protectionfinding',
            name='assignee_name',
            field=models.CharField(blank=True, max_length=150),
        ),
        migrations.AddField(
            model_name='protectionfinding',
            name='due_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='protectionfinding',
            name='escalated_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='protectionfinding',
            name='priority',
            field=models.PositiveSmallIntegerField(choices=[(1, 'urgent'), (2, 'high'), (3, 'normal'), (4, 'low')], default=3),
        ),
        migrations.AddField(
            model_name='variancefinding',
            name='assignee',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='variancefinding',
            name='assignee_name',
            field=models.CharField(blank=True, max_length=150),
        ),
        migrations.AddField(
            model_name='variancefinding',
            name='due_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='variancefinding',
            name='escalated_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='variancefinding',
            name='priority',
            field=models.PositiveSmallIntegerField(choices=[(1, 'urgent'), (2, 'high'), (3, 'normal'), (4, 'low')], default=3),
        ),
        migrations.AddIndex(
            model_name='protectionfinding',
            index=models.Index(condition=models.Q(('assignee_name', ''), ('due_at__isnull', True), ('escalated_at__isnull', True), ('priority', 3), ('state', 'open'), ('state_changed_at__isnull', True), ('state_changed_by_name', ''), ('state_note', ''), _negated=True), fields=['id'], name='protection_worked_idx'),
        ),
        migrations.AddIndex(
            model_name='protectionfinding',
            index=models.Index(condition=models.Q(('assignee__isnull', False)), fields=['assignee', 'due_at'], name='protection_case_assignee_idx'),
        ),
        migrations.AddIndex(
            model_name='protectionfinding',
            index=models.Index(condition=models.Q(('due_at__isnull', False)), fields=['due_at'], name='protection_case_due_idx'),
        ),
        migrations.AddIndex(
            model_name='variancefinding',
            index=models.Index(condition=models.Q(('assignee_name', ''), ('due_at__isnull', True), ('escalated_at__isnull', True), ('priority', 3), ('state', 'open'), ('state_changed_at__isnull', True), ('state_changed_by_name', ''), ('state_note', ''), _negated=True), fields=['id'], name='variance_worked_idx'),
        ),
        migrations.AddIndex(
            model_name='variancefinding',
            index=models.Index(condition=models.Q(('assignee__isnull', False)), fields=['assignee', 'due_at'], name='variance_case_assignee_idx'),
        ),
        migrations.AddIndex(
            model_name='variancefinding',
            index=models.Index(condition=models.Q(('due_at__isnull', False)), fields=['due_at'], name='variance_case_due_idx'),
        ),
        migrations.RunPython(cases_guarded, cases_unguarded),
        migrations.RunPython(marks_now, migrations.RunPython.noop),
    ]
