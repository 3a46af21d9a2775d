"""Game protection through the API: its findings, the scored seats, a player's figures and leak test.

The lists' filters are held to rows made for them (``floor``); what the
scoring and the selectors write is held to simulated players posted and
scored as a night would (``test_a_scored_night_reads_as_stored``).
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from urllib.parse import urlencode

import pytest
import yaml
from django.utils import timezone
from rest_framework.test import APIClient

from api.audit.reports import NewestFirst
from api.rounds.views import DealtAtCursor
from audit.models import ProtectionFinding, SeatScore
from audit.protection.selectors import player_figures, player_leak_course
from audit.protection.services import day_protect
from game.protection import players as pl
from game.protection.codes import ProtectionCode
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from rounds.models import Round, Seat
from rounds.services import finding_transition
from tests.game.engine_rules import SE_50KR
from tests.protection.test_day_protect import post_table

from .records import ROUNDS, record, seat, us_record
from .test_schema import COMMITTED

pytestmark = pytest.mark.django_db

FINDINGS = "/api/v1/protection/findings/"
SCORES = "/api/v1/protection/scores/"
PLAYERS = "/api/v1/players/"

HOLE_CARDING = ProtectionCode.SUSPECTED_HOLE_CARDING.value
SWEETHEART = ProtectionCode.SUSPECTED_SWEETHEART_DEALING.value
PAY_TABLE = ProtectionCode.PAY_TABLE_MISMATCH.value


def get(client, path: str, **params):
    return client.get(f"{path}?{urlencode(params)}" if params else path)


def decision(street: str = "preflop", chosen: str = "check", *, telling: bool = False) -> dict:
    """A stored decision: 4x is best from what the player saw; the dealer's first card makes
    checking best when ``telling``."""
    values = {"preflop_4x": 0.25, "preflop_3x": 0.1, "check": 0.05}
    informed_best = "check" if telling else "preflop_4x"
    return {
        "street": street, "chosen": chosen, "best": "preflop_4x", "hand": "high_card",
        "ev_lost": round(values["preflop_4x"] - values[chosen], 6), "values": values,
        "informed": {
            "dealer_first": {"best": informed_best, "values": {"preflop_4x": -0.5, "preflop_3x": -0.4, "check": 0.0},
                             "shares": {"preflop_4x": 0.6, "preflop_3x": 0.0, "check": 0.4}},
        },
        "seen": {"informed": [chosen == informed_best, False], "share": {"preflop_4x": 0.6, "check": 0.4}.get(chosen, 0.0)},
    }


def score(round_: Round, number: int, **fields) -> SeatScore:
    """The seat ``number`` of ``round_`` scored as ``fields`` say (defaults from the stored seat)."""
    stored = Seat.objects.filter(round=round_, seat=number).first()
    row = {
        "round": round_, "gaming_day": round_.gaming_day, "table": round_.table, "dealt_at": round_.dealt_at,
        "seat": number, "player": stored.player if stored else "", "dealer": round_.dealer,
        "companions": [], "currency": round_.config_version.currency,
        "ante": stored.ante if stored else Decimal("100.00"), "decision": stored.decision if stored else "fold",
        "scored": True, "ev_lost": Decimal("0.200000"), "telling": 0, "favourable_errors": 0, "errors": [],
        "decisions": [decision()],
    }
    row.update(fields)
    return SeatScore.objects.create(**row)


def finding(code: str, key: str, **fields) -> ProtectionFinding:
    row = {"code": code, "key": key, "day_from": date(2026, 11, 1), "day_to": date(2026, 11, 29),
           "figure": Decimal("7.5"), "threshold": Decimal("6.907755"), "detail": f"{code} {key}",
           "evidence": {"knowledge": "dealer_first", "steps": [{"round": 1, "figure": 7.5}]}}
    row.update(fields)
    return ProtectionFinding.objects.create(**row)


@pytest.fixture
def floor(table_client):
    """Stored rounds, their seats scored, and findings; what each filter must pick out:

    rounds  S01/R-1  D1  29 Nov 21:00 (+01), gaming day 29 Nov: P-0001 seat 1, P-0002 seat 2
            S01/R-2  D2  30 Nov 21:00, gaming day 30 Nov:        P-0001 seat 1
            S02/R-1  D1  30 Nov 22:00, gaming day 30 Nov:        P-0003 seat 1
            U01/U-1  D1  29 Nov 21:14, gaming day 29 Nov (USD):  P-0001 seat 1
    scores  every seat; P-0002's and S02/R-1's are telling; P-0003's has a dealer error for him
    findings hole carding P-0001 (day_to 29 Nov, acknowledged), hole carding P-0003 with D1
            (30 Nov), sweetheart D1 for P-0003 (30 Nov), pay table S02 (28 Nov)
    """
    s01, s02, u01 = table_client("S01", "se-50kr"), table_client("S02", "se-50kr"), table_client("U01", "us-30k")
    posts = [
        (s01, record("R-1", dealer="D1", dealt_at="2026-11-29T21:00:00+01:00", seats=[
            seat(1, ["5c", "6d"], player="P-0001"), seat(2, ["Ac", "Qd"], player="P-0002", decision="preflop_4x"),
        ])),
        (s01, record("R-2", dealer="D2", dealt_at="2026-11-30T21:00:00+01:00",
                     seats=[seat(1, ["5c", "6d"], player="P-0001", decision="river_1x")])),
        (s02, record("R-1", table="S02", dealer="D1", dealt_at="2026-11-30T22:00:00+01:00",
                     seats=[seat(1, ["8c", "3d"], player="P-0003")])),
        (u01, us_record("U-1", dealer="D1", seats=1)),  # seat 1 is P-0001
    ]
    for client, data in posts:
        assert client.post(ROUNDS, data, format="json").status_code == 201, data["round"]
    rounds = {(r.table.code, r.round_id): r for r in Round.objects.select_related("table", "config_version")}
    error = {"type": "loss_not_taken", "direction": "for_player", "bet": "blind", "amount_for_player": "100.00"}
    scores = {
        "S01/R-1/1": score(rounds["S01", "R-1"], 1, companions=["P-0002"]),
        "S01/R-1/2": score(rounds["S01", "R-1"], 2, companions=["P-0001"], telling=1, ev_lost=Decimal("0"),
                           decisions=[decision(chosen="preflop_4x", telling=True)]),
        "S01/R-2/1": score(rounds["S01", "R-2"], 1),
        "S02/R-1/1": score(rounds["S02", "R-1"], 1, telling=2, favourable_errors=1, errors=[error],
                           decisions=[decision(telling=True), decision("flop", "check", telling=True)]),
        "U01/U-1/1": score(rounds["U01", "U-1"], 1),
    }
    findings = {
        "carding": finding(HOLE_CARDING, "player=P-0001 knowledge=dealer_first crossed_at=1/1", player="P-0001"),
        "carding_d1": finding(HOLE_CARDING, "player=P-0003 dealer=D1 knowledge=dealer_first crossed_at=3/1",
                              player="P-0003", dealer="D1", day_to=date(2026, 11, 30)),
        "sweetheart": finding(SWEETHEART, "dealer=D1 player=P-0003 day=2026-11-30", player="P-0003", dealer="D1",
                              day_to=date(2026, 11, 30), evidence={"p_value": "1.000e-05", "errors": [error]}),
        "pay_table": finding(PAY_TABLE, "table=S02 line=straight", table="S02", currency="SEK",
                             day_to=date(2026, 11, 28)),
    }
    return {"rounds": rounds, "scores": scores, "findings": findings}


@pytest.fixture
def reader(auditor_client):
    return auditor_client


# ---- findings --------------------------------------------------------------------------------


def finding_names(floor, response) -> list[str]:
    assert response.status_code == 200, response.json()
    by_id = {f.pk: name for name, f in floor["findings"].items()}
    return [by_id[f["id"]] for f in response.json()["results"]]


NEWEST_FIRST = ["pay_table", "sweetheart", "carding_d1", "carding"]
FINDING_FILTERS = [
    ({}, NEWEST_FIRST),
    ({"code": HOLE_CARDING}, ["carding_d1", "carding"]),
    ({"code": PAY_TABLE}, ["pay_table"]),
    ({"code": ProtectionCode.SUSPECTED_COLLUSION.value}, []),
    ({"state": "acknowledged"}, ["carding"]),
    ({"state": "open"}, ["pay_table", "sweetheart", "carding_d1"]),
    ({"state": "dismissed"}, []),
    ({"player": "P-0003"}, ["sweetheart", "carding_d1"]),
    ({"player": "P-9999"}, []),
    ({"dealer": "D1"}, ["sweetheart", "carding_d1"]),
    ({"dealer": "D2"}, []),
    ({"table": "S02"}, ["pay_table"]),
    ({"table": "S01"}, []),
    ({"day_from": "2026-11-30"}, ["sweetheart", "carding_d1"]),
    ({"day_to": "2026-11-29"}, ["pay_table", "carding"]),
    ({"day_from": "2026-11-29", "day_to": "2026-11-29"}, ["carding"]),
    ({"day_from": "2026-12-01"}, []),
    ({"code": HOLE_CARDING, "dealer": "D1", "state": "open"}, ["carding_d1"]),
]


@pytest.fixture
def worked(floor, auditor):
    finding_transition(finding_ids=[floor["findings"]["carding"].pk], to_state="acknowledged", user=auditor,
                       note="surveillance is watching", model=ProtectionFinding)
    return floor


@pytest.mark.parametrize("params,expected", FINDING_FILTERS, ids=[urlencode(p) or "all" for p, _ in FINDING_FILTERS])
def test_findings_filter(reader, worked, params, expected):
    assert finding_names(worked, get(reader, FINDINGS, **params)) == expected


def test_a_finding_in_the_list_and_in_full(reader, worked, auditor):
    [listed] = get(reader, FINDINGS, state="acknowledged").json()["results"]
    carding = ProtectionFinding.objects.get(pk=worked["findings"]["carding"].pk)
    assert listed == {
        "id": carding.pk, "code": HOLE_CARDING, "player": "P-0001", "dealer": None, "companion": None,
        "table": None, "currency": None, "day_from": "2026-11-01", "day_to": "2026-11-29",
        "figure": "7.500000", "threshold": "6.907755", "detail": carding.detail, "state": "acknowledged",
        "state_changed_at": timezone.localtime(carding.state_changed_at).isoformat(),
        "state_changed_by": auditor.username, "state_note": "surveillance is watching",
        "created_at": timezone.localtime(carding.created_at).isoformat(),
    }
    detail = reader.get(f"{FINDINGS}{carding.pk}/")
    assert detail.status_code == 200
    assert detail.json() == {**listed, "key": carding.key, "evidence": carding.evidence}
    sweetheart = reader.get(f"{FINDINGS}{worked['findings']['sweetheart'].pk}/").json()
    assert sweetheart["evidence"]["errors"][0]["amount_for_player"] == "100.00"
    assert sweetheart["state"] == "open" and sweetheart["state_changed_by"] is None


def test_an_unknown_finding_is_404_in_the_error_shape(reader, floor):
    response = reader.get(f"{FINDINGS}{max(f.pk for f in floor['findings'].values()) + 1000}/")
    assert response.status_code == 404
    assert {"code", "message", "request_id"} <= set(response.json())


def test_findings_page_by_cursor(reader, floor, monkeypatch):
    monkeypatch.setattr(NewestFirst, "page_size", 1)
    seen, url = [], f"{FINDINGS}?dealer=D1"
    while url:
        page = reader.get(url)
        seen += finding_names(floor, page)
        url = page.json()["next"]
    assert seen == ["sweetheart", "carding_d1"]


# ---- scored seats ----------------------------------------------------------------------------


def score_names(floor, response) -> list[str]:
    assert response.status_code == 200, response.json()
    by_id = {s.pk: name for name, s in floor["scores"].items()}
    return [by_id[s["id"]] for s in response.json()["results"]]


DEALT_NEWEST_FIRST = ["S02/R-1/1", "S01/R-2/1", "U01/U-1/1", "S01/R-1/2", "S01/R-1/1"]
SCORE_FILTERS = [
    ({}, DEALT_NEWEST_FIRST),
    ({"player": "P-0001"}, ["S01/R-2/1", "U01/U-1/1", "S01/R-1/1"]),
    ({"player": "P-9999"}, []),
    ({"dealer": "D1"}, ["S02/R-1/1", "U01/U-1/1", "S01/R-1/2", "S01/R-1/1"]),
    ({"dealer": "D9"}, []),
    ({"table": "S01"}, ["S01/R-2/1", "S01/R-1/2", "S01/R-1/1"]),
    ({"table": "X99"}, []),
    ({"gaming_day": "2026-11-29"}, ["U01/U-1/1", "S01/R-1/2", "S01/R-1/1"]),
    ({"gaming_day": "2026-11-28"}, []),
    ({"day_from": "2026-11-30"}, ["S02/R-1/1", "S01/R-2/1"]),
    ({"day_to": "2026-11-29"}, ["U01/U-1/1", "S01/R-1/2", "S01/R-1/1"]),
    ({"day_from": "2026-11-29", "day_to": "2026-11-29", "table": "S01"}, ["S01/R-1/2", "S01/R-1/1"]),
    ({"day_from": "2026-12-01"}, []),
    ({"telling": "true"}, ["S02/R-1/1", "S01/R-1/2"]),
    ({"telling": "false"}, ["S01/R-2/1", "U01/U-1/1", "S01/R-1/1"]),
    ({"telling": "true", "player": "P-0001"}, []),
]


@pytest.mark.parametrize("params,expected", SCORE_FILTERS, ids=[urlencode(p) or "all" for p, _ in SCORE_FILTERS])
def test_scores_filter(reader, floor, params, expected):
    assert score_names(floor, get(reader, SCORES, **params)) == expected


def test_a_scored_seat_names_its_round_as_the_other_apis_do(reader, floor):
    [item] = get(reader, SCORES, table="S02").json()["results"]
    round_ = floor["rounds"]["S02", "R-1"]
    stored = floor["scores"]["S02/R-1/1"]
    assert item["round"] == {"id": round_.pk, "table": "S02", "round": "R-1",
                             "dealt_at": timezone.localtime(round_.dealt_at).isoformat()}
    assert reader.get(f"{ROUNDS}{item['round']['id']}/").json()["round"] == "R-1"
    assert {key: item[key] for key in ("gaming_day", "seat", "player", "dealer", "currency", "ante", "decision")} == {
        "gaming_day": "2026-11-30", "seat": 1, "player": "P-0003", "dealer": "D1", "currency": "SEK",
        "ante": "100.00", "decision": "fold",
    }
    assert (item["scored"], item["ev_lost"], item["telling"], item["favourable_errors"]) == (True, "0.200000", 2, 1)
    assert item["errors"] == stored.errors
    assert item["decisions"] == stored.decisions
    assert item["decisions"][0]["informed"]["dealer_first"]["best"] == "check"
    usd = get(reader, SCORES, table="U01").json()["results"][0]
    assert (usd["currency"], usd["ante"]) == ("USD", "25.00")


def test_scores_page_by_cursor_with_their_filter(reader, floor, monkeypatch):
    monkeypatch.setattr(DealtAtCursor, "page_size", 2)
    seen, url = [], f"{SCORES}?dealer=D1"
    while url:
        page = reader.get(url)
        assert len(page.json()["results"]) <= 2
        seen += score_names(floor, page)
        url = page.json()["next"]
    assert seen == ["S02/R-1/1", "U01/U-1/1", "S01/R-1/2", "S01/R-1/1"]


# ---- bad input -------------------------------------------------------------------------------

BAD_LIST_FILTERS = [
    (FINDINGS, {"code": "cheating"}, {"code"}),
    (FINDINGS, {"state": "closed"}, {"state"}),
    (FINDINGS, {"day_from": "2026-11-31"}, {"day_from"}),
    (FINDINGS, {"day_to": "yesterday"}, {"day_to"}),
    (FINDINGS, {"day_from": "2026-11-30", "day_to": "2026-11-29"}, {"day_to"}),
    (FINDINGS, {"player": "P-\x00"}, {"player"}),
    (SCORES, {"telling": "maybe"}, {"telling"}),
    (SCORES, {"gaming_day": "2026-02-30"}, {"gaming_day"}),
    (SCORES, {"day_from": "2026-11-30", "day_to": "2026-11-29"}, {"day_to"}),
    (SCORES, {"day_to": "2026-11-29T00:00"}, {"day_to"}),
    (SCORES, {"dealer": "D\x00"}, {"dealer"}),
]


@pytest.mark.parametrize("path,params,fields", BAD_LIST_FILTERS,
                         ids=[f"{path.split('/')[-2]}-{urlencode(p)}" for path, p, _ in BAD_LIST_FILTERS])
def test_a_bad_filter_is_400_naming_it(reader, floor, path, params, fields):
    response = get(reader, path, **params)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert set(response.json()["errors"]) == fields


BAD_DAYS = [
    ("", {"day_from": "2026-13-01"}, {"day_from"}),
    ("", {"day_to": "tomorrow"}, {"day_to"}),
    ("", {"day_from": "2026-11-30", "day_to": "2026-11-29"}, {"day_to"}),
    ("leak-test/", {"day_to": "29.11.2026"}, {"day_to"}),
]


@pytest.mark.parametrize("tail,params,fields", BAD_DAYS, ids=[f"{t or 'figures'}-{urlencode(p)}" for t, p, _ in BAD_DAYS])
def test_a_players_bad_days_are_400_naming_them(reader, floor, tail, params, fields):
    response = get(reader, f"{PLAYERS}P-0001/{tail}", **params)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert set(response.json()["errors"]) == fields


@pytest.mark.parametrize("player", ["P-9999", "P-%00", "x" * 65], ids=["unknown", "nul", "too-long"])
@pytest.mark.parametrize("tail", ["", "leak-test/"], ids=["figures", "leak-test"])
def test_a_player_without_seats_is_404(reader, floor, player, tail):
    response = reader.get(f"{PLAYERS}{player}/{tail}")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


# ---- a player --------------------------------------------------------------------------------


def test_a_players_figures_per_currency_never_added_together(reader, floor):
    response = reader.get(f"{PLAYERS}P-0001/")
    assert response.status_code == 200
    body = response.json()
    assert (body["player"], body["day_from"], body["day_to"]) == ("P-0001", None, None)
    by_currency = {f["currency"]: f for f in body["figures"]}
    assert list(by_currency) == ["SEK", "USD"]
    # Ante and Blind of 100 twice, and a river bet of 100: the records posted.
    assert (by_currency["SEK"]["hands"], by_currency["SEK"]["scored_hands"]) == (2, 2)
    assert by_currency["SEK"]["handle"] == "500.00" and by_currency["SEK"]["win"] == "500.00"
    assert by_currency["USD"]["handle"] == "50.00" and by_currency["USD"]["hands"] == 1
    for figures in player_figures(player="P-0001"):
        answered = by_currency[figures.currency]
        for name in ("handle", "win", "theoretical_optimal", "theoretical_actual", "skill"):
            assert Decimal(answered[name]) == getattr(figures, name), (figures.currency, name)
            assert isinstance(answered[name], str)
    # Six places of Antes per hand: the scores' 0.2 lost each.
    assert by_currency["SEK"]["skill"] == "0.200000"


def test_a_players_figures_over_days(reader, floor):
    late = get(reader, f"{PLAYERS}P-0001/", day_from="2026-11-30").json()
    assert late["day_from"] == "2026-11-30"
    assert [(f["currency"], f["hands"], f["handle"]) for f in late["figures"]] == [("SEK", 1, "300.00")]
    early = get(reader, f"{PLAYERS}P-0001/", day_from="2026-11-29", day_to="2026-11-29").json()
    assert [(f["currency"], f["hands"]) for f in early["figures"]] == [("SEK", 1), ("USD", 1)]
    # A player who played, but not in the days asked, is known: no figures there, no 404.
    none = get(reader, f"{PLAYERS}P-0003/", day_to="2026-11-29")
    assert none.status_code == 200 and none.json()["figures"] == []


def test_a_players_leak_test_is_the_selectors_course(reader, floor):
    response = get(reader, f"{PLAYERS}P-0003/leak-test/")
    assert response.status_code == 200
    body = response.json()
    assert body["player"] == "P-0003" and body["day_to"] is None and 0 < body["alpha"] < 1
    course = player_leak_course(player="P-0003")
    assert [(t["code"], t["knowledge"], t["dealer"], t["companion"]) for t in body["tests"]] == [
        (c.code, c.knowledge, c.dealer, c.companion) for c in course
    ]
    for test, known in zip(body["tests"], course):
        assert test["threshold"] == known.threshold > 0 and test["verdict"] == known.verdict
        assert [(p["round"], p["seat"], p["figure"], p["chose_informed"], p["share"]) for p in test["points"]] == [
            (p.round, p.seat, p.figure, p.chose_informed, p.share) for p in known.points
        ]
        side = known.companion_side
        assert test["companion_side"] == (None if side is None else {
            "steps": side.steps, "informed": side.informed, "expected": side.expected})
        assert (side is None) == (test["companion"] is None)
    first = next(t for t in body["tests"] if t["knowledge"] == "dealer_card" and t["dealer"] is None)
    assert first["points"], "P-0003's decisions with a dealer card's verdict run the hole-carding test"
    # Two decisions are far too few to say anything of him.
    assert body["verdict"] == first["verdict"] == "not enough decisions to judge"
    before = get(reader, f"{PLAYERS}P-0003/leak-test/", day_to="2026-11-29").json()
    assert before["day_to"] == "2026-11-29"
    assert all(t["points"] == [] for t in before["tests"])


# ---- who may read ----------------------------------------------------------------------------


def paths(floor) -> list[str]:
    return [FINDINGS, f"{FINDINGS}{floor['findings']['carding'].pk}/", SCORES, f"{PLAYERS}P-0001/",
            f"{PLAYERS}P-0001/leak-test/"]


PATH_IDS = ["findings", "finding", "scores", "player", "leak-test"]


@pytest.mark.parametrize("which", range(5), ids=PATH_IDS)
def test_a_table_key_is_refused(table_client, floor, which):
    response = table_client("S03", "se-50kr").get(paths(floor)[which])
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"


@pytest.mark.parametrize("which", range(5), ids=PATH_IDS)
def test_anonymous_is_refused(floor, which):
    response = APIClient().get(paths(floor)[which])
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.parametrize("which", range(5), ids=PATH_IDS)
def test_staff_without_a_role_is_refused(staff, floor, which):
    assert staff(None).get(paths(floor)[which]).status_code == 403


@pytest.mark.parametrize("which", range(5), ids=PATH_IDS)
def test_an_auditor_reads_with_the_role(staff, floor, which):
    assert staff("auditor").get(paths(floor)[which]).status_code == 200


def test_reading_findings_does_not_open_the_seats(django_user_model, floor):
    from django.contrib.auth.models import Permission

    reader = django_user_model.objects.create_user("finding-reader", password="a-long-test-password")
    reader.user_permissions.add(Permission.objects.get(codename="view_protectionfinding"))
    client = APIClient()
    client.force_authenticate(reader)
    assert client.get(FINDINGS).status_code == 200
    for path in (SCORES, f"{PLAYERS}P-0001/", f"{PLAYERS}P-0001/leak-test/"):
        assert client.get(path).status_code == 403, path


# ---- queries ---------------------------------------------------------------------------------

LIST_QUERIES = 2  # the page; and the session's or the permission's look-up at most


def test_the_lists_cost_the_same_for_few_and_many(reader, floor, django_assert_max_num_queries):
    round_ = floor["rounds"]["S01", "R-2"]
    reader.get(FINDINGS)  # the first request loads the auditor's permissions once
    counts = {}

    def listed(size: str) -> None:
        for path in (FINDINGS, SCORES):
            with django_assert_max_num_queries(LIST_QUERIES) as captured:
                response = reader.get(path)
            assert response.status_code == 200
            counts[size, path] = (len(response.json()["results"]), len(captured))

    listed("few")
    for n in range(2, 8):
        score(round_, n, player=f"P-1{n}")
        score(floor["rounds"]["S02", "R-1"], n, player=f"P-2{n}")
        finding(SWEETHEART, f"dealer=D2 player=P-1{n} day=2026-11-30", dealer="D2", player=f"P-1{n}")
        finding(HOLE_CARDING, f"player=P-2{n} knowledge=other_seats crossed_at=1/{n}", player=f"P-2{n}")
    listed("many")
    assert [counts["few", p][0] for p in (FINDINGS, SCORES)] == [4, 5]
    assert [counts["many", p][0] for p in (FINDINGS, SCORES)] == [16, 17]
    assert all(counts["few", p][1] == counts["many", p][1] for p in (FINDINGS, SCORES)), counts


# ---- the schema ------------------------------------------------------------------------------


def test_the_schema_documents_every_endpoint_and_its_parameters():
    documented = yaml.safe_load(COMMITTED.read_text())["paths"]
    expected = {
        "/api/v1/protection/findings/": {"code", "state", "player", "dealer", "table", "day_from", "day_to", "cursor"},
        "/api/v1/protection/findings/{id}/": {"id"},
        "/api/v1/protection/scores/": {"player", "dealer", "table", "gaming_day", "day_from", "day_to", "telling",
                                       "cursor"},
        "/api/v1/players/{player}/": {"player", "day_from", "day_to"},
        "/api/v1/players/{player}/leak-test/": {"player", "day_to"},
    }
    for path, parameters in expected.items():
        operation = documented[path]["get"]
        assert {p["name"] for p in operation["parameters"]} == parameters, path
        assert {"200", "401", "403", "404"} <= set(operation["responses"]), path
    assert documented["/api/v1/players/{player}/"]["get"]["responses"]["400"]


# ---- a night scored --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_scored_night_reads_as_stored(reader, table_client):
    """Simulated players posted as a table posts them and scored as the night does: the API
    answers what the scoring stored and the selectors compute."""
    preflop = shipped_table()
    pays = PayTable.of(SE_50KR)
    players = [pl.WeakPlayer("P-weak", pays, preflop), pl.HoleCarder("P-peeks", pays, preflop, share=0.5)]
    start, dealt = post_table(table_client("S01", "se-50kr"), players, 40, seed=16)
    day = timezone.localtime(start).date()
    day_protect(day=day)

    items, url = [], f"{SCORES}?player=P-peeks"
    while url:
        page = reader.get(url)
        items += page.json()["results"]
        url = page.json()["next"]
    stored = {s.pk: s for s in SeatScore.objects.filter(player="P-peeks")}
    assert len(items) == len(stored) == len(dealt)
    assert [i["round"]["dealt_at"] for i in items] == sorted((i["round"]["dealt_at"] for i in items), reverse=True)
    sent = dict(Round.objects.values_list("pk", "round_id"))
    for item in items:
        score_ = stored[item["id"]]
        assert item["decisions"] == score_.decisions and item["ev_lost"] == f"{score_.ev_lost:.6f}"
        assert item["round"]["round"] == sent[score_.round_id] and item["companions"] == ["P-weak"]
    telling = get(reader, SCORES, player="P-peeks", telling="true").json()["results"]
    assert telling and all(i["telling"] > 0 for i in telling)

    [weak] = reader.get(f"{PLAYERS}P-weak/").json()["figures"]
    [figures] = player_figures(player="P-weak")
    assert (weak["currency"], weak["hands"], weak["scored_hands"]) == ("SEK", 40, 40)
    assert Decimal(weak["theoretical_actual"]) == figures.theoretical_actual > figures.theoretical_optimal
    assert Decimal(weak["win"]) == figures.win

    tests = reader.get(f"{PLAYERS}P-peeks/leak-test/").json()["tests"]
    expected = player_leak_course(player="P-peeks")
    assert any(t["knowledge"] == "dealer_card" and t["points"] for t in tests)
    for test, known in zip(tests, expected, strict=True):
        assert [p["figure"] for p in test["points"]] == [p.figure for p in known.points]
    assert get(reader, f"{PLAYERS}P-peeks/", day_from=(day + timedelta(days=1)).isoformat()).json()["figures"] == []
