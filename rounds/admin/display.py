"""How the round page shows a round: its cards as cards, each bet settled beside paid,
its findings with the moves the user may make, and its whole audit trail."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from game.findings import PAYOUT_MISMATCH
from game.rules import BETS
from infra.gaming_day import gaming_day_window
from infra.work import ALLOWED, NOTE_REQUIRED
from rounds.video import video_of
from rounds.admin.findings import WORK_VERBS
from rounds.models import (
    Finding,
    LateRound,
    Round,
    Seat,
    Submission,
)
from rounds.selectors import round_trail
from trail.admin import (
    admin_change_link,
    json_block,
)
from trail.models import AuditEvent

def status_badge(status: str) -> SafeString:
    """A round's status as a coloured badge (its colour: casino/static/casino/admin.css)."""
    return format_html('<span class="status-badge status-{}">{}</span>', status, status)


# ---- the round sheet: what the change page of a round lays out ---------------

SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
RED_SUITS = frozenset("dh")


@dataclass(frozen=True, slots=True)
class CardFace:
    code: str  # as the table sent it: "Th"
    rank: str  # as a card shows it: "10"
    symbol: str
    red: bool


def card_faces(cards: str) -> list[CardFace]:
    """``"AhTd"`` as faces; the stored strings are card codes back to back."""
    faces = []
    for i in range(0, len(cards) - 1, 2):
        rank, suit = cards[i], cards[i + 1].lower()
        shown_rank = "10" if rank == "T" else rank
        faces.append(
            CardFace(cards[i : i + 2], shown_rank, SUIT_SYMBOLS.get(suit, suit), suit in RED_SUITS)
        )
    return faces


@dataclass(frozen=True, slots=True)
class BetLine:
    bet: str
    wagered: Decimal
    settled: Decimal
    paid: Decimal | None  # None: the table reported no payouts for the seat
    flagged: bool  # a payout_mismatch finding names this seat and bet

    @property
    def differs(self) -> bool:
        return self.paid is not None and self.paid != self.settled

    @property
    def difference(self) -> Decimal | None:
        return None if self.paid is None else self.paid - self.settled


@dataclass(frozen=True, slots=True)
class SeatSheet:
    seat: Seat
    hole: list[CardFace]
    bets: list[BetLine]


def seat_sheet(seat: Seat, mismatched: set[tuple[int | None, str]]) -> SeatSheet:
    paid = seat.paid()
    lines = []
    for bet in BETS:
        line = BetLine(
            bet=bet,
            wagered=getattr(seat, bet),
            settled=getattr(seat, f"settled_{bet}"),
            paid=None if paid is None else paid[bet],
            flagged=(seat.seat, bet) in mismatched,
        )
        # A bet nobody placed, settled or paid is noise beside the ones that were.
        if line.wagered or line.settled or line.paid or line.flagged:
            lines.append(line)
    return SeatSheet(seat, card_faces(seat.hole), lines)


# ---- the round's findings, worked from its page -------------------------------


@dataclass(frozen=True, slots=True)
class FindingMove:
    to_state: str
    verb: str  # the button's: "Resolve"
    needs_note: bool


@dataclass(frozen=True, slots=True)
class FindingRow:
    finding: Finding
    link: SafeString  # to the finding's own admin page
    moves: list[FindingMove]  # none: informational, or the user may not work findings
    move_url: str

    @property
    def note_always_needed(self) -> bool:
        """Every move offered needs a note: the field is then required in the browser too."""
        return all(move.needs_note for move in self.moves)

    @property
    def note_rule(self) -> str:
        """Which of the moves offered need the note: "Resolve and Dismiss need a note"."""
        needing = [move.verb for move in self.moves if move.needs_note]
        if not needing or len(needing) == len(self.moves):
            return ""
        named = needing[0] if len(needing) == 1 else f"{', '.join(needing[:-1])} and {needing[-1]}"
        return f"{named} need{'s' if len(needing) == 1 else ''} a note."


def finding_moves(finding: Finding, *, can_work: bool) -> list[FindingMove]:
    """The moves ``infra.work.ALLOWED`` makes from the finding's state, in the queue's order
    (acknowledge, resolve, dismiss, reopen). An informational finding is a record, not work."""
    if not can_work or getattr(finding, "informational", False):
        return []
    allowed = ALLOWED[finding.state]
    return [FindingMove(state, verb, state in NOTE_REQUIRED)
            for state, verb in WORK_VERBS.items() if state in allowed]


def finding_row(round_: Round, finding: Finding, *, can_work: bool) -> FindingRow:
    return FindingRow(
        finding=finding,
        link=format_html('<a href="{}">{}</a>',
                         reverse("admin:rounds_finding_change", args=[finding.pk]), finding.code),
        moves=finding_moves(finding, can_work=can_work),
        move_url=reverse("admin:rounds_round_finding_move", args=[round_.pk, finding.pk]),
    )


# ---- the round's audit trail: its own events and its findings' -----------------


@dataclass(frozen=True, slots=True)
class TrailLine:
    event: AuditEvent
    concerns: SafeString | str  # "the round", or a link to the finding
    move: str  # a finding's move: "open → resolved"
    note: str  # a move's note, a void's reason

    @property
    def actor(self) -> str:
        return self.event.actor_name or self.event.actor_id or self.event.actor_kind


def trail_lines(round_: Round, findings: list[Finding]) -> list[TrailLine]:
    by_id = {str(f.pk): f for f in findings}
    lines = []
    for event in round_trail(round_=round_, finding_ids=list(by_id)):
        before = event.before if isinstance(event.before, dict) else {}
        after = event.after if isinstance(event.after, dict) else {}
        of_finding = event.object_type == Finding._meta.label_lower
        finding = by_id.get(event.object_id) if of_finding else None
        if finding is None:
            concerns: SafeString | str = "the round"
        else:
            seat = f", seat {finding.seat}" if finding.seat else ""
            concerns = admin_change_link(f"{finding.code}{seat}", "rounds.finding", finding.pk)
        moved = finding is not None and "state" in before
        lines.append(TrailLine(
            event=event,
            concerns=concerns,
            move=f"{before['state']} → {after.get('state', '?')}" if moved else "",
            note=str(after.get("note") or after.get("reason") or after.get("comment") or after.get("subject") or ""),
        ))
    return lines


def late_by(round_: Round) -> str:
    """How long after its gaming day ended the round was stored ("" if it came in its day): a
    report of its day made before undercounts until it is remade (``rounds.LateRound``)."""
    late = LateRound.objects.filter(round_pk=round_.pk).first()
    if late is None:
        return ""
    after = late.received_at - gaming_day_window(late.gaming_day)[1]
    hours, minutes = divmod(max(0, int(after.total_seconds())) // 60, 60)
    days, hours = divmod(hours, 24)
    return ", ".join(part for part in (f"{days} d" if days else "", f"{hours} h" if hours else "",
                                       f"{minutes} min") if part)


def round_sheet(round_: Round, *, can_work: bool = False) -> dict:
    """Everything the round page shows, read in a fixed number of queries.

    ``can_work``: the user may move findings (``rounds.work_finding``), so each
    actionable finding is offered the moves its state allows.
    """
    findings = list(round_.findings.all())
    mismatched = {(f.seat, f.bet) for f in findings if f.code == PAYOUT_MISMATCH}
    submissions = (
        Submission.objects.filter(table_id=round_.table_id)
        .filter(Q(round=round_) | Q(claimed_round=round_.round_id))
        .defer("body")
        .order_by("received_at", "id")
    )
    pool = round_.pool_version.pool if round_.pool_version else None
    return {
        "round": round_,
        "status": status_badge(round_.status),
        "board": card_faces(round_.board),
        "dealer_cards": card_faces(round_.dealer_cards),
        "seats": [seat_sheet(seat, mismatched) for seat in round_.seats.all()],
        "findings": [finding_row(round_, f, can_work=can_work) for f in findings],
        "can_work": can_work,
        "trail": trail_lines(round_, findings),
        "events": [
            (admin_change_link(str(e.seq), "progressive.meterevent", e.pk), e)
            for e in round_.meter_events.all()
        ],
        "pool": admin_change_link(pool.code, "progressive.pool", pool.pk) if pool else "",
        "submissions": list(submissions),
        "record_json": json_block(round_.record),
        "video": video_of(round_),
        "late": late_by(round_),
        "config_url": reverse(
            "admin:rounds_tableconfig_change", args=[round_.config_version.config_id]
        ),
    }
