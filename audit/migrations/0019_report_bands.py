"""Each table's and dealer's total bands of a single-day report, in rows of their own: the charts of a
group's days read them by index instead of decompressing every day's figures. The current reports made
before are copied, as ``audit.reconciliation.bands`` copies each report that completes from now on."""

import django.db.models.deletion
from django.db import migrations, models


# Frozen here as it stood: a migration must not follow the code that changes after it.
PERIODS = ("day", "month_to_date", "year_to_date")
SCOPES = ("tables", "dealers")


def copy_bands(apps, schema_editor):
    Report = apps.get_model("audit", "ReconciliationReport")
    Band = apps.get_model("audit", "ReportBand")
    reports = Report.objects.filter(status="complete", day_from=models.F("day_to"), figures__isnull=False)
    for report in reports.only("pk", "day_from", "figures").iterator(chunk_size=20):
        rows = []
        for period in PERIODS:
            source = report.figures if period == "day" else (report.figures.get(period) or {})
            for scope in SCOPES:
                for key, by_currency in (source.get(scope) or {}).items():
                    for currency, group in by_currency.items():
                        band = (group.get("bands") or {}).get("total")
                        if band is not None:
                            rows.append(Band(report_id=report.pk, day=report.day_from, scope=scope, key=key,
                                             currency=currency, period=period, band=band))
        Band.objects.bulk_create(rows, batch_size=1000)


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0018_worked_findings_by_key'),
    ]

    operations = [
        migrations.CreateModel(
            name='ReportBand',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('day', models.DateField()),
                ('scope', models.CharField(max_length=10)),
                ('key', models.CharField(max_length=64)),
                ('currency', models.CharField(max_length=3)),
                ('period', models.CharField(max_length=16)),
                ('band', models.JSONField()),
                ('report', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='bands', to='audit.reconciliationreport')),
            ],
            options={
                'indexes': [models.Index(fields=['scope', 'key', 'currency', 'day'], name='report_band_series_idx')],
            },
        ),
        migrations.RunPython(copy_bands, migrations.RunPython.noop),
    ]
