"""The rounds list: each round's actionable findings and its money, handle, settled, paid."""

from __future__ import annotations

from decimal import Decimal

import pytest

from game.vocabulary import BETS
from rounds.models import Finding, Round
from tests import examples

pytestmark = pytest.mark.django_db
ROUNDS = "/admin/rounds/round/"


@pytest.fixture
def dealt(table_client):
    for name, code, config in examples.EXAMPLE_FILES:
        client = table_client(code, config)
        for example in examples.load(name):
            client.post("/api/v1/rounds/", example["record"], format="json")
    return Round.objects.prefetch_related("seats", "findings").select_related("table", "config_version")


def _row(content: str, round_: Round) -> str:
    start = content.index(f"/admin/rounds/round/{round_.pk}/change/")
    return content[start:content.index("</tr>", start)]


def _money(amount: Decimal, currency: str) -> str:
    return f"{amount:,.2f} {currency}"


def test_each_row_holds_the_rounds_money(dealt, staff):
    client = staff("auditor")
    content = client.get(ROUNDS, {"status": "flagged"}).content.decode()
    mispaid = [r for r in dealt if r.status == "flagged" and any(s.paid_reported for s in r.seats.all())]
    assert mispaid
    for round_ in mispaid:
        seats = list(round_.seats.all())
        currency = round_.config_version.currency
        wagered = sum(getattr(s, bet) for s in seats for bet in BETS
                      if not round_.void and (bet != "progressive" or s.progressive_lit))
        settled = sum(s.settled()[bet] for s in seats for bet in BETS)
        paid = sum(s.paid()[bet] for s in seats if s.paid_reported for bet in BETS)
        settled_reported = sum(s.settled()[bet] for s in seats if s.paid_reported for bet in BETS)
        row = _row(content, round_)
        for amount in (wagered, settled, paid, paid - settled_reported):
            assert _money(amount, currency) in row, (round_, amount)


def test_the_handle_column_adds_up_to_the_handle_void_rounds_and_unlit_wagers_left_out(dealt, staff):
    """Every round of a day on one page: its handle column adds up to the tables' handle as the
    reports count it (tests/admin/money.py, seat by seat), though void rounds and unlit Progressive
    wagers are among them."""
    from django.db.models import Sum

    from rounds.models import Seat
    from tests.admin.money import seat_money

    day = dealt.filter(void=True).values_list("gaming_day", flat=True).first()
    assert day is not None
    client = staff("auditor")
    page = client.get(ROUNDS, {"gaming_day": day.isoformat()}).context["cl"]
    assert page.result_count == len(page.result_list)
    by_currency: dict[str, Decimal] = {}
    for round_ in page.result_list:
        currency = round_.config_version.currency
        by_currency[currency] = by_currency.get(currency, Decimal(0)) + round_.money.handle
    expected: dict[str, Decimal] = {}
    for (_, currency), (_, _, handle, _, _) in seat_money(day).items():
        expected[currency] = expected.get(currency, Decimal(0)) + handle
    assert by_currency == expected
    everything = Seat.objects.filter(round__gaming_day=day).aggregate(
        n=Sum("ante") + Sum("blind") + Sum("play") + Sum("trips") + Sum("progressive"))["n"]
    assert sum(expected.values()) < everything  # the void rounds' wagers were there to leave out
    # The CSV's handle column, a row a seat, adds up the same.
    import csv
    import io

    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(client.user)
    answer = api.get("/api/v1/exports/rounds.csv", {"first_day": day.isoformat(), "last_day": day.isoformat()})
    rows = list(csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())))
    exported: dict[str, Decimal] = {}
    for row in rows:
        exported[row["currency"]] = exported.get(row["currency"], Decimal(0)) + Decimal(row["handle"])
        if row["void"] == "True":
            assert Decimal(row["handle"]) == 0
    assert exported == expected


def test_a_round_counts_its_actionable_findings_only(dealt, staff):
    client = staff("auditor")
    awarded = next(r for r in dealt if any(f.informational for f in r.findings.all())
                   and not any(not f.informational for f in r.findings.all()))
    page = client.get(ROUNDS, {"table__id__exact": awarded.table_id})
    listed = {r.pk: r for r in page.context["cl"].result_list}
    assert listed[awarded.pk].finding_total == 0 and awarded.status == "verified"
    flagged = next(r for r in dealt if r.table_id == awarded.table_id and r.status == "flagged")
    assert listed[flagged.pk].finding_total == Finding.objects.filter(round=flagged, informational=False).count() > 0


def test_a_long_list_is_counted_to_a_cap_and_says_so(dealt, staff, monkeypatch):
    client = staff("auditor")
    stored = dealt.count()
    exact = client.get(ROUNDS)
    assert exact.context["cl"].result_count == stored and not exact.context["cl"].paginator.capped
    assert f"{stored} rounds" in exact.content.decode()
    # The cap below the rows there are: counted to it, the rest left to a narrower filter or the export.
    monkeypatch.setattr("infra.admin_paging.COUNT_CAP", stored - 2)
    monkeypatch.setattr("rounds.admin.rounds.RoundAdmin.list_per_page", 3)
    capped = client.get(ROUNDS)
    cl = capped.context["cl"]
    assert cl.paginator.capped and cl.result_count == stored - 2
    assert cl.paginator.num_pages == -(-(stored - 2) // 3)
    assert f"more than {stored - 2} rounds" in capped.content.decode()
    # A filter that matches fewer is counted exactly again.
    flagged = dealt.filter(status="flagged").count()
    assert flagged < stored - 2
    narrower = client.get(ROUNDS, {"status__exact": "flagged"}).context["cl"]
    assert narrower.result_count == flagged and not narrower.paginator.capped
