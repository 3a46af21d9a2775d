"""The rounds' and findings' CSV exports: their columns, and their rows from any queryset
(the admin's list as filtered) or a period of gaming days (the API's)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, islice

from django.db import DEFAULT_DB_ALIAS
from django.db.models import QuerySet

from game.rules import BETS
from infra import exports as shared
from infra.exports import Column, Export, Period, formed, header, moment, plain, rows_of

from .models import Finding, Round, Seat
from .selectors import seat_handle

# A row a seat, read of the seat; the round's amounts are in its configuration's currency.
ROUND_COLUMNS: list[Column] = [
    Column("table", "round__table__code"), Column("round", "round__round_id"),
    Column("dealt_at", "round__dealt_at", moment), Column("gaming_day", "round__gaming_day"),
    Column("dealer", "round__dealer"), Column("status", "round__status"), Column("void", "round__void"),
    Column("config", "round__config_version__config__name"),
    Column("config_version", "round__config_version__version"),
    *plain("seat", "player", "hole", "hand", "decision"),
    Column("currency", "round__config_version__currency"),
    *plain(*BETS), *plain(*[f"settled_{bet}" for bet in BETS]), *plain(*[f"paid_{bet}" for bet in BETS]),
    # What the seat adds to the handle, as the reports count it: 0 in a void round (its bets were
    # returned) or one held apart from the books, the Progressive only when lit.
    *plain("progressive_lit", "handle"),
]

FINDING_COLUMNS: list[Column] = [
    Column("id", "id"), Column("created_at", "created_at", moment),
    Column("table", "round__table__code"), Column("round", "round__round_id"),
    Column("dealt_at", "round__dealt_at", moment), Column("gaming_day", "round__gaming_day"),
    Column("dealer", "round__dealer"), *plain("code", "informational", "seat", "bet"),
    Column("currency", "round__config_version__currency"), *plain("expected", "claimed", "detail", "state"),
    Column("state_changed_at", "state_changed_at", moment), Column("state_changed_by", "state_changed_by_name"),
    Column("state_note", "state_note"),
]


def round_rows_of(rounds: QuerySet[Round]) -> Iterator[list]:
    """A row for each seat of ``rounds``, the rounds in the queryset's order, each round's
    seats by number. The rounds are read a chunk at a time, then their seats (with the
    chunk's gaming days too: on PostgreSQL only those days' partitions are read)."""
    yield header(ROUND_COLUMNS)
    fields = [column.field for column in ROUND_COLUMNS]
    # About CHUNK seats a chunk: a round has three or four seats taken on average.
    per_chunk = max(1, shared.CHUNK // 4)
    listed = rounds.values_list("pk", "gaming_day").iterator(chunk_size=shared.CHUNK)
    while chunk := list(islice(listed, per_chunk)):
        seats: dict[int, list[tuple]] = {}
        read = (
            Seat.objects.using(rounds.db)
            .filter(round_id__in=[pk for pk, _ in chunk], gaming_day__in={day for _, day in chunk})
            .order_by("round_id", "seat")
            .annotate(handle=seat_handle())
            .values_list(*fields, "round_id")
        )
        for seat in read:
            seats.setdefault(seat[-1], []).append(seat)
        yield from formed(ROUND_COLUMNS, chain.from_iterable(seats.get(pk, ()) for pk, _ in chunk), extra=1)


def finding_rows_of(findings: QuerySet[Finding]) -> Iterator[list]:
    return rows_of(FINDING_COLUMNS, findings)


def round_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    rounds = Round.objects.using(using).filter(gaming_day__range=(period.first_day, period.last_day))
    return round_rows_of(rounds.order_by("gaming_day", "pk"))


def finding_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    findings = Finding.objects.using(using).filter(round__gaming_day__range=(period.first_day, period.last_day))
    return finding_rows_of(findings.order_by("id"))


ROUNDS = Export("rounds", Round, "rounds.view_round", round_rows_of)
FINDINGS = Export("findings", Finding, "rounds.view_finding", finding_rows_of)
