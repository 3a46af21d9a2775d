"""One mistake, several findings: a seat's findings that one mistake raised once for each bet.

An Ante off the 50 kr unit is one mistake, yet the engine raises ``bet_off_unit``
on the Ante, the Blind and the Play, since the contract's finding names one
bet (``game.vocabulary.ONE_PER_BET_CODES``); the table's answer keeps them so.
For the people who work them, the findings of one round's seat with such a
code that stand in the same state are *mates*: the queues show the first of
them alone, naming the bets (``one_row_each``, ``bets_of``), and a move or a
change of the case made on one is made on its mates too
(``rounds.services.findings``, ``rounds.services.cases``), each with an event of
its own, so that every finding's trail still proves its own columns.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from django.db.models import Exists, OuterRef, Q, QuerySet, prefetch_related_objects

from game.vocabulary import BETS, ONE_PER_BET_CODES
from infra import locks

from .models import Finding

# The columns mates share; ``state`` besides (a mate moved apart is a mistake of its own again).
_SHARED = ("round", "seat", "code")


def mistake_of(finding) -> tuple:
    """What the finding is one of: its seat's mistake for a code raised once per bet, else itself."""
    if isinstance(finding, Finding) and finding.code in ONE_PER_BET_CODES:
        return (finding.round_id, finding.seat, finding.code, finding.state)
    return (type(finding)._meta.label, finding.pk)


def one_row_each(queryset: QuerySet) -> QuerySet:
    """``queryset`` (of rounds' findings) with one row for each mistake: a finding whose earlier mate
    is in ``queryset`` too is left out, so that a list and the count of it agree."""
    earlier = queryset.filter(pk__lt=OuterRef("pk"), state=OuterRef("state"),
                              **{name: OuterRef(name) for name in _SHARED})
    return queryset.exclude(Q(code__in=ONE_PER_BET_CODES) & Exists(earlier.order_by()))


def locked_with_mates(model, ids: Iterable[int]) -> tuple[list, list]:
    """``model``'s findings ``ids`` and their mates, locked together in the one order (``infra.locks``):
    those of ``ids`` that exist, then they and the mates still in their state once locked (a move or a
    change of the case reaches these)."""
    named, standing, _ = locked_mistakes(model, ids)
    return named, standing


def locked_mistakes(model, ids: Iterable[int]) -> tuple[list, list, list]:
    """``locked_with_mates``, and all that was locked in key order: with them, their mistakes'
    findings in the other states, so that what a move changes in the work still to do is counted
    from rows no one else moves meanwhile (``rounds.services.work_tally``)."""
    ids = set(ids)
    reached = _reach(model, ids)
    locked = list(locks.rows_locked(model.objects.filter(pk__in=reached), reached))
    if model is Finding:
        # Each is named by its table and round in its audit event and its messages (Finding.__str__).
        prefetch_related_objects(locked, "round__table")
    named = [finding for finding in locked if finding.pk in ids]
    return named, _standing_with(named, locked), locked


def _reach(model, ids: set[int]) -> list[int]:
    """``ids`` and the keys of their mistakes' findings in any state, read without a lock: what is
    then locked (those still mates once locked are a move's)."""
    if model is not Finding or not ids:
        return sorted(ids)
    named = list(Finding.objects.filter(pk__in=ids, code__in=ONE_PER_BET_CODES)
                 .values_list("round_id", "seat", "code"))
    if not named:
        return sorted(ids)
    wanted = set(named)
    candidates = Finding.objects.filter(round_id__in={row[0] for row in named}, code__in=ONE_PER_BET_CODES)
    mates = (pk for pk, *row in candidates.values_list("pk", "round_id", "seat", "code")
             if tuple(row) in wanted)
    return sorted(ids | set(mates))


def _standing_with(named: list, locked: Iterable) -> list:
    """``named`` and those of ``locked`` still mates of one of them now that all are locked."""
    mistakes = {mistake_of(finding) for finding in named}
    keys = {finding.pk for finding in named}
    return [*named, *(finding for finding in locked
                      if finding.pk not in keys and mistake_of(finding) in mistakes)]


def named(findings: Iterable) -> str:
    """Findings of a mistake as a person reads them: "#12 (blind), #13 (play)"."""
    return ", ".join(f"#{finding.pk} ({getattr(finding, 'bet', '') or '–'})" for finding in findings)


def mates_of(finding) -> list:
    """The finding's mates (not itself), by key; none for a finding that stands alone."""
    if not isinstance(finding, Finding) or finding.code not in ONE_PER_BET_CODES:
        return []
    return list(Finding.objects.filter(round_id=finding.round_id, seat=finding.seat, code=finding.code,
                                       state=finding.state).exclude(pk=finding.pk).order_by("pk"))


def bets_of(findings: Iterable[Finding]) -> dict[int, list[tuple[str, Decimal | None]]]:
    """For each of ``findings`` that has mates, each bet of its mistake and the amount claimed on it,
    in the bets' order: one read for them all."""
    findings = [finding for finding in findings if finding.code in ONE_PER_BET_CODES]
    if not findings:
        return {}
    bets: dict[tuple, dict[str, Decimal | None]] = {}
    rows = Finding.objects.filter(round_id__in={f.round_id for f in findings}, code__in=ONE_PER_BET_CODES)
    for round_id, seat, code, state, bet, claimed in rows.values_list(
            "round_id", "seat", "code", "state", "bet", "claimed"):
        bets.setdefault((round_id, seat, code, state), {})[bet] = claimed
    order = {bet: n for n, bet in enumerate(BETS)}
    shown = {}
    for finding in findings:
        found = bets.get(mistake_of(finding), {})
        if len(found) > 1:
            shown[finding.pk] = sorted(found.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))
    return shown
