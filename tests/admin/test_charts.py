"""The charts (infra.charts, pygal's SVG drawn on the server) on the report's and the pool's pages,
the series they read (audit.selectors) and the report page's numbers and links.

The days are those of tests/reconciliation (tests/reconciliation/days.py), reconciled as the
nightly job does; every value a chart shows is checked against the stored report it came from.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit import selectors
from audit.admin_reports import amount, band_text, count, hold, key_values, rounds_url
from audit.models import ReconciliationReport
from audit.reconciliation.services import report_run
from infra import charts
from progressive.models import MeterEvent, Pool
from progressive.selectors import pool_meter_history
from rounds.models import Finding, Round, Table
from tests.reconciliation.days import DAY, NEXT_DAY, figures_stored, post_day

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def reports() -> tuple[ReconciliationReport, ReconciliationReport]:
    post_day(per_table=12)
    return report_run(day_from=DAY), report_run(day_from=NEXT_DAY)


def chart_svgs(html: str) -> list[ET.Element]:
    """Every pygal chart of a page, as XML (the SVG pygal writes is well formed)."""
    found = re.findall(r'<svg [^>]*class="pygal-chart".*?</svg>', html, flags=re.S)
    return [ET.fromstring(svg) for svg in found]


def values_of(svg: ET.Element, series: str) -> list[str]:
    """The values a series' points carry, as pygal writes them (``<desc class="value">``)."""
    return [
        desc.text for group in svg.iter(f"{SVG}g") if group.get("data-series") == series
        for desc in group.iter(f"{SVG}desc") if desc.get("class") == "value"
    ]


def titled(svgs: list[ET.Element], words: str) -> ET.Element | None:
    return next((svg for svg in svgs if words in (svg.get("aria-label") or "")), None)


# ---- the charts module on plain data -------------------------------------------------------


def test_a_chart_is_inline_svg_with_no_script_nothing_fetched_and_its_values_as_money():
    band = {"actual": "68235.00", "expected": "1200.50", "low_95": "-9000.00", "high_95": "11401.00",
            "outside": "99.7", "z": "3.40"}
    inside = {"actual": "100.00", "expected": "90.00", "low_95": "-900.00", "high_95": "1100.00", "outside": None}
    svg = charts.band_chart(title="S01, SEK", currency="SEK", days=[
        charts.BandDay(date(2026, 11, 26), None), charts.BandDay(date(2026, 11, 27), inside),
        charts.BandDay(date(2026, 11, 28), band, link="/r/1/")])
    assert svg.startswith("<svg ") and "<script" not in svg
    # Nothing the browser would fetch: no stylesheet, font, script or image from elsewhere.
    assert not re.search(r'(href|src)="(https?:)?//', svg) and "@import" not in svg and "url(" not in svg
    tree = ET.fromstring(svg)
    # The axis starts at the first day with a report, each labelled as the gaming day it is.
    assert values_of(tree, charts.BANDED) == ["100.00 SEK", "68,235.00 SEK"]
    assert values_of(tree, "theoretical") == ["90.00 SEK", "1,200.50 SEK"]
    assert values_of(tree, "95 % low") == ["-900.00 SEK", "-9,000.00 SEK"]
    assert values_of(tree, "95 % high") == ["1,100.00 SEK", "11,401.00 SEK"]
    assert "2026-11-27" in svg and "2026-11-26" not in svg and "gaming day" in svg
    # The day outside its band is red, says so on hover and opens its report.
    dots = next(g for series in tree.iter(f"{SVG}g") if series.get("data-series") == charts.BANDED
                for g in series.iter(f"{SVG}g") if g.get("class") == "dots" and g.find(f"{SVG}a") is not None)
    assert "outside the 99.7 % band" in dots.find(f"{SVG}a/{SVG}title").text
    assert "#cc0000" in ET.tostring(dots, encoding="unicode")
    assert dots.find(f"{SVG}a").get("{http://www.w3.org/1999/xlink}href") == "/r/1/"


def test_a_chart_s_day_labels_are_whole_days_each_once_and_none_skipped():
    """A course over five days is labelled by each of its days once, on the casino's clock, never a
    day twice and the next skipped; and a band chart's dates are never cut short."""
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    zone = ZoneInfo("Europe/Stockholm")
    first = datetime(2026, 11, 29, 21, 30, tzinfo=zone)
    steps = [charts.LeakStep(at=first + timedelta(hours=9 * n), figure=0.1 * n, chose_informed=bool(n % 2))
             for n in range(12)]
    svg = charts.leak_course_chart(title="P-1", courses={"first card": steps}, threshold=4.6)
    labels = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")
              if t.text and re.fullmatch(r"\d{4}-\d{2}-\d{2}", t.text)]
    days = sorted({(first + timedelta(hours=9 * n)).date().isoformat() for n in range(12)})
    assert labels == days
    band = {"actual": "1.00", "expected": "0.50", "low_95": "-9.00", "high_95": "9.00", "outside": None}
    narrow = charts.band_chart(title="S01, SEK", currency="SEK", narrow=True, days=[
        charts.BandDay(date(2026, 12, 1) + timedelta(days=n), band) for n in range(30)])
    assert "…" not in narrow and "2026-12-01" in narrow


def test_a_chart_is_drawn_once_for_the_same_data_and_anew_for_other_data_or_another_clock(monkeypatch):
    """A chart kept by its data is read, not drawn, when the same data is shown again; one figure
    changed, or the time zone its moments are labelled in, draws it anew with what changed."""
    from datetime import UTC, datetime
    from unittest import mock

    from django.core.cache import caches
    from django.utils import timezone, translation

    caches[charts.CACHE].clear()
    drawn = mock.Mock(wraps=charts._render)
    monkeypatch.setattr(charts, "_render", drawn)
    band = {"actual": "100.00", "expected": "90.00", "low_95": "-900.00", "high_95": "1100.00", "outside": None}
    days = [charts.BandDay(date(2026, 11, 27), band), charts.BandDay(date(2026, 11, 28), band)]
    first = charts.band_chart(title="S01, SEK", currency="SEK", days=days)
    assert charts.band_chart(title="S01, SEK", currency="SEK", days=list(days)) == first
    assert drawn.call_count == 1
    other = charts.band_chart(title="S01, SEK", currency="SEK", days=[
        days[0], charts.BandDay(date(2026, 11, 28), {**band, "actual": "100.01"})])
    assert drawn.call_count == 2 and values_of(ET.fromstring(other), charts.BANDED) == ["100.00 SEK", "100.01 SEK"]
    at = datetime(2026, 11, 28, 22, 30, tzinfo=UTC)
    points = [charts.MeterPoint(at=at, meter=Decimal("1000")), charts.MeterPoint(at=at.replace(minute=40),
                                                                                meter=Decimal("1010"))]
    with timezone.override("UTC"):
        utc = charts.meter_chart(title="M1", currency="SEK", points=points)
    with timezone.override("Asia/Tokyo"):
        tokyo = charts.meter_chart(title="M1", currency="SEK", points=points)
    assert drawn.call_count == 4 and "22:30" in utc and "07:30" in tokyo and "07:30" not in utc
    with translation.override("sv"):  # the money in Swedish marks: another drawing
        swedish = charts.band_chart(title="S01, SEK", currency="SEK", days=days)
    assert drawn.call_count == 5 and values_of(ET.fromstring(swedish), charts.BANDED) == ["100,00 SEK"] * 2


def test_a_chart_is_drawn_past_a_cache_that_fails(monkeypatch, caplog):
    from django.core.cache import caches

    def broken(*args, **kwargs):
        raise ConnectionError("the cache is down")

    cache = caches[charts.CACHE]
    monkeypatch.setattr(cache, "get", broken)
    monkeypatch.setattr(cache, "set", broken)
    band = {"actual": "5.00", "expected": "1.00", "low_95": "-9.00", "high_95": "9.00", "outside": None}
    svg = charts.band_chart(title="S02, EUR", currency="EUR", days=[
        charts.BandDay(date(2026, 11, 27), band), charts.BandDay(date(2026, 11, 28), band)])
    assert values_of(ET.fromstring(svg), charts.BANDED) == ["5.00 EUR", "5.00 EUR"]
    assert "could not be read" in caplog.text and "could not be written" in caplog.text


def test_money_keeps_every_digit_of_a_decimal():
    big = {"actual": "123456789012.34", "expected": "0.01", "low_95": "-1.00", "high_95": "1.00", "outside": None}
    svg = charts.band_chart(title="big", currency="USD", days=[
        charts.BandDay(date(2026, 11, 27), big), charts.BandDay(date(2026, 11, 28), big)])
    assert values_of(ET.fromstring(svg), charts.BANDED) == ["123,456,789,012.34 USD"] * 2


def test_a_single_day_is_said_in_words_not_drawn_as_a_trend():
    band = {"actual": "68235.00", "expected": "1200.50", "low_95": "-9000.00", "high_95": "11401.00",
            "outside": "99.7"}
    one = charts.band_chart(title="S01, SEK", currency="SEK", days=[
        charts.BandDay(date(2026, 11, 27), None), charts.BandDay(date(2026, 11, 28), band, link="/r/1/")])
    assert "<svg" not in one and 'class="chart-single" data-day="2026-11-28"' in one
    assert f"{charts.BANDED} 68,235.00 SEK" in one and "outside the 99.7 % band" in one and 'href="/r/1/"' in one


def test_the_report_pages_numbers_are_written_one_way():
    assert amount("68235.0", "SEK") == "68,235.00 SEK"
    assert amount("1149600", "USD") == "1,149,600.00 USD"
    assert amount(Decimal("-0.5"), "EUR") == "-0.50 EUR"
    assert amount(None, "SEK") == "–"
    assert count(100000) == "100,000"
    assert ">5.76 %<" in hold("5.7564") and 'title="5.7564 %"' in hold("5.7564")
    band = band_text("-1200", "3400.5", "SEK")
    assert 'class="nowrap"' in band and "-1,200.00 … 3,400.50 SEK" in band
    table = key_values({"engine_version": "e1", "data": {"rounds": 12, "meter_events": [3, 1]}, "ok": True})
    assert "<table" in table and "{" not in table and ">rounds<" in table and "3, 1" in table and ">yes<" in table


# ---- the series the charts read -------------------------------------------------------------


def test_a_groups_bands_over_days_are_read_from_their_rows_never_from_the_figures(reports):
    first, second = reports
    groups = [("S02", "SEK"), ("U01", "USD"), ("S01", "SEK")]
    with CaptureQueriesContext(connection) as queries:
        series = selectors.report_band_series(scope="tables", groups=groups, day_to=NEXT_DAY, days=30)
    # The days' current reports, then the groups' bands: neither reads a report's figures.
    assert len(queries) == 2 and not [q for q in queries if "figures" in q["sql"]]
    assert series.days[-1] == NEXT_DAY and series.days[0] == NEXT_DAY - timedelta(days=29)
    assert series.reports == {DAY: first.pk, NEXT_DAY: second.pk}
    for report in (first, second):
        for key, currency in groups:
            stored = report.figures["tables"].get(key, {}).get(currency)
            day_band = series.bands["day", key, currency].get(report.day_from)
            assert day_band == (stored["bands"]["total"] if stored else None)
            ytd = report.figures["year_to_date"]["tables"].get(key, {}).get(currency)
            assert series.bands["year_to_date", key, currency].get(report.day_from) == (
                ytd["bands"]["total"] if ytd else None)
    # A dealer's id of digits is a key, not an array index.
    dealer = next(iter(second.figures["dealers"]))
    currency = next(iter(second.figures["dealers"][dealer]))
    dealers = selectors.report_band_series(scope="dealers", groups=[(dealer, currency)], day_to=NEXT_DAY)
    assert dealers.bands["day", dealer, currency][NEXT_DAY] == second.figures["dealers"][dealer][currency][
        "bands"]["total"]


def test_mismatches_by_dealer_and_week_count_payout_findings_only(reports):
    with CaptureQueriesContext(connection) as queries:
        every = selectors.dealer_mismatches_by_week(day_to=NEXT_DAY, weeks=8)
    assert len(queries) == 2  # the dealers' totals, then the weeks of those charted
    findings = Finding.objects.filter(code="payout_mismatch", informational=False)
    assert sum(w.mismatches for w in every.weeks) == findings.count() > 0
    assert every.others == 0
    assert every.overpaid == sum(1 for f in findings if f.claimed > f.expected)
    assert every.underpaid == sum(1 for f in findings if f.claimed < f.expected)
    for w in every.weeks:
        mine = findings.filter(round__dealer=w.dealer if w.dealer != "(none)" else "")
        mine = mine.filter(round__gaming_day__gte=w.week, round__gaming_day__lt=w.week + timedelta(days=7))
        assert w.week.weekday() == 0
        assert w.mismatches == mine.count()
        assert w.overpaid == sum(1 for f in mine if f.claimed > f.expected)
        assert w.underpaid == sum(1 for f in mine if f.claimed < f.expected)
    # The informational findings (progressive awards) are not counted.
    assert Finding.objects.filter(informational=True).exists()
    # The top one: the dealer with the most, his weeks alone, the rest counted as others; the
    # over and under still of every dealer's.
    totals = {}
    for w in every.weeks:
        totals[w.dealer] = totals.get(w.dealer, 0) + w.mismatches
    top = selectors.dealer_mismatches_by_week(day_to=NEXT_DAY, weeks=8, top=1)
    assert top.dealers == [min(totals, key=lambda d: (-totals[d], d))]
    assert top.weeks == [w for w in every.weeks if w.dealer in top.dealers]
    assert top.others == len(totals) - 1 and (top.overpaid, top.underpaid) == (every.overpaid, every.underpaid)


def test_a_pools_meter_history_is_sampled_from_its_ledger_in_three_queries(reports):
    pool = Pool.objects.get(code="us-progressive")
    with CaptureQueriesContext(connection) as queries:
        history = pool_meter_history(pool=pool, points=10)
    assert len(queries) == 3
    ledger = {e.seq: e for e in MeterEvent.objects.filter(pool=pool)}
    assert history.last_seq == pool.last_event_seq == max(ledger)
    assert [p.seq for p in history.points] == sorted({p.seq for p in history.points})
    for point in history.points:
        assert point.meter == ledger[point.seq].meter_after and point.at == ledger[point.seq].created_at
    hits = [e for e in ledger.values() if e.kind in ("award", "fixed_award", "reseed")]
    assert [h.seq for h in history.hits] == sorted(e.seq for e in hits)
    for hit in history.hits:
        assert hit.before == ledger[hit.seq].meter_after - ledger[hit.seq].delta


# ---- the pages ----------------------------------------------------------------------------------


def test_the_report_page_charts_each_tables_days_with_the_reports_figures(admin_client, reports):
    first, second = reports
    pages = {r.pk: chart_svgs(admin_client.get(f"/admin/audit/reconciliationreport/{r.pk}/change/").content.decode())
             for r in reports}
    # The day's page: each table's one day so far, said in words (no chart of a single point), its
    # month and year to date, the pool's meter.
    first_page = admin_client.get(f"/admin/audit/reconciliationreport/{first.pk}/change/").content.decode()
    for key in ("S01", "S02", "U01"):
        currency = "USD" if key == "U01" else "SEK"
        assert titled(pages[first.pk], f"table {key}, {currency}: {charts.BANDED}, by day") is None
        band = first.figures["tables"][key][currency]["bands"]["total"]
        single = first_page.split(f"table {key}, {currency}: {charts.BANDED}, by day</strong>", 1)[1].split("</div>", 1)[0]
        assert f"gaming day {first.day_from:%Y-%m-%d}, the only day of these with a report for it" in single
        assert f"{charts.BANDED} {amount(band['actual'], currency)}" in single
        assert f"theoretical {amount(band['expected'], currency)}" in single
    # The day, the month and the year to date of every table, in standard deviations, in one chart.
    standing = titled(pages[first.pk], f"Tables: {charts.BANDED} against theoretical")
    labels = [t.text for t in standing.iter(f"{SVG}text") if t.text in ("S01 SEK", "S02 SEK", "U01 USD")]
    assert sorted(labels) == ["S01 SEK", "S02 SEK", "U01 USD"]
    for period, series in (("day", "the day"), ("month_to_date", "month to date"), ("year_to_date", "year to date")):
        source = first.figures if period == "day" else first.figures[period]
        assert values_of(standing, series) == [
            f"z {Decimal(source['tables'][label.split()[0]][label.split()[1]]['bands']['total']['z']):+}"
            for label in labels]
    assert titled(pages[first.pk], "dealer ") is not None
    assert titled(pages[first.pk], "Payout mismatches by dealer") is not None
    meter = titled(pages[first.pk], "us-progressive: the meter")
    pool = first.figures["pools"]["us-progressive"]
    assert values_of(meter, "meter")[-1] == amount(pool["closing"], "USD")
    assert values_of(meter, "meter")[0] == amount(pool["opening"], "USD")
    # The next day's page: S02 dealt on both days, two points, each from its own day's report.
    svg = titled(pages[second.pk], f"table S02, SEK: {charts.BANDED}, by day")
    assert values_of(svg, charts.BANDED) == [
        amount(r.figures["tables"]["S02"]["SEK"]["bands"]["total"]["actual"], "SEK") for r in reports]
    html = "".join(ET.tostring(s, encoding="unicode") for svgs in pages.values() for s in svgs)
    assert "script" not in html


def test_the_report_page_writes_money_with_its_currency_and_hold_in_percent(admin_client, reports):
    report, _ = reports
    html = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    casino = report.figures["casino"]["SEK"]
    assert amount(casino["handle_total"], "SEK") in html and amount(casino["win_total"], "SEK") in html
    assert hold(casino["hold_percent"]["total"]) in html
    s01 = report.figures["tables"]["S01"]["SEK"]["bands"]["total"]
    assert band_text(s01["low_95"], s01["high_95"], "SEK") in html
    # Inputs and re-verification as key/value tables, not JSON.
    assert "<pre" not in html and '"engine_version"' not in html and ">cutoff hour<" in html


def _listed(client, url: str) -> set[int]:
    response = client.get(url)
    assert response.status_code == 200, url
    changelist = response.context["cl"]
    assert changelist.result_count <= changelist.list_per_page, "a test's list fits one page"
    return {r.pk for r in changelist.result_list}


def test_every_flag_links_to_the_rounds_behind_it(admin_client, reports):
    report, _ = reports
    figures = dict(report.figures)
    # A flag of each scope the rounds list can filter by (the day's own figures may have none).
    player = next(iter(figures["players"]))
    dealer = next(iter(figures["dealers"]))
    flags = [{"scope": scope, "key": key, "currency": "SEK", "bet": "total", "outside": "95", "actual": "10.00",
              "expected": "1.00", "sd": "3.60", "low_95": "-5.00", "high_95": "5.00", "low_997": "-9.80",
              "high_997": "11.80", "z": "2.50", "theoretical": "optimal"}
             for scope, key in (("table", "S02"), ("dealer", dealer), ("player", player))]
    figures_stored(report, {**figures, "flags": flags})
    html = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    flags_html = html[html.index("Flags"):]
    links = {scope: rounds_url(scope, key, day_from=DAY, day_to=DAY,
                               table_ids={"S02": Table.objects.get(code="S02").pk})
             for scope, key in (("table", "S02"), ("dealer", dealer), ("player", player))}
    for scope, url in links.items():
        assert f'href="{url.replace("&", "&amp;")}"' in flags_html, scope
    day = Round.objects.filter(gaming_day=DAY)
    assert _listed(admin_client, links["table"]) == set(day.filter(table__code="S02").values_list("pk", flat=True))
    assert _listed(admin_client, links["dealer"]) == set(day.filter(dealer=dealer).values_list("pk", flat=True))
    assert _listed(admin_client, links["player"]) == set(
        day.filter(seats__player=player).values_list("pk", flat=True)) != set()
    # Rounds dealt with no dealer named: the rounds list's own column, not its dealer filter.
    nobody = rounds_url("dealer", "(none)", day_from=DAY, day_to=DAY, table_ids={})
    assert _listed(admin_client, nobody) == set(day.filter(dealer="").values_list("pk", flat=True))
    # Other days' rounds of the same table stay out (S02 dealt on the next day too).
    assert Round.objects.filter(table__code="S02", gaming_day=NEXT_DAY).exists()


def test_a_long_table_shows_its_first_rows_and_links_to_all_of_them(admin_client, reports, monkeypatch):
    """On a busy day the dealers, flags and tripped tests run to hundreds of rows: the page shows
    the first few of each in its order, says how many more, and shows them all when asked."""
    report, _ = reports
    url = f"/admin/audit/reconciliationreport/{report.pk}/change/"
    # A row for each dealer and currency he dealt in.
    rows = sum(len(by_currency) for by_currency in report.figures["dealers"].values())
    named = sorted(d for d, by_currency in report.figures["dealers"].items() for _ in by_currency if d != "(none)")
    assert rows >= 3

    def listed(html: str) -> list[str]:
        section = html[html.index('id="dealers"'):html.index("field-dealers_chart")]
        return re.findall(r'title="his page">([^<]+)</a>', section)

    page = admin_client.get(url).content.decode()
    whole = listed(page)
    assert sorted(whole) == named and "shown-rows" not in page
    monkeypatch.setattr("audit.admin_reports.SHOWN_ROWS", 2)
    html = admin_client.get(url).content.decode()
    assert listed(html) == whole[:2]
    assert f'The first 2 of {rows}: <a href="?whole=dealers#dealers">and {rows - 2} more</a>' in html
    assert listed(admin_client.get(url + "?whole=dealers").content.decode()) == whole
    flags = admin_client.get(url + "?whole=flags").content.decode()
    assert listed(flags) == whole[:2] and 'href="?whole=dealers,flags#dealers"' in flags
    # Only the page's own tables are named back in its links: anything else asked for is dropped.
    odd = admin_client.get(url + "?whole=flags,%3Cb%3E,x%26y").content.decode()
    assert 'href="?whole=dealers,flags#dealers"' in odd and "x&amp;y" not in odd


def _flag(key: str, z: str) -> dict:
    return {"scope": "dealer", "key": key, "currency": "SEK", "bet": "total", "outside": "95", "actual": "10.00",
            "expected": "1.00", "sd": "3.60", "low_95": "-5.00", "high_95": "5.00", "low_997": "-9.80",
            "high_997": "11.80", "z": z, "theoretical": "optimal"}


def test_the_flags_are_read_from_their_rows_the_first_in_the_report_s_order(admin_client, reports, monkeypatch):
    """A finished report keeps its flags in rows in its order (``ReportFlag``); its page lists the
    first of them from the rows, says how many more, and lists all when asked."""
    from audit.models import ReportFlag

    report, _ = reports
    assert [row.figures for row in ReportFlag.objects.filter(report=report).order_by("rank")] == (
        report.figures["flags"])  # as the report finished
    figures_stored(report, {**report.figures, "flags": [_flag(f"D-{n}", f"2.{n}0") for n in range(5)]})
    url = f"/admin/audit/reconciliationreport/{report.pk}/change/"

    def listed(html: str) -> list[str]:
        section = html[html.index('id="flags"'):]
        return re.findall(r"<td>dealer</td>\s*<td>(?:<a [^>]*>)?(D-\d)", section)

    monkeypatch.setattr("audit.admin_reports.SHOWN_ROWS", 2)
    html = admin_client.get(url).content.decode()
    assert listed(html) == ["D-0", "D-1"]
    assert 'The first 2 of 5: <a href="?whole=flags#flags">and 3 more</a>' in html
    assert listed(admin_client.get(url + "?whole=flags").content.decode()) == [f"D-{n}" for n in range(5)]
    # The rows are what is read: the last one moved to the first place is listed first.
    ReportFlag.objects.filter(report=report, rank=0).update(rank=99)
    ReportFlag.objects.filter(report=report, rank=4).update(rank=0)
    assert listed(admin_client.get(url).content.decode()) == ["D-4", "D-1"]
    # A row in no shape the declaration reads is said, never a failure.
    ReportFlag.objects.filter(report=report, rank=1).update(figures={**_flag("D-1", "2.10"), "z": "very"})
    page = admin_client.get(url)
    assert page.status_code == 200 and "a flag is not in a shape this version reads" in page.content.decode()


def test_the_flags_migration_copies_them_as_a_completed_report_writes_them(reports):
    import importlib

    from django.apps import apps
    from django.db import connection

    from audit.models import ReportFlag

    report, _ = reports
    figures_stored(report, {**report.figures, "flags": [_flag(f"D-{n}", "2.00") for n in range(3)]})
    fields = ("report_id", "rank", "scope", "key", "currency", "figures")
    written = sorted(ReportFlag.objects.values_list(*fields), key=repr)
    assert len(written) >= 3
    ReportFlag.objects.all().delete()
    importlib.import_module("audit.migrations.0032_report_flags").copy_flags(apps, connection.schema_editor())
    assert sorted(ReportFlag.objects.values_list(*fields), key=repr) == written


def test_a_range_and_a_shift_link_to_their_rounds(admin_client, reports):
    s01 = Table.objects.get(code="S01")
    both = rounds_url("table", "S02", day_from=DAY, day_to=NEXT_DAY, table_ids={"S02": s01.pk + 1})
    assert "gaming_day__gte" in both
    clock = reports[0].inputs["clock"]
    night = rounds_url("shift", "22:00-06:00", day_from=DAY, day_to=DAY, table_ids={}, clock=clock)
    listed = _listed(admin_client, night)
    expected = {r.pk for r in Round.objects.filter(gaming_day=DAY) if r.dealt_at.astimezone(
        __import__("zoneinfo").ZoneInfo("Europe/Stockholm")).hour in (22, 23, 0, 1, 2, 3, 4, 5)}
    assert listed == expected != set()
    # Over several days a shift is several stretches: no single list holds it.
    assert rounds_url("shift", "22:00-06:00", day_from=DAY, day_to=NEXT_DAY, table_ids={}, clock=clock) == ""


def test_the_pool_page_charts_its_meter_with_awards_and_reseeds(admin_client, reports):
    pool = Pool.objects.get(code="us-progressive")
    html = admin_client.get(f"/admin/progressive/pool/{pool.pk}/change/").content.decode()
    # The test's rounds were stored within seconds: drawn event by event, not against that time.
    svg = titled(chart_svgs(html), "us-progressive: the meter, event by event")
    meter = values_of(svg, "meter")
    assert meter[-1] == amount(pool.meter, pool.currency)
    # Awards paid from the meter are marked; a fixed award, paid by the house, leaves it be.
    awards = MeterEvent.objects.filter(pool=pool, kind="award").order_by("seq")
    fixed = MeterEvent.objects.filter(pool=pool, kind="fixed_award").count()
    reseeds = MeterEvent.objects.filter(pool=pool, kind="reseed").order_by("seq")
    assert values_of(svg, "awards") == [amount(e.meter_after - e.delta, pool.currency) for e in awards]
    assert values_of(svg, "reseeds") == [amount(e.meter_after, pool.currency) for e in reseeds]
    assert awards.exists() and reseeds.exists() and fixed
    assert f"{fixed} fixed award{'s' if fixed != 1 else ''}, paid by the house, leave the meter" in html


def _reads(queries) -> list[str]:
    """What a page asked of the database, less its session's keeping (read, saved now and then in a
    savepoint: a page's own reads do not depend on it)."""
    return [q["sql"] for q in queries
            if "django_session" not in q["sql"] and not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]


def test_the_pages_read_a_bounded_number_of_queries(admin_client, reports):
    """The charts read their series in one query each (three for a meter), whatever the days hold."""
    report, _ = reports
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").status_code == 200
    # (the cage's counts of the range and the pools' openings are one query each, the mismatches'
    # chart two, the standings' months and years one a scope, the dealers kept apart three: how
    # many, those listed, those charted; every page also reads the person and the authenticator
    # his session proved)
    reads = _reads(queries)
    assert len(reads) <= 20, [sql[:120] for sql in reads]
    pool = Pool.objects.get(code="us-progressive")
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get(f"/admin/progressive/pool/{pool.pk}/change/").status_code == 200
    reads = _reads(queries)
    assert len(reads) <= 15, [sql[:120] for sql in reads]


def test_the_migration_copies_the_bands_of_reports_made_before_as_a_completed_report_writes_them(reports):
    import importlib

    from django.apps import apps

    from audit.models import ReportBand

    fields = ("report_id", "day", "scope", "key", "currency", "period", "band")
    written = sorted(ReportBand.objects.values_list(*fields), key=repr)
    assert {row[5] for row in written} == {"day", "month_to_date", "year_to_date"}
    assert {row[2] for row in written} == {"tables", "dealers"}
    ReportBand.objects.all().delete()
    importlib.import_module("audit.migrations.0019_report_bands").copy_bands(apps, None)
    assert sorted(ReportBand.objects.values_list(*fields), key=repr) == written


def test_each_table_s_rounds_on_the_report_are_the_rounds_its_link_lists(admin_client, reports):
    """One unit per count: a table's rounds on the report's page is the length of the list its
    "rounds" link opens."""
    import html as html_module

    report, _ = reports
    page = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    rows = re.findall(r'\(<a href="([^"]+)" data-count="[0-9]+">rounds</a>\)</td><td>([0-9,]+)</td>', page)
    assert len(rows) >= 3, rows
    for url, shown in rows:
        assert len(_listed(admin_client, html_module.unescape(url))) == int(shown.replace(",", "")), url


# ---- a report's dealers kept apart (audit.ReportDealer) ------------------------------------------

def test_a_report_keeps_each_dealer_apart_in_his_place_in_both_orders(reports):
    from audit.models import ReportDealer
    from books.figures import chart_order, dealer_order
    from books.report_reader import read_figures

    for report in reports:
        figures = read_figures(report.figures)
        pairs = [(d, c, g) for d, by_currency in figures.dealers.items() for c, g in by_currency.items()]
        accuracy = sorted(pairs, key=lambda p: dealer_order(overpaid=p[2].overpaid, underpaid=p[2].underpaid,
                                                            mismatches=p[2].mismatches, dealer=p[0], currency=p[1]))
        charted = sorted(pairs, key=lambda p: chart_order(outside=p[2].bands.total.outside,
                                                          handle=p[2].handle_total, key=p[0], currency=p[1]))
        rows = ReportDealer.objects.filter(report=report)
        assert len(pairs) >= (3 if report is reports[0] else 1) and rows.count() == len(pairs)
        assert list(rows.order_by("accuracy_rank").values_list("dealer", "currency")) == [p[:2] for p in accuracy]
        assert list(rows.order_by("chart_rank").values_list("dealer", "currency")) == [p[:2] for p in charted]
        for row in rows:
            assert row.figures == report.figures["dealers"][row.dealer][row.currency]
            assert row.tables == report.figures["dealer_tables"].get(row.dealer, [])
            assert row.per_1000 == figures.dealers[row.dealer][row.currency].mismatches_per_1000


@pytest.mark.parametrize("shown_rows", [25, 2])
def test_the_page_lists_and_charts_the_first_dealers_in_the_orders_of_the_figures(
        admin_client, reports, monkeypatch, shown_rows):
    """Read a few rows by their places, the dealers listed are the first of the figures' dealers
    in ``dealer_order`` (all of them when asked), and the charts say how many are left out."""
    from books.figures import dealer_order
    from books.report_reader import read_figures

    monkeypatch.setattr("audit.admin_reports.SHOWN_ROWS", shown_rows)
    monkeypatch.setattr("audit.admin_reports.CHARTED_GROUPS", 1)
    report, _ = reports
    figures = read_figures(report.figures)
    pairs = [(d, c, g) for d, by_currency in figures.dealers.items() for c, g in by_currency.items()]
    ordered = [d for d, c, g in sorted(pairs, key=lambda p: dealer_order(
        overpaid=p[2].overpaid, underpaid=p[2].underpaid, mismatches=p[2].mismatches, dealer=p[0], currency=p[1]))]
    url = f"/admin/audit/reconciliationreport/{report.pk}/change/"

    def listed(html: str) -> list[str]:
        return re.findall(r'title="his page">([^<]+)</a>', html[html.index('id="dealers"'):html.index("field-dealers_chart")])

    first = admin_client.get(url).content.decode()
    assert listed(first) == ordered[:shown_rows]
    assert listed(admin_client.get(url + "?whole=dealers").content.decode()) == ordered
    assert ("The first 2 of" in first) is (shown_rows == 2)
    assert f"{len(pairs) - 1} more dealers are in the table above, not charted" in first


def test_a_page_of_dealers_kept_apart_reads_them_by_their_rows_not_the_figures(admin_client, reports):
    """What the page lists is what the rows say (they, not the figures, are read), in their places."""
    from audit.models import ReportDealer

    report, _ = reports
    rows = list(ReportDealer.objects.filter(report=report).order_by("accuracy_rank"))
    last = next(row for row in reversed(rows) if row.dealer != rows[0].dealer)
    ReportDealer.objects.filter(pk=last.pk).update(accuracy_rank=-1)  # placed first
    html = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    listed = re.findall(r'title="his page">([^<]+)</a>', html[html.index('id="dealers"'):])
    assert listed[0] == last.dealer != rows[0].dealer


def test_the_migration_copies_the_dealers_of_reports_made_before_as_a_completed_report_writes_them(reports):
    import importlib

    from django.apps import apps

    from audit.models import ReportDealer

    fields = ("report_id", "dealer", "currency", "accuracy_rank", "chart_rank", "per_1000", "tables", "figures")
    written = sorted(ReportDealer.objects.values_list(*fields), key=repr)
    assert {row[0] for row in written} == {report.pk for report in reports}
    ReportDealer.objects.all().delete()
    importlib.import_module("audit.migrations.0030_report_dealers").copy_dealers(apps, None)
    assert sorted(ReportDealer.objects.values_list(*fields), key=repr) == written


def test_a_report_s_summary_is_its_figures_but_each_player_dealer_and_flag_and_the_migrations_copy_it(reports):
    import importlib

    from django.apps import apps
    from django.db import connection

    from books.report_figures import summary_of

    summaries = importlib.import_module("audit.migrations.0031_report_summary")
    flags = importlib.import_module("audit.migrations.0032_report_flags")
    for report in reports:
        report.refresh_from_db()
        assert report.summary == summary_of(report.figures)
        assert not {"players", "dealers", "dealer_tables", "flags"} & set(report.summary)
        assert set(report.figures) - set(report.summary) == {"players", "dealers", "dealer_tables", "flags"}
        for period in ("month_to_date", "year_to_date"):
            if report.figures.get(period):
                assert {"dealers", "flags"} <= set(report.figures[period])
                assert not {"dealers", "flags"} & set(report.summary[period])
    written = dict(ReconciliationReport.objects.values_list("pk", "summary"))
    for copy in (lambda: summaries.copy_summaries(apps, connection.schema_editor()),
                 lambda: summaries.summaries_in_python(apps)):
        ReconciliationReport.objects.update(summary=None)
        copy()
        flags.summaries_without_flags(apps, connection.schema_editor())
        assert dict(ReconciliationReport.objects.values_list("pk", "summary")) == written


def test_the_dealers_migration_leaves_out_figures_made_before_they_kept_their_currency(reports):
    """Such a report's dealers are of another shape ({dealer: {rounds, handle, …}}): no row is made
    of them (its page says its figures cannot be read), and the copy does not fail on them."""
    import importlib

    from django.apps import apps

    from audit.models import ReportDealer

    old = ReconciliationReport.objects.create(
        day_from=DAY - timedelta(days=9), day_to=DAY - timedelta(days=9), version=1, status="complete",
        engine_version="old", figures={"casino": {"rounds": 5}, "dealers": {"D1": {"rounds": 5, "hands": 9,
                                                                                   "handle": {"ante": "100"}}}})
    ReportDealer.objects.all().delete()
    importlib.import_module("audit.migrations.0030_report_dealers").copy_dealers(apps, None)
    assert not ReportDealer.objects.filter(report=old).exists()
    assert ReportDealer.objects.filter(report=reports[0]).count() >= 3


def test_a_dealer_s_row_in_no_shape_it_reads_is_said_on_the_page_never_a_failure(admin_client, reports):
    from audit.models import ReportDealer

    report, _ = reports
    row = ReportDealer.objects.filter(report=report).order_by("accuracy_rank").first()
    ReportDealer.objects.filter(pk=row.pk).update(figures={**row.figures, "hands": "many"})
    page = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/")
    assert page.status_code == 200
    assert f"dealer {row.dealer} ({row.currency}): its figures are not in a shape" in page.content.decode()
