"""Meter adjustments above the configured amount wait for a second supervisor.

On PostgreSQL a request is decided once: after it, nothing of it changes;
before it, only the decision's own columns may (the generic guard of audit
0010 keeps what was asked, the pool, the amount, the reason and who asked);
it is never deleted, and its table is never truncated.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from infra.migration_ops import decided_once


class Migration(migrations.Migration):

    dependencies = [
        ('progressive', '0011_events_follow_by_statement'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        # table_audit_refuse_other_changes and table_audit_refuse_change
        ('audit', '0010_records_protected'),
    ]

    operations = [
        migrations.CreateModel(
            name='MeterAdjustmentRequest',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('delta', models.DecimalField(decimal_places=2, max_digits=20)),
                ('reason', models.TextField()),
                ('requested_by_name', models.CharField(max_length=150)),
                ('requested_at', models.DateTimeField(auto_now_add=True)),
                ('request_id', models.CharField(blank=True, max_length=64)),
                ('state', models.CharField(choices=[('pending', 'waiting for a second supervisor'), ('approved', 'approved and applied'), ('rejected', 'rejected')], default='pending', max_length=10)),
                ('decided_by_name', models.CharField(blank=True, max_length=150)),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('decision_note', models.TextField(blank=True)),
                ('decided_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('event', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='approval', to='progressive.meterevent')),
                ('pool', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='adjustment_requests', to='progressive.pool')),
                ('requested_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-requested_at', '-id'],
                'indexes': [models.Index(fields=['state', 'requested_at'], name='progressive_state_0f25fa_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(('decided_by', models.F('requested_by')), ('state', 'approved'), _negated=True), name='adjustment_approved_by_a_second_person'), models.CheckConstraint(condition=models.Q(models.Q(('decided_at__isnull', True), ('event__isnull', True), ('state', 'pending')), models.Q(('decided_at__isnull', False), ('event__isnull', False), ('state', 'approved')), models.Q(('decided_at__isnull', False), ('event__isnull', True), ('state', 'rejected')), _connector='OR'), name='adjustment_decided_consistently')],
            },
        ),
        decided_once(
            table="progressive_meteradjustmentrequest", function="progressive_adjustment_decided_once",
            what="adjustment request",
            decision=("state", "decided_by_id", "decided_by_name", "decided_at", "decision_note", "event_id"),
        ),
    ]
