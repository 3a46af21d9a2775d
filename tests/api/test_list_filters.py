"""The rounds list's filters by finding code, player and dealer: each round that matches, once,
and SQL without DISTINCT (which compares every column, the stored record too)."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from api.rounds.filters import RoundFilter
from rounds.models import Finding, Round, Seat
from rounds.selectors import round_list
from rounds.services import ingest_round
from rounds.wire.serializers import RoundRecordSerializer

from .records import FINDINGS, HOLES, ROUNDS, record, seat

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(table_client):
    """Five rounds on two tables; what each filter must pick out:

    S01/R-1  D7  P-7 on two seats, two payouts wrong (two payout_mismatch findings)
    S01/R-2  D7  P-7 on one seat, clean
    S01/R-3  D9  one payout wrong, no P-7
    S01/R-4  D9  clean, no P-7
    S02/R-1  D7  P-7 on one seat, one payout wrong
    """
    s01, s02 = table_client("S01", "se-50kr"), table_client("S02", "se-50kr")

    def seats(*players: str) -> list[dict]:
        return [seat(n + 1, list(HOLES[n]), player=p) for n, p in enumerate(players)]

    twice = record("R-1", dealer="D7", dealt_at="2026-11-29T21:00:00+01:00", seats=seats("P-7", "P-7", "P-1"))
    twice["seats"][0]["paid"]["ante"] = "100"
    twice["seats"][2]["paid"]["blind"] = "100"
    wrong = record("R-3", dealer="D9", dealt_at="2026-11-29T23:00:00+01:00", seats=seats("P-1", "P-2"))
    wrong["seats"][1]["paid"]["ante"] = "100"
    other = record("R-1", table="S02", dealer="D7", dealt_at="2026-11-30T01:00:00+01:00",
                   seats=seats("P-2", "P-7"))
    other["seats"][1]["paid"]["ante"] = "100"
    posts = [
        (s01, twice),
        (s01, record("R-2", dealer="D7", dealt_at="2026-11-29T22:00:00+01:00", seats=seats("P-7"))),
        (s01, wrong),
        (s01, record("R-4", dealer="D9", dealt_at="2026-11-30T00:00:00+01:00", seats=seats("P-3"))),
        (s02, other),
    ]
    for client, data in posts:
        store(client.table, data)
    # The fixture must hold the duplicates the filters are to fold away.
    assert Finding.objects.filter(round__round_id="R-1", round__table__code="S01",
                                  code="payout_mismatch").count() == 2
    assert Seat.objects.filter(round__round_id="R-1", round__table__code="S01", player="P-7").count() == 2


def store(table, data: dict) -> None:
    """Through the one service that writes rounds, as a table's post would."""
    serializer = RoundRecordSerializer(data=data)
    assert serializer.is_valid(), serializer.errors
    ingest_round(table=table, record=serializer.validated_data, body=json.dumps(data).encode())


def names(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return [f"{r['table']}/{r['round']}" for r in response.json()["results"]]


def expected(rounds) -> list[str]:
    """The same question asked of the models without the filter under test, newest first."""
    return [f"{r.table.code}/{r.round_id}" for r in rounds.select_related("table").order_by("-dealt_at", "-id")]


def with_finding(code: str):
    return Round.objects.filter(pk__in=Finding.objects.filter(code=code).values("round"))


def with_player(player: str):
    return Round.objects.filter(pk__in=Seat.objects.filter(player=player).values("round"))


FILTERS = [
    ({"code": "payout_mismatch"}, ["S02/R-1", "S01/R-3", "S01/R-1"], lambda: with_finding("payout_mismatch")),
    ({"code": "player_multiple_hands"}, ["S01/R-1"], lambda: with_finding("player_multiple_hands")),
    ({"code": "duplicate_card"}, [], lambda: with_finding("duplicate_card")),
    ({"player": "P-7"}, ["S02/R-1", "S01/R-2", "S01/R-1"], lambda: with_player("P-7")),
    ({"player": "P-1"}, ["S01/R-3", "S01/R-1"], lambda: with_player("P-1")),
    ({"player": "P-404"}, [], lambda: with_player("P-404")),
    ({"dealer": "D7"}, ["S02/R-1", "S01/R-2", "S01/R-1"], lambda: Round.objects.filter(dealer="D7")),
    ({"dealer": "D9"}, ["S01/R-4", "S01/R-3"], lambda: Round.objects.filter(dealer="D9")),
    ({"player": "P-7", "code": "payout_mismatch"}, ["S02/R-1", "S01/R-1"],
     lambda: with_player("P-7") & with_finding("payout_mismatch")),
    ({"player": "P-7", "dealer": "D7", "table": "S01"}, ["S01/R-2", "S01/R-1"],
     lambda: with_player("P-7").filter(dealer="D7", table__code="S01")),
]
IDS = ["&".join(f"{k}={v}" for k, v in params.items()) for params, _, _ in FILTERS]


@pytest.mark.parametrize("params,listed,asked", FILTERS, ids=IDS)
def test_each_filter_lists_exactly_its_rounds_once(auditor_client, stored, params, listed, asked):
    got = names(auditor_client.get(ROUNDS, params))
    assert got == listed
    assert got == expected(asked())
    assert len(got) == len(set(got))


@pytest.mark.parametrize("params", [p for p, _, _ in FILTERS], ids=IDS)
def test_no_filter_asks_the_database_for_distinct(auditor_client, stored, params):
    with CaptureQueriesContext(connection) as captured:
        assert auditor_client.get(ROUNDS, params).status_code == 200
    statements = [q["sql"] for q in captured.captured_queries]
    assert any('FROM "rounds_round"' in sql for sql in statements)
    assert not [sql for sql in statements if "DISTINCT" in sql.upper()]


@pytest.mark.parametrize("params", [{"code": "payout_mismatch"}, {"player": "P-7"}], ids=["code", "player"])
def test_finding_and_player_filters_are_exists_subqueries(params):
    rounds = RoundFilter(data=params, queryset=round_list()).qs
    sql = str(rounds.query).upper()
    assert "EXISTS" in sql
    assert "DISTINCT" not in sql
    assert "JOIN" not in sql.split("WHERE")[1].split("EXISTS")[0]  # no join beside the subquery


def test_a_round_is_on_one_page_only_when_its_findings_span_pages(auditor_client, stored, monkeypatch):
    from api.rounds.views import DealtAtCursor

    monkeypatch.setattr(DealtAtCursor, "page_size", 1)
    seen, url = [], ROUNDS + "?code=payout_mismatch"
    while url:
        page = auditor_client.get(url).json()
        seen += [f"{r['table']}/{r['round']}" for r in page["results"]]
        url = page["next"]
    assert seen == ["S02/R-1", "S01/R-3", "S01/R-1"]


@pytest.mark.parametrize("dealer", ["D7", "D9", "D404"])
def test_findings_of_a_dealer_are_exactly_theirs(auditor_client, stored, dealer):
    with CaptureQueriesContext(connection) as captured:
        response = auditor_client.get(FINDINGS, {"dealer": dealer})
    assert response.status_code == 200
    got = [f["id"] for f in response.json()["results"]]
    assert got == list(Finding.objects.filter(round__dealer=dealer).order_by("-created_at", "-id")
                       .values_list("id", flat=True))
    assert len(got) == len(set(got))
    assert (len(got) > 0) == (dealer != "D404")
    assert not [q for q in captured.captured_queries if "DISTINCT" in q["sql"].upper()]
