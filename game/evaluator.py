"""Best five of five to seven cards, as one comparable integer.

A hand value is ``category << 20`` followed by up to five 4-bit ranks that break
ties in order, so ``value_a > value_b`` exactly when hand a beats hand b and
equal values tie (suits never break ties).

The fast path sums one precomputed key per card: the high bits count ranks in
base 5 (a rank appears at most four times), the low 16 bits count suits in
nibbles. A suit count of five or more means a flush, looked up by that suit's
13-bit rank mask; otherwise the rank multiset alone decides, looked up by its
base-5 number. Both tables hold nothing but what the plain rules in
``_value_from_flush_mask`` and ``_value_from_counts`` say. The flush table is
built at import. The rank table fills itself, each of its 55,380 multisets
worked out the first time a hand meets it: building it whole made importing
the engine take about 0.3 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from .cards import Card

CATEGORIES: tuple[str, ...] = (
    "high_card",
    "pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
    "royal_flush",
)
CATEGORY_INDEX: dict[str, int] = {name: i for i, name in enumerate(CATEGORIES)}
(
    HIGH_CARD,
    PAIR,
    TWO_PAIR,
    THREE_OF_A_KIND,
    STRAIGHT,
    FLUSH,
    FULL_HOUSE,
    FOUR_OF_A_KIND,
    STRAIGHT_FLUSH,
    ROYAL_FLUSH,
) = range(10)

ACE = 12
_CATEGORY_SHIFT = 20


def category_of(value: int) -> int:
    return value >> _CATEGORY_SHIFT


def category_name(value: int) -> str:
    return CATEGORIES[value >> _CATEGORY_SHIFT]


def _pack(category: int, ranks: Sequence[int]) -> int:
    value = category
    for i in range(5):
        value = (value << 4) | (ranks[i] if i < len(ranks) else 0)
    return value


def _straight_high(rank_mask: int) -> int | None:
    """The top rank of the best straight in a 13-bit rank mask, or None."""
    for high in range(ACE, 3, -1):
        run = 0b11111 << (high - 4)
        if rank_mask & run == run:
            return high
    wheel = (1 << ACE) | 0b1111  # A-2-3-4-5: the ace plays low
    if rank_mask & wheel == wheel:
        return 3
    return None


def _value_from_counts(counts: Sequence[int]) -> int:
    """The best non-flush five-card hand that a multiset of ranks holds."""
    by_count: dict[int, list[int]] = {4: [], 3: [], 2: [], 1: []}
    for rank in range(ACE, -1, -1):
        if counts[rank]:
            by_count[min(counts[rank], 4)].append(rank)
    present = [r for r in range(ACE, -1, -1) if counts[r]]

    if by_count[4]:
        quad = by_count[4][0]
        # A card given twice can leave no other rank: the fifth card is the quad's own.
        kicker = next((r for r in present if r != quad), quad)
        return _pack(FOUR_OF_A_KIND, [quad, kicker])
    if by_count[3]:
        trips = by_count[3][0]
        pairs = [r for r in present if r != trips and counts[r] >= 2]
        if pairs:
            return _pack(FULL_HOUSE, [trips, pairs[0]])
    rank_mask = sum(1 << r for r in present)
    high = _straight_high(rank_mask)
    if high is not None:
        return _pack(STRAIGHT, [high])
    if by_count[3]:
        trips = by_count[3][0]
        return _pack(THREE_OF_A_KIND, [trips] + [r for r in present if r != trips][:2])
    if len(by_count[2]) >= 2:
        top, second = by_count[2][:2]
        kicker = next(r for r in present if r not in (top, second))
        return _pack(TWO_PAIR, [top, second, kicker])
    if by_count[2]:
        pair = by_count[2][0]
        return _pack(PAIR, [pair] + [r for r in present if r != pair][:3])
    return _pack(HIGH_CARD, present[:5])


def _value_from_flush_mask(rank_mask: int) -> int:
    """The best hand among five or more cards of one suit, by their ranks."""
    high = _straight_high(rank_mask)
    if high == ACE:
        return _pack(ROYAL_FLUSH, [ACE])
    if high is not None:
        return _pack(STRAIGHT_FLUSH, [high])
    ranks = [r for r in range(ACE, -1, -1) if rank_mask >> r & 1]
    return _pack(FLUSH, ranks[:5])


def _value_from_rank_key(rank_key: int) -> int:
    """What the rank table holds for a base-5 rank key; 0 sends the hand down the slow path.

    Only five or seven cards are looked up (six never occur in a round). A card
    given twice can make five of a rank, which carries into the next base-5
    digit and leaves a key whose digits no longer add up to five or seven.
    """
    counts = []
    for _ in range(13):
        rank_key, count = divmod(rank_key, 5)
        counts.append(count)
    if rank_key or sum(counts) not in (5, 7):
        return 0
    return _value_from_counts(counts)


def _build_flush_table() -> list[int]:
    by_flush_mask = [0] * (1 << 13)
    for mask in range(1 << 13):
        if mask.bit_count() >= 5:
            by_flush_mask[mask] = _value_from_flush_mask(mask)
    return by_flush_mask


_BY_FLUSH_MASK = _build_flush_table()
_BY_RANK_KEY: dict[int, int] = {}  # fills itself (see evaluate_keyed), or all at once: fill_rank_table


def fill_rank_table() -> int:
    """Fill the rank table with every hand of five or seven cards now, instead of as met.

    A fresh process meets most of the 49,205 seven-card rank multisets in its
    first hundred thousand hands, each worked out once (a few seconds in all);
    a process that forks workers (a Celery worker's parent, gunicorn with
    ``preload_app``) fills it once before forking, and every child starts
    with it. Returns how many entries the table holds.
    """
    def counts_of(total: int, rank: int = 0):
        if rank == 12:
            if total <= 4:
                yield (total,)
            return
        for count in range(min(total, 4) + 1):
            for rest in counts_of(total - count, rank + 1):
                yield (count, *rest)

    for total in (5, 7):
        for counts in counts_of(total):
            key = 0
            for rank in range(12, -1, -1):
                key = key * 5 + counts[rank]
            if key not in _BY_RANK_KEY:
                _BY_RANK_KEY[key] = _value_from_counts(list(counts))
    return len(_BY_RANK_KEY)


def rank_values() -> dict[int, int]:
    """Every five- and seven-card rank multiset's hand value, by its base-5 rank key.

    The rules of ``_value_from_counts`` as one table, for evaluators that look
    up many hands at once (``game.hand_arrays``).
    """
    fill_rank_table()
    return {key: value for key, value in _BY_RANK_KEY.items() if value}


def flush_values() -> tuple[int, ...]:
    """The best hand of five or more cards of one suit, by their 13-bit rank mask (0 below five)."""
    return tuple(_BY_FLUSH_MASK)
_SUIT_BITS = 16
_CARD_KEY: tuple[int, ...] = tuple(
    (5 ** (c >> 2) << _SUIT_BITS) | (1 << 4 * (c & 3)) for c in range(52)
)
# Adding 3 to every suit nibble sets its top bit exactly when that suit holds 5+.
_FLUSH_PROBE_ADD = 0x3333
_FLUSH_PROBE_MASK = 0x8888


def cards_key(cards: Sequence[Card]) -> int:
    """The additive key of some cards; keys of disjoint card sets add up."""
    key = 0
    for c in cards:
        key += _CARD_KEY[c]
    return key


def evaluate(cards: Sequence[Card]) -> int:
    """The value of the best five-card hand among five to seven distinct cards.

    Five and seven cards take the table lookups; six (never dealt in this
    game) take the slow path.
    """
    key = 0
    for c in cards:
        key += _CARD_KEY[c]
    return evaluate_keyed(key, cards)


def evaluate_keyed(key: int, cards: Sequence[Card]) -> int:
    """``evaluate`` for callers that already summed ``cards_key(cards)``."""
    probe = ((key & 0xFFFF) + _FLUSH_PROBE_ADD) & _FLUSH_PROBE_MASK
    if probe:
        suit = (probe.bit_length() - 4) // 4
        mask = 0
        for c in cards:
            if c & 3 == suit:
                mask |= 1 << (c >> 2)
        value = _BY_FLUSH_MASK[mask]
    else:
        rank_key = key >> _SUIT_BITS
        value = _BY_RANK_KEY.get(rank_key)
        if value is None:
            # Two threads may both work a new entry out; they store the same value.
            value = _BY_RANK_KEY[rank_key] = _value_from_rank_key(rank_key)
    if not value:
        # Only a card given twice reaches here (five of a rank, or a flush
        # whose suit count includes a repeat): judge it the slow, literal way.
        return evaluate_by_combinations(cards)
    return value


def evaluate_on_board(board_key: int, board: Sequence[Card], pair: Sequence[Card]) -> int:
    """A two-card hand (a seat's hole or the dealer's) with the board, ``board_key`` summed once.

    The seven cards are only gathered into one sequence on the rare flush path.
    """
    key = board_key + _CARD_KEY[pair[0]] + _CARD_KEY[pair[1]]
    if ((key & 0xFFFF) + _FLUSH_PROBE_ADD) & _FLUSH_PROBE_MASK == 0:
        value = _BY_RANK_KEY.get(key >> _SUIT_BITS)
        if value:
            return value
    return evaluate_keyed(key, (*board, *pair))


def evaluate_five(cards: Sequence[Card]) -> int:
    """The value of exactly five cards, by the rules alone (reference path)."""
    suits = {c & 3 for c in cards}
    ranks = [c >> 2 for c in cards]
    if len(suits) == 1 and len(set(ranks)) == 5:
        return _value_from_flush_mask(sum(1 << r for r in ranks))
    counts = [0] * 13
    for r in ranks:
        counts[r] += 1
    return _value_from_counts(counts)


def evaluate_by_combinations(cards: Sequence[Card]) -> int:
    """Best of every five-card subset: slow, obviously right, and tolerant of repeats."""
    return max(evaluate_five(five) for five in combinations(cards, 5))


def best_using_hole(board: Sequence[Card], hole: Sequence[Card]) -> int:
    """The best five-card hand that uses at least one of the hole cards."""
    seven = list(hole) + list(board)
    return max(
        evaluate_five(five)
        for five in combinations(seven, 5)
        if hole[0] in five or hole[1] in five
    )
