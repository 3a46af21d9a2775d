import django_filters

from infra.filters import StrictBooleanFilter, UtcIsoDateTimeFilter
from progressive.models import MeterAdjustmentRequest, MeterEvent, MeterReading, Pool, PoolVersion, PoolVersionRequest


class PoolFilter(django_filters.FilterSet):
    code = django_filters.CharFilter()
    currency = django_filters.CharFilter()

    class Meta:
        model = Pool
        fields = ["code", "currency"]


class PoolVersionFilter(django_filters.FilterSet):
    pool = django_filters.CharFilter(field_name="pool__code")
    in_force_at = UtcIsoDateTimeFilter(
        field_name="effective_from", lookup_expr="lte", label="Versions already in force at"
    )

    class Meta:
        model = PoolVersion
        fields = ["pool", "version"]


class MeterEventFilter(django_filters.FilterSet):
    pool = django_filters.CharFilter(field_name="pool__code")
    kind = django_filters.MultipleChoiceFilter(choices=MeterEvent.Kind.choices)
    round = django_filters.NumberFilter(field_name="round_id", label="Round (its id in this API)")
    round_id = django_filters.CharFilter(field_name="round__round_id", label="Round id the table sent")
    table = django_filters.CharFilter(field_name="round__table__code")
    seat = django_filters.NumberFilter()
    created_after = UtcIsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = UtcIsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    seq_from = django_filters.NumberFilter(field_name="seq", lookup_expr="gte")
    seq_to = django_filters.NumberFilter(field_name="seq", lookup_expr="lte")

    class Meta:
        model = MeterEvent
        fields = ["pool", "kind", "round", "round_id", "table", "seat"]


class MeterReadingFilter(django_filters.FilterSet):
    pool = django_filters.CharFilter(field_name="pool__code")
    table = django_filters.CharFilter(field_name="table__code")
    flagged = StrictBooleanFilter()
    reported_after = UtcIsoDateTimeFilter(field_name="reported_at", lookup_expr="gte")
    reported_before = UtcIsoDateTimeFilter(field_name="reported_at", lookup_expr="lt")

    class Meta:
        model = MeterReading
        fields = ["pool", "table", "flagged"]


class MeterAdjustmentRequestFilter(django_filters.FilterSet):
    pool = django_filters.CharFilter(field_name="pool__code")
    state = django_filters.ChoiceFilter(choices=MeterAdjustmentRequest.State.choices)

    class Meta:
        model = MeterAdjustmentRequest
        fields = ["pool", "state"]


class PoolVersionRequestFilter(django_filters.FilterSet):
    pool = django_filters.CharFilter(field_name="pool__code")
    state = django_filters.ChoiceFilter(choices=PoolVersionRequest.State.choices)

    class Meta:
        model = PoolVersionRequest
        fields = ["pool", "state"]
