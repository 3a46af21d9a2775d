"""How the round page shows a round: its cards as cards, each bet settled beside paid."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from audit.admin import (
    admin_change_link,
    json_block,
)
from rounds.engine.findings import PAYOUT_MISMATCH
from rounds.engine.rules import BETS
from rounds.models import (
    Round,
    Seat,
    Submission,
)

STATUS_COLOURS = {
    Round.Status.VERIFIED: "#1b7a34",
    Round.Status.FLAGGED: "#ba2121",
    Round.Status.SETTLED: "#205067",
    Round.Status.VOID: "#666",
}


def status_badge(status: str) -> SafeString:
    return format_html(
        '<span style="color: #fff; background: {}; padding: 1px 6px; border-radius: 3px;">'
        "{}</span>",
        STATUS_COLOURS.get(status, "#666"),
        status,
    )


def changelist_url(model, **params) -> str:
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


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


def round_sheet(round_: Round) -> dict:
    """Everything the round page shows, read in a fixed number of queries."""
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
        "findings": findings,
        "events": [
            (admin_change_link(str(e.seq), "progressive.meterevent", e.pk), e)
            for e in round_.meter_events.all()
        ],
        "pool": admin_change_link(pool.code, "progressive.pool", pool.pk) if pool else "",
        "submissions": list(submissions),
        "record_json": json_block(round_.record),
        "config_url": reverse(
            "admin:rounds_tableconfig_change", args=[round_.config_version.config_id]
        ),
        "audit_url": reverse("admin:audit_auditevent_changelist")
        + "?"
        + urlencode({"object_type": "rounds.round", "object_id": round_.pk}),
    }
