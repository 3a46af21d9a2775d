"""Notices: what cannot wait for the morning, mailed to the people who must know, each kept in the trail.

A payout mismatch of at least the configured amount in its currency, a jackpot
(an award from the meter), a new game-protection suspicion and a case
escalated by a person are mailed through Django's mail backend (the console
in the demo) to every active user who holds ``rounds.receive_notices`` (the
supervisors' role) and has an address, the finding's assignee, and the
addresses of ``NOTICES_TO``. Each notice is a ``<finding>.notified`` event on
the finding it is about, sent or not: a mail server that refused it is
named there, never lost in a log.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from datetime import timedelta
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Q, TextChoices
from django.dispatch import Signal
from django.utils import timezone

from game.vocabulary import FindingCode, MeterEventKind
from infra.work import priority_label
from rounds import mistakes
from rounds.wire.fields import CONTROL_CHARACTERS
from trail.models import AuditEvent
from trail.services import SYSTEM, AuditEntry, audit_record_many

logger = logging.getLogger(__name__)

RECEIVE = ("rounds", "receive_notices")
# The kinds audit.notices tells, each read on its own (the first two after their NoticeMark).
ROUND_FINDINGS, PROTECTION_FINDINGS, ESCALATIONS = "round_findings", "protection_findings", "escalations"
KINDS: tuple[str, ...] = (ROUND_FINDINGS, PROTECTION_FINDINGS, ESCALATIONS)
# Sent (with the ``kinds`` to read) once a transaction that stored what may need a notice commits;
# audit.notices listens (audit.apps).
due = Signal()


def due_after_commit(rounds: Iterable[tuple[str, Iterable, Iterable]]) -> None:
    """Say, once the transaction commits, that notices may be due: if one of ``rounds`` (each its
    currency, its findings and its meter events) has a payout mismatch at the notice amount or an award
    from the meter. A filter for the write path, so that an ordinary round (a fixed award, a small
    mismatch) never starts a run; what is told is ``audit.notices``' to decide."""
    for currency, findings, events in rounds:
        at_least = settings.NOTICE_MISMATCH_AT_LEAST.get(currency)
        from_meter = {event.seat for event in events if event.kind == MeterEventKind.AWARD.value}
        for finding in findings:
            if finding.code == FindingCode.PAYOUT_MISMATCH.value:
                stake = abs((finding.claimed or 0) - (finding.expected or 0))
                if at_least is not None and stake >= at_least:
                    break
            elif finding.code == FindingCode.PROGRESSIVE_AWARD.value and finding.seat in from_meter:
                break
        else:
            continue
        transaction.on_commit(lambda: due.send(sender=None, kinds=[ROUND_FINDINGS]))
        return


class Why(TextChoices):
    """What a notice is for: the vocabulary of its event's ``why``."""

    MISMATCH = "payout_mismatch", "a payout mismatch above the notice amount"
    JACKPOT = "jackpot", "a jackpot paid from the meter"
    SUSPICION = "suspicion", "a new game-protection suspicion"
    ESCALATED = "escalated", "a case escalated to the supervisors"


@dataclass(frozen=True, slots=True)
class Notice:
    finding: object  # any infra.work.WorkedFinding
    why: str  # Why
    subject: str
    body: str
    to_assignee: bool = True
    # The finding's mates (``rounds.mistakes``), or the other findings a grouped notice names:
    # one notice, recorded on each of them too.
    mates: tuple = ()
    # What the notice is grouped by (a table's code): its events say so, and the next notice of
    # the group waits for ``NOTICE_GROUP_WINDOW`` after it (``audit.notices``).
    group: str = ""


def recipients(extra: Iterable[str] = ()) -> list[str]:
    """The addresses told: the holders of ``rounds.receive_notices`` and ``NOTICES_TO``, once each."""
    permission = Permission.objects.filter(content_type__app_label=RECEIVE[0], codename=RECEIVE[1]).first()
    held = Q(is_superuser=True)
    if permission is not None:
        held |= Q(groups__permissions=permission) | Q(user_permissions=permission)
    users = get_user_model().objects.filter(held, is_active=True).exclude(email="")
    addresses = [*users.values_list("email", flat=True).distinct(), *settings.NOTICES_TO, *extra]
    return sorted({address.strip().lower(): address.strip() for address in addresses if address.strip()}.values())


def _assignee_address(finding) -> str:
    """The address of whoever holds ``finding``'s case, while he still may work it: a person made
    inactive, or whose role was taken away, is told nothing more of the cases he held."""
    person = getattr(finding, "assignee", None)
    if person is None or not person.is_active or not person.has_perm(type(finding).worker_permission()):
        return ""
    return person.email


def one_line(text: str) -> str:
    """``text`` fit for a mail header: each control character written as its escape (``\\x0a``), so
    that an id stored with one is still told, and still shows it held one."""
    return CONTROL_CHARACTERS.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def tell(notices: Sequence[Notice]) -> list[AuditEntry]:
    """Mail each notice, then record it on its finding (``<finding>.notified``), each in a short
    transaction of its own: no transaction is held open while a mail server answers.

    The mail goes before its event is written, and the event says whether the backend took it (with
    its error if not). A notice not recorded as sent is told again by ``audit.notices``: a notice may
    go twice (a crash between the mail and its event), never be lost.
    """
    if not notices:
        return []
    told = recipients()
    mailed = _mailed_this_hour()
    entries = []
    for notice in notices:
        assignee = _assignee_address(notice.finding) if notice.to_assignee else ""
        wanted = sorted({*told, *([assignee] if assignee else [])})
        to = [address for address in wanted if _may_mail(mailed, address, notice.why)]
        capped = [address for address in wanted if address not in to]
        subject = one_line(notice.subject)
        error = ""
        if not to and capped:
            error = (f"held: every recipient was mailed {settings.NOTICES_PER_RECIPIENT_HOUR} notices this hour, "
                     "one of this kind among them")
        elif not to:
            error = "no one to tell: nobody who receives notices has an address, and NOTICES_TO is empty"
        else:
            try:
                EmailMessage(subject=f"{settings.EMAIL_SUBJECT_PREFIX}{subject}", body=notice.body,
                             to=to).send(fail_silently=False)
            except Exception as exc:  # the mail server's refusal, whatever its kind, is what the trail keeps
                logger.exception("notice %s about %s not sent", notice.why, notice.finding)
                error = f"{type(exc).__name__}: {exc}"[:500]
        # "retry": a refusal may pass; nobody to tell is not mended by telling again.
        mail = uuid.uuid4().hex
        after = {"why": notice.why, "to": to, "subject": subject, "sent": not error, "error": error,
                 "retry": bool(error) and bool(to or capped), "mail": mail,
                 **({"capped": capped} if capped else {}), **({"group": notice.group} if notice.group else {})}
        if not error:
            for address in to:
                mailed.setdefault(address.lower(), {})[mail] = notice.why
        recorded = [AuditEntry(actor=SYSTEM, action=f"{about.work_name}.notified", obj=about, after=after)
                    for about in (notice.finding, *notice.mates)]
        with transaction.atomic():
            audit_record_many(entries=recorded)
        entries.append(recorded[0])
    return entries


def _mailed_this_hour() -> dict[str, dict[str, str]]:
    """Each address's notices mailed in the last hour: the mail's id → its why (a grouped notice is
    one mail, however many findings it names). Read from the trail's events, a handful an hour."""
    events = AuditEvent.objects.filter(action__endswith=".notified", at__gte=timezone.now() - timedelta(hours=1),
                                       after__sent=True).values_list("after", flat=True)
    mailed: dict[str, dict[str, str]] = {}
    for after in events.iterator(chunk_size=500):
        for address in after.get("to") or ():
            mailed.setdefault(address.lower(), {})[after.get("mail") or after.get("subject", "")] = after.get("why", "")
    return mailed


def _may_mail(mailed: dict[str, dict[str, str]], address: str, why: str) -> bool:
    """Under the hour's cap, or the first notice of its kind this hour to ``address``."""
    this_hour = mailed.get(address.lower(), {})
    return len(this_hour) < settings.NOTICES_PER_RECIPIENT_HOUR or why not in this_hour.values()


def escalation_notice(finding, *, by: str, note: str, mates: Sequence = ()) -> Notice:
    """What the supervisors are told of a case escalated by ``by`` with ``note`` (with its ``mates``,
    the other findings of the same mistake, escalated with it)."""
    model = type(finding)
    subject = f"Escalated by {by}: {finding}"
    also = (f"\nThe same mistake on the seat's other bets, escalated with it: {mistakes.named(mates)}.\n"
            if mates else "")
    body = (f"{by} escalated {model._meta.verbose_name} {finding} to the supervisors.\n\n"
            f"Why: {note}\n\nIt is {finding.state}, priority {priority_label(finding.priority)}"
            + (f", with {finding.assignee_name}" if finding.assignee_name else ", with nobody yet") + f".\n{also}")
    return Notice(finding, Why.ESCALATED, subject, body, mates=tuple(mates))
