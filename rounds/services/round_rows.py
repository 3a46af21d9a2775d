"""The rows a stored round is written as, built from the record and the engine's verdict.

Built with ``infra.rows.new_row`` (a round is a dozen rows, and
``Model.__init__`` costs more than the rest of building them: ``infra.rows``
says why) and written by ``write_plan``. A column added to a model is filled
here, once.
"""

from __future__ import annotations

import hashlib
from datetime import date, datetime

from game import category_name
from game.findings import DEALT_OUTSIDE_WINDOW
from game.rules import BETS
from game.settlement import ZERO
from game.verdict import Prepared, Verdict, status_after_service_finding
from infra.rows import new_row
from rounds.models import Finding, Round, Seat, Submission, Table, TableConfigVersion


def round_row(record: dict, table: Table, digest: str, dealt_at: datetime, gaming_day: date,
              version: TableConfigVersion, ready: Prepared, pk: int | None, received_at: datetime) -> Round:
    """The round's row but for what its Progressive decides (``round_finish``)."""
    game = ready.game
    return new_row(
        Round, pk=pk, table=table, round_id=record["round"], dealt_at=dealt_at, gaming_day=gaming_day,
        received_at=received_at,
        dealer=record.get("dealer") or "", void=record["void"],
        board="".join(record.get("board") or ()), dealer_cards="".join(record.get("dealer_cards") or ()),
        dealer_hand=category_name(game.dealer_hand) if game.dealer_hand is not None else "",
        dealer_qualifies=game.dealer_qualifies, config_version=version, record=record, record_hash=digest,
    )


def round_finish(round_: Round, verdict: Verdict, pool_version, meter_before) -> None:
    """What the whole verdict decides of the round's row: its status, and its pool's meter."""
    round_.status = verdict.status
    round_.pool_version_id = pool_version.pk if pool_version is not None else None
    round_._state.fields_cache["pool_version"] = pool_version
    round_.meter_before = meter_before
    round_.meter_after = verdict.meters_after.meter if verdict.meters_after else None


# Each bet with its two columns, named once (a batch builds hundreds of seats).
_BET_COLUMNS = tuple((bet, f"settled_{bet}", f"paid_{bet}") for bet in BETS)


def seat_rows(round_: Round, record: dict, ready: Prepared) -> list[Seat]:
    """The seats' rows in seat order, but for the Progressive's settlement (``seats_finish``).
    Amounts are the ones the engine read from the record, not parsed a second time."""
    by_number = ready.game.seats
    rows = []
    for wire, read in sorted(zip(record["seats"], ready.record.seats, strict=True), key=_seat_number):
        judged = by_number[read.seat]
        paid = read.paid
        row = new_row(
            Seat, round=round_, gaming_day=round_.gaming_day, seat=read.seat, player=wire.get("player") or "",
            hole="".join(wire.get("hole") or ()), ante=read.ante, blind=read.blind, trips=read.trips,
            play=read.play, progressive=read.progressive, progressive_lit=read.progressive_lit,
            decision=read.decision, hand=category_name(judged.hand) if judged.hand is not None else "",
            paid_reported=paid is not None,
        )
        columns = row.__dict__  # plain attributes: new_row set every one
        results = judged.results
        for bet, settled, claimed in _BET_COLUMNS:
            columns[settled] = results.get(bet, ZERO)
            if paid is not None:
                columns[claimed] = paid.get(bet, ZERO)
        rows.append(row)
    return rows


def _seat_number(pair) -> int:
    return pair[1].seat


def seats_finish(seats: list[Seat], verdict: Verdict) -> None:
    """The Progressive's settlement, once the meter has decided it (both in seat order)."""
    for seat, judged in zip(seats, verdict.seats, strict=True):
        seat.settled_progressive = judged.settled["progressive"]


def finding_rows(round_: Round, verdict: Verdict) -> list[Finding]:
    return [
        new_row(Finding, round=round_, code=f.code, informational=f.informational, seat=f.seat,
                bet=f.bet or "", expected=f.expected, claimed=f.claimed, detail=f.detail)
        for f in verdict.findings
    ]


def held_apart(round_: Round, why: str) -> Finding:
    """A round dealt outside the books' window (``rounds.window``): held apart until placed, and
    flagged (void stays void), with the finding that says why."""
    round_.held = True
    round_.status = status_after_service_finding(round_.status)
    return new_row(Finding, round=round_, code=DEALT_OUTSIDE_WINDOW, informational=False, seat=None, bet="",
                   expected=None, claimed=None, detail=why)


def submission_row(table: Table, body: bytes, round_id: str, outcome: str, status: int, request_id: str,
                   round_=None, errors=None) -> Submission:
    """A kept body: every body an authenticated table sends, whatever becomes of it."""
    return new_row(
        Submission, table=table, body=bytes(body), body_sha256=hashlib.sha256(body).hexdigest(),
        claimed_round=(round_id or "")[:64], outcome=outcome, http_status=status,
        request_id=request_id, errors=errors, round=round_,
    )
