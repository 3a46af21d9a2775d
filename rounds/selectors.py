"""Reads of rounds and their configuration."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import reduce

from django.contrib.postgres.expressions import ArraySubquery
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import (
    BooleanField,
    Case,
    Count,
    Max,
    Min,
    Exists,
    F,
    Func,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Abs, Coalesce

from game.bets import COUNTED_ONLY_WHEN_LIT
from game.versions import in_force
from game.vocabulary import BETS
from infra.work import UNRESOLVED
from progressive.models import MeterEvent
from progressive.selectors import pool_version_in_force  # noqa: F401 (read from here too)
from trail.models import AuditEvent

from .models import DayTotal, Finding, Round, Seat, TableConfig, TableConfigVersion


def config_version_in_force(*, config: TableConfig, at: datetime) -> TableConfigVersion:
    """The version of ``config`` that was in force at ``at`` (``game.versions.in_force``)."""
    versions = TableConfigVersion.objects.filter(config=config).select_related("config", "pool")
    return _in_force(versions, at, f"configuration {config.name} has no version")


def _in_force(versions: QuerySet, at: datetime, missing: str):
    # A configuration has a handful of versions: all of them, and the one rule.
    rows = list(versions)
    if not rows:
        raise versions.model.DoesNotExist(missing)
    return in_force(((v, v.effective_from, v.version) for v in rows), at)


def rounds_in_range(*, day_from: date, day_to: date, using: str = DEFAULT_DB_ALIAS,
                    held_too: bool = False) -> QuerySet[Round]:
    """The range's rounds in the books: a round held apart (dealt outside the window, not yet
    placed: ``rounds.window``) is in none of its figures; ``held_too`` for the checks that prove
    every stored round (the kept bodies)."""
    rounds = Round.objects.using(using).filter(gaming_day__gte=day_from, gaming_day__lte=day_to)
    return rounds if held_too else rounds.filter(held=False)


def round_list() -> QuerySet[Round]:
    """Rounds with everything their API representation needs, in a fixed number of queries."""
    return Round.objects.select_related(
        "table", "config_version__config", "pool_version__pool"
    ).prefetch_related(
        Prefetch("seats", queryset=Seat.objects.order_by("seat")),
        Prefetch("findings", queryset=Finding.objects.order_by("id")),
        Prefetch("meter_events", queryset=MeterEvent.objects.order_by("seq")),
    )


# A round is filtered by what its findings or seats hold through EXISTS, not a join: a
# join lists a round once per matching row, and the DISTINCT that undoes it compares
# every column, the stored record too, so the planner can neither stop at a page nor
# use an index for the order.


def rounds_with_finding(rounds: QuerySet[Round], *, code: str) -> QuerySet[Round]:
    """Those of ``rounds`` with at least one finding of ``code``, each once."""
    return rounds.filter(Exists(Finding.objects.filter(round=OuterRef("pk"), code=code)))


def player_seated(*, player: str) -> Exists:
    """True of a round where ``player`` held a seat."""
    # The gaming day too: a seat lies in its round's partition, and naming it lets the
    # probe read that partition's index alone.
    return Exists(Seat.objects.filter(
        round=OuterRef("pk"), gaming_day=OuterRef("gaming_day"), player=player
    ))


def rounds_with_player(rounds: QuerySet[Round], *, player: str) -> QuerySet[Round]:
    """Those of ``rounds`` where ``player`` held a seat, each once."""
    return rounds.filter(player_seated(player=player))


def round_detail(*, round_pk: int) -> Round:
    return round_list().get(pk=round_pk)


def round_trail(*, round_: Round, finding_ids) -> QuerySet[AuditEvent]:
    """Every audit event of ``round_`` and of its findings (``finding_ids``), oldest first:
    what the table stored, every move of a finding with its note, a void, a refused change.

    One query, by the (object_type, object_id) index: the findings' ids are the round's,
    already read, so no join or cast of the log's text ids is asked of the database.
    """
    concerns = Q(object_type=Round._meta.label_lower, object_id=str(round_.pk))
    ids = [str(pk) for pk in finding_ids]
    if ids:
        concerns |= Q(object_type=Finding._meta.label_lower, object_id__in=ids)
    return AuditEvent.objects.filter(concerns).order_by("at", "seq")


def findings_of_dealer(findings: QuerySet[Finding], *, dealer: str) -> QuerySet[Finding]:
    """Those of ``findings`` on rounds ``dealer`` dealt."""
    rounds = Round.objects.filter(dealer=dealer).values("pk")
    if connection.vendor != "postgresql":
        return findings.filter(round__in=rounds)
    # The dealer's rounds first, by their (dealer, dealt_at) index, then their findings by
    # round. Joined instead, the planner walks every finding newest first and looks its
    # round up in each partition: for a dealer with few findings, that reads all of them.
    return findings.filter(_AnyOf(F("round_id"), ArraySubquery(rounds)))


class _AnyOf(Func):
    """``value = ANY(array)``, PostgreSQL's membership of an array."""

    template = "(%(expressions)s))"
    arg_joiner = " = ANY("
    output_field = BooleanField()


def finding_list() -> QuerySet[Finding]:
    return Finding.objects.select_related("round__table").order_by("-created_at", "-id")


@dataclass(frozen=True, slots=True)
class RoundMoney:
    """A round's money over its seats, in its configuration's currency.

    ``handle`` is what the round adds to the handle, as every report counts it (``seat_handle``):
    nothing for a void round (its bets were returned) or one held apart from the books.
    ``paid`` and ``difference`` (paid − settled) are over the seats that said what the
    dealer paid; None when none did.
    """

    handle: Decimal
    settled: Decimal
    paid: Decimal | None
    difference: Decimal | None


ZERO = Value(Decimal(0))
# A seat whose bets count in the books: its round not void (a void round's bets are returned)
# and not held apart from them (``rounds.window``).
LIVE_SEAT = Q(round__void=False) & ~Q(round__status=Round.Status.VOID) & Q(round__held=False)


def bet_handled(bet: str) -> Q:
    """When a seat's ``bet`` counts in the handle: a live seat's, and one ``COUNTED_ONLY_WHEN_LIT``
    (the Progressive) only when lit."""
    return LIVE_SEAT & Q(progressive_lit=True) if bet in COUNTED_ONLY_WHEN_LIT else LIVE_SEAT


def seat_handle():
    """A seat's handle, as every report and page counts it: each bet where ``bet_handled``, else 0."""
    return reduce(operator.add, (Case(When(bet_handled(bet), then=F(bet)), default=ZERO) for bet in BETS))


def seat_money_annotations() -> dict:
    """What a group of seats adds up to in money, as every report and page counts it: its live
    hands, and by bet the handle (``handle_*``: wagers of rounds not void, the Progressive only
    when lit), the players' settled results (``result_*``) and what they were paid (``paid_*``:
    where the table reported it, else what the rules give)."""
    annotations = {"hands": Count("id", filter=LIVE_SEAT)}
    for bet in BETS:
        annotations[f"handle_{bet}"] = Coalesce(Sum(bet, filter=bet_handled(bet)), ZERO)
        annotations[f"result_{bet}"] = Coalesce(Sum(f"settled_{bet}"), ZERO)
        annotations[f"paid_{bet}"] = Coalesce(Sum(Coalesce(f"paid_{bet}", f"settled_{bet}")), ZERO)
    return annotations


def round_keys_of_days(*, day_from: date, day_to: date | None = None) -> tuple[int, int] | None:
    """The lowest and the highest key of the rounds dealt from ``day_from`` to ``day_to`` (every later
    day where None), as their days' totals keep them (``DayTotal.first_pk``, ``last_pk``); None
    where those days have none. Rounds of other days may fall between them (a round stored late)."""
    days = {"gaming_day__gte": day_from, **({"gaming_day__lte": day_to} if day_to else {})}
    keys = DayTotal.objects.filter(**days).aggregate(lo=Min("first_pk"), hi=Max("last_pk"))
    return None if keys["lo"] is None else (keys["lo"], keys["hi"])


def of_days(findings: QuerySet, *, day_from: date, day_to: date | None = None) -> QuerySet:
    """``findings`` of the rounds dealt from ``day_from`` to ``day_to`` (every later day where None),
    read by the range of those days' round keys (``round_keys_of_days``) on the findings' index of
    their round, then held to the rounds' own days. Asked by the day alone, PostgreSQL reads every
    round of the days to find the few with findings. Days without totals are asked the slow way,
    never left out."""
    days = {"gaming_day__gte": day_from, **({"gaming_day__lte": day_to} if day_to else {})}
    # Each finding asks its round (a key's look-up), where a join would read every round of the days.
    found = findings.filter(Exists(Round.objects.filter(pk=OuterRef("round_id"), **days)))
    keys = round_keys_of_days(day_from=day_from, day_to=day_to)
    return found if keys is None else found.filter(round_id__gte=keys[0], round_id__lte=keys[1])


def money_of_rounds(rounds: list[Round]) -> dict[int, RoundMoney]:
    """Each round's ``RoundMoney``, for a page of rounds: one grouped query of their seats."""
    if not rounds:
        return {}
    reported = Q(paid_reported=True)

    def total(prefix: str):
        # A reported seat's bet left out of ``paid`` is stored as nothing paid: read it as 0.
        return reduce(operator.add, (Coalesce(F(f"{prefix}{bet}"), ZERO) for bet in BETS))

    rows = (
        Seat.objects.filter(round_id__in=[r.pk for r in rounds], gaming_day__in={r.gaming_day for r in rounds})
        .order_by().values("round_id")
        .annotate(
            handle=Sum(seat_handle()), settled=Sum(total("settled_")),
            paid=Sum(total("paid_"), filter=reported), settled_reported=Sum(total("settled_"), filter=reported),
        )
    )
    return {
        row["round_id"]: RoundMoney(
            handle=row["handle"], settled=row["settled"], paid=row["paid"],
            difference=None if row["paid"] is None else row["paid"] - row["settled_reported"],
        )
        for row in rows
    }


# A finding's money, as every page and report reads it: what it is about, |expected − claimed|
# (null where a finding names no amount), and which way the dealer erred.
AT_STAKE = Abs(F("expected") - F("claimed"))
# A finding still to work: neither closed nor a record of a correct round (the queue's "unresolved").
TO_WORK = Q(state__in=UNRESOLVED, informational=False)
OVERPAID = Q(claimed__gt=F("expected"))  # paid the player more than due
UNDERPAID = Q(claimed__lt=F("expected"))
