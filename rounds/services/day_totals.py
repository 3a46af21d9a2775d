"""The days' totals (``rounds.models.DayTotal``) kept in step with the rounds and seats they sum.

Every write that changes what a round adds to the books sends its change here, in its own
transaction: the ingest adds new rounds (``write_plan.write``), a void and a placement move a
stored round from what it added to what it adds now, an archived month takes its days out and
an attached one puts them back. A change adds to the rows of its keys (``INSERT … ON CONFLICT
DO UPDATE``, in key order), so two transactions never overwrite each other's sums. It is sent
once the transaction holds the audit chain's head (``infra.locks``: ``rounds.DayTotal`` ranks
after it), in the round trip that locks the head where it can: only a holder of the head writes
a total, so a total's row lock never waits, and a caller that stores many rounds in one
transaction (the demo) takes no lock out of order.

What a seat adds is what the reports' grouped sums count (``rounds.selectors.seat_money_annotations``):
``recounted`` asks those of the seats themselves, ``day_totals_rebuild`` writes what they
say, and ``day_totals_differences`` names every row that differs from them (the nightly
report's alert, tests/rounds/test_day_totals.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from operator import attrgetter

from django.db import connection, transaction
from django.db.models import Count, F, Max, Min, Q, Sum, Value
from django.db.models.functions import Coalesce

from game.bets import COUNTED_ONLY_WHEN_LIT
from game.findings import PAYOUT_MISMATCH
from game.vocabulary import BETS
from infra import locks, sql
from infra.jsons import write_json
from rounds.models import DayTotal, Finding, Round, Seat, Table, TableConfigVersion
from rounds.selectors import OVERPAID, UNDERPAID, seat_money_annotations
from trail.services import Actor, audit_record

from .work_tally import work_tally_rebuild

Key = tuple[date, int, str, int]  # gaming day, table, dealer, configuration version
KEY = ("gaming_day", "table_id", "dealer", "config_version_id")
COUNTS = ("rounds", "held", "hands")
MONEY = tuple(f"{kind}_{bet}" for kind in ("handle", "result", "paid") for bet in BETS)
# The round's payout mismatches (never the informational ones), held rounds' too, as the
# findings count them: a finding is written with its round and never after.
MISMATCHES = ("mismatches", "overpaid", "underpaid", "overpaid_amount", "underpaid_amount")
SUMMED = COUNTS + MONEY + MISMATCHES
FIRSTS, LASTS = ("first_at", "first_pk"), ("last_at", "last_pk")  # kept least and greatest
CENT = Decimal("0.01")
NOTHING = Value(Decimal(0))
# Each bet's seat fields (stake, settled, paid) and the totals it adds to, read once a seat.
_BETS_READ = tuple((bet, attrgetter(bet, f"settled_{bet}", f"paid_{bet}"), f"handle_{bet}", f"result_{bet}",
                    f"paid_{bet}") for bet in BETS)


def key_of(round_: Round) -> Key:
    return (round_.gaming_day, round_.table_id, round_.dealer, round_.config_version_id)


def of_round(round_: Round, seats: Sequence[Seat], findings: Iterable[Finding] = ()) -> dict:
    """What one round adds to its key's row, as the reports' sums count its seats: its payout
    mismatches among ``findings`` (its own, where it is new), and nothing but its moment and
    ``held`` while it is held apart; else a round, its live seats as hands, each bet's handle
    where handled (live; the Progressive only when lit), and every seat's settled result and what
    it was paid (as reported, else as settled)."""
    adds = dict.fromkeys(SUMMED, 0)
    adds["first_at"] = adds["last_at"] = round_.dealt_at
    adds["first_pk"] = adds["last_pk"] = round_.pk
    for finding in findings:
        if finding.code != PAYOUT_MISMATCH or finding.informational:
            continue
        adds["mismatches"] += 1
        # Which way the dealer erred, as ``rounds.selectors.OVERPAID`` and ``UNDERPAID`` ask it
        # (an amount not named is neither, as SQL's comparison with NULL is).
        claimed, expected = finding.claimed, finding.expected
        if claimed is None or expected is None:
            continue
        if claimed > expected:
            adds["overpaid"] += 1
            adds["overpaid_amount"] += claimed - expected
        elif claimed < expected:
            adds["underpaid"] += 1
            adds["underpaid_amount"] += expected - claimed
    if round_.held:
        adds["held"] = 1
        return adds
    adds["rounds"] = 1
    live = not round_.void and round_.status != Round.Status.VOID
    if live:
        adds["hands"] = len(seats)
    for bet, read, handle, result, paid_out in _BETS_READ:
        handled = settled_sum = paid_sum = 0
        for seat in seats:
            stake, settled, paid = read(seat)
            settled_sum += settled
            paid_sum += settled if paid is None else paid
            if bet not in COUNTED_ONLY_WHEN_LIT or seat.progressive_lit:
                handled += stake
        adds[result] = settled_sum
        adds[paid_out] = paid_sum
        if live:
            adds[handle] = handled
    return adds


def of_rounds(rounds: Sequence[Round], seats: Sequence[Seat], findings: Sequence[Finding] = (),
              into: dict[Key, dict] | None = None) -> dict[Key, dict]:
    """What new ``rounds`` (with ``seats`` and ``findings``, theirs) add, by key; added to ``into``
    where given."""
    seats_of: dict[int, list[Seat]] = {}
    for seat in seats:
        seats_of.setdefault(seat.round_id, []).append(seat)
    findings_of: dict[int, list[Finding]] = {}
    for finding in findings:
        findings_of.setdefault(finding.round_id, []).append(finding)
    added: dict[Key, dict] = {} if into is None else into
    for round_ in rounds:
        _add(added.setdefault(key_of(round_), {}),
             of_round(round_, seats_of.get(round_.pk, ()), findings_of.get(round_.pk, ())))
    return added


def _add(into: dict, adds: dict, sign: int = 1) -> None:
    if not into:
        into.update({name: adds[name] for name in (*FIRSTS, *LASTS)}, **dict.fromkeys(SUMMED, 0))
    for first, last in zip(FIRSTS, LASTS):
        into[first], into[last] = min(into[first], adds[first]), max(into[last], adds[last])
    for name in SUMMED:
        into[name] += sign * adds[name]


def moved(round_: Round, *, before: dict, after: dict) -> list[sql.Statement]:
    """A stored round's change (void, placed) as the difference of what it added ``before`` and
    adds ``after`` (``of_round``), made to its key's row (which its moment is in already)."""
    change = {name: after[name] - before[name] for name in SUMMED if after[name] != before[name]}
    if not change:
        return []
    row = DayTotal.objects.filter(**dict(zip(KEY, key_of(round_))))
    return [locks.raw_lock_statement("rounds.DayTotal", sql.update(
        row, **{name: F(name) + delta for name, delta in change.items()}))]


def added_statements(added: dict[Key, dict]) -> list[sql.Statement]:
    """Each key's row added to (made where it is missing), in key order: one statement."""
    if not added:
        return []
    keys = sorted(added)
    if connection.vendor == "postgresql":
        rows = [{**dict(zip(KEY, key)), **_columns_of(added[key])} for key in keys]
        return [locks.raw_lock_statement("rounds.DayTotal", sql.raw(
            _UPSERT_JSON, [write_json(rows, default=_json_text)], prepare=True))]
    params = []
    for key in keys:
        row = {**dict(zip(KEY, key)), **_columns_of(added[key])}
        params += [_sqlite_value(column, row[column]) for column in _COLUMNS]
    values = ", ".join(["(" + ", ".join(["%s"] * len(_COLUMNS)) + ")"] * len(keys))
    return [locks.raw_lock_statement("rounds.DayTotal", sql.raw(
        f"INSERT INTO {_TABLE} ({_COLUMN_LIST}) VALUES {values} {_ON_CONFLICT}", params))]


def _column(name: str) -> str:
    return DayTotal._meta.get_field(name).column


_TABLE = f'"{DayTotal._meta.db_table}"'
_COLUMNS = tuple(_column(name) for name in (*KEY, *FIRSTS, *LASTS, *SUMMED))
_COLUMN_LIST = ", ".join(f'"{c}"' for c in _COLUMNS)
_CONFLICT_KEY = ", ".join(f'"{_column(name)}"' for name in KEY)
# Portable to both databases: the table's own name, not an alias, and the moments kept by CASE
# (SQLite's two-argument min() is NULL-blind the other way from PostgreSQL's LEAST).
_ON_CONFLICT = (
    f"ON CONFLICT ({_CONFLICT_KEY}) DO UPDATE SET "
    + ", ".join(f'"{c}" = {_TABLE}."{c}" + excluded."{c}"' for c in map(_column, SUMMED))
    + "".join(f', "{c}" = CASE WHEN excluded."{c}" {than} {_TABLE}."{c}" THEN excluded."{c}" ELSE {_TABLE}."{c}" END'
              for names, than in ((FIRSTS, "<"), (LASTS, ">")) for c in map(_column, names))
)
_UPSERT_JSON = (
    f"INSERT INTO {_TABLE} ({_COLUMN_LIST}) SELECT {_COLUMN_LIST} "
    f"FROM json_populate_recordset(NULL::{_TABLE}, %s) ORDER BY {_CONFLICT_KEY} {_ON_CONFLICT}"
)


def _columns_of(change: dict) -> dict:
    return {_column(name): change[name] for name in (*FIRSTS, *LASTS, *SUMMED)}


def _json_text(value):
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a column value")


def _sqlite_value(column: str, value):
    return DayTotal._meta.get_field(column).get_db_prep_value(value, connection, prepared=False)


# ---- the seats' own count ----------------------------------------------------------------------


def recounted(*, day_from: date, day_to: date, models=None, using: str = "default") -> dict[Key, dict]:
    """The rows the rounds and seats of ``day_from``…``day_to`` make, counted by the database as the
    reports count them (on ``using``: the nightly report's replica). ``models``: (Round, Seat,
    Finding) of a migration's history, else the app's."""
    all_rounds, all_seats, all_findings = (model.objects.using(using) for model in models or (Round, Seat, Finding))
    days = {"gaming_day__gte": day_from, "gaming_day__lte": day_to}
    rows: dict[Key, dict] = {}
    # Each query is read whole, not through a server-side cursor (``iterator``): its rows are a
    # few a table and day, and a cursor asks PostgreSQL for the plan that answers its first rows
    # soonest (``cursor_tuple_fraction``), a poor one for an answer read to its end.
    rounds = (all_rounds.filter(**days).order_by()
              .values_list("gaming_day", "table_id", "dealer", "config_version_id")
              .annotate(n=Count("id", filter=Q(held=False)), held_n=Count("id", filter=Q(held=True)),
                        first=Min("dealt_at"), last=Max("dealt_at"), first_pk=Min("id"), last_pk=Max("id")))
    for day, table, dealer, version, n, held, first, last, first_pk, last_pk in rounds:
        rows[(day, table, dealer, version)] = {"first_at": first, "last_at": last, "first_pk": first_pk,
                                               "last_pk": last_pk, "rounds": n, "held": held,
                                               **dict.fromkeys(SUMMED[2:], 0)}
    seats = (all_seats.filter(**days, round__gaming_day__gte=day_from, round__gaming_day__lte=day_to,
                                       round__held=False).order_by()
             .values("gaming_day", "round__table_id", "round__dealer", "round__config_version_id")
             .annotate(**seat_money_annotations()))
    for row in seats:
        found = rows[(row["gaming_day"], row["round__table_id"], row["round__dealer"],
                      row["round__config_version_id"])]
        found["hands"] = row["hands"]
        for name in MONEY:
            # SQLite sums in floating point; PostgreSQL's exact sums are at cents already.
            found[name] = Decimal(row[name]).quantize(CENT)
    over, under = OVERPAID, UNDERPAID
    mismatches = (all_findings.filter(code=PAYOUT_MISMATCH, informational=False,
                                               round__gaming_day__gte=day_from, round__gaming_day__lte=day_to)
                  .order_by().values_list("round__gaming_day", "round__table_id", "round__dealer",
                                          "round__config_version_id")
                  .annotate(n=Count("id"), over=Count("id", filter=over), under=Count("id", filter=under),
                            over_amount=Coalesce(Sum(F("claimed") - F("expected"), filter=over), NOTHING),
                            under_amount=Coalesce(Sum(F("expected") - F("claimed"), filter=under), NOTHING)))
    for *key, n, over_n, under_n, over_amount, under_amount in mismatches:
        rows[tuple(key)].update(mismatches=n, overpaid=over_n, underpaid=under_n,
                                overpaid_amount=Decimal(over_amount).quantize(CENT),
                                underpaid_amount=Decimal(under_amount).quantize(CENT))
    return rows


def day_totals_rebuild(*, day_from: date, day_to: date, models=None) -> int:
    """``day_from``…``day_to``'s totals written again from their seats (a migration's first fill,
    an attached month, a bench's cloned rounds); how many rows. ``models``: (Round, Seat, Finding,
    DayTotal) of a migration's history, else the app's."""
    *counted, total_model = models or (Round, Seat, Finding, DayTotal)
    with transaction.atomic():
        total_model.objects.filter(gaming_day__gte=day_from, gaming_day__lte=day_to).delete()
        rows = recounted(day_from=day_from, day_to=day_to, models=tuple(counted))
        total_model.objects.bulk_create(
            [total_model(**dict(zip(KEY, key)), **row) for key, row in sorted(rows.items())], batch_size=1000)
    return len(rows)


def day_totals_rewritten(*, day_from: date, day_to: date, actor: Actor) -> int:
    """``day_totals_rebuild`` asked by a person (``manage.py day_totals --rebuild``) while the
    service runs, and the work to do of the same days (``work_tally.work_tally_rebuild``): recorded
    in the audit trail first, whose head the transaction then holds while it counts, so no ingest,
    void, placement or move of a finding writes a total meanwhile (each holds the head before it
    writes one: ``infra.locks``) and none is counted twice or lost. How many day totals."""
    with transaction.atomic():
        audit_record(actor=actor, action="day_totals.rebuilt", object_type=DayTotal._meta.label_lower,
                     object_repr=f"{day_from}…{day_to}", after={"day_from": day_from, "day_to": day_to})
        work_tally_rebuild(day_from=day_from, day_to=day_to)
        return day_totals_rebuild(day_from=day_from, day_to=day_to)


def day_totals_forget(*, day_from: date, day_to: date) -> int:
    """The totals of days whose rounds have left the tables (an archived month)."""
    deleted, _ = DayTotal.objects.filter(gaming_day__gte=day_from, gaming_day__lte=day_to).delete()
    return deleted


def day_totals_differences(*, day_from: date, day_to: date, using: str = "default") -> list[str]:
    """Every key whose stored totals differ from what its seats count now, in words (both read on
    ``using``); none when they agree."""
    counted = recounted(day_from=day_from, day_to=day_to, using=using)
    kept = (*FIRSTS, *LASTS, *SUMMED)
    stored = {
        tuple(row[:4]): dict(zip(kept, row[4:]))
        for row in DayTotal.objects.using(using).filter(gaming_day__gte=day_from, gaming_day__lte=day_to)
        .values_list(*KEY, *kept)
    }
    keys = set(counted) | set(stored)
    # Named as people name them: the table's code, the configuration's name and version.
    tables = dict(Table.objects.using(using).filter(pk__in={key[1] for key in keys}).values_list("pk", "code"))
    versions = {pk: f"{name} v{number}" for pk, name, number in TableConfigVersion.objects.using(using).filter(
        pk__in={key[3] for key in keys}).values_list("pk", "config__name", "version")}
    differences = []
    for key in sorted(keys):
        day, table, dealer, version = key
        where = f"{day} table {tables.get(table, table)} dealer {dealer or '-'} ({versions.get(version, version)})"
        mine, theirs = stored.get(key), counted.get(key)
        if mine is None:
            differences.append(f"{where}: no totals kept for its {theirs['rounds'] + theirs['held']} round(s)")
        elif theirs is None:
            differences.append(f"{where}: totals kept for {mine['rounds'] + mine['held']} round(s) not stored")
        else:
            wrong = [f"{name} {mine[name]} kept, {theirs[name]} counted"
                     for name in kept if mine[name] != theirs[name]]
            if wrong:
                differences.append(f"{where}: " + "; ".join(wrong))
    return differences
