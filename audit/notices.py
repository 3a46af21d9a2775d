"""The findings that cannot wait, found after each kind's mark and mailed (``rounds.notices``).

Read from each kind's ``NoticeMark``: a payout mismatch of at least
``NOTICE_MISMATCH_AT_LEAST`` in its round's currency, a progressive award
taken from the meter (a jackpot; a fixed award is the house's ordinary pay),
and every new game-protection finding. The findings of the last
``TAIL_MINUTES`` are read again whatever the mark says: a finding whose key
was drawn before another's but committed after it is not passed over; one
already told (its ``notified`` event) is not told twice. Runs after each
stored round that may need it (``rounds.notices.due``), after the
nightly protection, and every few minutes from the schedule.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from audit.models import NoticeMark, ProtectionFinding
from game.vocabulary import FindingCode, MeterEventKind
from infra import locks
from infra.money_display import money
from progressive.models import MeterEvent
from rounds import notices
from rounds.models import Finding
from trail.models import AuditEvent
from trail.services import audit_record_many

TAIL_MINUTES = 10
# The most findings one run reads of a kind: a backlog is told over a few runs, never in one transaction.
MOST = 500
ROUND_FINDINGS, PROTECTION_FINDINGS = "round_findings", "protection_findings"


def notices_send() -> dict[str, int]:
    """Tell what is due of each kind; how many notices each sent."""
    return {ROUND_FINDINGS: _run(ROUND_FINDINGS, _round_notices),
            PROTECTION_FINDINGS: _run(PROTECTION_FINDINGS, _protection_notices)}


def _run(source: str, notices_of) -> int:
    with transaction.atomic():
        mark = locks.rows_locked(NoticeMark.objects.filter(source=source)).first()
        if mark is None:  # a mark the migration did not make: from the start
            NoticeMark.objects.get_or_create(source=source)
            mark = locks.rows_locked(NoticeMark.objects.filter(source=source)).get()
        found, last = notices_of(mark.last_id, timezone.now() - timedelta(minutes=TAIL_MINUTES))
        if not found and last <= mark.last_id:
            return 0
        told = notices.sent(found)
        if last > mark.last_id:
            mark.last_id = last
            mark.save(update_fields=["last_id"])
        audit_record_many(entries=told)
    return len(told)


def _untold(model, candidates: list) -> list:
    told = set(AuditEvent.objects.filter(
        object_type=model._meta.label_lower, object_id__in=[str(c.pk) for c in candidates],
        action=f"{model.work_name}.notified",
    ).values_list("object_id", flat=True))
    return [c for c in candidates if str(c.pk) not in told]


def _window(model, after: int, since, codes: tuple[str, ...] = ()) -> tuple[list, int]:
    rows = model.objects.filter(Q(pk__gt=after) | Q(created_at__gte=since))
    if codes:
        rows = rows.filter(code__in=codes)
    rows = list(rows.order_by("pk")[:MOST])
    # The mark moves to the last key read of any code: what is past it has been looked at.
    newest = model.objects.filter(pk__gt=after).aggregate(last=Max("pk"))["last"] or after
    last = rows[-1].pk if len(rows) == MOST else newest
    return rows, max(last, after)


def _round_notices(after: int, since) -> tuple[list[notices.Notice], int]:
    rows, last = _window(Finding, after, since, notices.AT_ONCE_CODES)
    if not rows:
        return [], last
    rows = _untold(Finding, list(Finding.objects.filter(pk__in=[r.pk for r in rows])
                                 .select_related("round__table", "round__config_version").order_by("pk")))
    from_meter = set(MeterEvent.objects.filter(
        kind=MeterEventKind.AWARD.value, round_id__in={r.round_id for r in rows},
    ).values_list("round_id", "seat"))
    found = []
    for finding in rows:
        round_ = finding.round
        currency = round_.config_version.currency
        where = f"{round_.table.code} round {round_.round_id}, seat {finding.seat}"
        dealt = f"dealt {timezone.localtime(round_.dealt_at):%Y-%m-%d %H:%M}, gaming day {round_.gaming_day}"
        if finding.code == FindingCode.PAYOUT_MISMATCH.value:
            at_least = settings.NOTICE_MISMATCH_AT_LEAST.get(currency)
            difference = abs((finding.claimed or 0) - (finding.expected or 0))
            if at_least is None or difference < at_least:
                continue
            found.append(notices.Notice(
                finding, notices.Why.MISMATCH,
                f"Payout mismatch of {money(difference, currency)} at {where}",
                f"{where} ({finding.bet}): the rules pay {money(finding.expected, currency)}, the dealer paid "
                f"{money(finding.claimed, currency)}; {dealt}, dealer {round_.dealer}.\n\n{finding.detail}\n"))
        elif (finding.round_id, finding.seat) in from_meter:
            found.append(notices.Notice(
                finding, notices.Why.JACKPOT, f"Jackpot of {money(finding.expected, currency)} at {where}",
                f"{where} won {money(finding.expected, currency)} from the progressive meter: {finding.detail}; "
                f"{dealt}, dealer {round_.dealer}.\n"))
    return found, last


def _protection_notices(after: int, since) -> tuple[list[notices.Notice], int]:
    rows, last = _window(ProtectionFinding, after, since)
    found = [
        notices.Notice(
            finding, notices.Why.SUSPICION, f"Suspicion: {finding.code.replace('_', ' ')} — {finding.key}",
            f"Game protection raised {finding.code.replace('_', ' ')} for {finding.key}, gaming days "
            f"{finding.day_from} to {finding.day_to}: figure {finding.figure} against {finding.threshold}.\n\n"
            f"{finding.detail}\n")
        for finding in _untold(ProtectionFinding, rows)
    ]
    return found, last
