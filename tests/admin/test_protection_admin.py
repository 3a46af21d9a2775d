"""Game protection in the admin: the queue, a finding's evidence, the players' pages, the tonight tile.

Two kinds of data: findings written as rows (the queue's states and moves, the
sweetheart and pay-table evidence), and a table's evening of simulated players
posted through the API and protected as the nightly job does (the leak
evidence, a player's figures and his test's course), checked against the
selectors that computed them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from audit.models import ProtectionFinding, SeatScore
from audit.protection.selectors import player_figures, player_leak_course
from audit.protection.services import day_protect
from game.protection import players as pl
from game.protection.codes import ProtectionCode
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from infra.money_display import money
from tests.examples import last_gaming_day_evening
from tests.game.engine_rules import SE_50KR
from tests.protection.wire import body_of
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
QUEUE = "/admin/audit/protectionfinding/"
PLAYERS = "/admin/audit/protectionfinding/players/"
SVG = "{http://www.w3.org/2000/svg}"
HOLE_CARDING = ProtectionCode.SUSPECTED_HOLE_CARDING.value
COLLUSION = ProtectionCode.SUSPECTED_COLLUSION.value
SWEETHEART = ProtectionCode.SUSPECTED_SWEETHEART_DEALING.value
PAY_TABLE = ProtectionCode.PAY_TABLE_MISMATCH.value


def protected_evening(table_client, rounds: int = 120) -> date:
    """An optimal player, a weak one and a hole-carder at S01 for an evening, then the day protected."""
    pays, table = PayTable.of(SE_50KR), shipped_table()
    players = [pl.OptimalPlayer("P-optimal", pays, table), pl.WeakPlayer("P-weak", pays, table),
               pl.HoleCarder("P-peeks", pays, table, share=1.0)]
    client = table_client("S01", "se-50kr")
    start = last_gaming_day_evening(timezone.now())
    for dealt in pl.deal_rounds(players, rounds, seed=16):
        response = client.post("/api/v1/rounds/", body_of(dealt, table="S01", start=start, rules=SE_50KR),
                               format="json")
        assert response.status_code == 201, response.content
    day = timezone.localtime(start).date()
    day_protect(day=day)
    return day


@pytest.fixture
def evening(table_client) -> date:
    return protected_evening(table_client)


def _finding(code: str, key: str, *, day: date, **fields) -> ProtectionFinding:
    return ProtectionFinding.objects.create(
        code=code, key=key, day_from=day, day_to=day, figure=Decimal("9.5"), threshold=Decimal("6.907755"),
        detail=f"{code} of {key}", **fields)


@pytest.fixture
def rows() -> dict[str, ProtectionFinding]:
    """One finding of each kind of evidence, in each state but dismissed, oldest first."""
    day = date(2026, 11, 30)
    return {
        "leak": _finding(HOLE_CARDING, "player=P-1 knowledge=dealer_first crossed_at=1/1", day=day, player="P-1",
                         evidence={"knowledge": "dealer_first", "telling": 0, "chose_informed": 0, "share": 0.5,
                                   "steps": []}),
        "sweetheart": _finding(
            SWEETHEART, "dealer=D-7 player=P-2 day=2026-11-30", day=day, player="P-2", dealer="D-7",
            state="acknowledged",
            evidence={"pair_seat_rounds": 40, "pair_favourable": 6, "dealer_seat_rounds": 900,
                      "dealer_favourable": 9, "p_value": "1.200e-05",
                      "errors": [{"currency": "SEK", "type": "blind_wrong_line", "direction": "for_player",
                                  "count": 6, "amount_for_player": "12500.00"}]}),
        "pay_table": _finding(
            PAY_TABLE, "table=S09 bet=blind line=flush day=2026-11-30", day=day, table="S09", currency="SEK",
            state="resolved",
            evidence={"bet": "blind", "line": "flush", "configured": "3/2", "observed": "1",
                      "observations": 12, "fit_observed": 11, "fit_configured": 1,
                      "examples": [["1000.00", "1000.00"], ["250.00", "250.00"]]}),
    }


def _ids(response) -> list[int]:
    return [f.pk for f in response.context["cl"].result_list]


# ---- the queue ---------------------------------------------------------------------------------


def test_the_queue_opens_on_the_open_findings_and_filters_by_state_and_code(rows, staff):
    client = staff("auditor")
    page = client.get(QUEUE)
    assert page.status_code == 200
    assert _ids(page) == [rows["leak"].pk]
    assert sorted(_ids(client.get(QUEUE, {"state": "unresolved"}))) == sorted(
        [rows["leak"].pk, rows["sweetheart"].pk])
    assert _ids(client.get(QUEUE, {"state": "resolved"})) == [rows["pay_table"].pk]
    # Newest first, every state.
    assert _ids(client.get(QUEUE, {"state": "all"})) == [
        rows["pay_table"].pk, rows["sweetheart"].pk, rows["leak"].pk]
    assert _ids(client.get(QUEUE, {"state": "all", "code": SWEETHEART})) == [rows["sweetheart"].pk]
    assert _ids(client.get(QUEUE, {"state": "all", "q": "S09"})) == [rows["pay_table"].pk]
    assert _ids(client.get(QUEUE, {"state": "all", "q": "D-7"})) == [rows["sweetheart"].pk]
    assert client.get(QUEUE, {"state": "nonsense"}).status_code == 302  # the admin's ?e=1
    content = page.content.decode()
    assert "Acknowledge selected findings" in content and f'href="{PLAYERS}"' in content
    assert reverse("admin:audit_protectionfinding_player", args=["P-1"]) in content
    for link in set(re.findall(r'href="(\?[^"]+)"', content)):
        assert client.get(QUEUE + link.replace("&amp;", "&")).status_code == 200, link


def test_a_finding_is_worked_from_the_queue_through_the_service(rows, staff):
    client = staff("auditor")
    leak = rows["leak"]
    client.post(QUEUE, {"action": "acknowledge", "_selected_action": [leak.pk]})
    leak.refresh_from_db()
    assert leak.state == "acknowledged" and leak.state_changed_by_name == client.user.username
    assert AuditEvent.objects.filter(action="protection_finding.acknowledged", object_id=str(leak.pk)).exists()

    # The list the move is made from is the one the user sees: acknowledged is among the unresolved.
    unresolved = f"{QUEUE}?state=unresolved"
    asked = client.post(unresolved, {"action": "resolve", "_selected_action": [leak.pk]})
    assert asked.status_code == 200 and "Note: why" in asked.content.decode() and "player P-1" in asked.content.decode()
    leak.refresh_from_db()
    assert leak.state == "acknowledged"  # asking moved nothing
    client.post(unresolved, {"action": "resolve", "_selected_action": [leak.pk], "apply": "1",
                        "note": "a shuffle master's fault, not the player"})
    leak.refresh_from_db()
    assert (leak.state, leak.state_note) == ("resolved", "a shuffle master's fault, not the player")
    # A move its state does not allow is refused, and nothing moves.
    client.post(f"{QUEUE}?state=all", {"action": "acknowledge", "_selected_action": [leak.pk, rows["sweetheart"].pk]})
    assert ProtectionFinding.objects.get(pk=rows["sweetheart"].pk).state == "acknowledged"
    assert ProtectionFinding.objects.get(pk=leak.pk).state == "resolved"


def test_the_pages_are_refused_to_staff_without_the_role(rows, staff):
    client = staff(None)
    for path in (QUEUE, f"{QUEUE}{rows['leak'].pk}/change/", PLAYERS, f"{PLAYERS}P-1/"):
        assert client.get(path).status_code == 403, path


def test_reading_findings_without_the_scored_seats_opens_no_player_page(rows, django_user_model):
    user = django_user_model.objects.create_user("reader", password="pw-for-tests-only", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_protectionfinding"))
    client = Client()
    client.force_login(user)
    assert client.get(QUEUE).status_code == 200
    assert "Acknowledge selected findings" not in client.get(QUEUE).content.decode()
    assert client.get(f"{PLAYERS}P-1/").status_code == 403


# ---- a finding's evidence ----------------------------------------------------------------------


def test_a_collusion_finding_shows_each_side_s_informed_choices(staff):
    # A pair is read both ways: the page says what the player chose about his companion's cards and,
    # under it, what the companion chose about his.
    tests = [{"player": "P-a", "knowledge": "companion:P-b", "dealer": None, "companion": "P-b", "steps": 140,
              "chose_informed": 88.0, "expected_informed": 70.12, "figure": 10.5, "peak": 10.5,
              "threshold": 10.3, "crossed": None, "parts": {"own": {"steps": 140, "figure": 7.1},
                                                             "pair": {"steps": 260, "figure": 11.2}},
              "partner": {"steps": 131, "chose_informed": 85.0, "expected_informed": 66.4}}]
    finding = _finding(ProtectionCode.SUSPECTED_COLLUSION.value, "pair=P-a + P-b", day=date(2026, 11, 30),
                       player="P-a", companion="P-b",
                       evidence={"knowledge": "companion:P-b", "alpha": 0.001, "tests": tests, "steps": []})
    page = staff("auditor").get(f"{QUEUE}{finding.pk}/change/").content.decode()
    shown = re.search(r'<table id="leak-tests">(.*?)</table>', page, re.S).group(1)
    assert "88.0 / 70.12" in shown
    assert re.search(r"P-b about his cards: 85\.0 / 66\.4 of 131", re.sub(r"<[^>]+>", "", shown))


def test_sweetheart_and_pay_table_evidence_read_as_counts_and_money(rows, staff):
    client = staff("auditor")
    page = client.get(f"{QUEUE}{rows['sweetheart'].pk}/change/").content.decode()
    assert 'data-kind="sweetheart"' in page
    assert "6 of 40 seat-rounds" in page and "9 of 900" in page and "p = 1.200e-05" in page
    assert "blind wrong line" in page and money(Decimal("12500.00"), "SEK") in page
    assert reverse("admin:audit_protectionfinding_player", args=["P-2"]) in page

    page = client.get(f"{QUEUE}{rows['pay_table'].pk}/change/").content.decode()
    assert 'data-kind="pay_table"' in page
    assert "3/2:1, fitting 1 of 12 wins" in page and "1:1, fitting 11 of 12 wins" in page
    assert money(Decimal("1000.00"), "SEK") in page and money(Decimal("250.00"), "SEK") in page


@pytest.mark.slow
def test_a_hole_carding_finding_shows_its_telling_decisions_each_with_its_round(evening, staff):
    client = staff("auditor")
    finding = ProtectionFinding.objects.get(code=HOLE_CARDING, player="P-peeks")
    page = client.get(f"{QUEUE}{finding.pk}/change/").content.decode()
    steps = finding.evidence["steps"]
    rows = re.findall(r'<tr class="step[^"]*" data-round="(\d+)" data-figure="([^"]+)">(.*?)</tr>', page, re.S)
    assert [int(pk) for pk, _, _ in rows] == [step["round"] for step in steps]
    for (_, figure, cells), step in zip(rows, steps):
        assert reverse("admin:rounds_round_change", args=[step["round"]]) in cells
        assert float(figure) == step["figure"]
        assert f"<td>{step['informed']}</td>" in cells and f"<td>{step['best']}</td>" in cells
    informed = sum(step["chose_informed"] for step in steps)
    assert page.count('class="step informed"') == informed
    assert "one of the dealer&#x27;s hole cards" in page or "one of the dealer's hole cards" in page
    assert reverse("admin:audit_protectionfinding_player", args=["P-peeks"]) in page
    # Its tests, the one split by the dealer among them, and each round named by the table's own id.
    tests = re.search(r'<table id="leak-tests">(.*?)</table>', page, re.S).group(1)
    assert len(re.findall(r"<tr>", tests)) == 1 + len(finding.evidence["tests"]) >= 3  # the head and each test
    assert "D-1" in tests and "S01 sim-" in tests
    assert 'id="leak-history"' in page


# ---- the players' pages ------------------------------------------------------------------------


def _cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


@pytest.mark.slow
def test_a_players_page_says_what_each_companion_chose_about_his_cards(evening, staff, monkeypatch):
    import audit.admin_protection as pages
    from audit.protection.selectors import CompanionSide, TestCourse

    courses = player_leak_course(player="P-peeks")
    pair = TestCourse(COLLUSION, "companion:P-b", None, "P-b", 10.3, 10.4, 10.5, "suspected", 41.0, 36.25,
                      [], CompanionSide(57, 49.0, 31.4))
    monkeypatch.setattr(pages, "player_leak_course", lambda **kwargs: [*courses, pair])
    page = staff("auditor").get(f"{PLAYERS}P-peeks/").content.decode()
    listed = re.sub(r"<[^>]+>", " ", re.search(r'<table id="leak-tests">(.*?)</table>', page, re.S).group(1))
    assert "41.0 / 36.3" in listed and "P-b about his cards: 49.0 / 31.4 of 57" in listed


@pytest.mark.slow
def test_a_players_page_shows_the_selectors_figures_his_findings_and_hands(evening, staff):
    client = staff("auditor")
    response = client.get(f"{PLAYERS}P-peeks/")
    assert response.status_code == 200
    page = response.content.decode()
    figures = player_figures(player="P-peeks")
    assert response.context["figures"] == figures and figures
    for f in figures:
        row = re.search(rf'<tr data-currency="{f.currency}">(.*?)</tr>', page, re.S).group(1)
        assert _cells(row) == [
            f.currency, str(f.hands), str(f.scored_hands), money(f.handle, f.currency), money(f.win, f.currency),
            money(f.theoretical_optimal, f.currency), money(f.theoretical_actual, f.currency),
            f"{f.skill:.4f}", str(f.telling)]

    findings = ProtectionFinding.objects.filter(player="P-peeks")
    assert findings.exists()
    # Every test of his, with what it says; the hole-carder's first-card test says suspected.
    tests = re.search(r'<table id="leak-tests">(.*?)</table>', page, re.S).group(1)
    assert "suspected" in tests and 'The leak tests say: <strong>suspected</strong>' in page
    for finding in findings:
        assert reverse("admin:audit_protectionfinding_change", args=[finding.pk]) in page
    hands = SeatScore.objects.filter(player="P-peeks").order_by("-dealt_at")[:50]
    shown = [int(pk) for pk in re.findall(r'<tr data-round="(\d+)">', page)]
    assert shown == [hand.round_id for hand in hands]
    assert reverse("admin:rounds_round_change", args=[hands[0].round_id]) in page


@pytest.mark.slow
def test_the_players_chart_is_an_svg_of_his_tests_course_and_the_threshold(evening, staff):
    page = staff("auditor").get(f"{PLAYERS}P-peeks/").content.decode()
    svg = ET.fromstring(re.search(r'<svg [^>]*class="pygal-chart".*?</svg>', page, re.S).group(0))
    assert "<script" not in page.split('id="leak-chart"')[1].split("</div>")[0]
    course = player_leak_course(player="P-peeks")
    first_card = next(c for c in course if c.knowledge == "dealer_card" and c.dealer is None)
    threshold = first_card.threshold

    def values(series: str) -> list[str]:
        return [d.text for g in svg.iter(f"{SVG}g") if g.get("data-series") == series
                for d in g.iter(f"{SVG}desc") if d.get("class") == "value"]

    first = values("one of the dealer's hole cards")
    assert first == [f"{p.figure:.2f}" for p in first_card.points] and first
    assert first_card.peak >= threshold
    # A level line across the chart, its ends carrying the threshold.
    assert values("threshold") == [f"{threshold:.2f}"] * 2
    line = next(g for g in svg.iter(f"{SVG}g") if g.get("data-series") == "threshold")
    ys = re.findall(r"[ML][\d.]+ ([\d.]+)", line.find(f".//{SVG}path").get("d"))
    assert len(ys) == 2 and len(set(ys)) == 1


@pytest.mark.slow
def test_the_players_list_searches_and_links_each_page(evening, staff):
    client = staff("auditor")
    page = client.get(PLAYERS).content.decode()
    # As many hands each: by id.
    assert re.findall(r'<tr data-player="([^"]+)">', page) == ["P-optimal", "P-peeks", "P-weak"]
    for player in ("P-optimal", "P-peeks", "P-weak"):
        assert reverse("admin:audit_protectionfinding_player", args=[player]) in page
    found = client.get(PLAYERS, {"q": "peek"}).content.decode()
    assert re.findall(r'<tr data-player="([^"]+)">', found) == ["P-peeks"]


def test_the_players_list_is_paged_every_player_on_one_page(evening, staff, monkeypatch):
    monkeypatch.setattr("audit.admin_protection.PLAYERS_SHOWN", 2)
    client = staff("auditor")
    first = client.get(PLAYERS).content.decode()
    assert re.findall(r'<tr data-player="([^"]+)">', first) == ["P-optimal", "P-peeks"]
    assert "3 players, by hands; 1–2 shown." in first and 'href="?p=2"' in first
    second = client.get(PLAYERS, {"p": "2"}).content.decode()
    assert re.findall(r'<tr data-player="([^"]+)">', second) == ["P-weak"] and 'href="?p=1"' in second
    assert "(page 2 of 2)" in second
    searched = client.get(PLAYERS, {"q": "P-", "p": "2"}).content.decode()
    assert 'href="?q=P-&amp;p=1"' in searched


# ---- the tonight page --------------------------------------------------------------------------


def test_tonight_counts_the_findings_to_work_by_code_and_links_the_queue(rows, staff):
    client = staff("auditor")
    page = client.get("/admin/").content.decode()
    section = page.split('<section id="protection">')[1].split("</section>")[0]
    shown = dict(re.findall(r'<tr data-code="([^"]+)" data-count="(\d+)">', section))
    assert shown == {HOLE_CARDING: "1", SWEETHEART: "1"}  # the resolved pay line is not work
    assert f'href="{PLAYERS}"' in section
    for code in shown:
        url = f"{QUEUE}?state=unresolved&amp;code={code}"
        assert url in section
        assert len(client.get(url.replace("&amp;", "&")).context["cl"].result_list) == 1
    ProtectionFinding.objects.filter(pk=rows["leak"].pk).update(state="dismissed")
    section = client.get("/admin/").content.decode().split('<section id="protection">')[1]
    assert f'data-code="{HOLE_CARDING}"' not in section.split("</section>")[0]


def test_tonight_shows_no_protection_to_who_may_not_read_it(rows, django_user_model):
    user = django_user_model.objects.create_user("rounds-only", password="pw-for-tests-only", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_round", "view_finding"]))
    client = Client()
    client.force_login(user)
    page = client.get("/admin/").content.decode()
    assert "Gaming day" in page and 'id="protection"' not in page


def test_the_queue_exports_the_findings_it_lists_and_the_download_is_audited(rows, staff):
    import csv
    import io
    import json

    client = staff("auditor")
    page = client.get(QUEUE, {"state": "unresolved"}).content.decode()
    link = re.search(r'<a href="([^"]*export\.csv[^"]*)" class="csv-export-link">', page).group(1)
    response = client.get(link.replace("&amp;", "&"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    listed = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert sorted(int(r["id"]) for r in listed) == sorted([rows["leak"].pk, rows["sweetheart"].pk])
    sweetheart = next(r for r in listed if r["code"] == SWEETHEART)
    assert (sweetheart["dealer"], sweetheart["player"], sweetheart["state"]) == ("D-7", "P-2", "acknowledged")
    assert json.loads(sweetheart["evidence"])["pair_favourable"] == 6
    event = AuditEvent.objects.filter(action="export.downloaded").get()
    assert event.object_id == "protection-findings"
    assert staff(None).get(link.replace("&amp;", "&")).status_code in (302, 403)


# ---- a finding worked from its own page --------------------------------------------------------


def _move(client, finding, to_state: str, note: str = "", shown: str | None = None):
    return client.post(reverse("admin:audit_protectionfinding_move", args=[finding.pk]), {
        "to_state": to_state, "from_state": finding.state if shown is None else shown, "note": note,
    }, follow=True)


def test_a_finding_is_worked_from_its_own_page_with_a_note_and_audited(rows, staff):
    client = staff("auditor")
    leak = rows["leak"]
    page = client.get(f"{QUEUE}{leak.pk}/change/").content.decode()
    assert 'id="work"' in page and 'name="from_state" value="open"' in page
    assert ">Acknowledge</button>" in page and ">Dismiss</button>" in page

    refused = _move(client, leak, "dismissed")  # no note
    leak.refresh_from_db()
    assert leak.state == "open" and "needs a note" in refused.content.decode()

    answer = _move(client, leak, "dismissed", note="the cards were exposed by a shuffler fault")
    assert answer.redirect_chain[-1][0] == f"{QUEUE}{leak.pk}/change/"
    leak.refresh_from_db()
    assert (leak.state, leak.state_note) == ("dismissed", "the cards were exposed by a shuffler fault")
    assert AuditEvent.objects.filter(action="protection_finding.dismissed", object_id=str(leak.pk)).exists()


def test_a_finding_moved_since_the_page_showed_it_is_not_moved_again(rows, staff):
    client = staff("auditor")
    leak = rows["leak"]
    answer = _move(client, leak, "acknowledged", shown="acknowledged")  # the page showed another state
    leak.refresh_from_db()
    assert leak.state == "open" and "it was not moved" in answer.content.decode()


def test_without_the_work_permission_the_page_offers_no_moves_and_the_move_is_refused(rows, staff):
    client = staff(None)
    client.user.user_permissions.add(Permission.objects.get(codename="view_protectionfinding"))
    leak = rows["leak"]
    assert 'id="work"' not in client.get(f"{QUEUE}{leak.pk}/change/").content.decode()
    assert _move(client, leak, "acknowledged").status_code == 403
    leak.refresh_from_db()
    assert leak.state == "open"
