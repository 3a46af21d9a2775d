"""The round record on the wire (ROUND_RECORD.md): shape in, stored verdict out.

The input serializers check shape only and give the record its canonical form
(cards as ``Ah``, amounts with two decimals, defaults filled in). Every rule of
the game is the engine's, reached through ``rounds.services.ingest_round``.
"""

from __future__ import annotations

from decimal import Decimal

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from rounds.engine.cards import CardError, card_text, parse_card
from rounds.engine.findings import ALL_CODES
from rounds.engine.rules import BETS, DECISION_MULTIPLES
from rounds.models import Finding, Round

from .fields import AmountField, OffsetDateTimeField, cards_field, money_text


class PaidSerializer(serializers.Serializer):
    ante = AmountField(signed=True, required=False)
    blind = AmountField(signed=True, required=False)
    play = AmountField(signed=True, required=False)
    trips = AmountField(signed=True, required=False)
    progressive = AmountField(signed=True, required=False)

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(BETS))
            if unknown:
                raise serializers.ValidationError(
                    {name: [f"Unknown bet; one of {', '.join(BETS)}."] for name in unknown}
                )
        paid = super().to_internal_value(data)
        return {bet: paid.get(bet, "0.00") for bet in BETS}


class SeatRecordSerializer(serializers.Serializer):
    seat = serializers.IntegerField(min_value=1, max_value=7)
    player = serializers.CharField(max_length=64, required=False, allow_null=True, allow_blank=True)
    hole = cards_field(2, required=False, allow_null=True)
    ante = AmountField()
    blind = AmountField()
    trips = AmountField(required=False, default="0.00")
    progressive = AmountField(required=False, default="0.00")
    progressive_lit = serializers.BooleanField(required=False, default=False)
    decision = serializers.ChoiceField(choices=list(DECISION_MULTIPLES))
    play = AmountField()
    paid = PaidSerializer(required=False, allow_null=True)


class RoundRecordSerializer(serializers.Serializer):
    table = serializers.CharField(max_length=32)
    round = serializers.CharField(max_length=64)
    dealt_at = OffsetDateTimeField()
    dealer = serializers.CharField(max_length=64, required=False, allow_null=True, allow_blank=True)
    void = serializers.BooleanField(required=False, default=False)
    board = cards_field(5, required=False, allow_null=True)
    dealer_cards = cards_field(2, required=False, allow_null=True)
    seats = SeatRecordSerializer(many=True, allow_empty=False, max_length=7)

    def validate(self, attrs):
        errors: dict = {}
        if not attrs.get("void"):
            for name in ("board", "dealer_cards"):
                if not attrs.get(name):
                    errors[name] = ["Required unless the round is void."]
            seat_errors = {
                str(i): {"hole": ["Required unless the round is void."]}
                for i, seat in enumerate(attrs["seats"])
                if not seat.get("hole")
            }
            if seat_errors:
                errors["seats"] = seat_errors
        numbers = [seat["seat"] for seat in attrs["seats"]]
        twice = sorted({n for n in numbers if numbers.count(n) > 1})
        if twice:
            errors.setdefault("seats", {})["non_field_errors"] = [
                f"Seat {n} is listed more than once." for n in twice
            ]
        if errors:
            raise serializers.ValidationError(errors)
        return canonical_record(attrs)


# ---- the same record, without DRF's machinery, when it is plainly well-formed ----


class _NotPlain(Exception):
    """Not plainly well-formed: the serializer judges it (and words any error)."""


_AMOUNT = AmountField()
_PAID_AMOUNT = AmountField(signed=True)
_DEALT_AT = OffsetDateTimeField()


def record_fast(payload) -> dict | None:
    """``RoundRecordSerializer``'s canonical record of ``payload``, or None to ask it instead.

    Tables send the same well-formed shape all evening, and DRF's field
    machinery costs more than judging the round. This accepts only input that
    is plainly valid (exact JSON types, ASCII text without surrounding blanks)
    and returns exactly what the serializer would (tests/api/test_record_fast.py
    holds it to that); anything else, valid or not, returns None and goes
    through the serializer, which is the one that words every error.
    """
    try:
        return _record_fast(payload)
    except _NotPlain:
        return None


def _record_fast(payload) -> dict:
    if type(payload) is not dict:
        raise _NotPlain
    seats = payload.get("seats")
    if type(seats) is not list or not 1 <= len(seats) <= 7:
        raise _NotPlain
    void = _flag(payload, "void")
    record = {
        "table": _text(payload.get("table"), 32),
        "round": _text(payload.get("round"), 64),
        "dealt_at": _dealt_at(payload.get("dealt_at")),
        "dealer": _text(payload.get("dealer"), 64, optional=True),
        "void": void,
        "board": _cards(payload.get("board"), 5, optional=void),
        "dealer_cards": _cards(payload.get("dealer_cards"), 2, optional=void),
        "seats": [_seat(seat, void) for seat in seats],
    }
    numbers = [seat["seat"] for seat in record["seats"]]
    if len(set(numbers)) != len(numbers):
        raise _NotPlain
    return record


def _seat(seat, void: bool) -> dict:
    if type(seat) is not dict:
        raise _NotPlain
    number = seat.get("seat")
    decision = seat.get("decision")
    if type(number) is not int or not 1 <= number <= 7:
        raise _NotPlain
    if type(decision) is not str or decision not in DECISION_MULTIPLES:
        raise _NotPlain
    return {
        "seat": number,
        "player": _text(seat.get("player"), 64, optional=True),
        "hole": _cards(seat.get("hole"), 2, optional=void),
        "ante": _amount(seat.get("ante")),
        "blind": _amount(seat.get("blind")),
        "trips": _amount(seat["trips"]) if "trips" in seat else "0.00",
        "progressive": _amount(seat["progressive"]) if "progressive" in seat else "0.00",
        "progressive_lit": _flag(seat, "progressive_lit"),
        "decision": decision,
        "play": _amount(seat.get("play")),
        "paid": _paid(seat.get("paid")),
    }


def _text(value, max_length: int, *, optional: bool = False) -> str | None:
    if optional and (value is None or value == ""):
        return None
    if (
        type(value) is not str or not value or len(value) > max_length or not value.isascii()
        or value != value.strip() or "\x00" in value
    ):
        raise _NotPlain
    return value


def _flag(data: dict, name: str) -> bool:
    value = data.get(name, False)
    if value is not True and value is not False:
        raise _NotPlain
    return value


# Tables send the same few amounts and the same 52 cards all evening: each
# text is checked once per process and its canonical form remembered
# (only what passed; bounded, as a table could send any number of others).
_KNOWN_AMOUNTS: dict[tuple, str] = {}
_KNOWN_CARDS: dict[str, str] = {}
_KNOWN_MOST = 4096


def _amount(value, field: AmountField = _AMOUNT) -> str:
    kind = type(value)
    if kind is not str and kind is not int:
        raise _NotPlain
    known = _KNOWN_AMOUNTS.get((field.signed, kind, value))
    if known is not None:
        return known
    try:
        text = field.to_internal_value(value)
    except serializers.ValidationError:
        raise _NotPlain from None
    if len(_KNOWN_AMOUNTS) >= _KNOWN_MOST:
        _KNOWN_AMOUNTS.clear()
    _KNOWN_AMOUNTS[(field.signed, kind, value)] = text
    return text


def _paid(value) -> dict | None:
    if value is None:
        return None
    if type(value) is not dict or not set(value) <= set(BETS):
        raise _NotPlain
    return {bet: _amount(value[bet], _PAID_AMOUNT) if bet in value else "0.00" for bet in BETS}


def _cards(value, count: int, *, optional: bool) -> list[str] | None:
    if value is None and optional:
        return None
    if type(value) is not list or len(value) != count or any(type(card) is not str for card in value):
        raise _NotPlain
    return [_KNOWN_CARDS.get(card) or _card(card) for card in value]


def _card(card: str) -> str:
    try:
        text = card_text(parse_card(card))
    except CardError:
        raise _NotPlain from None
    if len(_KNOWN_CARDS) >= _KNOWN_MOST:
        _KNOWN_CARDS.clear()
    _KNOWN_CARDS[card] = text
    return text


def _dealt_at(value) -> str:
    try:
        return _DEALT_AT.to_internal_value(value)
    except serializers.ValidationError:
        raise _NotPlain from None


def canonical_record(attrs: dict) -> dict:
    """The record in the one form the service stores, hashes and replays."""
    return {
        "table": attrs["table"],
        "round": attrs["round"],
        "dealt_at": attrs["dealt_at"],
        "dealer": attrs.get("dealer") or None,
        "void": bool(attrs.get("void")),
        "board": attrs.get("board") or None,
        "dealer_cards": attrs.get("dealer_cards") or None,
        "seats": [
            {
                "seat": seat["seat"],
                "player": seat.get("player") or None,
                "hole": seat.get("hole") or None,
                "ante": seat["ante"],
                "blind": seat["blind"],
                "trips": seat["trips"],
                "progressive": seat["progressive"],
                "progressive_lit": seat["progressive_lit"],
                "decision": seat["decision"],
                "play": seat["play"],
                "paid": seat.get("paid"),
            }
            for seat in attrs["seats"]
        ],
    }


# ---- what the service answers ---------------------------------------------


class BetAmountsSerializer(serializers.Serializer):
    ante = serializers.DecimalField(max_digits=14, decimal_places=2)
    blind = serializers.DecimalField(max_digits=14, decimal_places=2)
    play = serializers.DecimalField(max_digits=14, decimal_places=2)
    trips = serializers.DecimalField(max_digits=14, decimal_places=2)
    progressive = serializers.DecimalField(max_digits=14, decimal_places=2)


class SeatSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    player = serializers.SerializerMethodField()
    hole = serializers.SerializerMethodField()
    hand = serializers.SerializerMethodField()
    decision = serializers.CharField()
    ante = serializers.DecimalField(max_digits=14, decimal_places=2)
    blind = serializers.DecimalField(max_digits=14, decimal_places=2)
    trips = serializers.DecimalField(max_digits=14, decimal_places=2)
    play = serializers.DecimalField(max_digits=14, decimal_places=2)
    progressive = serializers.DecimalField(max_digits=14, decimal_places=2)
    progressive_lit = serializers.BooleanField()
    settled = BetAmountsSerializer()
    paid = BetAmountsSerializer(allow_null=True)

    def get_player(self, seat) -> str | None:
        return seat.player or None

    def get_hole(self, seat) -> list[str] | None:
        return split_cards(seat.hole)

    def get_hand(self, seat) -> str | None:
        return seat.hand or None


class FindingSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.ChoiceField(choices=ALL_CODES)
    seat = serializers.IntegerField(allow_null=True)
    bet = serializers.SerializerMethodField()
    expected = serializers.DecimalField(max_digits=14, decimal_places=2, allow_null=True)
    claimed = serializers.DecimalField(max_digits=14, decimal_places=2, allow_null=True)
    detail = serializers.CharField()
    informational = serializers.BooleanField()
    state = serializers.ChoiceField(choices=Finding.State.choices)

    def get_bet(self, finding) -> str | None:
        return finding.bet or None


class RoundMeterEventSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    kind = serializers.CharField()
    seat = serializers.IntegerField(allow_null=True)
    amount = serializers.DecimalField(max_digits=14, decimal_places=2)
    meter = serializers.DecimalField(max_digits=14, decimal_places=2, source="meter_after")


class RoundProgressiveSerializer(serializers.Serializer):
    pool = serializers.CharField()
    meter_before = serializers.DecimalField(max_digits=14, decimal_places=2)
    meter_after = serializers.DecimalField(max_digits=14, decimal_places=2)
    events = RoundMeterEventSerializer(many=True)


class RoundSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    table = serializers.CharField(source="table.code")
    round = serializers.CharField(source="round_id")
    dealt_at = serializers.DateTimeField()
    gaming_day = serializers.DateField()
    dealer = serializers.SerializerMethodField()
    void = serializers.BooleanField()
    status = serializers.ChoiceField(choices=Round.Status.choices)
    board = serializers.SerializerMethodField()
    dealer_cards = serializers.SerializerMethodField()
    dealer_hand = serializers.SerializerMethodField()
    dealer_qualifies = serializers.BooleanField(allow_null=True)
    config = serializers.SerializerMethodField()
    seats = serializers.SerializerMethodField()
    progressive = serializers.SerializerMethodField()
    findings = FindingSerializer(many=True)
    received_at = serializers.DateTimeField()

    def to_representation(self, round_) -> dict:
        # Built by hand (round_data): this runs for every round posted and
        # every round listed. The fields above document the very same shape
        # (the schema is made from them), and tests/api/test_record_fast.py
        # holds the two to it.
        return round_data(round_)

    def get_dealer(self, round_) -> str | None:
        return round_.dealer or None

    def get_board(self, round_) -> list[str] | None:
        return split_cards(round_.board)

    def get_dealer_cards(self, round_) -> list[str] | None:
        return split_cards(round_.dealer_cards)

    def get_dealer_hand(self, round_) -> str | None:
        return round_.dealer_hand or None

    @extend_schema_field(
        inline_serializer(
            "RoundConfig",
            {"name": serializers.CharField(), "version": serializers.IntegerField()},
        )
    )
    def get_config(self, round_) -> dict:
        return _config_data(round_)

    # Built by hand for speed; SeatSerializer documents the same shape.
    @extend_schema_field(SeatSerializer(many=True))
    def get_seats(self, round_) -> list[dict]:
        return [_seat_data(seat) for seat in round_.seats.all()]

    @extend_schema_field(RoundProgressiveSerializer(allow_null=True))
    def get_progressive(self, round_) -> dict | None:
        return _progressive_data(round_)


_MOMENT = serializers.DateTimeField()
_DAY = serializers.DateField()


def round_data(round_) -> dict:
    """``RoundSerializer``'s representation of ``round_``, by hand: the answer to every post."""
    zone = timezone.get_current_timezone()
    return {
        "id": round_.pk,
        "table": round_.table.code,
        "round": round_.round_id,
        "dealt_at": _moment(round_.dealt_at, zone),
        "gaming_day": _DAY.to_representation(round_.gaming_day),
        "dealer": round_.dealer or None,
        "void": bool(round_.void),
        "status": round_.status,
        "board": split_cards(round_.board),
        "dealer_cards": split_cards(round_.dealer_cards),
        "dealer_hand": round_.dealer_hand or None,
        "dealer_qualifies": round_.dealer_qualifies,
        "config": _config_data(round_),
        "seats": [_seat_data(seat) for seat in _related(round_, "seats")],
        "progressive": _progressive_data(round_),
        "findings": [_finding_data(f) for f in _related(round_, "findings")],
        "received_at": _moment(round_.received_at, zone),
    }


def _related(round_, name: str):
    """``round_.<name>.all()``, straight from the rows prefetched or just written
    (``selectors.round_list``, ``services.ingest._remember``) when it has them:
    the related manager Django builds on each access costs more than the list."""
    cache = getattr(round_, "_prefetched_objects_cache", None)
    if cache is not None and name in cache:
        return cache[name]
    return getattr(round_, name).all()


def _moment(value, zone) -> str | None:
    """``DateTimeField``'s ISO 8601 text of ``value`` in ``zone`` (UTC as ``Z``), without
    looking the current time zone up again for each field."""
    if not value or value.tzinfo is None:
        return _MOMENT.to_representation(value)
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _config_data(round_) -> dict:
    version = round_.config_version
    return {"name": version.config.name, "version": version.version}


def _seat_data(seat) -> dict:
    data = {
        "seat": seat.seat,
        "player": seat.player or None,
        "hole": split_cards(seat.hole),
        "hand": seat.hand or None,
        "decision": seat.decision,
        "progressive_lit": seat.progressive_lit,
        "settled": {bet: money_text(v) for bet, v in seat.settled().items()},
        "paid": None,
    }
    for bet in ("ante", "blind", "trips", "play", "progressive"):
        data[bet] = money_text(getattr(seat, bet))
    paid = seat.paid()
    if paid is not None:
        data["paid"] = {bet: money_text(v) for bet, v in paid.items()}
    return data


def _progressive_data(round_) -> dict | None:
    if round_.pool_version_id is None:
        return None
    return {
        "pool": round_.pool_version.pool.code,
        "meter_before": money_text(round_.meter_before),
        "meter_after": money_text(round_.meter_after),
        "events": [
            {
                "seq": e.seq, "kind": e.kind, "seat": e.seat,
                "amount": money_text(e.amount), "meter": money_text(e.meter_after),
            }
            for e in _related(round_, "meter_events")
        ],
    }


def _finding_data(finding) -> dict:
    """``FindingSerializer``'s representation of ``finding``, by hand."""
    return {
        "id": finding.pk,
        "code": finding.code,
        "seat": finding.seat,
        "bet": finding.bet or None,
        "expected": None if finding.expected is None else money_text(Decimal(finding.expected)),
        "claimed": None if finding.claimed is None else money_text(Decimal(finding.claimed)),
        "detail": str(finding.detail),
        "informational": bool(finding.informational),
        "state": finding.state,
    }


def split_cards(text: str) -> list[str] | None:
    if not text:
        return None
    return [text[i : i + 2] for i in range(0, len(text), 2)]
