"""The findings that cannot wait, found and mailed (``rounds.notices.tell``), each notice kept in the trail.

Told at once: a payout mismatch of at least ``NOTICE_MISMATCH_AT_LEAST`` in
its round's currency, a progressive award taken from the meter (a jackpot; a
fixed award is the house's ordinary pay), every new game-protection finding,
and every escalated case. A kind of finding is read after its ``NoticeMark``
(the last key a run looked at) and, whatever the mark says, over the last
``WINDOW``: a finding whose key was drawn before another's but committed
after it, a notice the mail server refused (tried again ``RETRY_AFTER`` after
its last refusal), and an escalation whose mail never went are told then.
What is told is decided in SQL (the amounts, the meter's awards, no notice
sent yet), so a batch of ``MOST`` holds only what is to be told.

A table's round findings are told by kind (mismatches, jackpots): its first
at once, and what follows within ``NOTICE_GROUP_WINDOW`` of a notice sent
waits, to be told in one notice that names every finding, so a table that
overpays round after round sends a mail or two, not one a round.

One run at a time (``infra.locks.one_at_a_time``), with no transaction held
open while a mail server answers. Runs after each stored round that may need
it (``rounds.notices.due``), after the nightly protection, and every five
minutes from the schedule.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import CharField, Count, Exists, Max, OuterRef, Q, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone

from audit.models import NoticeMark, ProtectionFinding, VarianceFinding
from game.vocabulary import FindingCode, MeterEventKind
from infra.moments import moment_shown
from infra import locks
from infra.money_display import money
from infra.work import WorkedFinding
from progressive.models import MeterEvent
from rounds import mistakes, notices
from rounds.models import Finding
from rounds.selectors import AT_STAKE
from trail.models import AuditEvent

WINDOW = timedelta(days=1)
RETRY_AFTER = timedelta(hours=1)
# The most notices one run tells of a kind: a backlog is told over a few runs.
MOST = 500
ROUND_FINDINGS, PROTECTION_FINDINGS, ESCALATIONS, KINDS = (
    notices.ROUND_FINDINGS, notices.PROTECTION_FINDINGS, notices.ESCALATIONS, notices.KINDS)
JOB = "audit.notices"


def notices_send(*, now: datetime | None = None, kinds: tuple[str, ...] = KINDS) -> dict[str, int]:
    """Tell what is due of each of ``kinds`` (a stored round asks for its own kind only); how many
    notices each told (``{}``: another run is telling)."""
    now = now or timezone.now()
    runs = {
        ROUND_FINDINGS: lambda: _marked(ROUND_FINDINGS, Finding, _round_rows, _round_notices, notices.Why.MISMATCH,
                                        now),
        PROTECTION_FINDINGS: lambda: _marked(PROTECTION_FINDINGS, ProtectionFinding, _protection_rows,
                                             lambda rows, now: [_protection_notice(row) for row in rows],
                                             notices.Why.SUSPICION, now),
        ESCALATIONS: lambda: _escalations(now),
    }
    with locks.one_at_a_time(JOB) as mine:
        if not mine:
            return {}
        return {kind: runs[kind]() for kind in kinds}


def notices_unsent(*, since: datetime) -> dict[str, int]:
    """Notices since ``since`` not sent yet (the mail server refused them and no retry has gone
    since, or nobody could be told), by why: the supervisors may not know what they must."""
    actions = [f"{model.work_name}.notified" for model in (Finding, VarianceFinding, ProtectionFinding)]
    notified = AuditEvent.objects.filter(action__in=actions, at__gte=since)
    sent_since = notified.filter(object_type=OuterRef("object_type"), object_id=OuterRef("object_id"),
                                 after__why=OuterRef("after__why"), after__sent=True, seq__gt=OuterRef("seq"))
    rows = (notified.filter(after__sent=False).exclude(Exists(sent_since))
            .values_list("after__why").order_by().annotate(n=Count("id")))
    return {str(why): n for why, n in rows}


def _untold(model: type[WorkedFinding], whys: tuple[str, ...], now: datetime) -> Q:
    """No notice of ``whys`` about the finding was sent, or found nobody to tell, or was refused within
    ``RETRY_AFTER``."""
    events = AuditEvent.objects.filter(object_type=model._meta.label_lower, action=f"{model.work_name}.notified",
                                       object_id=Cast(OuterRef("pk"), CharField()), after__why__in=list(whys))
    settled = events.filter(Q(after__sent=True) | Q(after__retry=False))
    return ~Exists(settled) & ~Exists(events.filter(at__gte=now - RETRY_AFTER))


def _marked(source: str, model, rows_of, notices_of, why: str, now: datetime) -> int:
    """The findings of one kind after its mark or within the window, still to be told; the mark moved
    to the last key read once they are told."""
    mark = NoticeMark.objects.get_or_create(source=source)[0].last_id
    newest = model.objects.aggregate(last=Max("pk"))["last"] or 0
    read = model.objects.filter(Q(pk__gt=mark) | Q(created_at__gte=now - WINDOW), pk__lte=newest)
    whys = (notices.Why.MISMATCH, notices.Why.JACKPOT) if model is Finding else (why,)
    rows = list(rows_of(read).filter(_untold(model, whys, now)).order_by("pk")[:MOST])
    told = notices.tell(notices_of(rows, now))
    # A full batch may have more behind it: the mark goes no further than the batch read.
    last = rows[-1].pk if len(rows) == MOST else newest
    NoticeMark.objects.filter(source=source, last_id__lt=last).update(last_id=last)
    return len(told)


def _round_rows(read: QuerySet) -> QuerySet:
    at_least = Q()
    for currency, amount in settings.NOTICE_MISMATCH_AT_LEAST.items():
        at_least |= Q(round__config_version__currency=currency, stake__gte=amount)
    mismatches = Q(code=FindingCode.PAYOUT_MISMATCH.value) & (at_least if at_least else Q(pk__in=[]))
    from_meter = Exists(MeterEvent.objects.filter(kind=MeterEventKind.AWARD.value, round_id=OuterRef("round_id"),
                                                  seat=OuterRef("seat")))
    jackpots = Q(code=FindingCode.PROGRESSIVE_AWARD.value) & Q(from_meter=True)
    return (read.annotate(stake=AT_STAKE, from_meter=from_meter).filter(mismatches | jackpots)
            .select_related("round__table", "round__config_version"))


def _round_notices(rows: list[Finding], now: datetime) -> list[notices.Notice]:
    """A table's findings of a kind told as one notice; none while its last notice of that kind is
    younger than ``NOTICE_GROUP_WINDOW`` (they wait in the window's tail, and a later run tells them)."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in rows:
        groups.setdefault((finding.round.table.code, _why(finding)), []).append(finding)
    told = []
    for (table, why), found in groups.items():
        if _told_lately(table, why, since=now - settings.NOTICE_GROUP_WINDOW):
            continue
        told.append(_round_notice(found[0]) if len(found) == 1 else _grouped_notice(table, why, found))
    return told


def _why(finding: Finding) -> str:
    return notices.Why.MISMATCH if finding.code == FindingCode.PAYOUT_MISMATCH.value else notices.Why.JACKPOT


def _told_lately(table: str, why: str, *, since: datetime) -> bool:
    return AuditEvent.objects.filter(action=f"{Finding.work_name}.notified", at__gte=since, after__group=table,
                                     after__why=why, after__sent=True).exists()


def _grouped_notice(table: str, why: str, found: list[Finding]) -> notices.Notice:
    """One notice naming every one of ``found`` (a table's findings of one kind), with its sums."""
    totals: dict[str, Decimal] = {}
    for finding in found:
        currency = finding.round.config_version.currency
        amount = finding.stake if why == notices.Why.MISMATCH else finding.expected
        totals[currency] = totals.get(currency, Decimal(0)) + amount  # each currency its own sum
    in_all = ", ".join(money(amount, currency) for currency, amount in sorted(totals.items()))
    what = "payout mismatches" if why == notices.Why.MISMATCH else "jackpots"
    lines = "".join(f"- {_round_notice(finding).subject}\n" for finding in found)
    return notices.Notice(
        found[0], why, f"{len(found)} {what} at {table}, {in_all} in all",
        f"{len(found)} {what} at {table} since its last notice of them, {in_all} in all:\n\n{lines}",
        mates=tuple(found[1:]), group=table)


def _round_notice(finding: Finding) -> notices.Notice:
    round_ = finding.round
    currency = round_.config_version.currency
    where = f"{round_.table.code} round {round_.round_id}, seat {finding.seat}"
    dealt = f"dealt {moment_shown(round_.dealt_at)}, gaming day {round_.gaming_day}"
    if finding.code == FindingCode.PAYOUT_MISMATCH.value:
        return notices.Notice(
            finding, notices.Why.MISMATCH, f"Payout mismatch of {money(finding.stake, currency)} at {where}",
            f"{where} ({finding.bet}): the rules pay {money(finding.expected, currency)}, the dealer paid "
            f"{money(finding.claimed, currency)}; {dealt}, dealer {round_.dealer}.\n\n{finding.detail}\n",
            group=round_.table.code)
    return notices.Notice(
        finding, notices.Why.JACKPOT, f"Jackpot of {money(finding.expected, currency)} at {where}",
        f"{where} won {money(finding.expected, currency)} from the progressive meter: {finding.detail}; "
        f"{dealt}, dealer {round_.dealer}.\n", group=round_.table.code)


def _protection_rows(read: QuerySet) -> QuerySet:
    return read


def _protection_notice(finding: ProtectionFinding) -> notices.Notice:
    what = finding.code.replace("_", " ")
    return notices.Notice(
        finding, notices.Why.SUSPICION, f"Suspicion: {what} — {finding.key}",
        f"Game protection raised {what} for {finding.key}, gaming days {finding.day_from} to {finding.day_to}: "
        f"figure {finding.figure} against {finding.threshold}.\n\n{finding.detail}\n")


def _escalations(now: datetime) -> int:
    """Cases escalated within the window whose supervisors' mail never went (``case_escalate`` tells
    them at once; this is for a mail refused or a process gone between the two)."""
    found = []
    for model in (Finding, VarianceFinding, ProtectionFinding):
        rows = list(model.objects.filter(escalated_at__gte=now - WINDOW).filter(
            _untold(model, (notices.Why.ESCALATED,), now)).order_by("pk")[:MOST])
        # Each one's escalation as the trail has it, in one read (the last, where there are several).
        escalated = {event.object_id: event for event in AuditEvent.objects.filter(
            object_type=model._meta.label_lower, object_id__in=[str(f.pk) for f in rows],
            action=f"{model.work_name}.escalated").order_by("seq")}
        # The findings of one mistake escalated together are told as one, by the first of them.
        together: dict[tuple, list] = {}
        for finding in rows:
            together.setdefault(mistakes.mistake_of(finding), []).append(finding)
        for finding, *mates in together.values():
            event = escalated.get(str(finding.pk))
            after = event.after if event is not None and isinstance(event.after, dict) else {}
            found.append(notices.escalation_notice(finding, by=event.actor_name if event else "someone",
                                                   note=after.get("note", ""), mates=mates))
    return len(notices.tell(found))
