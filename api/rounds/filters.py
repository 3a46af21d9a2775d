import django_filters

from game.findings import ALL_CODES
from infra.filters import StrictBooleanFilter, UtcIsoDateTimeFilter
from rounds.models import Finding, Round
from rounds.selectors import findings_of_dealer, rounds_with_finding, rounds_with_player


class RoundFilter(django_filters.FilterSet):
    table = django_filters.CharFilter(field_name="table__code")
    round = django_filters.CharFilter(field_name="round_id")
    dealer = django_filters.CharFilter()
    # Through the round's seats and findings: EXISTS (rounds.selectors), never a join and DISTINCT.
    player = django_filters.CharFilter(method="filter_player")
    status = django_filters.ChoiceFilter(choices=Round.Status.choices)
    code = django_filters.ChoiceFilter(
        choices=[(c, c) for c in ALL_CODES], method="filter_code", label="Finding code",
    )
    dealt_after = UtcIsoDateTimeFilter(field_name="dealt_at", lookup_expr="gte")
    dealt_before = UtcIsoDateTimeFilter(field_name="dealt_at", lookup_expr="lt")
    gaming_day = django_filters.DateFilter()

    class Meta:
        model = Round
        fields = ["table", "round", "dealer", "player", "status", "code", "gaming_day"]

    def filter_player(self, rounds, name, value):
        return rounds_with_player(rounds, player=value) if value else rounds

    def filter_code(self, rounds, name, value):
        return rounds_with_finding(rounds, code=value) if value else rounds


class FindingFilter(django_filters.FilterSet):
    table = django_filters.CharFilter(field_name="round__table__code")
    dealer = django_filters.CharFilter(method="filter_dealer")
    code = django_filters.ChoiceFilter(choices=[(c, c) for c in ALL_CODES])
    state = django_filters.ChoiceFilter(choices=Finding.State.choices)
    informational = StrictBooleanFilter()
    dealt_after = UtcIsoDateTimeFilter(field_name="round__dealt_at", lookup_expr="gte")
    dealt_before = UtcIsoDateTimeFilter(field_name="round__dealt_at", lookup_expr="lt")

    class Meta:
        model = Finding
        fields = ["table", "dealer", "code", "state", "informational"]

    def filter_dealer(self, findings, name, value):
        return findings_of_dealer(findings, dealer=value) if value else findings
