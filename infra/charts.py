"""Charts for staff pages, drawn by pygal on the server as SVG and written into the page.

Nothing is fetched by the browser and nothing runs in it: pygal's tooltip script
is left out (``js=[]``), and so is the configuration ``<script>`` pygal writes
even then, which the Content-Security-Policy (scripts from 'self' only) would
refuse. Each point keeps its value as pygal writes it, ``<desc class="value">``,
in the casino's own form ("68,235.00 SEK"), and a ``<title>`` that the browser
shows on hover; each series' group carries ``data-series`` with its name, so
that a reader (or a test) finds a chart's points by what they mean.

Plain functions of plain data (dates, Decimals, the report's band dicts), so
that the pages that show them only read and pass their figures. Money is
never mixed across currencies: every chart is of one currency, named in its
title and on every value.

Being functions of their data alone, each chart is drawn once (``drawn_once``):
the SVG is kept in the ``charts`` cache under a digest of what it was drawn
from, this module's own text, the time zone and the language, so a page shown
again (a finished report's, a table's) reads its charts instead of drawing
them, and any change to what they show draws them anew.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import pygal
from django.core.cache import caches
from django.utils import timezone
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language
from pygal.etree import etree
from pygal.style import Style

from infra.money_display import money

# The admin's content is about 1,300 px wide on a 1,366-px screen; a chart scales down with it.
WIDE = 880
NARROW = 420
HEIGHT = 300
SMALL_HEIGHT = 240

LOOK = dict(
    background="#ffffff",
    plot_background="#ffffff",
    foreground="#333333",
    foreground_strong="#264b5d",
    foreground_subtle="#888888",
    font_family='"Segoe UI", system-ui, Roboto, "Helvetica Neue", Arial, sans-serif',
    label_font_size=11,
    major_label_font_size=11,
    title_font_size=14,
    legend_font_size=12,
    value_font_size=11,
    tooltip_font_size=12,
    no_data_font_size=16,
    guide_stroke_color="#dddddd",
    major_guide_stroke_color="#cccccc",
    opacity=".85",
    opacity_hover=".95",
    transition="0ms",
)
# House win, theoretical, the 95 % band's low and high (one colour).
BAND_LOOK = Style(**LOOK, colors=("#264b5d", "#6f6f6f", "#b8860b", "#b8860b"))
# The day, the month to date, the year to date.
STANDING_LOOK = Style(**LOOK, colors=("#264b5d", "#417690", "#b8860b"))
# Meter, awards, reseeds.
METER_LOOK = Style(**LOOK, colors=("#264b5d", "#cc0000", "#2e8b57"))
# One colour a dealer.
DEALER_LOOK = Style(**LOOK, colors=("#264b5d", "#e8a33d", "#8e44ad", "#2e8b57", "#cc0000", "#417690",
                                    "#d35400", "#16a085", "#7f8c8d", "#b8860b", "#c0392b", "#2c3e50"))
OUTSIDE_COLOUR = {"99.7": "#cc0000", "95": "#ee8800"}
NO_DATA = "no figures for these days"

logger = logging.getLogger(__name__)
CACHE = "charts"
# A chart drawn by another text of this module (a look, a label) is never the one kept.
_DRAWING = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def drawn_once(draw: Callable[..., SafeString]) -> Callable[..., SafeString]:
    """``draw`` (a chart of keyword arguments that are plain data) kept in the ``charts`` cache under
    a digest of its arguments, so the same data is drawn once. A cache that fails is drawn past."""

    @functools.wraps(draw)
    def kept(**data) -> SafeString:
        # Plain data's repr is its value (Decimals, dates, dataclasses, dicts in their order); the
        # moments' labels are written in the current time zone and the money in the active
        # language's marks, so both are part of what is drawn.
        what = repr((draw.__name__, sorted(data.items()), timezone.get_current_timezone_name(), get_language(),
                     _DRAWING))
        key = "chart:" + hashlib.sha256(what.encode()).hexdigest()
        cache = caches[CACHE]
        try:
            svg = cache.get(key)
        except Exception:
            logger.warning("the charts' cache could not be read; drawing", exc_info=True)
            svg = None
        if svg is not None:
            return mark_safe(svg)
        svg = draw(**data)
        try:
            cache.set(key, str(svg))
        except Exception:
            logger.warning("the charts' cache could not be written", exc_info=True)
        return svg

    return kept


def _config(**options) -> dict:
    """What every chart shares: no script, the casino's look, a size that scales down."""
    return {
        "js": [],
        "disable_xml_declaration": True,
        "explicit_size": False,
        "legend_at_bottom": True,
        "legend_box_size": 10,
        "truncate_legend": -1,
        # A label is a date or a name in full, or it says nothing ("2026-12…" is no day).
        "truncate_label": -1,
        "margin": 8,
        "spacing": 8,
        "no_data_text": NO_DATA,
        "print_values": False,
        "show_minor_x_labels": True,
        "height": HEIGHT,
        "width": WIDE,
        **options,
    }


def _render(chart, *, series: Sequence[str], label: str, width: int) -> SafeString:
    """The chart as inline SVG markup, with its scripts and comments taken out.

    ``series`` names the chart's series in the order they were added: each
    series' groups get ``data-series``.
    """
    # pygal leaves the legend out of its height when it has more columns than series.
    chart.legend_at_bottom_columns = max(1, min(4, len(series)))
    root = chart.render_tree()
    for parent in list(root.iter()):
        for child in list(parent):
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag.rsplit("}", 1)[-1] == "script" or child.tag is etree.Comment:
                parent.remove(child)
            elif "series" in (child.get("class") or "").split():
                index = _serie_index(child.get("class"))
                if index is not None and index < len(series):
                    child.set("data-series", series[index])
    root.set("role", "img")
    root.set("aria-label", label)
    root.set("style", f"width: 100%; max-width: {width}px; height: auto; display: block;")
    text = etree.tostring(root, encoding="unicode")
    # ElementTree writes pygal's namespace as a prefix; HTML wants the plain svg element.
    text = text.replace("ns0:", "").replace(":ns0=", "=")
    return mark_safe(text)


def _serie_index(classes: str | None) -> int | None:
    for name in (classes or "").split():
        if name.startswith("serie-"):
            try:
                return int(name[len("serie-"):])
            except ValueError:
                return None
    return None


def amount_text(value, currency: str) -> str:
    """A figure (Decimal, or the text a report keeps) as money: "68,235.00 SEK", to the cent half up.

    ``infra.money_display.money`` writes it; this reads the report's text as a Decimal first
    (never a float).
    """
    if value in (None, ""):
        return "–"
    return money(Decimal(str(value)), currency)


def _point(amount: Decimal | None, currency: str, tooltip: str, *, link: str = "",
           colour: str = "") -> dict | None:
    """A point pygal draws at ``amount`` and writes as money of ``currency``."""
    if amount is None:
        return None
    text = amount_text(amount, currency)
    point = {
        "value": amount,
        "formatter": lambda _value, text=text: text,
        "tooltip": f"{tooltip}: {text}",
    }
    if link:
        point["xlink"] = {"href": link, "target": "_top"}
    if colour:
        point["color"] = colour
    return point


def _amount(value) -> Decimal | None:
    return None if value in (None, "") else Decimal(str(value))


def _money_axis(currency: str) -> Callable[[float], str]:
    # The axis' own ticks (pygal's floats, not figures): whole amounts, grouped; the title names the currency.
    return lambda value: money(Decimal(round(value)), currency).rsplit(".", 1)[0] if value is not None else ""


# ---- a group's win against its theoretical band, over days ----------------------------


@dataclass(frozen=True, slots=True)
class BandDay:
    """A day's (or a period's up to that day) band as a report stores it, or None: no report."""

    day: date
    band: dict | None
    link: str = ""


# What a band judges: the house win on the bets with a theoretical win of their own. The Progressive
# is the pool's (its ledger's checks), so a table's "house win, settled" holds more than this.
BANDED = "house win, Ante to Trips"
BAND_SERIES = (BANDED, "theoretical", "95 % low", "95 % high")


@drawn_once
def band_chart(*, title: str, currency: str, days: Sequence[BandDay], narrow: bool = False) -> SafeString:
    """Actual house win beside the expected win and the 95 % band, a point per gaming day.

    A day outside the band has its point coloured (orange: 95 %, red: 99.7 %);
    a day without a report is a gap. Each point of the house win links to the
    day's report when ``link`` is given. The axis starts at the first day with
    a report; a single such day is no trend, and is said in words
    (``band_day``), not drawn.
    """
    reported = [i for i, d in enumerate(days) if d.band]
    if len(reported) == 1:
        return band_day(title=title, currency=currency, day=days[reported[0]])
    days = days[reported[0]:] if reported else days
    width = NARROW if narrow else WIDE
    chart = pygal.Line(**_config(
        style=BAND_LOOK, title=title, width=width, height=SMALL_HEIGHT if narrow else HEIGHT,
        x_label_rotation=0 if len(days) <= 12 else 40, allow_interruptions=True,
        show_minor_x_labels=len(days) <= 10, x_labels_major_every=max(1, len(days) // (5 if narrow else 10)),
        value_formatter=_money_axis(currency), dots_size=3, stroke_style={"width": 1.5},
        max_scale=6 if narrow else 10, x_title="gaming day",
    ))
    chart.x_labels = [f"{d.day:%Y-%m-%d}" for d in days]

    def series(field: str, name: str, *, links: bool = False) -> list:
        points = []
        for d in days:
            band = d.band or {}
            amount = _amount(band.get(field))
            colour = OUTSIDE_COLOUR.get(band.get("outside") or "", "") if links else ""
            note = f" (outside the {band['outside']} % band)" if links and band.get("outside") else ""
            points.append(_point(amount, currency, f"{d.day:%Y-%m-%d} {name}{note}",
                                 link=d.link if links else "", colour=colour))
        return points

    if any(d.band for d in days):
        chart.add(BAND_SERIES[0], series("actual", BAND_SERIES[0], links=True), dots_size=4, stroke_style={"width": 2})
        chart.add(BAND_SERIES[1], series("expected", BAND_SERIES[1]), dots_size=1.5,
                  stroke_style={"width": 1.5, "dasharray": "6, 4"})
        chart.add(BAND_SERIES[2], series("low_95", BAND_SERIES[2]), dots_size=1.5,
                  stroke_style={"width": 1.5, "dasharray": "3, 3"})
        chart.add(BAND_SERIES[3], series("high_95", BAND_SERIES[3]), dots_size=1.5,
                  stroke_style={"width": 1.5, "dasharray": "3, 3"})
    return _render(chart, series=BAND_SERIES, label=title, width=width)


def band_day(*, title: str, currency: str, day: BandDay) -> SafeString:
    """One gaming day against its band, in words: what a chart of one point would only pretend to show."""
    band = day.band or {}
    outside = f" — outside the {band['outside']} % band" if band.get("outside") else ""
    words = (f"gaming day {day.day:%Y-%m-%d}, the only day of these with a report for it: {BANDED} "
             f"{amount_text(_amount(band.get('actual')), currency)}, theoretical "
             f"{amount_text(_amount(band.get('expected')), currency)}, 95 % band "
             f"{amount_text(_amount(band.get('low_95')), '')} … {amount_text(_amount(band.get('high_95')), currency)}"
             f"{outside}")
    if day.link:
        return format_html('<div class="chart-single" data-day="{}"><strong>{}</strong><br>'
                           '<a href="{}">{}</a></div>', f"{day.day:%Y-%m-%d}", title, day.link, words)
    return format_html('<div class="chart-single" data-day="{}"><strong>{}</strong><br>{}</div>',
                       f"{day.day:%Y-%m-%d}", title, words)


# ---- a pool's meter -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MeterPoint:
    """The meter after an event: ``at`` a moment (the ledger) or an event's seq (a report's series)."""

    at: datetime | int
    meter: Decimal
    note: str = ""


METER_SERIES = ("meter", "awards", "reseeds")


@drawn_once
def meter_chart(*, title: str, currency: str, points: Sequence[MeterPoint],
                awards: Sequence[MeterPoint] = (), reseeds: Sequence[MeterPoint] = (),
                width: int = WIDE) -> SafeString:
    """The meter as a line, its awards and reseeds as marks on it (the meter just before an
    award, and just after a reseed). X is time when the points carry moments, else the ledger's seq."""
    by_time = any(isinstance(p.at, datetime) for p in points)
    if by_time:
        # X is the moment as a POSIX timestamp, labelled in the casino's time zone.
        zone = timezone.get_current_timezone()
        stamps = [p.at.timestamp() for p in points if isinstance(p.at, datetime)]
        span = max(stamps) - min(stamps)
        shape = "%H:%M:%S" if span < 3600 else "%m-%d %H:%M" if span < 3 * 86400 else "%Y-%m-%d"
        x_format = lambda x: f"{datetime.fromtimestamp(x, zone):{shape}}" if x is not None else ""  # noqa: E731
    else:
        x_format = lambda seq: f"#{int(seq)}" if seq is not None else ""  # noqa: E731
    chart = pygal.XY(**_config(
        style=METER_LOOK, title=title, width=width, height=HEIGHT, value_formatter=_money_axis(currency),
        x_value_formatter=x_format, dots_size=2, show_x_guides=False, x_label_rotation=30, max_scale=8,
        x_title=None if by_time else "ledger event",
    ))

    def xy(points: Iterable[MeterPoint], name: str) -> list:
        found = []
        for p in points:
            if isinstance(p.at, datetime):
                where, x = f"{timezone.localtime(p.at):%Y-%m-%d %H:%M}", p.at.timestamp()
            else:
                where, x = f"event {p.at}", p.at
            point = _point(p.meter, currency, f"{where} {p.note or name}")
            point["value"] = (x, p.meter)
            found.append(point)
        return found

    if points:
        chart.add(METER_SERIES[0], xy(points, "meter"), dots_size=2 if len(points) <= 60 else 1,
                  stroke_style={"width": 1.5})
        chart.add(METER_SERIES[1], xy(awards, "award"), stroke=False, dots_size=5)
        chart.add(METER_SERIES[2], xy(reseeds, "reseed"), stroke=False, dots_size=4)
    return _render(chart, series=METER_SERIES, label=title, width=width)


# ---- mismatches by dealer over weeks ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WeekCount:
    week: date  # the Monday the ISO week starts on
    mismatches: int
    overpaid: int = 0  # of them, paid more than due
    underpaid: int = 0


def iso_week(monday: date) -> str:
    year, week, _ = monday.isocalendar()
    return f"{year}-W{week:02d}"


@drawn_once
def mismatch_chart(*, title: str, weeks: Sequence[date], dealers: dict[str, Sequence[WeekCount]],
                   links: Mapping[tuple[str, date], str] | None = None, width: int = WIDE) -> SafeString:
    """Bars of each dealer's payout mismatches per ISO week; a bar's hover says how many were
    overpaid and underpaid, and its click opens the dealer's rounds of that week (``links``, by
    dealer and Monday)."""
    chart = pygal.Bar(**_config(
        style=DEALER_LOOK, title=title, width=width, height=SMALL_HEIGHT,
        value_formatter=lambda n: f"{int(n)}" if n is not None else "",
        show_minor_x_labels=True, x_label_rotation=0, min_scale=1, max_scale=6, order_min=0,
    ))
    chart.x_labels = [iso_week(w) for w in weeks]
    names = []
    for dealer, counts in dealers.items():
        by_week = {c.week: c for c in counts}
        values = []
        for week in weeks:
            c = by_week.get(week) or WeekCount(week, 0)
            text = str(c.mismatches)
            value = {
                "value": c.mismatches,
                "formatter": lambda _value, text=text: text,
                "tooltip": f"{dealer}, {iso_week(week)}: {c.mismatches} mismatch(es), "
                           f"{c.overpaid} overpaid, {c.underpaid} underpaid",
            }
            if links and c.mismatches and links.get((dealer, week)):
                value["xlink"] = {"href": links[dealer, week], "target": "_top"}
            values.append(value)
        chart.add(dealer, values)
        names.append(dealer)
    return _render(chart, series=names, label=title, width=width)


def chart_row(charts: Iterable[SafeString]) -> SafeString:
    """Charts side by side, wrapping onto the next line where the screen ends (``.charts`` in
    casino/static/casino/admin.css, sized for ``NARROW`` and ``WIDE``)."""
    cells = "".join(f'<div class="chart">{c}</div>' for c in charts)
    return mark_safe(f'<div class="charts">{cells}</div>')


def caption(text: str) -> SafeString:
    return mark_safe(f'<p class="help chart-caption">{escape(text)}</p>')


# ---- where groups stand in their bands: the day, the month and the year to date ---------------


@dataclass(frozen=True, slots=True)
class Standing:
    """A group (a table or dealer in one currency) and its bands by period (``None``: not reported)."""

    label: str
    currency: str
    bands: dict[str, dict | None]
    link: str = ""


STANDING_PERIODS = (("day", "the report's days"), ("month_to_date", "month to date"),
                    ("year_to_date", "year to date"))
Z_GUIDES = (-3, -1.96, 0, 1.96, 3)


@drawn_once
def standing_chart(*, title: str, groups: Sequence[Standing], day_label: str = "the day",
                   width: int = WIDE) -> SafeString:
    """Each group's house win against its theoretical win in standard deviations (z), for the
    report's days, the month and the year to date: inside ±1.96 is inside the 95 % band, past ±3
    outside the 99.7 % one. Unitless, so tables of two currencies stand side by side; each bar's
    hover gives the money, in the group's currency."""
    zs = [abs(_amount((g.bands.get(p) or {}).get("z")) or 0) for g in groups for p, _ in STANDING_PERIODS]
    chart = pygal.Bar(**_config(
        style=STANDING_LOOK,
        title=title, width=width, height=HEIGHT, y_labels=_z_labels(max(zs, default=0)), show_y_guides=True,
        value_formatter=lambda z: f"{z:+.2f}" if z is not None else "", x_label_rotation=0 if len(groups) <= 8 else 30,
        y_title="z (sd from theoretical)",
    ))
    chart.x_labels = [g.label for g in groups]
    names = []
    for period, name in STANDING_PERIODS:
        name = day_label if period == "day" else name
        values = []
        for g in groups:
            band = g.bands.get(period) or {}
            z = _amount(band.get("z"))
            if z is None:
                values.append(None)
                continue
            text = f"z {z:+}"
            values.append({
                "value": z,
                "formatter": lambda _value, text=text: text,
                "tooltip": f"{g.label} {name}: {BANDED} {amount_text(band['actual'], g.currency)}, "
                           f"theoretical {amount_text(band['expected'], g.currency)}, 95 % band "
                           f"{amount_text(band['low_95'], '')} … {amount_text(band['high_95'], g.currency)} "
                           f"({text})",
                **({"xlink": {"href": g.link, "target": "_top"}} if g.link else {}),
            })
        chart.add(name, values)
        names.append(name)
    return _render(chart, series=names, label=title, width=width)


def _z_labels(largest: Decimal) -> list[float]:
    """The band's edges (±1.96, ±3) while they can be told apart, else round steps to the largest |z|."""
    if largest <= 8:
        return list(Z_GUIDES)
    # A power of ten past the list for a |z| no list foresaw (a band of almost no width).
    step = next((s for s in (2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**4, 10**5, 10**6) if largest / s <= 5),
                10 ** (len(str(int(largest))) - 1))
    top = int(largest // step + 1) * step
    return [float(v) for v in range(-top, top + 1, step)]


# ---- a player's leak test over time -------------------------------------------------------

# Dealer's first card, dealer's second card, the other seats' cards, the threshold.
LEAK_LOOK = Style(**LOOK, colors=("#264b5d", "#e8a33d", "#8e44ad", "#cc0000"))
THRESHOLD_SERIES = "threshold"


@dataclass(frozen=True, slots=True)
class LeakStep:
    """The leak test's figure after one telling decision, dealt ``at``; ``link`` opens its round."""

    at: datetime
    figure: float
    chose_informed: bool = False
    link: str = ""


@drawn_once
def leak_course_chart(*, title: str, courses: dict[str, Sequence[LeakStep]], threshold: float,
                      width: int = WIDE) -> SafeString:
    """The test's figure after each telling decision, a line per knowledge (named by the keys of
    ``courses``), against the threshold where it raises a suspicion. The figure is a likelihood
    ratio's logarithm, not money: it has no currency. A point marks whether the player chose the
    option the knowledge made best, and opens its round."""
    stamps = [step.at.timestamp() for steps in courses.values() for step in steps]
    zone = timezone.get_current_timezone()
    span = (max(stamps) - min(stamps)) if stamps else 0
    shape = "%H:%M" if span < 86400 else "%m-%d %H:%M" if span < 3 * 86400 else "%Y-%m-%d"
    chart = pygal.XY(**_config(
        style=LEAK_LOOK, title=title, width=width, height=HEIGHT, dots_size=2, show_x_guides=False,
        x_label_rotation=30, max_scale=8, y_title="test figure",
        value_formatter=lambda y: f"{y:.1f}" if y is not None else "",
        x_value_formatter=lambda x: f"{datetime.fromtimestamp(x, zone):{shape}}" if x is not None else "",
    ))
    names = []
    for name, steps in courses.items():
        points = []
        for step in steps:
            text = f"{step.figure:.2f}"
            chose = "chose the informed option" if step.chose_informed else "chose otherwise"
            point = {
                "value": (step.at.timestamp(), step.figure),
                "formatter": lambda _value, text=text: text,
                "tooltip": f"{timezone.localtime(step.at):%Y-%m-%d %H:%M} {name}: {text} ({chose})",
            }
            if step.link:
                point["xlink"] = {"href": step.link, "target": "_top"}
            points.append(point)
        chart.add(name, points, dots_size=2 if len(points) <= 200 else 1, stroke_style={"width": 1.5})
        names.append(name)
    if shape == "%Y-%m-%d":
        # One label a day at its midnight, on the casino's clock (at most about ten): pygal's own
        # ticks fall anywhere in a day, naming one day twice and skipping the next.
        first = datetime.fromtimestamp(min(stamps), zone).date()
        last = datetime.fromtimestamp(max(stamps), zone).date()
        days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
        every = max(1, -(-len(days) // 10))
        chart.x_labels = [datetime.combine(day, time(), tzinfo=zone).timestamp() for day in days[::every]]
    if stamps:
        # Across the whole span, so that every line can be read against it; its two ends carry
        # its value as the other points carry theirs.
        text = f"{threshold:.2f}"
        chart.add(f"{THRESHOLD_SERIES} {text}", [
            {"value": (x, threshold), "formatter": lambda _value, text=text: text,
             "tooltip": f"threshold: {text}"}
            for x in (min(stamps), max(stamps))
        ], dots_size=1.5, stroke_style={"width": 1.5, "dasharray": "6, 4"})
        names.append(THRESHOLD_SERIES)
    return _render(chart, series=names, label=title, width=width)
