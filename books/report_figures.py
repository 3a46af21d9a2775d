"""A reconciliation report's figures: their one declaration, versioned.

What ``report_merge`` stores in ``ReconciliationReport.figures`` is a
``ReportFigures`` written as JSON (``figures_json``), and whatever reads a
report back (its admin page, the API's JSON and CSV, ``manage.py reconcile``,
the month and year to date, the tonight page) reads it through
``report_reader.read_figures``: attributes, not string keys. That reader is
the one place where the shapes earlier versions wrote are upgraded.

Versions:

1. Figures per currency (the key ``currencies``), no ``version`` key. Made
   before a group's decisions were scored, a group has no skill, theoretical
   at actual play or bands at optimal play, and the report no ``scoring``;
   made before dual control was reported, no ``dual_control``; older pools
   have no reversals, marks or readings; an older chain no walk.
2. The declaration, written with its ``version``; no ``win_paid``.
3. Each group's house win by what the dealers paid (``win_paid``), beside
   the one by the rules, and their difference; from 2026-12-05 the
   progressive bets as the books see them (``progressive``, absent before);
   from 2026-12-07 the pages' day totals recounted from the seats
   (``totals``, absent before).

Money, ratios and z-scores are ``Decimal``, written as text (exact as they
were computed). Plain Python: no Django.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FIGURES_VERSION = 3

Basis = Literal["optimal", "actual"]  # which theoretical win a band judges by
Outside = Literal["95", "99.7"]  # the widest band a result falls outside of
GroupScope = Literal["table", "dealer", "shift", "player"]


class Figures(BaseModel):
    """What every part of the declaration shares: frozen once read, and nothing undeclared."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


# ---- a group's figures -----------------------------------------------------------------------


class BandFigures(Figures):
    """Where a house win stands against its theoretical win: the 95 % and 99.7 % bands around it."""

    actual: Decimal
    expected: Decimal
    sd: Decimal
    low_95: Decimal
    high_95: Decimal
    low_997: Decimal
    high_997: Decimal
    z: Decimal | None  # none where the spread is zero
    outside: Outside | None
    theoretical: Basis


class Bands(Figures):
    base: BandFigures  # Ante, Blind and Play
    trips: BandFigures
    total: BandFigures


class OptimalBands(Figures):
    base: BandFigures
    total: BandFigures


class GroupFigures(Figures):
    """One group's figures in one currency (a table's, dealer's, shift's, player's, the casino's).

    The sums first (``figures.Sums``: what adds across tables and days), then
    what is derived from them (``figures.derive``): ratios, the two
    theoretical wins, the bands and the dealer's accuracy.
    """

    currency: str
    rounds: int
    void_rounds: int
    hands: int
    handle: dict[str, Decimal]  # by bet
    win: dict[str, Decimal]  # the house's by the rules (settled), by bet
    # The house's by what the dealers paid (the tables' reported payouts; the settled ones where a
    # table reported none), by bet. None where not known: a report of version 2 or before.
    win_paid: dict[str, Decimal] | None
    theo_base: Decimal
    theo_trips: Decimal
    var_base: Decimal
    var_trips: Decimal
    var_cross: Decimal
    skill: Decimal
    scored_hands: int
    mismatches: int
    overpaid: Decimal
    underpaid: Decimal
    findings: dict[str, int]  # by finding code
    handle_total: Decimal
    win_total: Decimal
    win_paid_total: Decimal | None
    # win_paid_total - win_total: what the dealers' errors gave the house (negative: they paid
    # out more than the rules give, net of what they paid short).
    dealer_difference: Decimal | None
    hold_percent: dict[str, Decimal | None]  # by bet and "total"; none over no handle
    theo_base_actual: Decimal
    theoretical_optimal: Decimal
    theoretical_actual: Decimal
    scored_percent: Decimal | None
    fully_scored: bool
    theoretical: Basis
    bands: Bands  # the ones the report judges by
    bands_optimal: OptimalBands
    mismatches_per_1000: Decimal | None
    limit_breaks: int


Groups = dict[str, dict[str, GroupFigures]]  # {key: {currency: figures}}


class Flag(BandFigures):
    """A group's band that its house win fell outside of."""

    scope: GroupScope
    key: str
    currency: str
    bet: Literal["base", "trips", "total"]


class ScoredShare(Figures):
    hands: int
    scored_hands: int
    scored_percent: Decimal | None


class Scoring(Figures):
    """How much of the range game protection had scored when the report ran."""

    casino: dict[str, ScoredShare]  # by currency
    not_fully_scored: dict[str, int]  # groups with hands, by scope ("tables", …)


# ---- progressive pools -----------------------------------------------------------------------


class PoolCheck(Figures):
    check: str
    ok: bool
    problems: list[str]


class PoolKindSums(Figures):
    events: int
    amount: Decimal
    delta: Decimal
    overflow: Decimal
    reserve: Decimal


class PoolReadings(Figures):
    """The meter readings the tables sent in the range, against the ledger."""

    readings: int
    flagged: int
    largest_difference: Decimal | None


class PoolMark(Figures):
    """Where the ledger stood at the report's last event: the next day's report starts there."""

    top: int
    n: int
    sum: Decimal
    after_from: int


class PoolRead(Figures):
    """From where the report read the ledger (a report of the day before, or the start)."""

    from_report: int | None
    events_from: int
    turn: list[Any] | None


class PoolFigures(Figures):
    """One pool's ledger over the report's range: opening + in − out = closing."""

    pool: str
    currency: str
    events: int
    first_seq: int | None = None
    last_seq: int | None = None
    interleaved_events: int = 0
    events_after: int = 0
    opening: Decimal
    opening_overflow: Decimal = Decimal(0)
    opening_reserve: Decimal = Decimal(0)
    contributions: Decimal
    awards: Decimal
    fixed_awards: Decimal
    reseeds: Decimal
    adjustments: Decimal
    reversals: Decimal = Decimal(0)
    overflow: Decimal
    inflow: Decimal = Field(alias="in")
    outflow: Decimal = Field(alias="out")
    closing: Decimal
    closing_overflow: Decimal = Decimal(0)
    closing_reserve: Decimal = Decimal(0)
    by_kind: dict[str, PoolKindSums] = {}
    checks: list[PoolCheck]
    balanced: bool
    series: list[tuple[str, Decimal]] = []  # ("opening" or an event's seq, the meter after it)
    readings: PoolReadings | None = None
    mark: PoolMark | None = None
    read: PoolRead | None = None


class ProgressiveBooks(Figures):
    """The progressive bets of one currency as an accountant reads them (``progressive_books``).

    The meters, their overflow and their reserves are the casino's debt to the players: an
    award from a meter pays that debt and costs the house nothing then; what the bets put
    into the meters, the reseeds and the adjustments are the cost, when they add to it.
    """

    currency: str
    pools: list[str]
    wagers: Decimal  # the progressive bets taken: the casino's handle of the bet
    awards_from_meter: Decimal
    fixed_awards: Decimal
    paid_win: Decimal  # wagers − every award paid: the cash the bets left
    debt_opening: Decimal  # the pools' meters, overflow and reserves at the range's start
    debt_closing: Decimal
    debt_change: Decimal
    win: Decimal  # paid_win − debt_change: what the bets earned the house
    hold_percent: Decimal | None  # win / wagers


class RolledPool(Figures):
    """A pool over the days of a month or year to date, from the days' reports."""

    pool: str
    currency: str
    opening: Decimal
    closing: Decimal
    events: int
    inflow: Decimal = Field(alias="in")
    outflow: Decimal = Field(alias="out")
    contributions: Decimal
    awards: Decimal
    fixed_awards: Decimal
    reseeds: Decimal
    adjustments: Decimal
    reversals: Decimal
    overflow: Decimal
    balanced: bool
    problems: list[str]


# ---- the checks a report runs ------------------------------------------------------------------


class DriftExample(Figures):
    table: str
    round: str
    round_pk: int
    differences: list[str]


class Reverification(Figures):
    """The range's stored rounds judged again by today's engine: drift is a round judged otherwise."""

    rounds: int
    drift: int
    examples: list[DriftExample]


class ChainHeadFigures(Figures):
    seq: int
    hash: str | None


class ChainFigures(Figures):
    """The audit chain as the report walked it, and the range's own last event."""

    ok: bool
    checked: int
    segments: int = 0
    walked: list[str] = []  # "first-last" of each segment walked
    anchors_held: int = 0
    last_seq: int | None = None
    last_hash: str
    break_seq: int | None
    problem: str
    day_events: int = 0
    day_last_seq: int | None = None
    day_last_hash: str | None = None
    head_at_report: ChainHeadFigures | None = None


class BodiesChecked(Figures):
    """The range's rounds read again from the bodies their tables sent."""

    differences: int
    examples: list[str]


class TotalsChecked(Figures):
    """The range's day totals, which the workspace's pages read, recounted from the seats, and the
    findings still to work of every day (``rounds.WorkTally``), recounted from the findings."""

    differences: int
    examples: list[str]


class Held(Figures):
    """Rounds held apart from the books, awaiting a supervisor, whatever their day."""

    rounds: int
    oldest_received: datetime | None


class RecordsChecked(Figures):
    """Configuration versions, findings' work, held rounds and every other record the trail vouches
    for (``trail.record_proofs``) against what the chain recorded."""

    versions: int
    findings: int
    held: int
    examples: list[str]
    # Differences by proof beyond those three (people, sign_in, table_keys, counts, acts); none in
    # a report made before the nightly held them.
    others: dict[str, int] | None = None


class Change(Figures):
    """A change of money or of what is paid that took effect in the range."""

    kind: str  # "meter_adjustment", "config_version", "pool_version"
    what: str  # "us-progressive +10000.00", "se-50kr v2"
    at: str  # ISO 8601, when it took effect in the books
    asked_by: str
    approved_by: str | None  # the second person, if there was one
    alone: bool  # no second person approved it
    # Why its dual control is unsound though the form was kept: the system changed what is paid,
    # or its second person is not independent of the asker. Empty: sound, or not recorded.
    unsound: str = ""


class DualControl(Figures):
    changes: list[Change]
    alone: int
    alone_by_a_person: int


class VarianceSettingFigures(Figures):
    enabled: bool
    threshold: Decimal | None
    base_hold: Decimal | None


class TripFigures(Figures):
    test: str
    scope: str
    key: str
    currency: str
    period: str
    detail: str


class VarianceTests(Figures):
    """The regulators' tests run on a single day's report, as configured that day."""

    settings: dict[str, VarianceSettingFigures]
    trips: list[TripFigures]


# ---- a report's parts, merged into it --------------------------------------------------------


class Cell(Figures):
    """One table's sums for one dealer in one shift (``figures.Sums``, its zeros left out)."""

    dealer: str
    shift: str
    sums: dict[str, Any]


class PartReverification(Reverification):
    config_versions: list[int]
    pool_versions: list[int]


class TablePart(Figures):
    table: str
    cells: list[Cell]
    reverification: PartReverification


class PlayersPart(Figures):
    players: dict[str, dict[str, dict[str, Any]]]  # {player: {currency: sums}}


# ---- the report ------------------------------------------------------------------------------


class ByScope(Figures):
    def groups(self, scope: str) -> Groups:
        """A scope's groups by its plural name ("tables", "dealers", "shifts", "players")."""
        return getattr(self, scope)


class ToDate(ByScope):
    """The month or year up to a day, added up from the days' current reports."""

    day_from: date
    day_to: date
    days: list[date]  # those with a current report
    reports: list[int] = []
    missing_days: list[date] = []
    currencies: list[str] = []
    casino: dict[str, GroupFigures]
    tables: Groups = {}
    dealers: Groups = {}
    shifts: Groups = {}
    players: Groups = {}
    flags: list[Flag] = []
    scoring: Scoring | None = None
    pools: dict[str, RolledPool]
    drift: int
    # How many of the days each group dealt on (had rounds), {scope: {key: {currency: days}}}: a
    # table that dealt one day of the month is not "4 days" because four days were reported.
    # None in a roll-up kept before it was counted.
    days_dealt: dict[str, dict[str, dict[str, int]]] | None = None


class ReportFigures(ByScope):
    """A report's figures: the casino's, each group's, the pools', and every check it ran."""

    version: int = FIGURES_VERSION
    day_from: date
    day_to: date
    parameters: dict[str, Any]  # the clock and theory it ran with, as its inputs say (``report_inputs``)
    engine_version: str
    currencies: list[str]
    casino: dict[str, GroupFigures]
    tables: Groups
    dealers: Groups
    shifts: Groups
    players: Groups | None  # None only where read without them (``read_figures(without_players=True)``)
    dealer_tables: dict[str, list[str]]
    flags: list[Flag]
    scoring: Scoring | None = None
    pools: dict[str, PoolFigures]
    reverification: Reverification
    chain: ChainFigures
    config_versions: list[int]
    pool_versions: list[int]
    covariance_fallbacks: list[str] = []
    bodies: BodiesChecked | None = None
    held: Held | None = None
    dual_control: DualControl | None = None
    records: RecordsChecked | None = None
    totals: TotalsChecked | None = None
    alerts: list[str]
    month_to_date: ToDate | None = None
    year_to_date: ToDate | None = None
    variance_tests: VarianceTests | None = None  # a single day's report only
    progressive: dict[str, ProgressiveBooks] | None = None  # by currency; None: made before it was

    def period(self, name: str) -> ToDate | None:
        """The month or year to date (``"month_to_date"``, ``"year_to_date"``) it carries, if any."""
        return getattr(self, name)


# ---- writing ------------------------------------------------------------------------------


def figures_json(figures: Figures) -> dict:
    """What is stored: every Decimal as its text, the names as declared."""
    return figures.model_dump(mode="json", by_alias=True)


# Each player's and each dealer's parts (most of a busy day's figures): whole in the figures; the
# dealers in rows of their own too (``audit.ReportDealer``). The rest is the report's summary.
PER_PERSON = ("players", "dealers", "dealer_tables")
# The groups outside their bands (a busy day's 1,500 and more): whole in the figures, in rows of
# their own too (``audit.ReportFlag``), never in the summary.
FLAGS = ("flags",)
TO_DATES = ("month_to_date", "year_to_date")  # the periods to date a single day's figures carry


def summary_of(stored: dict) -> dict:
    """Stored figures (of any version) without their players' and dealers' parts and their flags,
    the months' and years' too: what a report's page and its staleness read, a small part of the
    whole."""
    left_out = (*PER_PERSON, *FLAGS)
    summary = {key: value for key, value in stored.items() if key not in left_out}
    for period in TO_DATES:
        if isinstance(summary.get(period), dict):
            summary[period] = {key: value for key, value in summary[period].items() if key not in left_out}
    return summary


def stored_name(name: str) -> str:
    """A top-level name of the stored figures, for a query that reads one part of them."""
    if name not in ReportFigures.model_fields:
        raise KeyError(f"{name!r} is not a declared part of a report's figures")
    return name
