"""The round record on the wire (ROUND_RECORD.md): shape in, stored verdict out.

The input serializers check shape only and give the record its canonical form
(cards as ``Ah``, amounts with two decimals, defaults filled in). Every rule of
the game is the engine's, reached through ``rounds.services.ingest_round``.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from rounds.engine.findings import ALL_CODES
from rounds.engine.rules import BETS, DECISION_MULTIPLES
from rounds.models import Finding, Round

from .fields import AmountField, CardField, OffsetDateTimeField, cards_field, money_text


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
        version = round_.config_version
        return {"name": version.config.name, "version": version.version}

    @staticmethod
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

    # Built by hand for speed; SeatSerializer documents the same shape.
    @extend_schema_field(SeatSerializer(many=True))
    def get_seats(self, round_) -> list[dict]:
        return [self._seat_data(seat) for seat in round_.seats.all()]

    @extend_schema_field(RoundProgressiveSerializer(allow_null=True))
    def get_progressive(self, round_) -> dict | None:
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
                for e in round_.meter_events.all()
            ],
        }


def split_cards(text: str) -> list[str] | None:
    if not text:
        return None
    return [text[i : i + 2] for i in range(0, len(text), 2)]
