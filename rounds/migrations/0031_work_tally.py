"""The findings still to work by day, version and code (``rounds.WorkTally``), counted from the
findings already stored."""

import django.db.models.deletion
from decimal import Decimal
from django.db import migrations, models


def tally_filled(apps, schema_editor):
    from rounds.services.work_tally import work_tally_rebuild

    work_tally_rebuild(models=(apps.get_model("rounds", "Finding"), apps.get_model("rounds", "WorkTally")))


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0030_day_totals'),
    ]

    operations = [
        migrations.CreateModel(
            name='WorkTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('gaming_day', models.DateField()),
                ('code', models.CharField(max_length=40)),
                ('mistakes', models.IntegerField(default=0)),
                ('at_stake', models.DecimalField(decimal_places=2, default=Decimal('0'), max_digits=28)),
                ('config_version', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='rounds.tableconfigversion')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('gaming_day', 'config_version', 'code'), name='work_tally_unique')],
            },
        ),
        migrations.RunPython(tally_filled, migrations.RunPython.noop),
    ]
