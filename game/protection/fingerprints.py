"""Dealer-error fingerprints, and the exact test for sweetheart dealing.

A verdict says *that* the dealer settled a bet differently from the rules (a
``payout_mismatch``: ``expected`` from the rules, ``claimed`` from the dealer).
A fingerprint says *what kind* of mistake it was, read the way a floor
supervisor reads it: the Ante of an unqualified dealer settled instead of
pushed, a flush Blind paid at the straight line, a 3x Play paid as 4x, and so
on (``ErrorType``; ``EXPLANATIONS`` gives each in one sentence). Each is
recognised from what the verdict knows about the seat (``MismatchContext``):
a claimed win is matched against the other lines of the pay table, the other
multiples of the Ante, the sign of the expected result. Whatever no rule
explains is ``other``; the direction (``for_player`` when the dealer paid
more or collected less than the rules) never depends on the guess. Two limits
of reading one seat: a win at a multiple that is on no line of the table (9:1
on a Trips full house) is ``other`` here, and a whole table paying it so is
``conformance``'s finding; in a round the aggregate limit scaled, the lines are
compared unscaled, so only a win paid in full is recognised there.

Sweetheart dealing is a dealer's mistakes landing on one friend. The test
(``suspected_sweetheart_dealing``) compares the pair with the dealer himself:
of his N seat-rounds, K had at least one error in the player's favour; if
those K fall on his seat-rounds at random, the number X of them among the
pair's n seat-rounds is hypergeometric, and P(X >= k) is summed exactly in
whole numbers. A dealer who errs for everyone (a training problem) has a
large K, so many favourable errors to one player are what chance expects and
no pair stands out; what is flagged is a pair whose share of the dealer's
favourable errors is far above its share of his seat-rounds. With many pairs
tested, the default threshold is small on purpose (a Bonferroni-minded 1e-4),
and a minimum count keeps one or two errors from ever making a case.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from math import comb

from game.evaluator import category_of
from game.record import RoundRecord
from game.rules import FOLD, TableRules
from game.settlement import floor_to
from game.verdict import Verdict
from game.vocabulary import Bet, FindingCode

ZERO = Decimal(0)


class ErrorType(StrEnum):
    """What kind of mistake a payout mismatch is; ``EXPLANATIONS`` says each in one sentence."""

    ANTE_NOT_PUSHED = "ante_not_pushed"
    ANTE_PUSHED_WRONGLY = "ante_pushed_wrongly"
    BLIND_BELOW_STRAIGHT = "blind_below_straight"
    BLIND_WRONG_LINE = "blind_wrong_line"
    PLAY_MULTIPLE = "play_multiple"
    TRIPS_WRONG_LINE = "trips_wrong_line"
    PROGRESSIVE_LINE = "progressive_line"
    AGGREGATE_LIMIT_IGNORED = "aggregate_limit_ignored"
    WRONG_WINNER = "wrong_winner"
    OTHER = "other"


EXPLANATIONS: Mapping[ErrorType, str] = {
    ErrorType.ANTE_NOT_PUSHED:
        "The dealer did not qualify, yet the Ante was paid or collected instead of pushed.",
    ErrorType.ANTE_PUSHED_WRONGLY:
        "The Ante was pushed although the dealer qualified (or the player folded).",
    ErrorType.BLIND_BELOW_STRAIGHT:
        "The Blind was paid on a winning hand below the lowest Blind pay line, where it pushes.",
    ErrorType.BLIND_WRONG_LINE:
        "The Blind of a winning hand was paid at another line of the pay table, or pushed.",
    ErrorType.PLAY_MULTIPLE:
        "The Play was won or lost at the wrong amount, such as 4x the Ante for a 3x Play.",
    ErrorType.TRIPS_WRONG_LINE:
        "Trips was paid at the wrong line, paid on a losing hand, or collected from a winner.",
    ErrorType.PROGRESSIVE_LINE:
        "The Progressive was settled at another amount than its pool's pay line and wager give.",
    ErrorType.AGGREGATE_LIMIT_IGNORED:
        "A win was paid in full in a round the table's aggregate limit scaled down.",
    ErrorType.WRONG_WINNER:
        "A bet was settled as won when it lost, lost when it won, or either when it tied.",
    ErrorType.OTHER:
        "The dealer settled a wrong amount that none of the patterns above explains.",
}


class Direction(StrEnum):
    FOR_PLAYER = "for_player"  # the dealer paid too much or collected too little
    FOR_HOUSE = "for_house"


class Outcome(StrEnum):
    """The player's hand against the dealer's (a folded hand has one too)."""

    WON = "won"
    TIED = "tied"
    LOST = "lost"


@dataclass(frozen=True, slots=True)
class MismatchContext:
    """One payout mismatch and what the verdict knows about its seat (player's view)."""

    bet: str
    expected: Decimal
    claimed: Decimal
    ante: Decimal
    blind: Decimal
    play: Decimal
    trips: Decimal
    decision: str
    hand: int | None  # the seat's hand category; None when it held no cards (or a void round)
    dealer_hand: int | None  # the dealer's hand category
    dealer_qualifies: bool | None
    outcome: Outcome | None
    blind_pays: Mapping[int, Decimal]
    trips_pays: Mapping[int, Decimal]
    minor_unit: Decimal
    limit_applied: bool = False  # the round's wins were scaled to the aggregate limit


@dataclass(frozen=True, slots=True)
class Fingerprint:
    type: ErrorType
    direction: Direction
    bet: str
    amount_for_player: Decimal  # claimed - expected, in the round's currency


def classify(context: MismatchContext) -> Fingerprint:
    """The fingerprint of one payout mismatch."""
    amount = context.claimed - context.expected
    if not amount:
        raise ValueError("a bet settled as the rules say is no mismatch")
    direction = Direction.FOR_PLAYER if amount > 0 else Direction.FOR_HOUSE
    return Fingerprint(_error_type(context), direction, context.bet, amount)


def _error_type(c: MismatchContext) -> ErrorType:
    if c.bet == Bet.PROGRESSIVE:
        return ErrorType.PROGRESSIVE_LINE
    if c.hand is None or c.outcome is None:
        return ErrorType.OTHER  # no cards to read the mistake from
    if _limit_ignored(c):
        return ErrorType.AGGREGATE_LIMIT_IGNORED
    return _BY_BET[c.bet](c)


def _sign(amount: Decimal) -> int:
    return (amount > 0) - (amount < 0)


def _sign_flipped(c: MismatchContext) -> bool:
    return _sign(c.claimed) != _sign(c.expected)


def _other_lines(wager: Decimal, pays: Mapping[int, Decimal], c: MismatchContext) -> set[Decimal]:
    """What the wager wins at every pay line but the hand's own."""
    return {floor_to(wager * pay, c.minor_unit) for line, pay in pays.items() if line != c.hand}


def _full_win(c: MismatchContext) -> Decimal | None:
    """The bet's win before the aggregate limit scaled it, None when it did not win."""
    if c.bet == Bet.TRIPS:
        pay = c.trips_pays.get(c.hand)
        return floor_to(c.trips * pay, c.minor_unit) if pay and c.trips else None
    if c.outcome is not Outcome.WON or c.decision == FOLD:
        return None
    if c.bet == Bet.BLIND:
        pay = c.blind_pays.get(c.hand)
        return floor_to(c.blind * pay, c.minor_unit) if pay else None
    if c.bet == Bet.ANTE:
        return c.ante if c.dealer_qualifies else None
    return c.play


def _limit_ignored(c: MismatchContext) -> bool:
    return c.limit_applied and ZERO <= c.expected < c.claimed and c.claimed == _full_win(c)


def _ante(c: MismatchContext) -> ErrorType:
    if c.claimed == 0:
        return ErrorType.ANTE_PUSHED_WRONGLY
    should_push = c.decision != FOLD and c.outcome is not Outcome.TIED and not c.dealer_qualifies
    if should_push:
        return ErrorType.ANTE_NOT_PUSHED
    return ErrorType.WRONG_WINNER if _sign_flipped(c) else ErrorType.OTHER


def _blind(c: MismatchContext) -> ErrorType:
    if c.outcome is Outcome.WON and c.decision != FOLD:
        if c.hand not in c.blind_pays:
            if c.claimed > 0:
                return ErrorType.BLIND_BELOW_STRAIGHT
        elif c.claimed == 0 or c.claimed in _other_lines(c.blind, c.blind_pays, c):
            return ErrorType.BLIND_WRONG_LINE
    return ErrorType.WRONG_WINNER if _sign_flipped(c) else ErrorType.OTHER


def _play(c: MismatchContext) -> ErrorType:
    if c.decision == FOLD:
        return ErrorType.OTHER  # a folded hand has no Play to settle
    if _sign_flipped(c):
        return ErrorType.WRONG_WINNER
    # Same side, wrong amount: most often another decision's multiple of the
    # Ante; any other amount is the same mistake at the Play.
    return ErrorType.PLAY_MULTIPLE


def _trips(c: MismatchContext) -> ErrorType:
    if not c.trips:
        return ErrorType.OTHER
    if c.hand in c.trips_pays:
        if c.claimed < 0 or c.claimed in _other_lines(c.trips, c.trips_pays, c):
            return ErrorType.TRIPS_WRONG_LINE
    elif c.claimed > 0:
        return ErrorType.TRIPS_WRONG_LINE
    return ErrorType.OTHER


_BY_BET = {
    Bet.ANTE.value: _ante, Bet.BLIND.value: _blind, Bet.PLAY.value: _play, Bet.TRIPS.value: _trips,
}


def mismatch_contexts(
    record: RoundRecord, verdict: Verdict, rules: TableRules
) -> dict[int, tuple[MismatchContext, ...]]:
    """Every payout mismatch of a judged round, with its seat's context, by seat.

    Seats whose payment was checked get a key, with no contexts when the dealer
    paid them right; in a round with a duplicated card nothing was checked.
    """
    codes = {finding.code for finding in verdict.findings}
    if FindingCode.DUPLICATE_CARD in codes:
        return {}
    limit_applied = FindingCode.AGGREGATE_LIMIT_APPLIED in codes
    records = {s.seat: s for s in record.seats}
    hands = {s.seat: s.hand for s in verdict.seats}
    dealer = verdict.dealer_hand
    found: dict[int, list[MismatchContext]] = {
        s.seat: [] for s in record.seats if s.paid is not None
    }
    for finding in verdict.findings:
        if finding.code != FindingCode.PAYOUT_MISMATCH:
            continue
        seat, hand = records[finding.seat], hands[finding.seat]
        found[finding.seat].append(MismatchContext(
            bet=finding.bet, expected=finding.expected, claimed=finding.claimed,
            ante=seat.ante, blind=seat.blind, play=seat.play, trips=seat.trips,
            decision=seat.decision,
            hand=None if hand is None else category_of(hand),
            dealer_hand=None if dealer is None else category_of(dealer),
            dealer_qualifies=verdict.dealer_qualifies,
            outcome=_outcome(hand, dealer),
            blind_pays=rules.blind_pays, trips_pays=rules.trips_pays, minor_unit=rules.minor_unit,
            limit_applied=limit_applied,
        ))
    return {seat: tuple(contexts) for seat, contexts in found.items()}


def _outcome(hand: int | None, dealer: int | None) -> Outcome | None:
    if hand is None or dealer is None:
        return None
    return Outcome.WON if hand > dealer else Outcome.LOST if hand < dealer else Outcome.TIED


def fingerprint_round(
    record: RoundRecord, verdict: Verdict, rules: TableRules
) -> dict[int, tuple[Fingerprint, ...]]:
    """The fingerprints of each checked seat of a judged round (empty when paid right)."""
    contexts = mismatch_contexts(record, verdict, rules)
    return {seat: tuple(classify(c) for c in found) for seat, found in contexts.items()}


# Aggregation: every seat-round dealt is an opportunity, erring or not.


@dataclass(frozen=True, slots=True)
class SeatRound:
    dealer: str
    player: str | None  # None: an unknown player, counted for the dealer but never as a pair
    currency: str
    fingerprints: tuple[Fingerprint, ...] = ()


@dataclass(slots=True)
class Tally:
    """One dealer's (or pair's) seat-rounds in one currency, and their errors."""

    seat_rounds: int = 0
    erring: int = 0  # seat-rounds with at least one error
    favourable: int = 0  # seat-rounds with at least one error for the player
    counts: Counter[tuple[ErrorType, Direction]] = field(default_factory=Counter)
    amounts: dict[tuple[ErrorType, Direction], Decimal] = field(default_factory=dict)

    def add(self, fingerprints: tuple[Fingerprint, ...]) -> None:
        self.seat_rounds += 1
        self.erring += bool(fingerprints)
        self.favourable += any(f.direction is Direction.FOR_PLAYER for f in fingerprints)
        for f in fingerprints:
            key = (f.type, f.direction)
            self.counts[key] += 1
            self.amounts[key] = self.amounts.get(key, ZERO) + f.amount_for_player

    @property
    def amount_for_player(self) -> Decimal:
        return sum(self.amounts.values(), ZERO)


Tallies = dict[str, Tally]  # by currency: amounts of two currencies are never added


@dataclass(frozen=True, slots=True)
class ErrorTallies:
    by_dealer: dict[str, Tallies]
    by_pair: dict[tuple[str, str], Tallies]


def tally_errors(seat_rounds: Iterable[SeatRound]) -> ErrorTallies:
    """Errors by type and direction, per dealer and per (dealer, player), each per currency."""
    by_dealer: dict[str, Tallies] = defaultdict(dict)
    by_pair: dict[tuple[str, str], Tallies] = defaultdict(dict)
    for seat_round in seat_rounds:
        currency = seat_round.currency
        by_dealer[seat_round.dealer].setdefault(currency, Tally()).add(seat_round.fingerprints)
        if seat_round.player is not None:
            pair = (seat_round.dealer, seat_round.player)
            by_pair[pair].setdefault(currency, Tally()).add(seat_round.fingerprints)
    return ErrorTallies(dict(by_dealer), dict(by_pair))


# The sweetheart test.


def hypergeometric_tail(population: int, successes: int, draws: int, observed: int) -> Fraction:
    """P(X >= observed) for X hypergeometric, exactly.

    Each term C(K, i) C(N-K, n-i) follows from the one before by whole-number
    steps, so no term is recomputed and nothing is rounded until the caller
    asks for a float.
    """
    if not (0 <= successes <= population and 0 <= draws <= population):
        raise ValueError("need 0 <= successes, draws <= population")
    failures = population - successes
    low, high = max(observed, draws - failures, 0), min(draws, successes)
    if low > high:
        return Fraction(0)
    ways_success, ways_failure = comb(successes, low), comb(failures, draws - low)
    total = 0
    for i in range(low, high + 1):
        total += ways_success * ways_failure
        ways_success = ways_success * (successes - i) // (i + 1)
        ways_failure = ways_failure * (draws - i) // (failures - draws + i + 1)
    return Fraction(total, comb(population, draws))


@dataclass(frozen=True, slots=True)
class SweetheartSettings:
    threshold: float = 1e-4  # small: every (dealer, player) pair is one test
    min_favourable: int = 3  # the pair's favourable-error seat-rounds needed to make a case


@dataclass(frozen=True, slots=True)
class ErrorLine:
    currency: str
    type: ErrorType
    direction: Direction
    count: int
    amount_for_player: Decimal


@dataclass(frozen=True, slots=True)
class SweetheartSuspicion:
    dealer: str
    player: str
    pair_seat_rounds: int  # n
    pair_favourable: int  # k
    dealer_seat_rounds: int  # N
    dealer_favourable: int  # K
    p_value: Fraction  # P(X >= k), X ~ Hypergeometric(N, K, n)
    threshold: float
    errors: tuple[ErrorLine, ...]  # the pair's errors, both directions

    @property
    def rate_to_others(self) -> Fraction | None:
        """The dealer's favourable-error rate on his other players' seat-rounds."""
        others = self.dealer_seat_rounds - self.pair_seat_rounds
        return Fraction(self.dealer_favourable - self.pair_favourable, others) if others else None


def suspected_sweetheart_dealing(
    tallies: ErrorTallies, settings: SweetheartSettings = SweetheartSettings()
) -> list[SweetheartSuspicion]:
    """The (dealer, player) pairs whose favourable errors chance does not explain, worst first."""
    flagged = []
    for (dealer, player), pair in tallies.by_pair.items():
        n, k = _counts(pair)
        if k < settings.min_favourable:
            continue
        big_n, big_k = _counts(tallies.by_dealer[dealer])
        p_value = hypergeometric_tail(big_n, big_k, n, k)
        if p_value < settings.threshold:
            flagged.append(SweetheartSuspicion(
                dealer, player, n, k, big_n, big_k, p_value, settings.threshold, _error_lines(pair),
            ))
    return sorted(flagged, key=lambda s: (s.p_value, s.dealer, s.player))


def _counts(tallies: Tallies) -> tuple[int, int]:
    # Counts of seat-rounds, unlike amounts, add up across currencies.
    return sum(t.seat_rounds for t in tallies.values()), sum(t.favourable for t in tallies.values())


def _error_lines(tallies: Tallies) -> tuple[ErrorLine, ...]:
    return tuple(
        ErrorLine(currency, kind, direction, count, tally.amounts[kind, direction])
        for currency, tally in sorted(tallies.items())
        for (kind, direction), count in sorted(tally.counts.items())
    )
