import django_filters

from casino.filters import StrictBooleanFilter, UtcIsoDateTimeFilter
from rounds.engine.findings import ALL_CODES
from rounds.models import Finding, Round


class RoundFilter(django_filters.FilterSet):
    table = django_filters.CharFilter(field_name="table__code")
    round = django_filters.CharFilter(field_name="round_id")
    dealer = django_filters.CharFilter()
    player = django_filters.CharFilter(field_name="seats__player", distinct=True)
    status = django_filters.ChoiceFilter(choices=Round.Status.choices)
    code = django_filters.ChoiceFilter(
        field_name="findings__code", choices=[(c, c) for c in ALL_CODES], distinct=True,
        label="Finding code",
    )
    dealt_after = UtcIsoDateTimeFilter(field_name="dealt_at", lookup_expr="gte")
    dealt_before = UtcIsoDateTimeFilter(field_name="dealt_at", lookup_expr="lt")
    gaming_day = django_filters.DateFilter()

    class Meta:
        model = Round
        fields = ["table", "round", "dealer", "player", "status", "code", "gaming_day"]


class FindingFilter(django_filters.FilterSet):
    table = django_filters.CharFilter(field_name="round__table__code")
    dealer = django_filters.CharFilter(field_name="round__dealer")
    code = django_filters.ChoiceFilter(choices=[(c, c) for c in ALL_CODES])
    state = django_filters.ChoiceFilter(choices=Finding.State.choices)
    informational = StrictBooleanFilter()
    dealt_after = UtcIsoDateTimeFilter(field_name="round__dealt_at", lookup_expr="gte")
    dealt_before = UtcIsoDateTimeFilter(field_name="round__dealt_at", lookup_expr="lt")

    class Meta:
        model = Finding
        fields = ["table", "dealer", "code", "state", "informational"]
