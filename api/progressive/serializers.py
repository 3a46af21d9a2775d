"""Pools, ledgers, hits and readings on the wire. Input serializers check shape only."""

from __future__ import annotations

from datetime import datetime

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from infra.models import MONEY
from progressive.models import MeterAdjustmentRequest, PoolVersionRequest
from progressive.selectors import pool_version_current
from rounds.wire.fields import AmountField, OffsetDateTimeField, StrictCharField, StrictSlugField


class PayLineSerializer(serializers.Serializer):
    category = serializers.CharField()
    qualifier = serializers.CharField()
    kind = serializers.CharField()
    amount = serializers.CharField()


class PoolVersionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pool = serializers.CharField(source="pool.code")
    version = serializers.IntegerField()
    effective_from = serializers.DateTimeField()
    currency = serializers.CharField(source="pool.currency")
    wager = serializers.DecimalField(**MONEY)
    rate = serializers.DecimalField(max_digits=6, decimal_places=4)
    reseed = serializers.DecimalField(**MONEY)
    ceiling = serializers.DecimalField(**MONEY, allow_null=True)
    reserve_rate = serializers.DecimalField(max_digits=6, decimal_places=4)
    reading_tolerance = serializers.DecimalField(**MONEY)
    lines = PayLineSerializer(many=True)
    note = serializers.CharField()
    created_at = serializers.DateTimeField()


class CurrentVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    effective_from = serializers.DateTimeField()
    wager = serializers.DecimalField(**MONEY)
    rate = serializers.DecimalField(max_digits=6, decimal_places=4)
    reseed = serializers.DecimalField(**MONEY)
    ceiling = serializers.DecimalField(**MONEY, allow_null=True)
    reserve_rate = serializers.DecimalField(max_digits=6, decimal_places=4)
    reading_tolerance = serializers.DecimalField(**MONEY)
    lines = PayLineSerializer(many=True)


class PoolSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    currency = serializers.CharField()
    meter = serializers.DecimalField(**MONEY)
    overflow = serializers.DecimalField(**MONEY)
    reserve = serializers.DecimalField(**MONEY)
    last_event_seq = serializers.IntegerField()
    updated_at = serializers.DateTimeField()
    version = serializers.SerializerMethodField()

    @extend_schema_field(CurrentVersionSerializer(allow_null=True))
    def get_version(self, pool) -> dict | None:
        version = pool_version_current(pool=pool)
        return CurrentVersionSerializer(version).data if version is not None else None


class MeterEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pool = serializers.CharField(source="pool.code")
    seq = serializers.IntegerField()
    kind = serializers.CharField()
    amount = serializers.DecimalField(**MONEY)
    delta = serializers.DecimalField(**MONEY)
    meter_after = serializers.DecimalField(**MONEY)
    overflow_after = serializers.DecimalField(**MONEY)
    reserve_after = serializers.DecimalField(**MONEY)
    round = serializers.SerializerMethodField()
    seat = serializers.IntegerField(allow_null=True)
    actor = serializers.SerializerMethodField()
    reason = serializers.CharField()
    created_at = serializers.DateTimeField()

    def get_round(self, event) -> dict | None:
        round_ = event.round
        if round_ is None:
            return None
        return {"id": round_.pk, "table": round_.table.code, "round": round_.round_id,
                "dealt_at": round_.dealt_at.isoformat()}

    def get_actor(self, event) -> str | None:
        return event.actor_name or None


class MeterAdjustmentRequestSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pool = serializers.CharField(source="pool.code")
    delta = serializers.DecimalField(**MONEY)
    reason = serializers.CharField()
    state = serializers.ChoiceField(choices=MeterAdjustmentRequest.State.choices)
    requested_by = serializers.CharField(source="requested_by_name")
    requested_at = serializers.DateTimeField()
    decided_by = serializers.SerializerMethodField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_note = serializers.CharField()
    event = MeterEventSerializer(allow_null=True, help_text="The ledger event the approval wrote.")

    def get_decided_by(self, asked) -> str | None:
        return asked.decided_by_name or None


class PoolVersionNumbersSerializer(serializers.Serializer):
    wager = serializers.CharField()
    rate = serializers.CharField()
    reseed = serializers.CharField()
    ceiling = serializers.CharField(allow_null=True)
    reserve_rate = serializers.CharField()
    reading_tolerance = serializers.CharField()
    lines = PayLineSerializer(many=True)


class PoolVersionRequestSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pool = serializers.CharField(source="pool.code")
    effective_from = serializers.DateTimeField(help_text="As asked; an approval starts it no earlier than itself.")
    numbers = PoolVersionNumbersSerializer()
    note = serializers.CharField()
    state = serializers.ChoiceField(choices=PoolVersionRequest.State.choices)
    requested_by = serializers.CharField(source="requested_by_name")
    requested_at = serializers.DateTimeField()
    decided_by = serializers.SerializerMethodField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_note = serializers.CharField()
    version = PoolVersionSerializer(allow_null=True, help_text="The version the approval wrote.")

    def get_decided_by(self, asked) -> str | None:
        return asked.decided_by_name or None


class HitSerializer(MeterEventSerializer):
    hand = serializers.CharField(allow_null=True)
    reversed = serializers.BooleanField(help_text="The round was voided and its meter events reversed.")


class MeterReadingSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pool = serializers.CharField(source="pool.code")
    pool_version = serializers.IntegerField(source="pool_version.version")
    table = serializers.SerializerMethodField()
    reporter = serializers.CharField()
    reported_at = serializers.DateTimeField()
    received_at = serializers.DateTimeField()
    displayed = serializers.DecimalField(**MONEY)
    service_meter = serializers.DecimalField(**MONEY)
    meter_seq = serializers.IntegerField()
    difference = serializers.DecimalField(**MONEY)
    tolerance = serializers.DecimalField(**MONEY)
    flagged = serializers.BooleanField()

    def get_table(self, reading) -> str | None:
        return reading.table.code if reading.table_id else None


class LedgerCheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    pool = serializers.CharField()
    events = serializers.IntegerField()
    meter = serializers.DecimalField(**MONEY)
    delta_sum = serializers.DecimalField(**MONEY)
    seq = serializers.IntegerField(allow_null=True)
    problem = serializers.CharField()


# ---- what people and tables send ---------------------------------------------


class MeterReadingInSerializer(serializers.Serializer):
    pool = StrictSlugField(max_length=40, required=False, help_text="Defaults to the table's pool.")
    displayed = AmountField(help_text="What the meter display showed.")
    reported_at = OffsetDateTimeField(help_text="When the display was read, with its UTC offset.")

    def validate_reported_at(self, value: str) -> datetime:
        return datetime.fromisoformat(value)


class MeterAdjustmentInSerializer(serializers.Serializer):
    delta = AmountField(signed=True, help_text="The signed change to the meter, e.g. '-25.00'.")
    reason = StrictCharField(max_length=2000, help_text="Why: kept with the event, never optional.")


class AdjustmentRejectionInSerializer(serializers.Serializer):
    note = StrictCharField(max_length=2000, help_text="Why the adjustment is not made: kept with the request.")


class VersionRejectionInSerializer(serializers.Serializer):
    note = StrictCharField(max_length=2000, help_text="Why the version is not made: kept with the request.")


class PayLineInSerializer(serializers.Serializer):
    category = StrictCharField(max_length=40)
    qualifier = StrictCharField(max_length=20)
    kind = StrictCharField(max_length=20)
    amount = StrictCharField(max_length=40, help_text="A decimal string: a percentage of the meter or a fixed amount.")


class PoolVersionInSerializer(serializers.Serializer):
    effective_from = OffsetDateTimeField(help_text="When it comes into force, with its UTC offset.")
    wager = AmountField()
    rate = StrictCharField(max_length=12, help_text="Of the wager, a decimal string such as '0.20'.")
    reseed = AmountField()
    ceiling = AmountField(required=False, allow_null=True)
    reserve_rate = StrictCharField(max_length=12, required=False, default="0")
    reading_tolerance = AmountField(required=False, default="0")
    lines = PayLineInSerializer(many=True, help_text="Best line first.")
    note = StrictCharField(max_length=200, required=False, default="", allow_blank=True)

    def validate_effective_from(self, value: str) -> datetime:
        return datetime.fromisoformat(value)


class OverflowTransferInSerializer(serializers.Serializer):
    amount = AmountField(required=False, help_text="Defaults to all the ceiling leaves room for.")
    reason = StrictCharField(max_length=2000)
