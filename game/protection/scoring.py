"""A seat's decisions scored: what each option was worth, what the player chose, what it cost.

For every street a seat decided on (``streets.choices``), the options' values
given what the player could see (``values``, ``preflop``), the best of them,
and the Antes the choice gave up against the best (``ev_lost``: 0 for the best
option, never negative).

The same street is valued again with one piece of knowledge no honest player
has (``Knowledge``): one of the dealer's hole cards, or the other seats' hole
cards. Where that knowledge makes another option best, the decision is a
*telling* one: an honest player's choice there is independent of the hidden
cards, an informed player's follows them (``leak`` tests which).

The values with knowledge are exact on the flop and the river (the pages
show them), but for the other seats' cards on the flop: a flop with up to
twelve more known cards is a new exact sum per seat, so there each
companion's cards get the verdict of a rule (``flop_companions``: the pair
taken out of the turn and river moves his equity), with no values. What the hole-carding
test reads is each street's, preflop included, and the hand's, dealer card
verdict (``seen``): the choice against what each of the dealer's cards made
best, and how often an honest choice would be, over the cards no seat held.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from game.cards import Card
from game.evaluator import HIGH_CARD, PAIR, category_of, evaluate
from game.record import RoundRecord
from game.vocabulary import DECISIONS

from . import flop_companions as fc
from . import seen as sn
from . import values as v
from .flop_table import FlopTable
from .lines import LineModel, Plan, ShownSeat, buckets
from .preflop import PreflopTable
from .streets import BOARD_SEEN, CHECK, OPTIONS, STREETS, Street, choices


class Knowledge(StrEnum):
    """What a player might know that the rules keep from them."""

    DEALER_FIRST = "dealer_first"  # the dealer's first hole card, as the record lists them
    DEALER_SECOND = "dealer_second"
    DEALER_CARD = "dealer_card"  # one of the dealer's hole cards, either: what the hole-carding test reads
    COMPANION = "companion"  # one companion's hole cards: ``companion:<player>``, per companion


# Each dealer card valued apart, by its place in the record: what the pages show, not what is tested.
DEALER_CARD_AT = {Knowledge.DEALER_FIRST.value: 0, Knowledge.DEALER_SECOND.value: 1}
SEEN_CARD = Knowledge.DEALER_CARD.value
_COMPANION_PREFIX = f"{Knowledge.COMPANION.value}:"


def companion_knowledge(companion: str) -> str:
    """The knowledge of one companion's hole cards, named by the companion."""
    return f"{_COMPANION_PREFIX}{companion}"


def companion_of(knowledge: str) -> str | None:
    """The companion a knowledge names, or None for a dealer card."""
    return knowledge[len(_COMPANION_PREFIX):] if knowledge.startswith(_COMPANION_PREFIX) else None


def knowledge_words(knowledge: str) -> str:
    """A piece of knowledge in the words a finding's detail and the pages use."""
    companion = companion_of(knowledge)
    if companion is not None:
        return f"{companion}'s hole cards"
    return {
        Knowledge.DEALER_FIRST.value: "the dealer's first hole card",
        Knowledge.DEALER_SECOND.value: "the dealer's second hole card",
        Knowledge.DEALER_CARD.value: "one of the dealer's hole cards",
    }[knowledge]


def best_of(options: dict[str, float]) -> str:
    """The option worth most; on a tie the first listed (``streets.OPTIONS`` order)."""
    return max(options, key=options.__getitem__)


@dataclass(frozen=True, slots=True)
class Informed:
    """One street valued with extra knowledge: with the actual hidden cards, and (``shares``, on
    the river) per option the share of the cards he could not see that would have made it best."""

    values: dict[str, float]
    best: str
    shares: dict[str, float] | None = None


@dataclass(frozen=True, slots=True)
class DecisionScore:
    street: str
    chosen: str
    values: dict[str, float]  # every option, Antes, from what the player could see
    informed: dict[str, Informed] = field(default_factory=dict)  # by Knowledge
    hand: int = HIGH_CARD  # the category the player held when deciding (own cards and the board seen)
    seen: sn.SeenVerdict | None = None  # the choice against what a seen dealer card made best (``seen``)

    @property
    def best(self) -> str:
        return best_of(self.values)

    @property
    def ev_lost(self) -> float:
        return self.values[self.best] - self.values[self.chosen]

    def telling(self, knowledge: str) -> bool:
        """Whether this knowledge would have made another option best."""
        seen = self.informed.get(knowledge)
        return seen is not None and seen.best != self.best


@dataclass(frozen=True, slots=True)
class SeatScore:
    decisions: tuple[DecisionScore, ...]
    scored: bool  # False: some street could not be valued (e.g. a pay table with no preflop table)
    seen: sn.SeenVerdict | None = None  # every street's choice at once against a seen dealer card

    @property
    def ev_lost(self) -> float:
        return sum(d.ev_lost for d in self.decisions)


def held_category(hole: Sequence[Card], seen: Sequence[Card]) -> int:
    """The hand category of the player's cards and the board he has seen (a pocket pair before the flop)."""
    if not seen:
        return PAIR if hole[0] >> 2 == hole[1] >> 2 else HIGH_CARD
    return category_of(evaluate([*hole, *seen]))


Companions = Mapping[str, Sequence[Card]]  # a seat's companions' hole cards, by companion


def knowledge_views(
    street: str, hole: Sequence[Card], dealer_cards: Sequence[Card], companions: Companions,
) -> dict[str, v.View]:
    """What a player would see with each piece of knowledge valued on this street: each dealer
    card in turn, and on the river each companion's cards."""
    views = {k: v.View.of(hole, known_dealer=(dealer_cards[p],)) for k, p in DEALER_CARD_AT.items()}
    if street == Street.RIVER.value:
        views.update((companion_knowledge(c), v.View.of(hole, dead=cards)) for c, cards in companions.items())
    return views


def river_shares(
    hole: Sequence[Card], board: Sequence[Card], companions: Companions, pays: v.PayTable,
    lines: LineModel | None = None, shown: Mapping[str, Plan] | None = None, elsewhere: Sequence[Card] = (),
) -> dict[str, dict[str, float]]:
    """Per companion's knowledge on the river, each option's share (``Informed.shares``): what the
    collusion test reads (``companion_shares``). (The dealer's cards are tested from ``seen``'s
    verdicts.)"""
    if not companions:
        return {}
    unseen = v.river_unseen(hole, board, pays)
    pairs, bets = unseen.pairs(), unseen.bet_with_dead_pair
    weigh = _weigher(pairs, board, lines, shown, bets)
    return companion_shares(bets, pairs, companions, OPTIONS[Street.RIVER.value], weigh, elsewhere)


def _weigher(pairs: np.ndarray, board: Sequence[Card], lines: LineModel | None, shown: Mapping[str, Plan] | None,
             bets: np.ndarray) -> Callable[[str], np.ndarray] | None:
    """How likely each companion's shown line is with each pair, or None: every pair alike (no model,
    or every pair gives one verdict in ``bets``, which no weighing moves off a share of 0 or 1)."""
    if lines is None or shown is None or bets.all() or not bets.any():
        return None
    found = buckets(pairs, board)
    return lambda companion: lines.weights(companion, found, shown.get(companion, ()))


def companion_shares(
    bets: np.ndarray, pairs: np.ndarray, companions: Companions, options: Sequence[str],
    weigh: Callable[[str], np.ndarray] | None, elsewhere: Sequence[Card],
) -> dict[str, dict[str, float]]:
    """Per companion's knowledge, the share of the pairs he may hold that make the street's bigger bet
    best (``bets``, per row of ``pairs``) and the share that make the other option best.

    The pairs he may hold are those without a card dealt elsewhere (``elsewhere``:
    every other seat's and the dealer's). Given those cards, what the other seats
    showed says nothing more of his (their lines are their own cards' and
    choices'), so a player who reads their lines by card removal gains nothing the
    chance does not count; and his choice, made without seeing any of them, is
    as independent of the companion's cards given them as it is without. Each
    pair counts as likely as the companion's shown line is with it (``weigh``,
    ``game.protection.lines``); all alike without. Each side is summed apart:
    where no pair makes an option best its share is exactly 0, a step not read.
    """
    held = fc.card_bits(elsewhere)
    held_pairs = fc.card_bits(pairs)
    bigger, smaller = options[0], options[-1]
    shares = {}
    for c, cards in companions.items():
        free = held_pairs & (held & ~fc.card_bits(cards)) == 0
        weight = (weigh(c) if weigh is not None else 1.0) * free
        bet, other = float(weight[bets].sum()), float(weight[~bets].sum())
        shares[companion_knowledge(c)] = {bigger: bet / (bet + other), smaller: other / (bet + other)}
    return shares


def shown_lines(
    plans: Sequence[Plan], names: Sequence[str], street: str = Street.RIVER.value,
) -> list[dict[str, Plan]]:
    """What each seat (in the order they act) had seen of every other seat's line at its decision on
    ``street``: their choices on the streets before it, and on it those of the seats before it."""
    order = STREETS.index(street)
    return [
        {
            names[j]: tuple((s, option) for s, option in plans[j]
                            if STREETS.index(s) < order or (s == street and j < i))
            for j in range(len(plans)) if j != i
        }
        for i in range(len(plans))
    ]


def flop_informed(
    hole: Sequence[Card], board: Sequence[Card], companions: Companions, options: dict[str, float],
    runouts: fc.FlopRunouts, lines: LineModel | None = None, shown: Mapping[str, Plan] | None = None,
    elsewhere: Sequence[Card] = (),
) -> dict[str, Informed]:
    """Per companion's knowledge on the flop, what his cards made best by the flop's rule
    (``flop_companions``: no values, the rule is not an exact valuation) and each option's share
    (``companion_shares``, his line as shown by then: ``shown``)."""
    if not companions:
        return {}
    pairs = fc.unseen_pairs(hole, board)
    bets = fc.pair_bets(hole, board[: BOARD_SEEN[Street.FLOP.value]], runouts, options, pairs)
    weigh = _weigher(pairs, board, lines, shown, bets)
    shares = companion_shares(bets, pairs, companions, OPTIONS[Street.FLOP.value], weigh, elsewhere)
    return {
        companion_knowledge(c): Informed(
            {}, sn.FLOP_2X if bets[fc.pair_row(hole, board, cards)] else CHECK, shares[companion_knowledge(c)])
        for c, cards in companions.items()
    }


def score_seats(
    holes: Sequence[Sequence[Card]],
    decisions: Sequence[str],
    board: Sequence[Card],
    dealer_cards: Sequence[Card],
    pays: v.PayTable,
    preflop: PreflopTable,
    others: Sequence[Companions] | None = None,
    flops: FlopTable | None = None,
    seated: Sequence[Sequence[Card]] | None = None,
    lines: LineModel | None = None,
    names: Sequence[str] | None = None,
) -> list[SeatScore]:
    """Score the seats of a dealt round, each by its hole cards and decision: ``others``, per
    seat, its companions' hole cards by companion (for collusion); ``flops``, a table of the
    flop's values to read instead of valuing each flop (``flop_table``); ``seated``, every hole
    dealt at the table (``holes`` when not given), which the dealer's cards are not among;
    ``lines`` and ``names``, how likely each companion's line is with each pair and the seats'
    names as their companions know them, by which each seat's view of the others' lines is found
    on the flop and the river (``shown_lines``; without them every pair counts alike).

    A street is valued for every seat that decided on it at once, and each
    piece of knowledge likewise: the seats share the board and the dealer's
    cards, so the dealer's hands are valued once for all of them.
    """
    plans = [choices(decision) for decision in decisions]
    seated = seated if seated is not None else holes
    dealt = (*dealer_cards, *(card for hole in seated for card in hole))  # each companion's pairs leave these
    valued = _streets_valued(plans, holes, board, dealer_cards, pays, others, flops, lines, names, dealt)
    unseen = sn.unseen_at_table(seated, board)
    boards = None
    scores = []
    for i, plan in enumerate(plans):
        decided, scored, agree_all = [], True, np.ones(len(unseen), dtype=bool)
        for street, chosen in plan:
            held = held_category(holes[i], board[: BOARD_SEEN[street]])
            if street == Street.PREFLOP.value:
                options = preflop.values(holes[i], pays)
                if options is None:
                    scored = False
                    continue
                informed_of: dict[str, Informed] = {}
                bets = sn.preflop_best(holes[i], unseen, options)
            else:
                options, informed_of = valued[i, street]
                if street == Street.FLOP.value:
                    if boards is None:
                        boards = sn.flop_boards(board[:3], unseen, (*sorted(board), *unseen.tolist()))
                    bets = sn.flop_best(holes[i], board[:3], boards, options)
                else:
                    bets = sn.river_best(holes[i], board, unseen, pays)
            agrees = sn.agreeing(street, chosen, bets)
            agree_all &= agrees
            seen = sn.verdict(agrees, unseen, dealer_cards)
            decided.append(DecisionScore(street, chosen, options, informed_of, held, seen))
        hand = sn.verdict(agree_all, unseen, dealer_cards) if decided else None
        scores.append(SeatScore(tuple(decided), scored, hand))
    return scores


def _streets_valued(plans, holes, board, dealer_cards, pays, others, flops, lines, names, dealt):
    """Each seat's values on the flop and the river, its own and with each piece of knowledge,
    by (seat, street); the views of all seats on a street valued in one pass."""
    valued: dict[tuple[int, str], tuple[dict[str, float], dict[str, Informed]]] = {}
    for street in (Street.FLOP.value, Street.RIVER.value):
        shown = shown_lines(plans, names, street) if lines is not None and names is not None else None
        at = [i for i, plan in enumerate(plans) if any(s == street for s, _ in plan)]
        seen = board[: BOARD_SEEN[street]]
        views: dict[tuple[int, str | None], v.View] = {}  # by (seat, knowledge); None: its own
        own: dict[int, dict[str, float] | None] = {}
        told: dict[int, dict[str, v.View]] = {}
        for i in at:
            own[i] = flops.values(holes[i], seen, pays) if flops is not None and street == Street.FLOP.value else None
            if own[i] is None:
                views[i, None] = v.View.of(holes[i])
            told[i] = knowledge_views(street, holes[i], dealer_cards, others[i] if others is not None else {})
            views.update(((i, knowledge), view) for knowledge, view in told[i].items())
        found = dict(zip(views, v.values_of(list(views.values()), seen, pays)))
        for i in at:
            companions = others[i] if others is not None else {}
            seen_lines = shown[i] if shown is not None else None
            options = own[i] or found[i, None]
            shares = (river_shares(holes[i], board, companions, pays, lines, seen_lines, dealt)
                      if street == Street.RIVER.value else {})
            informed = {k: Informed(found[i, k], best_of(found[i, k]), shares.get(k)) for k in told[i]}
            if street == Street.FLOP.value and companions:  # the flop's draws shared by its seats (cached)
                informed.update(flop_informed(holes[i], board, companions, options, fc.flop_runouts(seen),
                                              lines, seen_lines, dealt))
            valued[i, street] = options, informed
    return valued


def score_seat(
    hole: Sequence[Card],
    board: Sequence[Card],
    dealer_cards: Sequence[Card],
    decision: str,
    pays: v.PayTable,
    preflop: PreflopTable,
    others: Companions | None = None,
    flops: FlopTable | None = None,
) -> SeatScore:
    """Score one seat of a dealt round (``score_seats``, ``others`` its companions' hole cards, the
    other seats of the table)."""
    others = others or {}
    seated = [hole, *others.values()]
    return score_seats([hole], [decision], board, dealer_cards, pays, preflop, [others], flops, seated)[0]


def _name(seat) -> str:
    return seat.player or f"seat {seat.seat}"


def _scorable(record: RoundRecord) -> list:
    """The seats of a round that can be scored (none when its cards cannot be trusted)."""
    if record.void or record.board is None or record.dealer_cards is None:
        return []
    cards = record.all_cards()
    if len(set(cards)) != len(cards) or len(record.board) != 5 or len(record.dealer_cards) != 2:
        return []
    return [s for s in record.seats if s.hole is not None and s.decision in DECISIONS]


def shown_seats(record: RoundRecord, seats: Sequence | None = None) -> list[ShownSeat]:
    """A round's seats as the line model counts them (``lines.LineModel``): each seat that can be
    scored (``seats``, where the caller has found them), named as its companions name it."""
    return [ShownSeat(_name(s), tuple(s.hole), tuple(record.board), choices(s.decision))
            for s in (seats if seats is not None else _scorable(record))]


def score_round(
    record: RoundRecord, pays: v.PayTable, preflop: PreflopTable, flops: FlopTable | None = None,
    lines: LineModel | None = None,
) -> dict[int, SeatScore]:
    """Every seat of a posted round that played cards, by seat number.

    A seat's companions are the other seats with hole cards, each named by
    its player (or ``seat N`` without one); a player's own other seats are
    none of his companions: he sees their cards. ``lines``: the day's line
    model (the round's own seats are left out of it here), by which each
    companion's possible pairs are weighed (``river_shares``).

    A void round, one without its board or dealer cards, or one with a card
    given twice has nothing to score: its cards cannot be trusted to say what
    anyone knew. Nor has a seat without hole cards or with a decision the
    contract does not know.
    """
    seats = _scorable(record)
    if not seats:
        return {}
    holes = [s.hole for s in seats]
    others = [
        {
            _name(other): other.hole
            for other in record.seats
            if other is not seat and other.hole and not (seat.player and other.player == seat.player)
        }
        for seat in seats
    ]
    seated = [s.hole for s in record.seats if s.hole is not None]
    names = None
    if lines is not None:
        counted = shown_seats(record, seats)
        lines = lines.without(counted)
        names = [seat.player for seat in counted]
    scores = score_seats(
        holes, [s.decision for s in seats], record.board, record.dealer_cards, pays, preflop, others, flops,
        seated, lines, names,
    )
    return {seat.seat: score for seat, score in zip(seats, scores)}
