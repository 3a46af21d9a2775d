"""The cage's counts through the API: what a cage system sends after each gaming day, and the counts kept.

A count is a table's gaming day as the cage counted it (the drop, the fills,
the credits, the chip tray at opening and closing); the service knows what
the rules settled and the dealers paid, only the count knows the cash. A
count is kept through ``audit.counts`` as the admin keeps it: a second count
of a day corrects the first and needs a note, every figure ever sent stays
(``replaces``), and each is an event in the trail. Amounts are decimal
strings, as in the rounds a table sends; the currency is the one the table
dealt in that day.
"""

from __future__ import annotations

import django_filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response

from audit.counts import AMOUNTS, CountError, count_enter
from audit.models import TableCount
from infra.filters import StrictBooleanFilter
from infra.openapi import EVERY_REQUEST, FILTERED_PAGES, JSON_BODY, PERSON_WRITE, STAFF_ONLY, answers, refusal
from infra.permissions import StaffReadsPersonWrites
from infra.request_ids import request_id_of
from rounds.wire.fields import MoneyField, StrictCharField

from .reports import AUTHENTICATION

MONEY = {"max_digits": 14}
NOTE_MOST = 2000


class CountSerializer(serializers.ModelSerializer):
    table = serializers.CharField(source="table.code")
    drop = MoneyField(**MONEY)
    fills = MoneyField(**MONEY)
    credits = MoneyField(**MONEY)
    opening_inventory = MoneyField(**MONEY)
    closing_inventory = MoneyField(**MONEY)
    count_win = MoneyField(max_digits=16, help_text="drop + credits − fills + closing − opening chip tray.")
    current = serializers.SerializerMethodField(help_text="No later count of the day corrects it.")
    entered_by = serializers.CharField(source="entered_by_name")

    class Meta:
        model = TableCount
        fields = ["id", "table", "gaming_day", "currency", *AMOUNTS, "count_win", "source", "note", "replaces",
                  "current", "entered_by", "entered_at"]
        read_only_fields = fields

    def get_current(self, count: TableCount) -> bool:
        return not hasattr(count, "replaced_by")


class CountInSerializer(serializers.Serializer):
    table = StrictCharField(max_length=64)
    gaming_day = StrictCharField(max_length=10, help_text="The day counted, as 2026-12-04.")
    drop = StrictCharField(max_length=32, help_text="A decimal string, as every amount: '12500.00'.")
    fills = StrictCharField(max_length=32)
    credits = StrictCharField(max_length=32)
    opening_inventory = StrictCharField(max_length=32)
    closing_inventory = StrictCharField(max_length=32)
    note = StrictCharField(max_length=NOTE_MOST, required=False, default="",
                           help_text="Why, when it corrects a count of the day already kept.")


class CountFilter(django_filters.FilterSet):
    table = django_filters.CharFilter(field_name="table__code")
    gaming_day = django_filters.DateFilter()
    day_from = django_filters.DateFilter(field_name="gaming_day", lookup_expr="gte")
    day_to = django_filters.DateFilter(field_name="gaming_day", lookup_expr="lte")
    current = StrictBooleanFilter(field_name="replaced_by", lookup_expr="isnull")

    class Meta:
        model = TableCount
        fields = ["table", "gaming_day", "current"]


class LatestDayFirst(CursorPagination):
    ordering = ("-gaming_day", "-id")


@extend_schema_view(
    get=extend_schema(responses=answers({200: CountSerializer}, STAFF_ONLY, FILTERED_PAGES, EVERY_REQUEST),
                      summary="List the cage's counts"),
    post=extend_schema(
        request=CountInSerializer,
        responses=answers({201: CountSerializer}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST, {
            400: refusal("The body is not JSON, or a field of it is invalid: an unknown table, a day not "
                         "begun, an amount that is not a decimal string of whole cents or is negative, or "
                         "a second count of the day without a note; errors names the field, nothing kept."),
        }),
        summary="Send a table's count of a gaming day",
    ),
)
class CountListCreateView(generics.ListAPIView):
    """The cage's counts, the latest day first (``current=true``: only those no later count corrects)."""

    authentication_classes = AUTHENTICATION
    permission_classes = [StaffReadsPersonWrites]
    write_permission = "audit.add_tablecount"
    serializer_class = CountSerializer
    filterset_class = CountFilter
    pagination_class = LatestDayFirst
    queryset = TableCount.objects.select_related("table", "replaced_by")

    def post(self, request):
        given = CountInSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            count = count_enter(table_code=data["table"], gaming_day=data["gaming_day"],
                                amounts={name: data[name] for name in AMOUNTS}, user=request.user,
                                note=data["note"], request_id=request_id_of(request))
        except CountError as exc:
            raise ValidationError(exc.errors) from None
        return Response(CountSerializer(count).data, status=201)
