"""Each dealer's figures of a finished report, in rows of their own with their places in the two orders
its page shows them in: the page reads the few it shows instead of decoding thousands of dealers. The
reports made before are copied, as ``audit.reconciliation.report_rows`` copies each report that
finishes from now on."""

from decimal import Decimal

import django.db.models.deletion
from django.db import migrations, models


# Frozen here as they stood (``figures.dealer_order``, ``figures.chart_order``): a migration must not
# follow the code that changes after it. A group of an earlier version may lack a figure: it counts as 0.
# A figure not a number (figures edited by hand) counts as 0 too: the page says they cannot be read.
def _number(value) -> Decimal:
    try:
        return Decimal(str(value or 0))
    except ArithmeticError:
        return Decimal(0)


def _accuracy(pair):
    dealer, currency, group = pair
    at_stake = _number(group.get("overpaid")) + _number(group.get("underpaid"))
    return (-at_stake, -_number(group.get("mismatches")), dealer, currency)


def _per_1000(value):
    return None if value is None else _number(value).quantize(Decimal("0.0001"))


def _charted(pair):
    dealer, currency, group = pair
    bands = group.get("bands")
    total = bands.get("total") if isinstance(bands, dict) else None
    outside = total.get("outside") if isinstance(total, dict) else None
    return (not outside, -_number(group.get("handle_total")), dealer, currency)


def dealers_copied(Dealer, report_id, dealers, tables) -> None:
    """One report's ``dealers`` (``{dealer: {currency: group}}``) and ``tables`` as rows; a part in no
    shape of that kind (made before figures kept their currency, or edited) is left out: the page
    says such figures cannot be read."""
    pairs = [(dealer, currency, group) for dealer, by_currency in (dealers or {}).items()
             if isinstance(by_currency, dict)
             for currency, group in by_currency.items() if isinstance(group, dict) and len(currency) == 3]
    tables = tables if isinstance(tables, dict) else {}
    charted = {(p[0], p[1]): n for n, p in enumerate(sorted(pairs, key=_charted))}
    Dealer.objects.bulk_create([
        Dealer(report_id=report_id, dealer=dealer, currency=currency, accuracy_rank=n,
               chart_rank=charted[dealer, currency], per_1000=_per_1000(group.get("mismatches_per_1000")),
               tables=tables.get(dealer, []), figures=group)
        for n, (dealer, currency, group) in enumerate(sorted(pairs, key=_accuracy))
    ], batch_size=500)


def copy_dealers(apps, schema_editor):
    Report = apps.get_model("audit", "ReconciliationReport")
    Dealer = apps.get_model("audit", "ReportDealer")
    # Figures made before they kept their currency (no "currencies") have dealers of another shape.
    reports = Report.objects.filter(figures__has_key="currencies")
    for pk in list(reports.values_list("pk", flat=True)):
        # Only the two parts: a busy day's players are most of the figures.
        dealers, tables = Report.objects.filter(pk=pk).values_list(
            "figures__dealers", "figures__dealer_tables").get()
        dealers_copied(Dealer, pk, dealers if isinstance(dealers, dict) else {}, tables)


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
