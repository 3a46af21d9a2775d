"""Simulated tables: plausible rounds in the wire format, for the demo and benchmarks.

Pure Python like the engine: a ``TableSimulator`` seats players who keep their
stakes from round to round, deals from a shuffled deck, plays each hand by a
simple strategy and settles it with ``judge_round``, so the ``paid`` it reports
is exactly right, unless it injects one of the mistakes a real table makes:

- a dealer error (``dealer_error_rate``): a wrong payout on well-formed bets,
  e.g. the Blind paid even money on a pair, the Ante settled although the
  dealer did not qualify, a winning Trips collected from a folded hand;
- a rule break (``rule_break_rate``, rarer): chips that break a betting rule,
  e.g. an Ante that is not a whole number of units, a Play that does not match
  the decision, a Progressive wager on an unlit sensor;
- a void round (``void_rate``): a machine malfunction, every bet settled at 0.

With ``planted`` the table also seats three cheats for game protection to
find, in seats 1 to 3 for the whole session: ``CHEAT-HOLECARD`` sees the
dealer's first hole card, ``CHEAT-PAIR-A`` and ``CHEAT-PAIR-B`` show each
other their hole cards. They check to the river and decide there with what
they saw (``game.protection.values``); every other player decides from
his own cards and the board alone.

The same seed gives the same rounds. A table linked to a progressive pool needs
the pool's meter before each round; ``deal`` takes it and hands back the meter
after, so tables sharing one pool can be interleaved by the caller.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from game import judge_round
from game.cards import cards_text, rank_of
from game.evaluator import (
    ACE,
    FLUSH,
    FULL_HOUSE,
    HIGH_CARD,
    PAIR,
    THREE_OF_A_KIND,
    category_of,
    evaluate,
)
from game.progressive import Meters
from game.protection.scoring import best_of
from game.protection.values import PayTable, river_values
from game.record import round_from_wire
from game.rules import BETS, DECISION_MULTIPLES, FOLD, PoolRules, TableRules
from game.settlement import floor_to
from game.verdict import SeatVerdict, Verdict

SEATS = range(1, 8)

# Stakes in multiples of the table minimum, the low end far more common.
ANTE_STEPS = (1, 1, 1, 2, 2, 2, 3, 4, 5, 10, 20)
TRIPS_STEPS = (1, 1, 2, 2, 4)

# How a table's seats fill and empty from one round to the next.
TAKE_SEAT = 0.25
LEAVE_SEAT = 0.03
OPENING_OCCUPANCY = 0.55
PLAYS_TRIPS = 0.4
PLAYS_PROGRESSIVE = 0.5
PREFERS_3X = 0.1
DEALER_SHIFT_ROUNDS = (20, 40)

# Dealer errors and rule breaks, by the names ``DealtRound`` reports them with.
BLIND_PAID_BELOW_STRAIGHT = "blind_paid_below_straight"
BLIND_WRONG_ODDS = "blind_wrong_odds"
ANTE_SETTLED_UNQUALIFIED = "ante_settled_unqualified"
TRIPS_TAKEN_ON_FOLD = "trips_taken_on_fold"
OFF_UNIT_ANTE = "off_unit_ante"
PLAY_MISMATCH = "play_mismatch"
PROGRESSIVE_UNLIT = "progressive_unlit"


@dataclass(frozen=True, slots=True)
class DealtRound:
    record: dict  # the body the table posts (ROUND_RECORD.md)
    verdict: Verdict  # the engine's judgement of exactly that body
    meters_after: Meters | None  # the pool's meter after the round; None without a pool
    dealer_error: str | None = None
    rule_break: str | None = None


@dataclass(slots=True)
class _Player:
    player: str
    ante: Decimal
    trips: Decimal  # 0 when the player does not bet Trips
    progressive: bool
    prefers_3x: bool
    sees: str = ""  # a planted cheat's knowledge: DEALER_CARD, or the partner whose cards he sees


HOLE_CARDER, PAIR_A, PAIR_B = "CHEAT-HOLECARD", "CHEAT-PAIR-A", "CHEAT-PAIR-B"
DEALER_CARD = "dealer_card"
PLANTED = {1: (HOLE_CARDER, DEALER_CARD), 2: (PAIR_A, PAIR_B), 3: (PAIR_B, PAIR_A)}  # seat: (player, sees)


class TableSimulator:
    """One table dealing round after round from ``start``, about ``mean_gap`` apart."""

    def __init__(
        self,
        *,
        table: str,
        rules: TableRules,
        pool: PoolRules | None = None,
        rng: random.Random,
        start: datetime,
        mean_gap: timedelta = timedelta(seconds=90),
        dealer_error_rate: float = 0.03,
        rule_break_rate: float = 0.005,
        void_rate: float = 0.002,
        planted: bool = False,
    ):
        if start.tzinfo is None:
            raise ValueError("start needs a time zone: dealt_at is sent with its offset")
        self.table, self.rules, self.pool, self.rng = table, rules, pool, rng
        self.mean_gap = mean_gap
        self.dealer_error_rate = dealer_error_rate
        self.rule_break_rate = rule_break_rate
        self.void_rate = void_rate
        # The clock runs in UTC so that adding gaps never lands in a DST gap;
        # each dealt_at is shown in the zone ``start`` was given in.
        self.zone = start.tzinfo
        self.next_at = start.astimezone(timezone.utc)
        self.round_prefix = start.strftime("%Y%m%d")
        self.dealt = 0
        self.seats: dict[int, _Player] = {}
        self.planted = {seat: self._planted(name, sees) for seat, (name, sees) in PLANTED.items()} if planted else {}
        self.pays = PayTable.of(rules)
        for seat in SEATS:
            if seat in self.planted:
                self.seats[seat] = self.planted[seat]
            elif rng.random() < OPENING_OCCUPANCY:
                self.seats[seat] = self._new_player()
        self.dealers = [f"D{rng.randint(1000, 9999)}" for _ in range(3)]
        self.dealer = self.dealers[0]
        self.shift_left = rng.randint(*DEALER_SHIFT_ROUNDS)

    # ---- one round ----------------------------------------------------------

    def deal(self, meters: Meters | None = None) -> DealtRound:
        """Deal, play and settle the next round; ``meters`` is the pool's state before it."""
        if self.pool is not None and meters is None:
            meters = Meters(self.pool.reseed)
        dealt_at = self.next_at.astimezone(self.zone)
        self.dealt += 1
        self._change_seats()
        self._change_dealer()

        seats = sorted(self.seats.items())
        deck = self.rng.sample(range(52), 7 + 2 * len(seats))
        board, dealer_cards = deck[:5], deck[5:7]
        holes = [tuple(deck[7 + 2 * i : 9 + 2 * i]) for i in range(len(seats))]
        seen = {player.player: hole for (_, player), hole in zip(seats, holes)}
        record = {
            "table": self.table,
            "round": f"{self.round_prefix}-{self.dealt:06d}",
            "dealt_at": dealt_at.isoformat(timespec="seconds"),
            "dealer": self.dealer,
            "void": self.rng.random() < self.void_rate,
            "board": cards_text(board),
            "dealer_cards": cards_text(dealer_cards),
            "seats": [
                self._seat(number, player, hole, board, self._known(player, dealer_cards, seen))
                for (number, player), hole in zip(seats, holes)
            ],
        }

        rule_break = None
        # Mistakes go on rounds that are played out; a void round hands every bet back.
        if self.rng.random() < self.rule_break_rate and not record["void"]:
            rule_break = self._break_a_rule(record)
        settlement = judge_round(round_from_wire(record), self.rules, self.pool, meters)
        for wire, judged in zip(record["seats"], settlement.seats):
            wire["paid"] = _paid(wire, judged)
        dealer_error = None
        if not record["void"] and self.rng.random() < self.dealer_error_rate:
            dealer_error = self._make_a_mistake(record, settlement)
        # Judged again with what the dealer paid, exactly as the service will judge it.
        verdict = judge_round(round_from_wire(record), self.rules, self.pool, meters)

        self.next_at += self.mean_gap * self.rng.uniform(0.6, 1.4)
        self.next_at = self.next_at.replace(microsecond=0)
        return DealtRound(
            record=record,
            verdict=verdict,
            meters_after=verdict.meters_after if self.pool is not None else None,
            dealer_error=dealer_error,
            rule_break=rule_break,
        )

    def _seat(self, number: int, player: _Player, hole: tuple[int, int], board: list[int],
              known: dict | None = None) -> dict:
        decision = self._decide(player, hole, board) if known is None else self._cheat(hole, board, known)
        seat = {
            "seat": number,
            "player": player.player,
            "hole": cards_text(hole),
            "ante": _text(player.ante),
            "blind": _text(player.ante),
            "decision": decision,
            "play": _text(player.ante * DECISION_MULTIPLES[decision]),
        }
        if player.trips:
            seat["trips"] = _text(player.trips)
        if player.progressive and self.pool is not None:
            seat["progressive"] = _text(self.pool.wager)
            seat["progressive_lit"] = True
        return seat

    def _decide(self, player: _Player, hole: tuple[int, int], board: list[int]) -> str:
        """Raise big with a pair or an ace, 2x with a pair on the flop, 1x with one at the river.

        Not ``game.strategy``: a table's players are not all by the book, and 3x comes up too."""
        if rank_of(hole[0]) == rank_of(hole[1]) or ACE in (rank_of(hole[0]), rank_of(hole[1])):
            return "preflop_3x" if player.prefers_3x else "preflop_4x"
        if _hole_improves(hole, board[:3]):
            return "flop_2x"
        if _hole_improves(hole, board):
            return "river_1x"
        return FOLD

    @staticmethod
    def _known(player: _Player, dealer_cards: list[int], seen: dict[str, tuple[int, int]]) -> dict | None:
        """What a planted cheat knows that he may not (``river_values``' knowledge), or None: honest."""
        if player.sees == DEALER_CARD:
            return {"known_dealer": (dealer_cards[0],)}
        if player.sees:
            return {"dead": seen.get(player.sees, ())}
        return None

    def _cheat(self, hole: tuple[int, int], board: list[int], known: dict) -> str:
        """Check to the river, then take the option best with what he saw."""
        return best_of(river_values(hole, board, self.pays, **known))

    # ---- who sits where ------------------------------------------------------

    def _planted(self, name: str, sees: str) -> _Player:
        rules = self.rules
        return _Player(player=name, ante=rules.ante_min, trips=Decimal(0), progressive=False,
                       prefers_3x=False, sees=sees)

    def _new_player(self) -> _Player:
        rules, rng = self.rules, self.rng
        seated = {p.player for p in self.seats.values()} | {p.player for p in self.planted.values()}
        while True:
            player = f"P-{rng.randint(1, 9999):04d}"
            if player not in seated:
                break
        trips = Decimal(0)
        if rng.random() < PLAYS_TRIPS:
            trips = self._stake(rules.trips_min, rules.trips_max, TRIPS_STEPS)
        return _Player(
            player=player,
            ante=self._stake(rules.ante_min, rules.ante_max, ANTE_STEPS),
            trips=trips,
            progressive=rng.random() < PLAYS_PROGRESSIVE,
            prefers_3x=rng.random() < PREFERS_3X,
        )

    def _stake(self, low: Decimal, high: Decimal, steps: tuple[int, ...]) -> Decimal:
        """A whole number of units from ``low`` to ``high``, most often near ``low``."""
        amount = min(low * self.rng.choice(steps), high)
        return max(low, amount - amount % self.rules.unit)

    def _change_seats(self) -> None:
        for seat in SEATS:
            if seat in self.planted:
                continue
            if seat in self.seats:
                if self.rng.random() < LEAVE_SEAT:
                    del self.seats[seat]
            elif self.rng.random() < TAKE_SEAT:
                self.seats[seat] = self._new_player()
        if not self.seats:
            self.seats[self.rng.choice(SEATS)] = self._new_player()

    def _change_dealer(self) -> None:
        self.shift_left -= 1
        if self.shift_left <= 0:
            self.dealer = self.rng.choice([d for d in self.dealers if d != self.dealer])
            self.shift_left = self.rng.randint(*DEALER_SHIFT_ROUNDS)

    # ---- what goes wrong -----------------------------------------------------

    def _break_a_rule(self, record: dict) -> str:
        """Change the chips of one seat so that the round breaks a betting rule."""
        rules, rng = self.rules, self.rng
        options = [OFF_UNIT_ANTE]
        if any(s["decision"] != FOLD for s in record["seats"]):
            options.append(PLAY_MISMATCH)
        if self.pool is not None:
            options.append(PROGRESSIVE_UNLIT)
        kind = rng.choice(options)
        if kind == OFF_UNIT_ANTE:
            seat = rng.choice(record["seats"])
            # Half a unit more than a stake that leaves room under the maximum.
            ante = min(Decimal(seat["ante"]), rules.ante_max - rules.unit) + rules.unit / 2
            seat["ante"] = seat["blind"] = _text(ante)
            seat["play"] = _text(ante * DECISION_MULTIPLES[seat["decision"]])
        elif kind == PLAY_MISMATCH:
            seat = rng.choice([s for s in record["seats"] if s["decision"] != FOLD])
            multiple = DECISION_MULTIPLES[seat["decision"]]
            wrong = multiple - 1 if multiple > 1 else 2
            seat["play"] = _text(Decimal(seat["ante"]) * wrong)
        else:
            seat = rng.choice(record["seats"])
            seat["progressive"] = _text(self.pool.wager)
            seat["progressive_lit"] = False
        return kind

    def _make_a_mistake(self, record: dict, verdict: Verdict) -> str | None:
        """Spoil one payout the way dealers do; None when no seat offers the chance."""
        options: list[tuple[str, dict, str, Decimal]] = []
        for wire, judged in zip(record["seats"], verdict.seats):
            settled, hand = judged.settled, category_of(judged.hand)
            ante, blind = Decimal(wire["ante"]), Decimal(wire["blind"])
            trips = Decimal(wire.get("trips", "0"))
            won = settled["play"] > 0
            if won and settled["blind"] == 0:
                options.append((BLIND_PAID_BELOW_STRAIGHT, wire, "blind", blind))
            if won and hand in (FLUSH, FULL_HOUSE):
                # A flush paid even money, a full house paid like a flush.
                wrong = blind if hand == FLUSH else blind * Decimal("1.5")
                wrong = floor_to(wrong, self.rules.minor_unit)
                options.append((BLIND_WRONG_ODDS, wire, "blind", wrong))
            if verdict.dealer_qualifies is False and settled["play"] != 0:
                options.append((ANTE_SETTLED_UNQUALIFIED, wire, "ante", ante if won else -ante))
            if wire["decision"] == FOLD and trips and settled["trips"] > 0:
                options.append((TRIPS_TAKEN_ON_FOLD, wire, "trips", -trips))
        if not options:
            return None
        kind, wire, bet, amount = self.rng.choice(options)
        wire["paid"][bet] = _text(amount)
        return kind


# ---- a table on its own ---------------------------------------------------------


def simulate_rounds(
    *,
    table: str,
    rules: TableRules,
    pool: PoolRules | None = None,
    meters: Meters | None = None,
    rng: random.Random,
    start: datetime,
    count: int,
    **options,
) -> Iterator[dict]:
    """``count`` round records of one table, its pool (if any) starting at ``meters``.

    ``options`` are those of ``TableSimulator`` (``mean_gap`` and the rates).
    Tables that share a pool must be dealt with ``TableSimulator.deal`` in
    time order instead, handing each the meter the last round left.
    """
    simulator = TableSimulator(table=table, rules=rules, pool=pool, rng=rng, start=start, **options)
    for _ in range(count):
        dealt = simulator.deal(meters)
        meters = dealt.meters_after
        yield dealt.record


# ---- helpers ------------------------------------------------------------------------


def _hole_improves(hole: tuple[int, int], shared: list[int]) -> bool:
    """Whether the hole cards make at least a pair that the shared cards alone do not."""
    own = category_of(evaluate([*hole, *shared]))
    return own >= PAIR and own > _shared_category(shared)


def _shared_category(shared: list[int]) -> int:
    if len(shared) >= 5:
        return category_of(evaluate(shared))
    most = max([rank_of(c) for c in shared].count(rank_of(c)) for c in shared)
    return {1: HIGH_CARD, 2: PAIR}.get(most, THREE_OF_A_KIND)


def _paid(wire: dict, judged: SeatVerdict) -> dict:
    """The correct settlement of the bets the seat placed, as the dealer reports it."""
    placed = {"ante", "blind", "play"}
    placed.update(bet for bet in ("trips", "progressive") if bet in wire)
    return {bet: _text(judged.settled[bet]) for bet in BETS if bet in placed}


def _text(amount: Decimal) -> str:
    return format(amount, "f")
