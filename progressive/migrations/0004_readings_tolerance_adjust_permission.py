"""Meter readings, a reading tolerance per pool version, the adjust_meter permission, overflow transfers."""

import django.db.models.deletion
from decimal import Decimal
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('progressive', '0003_shipped_pool'),
        ('rounds', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='pool',
            options={'ordering': ['code'], 'permissions': [('adjust_meter', 'Can adjust a progressive meter (with a reason)')]},
        ),
        migrations.AddField(
            model_name='poolversion',
            name='reading_tolerance',
            field=models.DecimalField(decimal_places=2, default=Decimal('0.00'), max_digits=14),
        ),
        migrations.AlterField(
            model_name='meterevent',
            name='kind',
            field=models.CharField(choices=[('contribution', 'Contribution'), ('overflow', 'Overflow'), ('reserve', 'Reserve'), ('award', 'Award'), ('fixed_award', 'Fixed Award'), ('reseed', 'Reseed'), ('adjustment', 'Adjustment'), ('overflow_transfer', 'Overflow Transfer'), ('reversal', 'Reversal')], max_length=20),
        ),
        migrations.CreateModel(
            name='MeterReading',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('reporter', models.CharField(max_length=150)),
                ('reported_at', models.DateTimeField()),
                ('received_at', models.DateTimeField(auto_now_add=True)),
                ('displayed', models.DecimalField(decimal_places=2, max_digits=14)),
                ('service_meter', models.DecimalField(decimal_places=2, max_digits=14)),
                ('meter_seq', models.PositiveBigIntegerField()),
                ('difference', models.DecimalField(decimal_places=2, max_digits=14)),
                ('tolerance', models.DecimalField(decimal_places=2, max_digits=14)),
                ('flagged', models.BooleanField()),
                ('request_id', models.CharField(blank=True, max_length=64)),
                ('actor', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('pool', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='readings', to='progressive.pool')),
                ('pool_version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='progressive.poolversion')),
                ('table', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='meter_readings', to='rounds.table')),
            ],
            options={
                'ordering': ['-received_at', '-id'],
                'indexes': [models.Index(fields=['pool', 'received_at'], name='progressive_pool_id_7ed5e2_idx'), models.Index(fields=['flagged', 'received_at'], name='progressive_flagged_0f5ae5_idx')],
            },
        ),
    ]
