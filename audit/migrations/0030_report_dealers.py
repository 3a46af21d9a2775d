"""Each dealer's figures of a finished report, in rows of their own with their places in the two orders
its page shows them in: the page reads the few it shows instead of decoding thousands of dealers. The
reports made before are copied, as ``audit.reconciliation.report_dealers`` copies each report that
finishes from now on."""

from decimal import Decimal

import django.db.models.deletion
from django.db import migrations, models


# Frozen here as they stood (``figures.dealer_order``, ``figures.chart_order``): a migration must not
# follow the code that changes after it. A group of an earlier version may lack a figure: it counts as 0.
def _accuracy(pair):
    dealer, currency, group = pair
    at_stake = Decimal(group.get("overpaid") or 0) + Decimal(group.get("underpaid") or 0)
    return (-at_stake, -int(group.get("mismatches") or 0), dealer, currency)


def _charted(pair):
    dealer, currency, group = pair
    outside = ((group.get("bands") or {}).get("total") or {}).get("outside")
    return (not outside, -Decimal(group.get("handle_total") or 0), dealer, currency)


def copy_dealers(apps, schema_editor):
    Report = apps.get_model("audit", "ReconciliationReport")
    Dealer = apps.get_model("audit", "ReportDealer")
    reports = Report.objects.filter(figures__isnull=False)
    for pk in list(reports.values_list("pk", flat=True)):
        # Only the two parts: a busy day's players are most of the figures.
        dealers, tables = Report.objects.filter(pk=pk).values_list(
            "figures__dealers", "figures__dealer_tables").get()
        dealers, tables = dealers or {}, tables or {}
        pairs = [(dealer, currency, group) for dealer, by_currency in dealers.items()
                 for currency, group in by_currency.items()]
        charted = {(p[0], p[1]): n for n, p in enumerate(sorted(pairs, key=_charted))}
        Dealer.objects.bulk_create([
            Dealer(report_id=pk, dealer=dealer, currency=currency, accuracy_rank=n,
                   chart_rank=charted[dealer, currency], per_1000=group.get("mismatches_per_1000"),
                   tables=tables.get(dealer, []), figures=group)
            for n, (dealer, currency, group) in enumerate(sorted(pairs, key=_accuracy))
        ], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0029_pair_steps'),
    ]

    operations = [
        migrations.CreateModel(
            name='ReportDealer',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('dealer', models.CharField(max_length=64)),
                ('currency', models.CharField(max_length=3)),
                ('accuracy_rank', models.IntegerField()),
                ('chart_rank', models.IntegerField()),
                ('per_1000', models.DecimalField(decimal_places=4, max_digits=24, null=True)),
                ('tables', models.JSONField()),
                ('figures', models.JSONField()),
                ('report', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='dealer_rows', to='audit.reconciliationreport')),
            ],
            options={
                'indexes': [models.Index(fields=['report', 'chart_rank'], name='report_dealer_chart_idx')],
                'constraints': [models.UniqueConstraint(fields=('report', 'accuracy_rank'), name='report_dealer_accuracy_rank'), models.UniqueConstraint(fields=('report', 'dealer', 'currency'), name='report_dealer_once')],
            },
        ),
        migrations.RunPython(copy_dealers, migrations.RunPython.noop),
    ]
