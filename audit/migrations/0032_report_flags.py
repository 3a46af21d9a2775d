"""Each flag of a finished report (a group outside its band), in a row of its own in the report's order:
its page reads the few it shows instead of decoding a busy day's thousand and more. The reports made
before are copied, as ``audit.reconciliation.report_rows`` copies each report that finishes from now
on, and their summaries leave the flags out (``report_figures.summary_of``), the months' and years' too."""

import django.db.models.deletion
from django.db import migrations, models

PERIODS = ("month_to_date", "year_to_date")  # frozen here as they stood (``report_figures.TO_DATES``)


def _text(value, length: int) -> str:
    return value[:length] if isinstance(value, str) else ""


def flags_copied(Flag, report_id, flags) -> None:
    """One report's ``flags`` as rows, in their order; a flag in no shape the page reads (made by an
    earlier version, or edited) keeps its place, and the page says it cannot be read."""
    Flag.objects.bulk_create([
        Flag(report_id=report_id, rank=n, figures=flag,
             **({"scope": _text(flag.get("scope"), 16), "key": _text(flag.get("key"), 64),
                 "currency": _text(flag.get("currency"), 3)} if isinstance(flag, dict) else {}))
        for n, flag in enumerate(flags)
    ], batch_size=500)


def summary_without_flags(summary):
    kept = {key: value for key, value in summary.items() if key != "flags"}
    for period in PERIODS:
        if isinstance(kept.get(period), dict):
            kept[period] = {key: value for key, value in kept[period].items() if key != "flags"}
    return kept


# The same in one statement on PostgreSQL, the summaries never sent to Python (a year of reports).
SUMMARIES_IN_SQL = (
    "UPDATE audit_reconciliationreport SET summary = (summary - 'flags')" + "".join(
        f" || CASE WHEN jsonb_typeof(summary -> '{period}') = 'object' "
        f"THEN jsonb_build_object('{period}', (summary -> '{period}') - 'flags') ELSE '{{}}'::jsonb END"
        for period in PERIODS)
    + " WHERE jsonb_typeof(summary) = 'object'"
)


def copy_flags(apps, schema_editor):
    Report = apps.get_model("audit", "ReconciliationReport")
    Flag = apps.get_model("audit", "ReportFlag")
    for pk in list(Report.objects.filter(figures__has_key="flags").values_list("pk", flat=True)):
        # Only the flags: a busy day's players are most of the figures.
        flags = Report.objects.filter(pk=pk).values_list("figures__flags", flat=True).get()
        if isinstance(flags, list):
            flags_copied(Flag, pk, flags)
    summaries_without_flags(apps, schema_editor)


def summaries_without_flags(apps, schema_editor):
    Report = apps.get_model("audit", "ReconciliationReport")
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SUMMARIES_IN_SQL)
        return
    for pk in list(Report.objects.filter(summary__isnull=False).values_list("pk", flat=True)):
        summary = Report.objects.filter(pk=pk).values_list("summary", flat=True).get()
        if isinstance(summary, dict):
            Report.objects.filter(pk=pk).update(summary=summary_without_flags(summary))


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0031_report_summary'),
    ]

    operations = [
        migrations.CreateModel(
            name='ReportFlag',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('rank', models.IntegerField()),
                ('scope', models.CharField(max_length=16)),
                ('key', models.CharField(max_length=64)),
                ('currency', models.CharField(blank=True, max_length=3)),
                ('figures', models.JSONField()),
                ('report', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='flag_rows', to='audit.reconciliationreport')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('report', 'rank'), name='report_flag_rank')],
            },
        ),
        migrations.RunPython(copy_flags, migrations.RunPython.noop),
    ]
