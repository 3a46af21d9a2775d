"""A report's summary: its figures but each player's and dealer's parts, the months' and years' too,
copied beside them, so that its page and its staleness read a small value instead of decompressing tens
of megabytes. The reports made before are copied here, as ``audit.reconciliation.services`` copies the
figures of each report it finishes from now on (``report_figures.summary_of``)."""

from django.db import migrations, models

# Frozen here as they stood (``report_figures.PER_PERSON``): a migration must not follow the code.
PER_PERSON = ("players", "dealers", "dealer_tables")
PERIODS = ("month_to_date", "year_to_date")


def summary_of(stored):
    summary = {key: value for key, value in stored.items() if key not in PER_PERSON}
    for period in PERIODS:
        if isinstance(summary.get(period), dict):
            summary[period] = {key: value for key, value in summary[period].items() if key not in PER_PERSON}
    return summary


def summaries_in_python(apps):
    Report = apps.get_model("audit", "ReconciliationReport")
    for pk in list(Report.objects.filter(figures__isnull=False).values_list("pk", flat=True)):
        figures = Report.objects.filter(pk=pk).values_list("figures", flat=True).get()
        if isinstance(figures, dict):
            Report.objects.filter(pk=pk).update(summary=summary_of(figures))


def _removed(value: str) -> str:
    return "(" + value + "".join(f" - '{key}'::text" for key in PER_PERSON) + ")"


# The same in one statement on PostgreSQL, its figures never sent to Python (a year of reports).
SUMMARIES_IN_SQL = (
    "UPDATE audit_reconciliationreport SET summary = " + _removed("figures") + "".join(
        f" || CASE WHEN jsonb_typeof(figures -> '{period}') = 'object' "
        f"THEN jsonb_build_object('{period}', {_removed(f'(figures -> {period!r})')}) ELSE '{{}}'::jsonb END"
        for period in PERIODS)
    + " WHERE jsonb_typeof(figures) = 'object'"
)


def copy_summaries(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SUMMARIES_IN_SQL)
    else:
        summaries_in_python(apps)


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0030_report_dealers'),
    ]

    operations = [
        migrations.AddField(
            model_name='reconciliationreport',
            name='summary',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(copy_summaries, migrations.RunPython.noop),
    ]
