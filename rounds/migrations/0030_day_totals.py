"""The days' totals (``rounds.DayTotal``), filled from the rounds already stored."""

import django.db.models.deletion
from decimal import Decimal
from django.db import migrations, models


def totals_filled(apps, schema_editor):
    from django.db.models import Max, Min

    from rounds.services.day_totals import day_totals_rebuild

    models = tuple(apps.get_model("rounds", name) for name in ("Round", "Seat", "Finding", "DayTotal"))
    days = models[0].objects.aggregate(first=Min("gaming_day"), last=Max("gaming_day"))
    if days["first"] is not None:
        day_totals_rebuild(day_from=days["first"], day_to=days["last"], models=models)


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0029_partitions_made_as_the_owner'),
    ]

    operations = [
        migrations.CreateModel(
            name='DayTotal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('gaming_day', models.DateField()),
                ('dealer', models.CharField(blank=True, max_length=64)),
                ('rounds', models.PositiveIntegerField(default=0)),
                ('held', models.PositiveIntegerField(default=0)),
                ('hands', models.PositiveIntegerField(default=0)),
                ('first_at', models.DateTimeField()),
                ('last_at', models.DateTimeField()),
                ('first_pk', models.BigIntegerField()),
                ('last_pk', models.BigIntegerField()),
                ('handle_ante', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('result_ante', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('paid_ante', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('handle_blind', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('result_blind', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('paid_blind', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('handle_play', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('result_play', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('paid_play', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('handle_trips', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('result_trips', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('paid_trips', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('handle_progressive', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('result_progressive', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('paid_progressive', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('mismatches', models.PositiveIntegerField(default=0)),
                ('overpaid', models.PositiveIntegerField(default=0)),
                ('underpaid', models.PositiveIntegerField(default=0)),
                ('overpaid_amount', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('underpaid_amount', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('config_version', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='rounds.tableconfigversion')),
                ('table', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='rounds.table')),
            ],
            options={
                'indexes': [models.Index(fields=['table', 'gaming_day'], name='day_total_table_idx'), models.Index(fields=['dealer', 'gaming_day'], name='day_total_dealer_idx')],
                'constraints': [models.UniqueConstraint(fields=('gaming_day', 'table', 'dealer', 'config_version'), name='day_total_unique')],
            },
        ),
        migrations.RunPython(totals_filled, migrations.RunPython.noop),
    ]
