"""What one of the dealer's cards, had a player seen it, would have told him: on every street he decided.

A hole-carder sees one of the dealer's two cards, before the flop or later,
and plays what it tells him. The test asks of each choice whether it is what
the dealer's card made best, and how often an honest player's would be.

**The cards the chance is counted over.** Everything a player may legally
see (his cards, the board, the other seats' chips as they act) is a
function of the cards dealt to the seats and the board, and of people's
choices; none of it depends on the dealer's cards unless someone at the
table sees them. So, given every seat's hole cards and the whole board, the
dealer's two cards are a uniform draw from the cards no seat holds and the
board does not show (``unseen_at_table``), and each is independent of every
honest choice made at the table, a "table-watcher's" included. A choice's
chance of agreeing with a rule ``best(card)`` is then exactly the share of
those cards for which it does, whatever the rule and whatever the player's
style (``SeenVerdict.share``).

**The rule.** Any fixed rule keeps that chance exact; a good one makes the
test powerful. The river's is exact (``values.river_unseen``: the better of
1x and fold with the card known). Before the flop and on the flop the rule
is the option the player's own values make best, moved by what the card
does to his equity ``E[w]`` (the chance he beats the dealer less the chance
he loses): 4x when ``(4x − check) + 2.8·ΔE[w] > 0``, 2x when
``(2x − check) + 1.1·ΔE[w] > 0``. The slopes are those of the option gap
against the equity over the 169 starting hands (weighted by their pairs,
hands within half an Ante of the edge) and over 300 random flops (within
0.3): checking keeps the Play to come small, so a better equity is worth
more to the larger bet. Before the flop the equity with the card known is
read from a shipped table (``seen_table``); on the flop it is counted over
``FLOP_BOARDS`` turn-and-river pairs drawn (seeded by the round's cards)
from the cards unseen at the table, against every second dealer card.

**Either card.** A record lists the dealer's cards in whatever order its
table chose, and a hole-carder sees whichever card he can. A verdict keeps
both (``informed``), and the test's likelihood ratio is their average
(``ratio``): under honest play each card alone agrees with chance ``share``,
so the average's expectation is exactly one, whichever card he saw and
however the record lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from game import hand_arrays as ha
from game.cards import Card
from game.vocabulary import Decision

from . import seen_table
from . import values as v
from .streets import CHECK, OPTIONS

PREFLOP_SLOPE = 2.8  # Antes of (4x − check) per unit of equity, near the edge
FLOP_SLOPE = 1.1  # Antes of (2x − check) per unit of equity, near the edge
FLOP_BOARDS = 8  # turn-and-river pairs the flop's equity with a card known is counted over

P4, FLOP_2X = Decision.PREFLOP_4X.value, Decision.FLOP_2X.value


@dataclass(frozen=True, slots=True)
class SeenVerdict:
    """A choice (one street's, or a hand's every street) against what a seen dealer card made best."""

    informed: tuple[bool, bool]  # whether it is what the dealer's first / second listed card made best
    share: float  # the chance an honest choice is: the share of the cards unseen at the table that make it best

    @property
    def telling(self) -> bool:
        """Whether the card could have told anything: some unseen cards agree with the choice, some do not."""
        return 0.0 < self.share < 1.0

    def ratio(self) -> float:
        """The likelihood ratio of a player who saw one of the two cards (either) against an honest one;
        its expectation under honest play is one."""
        return (self.informed[0] + self.informed[1]) / (2 * self.share)

    def as_json(self) -> dict:
        return {"informed": list(self.informed), "share": round(self.share, 6)}

    @classmethod
    def from_json(cls, stored: dict | None) -> SeenVerdict | None:
        if not stored:
            return None
        first, second = stored["informed"]
        return cls((bool(first), bool(second)), float(stored["share"]))


def unseen_at_table(holes: Sequence[Sequence[Card]], board: Sequence[Card]) -> np.ndarray:
    """The cards no seat holds and the board does not show, in order: where the dealer's cards lie."""
    taken = {*board, *(c for hole in holes for c in hole)}
    return np.array([c for c in range(52) if c not in taken], dtype=np.int64)


def verdict(agrees: np.ndarray, cards: np.ndarray, dealer_cards: Sequence[Card]) -> SeenVerdict:
    """From whether each unseen card (``cards``) makes the choice best."""
    at = np.searchsorted(cards, dealer_cards)
    return SeenVerdict((bool(agrees[at[0]]), bool(agrees[at[1]])), float(agrees.mean()))


def preflop_best(hole: Sequence[Card], cards: np.ndarray, options: dict[str, float]) -> np.ndarray:
    """Per card, whether 4x is best (else check) with it known to be the dealer's."""
    table = seen_table.shipped()
    h1, h2 = hole
    moved = table[h1, h2, cards].astype(float) - seen_table.hole_equity(table, hole)
    return options[P4] - options[CHECK] + PREFLOP_SLOPE * moved > 0


@dataclass(frozen=True, slots=True)
class FlopBoards:
    """The round's sampled turn-and-river pairs and, on each, the dealer's hand with every pair of
    the cards left (``values[b, p]``); each card's second-card pairs by position (``holding``)."""

    cards: np.ndarray  # the cards unseen at the table
    boards: np.ndarray  # (B, 2) positions in ``cards``
    left: np.ndarray  # (B, n − 2) positions in ``cards`` each board leaves
    values: np.ndarray  # (B, pairs)
    holding: np.ndarray  # (n − 2, n − 3) pair rows holding each position of ``left``


def flop_boards(flop: Sequence[Card], cards: np.ndarray, seed: Sequence[int]) -> FlopBoards:
    n = len(cards)
    order = np.random.default_rng(list(seed)).permutation(n)
    count = min(FLOP_BOARDS, (n - 2) // 2)
    boards = order[: 2 * count].reshape(count, 2)
    left = np.array([[p for p in range(n) if p not in row] for row in boards.tolist()], dtype=np.int64)
    pairs = v._combos(n - 2, 2)
    hands = np.concatenate([
        np.broadcast_to(cards[boards][:, None, :], (count, len(pairs), 2)),
        cards[left][:, pairs],
    ], axis=2)
    key, mask = ha.key_of(flop)
    values = ha.values(
        key + ha.CARD_KEYS[hands].sum(axis=2),
        lambda at: mask + ha.CARD_MASKS[hands.reshape(-1, 4)[at]].sum(axis=-1),
    )
    return FlopBoards(cards, boards, left, values, v._pairs_holding(n - 2))


def flop_best(hole: Sequence[Card], flop: Sequence[Card], found: FlopBoards, options: dict[str, float]) -> np.ndarray:
    """Per card, whether 2x is best (else check) with it known to be the dealer's."""
    key, mask = ha.key_of((*hole, *flop))
    turns = found.cards[found.boards]
    player = ha.values(key + ha.CARD_KEYS[turns].sum(axis=1), mask + ha.CARD_MASKS[turns].sum(axis=1))
    beats = np.sign(player[:, None] - found.values)  # (B, pairs): +1 he wins, −1 he loses
    by_position = beats[:, found.holding].sum(axis=2)  # (B, n − 2): over every second card
    total = np.zeros(len(found.cards))
    counted = np.zeros(len(found.cards))
    np.add.at(total, found.left, by_position)
    np.add.at(counted, found.left, found.holding.shape[1])
    equity = total / counted
    return options[FLOP_2X] - options[CHECK] + FLOP_SLOPE * (equity - equity.mean()) > 0


def river_best(hole: Sequence[Card], board: Sequence[Card], cards: np.ndarray, pays: v.PayTable) -> np.ndarray:
    """Per card, whether 1x is best (else fold) with it known to be the dealer's: exact."""
    unseen = v.river_unseen(hole, board, pays)
    at = np.searchsorted(np.array(unseen.cards), cards)
    return unseen.bet_with_dealer_card[at]


def other_option(street: str, chosen: str) -> str:
    """The option a seen card made best when the choice was not it: the street's bigger bet or its
    check or fold (3x, never best, is answered with 4x)."""
    bigger, smaller = OPTIONS[street][0], OPTIONS[street][-1]
    return smaller if chosen == bigger else bigger


def agreeing(street: str, chosen: str, bets: np.ndarray) -> np.ndarray:
    """Per card, whether the choice is the option the card made best (``bets``: the bigger bet best)."""
    bigger, smaller = OPTIONS[street][0], OPTIONS[street][-1]
    if chosen == bigger:
        return bets
    if chosen == smaller:
        return ~bets
    return np.zeros_like(bets)  # 3x: never the best option, with a card known or not
